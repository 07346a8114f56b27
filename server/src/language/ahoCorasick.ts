/**
 * Aho–Corasick over bytes as a full transition table, shared by `contains` needle sets
 * (needleSet.ts) and CRS's `@pm` phrase lists (runtime/crs/operators.ts): the bytes that
 * occur in the needles are numbered 1..K-1, every other byte is class 0 (code units above
 * 0xff read as class 0 too), and `next[state * K + class]` is the state after a byte.
 * `out[state]` is the OR of the marks of the needles that end there or at one of its
 * suffix states (0: none).
 */
export interface Automaton {
  readonly cls: Uint8Array;
  readonly K: number;
  readonly next: Int32Array;
  readonly out: Int32Array;
}

/** `mark(i)`: what needle i adds to `out` (non-zero). `foldCase`: needles are lower case and A–Z read as a–z. */
export function buildAutomaton(needles: readonly string[], mark: (i: number) => number, foldCase: boolean): Automaton {
  const cls = new Uint8Array(256);
  let k = 1;
  for (const p of needles) for (let i = 0; i < p.length; i++) if (cls[p.charCodeAt(i)] === 0) cls[p.charCodeAt(i)] = k++;
  if (foldCase) for (let c = 65; c <= 90; c++) cls[c] = cls[c + 32];
  const K = k;
  // The trie (goto edges, -1 = none) and the marks of the needles ending at each state.
  const goto: number[] = new Array<number>(K).fill(-1);
  const ends: number[] = [0];
  needles.forEach((p, n) => {
    let st = 0;
    for (let i = 0; i < p.length; i++) {
      const at = st * K + cls[p.charCodeAt(i)];
      if (goto[at] < 0) {
        goto[at] = ends.length;
        ends.push(0);
        for (let c = 0; c < K; c++) goto.push(-1);
      }
      st = goto[at];
    }
    ends[st] |= mark(n);
  });
  const states = ends.length;
  // Breadth first: suffix links, the full transition table, and each state's marks.
  const next = new Int32Array(states * K);
  const fail = new Int32Array(states);
  const out = new Int32Array(states);
  const queue: number[] = [];
  for (let c = 0; c < K; c++) {
    const t = goto[c];
    if (t > 0) {
      next[c] = t;
      queue.push(t);
    }
  }
  for (let q = 0; q < queue.length; q++) {
    const st = queue[q];
    out[st] = ends[st] | out[fail[st]];
    for (let c = 0; c < K; c++) {
      const t = goto[st * K + c];
      if (t > 0) {
        fail[t] = next[fail[st] * K + c];
        next[st * K + c] = t;
        queue.push(t);
      } else next[st * K + c] = next[fail[st] * K + c];
    }
  }
  return { cls, K, next, out };
}
