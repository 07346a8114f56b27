/**
 * A request body sent with a `Content-Encoding` (gzip, deflate, br): the rules see it decoded,
 * as the app that inflates it will read it, not the compressed bytes (through which any
 * payload would pass). The app still gets the bytes as sent. At most `limit` decoded bytes are
 * kept, whatever the body expands to (a small gzip of zeros may inflate to gigabytes); a body
 * whose coding the proxy cannot decode is refused rather than let through uninspected, as a
 * `Transfer-Encoding` other than chunked is (requestHead.ts).
 *
 * Bytes the decoder would skip are refused too, since an app that does not inflate reads them:
 * a gzip header's comment or extra field (a file name only when it is a plain one), a second
 * gzip member, a trailer that is not the data's, and anything after the end of a deflate or
 * br stream. (A payload there, `&q=<attack>&`, reaches a form parser of
 * the raw bytes while the rules read only the decoded ones.)
 */
import type { Transform } from 'node:stream';
import * as zlib from 'node:zlib';

const { constants, createBrotliDecompress, createInflate, createInflateRaw } = zlib;
/** node:zlib's CRC-32 (node 20.15 and later; before, a gzip trailer goes unchecked). */
const crc32 = (zlib as { crc32?: (data: Buffer) => number }).crc32;

export type BodyDecoding =
  /** The decoded body (at most `limit` bytes) and its whole size: exact when all of it was decoded within the limit, else limit + 1 ("more than the limit"). */
  | { readonly body: Buffer; readonly size: number }
  | { readonly refused: { readonly status: 400 | 415; readonly reason: string } };

type Stage = { bytes: Buffer; more: boolean } | { error: string };

const sync = { finishFlush: constants.Z_SYNC_FLUSH };
const STAGES: Record<string, (input: Buffer, complete: boolean, limit: number) => Promise<Stage>> = {
  gzip: gunzip,
  'x-gzip': gunzip,
  // HTTP's deflate is zlib-wrapped; some clients send it raw, which is tried when the wrapper is missing.
  deflate: async (input, complete, limit) => {
    const wrapped = await inflate(createInflate(sync), input, complete, limit);
    return 'error' in wrapped && wrapped.error === 'Z_DATA_ERROR' ? inflate(createInflateRaw(sync), input, complete, limit) : wrapped;
  },
  br: (input, complete, limit) => inflate(createBrotliDecompress({ finishFlush: constants.BROTLI_OPERATION_FLUSH }), input, complete, limit),
};

/** The codings a `Content-Encoding` names, in the order they were applied (`identity` dropped). */
export function contentCodings(header: string | undefined): string[] {
  return (header ?? '')
    .split(',')
    .map((c) => c.trim().toLowerCase())
    .filter((c) => c !== '' && c !== 'identity');
}

/**
 * Decodes the first bytes of a body (`bytes`; `complete` when they are the whole body) coded
 * as `header` says; undefined when it names no coding. Refused: a coding other than gzip,
 * deflate and br (415), or bytes that are not what their coding says (400). Undefined too for
 * no body bytes.
 */
export async function decodeBody(header: string | undefined, bytes: Buffer, complete: boolean, limit: number): Promise<BodyDecoding | undefined> {
  const codings = contentCodings(header);
  // No body (a GET that names a coding): nothing to decode, whatever the header says.
  if (codings.length === 0 || bytes.length === 0) return undefined;
  // Each coding is a pass over up to the limit: a header of thousands (`gzip,gzip,…`) would hold the proxy's thread for seconds (curl caps its chain at 5 for the same reason).
  if (codings.length > MAX_CODINGS) return { refused: { status: 415, reason: `Content-Encoding names ${codings.length} codings: the proxy decodes at most ${MAX_CODINGS} in turn` } };
  const unknown = codings.find((c) => !(c in STAGES));
  if (unknown !== undefined) return { refused: { status: 415, reason: `Content-Encoding ${JSON.stringify(unknown.slice(0, 40))}: the rules could not read the body (the proxy decodes gzip, deflate and br)` } };
  let data = bytes;
  let whole = complete;
  // Codings are listed in the order they were applied: the last one is undone first.
  for (const coding of [...codings].reverse()) {
    const out = await STAGES[coding]!(data, whole, limit);
    if ('error' in out) return { refused: { status: 400, reason: `the body is not valid ${coding} (${out.error})` } };
    data = out.bytes;
    whole &&= !out.more;
  }
  return whole && data.length <= limit ? { body: data, size: data.length } : { body: data.subarray(0, limit), size: limit + 1 };
}

/** Codings undone in turn at most (`gzip, br` is two). */
export const MAX_CODINGS = 3;

const FHCRC = 2;
const FNAME = 8;
/** FEXTRA and FCOMMENT (RFC 1952 §2.3.1): free fields a gzip decoder skips. */
const SKIPPED_FIELDS = 4 | 16;
/** A file name `gzip` stores by default (`gzip payload.json`): letters, digits, `.`, `_`, `-` only, so no form or query syntax can hide in it. */
const PLAIN_NAME = /^[A-Za-z0-9._-]{1,255}$/;

/** One gzip member (RFC 1952): its header read here, its deflate data inflated, then exactly its 8-byte trailer (CRC-32 and size, which the app's decoder checks). */
async function gunzip(input: Buffer, complete: boolean, limit: number): Promise<Stage> {
  if (input.length < 10 || input[0] !== 0x1f || input[1] !== 0x8b || input[2] !== 8) return { error: 'no gzip header' };
  const flags = input[3]!;
  if (flags & SKIPPED_FIELDS) return { error: 'a gzip header with a comment or extra field, which the rules would not read; compress without them' };
  let start = 10;
  if (flags & FNAME) {
    const end = input.indexOf(0, start);
    if (end < 0 || !PLAIN_NAME.test(input.toString('latin1', start, end))) return { error: 'a gzip header whose file name is not a plain one (letters, digits, ., _, -), which the rules would not read; compress with gzip -n' };
    start = end + 1;
  }
  if (flags & FHCRC) start += 2;
  const out = await inflate(createInflateRaw(sync), input.subarray(start), complete, limit, 8);
  // The whole member decoded: its trailer must be its CRC-32 and size, not 8 free bytes a form parser of the raw body would read.
  if (!('error' in out) && complete && !out.more && crc32) {
    const trailer = input.subarray(input.length - 8);
    if (trailer.readUInt32LE(0) !== crc32(out.bytes) || trailer.readUInt32LE(4) !== out.bytes.length % 2 ** 32) return { error: 'its trailer is not the CRC-32 and size of its data' };
  }
  return out;
}

/**
 * Up to limit + 1 bytes of what `decoder` makes of `input`; `more` when it had more to give.
 * A stream that ends with more than `trailer` bytes of the input left over is an error (bytes
 * the app may read that the rules would not); when the input is the whole body, so is one
 * that leaves fewer (a gzip member cut short).
 */
function inflate(decoder: Transform & { bytesWritten: number }, input: Buffer, complete: boolean, limit: number, trailer = 0): Promise<Stage> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const finish = (r: Stage) => {
      if (settled) return;
      settled = true;
      decoder.destroy();
      resolve(r);
    };
    decoder.on('data', (d: Buffer) => {
      chunks.push(d);
      size += d.length;
      if (size > limit) finish({ bytes: Buffer.concat(chunks).subarray(0, limit + 1), more: true });
    });
    decoder.on('end', () => {
      const left = input.length - decoder.bytesWritten;
      if (left > trailer) return finish({ error: `${left - trailer} bytes after the end of the compressed data` });
      if (complete && left < trailer) return finish({ error: 'the compressed data is cut short' });
      finish({ bytes: Buffer.concat(chunks), more: false });
    });
    decoder.on('error', (e: NodeJS.ErrnoException) => finish({ error: e.code ?? e.message }));
    decoder.end(input);
  });
}
