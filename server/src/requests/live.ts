/**
 * A live HTTP request (as the WAF proxy receives it, server/src/proxy/) as a SampleRequest:
 * one more source of requests beside `.http` files and ftw tests, so its field values come
 * from the same code (fields.ts) and a rule sees a proxied request exactly as it sees the
 * same request written in a sample.
 *
 * Node's HTTP parser hands the request line and headers over as binary strings (one code
 * unit per byte). The target is decoded as a sample's text (node refuses a target with a
 * byte over 0x7f, so it is ASCII); header values stay bytes (`headerBytes`), so one that is
 * not UTF-8 reaches the rules exactly as it came. The body is a binary string of the bytes read so far (the inspection limit), with
 * the whole size when known. Edge fields with no source in the request itself (client
 * address, country, time, …) come as `edge`, written as a sample's `# @field value` lines.
 */
import { binaryToUtf8 } from '../language/bytes';
import type { SampleRequest } from './types';

export interface LiveRequest {
  readonly method: string;
  /** The request target as received (origin-form `/path?q`, or absolute-form), binary string. */
  readonly target: string;
  /** e.g. `1.1`. */
  readonly httpVersion: string;
  /** Name, value, name, value… as received (binary strings, case kept, in order). */
  readonly rawHeaders: readonly string[];
  /** The first bytes of the body (binary string); empty when there is none. */
  readonly body: string;
  /** The body's whole size in bytes (Content-Length), or the bytes read when not known. */
  readonly bodySize: number;
  /** Field name → value as text (`ip.src` → `203.0.113.7`), as a sample's metadata lines. */
  readonly edge: Readonly<Record<string, string>>;
}

function text(binary: string): string {
  return binaryToUtf8(binary) ?? binary;
}

/** The live request as a sample request (fields.ts `requestValues` turns it into field values). */
export function liveSampleRequest(live: LiveRequest): SampleRequest {
  const headers: (readonly [string, string])[] = [];
  for (let i = 0; i + 1 < live.rawHeaders.length; i += 2) headers.push([live.rawHeaders[i]!, live.rawHeaders[i + 1]!]);
  return {
    method: live.method,
    url: text(live.target),
    httpVersion: `HTTP/${live.httpVersion}`,
    headers,
    ...(live.body.length > 0 || live.bodySize > 0 ? { body: live.body, bodySize: Math.max(live.bodySize, live.body.length) } : {}),
    meta: live.edge,
    wire: true,
    headerBytes: true,
  };
}
