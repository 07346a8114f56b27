/**
 * The JSON text of objects that never change once made (a stored rule, a version of a
 * ruleset): serialized once, however often it is answered or written. A 500-rule ruleset
 * is ~150 KB of JSON; a PATCH of one rule re-serializes that rule, not the other 499.
 */
const texts = new WeakMap<object, string | (() => string)>();

/** Marks `v` as never changing from now on; its text is `text`, or made once by `text()` when first asked. */
export function fixJson(v: object, text: string | (() => string)): void {
  texts.set(v, text);
}

/** `JSON.stringify(v)`, from the cache when `v` was marked with fixJson. */
export function jsonText(v: unknown): string {
  if (v !== null && typeof v === 'object') {
    const t = texts.get(v);
    if (typeof t === 'string') return t;
    if (t !== undefined) {
      const made = t();
      texts.set(v, made);
      return made;
    }
  }
  return JSON.stringify(v);
}

/** Whether `v` was marked with fixJson (its text never changes). */
export function isFixed(v: unknown): v is object {
  return v !== null && typeof v === 'object' && texts.has(v);
}
