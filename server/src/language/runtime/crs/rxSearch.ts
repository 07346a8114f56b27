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
 *   5. after a leading single character `C`, the loops that follow it (each `Y*`, `Y?` or
 *      `Y{0,m}`, then one `X{m,}`, into the alternatives of a group that is not repeated)
 *      lose C: `[Y∖C]*` and `[X∖C]*X{m}`, and a possessive `X{m,}+` (pcre.ts's
 *      `(?=(?<__aN>X{m,}))\k<__aN>`) becomes `[X∖C]*X{m}(?!X)`. If the original matches
 *      from a C at i, the same path matches from the last C before the loops' last m
 *      characters (a possessive loop ends where the run of X ends from either start), and
 *      no C lies between that start and them: on a run of quotes each start then fails at
 *      once instead of scanning to the end of the run.
 *   and anywhere outside look-arounds:
 *   4. `C{m,}` next to `Y*` (either side, greedy or lazy) with Y ⊆ C is `C{m,}`: the same
 *      strings; and `X{m,}` next to `Y*` with X ⊆ Y is `X{m}` next to `Y*`.
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
  const q = min === max ? `{${min}}` : min === 0 && max === 1 ? '?' : max === Infinity ? (min === 0 ? '*' : min === 1 ? '+' : `{${min},}`) : `{${min},${max}}`;
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
    const p = prev as { min: number; node: Node };
    const q = n as { min: number; node: Node };
    if (a && b && q.min === 0 && p.min >= 1 && subset(a, b)) out[out.length - 1] = withQ(p.node, p.min, p.min); // X{m,} Y* -> X{m} Y*
    if (a && b && p.min === 0 && q.min >= 1 && subset(b, a)) {
      out.push(withQ(q.node, q.min, q.min)); // Y* X{m,} -> Y* X{m}
      continue;
    }
    if (a && b && p.min === 0 && q.min >= 1 && intersects(a, b)) {
      // Y* X{m,} -> (?:Y*[Y∖X])?X{m,}: Y* ends where the last character outside X is
      out[out.length - 1] = { t: 'group', open: '(?:', body: [[prev, setNode(minus(a, b))]] };
      out.push(withQ(out[out.length - 1], 0, 1), n);
      out.splice(out.length - 3, 1);
      continue;
    }
    if (a && p.min === 0 && n.t === 'group' && n.open === '(?:' && n.body.some((alt) => overlapsHead(a, alt[0]))) {
      out[out.length - 1] = { ...n, body: n.body.map((alt) => mergeLoops([prev, ...alt])) }; // Y*(?:A|B) -> (?:Y*A|Y*B)
      continue;
    }
    out.push(n);
  }
  return out;
}

/** True when `head` is a loop `X{m,}` (m ≥ 1) over a class that shares characters with `y` without being a subset of it. */
const overlapsHead = (y: Uint8Array, head: Node | undefined): boolean =>
  head?.t === 'quant' && head.min >= 1 && head.max === Infinity && head.node.t === 'set' && intersects(y, head.node.set) && !subset(y, head.node.set) && !subset(head.node.set, y);

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
  // 6. after two leading characters C1 C2, a loop over everything C1 is in stops before the next C1 C2
  const pair = head.t === 'set' && rest[0]?.t === 'set' ? afterPair(head.set, rest[0].set, rest[1]) : undefined;
  if (pair) return [head, rest[0], pair, ...rest.slice(2)];
  // 5. after a single leading character C, the following loops lose C
  if (headSet && head.t === 'set') return [head, ...lastStart(rest, headSet, backrefs)];
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

const intersects = (a: Uint8Array, b: Uint8Array): boolean => a.some((x, c) => x === 1 && b[c] === 1);
const minus = (a: Uint8Array, b: Uint8Array): Uint8Array => a.map((x, c) => (x === 1 && b[c] === 0 ? 1 : 0));

/** A class for a byte set: `[\x41-\x5a…]`. */
function setNode(set: Uint8Array): Node {
  let src = '';
  for (let c = 0; c < 256; c++) {
    if (!set[c]) continue;
    let e = c;
    while (e < 255 && set[e + 1]) e++;
    const hex = (x: number): string => '\\x' + x.toString(16).padStart(2, '0');
    src += e === c ? hex(c) : e === c + 1 ? hex(c) + hex(e) : `${hex(c)}-${hex(e)}`;
    c = e;
  }
  return { t: 'set', src: `[${src}]`, set };
}

/** A loop's own quantifier suffix kept lazy when it was (`*?`), for readability only: the answer is the same. */
const lazy = (q: string): string => (q.endsWith('?') && q.length > 1 ? '?' : '');

/** pcre.ts's possessive `X{m,}+`: `(?=(?<__aN>X{m,}))` followed by `\k<__aN>`, as [X, m]. */
function possessive(look: Node, next: Node | undefined): { x: Uint8Array; min: number } | undefined {
  if (look.t !== 'group' || look.open !== '(?=' || look.body.length !== 1 || look.body[0].length !== 1) return undefined;
  const g = look.body[0][0];
  const name = g.t === 'group' ? /^\(\?<(__a\d+)>$/.exec(g.open)?.[1] : undefined;
  if (!name || g.t !== 'group' || g.body.length !== 1 || g.body[0].length !== 1) return undefined;
  const loop = g.body[0][0];
  if (loop.t !== 'quant' || loop.max !== Infinity || loop.node.t !== 'set' || next?.t !== 'backref' || next.src !== `\\k<${name}>`) return undefined;
  return { x: loop.node.set, min: loop.min };
}

/**
 * Rule 6: `C1 C2 X*` (C1 ⊆ X, C1 and C2 disjoint) → `C1 C2 (?:[X∖C1]|C1+[X∖(C1∪C2)])*C1*`, the
 * strings of X* in which no C1 is followed by a C2. From the last C1 C2 before the loop's end
 * the rest of the original match is such a string; on `<a <a <a …` each start then scans to
 * the next `<a` instead of to the end.
 */
function afterPair(c1: Uint8Array, c2: Uint8Array, loop: Node | undefined): Node | undefined {
  if (loop?.t !== 'quant' || loop.min !== 0 || loop.max !== Infinity || loop.node.t !== 'set' || intersects(c1, c2) || !subset(c1, loop.node.set)) return undefined;
  const x = loop.node.set;
  const lone = minus(x, c1);
  const after = minus(lone, c2);
  const c1Node = setNode(c1);
  const body: Node[][] = [[setNode(lone)], ...(after.some((b) => b === 1) ? [[withQ(c1Node, 1, Infinity), setNode(after)]] : [])];
  return { t: 'group', open: '(?:', body: [[withQ({ t: 'group', open: '(?:', body }, 0, Infinity), withQ(c1Node, 0, Infinity)]] };
}

/** Rule 5 on what follows a leading single character `c`. */
function lastStart(seq: readonly Node[], c: Uint8Array, backrefs: boolean): Node[] {
  const out: Node[] = [];
  for (let i = 0; i < seq.length; i++) {
    const n = seq[i];
    const rest = seq.slice(i + 1);
    if (n.t === 'quant' && n.node.t === 'set' && intersects(n.node.set, c)) {
      const y = minus(n.node.set, c);
      const free = y.some((b) => b === 1) ? [withQ(setNode(y), 0, n.min === 0 ? n.max : Infinity)] : [];
      if (free.length > 0 && free[0].t === 'quant') free[0] = { ...free[0], q: free[0].q + lazy(n.q) };
      if (n.min === 0) {
        out.push(...free);
        continue;
      }
      if (n.max !== Infinity) return [...out, ...seq.slice(i)];
      return [...out, ...free, withQ(n.node, n.min, n.min), ...rest];
    }
    if (n.t === 'quant' && n.min === 0 && n.node.t === 'set') {
      out.push(n); // a loop that cannot take c: its characters are not c anyway
      continue;
    }
    const poss = possessive(n, seq[i + 1]);
    if (poss && intersects(poss.x, c)) {
      const y = minus(poss.x, c);
      const free = y.some((b) => b === 1) ? [withQ(setNode(y), 0, Infinity)] : [];
      const end: Node = { t: 'group', open: '(?!', body: [[setNode(poss.x)]] };
      return [...out, ...free, withQ(setNode(poss.x), poss.min, poss.min), end, ...seq.slice(i + 2)];
    }
    if (n.t === 'group' && (n.open === '(?:' || (isCapture(n.open) && !backrefs))) return [...out, { ...n, body: n.body.map((a) => lastStart(a, c, backrefs)) }, ...rest];
    return [...out, ...seq.slice(i)];
  }
  return out;
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
