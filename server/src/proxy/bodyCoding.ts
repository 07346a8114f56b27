/**
 * A request body sent with a `Content-Encoding` (gzip, deflate, br): the rules see it decoded,
 * as the app that inflates it will read it, not the compressed bytes (through which any
 * payload would pass). The app still gets the bytes as sent. At most `limit` decoded bytes are
 * kept, whatever the body expands to (a small gzip of zeros may inflate to gigabytes); a body
 * whose coding the proxy cannot decode is refused rather than let through uninspected, as a
 * `Transfer-Encoding` other than chunked is (requestHead.ts).
 */
import type { Transform } from 'node:stream';
import { constants, createBrotliDecompress, createGunzip, createInflate, createInflateRaw } from 'node:zlib';

export type BodyDecoding =
  /** The decoded body (at most `limit` bytes) and its whole size: exact when all of it was decoded within the limit, else limit + 1 ("more than the limit"). */
  | { readonly body: Buffer; readonly size: number }
  | { readonly refused: { readonly status: 400 | 415; readonly reason: string } };

const DECODERS: Record<string, (raw: boolean) => Transform> = {
  gzip: () => createGunzip({ finishFlush: constants.Z_SYNC_FLUSH }),
  'x-gzip': () => createGunzip({ finishFlush: constants.Z_SYNC_FLUSH }),
  // HTTP's deflate is zlib-wrapped; some clients send it raw, which is tried when the wrapper is missing.
  deflate: (raw) => (raw ? createInflateRaw({ finishFlush: constants.Z_SYNC_FLUSH }) : createInflate({ finishFlush: constants.Z_SYNC_FLUSH })),
  br: () => createBrotliDecompress({ finishFlush: constants.BROTLI_OPERATION_FLUSH }),
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
  const unknown = codings.find((c) => !(c in DECODERS));
  if (unknown !== undefined) return { refused: { status: 415, reason: `Content-Encoding ${JSON.stringify(unknown.slice(0, 40))}: the rules could not read the body (the proxy decodes gzip, deflate and br)` } };
  let data = bytes;
  let whole = complete;
  // Codings are listed in the order they were applied: the last one is undone first.
  for (const coding of [...codings].reverse()) {
    let out = await inflate(DECODERS[coding]!(false), data, limit);
    if ('error' in out && coding === 'deflate') out = await inflate(DECODERS[coding]!(true), data, limit);
    if ('error' in out) return { refused: { status: 400, reason: `the body is not valid ${coding} (${out.error})` } };
    data = out.bytes;
    whole &&= !out.more;
  }
  return whole && data.length <= limit ? { body: data, size: data.length } : { body: data.subarray(0, limit), size: limit + 1 };
}

/** Up to limit + 1 bytes of what `decoder` makes of `input`; `more` when it had more to give. */
function inflate(decoder: Transform, input: Buffer, limit: number): Promise<{ bytes: Buffer; more: boolean } | { error: string }> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const finish = (r: { bytes: Buffer; more: boolean } | { error: string }) => {
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
    decoder.on('end', () => finish({ bytes: Buffer.concat(chunks), more: false }));
    decoder.on('error', (e: NodeJS.ErrnoException) => finish({ error: e.code ?? e.message }));
    decoder.end(input);
  });
}
