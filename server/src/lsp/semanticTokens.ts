/**
 * Semantic tokens from the syntax tree, in `.cfrule` files and inside the expression
 * strings of ruleset JSON (positions mapped through JSON escapes; a token that would
 * cross a line break is split, as LSP requires).
 *
 * Legend: fields are `property` + `readonly` (+ `deprecated` when the scheme says so),
 * lists (`$name`) `variable` + `readonly`, functions and `any`/`all` `function`
 * + `defaultLibrary`, English operators (`and`, `eq`, `in`, …) `keyword`, C-like ones
 * (`&&`, `==`, `[*]`'s `*`) `operator`, strings `string`, patterns after `matches`
 * `regexp`, numbers, IPs and hex bytes `number`. An expression that does not parse gets
 * no tokens, so the TextMate grammar colours it while it is being typed.
 */
import type { Range as LspRange, SemanticTokens, SemanticTokensLegend } from 'vscode-languageserver/node';
import type * as A from '../language/ast';
import { httpScheme } from '../language/scheme/index';
import type { Analysed, DocumentStore } from './documents';
import type { ExpressionSlice } from './expressionSlices';

export const TOKEN_TYPES = ['property', 'variable', 'function', 'keyword', 'operator', 'string', 'number', 'regexp'] as const;
export const TOKEN_MODIFIERS = ['readonly', 'deprecated', 'defaultLibrary'] as const;

export type TokenType = (typeof TOKEN_TYPES)[number];
export type TokenModifier = (typeof TOKEN_MODIFIERS)[number];

export const LEGEND: SemanticTokensLegend = { tokenTypes: [...TOKEN_TYPES], tokenModifiers: [...TOKEN_MODIFIERS] };

/** A token in expression offsets. */
export interface ExprToken {
  readonly start: number;
  readonly end: number;
  readonly type: TokenType;
  readonly modifiers?: readonly TokenModifier[];
}

/** The tokens of one parsed expression, in source order. */
export function expressionTokens(ast: A.Expr, text: string): ExprToken[] {
  const out: ExprToken[] = [];
  const push = (span: A.Span, type: TokenType, modifiers?: TokenModifier[]) => {
    if (span.end > span.start) out.push({ start: span.start, end: span.end, type, modifiers });
  };
  const op = (t: A.Token) => push(t.span, /^[a-z]/.test(t.text) ? 'keyword' : 'operator');

  const literal = (l: A.Literal, regex: boolean) => push(l.span, l.form === 'bare' ? 'number' : regex ? 'regexp' : 'string');

  const value = (v: A.ValueExpr): void => {
    switch (v.kind) {
      case 'field': {
        const def = httpScheme.fields.get(v.name);
        if (def) push(v.span, 'property', def.deprecated ? ['readonly', 'deprecated'] : ['readonly']);
        else if (httpScheme.functions.has(v.name)) push(v.span, 'function', ['defaultLibrary']);
        else push(v.span, 'property');
        return;
      }
      case 'call':
        push(v.nameSpan, 'function', ['defaultLibrary']);
        for (const a of v.args) arg(a);
        return;
      case 'index': {
        value(v.target);
        if (v.key.kind === 'each') {
          const star = text.indexOf('*', v.key.span.start);
          if (star >= 0 && star < v.key.span.end) push({ start: star, end: star + 1 }, 'operator');
        } else literal(v.key.literal, false);
        return;
      }
    }
  };

  const arg = (a: A.Argument): void => {
    if (a.kind === 'literal') literal(a, false);
    else if (a.kind === 'field' || a.kind === 'call' || a.kind === 'index') value(a);
    else expr(a);
  };

  const expr = (e: A.Expr): void => {
    switch (e.kind) {
      case 'logical':
        e.items.forEach((item, i) => {
          expr(item);
          if (i < e.ops.length) op(e.ops[i]);
        });
        return;
      case 'not':
        op(e.token);
        expr(e.operand);
        return;
      case 'group':
        expr(e.inner);
        return;
      case 'quantifier':
        push(e.nameSpan, 'function', ['defaultLibrary']);
        arg(e.arg);
        return;
      case 'comparison': {
        value(e.lhs);
        if (!e.op || !e.rhs) return;
        op(e.op);
        const rhs = e.rhs;
        const regex = e.op.op === 'matches';
        if (rhs.kind === 'literal') literal(rhs, regex);
        else if (rhs.kind === 'set') for (const item of rhs.items) literal(item, false);
        else if (rhs.kind === 'list') push(rhs.span, 'variable', ['readonly']);
        else value(rhs);
        return;
      }
    }
  };

  expr(ast);
  // Logical items and their operators interleave in order; everything else is emitted
  // left to right already, but sort to be safe.
  return out.sort((a, b) => a.start - b.start);
}

interface DocToken {
  line: number;
  char: number;
  length: number;
  type: number;
  modifiers: number;
}

/** Maps a slice's tokens to document tokens, split at line breaks. */
function documentTokens(a: Analysed, slice: ExpressionSlice, tokens: readonly ExprToken[], out: DocToken[]): void {
  const text = a.doc.getText();
  for (const t of tokens) {
    const type = TOKEN_TYPES.indexOf(t.type);
    let modifiers = 0;
    for (const m of t.modifiers ?? []) modifiers |= 1 << TOKEN_MODIFIERS.indexOf(m);
    let start = slice.toDocument(t.start);
    const end = slice.toDocument(t.end);
    while (start < end) {
      // Within the token only: on a one-line (minified) document, a search to the end of the text per token was quadratic.
      let nl = start;
      while (nl < end && text.charCodeAt(nl) !== 10) nl++;
      let pieceEnd = nl;
      if (pieceEnd > start && text[pieceEnd - 1] === '\r') pieceEnd--;
      if (pieceEnd > start) {
        const pos = a.doc.positionAt(start);
        out.push({ line: pos.line, char: pos.character, length: pieceEnd - start, type, modifiers });
      }
      start = nl + 1;
    }
  }
}

/** The document's semantic tokens (optionally only those in `range`), LSP-encoded. */
export function semanticTokens(store: DocumentStore, a: Analysed, range?: LspRange): SemanticTokens {
  const from = range ? a.doc.offsetAt(range.start) : 0;
  const to = range ? a.doc.offsetAt(range.end) : Infinity;
  const tokens: DocToken[] = [];
  for (const slice of a.slices) {
    if (slice.contentEnd < from || slice.contentStart > to) continue;
    const ast = store.check(slice, a.settings, a.doc.uri).ast;
    if (!ast) continue;
    let ts = expressionTokens(ast, slice.text);
    if (range) ts = ts.filter((t) => slice.toDocument(t.end) > from && slice.toDocument(t.start) < to);
    documentTokens(a, slice, ts, tokens);
  }
  tokens.sort((x, y) => x.line - y.line || x.char - y.char);
  const data: number[] = [];
  let line = 0;
  let char = 0;
  for (const t of tokens) {
    data.push(t.line - line, t.line === line ? t.char - char : t.char, t.length, t.type, t.modifiers);
    line = t.line;
    char = t.char;
  }
  return { data };
}
