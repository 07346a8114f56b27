/**
 * Request bodies: how much of a body becomes field values (the inspection limit), and
 * bodies that name files (`< ./upload.bin` in a `.http` file), read by an adapter only as
 * far as the limit reaches.
 *
 * A WAF inspects the start of a body, not all of it: the hosted service reads 128 KB on
 * Enterprise plans (more on others), ModSecurity `SecRequestBodyLimit` bytes. Here every
 * body field is computed from the first `limit` bytes; `http.request.body.size` is the
 * real size and `http.request.body.truncated` says when the two differ. So a 1 GB upload
 * costs what 128 KB costs, and content past the limit is never read or copied.
 */
import type { BodySegment, SampleRequest } from './types';

/** Bytes of a body that are inspected when nothing else is set: 128 KiB, as the hosted service on Enterprise plans. */
export const DEFAULT_BODY_LIMIT = 128 * 1024;
/** The largest limit accepted (64 MiB): field values of a bigger body would not fit comfortably in memory. */
export const MAX_BODY_LIMIT = 64 * 1024 * 1024;

/**
 * A limit written by a user (`--body-limit 131072`): a whole number of bytes from 0 to
 * MAX_BODY_LIMIT, digits only. `where` names the setting in the error.
 */
export function parseBodyLimit(text: string, where: string): { limit: number } | { error: string } {
  const t = text.trim();
  if (!/^\d+$/.test(t)) return { error: `${where}: expected a whole number of bytes (e.g. ${DEFAULT_BODY_LIMIT} for 128 KiB), got ${JSON.stringify(text)}` };
  const n = Number(t);
  if (n > MAX_BODY_LIMIT) return { error: `${where}: ${t} bytes is more than the largest limit, ${MAX_BODY_LIMIT} (64 MiB)` };
  return { limit: n };
}

/** The first `limit` bytes of the body (a copy, not a view that would keep the whole alive) and its real size. */
export function inspectedBody(req: SampleRequest, limit: number): { body: string; size: number; truncated: boolean } {
  const whole = req.body ?? '';
  const body = whole.length > limit ? copyOfStart(whole, limit) : whole;
  const size = Math.max(req.bodySize ?? whole.length, whole.length);
  return { body, size, truncated: size > body.length };
}

/** What an adapter reads of one body file: its first `maxBytes` bytes (binary string) and its whole size. */
export type ReadBodyFile = (path: string, maxBytes: number) => { head: string; size: number };

/**
 * A request whose body names files (`bodySegments`) with its `body` read: the text and the
 * files in order up to `limit` bytes, and `bodySize` the whole. `read` is asked for no more
 * than the bytes still wanted, so a file past the limit is only measured. A file that
 * cannot be read is a problem (with the line of its reference) and counts as empty.
 */
export function withBodyFiles(req: SampleRequest, limit: number, read: ReadBodyFile): { request: SampleRequest; problems: { line: number; message: string }[] } {
  if (!req.bodySegments) return { request: req, problems: [] };
  const problems: { line: number; message: string }[] = [];
  let body = '';
  let size = 0;
  for (const seg of req.bodySegments) {
    const want = Math.max(0, limit - body.length);
    if (typeof seg === 'string') {
      body += seg.length > want ? seg.slice(0, want) : seg;
      size += seg.length;
      continue;
    }
    try {
      const { head, size: fileSize } = read(seg.file, want);
      body += head.length > want ? head.slice(0, want) : head;
      size += fileSize;
    } catch (e) {
      problems.push({ line: seg.line, message: `cannot read the body file ${JSON.stringify(seg.file)}: ${e instanceof Error ? e.message : String(e)}` });
    }
  }
  const { bodySegments: _read, ...rest } = req;
  return { request: { ...rest, body, bodySize: size }, problems };
}

/** A body that arrives in chunks (a file being read, a request being proxied): its bytes in order. */
export type BodyStream = AsyncIterable<Uint8Array>;

/** What `takeBodyHead` read of a stream. */
export interface BodyHead {
  /** The first `limit` bytes (or all of them, when fewer) as a binary string: what becomes field values. */
  readonly head: string;
  /** The chunks pulled from the stream, whole (the last may reach past the limit): forward them first. */
  readonly consumed: readonly Uint8Array[];
  /** Bytes pulled: at least head.length, more when the last chunk crossed the limit. */
  readonly read: number;
  /** True when the stream ended within what was read: then `read` is the body's size. */
  readonly ended: boolean;
  /** The same stream, positioned after `consumed` (a proxy forwards the rest from here; nothing else pulls it). */
  readonly rest: AsyncIterator<Uint8Array>;
}

/**
 * Pulls chunks from a streamed body until `limit` bytes are in hand (or it ends), and no
 * further: a 1 GB upload costs what its first chunks cost. The head becomes `body`, and
 * `bodySize` is the declared size (Content-Length, a file's size) when known, else what was
 * read, which already says the body is larger than the limit when it is (see
 * `streamedRequest`).
 */
export async function takeBodyHead(stream: BodyStream, limit: number): Promise<BodyHead> {
  const it = stream[Symbol.asyncIterator]();
  const consumed: Uint8Array[] = [];
  const pieces: string[] = [];
  let read = 0;
  let kept = 0;
  let ended = false;
  while (read <= limit) {
    const step = await it.next();
    if (step.done) {
      ended = true;
      break;
    }
    const chunk = step.value;
    consumed.push(chunk);
    read += chunk.length;
    if (kept < limit) {
      const take = Math.min(chunk.length, limit - kept);
      pieces.push(bytesToBinary(chunk.subarray(0, take)));
      kept += take;
    }
  }
  return { head: pieces.join(''), consumed, read, ended, rest: it };
}

/**
 * The size of a body of no declared size (a chunked request, a pipe) when the rules run,
 * from the bytes read so far: exact up to the limit; past it limit + 1, "more than the
 * limit". What was read past the limit depends on how the sender's writes arrived, and a
 * field must not: a 10 KB body sent whole and sent in 500-byte pieces get the same value.
 */
export function undeclaredSize(read: number, limit: number): number {
  return Math.min(read, limit + 1);
}

/**
 * A request whose body comes from a stream: `body` is its first `limit` bytes and
 * `bodySize` the declared size when given, the whole size when the stream ended within the
 * limit, else `undeclaredSize`'s limit + 1; so `http.request.body.truncated` and
 * `crs.inbound_data_error` say it was cut. Returns what was read too, for a caller that
 * forwards the body.
 */
export async function streamedRequest(req: Omit<SampleRequest, 'body' | 'bodySize'>, stream: BodyStream, limit: number, declaredSize?: number): Promise<{ request: SampleRequest; read: BodyHead }> {
  const read = await takeBodyHead(stream, limit);
  const size = read.ended ? read.read : declaredSize !== undefined ? Math.max(declaredSize, read.read) : undeclaredSize(read.read, limit);
  return { request: { ...req, body: read.head, bodySize: size }, read };
}

/** Bytes as a binary string (one code unit per byte), in slices small enough for fromCharCode. */
function bytesToBinary(b: Uint8Array): string {
  const SLICE = 8192;
  let out = '';
  for (let i = 0; i < b.length; i += SLICE) out += String.fromCharCode.apply(null, b.subarray(i, i + SLICE) as unknown as number[]);
  return out;
}

/** The body of a request whose files were not read: its text only, and a problem naming the first file. */
export function bodyWithoutFiles(req: SampleRequest): { body: string; problem?: string } {
  if (!req.bodySegments || req.body !== undefined) return { body: req.body ?? '' };
  const file = req.bodySegments.find((s): s is Exclude<BodySegment, string> => typeof s !== 'string');
  const text = req.bodySegments.filter((s): s is string => typeof s === 'string').join('');
  return { body: text, ...(file ? { problem: `the body file ${JSON.stringify(file.file)} (line ${file.line + 1}) was not read here; its content counts as empty` } : {}) };
}

/**
 * `s.slice(0, n)` as a string of its own: V8 makes a slice a view on its parent, and field
 * values holding such a view would keep a 1 GB body in memory for as long as they live.
 */
function copyOfStart(s: string, n: number): string {
  const CHUNK = 8192;
  const codes: number[] = new Array<number>(CHUNK);
  let out = '';
  for (let i = 0; i < n; i += CHUNK) {
    const len = Math.min(CHUNK, n - i);
    codes.length = len;
    for (let j = 0; j < len; j++) codes[j] = s.charCodeAt(i + j);
    out += String.fromCharCode(...codes);
  }
  return out;
}
