/**
 * `contains` with a constant needle, as a search function made once per needle. V8's
 * String.prototype.includes costs a builtin call and a C++ search setup on every call,
 * more than the search itself on the short values of a request (a path, a user agent), so
 * needles of two or more bytes get a Boyer-Moore-Horspool loop that V8 compiles inline,
 * generated for the needle (its bytes as constants in the comparisons, no loads of it);
 * long values (request bodies) still go to includes, whose C++ search is faster there.
 */

/** Values longer than this are searched with String.prototype.includes. */
const LOOP_MAX = 1024;
/** Needles up to this long have their comparisons written out; longer ones loop over them. */
const UNROLL_MAX = 16;

export function containsSearch(needle: string): (s: string) => boolean {
  const m = needle.length;
  let bytes = true;
  for (let i = 0; i < m; i++) if (needle.charCodeAt(i) > 255) bytes = false;
  if (m < 2 || !bytes) return (s) => s.includes(needle);
  // How far the window may move when its last character is c (c not in the needle: m).
  const shift = new Int32Array(256).fill(m);
  for (let i = 0; i < m - 1; i++) shift[needle.charCodeAt(i)] = m - 1 - i;
  const last = needle.charCodeAt(m - 1);
  return generated(needle, shift) ?? loop(needle, shift, last);
}

/** The search with the needle's bytes written into its source; undefined where code generation is off. */
function generated(needle: string, shift: Int32Array): ((s: string) => boolean) | undefined {
  const m = needle.length;
  if (m > UNROLL_MAX) return undefined;
  // At a window ending at i whose last byte matched: the others, right to left.
  const rest = Array.from({ length: m - 1 }, (_, k) => `s.charCodeAt(i - ${k + 1}) === ${needle.charCodeAt(m - 2 - k)}`).join(' && ');
  const source = `return function contains(s) {
  const n = s.length;
  if (n > ${LOOP_MAX}) return s.includes(needle);
  let i = ${m - 1};
  while (i < n) {
    const c = s.charCodeAt(i);
    if (c === ${needle.charCodeAt(m - 1)} && ${rest}) return true;
    i += c < 256 ? shift[c] : ${m};
  }
  return false;
};`;
  try {
    return (new Function('needle', 'shift', source) as (needle: string, shift: Int32Array) => (s: string) => boolean)(needle, shift);
  } catch (e) {
    if (e instanceof EvalError) return undefined; // --disallow-code-generation-from-strings
    throw e;
  }
}

function loop(needle: string, shift: Int32Array, last: number): (s: string) => boolean {
  const m = needle.length;
  return (s) => {
    const n = s.length;
    if (n > LOOP_MAX) return s.includes(needle);
    let i = m - 1;
    while (i < n) {
      const c = s.charCodeAt(i);
      if (c === last) {
        let j = 1;
        while (j < m && s.charCodeAt(i - j) === needle.charCodeAt(m - 1 - j)) j++;
        if (j === m) return true;
      }
      i += c < 256 ? shift[c] : m;
    }
    return false;
  };
}
