/** The collections `node --trace-gc --trace-gc-nvp` printed (gcSummary.ts, objectCopies.bench.ts). */

export interface Collection {
  readonly kind: string;
  readonly pause: number;
  readonly allocated: number;
  readonly survived: number;
  readonly promoted: number;
}

/** The collections of each isolate (`pid:address`, as the lines begin), the most first. */
export function collections(text: string): [string, Collection[]][] {
  const byIsolate = new Map<string, Collection[]>();
  for (const line of text.split('\n')) {
    const m = /^\[(\d+:[^\]]*)\].*\bpause=([\d.]+).*\bgc=(\w+)/.exec(line);
    if (!m) continue;
    const num = (key: string) => Number(new RegExp(`\\b${key}=([\\d.]+)`).exec(line)?.[1] ?? NaN);
    const list = byIsolate.get(m[1]!) ?? [];
    list.push({ kind: m[3]!, pause: Number(m[2]), allocated: num('allocated'), survived: num('new_space_survived'), promoted: num('promoted') });
    byIsolate.set(m[1]!, list);
  }
  return [...byIsolate].sort((a, b) => b[1].length - a[1].length);
}
