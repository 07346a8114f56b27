/**
 * Runs the per-expression features (completion.ts, hover.ts, signatureHelp.ts, which
 * work on one expression's text with UTF-16 offsets) on a document: finds the
 * expression under the cursor, maps the cursor into it, and maps the answer back,
 * through JSON escapes for ruleset files. Outside every expression the answer is null,
 * so that the JSON language service's own features are unaffected.
 *
 * Inside a JSON string, inserted text is JSON-escaped. A snippet is escaped piece by
 * piece: its literal text is JSON-escaped and then snippet-escaped (`\` -> `\\`), while
 * `$1`, `${1:name}` stay snippet syntax. `filterText` is escaped too, because VS Code
 * filters against the document's text (`\"GE` for a typed `"GE`).
 */
import type { Names } from './workspaceNames';
import {
  InsertTextFormat,
  type CompletionItem,
  type CompletionList,
  type Hover,
  type Position,
  type SignatureHelp,
} from 'vscode-languageserver/node';
import { httpScheme } from '../language/scheme/index';
import { complete } from './completion';
import type { ExpressionContext } from './context';
import { checkOptionsFor, type Analysed } from './documents';
import { jsonEscape, sliceAt, type ExpressionSlice } from './expressionSlices';
import { hover } from './hover';
import { signatureHelp } from './signatureHelp';

/** Characters that open completion (besides word characters). */
export const COMPLETION_TRIGGERS = ['.', '$', '"', '[', '{', '(', ' '];
export const SIGNATURE_TRIGGERS = ['(', ','];
export const SIGNATURE_RETRIGGERS = [' '];

function contextFor(a: Analysed, slice: ExpressionSlice, known?: Names): ExpressionContext {
  const o = checkOptionsFor(slice, a.settings);
  const listNames = known ? [...new Set([...(o.listNames ?? []), ...known.lists])] : o.listNames;
  return { scheme: httpScheme, plan: o.plan, phase: o.phase, listNames, sampleKeys: known?.keys, ...(o.countingExpression ? { countingExpression: true } : {}) };
}

/** The expression under a document position, with the cursor as an expression offset. */
function at(a: Analysed, position: Position): { slice: ExpressionSlice; offset: number } | undefined {
  const docOffset = a.doc.offsetAt(position);
  const slice = sliceAt(a.slices, docOffset);
  if (!slice) return undefined;
  return { slice, offset: slice.fromDocument(docOffset) };
}

function docRange(a: Analysed, slice: ExpressionSlice, r: { start: number; end: number }) {
  return { start: a.doc.positionAt(slice.toDocument(r.start)), end: a.doc.positionAt(slice.toDocument(r.end)) };
}

/**
 * JSON-escapes a snippet: literal characters (including snippet-escaped `\$`, `\}`,
 * `\\`) are JSON-escaped and the backslashes that escaping adds are doubled for the
 * snippet parser; snippet syntax passes through.
 */
export function jsonEscapeSnippet(snippet: string): string {
  let out = '';
  for (let i = 0; i < snippet.length; i++) {
    let c = snippet[i];
    let literal = false;
    if (c === '\\' && i + 1 < snippet.length && '$}\\'.includes(snippet[i + 1])) {
      c = snippet[++i];
      literal = true;
    }
    const j = jsonEscape(c);
    if (j === c && !literal) out += c;
    else out += j.replace(/[\\$}]/g, (m) => `\\${m}`);
  }
  return out;
}

/** `known`: list names and map keys the workspace already uses, offered alongside the built-in ones. */
export function completion(a: Analysed, position: Position, known?: Names): CompletionList | null {
  const where = at(a, position);
  if (!where) return null;
  const { slice, offset } = where;
  const items = complete(slice.text, offset, contextFor(a, slice, known));
  const out: CompletionItem[] = items.map((item) => {
    const { textEdit, ...rest } = item;
    const mapped: CompletionItem = { ...rest };
    const snippet = item.insertTextFormat === InsertTextFormat.Snippet;
    const encode = (t: string) => (!slice.inJson ? t : snippet ? jsonEscapeSnippet(t) : jsonEscape(t));
    if (textEdit) mapped.textEdit = { range: docRange(a, slice, textEdit.range), newText: encode(textEdit.newText) };
    if (item.insertText !== undefined) mapped.insertText = encode(item.insertText);
    if (slice.inJson) {
      const filter = item.filterText ?? item.label;
      const escaped = jsonEscape(filter);
      if (escaped !== filter) mapped.filterText = escaped;
    }
    return mapped;
  });
  return { isIncomplete: false, items: out };
}

export function hoverAt(a: Analysed, position: Position): Hover | null {
  const where = at(a, position);
  if (!where) return null;
  const h = hover(where.slice.text, where.offset, contextFor(a, where.slice));
  if (!h) return null;
  return { contents: h.contents, range: docRange(a, where.slice, h.range) };
}

export function signatureHelpAt(a: Analysed, position: Position): SignatureHelp | null {
  const where = at(a, position);
  if (!where) return null;
  return signatureHelp(where.slice.text, where.offset, contextFor(a, where.slice)) ?? null;
}
