/**
 * Positions and the engine's error layout:
 *
 *   Filter parsing error (1:11):
 *   http.host eq 80
 *                ^^ expected 1 characters, but found 0
 *
 * LINE and COL are 1-based, and COL and the carets count UTF-8 bytes within the line,
 * as the engine does; editors use UTF-16 `character` offsets instead.
 */
import { utf8Length } from './bytes';
import type { Diagnostic } from './diagnostics';

export interface Position {
  /** 0-based line. */
  readonly line: number;
  /** 0-based UTF-16 offset within the line (LSP). */
  readonly character: number;
}

/** The position of `offset` in `text` (an offset past the end is the end). */
export function positionAt(text: string, offset: number): Position {
  return positionsIn(text)(offset);
}

/** The last text's line starts: a file's findings are placed one after another, so each file's are found once. */
let lineStarts: { readonly text: string; readonly starts: readonly number[] } | undefined;

/**
 * Offsets to positions in `text`, by binary search over its line starts, found once per
 * text: a scan from the start for each offset is quadratic in a file with thousands of
 * findings (`rulesmith check` of 8,000 rules took ~40 s).
 */
export function positionsIn(text: string): (offset: number) => Position {
  if (lineStarts?.text !== text) {
    const starts = [0];
    for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) starts.push(i + 1);
    lineStarts = { text, starts };
  }
  const { starts } = lineStarts;
  return (offset) => {
    const o = Math.min(offset, text.length);
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (starts[mid]! <= o) lo = mid;
      else hi = mid - 1;
    }
    return { line: lo, character: o - starts[lo]! };
  };
}

export function offsetAt(text: string, pos: Position): number {
  let offset = 0;
  for (let line = 0; line < pos.line; line++) {
    const nl = text.indexOf('\n', offset);
    if (nl < 0) return text.length;
    offset = nl + 1;
  }
  const lineEnd = text.indexOf('\n', offset);
  return Math.min(offset + pos.character, lineEnd < 0 ? text.length : lineEnd);
}


/** The engine's `Filter parsing error (L:C):` block for one diagnostic (three lines, each ending in \n). */
export function engineReport(text: string, d: Diagnostic, heading = d.severity === 'error' ? 'Filter parsing error' : 'Filter warning'): string {
  const start = positionAt(text, d.range.start);
  const lineStart = d.range.start - start.character;
  const nl = text.indexOf('\n', lineStart);
  const lineEnd = nl < 0 ? text.length : nl;
  const line = text.slice(lineStart, lineEnd).replace(/\r$/, '');
  const col = utf8Length(line.slice(0, start.character));
  const spanEnd = Math.min(d.range.end, lineStart + line.length);
  const carets = Math.max(1, utf8Length(text.slice(d.range.start, Math.max(spanEnd, d.range.start))));
  return `${heading} (${start.line + 1}:${col + 1}):\n${line}\n${' '.repeat(col)}${'^'.repeat(carets)} ${d.message}\n`;
}

/**
 * A finding's message with the text it is about (`unknown identifier` alone does not say
 * which): `message (\`text\`)`, at most 60 characters of the text; the message alone when
 * the span holds none. For messages printed away from the text (eval, preview).
 */
export function withSubject(message: string, text: string, start: number, end: number): string {
  const subject = text.slice(start, Math.min(end, start + 60));
  return subject.trim() === '' ? message : `${message} (\`${subject}\`)`;
}
