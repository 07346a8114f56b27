/**
 * The request blocks of a `.http` file (`###`-separated), as the CodeLens lists them and
 * the evaluation reads them: both the language server's thread and the evaluation worker
 * (evaluationJob.ts) parse the text with this. No I/O.
 */
import type { FieldValues } from '../language/evaluate';
import type { HttpRequestInfo } from '../protocol';
import { requestSummary, requestValues } from '../requests/fields';
import { parseHttpBlocks } from '../requests/http';
import type { SampleRequest } from '../requests/types';

/** One request block of a `.http` file, with the request and its field values when it has one. */
export interface RequestBlock extends HttpRequestInfo {
  readonly fields?: Record<string, unknown>;
  readonly values?: FieldValues;
  readonly request?: SampleRequest;
  /** Its `###` line (0 for the first block). */
  readonly startLine: number;
}

/**
 * The request blocks of a `.http` text, numbered as requests/http.ts numbers them (malformed
 * ones included), with the parser's problems and those of the field values, by line.
 */
export function requestBlocks(text: string, bodyLimit?: number): RequestBlock[] {
  const lines = text.split('\n');
  return parseHttpBlocks(text).map((b) => {
    const messages = [...b.problems].sort((x, y) => x.line - y.line).map((p) => `line ${p.line + 1}: ${p.message}`);
    const named = b.name !== undefined ? { name: b.name } : {};
    if (!b.request) return { index: b.index, ...named, summary: clipped(lines[b.line] ?? ''), line: b.line, problems: messages, startLine: b.startLine };
    const r = requestValues(b.request, bodyLimit !== undefined ? { bodyLimit } : {});
    for (const p of r.problems) messages.push(`line ${b.line + 1}: ${p}`);
    return { index: b.index, ...named, summary: requestSummary(b.request), line: b.line, problems: messages, fields: r.fields, values: r.values, request: b.request, startLine: b.startLine };
  });
}

function clipped(line: string): string {
  const shown = line.trim();
  return shown.length > 80 ? `${shown.slice(0, 79)}…` : shown;
}

export function info(b: RequestBlock): HttpRequestInfo {
  return { index: b.index, ...(b.name !== undefined ? { name: b.name } : {}), summary: b.summary, line: b.line, problems: b.problems };
}
