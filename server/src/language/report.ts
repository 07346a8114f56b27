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
import type { Diagnostic } from './diagnostics';

export interface Position {
  /** 0-based line. */
  readonly line: number;
  /** 0-based UTF-16 offset within the line (LSP). */
  readonly character: number;
}

export function positionAt(text: string, offset: number): Position {
  let line = 0;
  let lineStart = 0;
  for (let i = 0; i < offset && i < text.length; i++) {
    if (text.charCodeAt(i) === 10) {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, character: Math.min(offset, text.length) - lineStart };
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

function utf8Length(s: string): number {
  return new TextEncoder().encode(s).length;
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
