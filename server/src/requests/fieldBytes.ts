/**
 * Bytes as the JSON-like values `prepareFields` (language/fieldValues.ts) accepts: text
 * when the bytes are UTF-8, else `{"hex": …}`; map keys as text, with U+FFFD and a problem
 * for bytes that are not UTF-8.
 */
import { binaryToBytes, binaryToUtf8, utf8ToBinary } from '../language/bytes';
import { EXACT_BYTES } from '../language/fieldValues';
import type { SampleRequest } from './types';

/** A map without a prototype, so that any key (even `__proto__`) is an own entry. */
export function emptyMap(): Record<string, unknown[]> {
  return Object.create(null) as Record<string, unknown[]>;
}

const lossy = new TextDecoder('utf-8');

const HEX_PAIRS = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

/**
 * Hex of a binary string, with a table, appended piece by piece: a 128 KiB body is a hot
 * path (joining an array of 131,072 pairs took 90 ms, appending 7 ms).
 */
function toHex(b: string): string {
  let out = '';
  for (let i = 0; i < b.length; i++) out += HEX_PAIRS[b.charCodeAt(i) & 0xff]!;
  return out;
}

/** A Bytes value prepareFields turns back into exactly these bytes. */
export function bytes(b: string): string | { readonly hex: string } {
  const text = binaryToUtf8(b);
  if (text !== undefined) return text;
  // The hex is for readers of the JSON form; prepareFields takes the bytes (EXACT_BYTES).
  // One shared getter, not an object literal's: V8 keeps whatever an object literal with a
  // getter reaches alive through young-generation collections until a full one (docs/service.md,
  // "Objects promoted by a getter"), a cost per request for traffic full of bytes that are not UTF-8.
  const value = {} as { readonly hex: string };
  Object.defineProperty(value, EXACT_BYTES, { value: b });
  Object.defineProperty(value, 'hex', HEX);
  return value;
}

/** `hex` of every bytes value, computed when read: a 128 KiB body's hex is 256 KiB nobody may read. */
const HEX: PropertyDescriptor = {
  enumerable: true,
  get(this: { readonly [EXACT_BYTES]: string }): string {
    return toHex(this[EXACT_BYTES]);
  },
};

/** A map key (text); bytes that are not UTF-8 become U+FFFD and a problem. */
export function mapKey(b: string, what: string, problems: string[]): string {
  const text = binaryToUtf8(b);
  if (text !== undefined) return text;
  const approx = lossy.decode(binaryToBytes(b));
  problems.push(`${what} ${JSON.stringify(approx)} is not valid UTF-8; as a map key its bad bytes read as U+FFFD (the name arrays keep the exact bytes)`);
  return approx;
}

/** A request's header values as bytes (binary strings): a live request's as they came, a sample's text encoded. */
export function headerBytes(req: SampleRequest): (readonly [string, string])[] {
  return (req.headers ?? []).map(([n, v]) => [n, req.headerBytes ? v : utf8ToBinary(v)] as const);
}
