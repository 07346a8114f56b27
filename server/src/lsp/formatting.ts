/**
 * Document and range formatting with the core formatter (`rulesmith.format.notation`,
 * `rulesmith.format.width`; indentation from the editor's tab size, always spaces:
 * a tab is not white space in the Rules language).
 *
 * - `.cfrule`: the expression is one unit, so range formatting formats it whole when
 *   the range touches it (formatting a sub-expression alone would not know its
 *   indentation or the width left on its line). A final newline is kept.
 * - ruleset JSON: each expression string the range touches is replaced by its formatted
 *   text, JSON-escaped (line breaks become `\n`); the JSON around it is left as it is.
 *
 * An expression that does not parse is left alone (its diagnostics say why).
 */
import type { FormattingOptions, Range as LspRange, TextEdit } from 'vscode-languageserver/node';
import { formatExpression } from '../language/index';
import type { Analysed } from './documents';
import type { ExpressionSlice } from './expressionSlices';

function formatSlice(a: Analysed, slice: ExpressionSlice, options: FormattingOptions): TextEdit | undefined {
  const indent = ' '.repeat(Math.max(1, Math.min(8, options.tabSize || 2)));
  const source = slice.text;
  const formatted = formatExpression(source, { notation: a.settings.format.notation, width: a.settings.format.width, indent }).text;
  if (formatted === undefined) return undefined;
  let next = formatted;
  if (!slice.inJson) {
    // Keep one final newline if the file had one (or the editor asks for one). VS Code
    // converts inserted line breaks to the document's own.
    const trailing = source.slice(source.trimEnd().length);
    next = formatted + (trailing.includes('\n') || options.insertFinalNewline ? '\n' : '');
  }
  if (next === source || (!slice.inJson && next === source.replace(/\r\n/g, '\n'))) return undefined;
  return {
    range: { start: a.doc.positionAt(slice.contentStart), end: a.doc.positionAt(slice.contentEnd) },
    newText: slice.encode(next),
  };
}

/** Formats every expression of the document. */
export function formatDocument(a: Analysed, options: FormattingOptions): TextEdit[] {
  return a.slices.map((s) => formatSlice(a, s, options)).filter((e): e is TextEdit => e !== undefined);
}

/** Formats the expressions the range touches. */
export function formatRange(a: Analysed, range: LspRange, options: FormattingOptions): TextEdit[] {
  const start = a.doc.offsetAt(range.start);
  const end = a.doc.offsetAt(range.end);
  return a.slices
    .filter((s) => s.contentStart <= end && start <= s.contentEnd)
    .map((s) => formatSlice(a, s, options))
    .filter((e): e is TextEdit => e !== undefined);
}
