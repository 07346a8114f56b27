/**
 * Which of several needles a value contains, in one pass over it: a filter that tests one
 * field with many `contains` (`http.request.uri.path contains "/wp-admin" or … contains
 * "/xmlrpc.php"`) reads the value once per evaluation instead of once per needle
 * (codegen.ts groups them). The automaton is ahoCorasick.ts's, case-sensitive, with needle
 * i's mark the bit 1 << i.
 */
import { buildAutomaton } from './ahoCorasick';

/** Needles per automaton: their bits fit a small integer. */
export const NEEDLE_SET_MAX = 30;

/** `needles` (1..30 non-empty byte strings) → a function giving the bit (1 << i) of each needle i found. */
export function needleSet(needles: readonly string[]): (s: string) => number {
  if (needles.length === 0 || needles.length > NEEDLE_SET_MAX) throw new Error(`needleSet takes 1 to ${NEEDLE_SET_MAX} needles`);
  const { cls, K, next, out } = buildAutomaton(needles, (i) => 1 << i, false);
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
