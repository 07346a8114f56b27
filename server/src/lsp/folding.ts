/**
 * Folding ranges for long expressions: parenthesised groups, function calls and
 * `any(…)`/`all(…)`, and sets that span lines. When the expression does not parse (it
 * is being typed), brackets are matched lexically instead (skipping strings), so the
 * folds do not flicker away on every keystroke.
 *
 * A fold runs from the opening bracket's line to the line before the closing bracket
 * when that bracket starts its line (so `)` / `}` stays visible), else to its line.
 * Expressions in ruleset JSON sit on one line each, so they only fold in `.cfrule`.
 */
import { forEachOutsideStrings } from '../language/scan';
import { FoldingRangeKind, type FoldingRange } from 'vscode-languageserver/node';
import * as A from '../language/ast';
import type { Analysed, DocumentStore } from './documents';
import type { ExpressionSlice } from './expressionSlices';

/** Bracket pairs [open, close] (expression offsets of the brackets) from the tree. */
export function bracketPairs(ast: A.Expr, text: string): [number, number][] {
  const out: [number, number][] = [];
  // White space may separate a function's name from its `(`.
  const paren = (after: number) => Math.max(after, text.indexOf('(', after));
  for (const n of A.nodesOf(ast)) {
    if (n.kind === 'group' || n.kind === 'set') out.push([n.span.start, n.span.end - 1]);
    else if (n.kind === 'call' || n.kind === 'quantifier') out.push([paren(n.nameSpan.end), n.span.end - 1]);
  }
  return out;
}

/**
 * Bracket pairs found lexically, for text that does not parse: `(`/`)` and `{`/`}`,
 * ignoring brackets inside quoted and raw strings. Unbalanced brackets are skipped.
 */
export function lexicalBracketPairs(text: string): [number, number][] {
  const out: [number, number][] = [];
  const stack: [string, number][] = [];
  forEachOutsideStrings(text, (c, i) => {
    if (c === '(' || c === '{') stack.push([c, i]);
    else if (c === ')' || c === '}') {
      const want = c === ')' ? '(' : '{';
      const at = stack.map((s) => s[0]).lastIndexOf(want);
      if (at >= 0) {
        out.push([stack[at][1], i]);
        stack.length = at;
      }
    }
  });
  return out;
}

function sliceRanges(a: Analysed, slice: ExpressionSlice, pairs: readonly [number, number][], out: FoldingRange[]): void {
  const text = a.doc.getText();
  for (const [open, close] of pairs) {
    const startLine = a.doc.positionAt(slice.toDocument(open)).line;
    const closeAt = slice.toDocument(close);
    const closePos = a.doc.positionAt(closeAt);
    const lineStart = closeAt - closePos.character;
    const closeStartsLine = text.slice(lineStart, closeAt).trim() === '';
    const endLine = closeStartsLine ? closePos.line - 1 : closePos.line;
    if (endLine > startLine) out.push({ startLine, endLine, kind: FoldingRangeKind.Region });
  }
}

export function foldingRanges(store: DocumentStore, a: Analysed): FoldingRange[] {
  const out: FoldingRange[] = [];
  for (const slice of a.slices) {
    // In JSON, decoded line breaks are `\n` escapes: the expression is on one line.
    if (a.doc.positionAt(slice.contentStart).line === a.doc.positionAt(slice.contentEnd).line) continue;
    const ast = store.check(slice, a.settings, a.doc.uri).ast;
    sliceRanges(a, slice, ast ? bracketPairs(ast, slice.text) : lexicalBracketPairs(slice.text), out);
  }
  // One fold per start line (the outermost), in order.
  out.sort((x, y) => x.startLine - y.startLine || y.endLine - x.endLine);
  return out.filter((r, i) => i === 0 || out[i - 1].startLine !== r.startLine);
}
