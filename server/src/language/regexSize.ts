/**
 * The engine's compiled-size limit, modelled on the compiler it runs.
 *
 * wirefilter 0.7 compiles a pattern with Rust's `regex` 1.3.9 (`bytes::Regex`, Unicode
 * mode off), which builds three programs: the NFA (with capture slots; byte-based only
 * when the pattern can match invalid UTF-8), a forward DFA program (byte-based, with a
 * leading `.*?` unless anchored at the start) and a reverse DFA program. Before it
 * compiles each node of the pattern the compiler checks `instructions × 32 bytes` against
 * the limit (10 MiB) and fails with "Compiled regex exceeds size limit of 10485760 bytes."
 * So a pattern is refused when, in any of the three programs, the instruction count at
 * the start of the last node's compilation exceeds 327,680.
 *
 * Counted repetitions are compiled by copying (`x{3}` = `xxx`, `x{2,4}` = `xx` and two
 * optional copies), so the counts below are closed forms in the repetition counts, never
 * a walk over the copies: `(a{1000}){1000}` is estimated as fast as `a`. The instruction
 * counts per construct were read off the compiler and checked against the engine at the
 * accept/reject boundary (test/unit/language/regexSize.test.ts). The one approximation:
 * the byte-based programs share UTF-8 suffixes of a Unicode class through a small hash
 * table whose collisions depend on where the class lands in the program; we simulate it
 * for the class's first copy only.
 */

/**
 * The UTF-8 byte sequences of a Unicode class, in order, flat (a class has thousands):
 * for each, its length n (1–4), then n byte ranges lo, hi.
 */
export interface Utf8Seqs {
  count: number;
  readonly data: number[];
}

export type Look = '\\A' | '\\z' | '(?m:^)' | '(?m:$)' | '\\b' | '\\B';

/** A byte-level regex: `set` matches one byte (256 flags). */
export type RegexNode =
  | { readonly t: 'set'; readonly s: Uint8Array }
  | { readonly t: 'seq'; readonly items: readonly RegexNode[] }
  | { readonly t: 'alt'; readonly items: readonly RegexNode[] }
  /** `counted`: written `{m,n}`, which the engine compiles differently from `+`. */
  | { readonly t: 'rep'; readonly sub: RegexNode; readonly min: number; readonly max: number; readonly greedy: boolean; readonly counted?: boolean }
  | { readonly t: 'cap'; readonly sub: RegexNode }
  | { readonly t: 'look'; readonly k: Look }
  /** A Unicode class or character: its UTF-8 sequences, in order. */
  | { readonly t: 'class'; readonly seqs: Utf8Seqs };

/** The engine's default `size_limit` (bytes of compiled program). */
export const REGEX_SIZE_LIMIT = 10 * 1024 * 1024;
/** `size_of::<Inst>()` in regex 1.3.9 on 64-bit targets. */
const INST_BYTES = 32;

/**
 * The engine's compiled size of a pattern, in bytes: the largest instruction count any of
 * its three programs reached at a size check, times 32. Over REGEX_SIZE_LIMIT means refused.
 */
export function compiledSize(tree: RegexNode): number {
  const nfaBytes = !alwaysUtf8(tree);
  // The NFA saves the whole match (one slot before, one after); the forward DFA starts
  // with `(?s-u:.)*?` (a split and a byte range) unless the pattern is anchored.
  const nfa = 1 + cost(tree, { bytes: nfaBytes, reverse: false, saves: true }, 1).last;
  const dfa = (anchoredStart(tree) ? 0 : 2) + cost(tree, { bytes: true, reverse: false, saves: false }, 2).last;
  const reverse = cost(tree, { bytes: true, reverse: true, saves: false }, 0).last;
  return Math.max(nfa, dfa, reverse) * INST_BYTES;
}

interface Mode {
  /** Byte-based program: classes become byte ranges (UTF-8 sequences for Unicode ones). */
  readonly bytes: boolean;
  /** Concatenations compiled back to front. */
  readonly reverse: boolean;
  /** Capture groups compile two Save instructions. */
  readonly saves: boolean;
}

/**
 * `size`: instructions the node compiles to; `last`: instructions emitted, counted from
 * the node's start, when the compiler starts its last sub-node (the last size check).
 */
interface Cost {
  readonly size: number;
  readonly last: number;
}

const NONE: Cost = { size: 0, last: 0 };

/** `at`: where the node starts in the program (for the class suffix cache's hash only). */
function cost(n: RegexNode, mode: Mode, at: number): Cost {
  switch (n.t) {
    case 'set':
      // A class of k byte ranges: k range instructions and k-1 splits; one instruction
      // (a character or a range set) in a Unicode-scalar NFA.
      return { size: mode.bytes ? 2 * byteRanges(n.s) - 1 : 1, last: 0 };
    case 'class':
      return { size: mode.bytes ? utf8ClassSize(n.seqs, mode.reverse, at) : 1, last: 0 };
    case 'look':
      return { size: 1, last: 0 };
    case 'cap': {
      if (!mode.saves) return cost(n.sub, mode, at);
      const sub = cost(n.sub, mode, at + 1);
      return { size: sub.size + 2, last: sub.last + 1 };
    }
    case 'seq': {
      const items = mode.reverse ? [...n.items].reverse() : n.items;
      let size = 0;
      let last = 0;
      for (const item of items) {
        const c = cost(item, mode, at + size);
        last = size + c.last;
        size += c.size;
      }
      return { size, last };
    }
    case 'alt': {
      // A split before every branch but the last.
      let size = 0;
      let last = 0;
      n.items.forEach((item, i) => {
        if (i < n.items.length - 1) size++;
        const c = cost(item, mode, at + size);
        last = size + c.last;
        size += c.size;
      });
      return { size, last };
    }
    case 'rep':
      return repCost(n, mode, at);
  }
}

function repCost(n: Extract<RegexNode, { t: 'rep' }>, mode: Mode, at: number): Cost {
  const { min, max } = n;
  const simple = !n.counted && ((min === 0 && (max < 0 || max === 1)) || (min === 1 && max < 0));
  if (simple) {
    // `?` and `*`: a split, then the body; `+`: the body, then a split.
    const first = min === 1;
    const s = cost(n.sub, mode, first ? at : at + 1);
    return first ? { size: s.size + 1, last: s.last } : { size: s.size + 1, last: s.last + 1 };
  }
  if (max === 0) return NONE;
  const s = cost(n.sub, mode, at);
  if (max < 0) {
    // {min,}: min copies, then a split and one more copy looping back.
    return { size: min * s.size + 1 + s.size, last: min * s.size + 1 + s.last };
  }
  if (min === max) return { size: min * s.size, last: (min - 1) * s.size + s.last };
  // {min,max}: min copies, then max-min optional copies, each behind a split.
  const optional = max - min;
  return { size: min * s.size + optional * (1 + s.size), last: min * s.size + (optional - 1) * (1 + s.size) + 1 + s.last };
}

function byteRanges(s: Uint8Array): number {
  let k = 0;
  for (let b = 0; b < 256; b++) if (s[b] && (b === 0 || !s[b - 1])) k++;
  return Math.max(1, k);
}

// ---------------------------------------------------------------------------------------
// Unicode classes in a byte-based program

const SUFFIX_CACHE_SLOTS = 1000;

/** Class sizes by class and direction (computed for the first place a class is met). */
const classSizes = new WeakMap<Utf8Seqs, { forward?: number; reverse?: number }>();

function utf8ClassSize(seqs: Utf8Seqs, reverse: boolean, at: number): number {
  let sizes = classSizes.get(seqs);
  if (!sizes) classSizes.set(seqs, (sizes = {}));
  const dir = reverse ? 'reverse' : 'forward';
  return (sizes[dir] ??= simulateClass(seqs, reverse, at));
}

/**
 * A Unicode class compiles to its UTF-8 sequences, alternated (a split before each but
 * the last); each sequence's byte ranges are emitted from its end (forward) or its start
 * (reverse), reusing an instruction already emitted for the same range with the same
 * successor when a 1,000-slot table (FNV-1a of successor, start, end) still holds it.
 */
function simulateClass(seqs: Utf8Seqs, reverse: boolean, at: number): number {
  // Slot -> (successor, start, end) packed in one number, and the instruction it names.
  const keys = new Float64Array(SUFFIX_CACHE_SLOTS).fill(NaN);
  const pcs = new Float64Array(SUFFIX_CACHE_SLOTS);
  const d = seqs.data;
  let pc = at;
  for (let i = 0, p = 0; i < seqs.count; i++) {
    const pairs = d[p];
    const first = p + 1;
    p = first + 2 * pairs;
    if (i < seqs.count - 1) pc++; // split
    let from = -1; // usize::MAX: no successor yet
    for (let j = 0; j < pairs; j++) {
      const k = first + 2 * (reverse ? j : pairs - 1 - j);
      const lo = d[k];
      const hi = d[k + 1];
      const key = (from + 1) * 65536 + lo * 256 + hi;
      const slot = fnvSlot(from, lo, hi);
      if (keys[slot] === key) {
        from = pcs[slot];
        continue;
      }
      keys[slot] = key;
      pcs[slot] = pc;
      from = pc;
      pc++;
    }
  }
  return pc - at;
}

/** FNV-1a over three u64 words (from, start, end), mod 1,000, computed in 32-bit halves. */
function fnvSlot(from: number, lo: number, hi: number): number {
  // The offset basis 0xcbf29ce484222325; `from` -1 stands for usize::MAX.
  let h1 = (0xcbf29ce4 ^ (from < 0 ? 0xffffffff : Math.floor(from / 2 ** 32))) >>> 0;
  let h0 = (0x84222325 ^ (from < 0 ? 0xffffffff : from >>> 0)) >>> 0;
  [h1, h0] = fnvMul(h1, h0);
  h0 = (h0 ^ lo) >>> 0;
  [h1, h0] = fnvMul(h1, h0);
  h0 = (h0 ^ hi) >>> 0;
  [h1, h0] = fnvMul(h1, h0);
  // 2^32 mod 1000 = 296
  return ((h1 % 1000) * 296 + (h0 % 1000)) % 1000;
}

/** × 0x100000001b3 mod 2^64: the product with 0x1b3, plus the low word shifted 40 bits into the high one. */
function fnvMul(h1: number, h0: number): [number, number] {
  const low = h0 * 0x1b3;
  return [(Math.imul(h1, 0x1b3) + Math.floor(low / 2 ** 32) + ((h0 & 0xffffff) << 8)) >>> 0, low >>> 0];
}

// ---------------------------------------------------------------------------------------
// Properties of the pattern the engine's compiler looks at

/** Can the pattern only match valid UTF-8? (If not, the NFA is byte-based too.) */
function alwaysUtf8(n: RegexNode): boolean {
  switch (n.t) {
    case 'set':
      for (let b = 0x80; b < 256; b++) if (n.s[b]) return false;
      return true;
    case 'class':
      return true;
    case 'look':
      // `(?-u:\B)` can match between the bytes of a character.
      return n.k !== '\\B';
    case 'cap':
    case 'rep':
      return alwaysUtf8(n.sub);
    case 'seq':
    case 'alt':
      return n.items.every(alwaysUtf8);
  }
}

/** Does every match start at the start of the text (`\A`, `^` without `(?m)`)? */
function anchoredStart(n: RegexNode): boolean {
  switch (n.t) {
    case 'look':
      return n.k === '\\A';
    case 'cap':
      return anchoredStart(n.sub);
    case 'rep':
      return n.min > 0 && anchoredStart(n.sub);
    case 'alt':
      return n.items.length > 0 && n.items.every(anchoredStart);
    case 'seq': {
      // Leading assertions may come before the anchor.
      for (const item of n.items) {
        if (anchoredStart(item)) return true;
        if (!allAssertions(item)) return false;
      }
      return false;
    }
    default:
      return false;
  }
}

function allAssertions(n: RegexNode): boolean {
  switch (n.t) {
    case 'look':
      return true;
    case 'cap':
    case 'rep':
      return allAssertions(n.sub);
    case 'seq':
    case 'alt':
      return n.items.every(allAssertions);
    default:
      return false;
  }
}

// ---------------------------------------------------------------------------------------
// UTF-8 sequences of a code point range, split as the engine's `Utf8Sequences` splits them

/** Appends the UTF-8 sequences of scalar values lo..hi (no surrogates inside) to `out`, in order. */
export function utf8Sequences(lo: number, hi: number, out: Utf8Seqs): void {
  // As the engine's iterator: take a range, split off its upper part onto the stack until
  // the rest encodes as one sequence of byte ranges, emit it, take the next.
  const stack = [lo, hi];
  while (stack.length > 0) {
    let end = stack.pop()!;
    const start = stack.pop()!;
    split: for (;;) {
      // Where the encoded length changes.
      for (const max of ENCODED_MAX) {
        if (start <= max && end > max) {
          stack.push(max + 1, end);
          end = max;
          continue split;
        }
      }
      if (end <= 0x7f) break;
      // Until every continuation byte spans its full range or the ranges align.
      for (let i = 1; i < 4; i++) {
        const m = (1 << (6 * i)) - 1;
        if ((start & ~m) !== (end & ~m)) {
          if ((start & m) !== 0) {
            stack.push((start | m) + 1, end);
            end = start | m;
            continue split;
          }
          if ((end & m) !== m) {
            stack.push(end & ~m, end);
            end = (end & ~m) - 1;
            continue split;
          }
        }
      }
      break;
    }
    pushEncoded(start, end, out);
  }
}

const ENCODED_MAX = [0x7f, 0x7ff, 0xffff] as const;

/** Appends the sequence of `start`..`end` (one encoded length): the bytes of each, paired. */
function pushEncoded(start: number, end: number, out: Utf8Seqs): void {
  const d = out.data;
  out.count++;
  if (end <= 0x7f) d.push(1, start, end);
  else if (end <= 0x7ff) d.push(2, 0xc0 | (start >> 6), 0xc0 | (end >> 6), 0x80 | (start & 0x3f), 0x80 | (end & 0x3f));
  else if (end <= 0xffff) {
    d.push(3, 0xe0 | (start >> 12), 0xe0 | (end >> 12), 0x80 | ((start >> 6) & 0x3f), 0x80 | ((end >> 6) & 0x3f), 0x80 | (start & 0x3f), 0x80 | (end & 0x3f));
  } else {
    d.push(4, 0xf0 | (start >> 18), 0xf0 | (end >> 18), 0x80 | ((start >> 12) & 0x3f), 0x80 | ((end >> 12) & 0x3f));
    d.push(0x80 | ((start >> 6) & 0x3f), 0x80 | ((end >> 6) & 0x3f), 0x80 | (start & 0x3f), 0x80 | (end & 0x3f));
  }
}
