/**
 * Code actions, computed from the core's diagnostics (re-read from the check cache, so
 * they always match the text; the client's copy of `data` is not trusted) and the
 * syntax tree:
 *
 * quick fixes
 *   - unknown field or function -> "Change to `x`" for each suggestion;
 *   - `ip.src == 192.0.2.0/24` (cidr-outside-set) -> `ip.src in {192.0.2.0/24}`;
 *   - a tab (tab-character) -> spaces, everywhere outside strings in the expression;
 *   - a deprecated field -> its replacement; a mistyped operator (`equals`) -> the one meant;
 *   - a literal that can never match (never-matches, method-not-uppercase,
 *     header-key-not-lowercase, path-without-slash) -> the `replacement`;
 *   - literals the engine refuses (bad escapes, unterminated strings, quoted IPs, …):
 *     literalFixes.ts;
 * refactorings (refactor.rewrite)
 *   - convert the operators of the whole expression to C-like or English notation. Only
 *     the operator tokens are rewritten (spaces added where a word needs them), so the
 *     user's layout, literals and parentheses stay as they are; the result is the same
 *     tree the core formatter prints with that notation;
 *   - wrap an element-wise (`[*]`) condition reported as `Array<Bool>` where a Bool is
 *     needed (the whole expression, or an operand of and/or/xor) in `any(…)` / `all(…)`.
 *
 * In ruleset JSON every edit is mapped through the string's escapes and its new text is
 * JSON-escaped.
 */
import { forEachOutsideStrings } from '../language/scan';
import { CodeActionKind, type CodeAction, type CodeActionContext, type Range as LspRange, type TextEdit } from 'vscode-languageserver/node';
import * as A from '../language/ast';
import type { Diagnostic } from '../language/diagnostics';
import { LOGICAL_OPERATORS, OPERATORS } from '../language/scheme/operators';
import { toLspDiagnostic } from './diagnostics';
import { literalFixes } from './literalFixes';
import type { Analysed, DocumentStore } from './documents';
import type { ExpressionSlice } from './expressionSlices';

/** English spelling to C-like, for every operator (logical or comparison) that has both. */
const TO_C: Record<string, string> = Object.fromEntries(
  [...Object.values(LOGICAL_OPERATORS), ...OPERATORS].flatMap((o) => (o.clike ? [[o.english, o.clike]] : [])),
);
const TO_ENGLISH: Record<string, string> = Object.fromEntries(Object.entries(TO_C).map(([k, v]) => [v, k]));

/** The operator tokens of an expression, in source order. */
function operatorTokens(ast: A.Expr): A.Token[] {
  const out: A.Token[] = [];
  for (const n of A.nodesOf(ast)) {
    if (n.kind === 'logical') out.push(...n.ops);
    else if (n.kind === 'not') out.push(n.token);
    else if (n.kind === 'comparison' && n.op) out.push(n.op);
  }
  return out.sort((a, b) => a.span.start - b.span.start);
}

interface ExprEdit {
  readonly start: number;
  readonly end: number;
  readonly text: string;
}

/**
 * The edits converting every operator with a counterpart to `notation`. A word gets a
 * space on each side where it would otherwise run into its neighbour (`a==1` -> `a eq 1`,
 * `!x` -> `not x`).
 */
export function notationEdits(ast: A.Expr, text: string, notation: 'english' | 'c-like'): ExprEdit[] {
  const table = notation === 'english' ? TO_ENGLISH : TO_C;
  const edits: ExprEdit[] = [];
  for (const t of operatorTokens(ast)) {
    const to = table[t.text];
    if (to === undefined) continue;
    let next = to;
    if (notation === 'english') {
      const before = text[t.span.start - 1];
      const after = text[t.span.end];
      // A word right after another converted word already has that word's space.
      const prev = edits[edits.length - 1];
      const spaced = prev !== undefined && prev.end === t.span.start && prev.text.endsWith(' ');
      if (before !== undefined && !/[\s(]/.test(before) && !spaced) next = ` ${next}`;
      if (after !== undefined && !/\s/.test(after)) next = `${next} `;
    }
    edits.push({ start: t.span.start, end: t.span.end, text: next });
  }
  return edits;
}

/** Applies non-overlapping expression edits to text (used for titles and tests). */
export function applyExprEdits(text: string, edits: readonly ExprEdit[]): string {
  let out = '';
  let at = 0;
  for (const e of [...edits].sort((a, b) => a.start - b.start)) {
    out += text.slice(at, e.start) + e.text;
    at = e.end;
  }
  return out + text.slice(at);
}

/** Offsets of the tabs outside quoted and raw strings. */
export function tabsOutsideStrings(text: string): number[] {
  const out: number[] = [];
  forEachOutsideStrings(text, (c, i) => {
    if (c === '\t') out.push(i);
  });
  return out;
}

const overlaps = (s: number, e: number, from: number, to: number) => s <= to && from <= e;

function kindAllowed(kind: string, only: readonly string[] | undefined): boolean {
  return !only || only.some((o) => kind === o || kind.startsWith(`${o}.`));
}

export function codeActions(store: DocumentStore, a: Analysed, range: LspRange, context: CodeActionContext): CodeAction[] {
  const from = a.doc.offsetAt(range.start);
  const to = a.doc.offsetAt(range.end);
  const out: CodeAction[] = [];
  for (const slice of a.slices) {
    if (!overlaps(slice.contentStart, slice.contentEnd, from, to)) continue;
    const result = store.check(slice, a.settings, a.doc.uri);
    const edit = (edits: readonly ExprEdit[]): TextEdit[] =>
      edits.map((e) => ({
        range: { start: a.doc.positionAt(slice.toDocument(e.start)), end: a.doc.positionAt(slice.toDocument(e.end)) },
        newText: slice.encode(e.text),
      }));
    const action = (title: string, kind: string, edits: readonly ExprEdit[], d?: Diagnostic, preferred = false): void => {
      if (!kindAllowed(kind, context.only) || edits.length === 0) return;
      const ca: CodeAction = { title, kind, edit: { changes: { [a.doc.uri]: edit(edits) } } };
      if (d) ca.diagnostics = [toLspDiagnostic(a.doc, slice, d)];
      if (preferred) ca.isPreferred = true;
      out.push(ca);
    };

    for (const d of result.diagnostics) {
      const ds = slice.toDocument(d.range.start);
      const de = slice.toDocument(d.range.end);
      if (!overlaps(ds, de, from, to)) continue;
      quickFixes(slice, result.ast, d, action);
      wrapFixes(slice, result.ast, d, result.diagnostics, action);
    }

    if (result.ast) {
      const ast = result.ast;
      for (const notation of ['c-like', 'english'] as const) {
        const edits = notationEdits(ast, slice.text, notation);
        if (edits.length === 0) continue;
        action(notation === 'c-like' ? 'Convert operators to C-like notation (&&, ==, !)' : 'Convert operators to English notation (and, eq, not)', CodeActionKind.RefactorRewrite, edits);
      }
    }
  }
  return out;
}

type Act = (title: string, kind: string, edits: readonly ExprEdit[], d?: Diagnostic, preferred?: boolean) => void;

function quickFixes(slice: ExpressionSlice, ast: A.Expr | undefined, d: Diagnostic, action: Act): void {
  const text = slice.text;
  const at = (t: string): ExprEdit[] => [{ start: d.range.start, end: d.range.end, text: t }];
  const replacement = typeof d.data?.replacement === 'string' ? d.data.replacement : undefined;
  switch (d.code) {
    case 'unknown-identifier':
    case 'unknown-field':
    case 'unknown-function': {
      const suggestions = Array.isArray(d.data?.suggestions) ? d.data.suggestions.filter((s): s is string => typeof s === 'string') : [];
      for (const s of suggestions) action(`Change to \`${s}\``, CodeActionKind.QuickFix, at(s), d, suggestions.length === 1);
      return;
    }
    case 'deprecated-field':
      if (replacement) action(`Replace with \`${replacement}\``, CodeActionKind.QuickFix, at(replacement), d, true);
      return;
    case 'never-matches':
    case 'unknown-operator':
    case 'method-not-uppercase':
    case 'header-key-not-lowercase':
    case 'path-without-slash':
      if (replacement) action(`Change to \`${replacement}\``, CodeActionKind.QuickFix, at(replacement), d, true);
      return;
    case 'tab-character': {
      const tabs = tabsOutsideStrings(text);
      action('Replace tabs with spaces', CodeActionKind.QuickFix, tabs.map((i) => ({ start: i, end: i + 1, text: ' ' })), d, true);
      return;
    }
    case 'cidr-outside-set': {
      if (!ast) return;
      const cmp = A.nodesOf(ast).find(
        (n): n is A.ComparisonExpr =>
          n.kind === 'comparison' && n.rhs?.kind === 'literal' && n.rhs.span.start <= d.range.start && d.range.start < n.rhs.span.end,
      );
      if (!cmp?.op || !cmp.rhs || (cmp.op.op !== 'eq' && cmp.op.op !== 'ne')) return;
      const lhs = text.slice(cmp.lhs.span.start, cmp.lhs.span.end);
      const set = `{${cmp.rhs.span.end > cmp.rhs.span.start ? text.slice(cmp.rhs.span.start, cmp.rhs.span.end) : ''}}`;
      if (cmp.op.op === 'eq') {
        action(`Change to \`${lhs} in ${set}\``, CodeActionKind.QuickFix, [{ start: cmp.op.span.start, end: cmp.rhs.span.end, text: `in ${set}` }], d, true);
      } else {
        const not = cmp.op.text === '!=' ? '!' : 'not ';
        const next = `${not}${lhs} in ${set}`;
        action(`Change to \`${next}\``, CodeActionKind.QuickFix, [{ start: cmp.span.start, end: cmp.span.end, text: next }], d, true);
      }
      return;
    }
    default:
      for (const f of literalFixes(text, ast, d)) action(f.title, CodeActionKind.QuickFix, f.edits, d, f.preferred);
      return;
  }
}

const MIXED = /^expected value of type Array<Bool>, but got Bool$/;

/** `x[*] eq 1` where a Bool is needed -> `any(x[*] eq 1)` / `all(…)`. */
function wrapFixes(slice: ExpressionSlice, ast: A.Expr | undefined, d: Diagnostic, all: readonly Diagnostic[], action: Act): void {
  if (!ast || d.code !== 'type-mismatch') return;
  let target: A.Expr | undefined;
  const nodes = A.nodesOf(ast);
  if (/^expected value of type Bool, but got Array<Bool>$/.test(d.message)) {
    target = nodes.find((n): n is A.Expr => isExprNode(n) && n.span.start === d.range.start && n.span.end === d.range.end);
    // Operands that disagree inside it are fixed one by one (below), not by wrapping the lot.
    const inner = all.some((o) => o !== d && MIXED.test(o.message) && target && o.range.start >= target.span.start && o.range.end <= target.span.end);
    if (inner) return;
  } else if (MIXED.test(d.message)) {
    // A logical operand that is Bool after an element-wise first operand: wrap the first.
    const parent = nodes.find(
      (n): n is A.LogicalExpr => n.kind === 'logical' && n.items.some((i, k) => k > 0 && i.span.start === d.range.start && i.span.end === d.range.end),
    );
    target = parent?.items[0];
  }
  if (!target) return;
  const inner = slice.text.slice(target.span.start, target.span.end);
  // Several conditions inside any(…) need their own parentheses.
  const arg = target.kind === 'logical' ? `(${inner})` : inner;
  for (const q of ['any', 'all'] as const) {
    action(`Wrap in ${q}(…)`, CodeActionKind.RefactorRewrite, [{ start: target.span.start, end: target.span.end, text: `${q}(${arg})` }], d, q === 'any');
  }
}

function isExprNode(n: A.Node): n is A.Expr {
  return n.kind === 'logical' || n.kind === 'not' || n.kind === 'group' || n.kind === 'quantifier' || n.kind === 'comparison';
}
