/**
 * The JSON of objects that never change once made (a stored rule, a version of a
 * ruleset): serialized once, however often it is answered or written. A rule keeps its
 * text; a ruleset keeps its UTF-8 bytes, written from its rules' texts straight into one
 * buffer (joinedJson), and an answer sends those bytes as they are (api.ts
 * envelopeChunks). A 500-rule ruleset is ~150 KB of JSON; a PATCH of one rule serializes
 * that rule, not the other 499, and no 150 KB string is made, encoded and collected.
 */
type Fixed = string | Buffer | (() => Buffer);
const fixed = new WeakMap<object, Fixed>();

/** Marks `v` as never changing from now on: its JSON is `json`, or the bytes made once by `json()` when first asked. */
export function fixJson(v: object, json: string | (() => Buffer)): void {
  fixed.set(v, json);
}

/** Whether `v` was marked with fixJson (its JSON never changes). */
export function isFixed(v: unknown): v is object {
  return v !== null && typeof v === 'object' && fixed.has(v);
}

/** `JSON.stringify(v)`, from the cache when `v` was marked with fixJson. */
export function jsonText(v: unknown): string {
  const t = v !== null && typeof v === 'object' ? fixed.get(v) : undefined;
  if (typeof t === 'string') return t;
  return t === undefined ? JSON.stringify(v) : jsonBytes(v).toString();
}

/** `JSON.stringify(v)` as UTF-8 bytes; those of an object fixed with a maker are made once and kept. */
export function jsonBytes(v: unknown): Buffer {
  const t = v !== null && typeof v === 'object' ? fixed.get(v) : undefined;
  if (t === undefined || typeof t === 'string') return Buffer.from(t ?? JSON.stringify(v));
  if (Buffer.isBuffer(t)) return t;
  const made = t();
  fixed.set(v as object, made);
  return made;
}

/** `head`, then the JSON of `items` separated by commas, then `tail`, as UTF-8 in one buffer (no joined string). */
export function joinedJson(head: string, items: readonly unknown[], tail: string): Buffer {
  const texts = items.map(jsonText);
  let size = Buffer.byteLength(head) + Buffer.byteLength(tail) + Math.max(0, texts.length - 1);
  for (const t of texts) size += Buffer.byteLength(t);
  const out = Buffer.allocUnsafe(size);
  let at = out.write(head, 0);
  texts.forEach((t, i) => {
    if (i > 0) out[at++] = 0x2c; // ,
    at += out.write(t, at);
  });
  out.write(tail, at);
  return out;
}
