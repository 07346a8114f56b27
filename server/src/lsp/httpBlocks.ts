/**
 * The request blocks of a `.http` file (`###`-separated), as the CodeLens lists them and
 * the evaluation reads them: both the language server's thread and the evaluation worker
 * (evaluationJob.ts) parse the text with this. No I/O.
 */
import type { FieldValues } from '../language/evaluate';
import type { HttpRequestInfo } from '../protocol';
import { requestSummary, requestValues } from '../requests/fields';
import { parseHttpFile } from '../requests/http';

/** The `.http` separator, as requests/http.ts reads it. */
const SEPARATOR = /^\s*#{3,}/;
const COMMENT = /^\s*(#|\/\/)/;

/** One request block of a `.http` file, with its field values when it has no problem. */
export interface RequestBlock extends HttpRequestInfo {
  readonly fields?: Record<string, unknown>;
  readonly values?: FieldValues;
}

/**
 * The request blocks of a `.http` text: each `###`-separated block that holds a request
 * or a problem, with the parser's problems and those of its field values, by line.
 */
export function requestBlocks(text: string): RequestBlock[] {
  const { requests, problems } = parseHttpFile(text);
  const lines = text.split('\n').map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l));
  const bounds = [-1];
  lines.forEach((l, i) => {
    if (SEPARATOR.test(l)) bounds.push(i);
  });
  bounds.push(lines.length);
  const blocks: RequestBlock[] = [];
  for (let k = 0; k + 1 < bounds.length; k++) {
    const first = bounds[k] + 1;
    const last = bounds[k + 1] - 1;
    const inBlock = (line: number) => line >= first && line <= last;
    const req = requests.find((r) => r.source !== undefined && inBlock(r.source.line));
    const own = problems.filter((p) => inBlock(p.line)).sort((a, b) => a.line - b.line);
    if (!req && own.length === 0) continue;
    const messages = own.map((p) => `line ${p.line + 1}: ${p.message}`);
    const index = blocks.length;
    if (req) {
      const line = req.source!.line;
      const r = requestValues(req);
      for (const p of r.problems) messages.push(`line ${line + 1}: ${p}`);
      blocks.push({ index, ...(req.name !== undefined ? { name: req.name } : {}), summary: requestSummary(req), line, problems: messages, fields: r.fields, values: r.values });
      continue;
    }
    // Malformed: the lens goes on the first line that is neither blank nor a comment.
    let line = own[0].line;
    for (let i = first; i <= last; i++) {
      if (lines[i].trim() !== '' && !COMMENT.test(lines[i])) {
        line = i;
        break;
      }
    }
    const name = bounds[k] >= 0 ? lines[bounds[k]].replace(SEPARATOR, '').trim() : '';
    const shown = lines[line].trim();
    blocks.push({ index, ...(name ? { name } : {}), summary: shown.length > 80 ? `${shown.slice(0, 79)}…` : shown, line, problems: messages });
  }
  return blocks;
}

export function info(b: RequestBlock): HttpRequestInfo {
  return { index: b.index, ...(b.name !== undefined ? { name: b.name } : {}), summary: b.summary, line: b.line, problems: b.problems };
}

