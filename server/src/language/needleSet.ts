/**
 * Which of several needles a value contains, in one pass over it: a filter that tests one
 * field with many `contains` (`http.request.uri.path contains "/wp-admin" or … contains
 * "/xmlrpc.php"`) reads the value once per evaluation instead of once per needle
 * (codegen.ts groups them). Aho–Corasick over bytes, case-sensitive, as a full transition
 * table like the `@pm` automaton (runtime/crs/operators.ts); each state carries the bits of
 * the needles that end there or at one of its suffix states.
 */

/** Needles per automaton: their bits fit a small integer. */
export const NEEDLE_SET_MAX = 30;

/** `needles` (1..30 non-empty byte strings) → a function giving the bit (1 << i) of each needle i found. */
export function needleSet(needles: readonly string[]): (s: string) => number {
  if (needles.length === 0 || needles.length > NEEDLE_SET_MAX) throw new Error(`needleSet takes 1 to ${NEEDLE_SET_MAX} needles`);
  // Byte classes: the bytes that occur in the needles are 1..K-1, every other byte 0.
  const cls = new Uint8Array(256);
  let k = 1;
  for (const p of needles) for (let i = 0; i < p.length; i++) if (cls[p.charCodeAt(i)] === 0) cls[p.charCodeAt(i)] = k++;
  const K = k;
  // The trie (goto edges, -1 = none) and the needles ending at each state.
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
    ends[st] |= 1 << n;
  });
  const states = ends.length;
  // Breadth first: suffix links, the full transition table, and each state's bits.
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
  const all = (1 << needles.length) - 1;
  return (s) => {
    let found = 0;
    let st = 0;
    for (let i = 0; i < s.length; i++) {
      const c = s.charCodeAt(i);
      st = next[st * K + (c < 256 ? cls[c] : 0)];
      if (out[st] !== 0 && (found |= out[st]) === all) break;
    }
    return found;
  };
}
