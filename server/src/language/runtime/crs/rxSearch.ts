/**
 * `@rx` only answers "does the pattern match somewhere in the value?" (no rule reads its
 * captures: the converter leaves out or folds every rule that passes TX:0..9 on). Two
 * things make that question cheaper on long values, from the translated JavaScript source
 * (pcre.ts's output) without changing the answer:
 *
 * - Search-equivalent rewrites (`searchRewrite`). irregexp tries every start position and
 *   runs a single-class loop to its end from each, so a loop the value's run matches costs
 *   O(n) per start, O(n²) per value. In an unanchored pattern:
 *   1. a leading `X*` / `X*?` / `X{0,m}` is dropped (if `X* R` matches at p, `R` matches
 *      at the end of the loop);
 *   2. a leading `X+` / `X{n,}` / `X{n,m}` becomes `X{n}` (the last n copies are there);
 *   3. after a leading single-character `C` or `C{n}`, a loop `Y*` over a class Y ⊆ C is
 *      dropped and `Y+` becomes `Y` (the last n characters before the rest are all in C);
 *   and anywhere outside look-arounds:
 *   4. `C{m,}` next to `Y*` (either side, greedy or lazy) with Y ⊆ C is `C{m,}`: the same
 *      strings.
 *   Rules 1–3 look inside a leading group only when it is not repeated; none touches a loop
 *   holding a capture group or back-reference, nor anything inside a capture group that a
 *   back-reference reads.
 * - A required-literal prefilter (`requiredFactors`): up to three sets of strings such that
 *   every match contains a string of each (ASCII letters folded to lower case, so it is
 *   sound for case-sensitive and case-insensitive parts alike). A value missing a set
 *   cannot match, and is answered without running the regex.
 */

type Node =
  | { t: 'set'; src: string; set: Uint8Array } // one character: a literal, class or escape
  | { t: 'assert'; src: string } // ^ $ \b \B
  | { t: 'backref'; src: string }
  | { t: 'group'; open: string; body: Node[][] } // open: '(' '(?:' '(?=' '(?!' '(?<=' '(?<!' '(?<name>'
  | { t: 'quant'; node: Node; min: number; max: number; q: string };

const SPACE = [9, 10, 11, 12, 13, 32, 0xa0];
const fill = (pred: (c: number) => boolean): Uint8Array => {
  const s = new Uint8Array(256);
  for (let c = 0; c < 256; c++) s[c] = pred(c) ? 1 : 0;
  return s;
};
const DIGIT = fill((c) => c >= 48 && c <= 57);
const WORD = fill((c) => (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95);
const SPACES = fill((c) => SPACE.includes(c));
const invert = (s: Uint8Array): Uint8Array => s.map((b) => 1 - b);
const SHORTHAND: Readonly<Record<string, Uint8Array>> = { d: DIGIT, w: WORD, s: SPACES, D: invert(DIGIT), W: invert(WORD), S: invert(SPACES) };
const CONTROL: Readonly<Record<string, number>> = { t: 9, n: 10, v: 11, f: 12, r: 13, '0': 0 };

class Unparsable extends Error {}

/** Parses the translated source (the dialect pcre.ts writes: no `u` flag). */
class Parser {
  i = 0;
  constructor(private readonly p: string) {}

  alternatives(): Node[][] {
    const alts: Node[][] = [[]];
    while (this.i < this.p.length && this.p[this.i] !== ')') {
      if (this.p[this.i] === '|') {
        this.i++;
        alts.push([]);
        continue;
      }
      const atom = this.atom();
      alts[alts.length - 1].push(this.quantified(atom));
    }
    return alts;
  }

  private quantified(atom: Node): Node {
    const m = /^(?:\*|\+|\?|\{(\d+)(?:(,)(\d*))?\})\??/.exec(this.p.slice(this.i));
    if (!m) return atom;
    this.i += m[0].length;
    const c = m[0][0];
    const [min, max] = c === '*' ? [0, Infinity] : c === '+' ? [1, Infinity] : c === '?' ? [0, 1] : [Number(m[1]), m[2] ? (m[3] ? Number(m[3]) : Infinity) : Number(m[1])];
    return { t: 'quant', node: atom, min, max, q: m[0] };
  }

  private atom(): Node {
    const p = this.p;
    const c = p[this.i];
    if (c === '(') {
      const m = /^\((?:\?(?::|=|!|<=|<!|<[A-Za-z_]\w*>))?/.exec(p.slice(this.i))!;
      this.i += m[0].length;
      const body = this.alternatives();
      if (p[this.i] !== ')') throw new Unparsable('missing )');
      this.i++;
      return { t: 'group', open: m[0], body };
    }
    if (c === '[') return this.cls();
    if (c === '^' || c === '$') {
      this.i++;
      return { t: 'assert', src: c };
    }
    if (c === '.') throw new Unparsable('bare . (pcre.ts writes classes)');
    if (c === '\\') {
      const e = p[this.i + 1];
      if (e === 'b' || e === 'B') {
        this.i += 2;
        return { t: 'assert', src: '\\' + e };
      }
      let m: RegExpExecArray | null;
      if ((m = /^\\(?:[1-9]\d*|k<\w+>)/.exec(p.slice(this.i)))) {
        this.i += m[0].length;
        return { t: 'backref', src: m[0] };
      }
      const start = this.i;
      const set = new Uint8Array(256);
      this.escapeInto(set);
      return { t: 'set', src: p.slice(start, this.i), set };
    }
    if (c === '*' || c === '+' || c === '?' || c === '|' || c === ')') throw new Unparsable(`unexpected ${c}`);
    this.i++;
    const set = new Uint8Array(256);
    set[c.charCodeAt(0) & 0xff] = 1;
    return { t: 'set', src: c, set };
  }

  /** One escape (outside or inside a class) added to `set`; returns its byte when it is one. */
  private escapeInto(set: Uint8Array): number | undefined {
    const p = this.p;
    const e = p[this.i + 1];
    if (e === undefined) throw new Unparsable('trailing backslash');
    if (Object.hasOwn(SHORTHAND, e)) {
      this.i += 2;
      SHORTHAND[e].forEach((b, c) => (set[c] |= b));
      return undefined;
    }
    let code: number;
    const m = /^x([0-9a-fA-F]{2})/.exec(p.slice(this.i + 1));
    if (m) {
      code = parseInt(m[1], 16);
      this.i += 4;
    } else if (Object.hasOwn(CONTROL, e) && !/[0-9]/.test(p[this.i + 2] ?? '')) {
      code = CONTROL[e];
      this.i += 2;
    } else if (/[A-Za-z0-9]/.test(e)) {
      throw new Unparsable(`escape \\${e}`);
    } else {
      code = e.charCodeAt(0);
      this.i += 2;
    }
    set[code & 0xff] = 1;
    return code & 0xff;
  }

  private cls(): Node {
    const p = this.p;
    const start = this.i++;
    const set = new Uint8Array(256);
    const negated = p[this.i] === '^';
    if (negated) this.i++;
    while (p[this.i] !== ']') {
      if (this.i >= p.length) throw new Unparsable('missing ]');
      const lo = this.classAtom(set);
      if (lo !== undefined && p[this.i] === '-' && p[this.i + 1] !== ']') {
        this.i++;
        const hi = this.classAtom(set);
        if (hi === undefined || hi < lo) throw new Unparsable('bad range');
        for (let c = lo; c <= hi; c++) set[c] = 1;
      }
    }
    this.i++;
    return { t: 'set', src: p.slice(start, this.i), set: negated ? invert(set) : set };
  }

  private classAtom(set: Uint8Array): number | undefined {
    if (this.p[this.i] === '\\') {
      if (this.p[this.i + 1] === 'b') {
        this.i += 2;
        set[8] = 1;
        return 8;
      }
      return this.escapeInto(set);
    }
    const code = this.p.charCodeAt(this.i++) & 0xff;
    set[code] = 1;
    return code;
  }
}

function parse(source: string): Node[][] | undefined {
  try {
    const parser = new Parser(source);
    const alts = parser.alternatives();
    return parser.i === source.length ? alts : undefined;
  } catch (e) {
    if (e instanceof Unparsable) return undefined;
    throw e;
  }
}

const printAlts = (alts: readonly (readonly Node[])[]): string => alts.map((a) => a.map(print).join('')).join('|');
function print(n: Node): string {
  switch (n.t) {
    case 'set':
    case 'assert':
    case 'backref':
      return n.src;
    case 'group':
      return n.open + printAlts(n.body) + ')';
    case 'quant':
      return print(n.node) + n.q;
  }
}

const subset = (a: Uint8Array, b: Uint8Array): boolean => a.every((x, c) => x === 0 || b[c] === 1);
const isCapture = (open: string): boolean => open === '(' || (open.startsWith('(?<') && open !== '(?<=' && open !== '(?<!');
const isLookaround = (open: string): boolean => open === '(?=' || open === '(?!' || open === '(?<=' || open === '(?<!';
const holdsGroupOrBackref = (n: Node): boolean =>
  n.t === 'backref' || (n.t === 'group' && (isCapture(n.open) || n.body.some((a) => a.some(holdsGroupOrBackref)))) || (n.t === 'quant' && holdsGroupOrBackref(n.node));
const setOf = (n: Node): Uint8Array | undefined => (n.t === 'set' ? n.set : undefined);
const withQ = (node: Node, min: number, max: number): Node => {
  if (min === 1 && max === 1) return node;
  const q = min === max ? `{${min}}` : max === Infinity ? (min === 0 ? '*' : min === 1 ? '+' : `{${min},}`) : `{${min},${max}}`;
  return { t: 'quant', node, min, max, q };
};

/** Rule 4 on one sequence: `C{m,}` next to `Y*` with Y ⊆ C keeps only `C{m,}`. */
function mergeLoops(seq: Node[]): Node[] {
  const out: Node[] = [];
  for (const n of seq) {
    const prev = out[out.length - 1];
    const loopSet = (x: Node | undefined, min0: boolean): Uint8Array | undefined =>
      x?.t === 'quant' && x.max === Infinity && (!min0 || x.min === 0) ? setOf(x.node) : undefined;
    const a = loopSet(prev, false);
    const b = loopSet(n, false);
    if (a && b && (n as { min: number }).min === 0 && subset(b, a)) continue; // C{m,} Y* -> C{m,}
    if (a && b && (prev as { min: number }).min === 0 && subset(a, b)) {
      out[out.length - 1] = n; // Y* C{m,} -> C{m,}
      continue;
    }
    out.push(n);
  }
  return out;
}

/** Rules 4 everywhere outside look-arounds. */
function mergeEverywhere(alts: Node[][]): Node[][] {
  return alts.map((seq) =>
    mergeLoops(
      seq.map((n): Node => {
        if (n.t === 'group' && !isLookaround(n.open)) return { ...n, body: mergeEverywhere(n.body) };
        if (n.t === 'quant' && n.node.t === 'group' && !isLookaround(n.node.open)) return { ...n, node: { ...n.node, body: mergeEverywhere(n.node.body) } };
        return n;
      }),
    ),
  );
}

/** Rules 1–3 on a sequence whose first element starts the match. */
function trimLeading(seq: Node[], backrefs: boolean): Node[] {
  let s = seq;
  // 1. leading optional loops
  while (s.length > 0 && s[0].t === 'quant' && s[0].min === 0 && !holdsGroupOrBackref(s[0])) s = s.slice(1);
  if (s.length === 0) return s;
  const first = s[0];
  if (first.t === 'group' && first.open !== '(?:' && !(isCapture(first.open) && !backrefs)) return s;
  if (first.t === 'group') return [{ ...first, body: first.body.map((a) => trimLeading(a, backrefs)) }, ...s.slice(1)];
  // 2. a leading X{n,…} becomes X{n}
  let head: Node = first;
  let headSet = setOf(first);
  if (first.t === 'quant' && first.min >= 1 && !holdsGroupOrBackref(first.node)) {
    head = withQ(first.node, first.min, first.min);
    headSet = setOf(first.node);
  } else if (first.t === 'quant') return s;
  const rest = s.slice(1);
  // 3. after a leading class C{n}, loops over Y ⊆ C: Y* dropped, Y+ -> Y
  if (headSet) {
    while (rest.length > 0) {
      const r = rest[0];
      const y = r.t === 'quant' && r.max === Infinity ? setOf(r.node) : undefined;
      if (!y || r.t !== 'quant' || r.min > 1 || !subset(y, headSet)) break;
      if (r.min === 0) rest.shift();
      else {
        rest[0] = r.node;
        break;
      }
    }
  }
  return [head, ...rest];
}

/**
 * A pattern source that matches somewhere in exactly the strings `source` matches
 * somewhere in (no `g`/`y` flag), with fewer loops at the start; `source` itself when it
 * cannot be parsed or nothing applies.
 */
export function searchRewrite(source: string): string {
  const alts = parse(source);
  if (!alts) return source;
  const backrefs = /\\(?:[1-9]|k<)/.test(source);
  const merged = mergeEverywhere(alts);
  const out = merged.map((seq) => trimLeading(seq, backrefs));
  return printAlts(out);
}

// ---------------------------------------------------------------------------------------
// Required factors

/** exact: the node's whole language (a small set); required: sets each of which some string of every match is in. */
type Info = { exact?: Set<string>; required?: Set<string>[] };
const MAX_SET = 16;
const lowerByte = (c: number): number => (c >= 65 && c <= 90 ? c + 32 : c);

function setStrings(set: Uint8Array): Set<string> | undefined {
  const out = new Set<string>();
  for (let c = 0; c < 256; c++) if (set[c]) out.add(String.fromCharCode(lowerByte(c)));
  return out.size <= 10 ? out : undefined;
}

const minLen = (s: Set<string>): number => Math.min(...[...s].map((x) => x.length));
const useful = (s: Set<string> | undefined): s is Set<string> => s !== undefined && s.size > 0 && minLen(s) > 0;
/** Sorts factor sets most selective first: longer shortest string, then fewer strings. */
const bySelectivity = (a: Set<string>, b: Set<string>): number => minLen(b) - minLen(a) || a.size - b.size;
const cross = (a: Set<string>, b: Set<string>): Set<string> | undefined => {
  if (a.size * b.size > MAX_SET) return undefined;
  const out = new Set<string>();
  for (const x of a) for (const y of b) out.add(x + y);
  return out;
};
const factorsOf = (i: Info): Set<string>[] => (useful(i.exact) ? [i.exact] : (i.required ?? []));

function seqInfo(seq: readonly Node[]): Info {
  let run: Set<string> = new Set(['']);
  const all: Set<string>[] = [];
  let exact = true;
  for (const n of seq) {
    const info = nodeInfo(n);
    const joined = info.exact ? cross(run, info.exact) : undefined;
    if (joined) {
      run = joined;
      continue;
    }
    // The run ends here: it and this element's factors are all required.
    if (useful(run)) all.push(run);
    if (!info.exact) all.push(...factorsOf(info));
    exact = false;
    run = info.exact ?? new Set(['']);
  }
  if (exact) return { exact: run };
  if (useful(run)) all.push(run);
  return { required: all.sort(bySelectivity) };
}

function altsInfo(alts: readonly (readonly Node[])[]): Info {
  const infos = alts.map(seqInfo);
  if (infos.length === 1) return infos[0];
  if (infos.every((i) => i.exact)) {
    const all = new Set(infos.flatMap((i) => [...i.exact!]));
    if (all.size <= MAX_SET) return { exact: all };
  }
  // One string of one alternative's best set is in every match.
  const req = new Set<string>();
  for (const i of infos) {
    const best = factorsOf(i)[0];
    if (!best) return {};
    for (const x of best) req.add(x);
  }
  return req.size <= 4 * MAX_SET ? { required: [req] } : {};
}

function nodeInfo(n: Node): Info {
  switch (n.t) {
    case 'set': {
      const s = setStrings(n.set);
      return s ? { exact: s } : {};
    }
    case 'assert':
      return { exact: new Set(['']) };
    case 'backref':
      return {};
    case 'group':
      return isLookaround(n.open) ? { exact: new Set(['']) } : altsInfo(n.body);
    case 'quant': {
      const inner = nodeInfo(n.node);
      if (n.min === 0) return {};
      if (n.min === 1 && n.max === 1) return inner;
      return { required: factorsOf(inner) };
    }
  }
}

/** At most this many factor sets are checked (the most selective ones). */
const MAX_CHECKS = 3;

/**
 * Sets of strings (ASCII letters in lower case), each of which every match of `source`
 * contains one string of, most selective first; undefined when there is none.
 */
export function requiredFactors(source: string): readonly (readonly string[])[] | undefined {
  const alts = parse(source);
  if (!alts) return undefined;
  const sets = factorsOf(altsInfo(alts)).slice(0, MAX_CHECKS);
  return sets.length > 0 ? sets.map((s) => [...s]) : undefined;
}

/** A case-folding test for "contains one string of each set" (letters as `[xX]`, the rest as `\\xhh`). */
export function factorTest(sets: readonly (readonly string[])[]): (s: string) => boolean {
  const tests = sets.map(oneOf);
  return (s) => tests.every((t) => t(s));
}

function oneOf(factors: readonly string[]): (s: string) => boolean {
  const lit = (f: string): string =>
    [...f].map((ch) => {
      const c = ch.charCodeAt(0);
      if (c >= 97 && c <= 122) return `[${ch}${ch.toUpperCase()}]`;
      return '\\x' + c.toString(16).padStart(2, '0');
    }).join('');
  const re = new RegExp(factors.map(lit).join('|'));
  return (s) => re.test(s);
}
