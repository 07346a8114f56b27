/**
 * `rulesmith/httpRequest`: one request of a `.http` file — by index, or the one under the
 * cursor — with what it sends, for the client's "Trace on zone". The blocks are Evaluate's
 * (evaluate.ts requestBlocks), so both name a request by the same number.
 */
import type { HttpRequestContent, HttpRequestInfo, HttpRequestParams, HttpRequestResult } from '../protocol';
import type { SampleRequest } from '../requests/types';

/** A block as evaluate.ts lists it: its info, its request when it has one, and its first line. */
export interface ListedBlock extends HttpRequestInfo {
  readonly request?: SampleRequest;
  /** Its `###` line (0 for the first block). */
  readonly startLine: number;
}

/** The block holding `line`: the last one that starts at or above it; the first block when none does. */
function blockAt(blocks: readonly ListedBlock[], line: number): ListedBlock | undefined {
  return blocks.filter((b) => b.startLine <= line).pop() ?? blocks[0];
}

function contentOf(r: SampleRequest): HttpRequestContent {
  return {
    method: r.method,
    url: r.url,
    httpVersion: r.httpVersion,
    headers: r.headers,
    ...(r.body !== undefined && r.body !== '' ? { bodyBase64: Buffer.from(r.body, 'latin1').toString('base64') } : {}),
    meta: r.meta,
  };
}

/** The answer for `p` from the file's blocks. */
export function httpRequestAnswer(blocks: readonly ListedBlock[], p: Pick<HttpRequestParams, 'index' | 'line'>): HttpRequestResult {
  const block = typeof p.index === 'number' ? blocks.find((b) => b.index === p.index) : blockAt(blocks, typeof p.line === 'number' ? p.line : 0);
  if (!block) return { count: blocks.length };
  const info: HttpRequestInfo = { index: block.index, ...(block.name !== undefined ? { name: block.name } : {}), summary: block.summary, line: block.line, problems: block.problems };
  // Only a request Evaluate would evaluate is sent: a note (an unsupported {{variable}}) stops it too.
  return { request: info, ...(block.request && block.problems.length === 0 ? { content: contentOf(block.request) } : {}), count: blocks.length };
}
