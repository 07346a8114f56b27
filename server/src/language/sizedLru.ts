/**
 * A map that forgets its least recently used entries past a budget of bytes (each entry's
 * estimated size, given when it is set). The caches of what can be large (compiled
 * regexes, stored rulesets, checked rules) are bounded by it rather than by a count: a
 * count bounds nothing when one entry can be megabytes.
 */
export class SizedLru<V> {
  private readonly map = new Map<string, { readonly value: V; readonly bytes: number }>();
  /** The estimated bytes held now. */
  bytes = 0;

  /**
   * `onEvict` hears of each entry let go to keep the budget, one too large to keep included
   * (not of delete or clear). `maxEntries` bounds the count too, where entries are many and small.
   */
  constructor(
    private readonly budget: number,
    private readonly onEvict?: (key: string, value: V) => void,
    private readonly maxEntries = Infinity,
  ) {}

  get size(): number {
    return this.map.size;
  }

  get(key: string): V | undefined {
    const e = this.map.get(key);
    if (!e) return undefined;
    // Most recently used last: a Map keeps insertion order.
    this.map.delete(key);
    this.map.set(key, e);
    return e.value;
  }

  /** Keeps `value` as the most recently used; one larger than the whole budget is not kept. */
  set(key: string, value: V, bytes: number): void {
    this.delete(key);
    if (bytes > this.budget) {
      this.onEvict?.(key, value);
      return;
    }
    while (this.bytes + bytes > this.budget || this.map.size >= this.maxEntries) {
      const [k, e] = this.map.entries().next().value!;
      this.map.delete(k);
      this.bytes -= e.bytes;
      this.onEvict?.(k, e.value);
    }
    this.map.set(key, { value, bytes });
    this.bytes += bytes;
  }

  /** The value, without marking it used. */
  peek(key: string): V | undefined {
    return this.map.get(key)?.value;
  }

  /** The entries, least recently used first (one may be deleted as they are walked). */
  *oldest(): IterableIterator<[string, V]> {
    for (const [k, e] of this.map) yield [k, e.value];
  }

  delete(key: string): void {
    const old = this.map.get(key);
    if (!old) return;
    this.map.delete(key);
    this.bytes -= old.bytes;
  }

  clear(): void {
    this.map.clear();
    this.bytes = 0;
  }
}
