/**
 * Seeded, deterministic generation of inputs for the differential tests:
 *
 *   (a) valid filter expressions over a pool of fields both engines know — every operator
 *       and type combination, both operator notations, sets of ints / ranges / IPs / CIDRs /
 *       strings / hex bytes, not / and / xor / or with parentheses, integer literal forms,
 *       strings with escapes, regexes (RE2-safe), wildcard patterns, raw strings, map keys,
 *       `[*]`, `any` / `all` and the functions both schemes have;
 *   (b) mutations of valid expressions (mostly invalid inputs);
 *   (c) field values for evaluation, steered by the literals each expression used so that
 *       comparisons both hit and miss.
 *
 * Everything derives from one seed through a small PRNG (mulberry32); no Math.random.
 */
import type { FieldType } from './wirefilter';

// ---------------------------------------------------------------------------------------
// PRNG

export class Rng {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** mulberry32: a uniform float in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** An integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  /** An integer in [lo, hi]. */
  range(lo: number, hi: number): number {
    return lo + this.int(hi - lo + 1);
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error('pick from an empty list');
    return items[this.int(items.length)];
  }

  /** Picks by weight: `[[weight, value], …]`. */
  weighted<T>(items: ReadonlyArray<readonly [number, T]>): T {
    let total = 0;
    for (const [w] of items) total += w;
    let r = this.next() * total;
    for (const [w, v] of items) {
      r -= w;
      if (r < 0) return v;
    }
    return items[items.length - 1][1];
  }
}

/** Mixes a seed and an index into a new 32-bit seed (for per-case generators). */
export function subSeed(seed: number, index: number): number {
  let h = (seed ^ Math.imul(index + 1, 0x9e3779b1)) >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b) >>> 0;
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35) >>> 0;
  return (h ^ (h >>> 16)) >>> 0;
}

// ---------------------------------------------------------------------------------------
// Cases

export interface PoolField {
  readonly name: string;
  readonly type: FieldType;
}

/**
 * A wish for a field value: "a value at this place would make some comparison of the
 * expression true". `key` is a map key ('*' = any key), `index` an array index ('*' = any).
 */
export interface Hint {
  readonly field: string;
  readonly key?: string;
  readonly index?: number | '*';
  readonly value: string | number | boolean;
}

export interface GeneratedCase {
  readonly index: number;
  readonly expr: string;
  /** 'valid' = built by the grammar (intended to be accepted); 'mutant' = a mutation of one. */
  readonly origin: 'valid' | 'mutant';
  /** The mutation applied, and the expression it was applied to. */
  readonly mutation?: { readonly kind: string; readonly of: string };
  readonly hints: readonly Hint[];
  /** Seed for this case's field values. */
  readonly valueSeed: number;
}

export interface GenerateOptions {
  readonly seed: number;
  readonly count: number;
  readonly pool: readonly PoolField[];
  /** Share of mutants; default 0.3. */
  readonly mutantShare?: number;
}

export function generateCases(options: GenerateOptions): GeneratedCase[] {
  const out: GeneratedCase[] = [];
  const share = options.mutantShare ?? 0.3;
  for (let i = 0; i < options.count; i++) {
    const rng = new Rng(subSeed(options.seed, i));
    const g = new ExprGen(rng, options.pool);
    const expr = g.filter();
    const valueSeed = subSeed(options.seed ^ 0x5bd1e995, i);
    if (rng.chance(share)) {
      const m = mutate(expr, rng);
      out.push({ index: i, expr: m.expr, origin: 'mutant', mutation: { kind: m.kind, of: expr }, hints: g.hints, valueSeed });
    } else {
      out.push({ index: i, expr, origin: 'valid', hints: g.hints, valueSeed });
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------
// Literal material

const BASE_STRINGS: readonly string[] = [
  '',
  'a',
  'A',
  'ab',
  'abc',
  'aBc',
  'GET',
  'POST',
  'get',
  '/admin',
  '/Admin/login',
  '/api/v1/users',
  'example.com',
  'EXAMPLE.com',
  'www.example.com',
  'x y',
  'é',
  'naïve',
  '%41',
  'a+b',
  'a%20b',
  'a"b',
  'a\\b',
  '*',
  'foo.php',
  'index.html',
  'US',
  'GB',
  'curl/8.0',
  'Mozilla/5.0',
  '123',
  '1.2.3.4',
  'zz',
  'line\nbreak',
  'tab\there',
  '<script>',
  "' or 1=1",
];

const KEYS: readonly string[] = ['a', 'q', 'id', 'x-api-key', 'content-type', 'user-agent', 'session', 'Content-Type', 'é'];

const LIST_NAMES: readonly string[] = ['office', 'cf.open_proxies', 'blocked_asns', 'bad_hosts'];
/** Fields Cloudflare has list types for (IP lists: any Ip field). */
const LISTABLE: readonly string[] = ['ip.src', 'http.host', 'ip.src.asnum', 'http.request.full_uri'];

const ALNUM = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
const PRINTABLE = ALNUM + ' /.-_%+*?:;,=&#@!~"\\\'()[]{}<>|^$';

function randomString(rng: Rng, maxLen = 6, alphabet = PRINTABLE): string {
  let s = '';
  const n = rng.int(maxLen + 1);
  for (let i = 0; i < n; i++) s += alphabet[rng.int(alphabet.length)];
  return s;
}

function someString(rng: Rng): string {
  return rng.chance(0.75) ? rng.pick(BASE_STRINGS) : randomString(rng);
}

/** Flips the case of some ASCII letters (other characters are kept as they are). */
function flipCase(rng: Rng, s: string): string {
  let out = '';
  for (const c of s) {
    const ascii = c.charCodeAt(0) < 0x80;
    out += ascii && rng.chance(0.4) ? (c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase()) : c;
  }
  return out;
}

function utf8Bytes(s: string): number[] {
  return [...Buffer.from(s, 'utf8')];
}

function hex2(rng: Rng, b: number): string {
  const h = b.toString(16).padStart(2, '0');
  return rng.chance(0.5) ? h : h.toUpperCase();
}

/** A quoted string literal for the given text, with random (valid) escapes. */
export function quote(rng: Rng, value: string, escapeRate = 0.15): string {
  let out = '"';
  for (const ch of value) {
    if (ch === '"') out += '\\"';
    else if (ch === '\\') out += '\\\\';
    // Escaped non-ASCII bytes are rare: the wirefilter build under test decodes them
    // differently (a known difference), which makes such cases incomparable.
    else if (rng.chance(ch.charCodeAt(0) < 0x80 ? escapeRate : escapeRate / 8)) {
      const bytes = utf8Bytes(ch);
      const octal = rng.chance(0.35);
      for (const b of bytes) out += octal ? '\\' + b.toString(8).padStart(3, '0') : '\\x' + hex2(rng, b);
    } else out += ch;
  }
  return out + '"';
}

/** A raw string r"…" / r#"…"# (no escapes). */
function rawString(rng: Rng, value: string): string {
  let hashes = value.includes('"') ? 1 : rng.chance(0.3) ? 1 : 0;
  while (value.includes('"' + '#'.repeat(hashes))) hashes++;
  const h = '#'.repeat(hashes);
  return `r${h}"${value}"${h}`;
}

/** Hex bytes `61:62-63`, at least two bytes. */
function hexBytes(rng: Rng, value: string): string | undefined {
  const bytes = utf8Bytes(value);
  if (bytes.length < 2) return undefined;
  return bytes.map((b, i) => (i === 0 ? '' : rng.pick([':', ':', '-', '.'])) + hex2(rng, b)).join('');
}

/** A Bytes literal for `value` in one of the forms valid after eq / contains / in. */
function bytesLiteral(rng: Rng, value: string, allowHex = true): string {
  const r = rng.next();
  if (allowHex && r < 0.1) {
    const h = hexBytes(rng, value);
    if (h) return h;
  }
  if (r > 0.985 && !value.includes('\n')) return rawString(rng, value);
  return quote(rng, value);
}

const INT32_MIN = -0x80000000;
const INT32_MAX = 0x7fffffff;

/** An integer literal: decimal, negative, hex (0x…) or octal (0…). */
function intLiteral(rng: Rng, v: number): string {
  if (v < 0) return '-' + String(-v);
  if (v === 0) return '0';
  const r = rng.next();
  if (r < 0.12) return '0x' + (rng.chance(0.5) ? v.toString(16) : v.toString(16).toUpperCase());
  if (r < 0.22) return '0' + v.toString(8);
  return String(v);
}

const INTERESTING_INTS: readonly number[] = [0, 1, 2, 3, 5, 7, 8, 10, 16, 30, 50, 80, 99, 100, 255, 443, 1000, 8080, 13335, 65535, -1, -5, INT32_MAX, INT32_MIN];

function someInt(rng: Rng): number {
  return rng.chance(0.7) ? rng.pick(INTERESTING_INTS) : rng.range(-20, 200);
}

/** Int literals beyond this engine build's 32 bits (but within i64), rarely. */
const WIDE_INTS: readonly string[] = ['2147483648', '-2147483649', '4294967296', '9007199254740993', '-9223372036854775808', '0x100000000', '9223372036854775807'];

// IPs

type IpText = string;

const IPV4_SAMPLES: readonly IpText[] = ['192.0.2.1', '192.0.2.77', '198.51.100.7', '203.0.113.255', '10.0.0.1', '10.1.2.3', '127.0.0.1', '0.0.0.0', '255.255.255.255', '1.2.3.4'];
const IPV6_SAMPLES: readonly IpText[] = ['2001:db8::1', '2001:db8::ff', '2001:db8:1::', '::1', '::', 'fe80::1', '2606:4700:4700::1111', '::ffff:192.0.2.1', '2001:DB8:0:0:0:0:0:2'];

function v4ToInt(ip: string): number {
  return ip.split('.').reduce((a, p) => a * 256 + Number(p), 0);
}

function intToV4(n: number): string {
  return [24, 16, 8, 0].map((s) => Math.floor(n / 2 ** s) % 256).join('.');
}

function expandV6(ip: string): number[] {
  // Returns 8 groups; accepts :: and embedded IPv4.
  let text = ip;
  const groups: number[] = [];
  const m = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  let tailV4: number[] = [];
  if (m) {
    const n = v4ToInt(m[1]);
    tailV4 = [Math.floor(n / 65536), n % 65536];
    text = text.slice(0, -m[1].length) + '0:0';
  }
  const [head, tail] = text.includes('::') ? text.split('::') : [text, undefined];
  const h = head ? head.split(':').map((x) => parseInt(x, 16)) : [];
  const t = tail !== undefined && tail !== '' ? tail.split(':').map((x) => parseInt(x, 16)) : [];
  const fill = tail === undefined ? [] : new Array<number>(8 - h.length - t.length).fill(0);
  groups.push(...h, ...fill, ...t);
  if (tailV4.length) groups.splice(6, 2, ...tailV4);
  return groups;
}

function groupsToV6(g: readonly number[]): string {
  return g.map((x) => x.toString(16)).join(':');
}

/** A CIDR with the host bits cleared, and an address inside it. */
function cidrOf(rng: Rng, ip: IpText): { cidr: string; inside: IpText } {
  if (ip.includes(':')) {
    const g = expandV6(ip);
    const len = rng.pick([0, 16, 32, 48, 64, 96, 112, 120, 128]);
    const masked = g.map((x, i) => {
      const bits = Math.max(0, Math.min(16, len - 16 * i));
      return bits === 0 ? 0 : x & (0xffff << (16 - bits)) & 0xffff;
    });
    const inside = masked.map((x, i) => {
      const bits = Math.max(0, Math.min(16, len - 16 * i));
      return bits === 16 ? x : x | (rng.int(0x10000) & (0xffff >> bits));
    });
    return { cidr: `${groupsToV6(masked)}/${len}`, inside: groupsToV6(inside) };
  }
  const n = v4ToInt(ip);
  const len = rng.pick([0, 8, 16, 24, 24, 28, 31, 32]);
  const size = 2 ** (32 - len);
  const base = Math.floor(n / size) * size;
  return { cidr: `${intToV4(base)}/${len}`, inside: intToV4(base + rng.int(size)) };
}

/** An inclusive range a..b of one family, and an address inside it. */
function ipRangeOf(rng: Rng, ip: IpText): { range: string; inside: IpText } {
  if (ip.includes(':')) {
    const g = expandV6(ip);
    const hi = [...g];
    hi[7] = Math.min(0xffff, g[7] + rng.int(300));
    const mid = [...g];
    mid[7] = g[7] + rng.int(hi[7] - g[7] + 1);
    return { range: `${groupsToV6(g)}..${groupsToV6(hi)}`, inside: groupsToV6(mid) };
  }
  const n = v4ToInt(ip);
  const hi = Math.min(0xffffffff, n + rng.int(600));
  return { range: `${intToV4(n)}..${intToV4(hi)}`, inside: intToV4(n + rng.int(hi - n + 1)) };
}

function someIp(rng: Rng): IpText {
  return rng.chance(0.65) ? rng.pick(IPV4_SAMPLES) : rng.pick(IPV6_SAMPLES);
}

/** A nearby address of the same family (to miss a literal narrowly). */
function nearIp(rng: Rng, ip: IpText): IpText {
  if (ip.includes(':')) {
    const g = expandV6(ip);
    g[7] = (g[7] + rng.pick([1, 0xffff])) & 0xffff;
    return groupsToV6(g);
  }
  return intToV4((v4ToInt(ip) + rng.pick([1, 255, 4294967295])) % 4294967296);
}

// Regexes: a pattern (as written between the quotes, regex-literal lexing) and a sample
// string it matches.

function regexAtom(rng: Rng, depth: number): { src: string; sample: () => string } {
  const r = rng.next();
  if (r < 0.45) {
    const c = rng.pick([...'abcxyz019/_-=AB']);
    return { src: c, sample: () => c };
  }
  if (r < 0.52) {
    const c = rng.pick(['.', '+', '?', '(', ')', '[', '{', '*', '|', '$', '^']);
    return { src: '\\' + c, sample: () => c };
  }
  if (r < 0.6) return { src: '.', sample: () => rng.pick([...'aZ5./ ']) };
  if (r < 0.67) return { src: '\\d', sample: () => String(rng.int(10)) };
  if (r < 0.72) return { src: '\\w', sample: () => rng.pick([...'aZ_9']) };
  if (r < 0.75) return { src: '\\s', sample: () => ' ' };
  if (r < 0.83) {
    const lo = rng.pick(['a', 'A', '0']);
    const hi = String.fromCharCode(lo.charCodeAt(0) + rng.range(1, 5));
    const neg = rng.chance(0.2);
    if (neg) return { src: `[^${lo}-${hi}]`, sample: () => rng.pick(['/', '.', '-', ' ']) };
    return { src: `[${lo}-${hi}]`, sample: () => String.fromCharCode(lo.charCodeAt(0) + rng.int(hi.charCodeAt(0) - lo.charCodeAt(0) + 1)) };
  }
  if (r < 0.86) return { src: '\\"', sample: () => '"' };
  if (depth < 2) {
    const alts = [regexSeq(rng, depth + 1, 3), regexSeq(rng, depth + 1, 3)];
    return { src: `(${alts.map((a) => a.src).join('|')})`, sample: () => rng.pick(alts).sample() };
  }
  return { src: 'x', sample: () => 'x' };
}

function regexSeq(rng: Rng, depth: number, maxAtoms: number): { src: string; sample: () => string } {
  const atoms: { src: string; sample: () => string }[] = [];
  const n = rng.range(1, maxAtoms);
  for (let i = 0; i < n; i++) {
    const a = regexAtom(rng, depth);
    const q = rng.next();
    if (q < 0.1) atoms.push({ src: a.src + '*', sample: () => a.sample().repeat(rng.int(3)) });
    else if (q < 0.18) atoms.push({ src: a.src + '+', sample: () => a.sample().repeat(rng.range(1, 2)) });
    else if (q < 0.24) atoms.push({ src: a.src + '?', sample: () => (rng.chance(0.5) ? a.sample() : '') });
    else if (q < 0.28) atoms.push({ src: a.src + '{1,2}', sample: () => a.sample().repeat(rng.range(1, 2)) });
    else atoms.push(a);
  }
  return { src: atoms.map((a) => a.src).join(''), sample: () => atoms.map((a) => a.sample()).join('') };
}

function regex(rng: Rng): { src: string; sample: () => string } {
  const body = regexSeq(rng, 0, 4);
  const ci = rng.chance(0.12);
  const start = rng.chance(0.25);
  const end = rng.chance(0.2);
  const src = (ci ? '(?i)' : '') + (start ? '^' : '') + body.src + (end ? '$' : '');
  return {
    src,
    sample: () => {
      let s = body.sample();
      if (ci) s = flipCase(rng, s);
      if (!start && rng.chance(0.5)) s = randomString(rng, 3, ALNUM) + s;
      if (!end && rng.chance(0.5)) s = s + randomString(rng, 3, ALNUM);
      return s;
    },
  };
}

// Wildcard patterns: a pattern value (before string quoting) and a sample it matches.
function wildcardPattern(rng: Rng, strict: boolean): { pattern: string; sample: () => string } {
  const parts: { text: string; sample: () => string }[] = [];
  const n = rng.range(1, 4);
  let lastStar = false;
  for (let i = 0; i < n; i++) {
    if (!lastStar && rng.chance(0.4)) {
      parts.push({ text: '*', sample: () => randomString(rng, 3, ALNUM + '/.') });
      lastStar = true;
      continue;
    }
    lastStar = false;
    if (rng.chance(0.08)) {
      parts.push({ text: '\\*', sample: () => '*' });
      continue;
    }
    const lit = rng.pick(['a', 'ab', '/admin', '.php', 'EXAMPLE', 'com', 'x-', 'é', '?']);
    parts.push({ text: lit, sample: () => lit });
  }
  return {
    pattern: parts.map((p) => p.text).join(''),
    sample: () => {
      const s = parts.map((p) => p.sample()).join('');
      return strict ? s : flipCase(rng, s);
    },
  };
}

// ---------------------------------------------------------------------------------------
// Expression generator

/** A Bytes-valued left-hand side and how to steer its field values. */
interface BytesLhs {
  readonly text: string;
  /** Records hints making the LHS evaluate to `wanted` (when it can). */
  readonly want: (wanted: string) => void;
  /** True when the LHS contains an unresolved `[*]` (type Array<…> element-wise). */
  readonly each: boolean;
}

interface IntLhs {
  readonly text: string;
  readonly want: (wanted: number) => void;
  readonly each: boolean;
}

const EQ_OPS: ReadonlyArray<readonly [string, string]> = [
  ['eq', '=='],
  ['ne', '!='],
  ['lt', '<'],
  ['le', '<='],
  ['gt', '>'],
  ['ge', '>='],
];

class ExprGen {
  readonly hints: Hint[] = [];
  private budget = 6;
  /**
   * Set while generating the operands of an element-wise and/or/xor: those zip two
   * arrays position by position, and `m[*]` lists a map's values in an unspecified order
   * (wirefilter's differs from run to run), so zipped operands avoid `m[*]`.
   */
  private noMapEach = false;

  constructor(
    private readonly rng: Rng,
    private readonly pool: readonly PoolField[],
  ) {}

  private fieldsOf(type: FieldType): PoolField[] {
    return this.pool.filter((f) => f.type === type);
  }

  private has(type: FieldType): boolean {
    return this.pool.some((f) => f.type === type);
  }

  /** Whitespace between tokens that need a separator. */
  private ws(): string {
    return this.rng.weighted([
      [88, ' '],
      [4, '  '],
      [4, '\n'],
      [2, '\r\n'],
      [2, ' \n  '],
    ]);
  }

  /** Whitespace where tokens are self-delimiting (may be empty). */
  private opt(): string {
    return this.rng.chance(0.25) ? '' : this.ws();
  }

  private hint(h: Hint): void {
    if (this.hints.length < 200) this.hints.push(h);
  }

  filter(): string {
    const e = this.logical(2);
    if (this.rng.chance(0.03)) return this.rng.pick([' ', '\n', '\t']) + e + this.rng.pick([' ', '\n', '\t', '\r\n']);
    return e;
  }

  private logical(depth: number): string {
    const n = this.budget > 0 ? this.rng.weighted([
      [40, 1],
      [35, 2],
      [17, 3],
      [8, 4],
    ]) : 1;
    let out = this.simple(depth);
    for (let i = 1; i < n; i++) {
      const [word, sym] = this.rng.pick([
        ['and', '&&'],
        ['and', '&&'],
        ['or', '||'],
        ['or', '||'],
        ['xor', '^^'],
      ] as const);
      const right = this.simple(depth);
      const tightLeft = /["})\]]$/.test(out);
      if (this.rng.chance(0.3)) {
        // C-like notation: separators optional next to the symbol, except after a bare
        // literal (an integer or IP would swallow nothing, but keep it readable).
        out += (tightLeft ? this.opt() : this.ws()) + sym + this.opt() + right;
      } else if (this.rng.chance(0.03) && tightLeft) {
        // The engine matches keywords as prefixes: `"a"and ssl`, `ssl andssl`.
        out += word + (this.rng.chance(0.5) ? '' : this.ws()) + right;
      } else {
        out += this.ws() + word + (right.startsWith('(') && this.rng.chance(0.3) ? '' : this.ws()) + right;
      }
    }
    return out;
  }

  private simple(depth: number): string {
    this.budget--;
    const r = this.rng.next();
    if (depth > 0 && r < 0.12) return '(' + this.opt() + this.logical(depth - 1) + this.opt() + ')';
    if (r < 0.22) {
      const inner = this.simple(depth);
      const tok = this.rng.chance(0.6) ? 'not' : '!';
      if (tok === '!') return '!' + (this.rng.chance(0.5) ? '' : this.ws()) + inner;
      return 'not' + (inner.startsWith('(') && this.rng.chance(0.5) ? '' : this.ws()) + inner;
    }
    return this.comparison();
  }

  private comparison(): string {
    const rng = this.rng;
    const choices: Array<readonly [number, () => string]> = [];
    if (this.has('Bytes')) choices.push([34, () => this.bytesComparison(this.bytesLhs(false))]);
    if (this.has('Int')) choices.push([14, () => this.intComparison(this.intLhs(false))]);
    if (this.has('Ip')) choices.push([12, () => this.ipComparison()]);
    if (this.has('Bool')) choices.push([7, () => rng.pick(this.fieldsOf('Bool')).name]);
    if (this.has('Bytes')) choices.push([5, () => this.boolFunction(this.bytesLhs(false))]);
    if (this.has('Array<Bytes>') || this.has('Map<Array<Bytes>>') || this.has('Array<Int>')) choices.push([16, () => this.quantified()]);
    const listable = this.pool.filter((f) => LISTABLE.includes(f.name));
    if (listable.length > 0) choices.push([1.5, () => `${rng.pick(listable).name}${this.ws()}in${this.ws()}$${rng.pick(LIST_NAMES)}`]);
    return rng.weighted(choices)();
  }

  /** A scalar (or, with `each`, element-wise) Bytes left-hand side. */
  private bytesLhs(each: boolean): BytesLhs {
    const rng = this.rng;
    const base = this.bytesBase(each);
    const r = rng.next();
    if (r < 0.68) return base;
    return this.wrapBytes(base);
  }

  private bytesBase(each: boolean): BytesLhs {
    const rng = this.rng;
    const opts: Array<readonly [number, () => BytesLhs]> = [];
    if (!each && this.has('Bytes')) {
      opts.push([70, () => {
        const f = rng.pick(this.fieldsOf('Bytes')).name;
        return { text: f, want: (w) => this.hint({ field: f, value: w }), each: false };
      }]);
    }
    if (this.has('Array<Bytes>')) {
      opts.push([12, () => {
        const f = rng.pick(this.fieldsOf('Array<Bytes>')).name;
        if (each) return { text: `${f}[${this.idxWs('*')}]`, want: (w) => this.hint({ field: f, index: '*', value: w }), each: true };
        const i = rng.weighted([[5, 0], [3, 1], [1, 2], [1, 7]] as const);
        return { text: `${f}[${this.idxWs(intLiteral(rng, i))}]`, want: (w) => this.hint({ field: f, index: i, value: w }), each: false };
      }]);
    }
    if (this.has('Map<Array<Bytes>>')) {
      opts.push([18, () => {
        const f = rng.pick(this.fieldsOf('Map<Array<Bytes>>')).name;
        const key = rng.pick(KEYS);
        const keyText = quote(rng, key, 0.1);
        if (each) {
          if (!this.noMapEach && rng.chance(0.2)) return { text: `${f}[*][${this.idxWs('*')}]`, want: (w) => this.hint({ field: f, key: '*', index: '*', value: w }), each: true };
          if (!this.noMapEach && rng.chance(0.15)) {
            const i = rng.range(0, 1);
            return { text: `${f}[*][${i}]`, want: (w) => this.hint({ field: f, key: '*', index: i, value: w }), each: true };
          }
          return { text: `${f}[${this.idxWs(keyText)}][*]`, want: (w) => this.hint({ field: f, key, index: '*', value: w }), each: true };
        }
        const i = rng.weighted([[6, 0], [2, 1], [1, 3]] as const);
        return { text: `${f}[${this.idxWs(keyText)}][${intLiteral(rng, i)}]`, want: (w) => this.hint({ field: f, key, index: i, value: w }), each: false };
      }]);
    }
    if (opts.length === 0) throw new Error('no Bytes-like field in the pool');
    return rng.weighted(opts)();
  }

  /** Spaces inside index brackets are allowed. */
  private idxWs(inner: string): string {
    return this.rng.chance(0.06) ? ` ${inner} ` : inner;
  }

  /** Wraps a Bytes LHS in a Bytes -> Bytes function. */
  private wrapBytes(inner: BytesLhs): BytesLhs {
    const rng = this.rng;
    const fn = rng.weighted([
      [30, 'lower'],
      [20, 'upper'],
      [15, 'url_decode'],
      [12, 'remove_bytes'],
      [6, 'substring'],
      [6, 'nested'],
    ] as const);
    const sp = rng.chance(0.1) ? ' ' : '';
    // A lifted call (`f(x[*])`) yields an array; `[*]` after it unpacks it again.
    const after = inner.each ? '[*]' : '';
    switch (fn) {
      case 'lower':
        return { text: `lower${sp}(${inner.text})${after}`, want: (w) => inner.want(flipCase(rng, w)), each: inner.each };
      case 'upper':
        return { text: `upper${sp}(${inner.text})${after}`, want: (w) => inner.want(flipCase(rng, w)), each: inner.each };
      case 'url_decode':
        return {
          text: `url_decode${sp}(${inner.text})${after}`,
          want: (w) => inner.want([...w].map((c) => (rng.chance(0.3) ? [...Buffer.from(c, 'utf8')].map((b) => '%' + hex2(rng, b)).join('') : c)).join('')),
          each: inner.each,
        };
      case 'remove_bytes': {
        const chars = rng.pick(['.', '-', '/', 'ab', 'xyz', '%', '.w']);
        // (Hex bytes are not usable as function arguments: they lex as integers or names.)
        const lit = rng.chance(0.03) ? rawString(rng, chars) : quote(rng, chars);
        return {
          text: `remove_bytes${sp}(${inner.text},${this.opt()}${lit})${after}`,
          want: (w) => {
            let s = '';
            for (const c of w) s += (rng.chance(0.3) ? rng.pick([...chars]) : '') + c;
            inner.want(s + (rng.chance(0.5) ? chars[0] : ''));
          },
          each: inner.each,
        };
      }
      case 'substring': {
        const start = rng.pick([0, 0, 1, 2, -2, -3]);
        const end = rng.weighted([[5, undefined], [2, -1], [1, 3], [1, 0]] as const);
        // Hex integers are not integer arguments for the engine (`0x1` lexes as an unknown
        // name there); they appear rarely, as a probe that both engines reject them.
        const argLit = (v: number): string => (v > 0 && rng.chance(0.03) ? '0x' + v.toString(16) : rng.chance(0.1) && v > 0 ? '0' + v.toString(8) : String(v));
        const args = `${argLit(start)}${end === undefined ? '' : ',' + this.opt() + argLit(end)}`;
        return {
          text: `substring${sp}(${inner.text},${this.opt()}${args})${after}`,
          want: (w) => {
            if (start >= 0 && (end === undefined || end < 0)) inner.want('p'.repeat(start) + w + 's'.repeat(end === undefined ? 0 : -end));
            else if (start < 0 && end === undefined && w.length === -start) inner.want('pre' + w);
            else inner.want(w + 'tail');
          },
          each: inner.each,
        };
      }
      case 'nested': {
        const mid = this.wrapBytes(inner);
        return { text: `lower(${mid.text})${after}`, want: (w) => mid.want(w), each: inner.each };
      }
    }
  }

  private opToken(word: string, sym?: string): string {
    return sym !== undefined && this.rng.chance(0.4) ? sym : word;
  }

  /** `lhs op rhs` for a Bytes LHS. */
  private bytesComparison(lhs: BytesLhs): string {
    const rng = this.rng;
    const op = rng.weighted([
      [30, 'eqlike'],
      [14, 'contains'],
      [16, 'matches'],
      [3, 'wildcard'],
      [2, 'strict wildcard'],
      [16, 'in'],
      [0.3, 'list'],
    ] as const);
    const sep = (tok: string): string => {
      const symbolic = /^[=!<>~&]/.test(tok);
      return symbolic && /["\])]$/.test(lhs.text) && rng.chance(0.3) ? '' : this.ws();
    };
    switch (op) {
      case 'eqlike': {
        const [word, sym] = rng.weighted([
          [45, EQ_OPS[0]],
          [25, EQ_OPS[1]],
          [7, EQ_OPS[2]],
          [7, EQ_OPS[3]],
          [8, EQ_OPS[4]],
          [8, EQ_OPS[5]],
        ]);
        const v = someString(rng);
        lhs.want(v);
        if (word !== 'eq' && word !== 'ne') lhs.want(v + 'a');
        if (rng.chance(0.3)) lhs.want(flipCase(rng, v));
        const tok = this.opToken(word, sym);
        const lit = bytesLiteral(rng, v);
        return `${lhs.text}${sep(tok)}${tok}${/^[=!<>]/.test(tok) && rng.chance(0.3) ? '' : this.ws()}${lit}`;
      }
      case 'contains': {
        const v = rng.chance(0.8) ? rng.pick(BASE_STRINGS.filter((s) => s.length <= 4)) : randomString(rng, 3);
        lhs.want(randomString(rng, 2, ALNUM) + v + randomString(rng, 2, ALNUM));
        return `${lhs.text}${this.ws()}contains${this.ws()}${bytesLiteral(rng, v)}`;
      }
      case 'matches': {
        const re = regex(rng);
        lhs.want(re.sample());
        if (rng.chance(0.5)) lhs.want(re.sample());
        const tok = this.opToken('matches', '~');
        const lit = rng.chance(0.02) ? rawString(rng, re.src.replace(/\\"/g, '"')) : `"${re.src}"`;
        return `${lhs.text}${sep(tok)}${tok}${this.ws()}${lit}`;
      }
      case 'wildcard':
      case 'strict wildcard': {
        const strict = op === 'strict wildcard';
        const p = wildcardPattern(rng, strict);
        lhs.want(p.sample());
        const lit = rng.chance(0.05) ? rawString(rng, p.pattern) : quote(rng, p.pattern, 0.05);
        return `${lhs.text}${this.ws()}${op}${this.ws()}${lit}`;
      }
      case 'in': {
        const n = rng.weighted([[1, 0], [6, 1], [8, 2], [5, 3], [3, 5]] as const);
        const items: string[] = [];
        for (let i = 0; i < n; i++) {
          const v = someString(rng);
          if (rng.chance(0.6)) lhs.want(v);
          const lit = bytesLiteral(rng, v);
          items.push(lit);
        }
        return `${lhs.text}${this.ws()}in${this.opt()}${this.setText(items)}`;
      }
      case 'list':
        return `${lhs.text}${this.ws()}in${this.ws()}$${rng.pick(LIST_NAMES)}`;
    }
  }

  /** `{a b c}` with whitespace separators (optional next to quotes). */
  private setText(items: readonly string[]): string {
    let out = '{' + (this.rng.chance(0.3) ? this.ws() : '');
    items.forEach((it, i) => {
      if (i > 0) out += /^"/.test(it) && /"$/.test(items[i - 1]) && this.rng.chance(0.2) ? '' : this.ws();
      out += it;
    });
    return out + (this.rng.chance(0.3) ? this.ws() : '') + '}';
  }

  private boolFunction(lhs: BytesLhs): string {
    const rng = this.rng;
    const fn = rng.pick(['starts_with', 'ends_with']);
    const v = rng.pick(['/', '/admin', 'a', '.php', 'example.com', 'GET', 'é', 'x y']);
    lhs.want(fn === 'starts_with' ? v + randomString(rng, 3, ALNUM) : randomString(rng, 3, ALNUM) + v);
    return `${fn}(${lhs.text},${this.opt()}${bytesLiteral(rng, v, false)})`;
  }

  private intLhs(each: boolean): IntLhs {
    const rng = this.rng;
    const opts: Array<readonly [number, () => IntLhs]> = [];
    if (!each && this.has('Int')) {
      opts.push([70, () => {
        const f = rng.pick(this.fieldsOf('Int')).name;
        return { text: f, want: (w) => this.hint({ field: f, value: w }), each: false };
      }]);
    }
    if (this.has('Array<Int>')) {
      opts.push([each ? 60 : 8, () => {
        const f = rng.pick(this.fieldsOf('Array<Int>')).name;
        if (each) return { text: `${f}[*]`, want: (w) => this.hint({ field: f, index: '*', value: w }), each: true };
        const i = rng.pick([0, 0, 1, 3]);
        return { text: `${f}[${intLiteral(rng, i)}]`, want: (w) => this.hint({ field: f, index: i, value: w }), each: false };
      }]);
    }
    if (this.has('Bytes') || this.has('Map<Array<Bytes>>') || this.has('Array<Bytes>')) {
      opts.push([each ? 40 : 18, () => {
        const inner = this.bytesBase(each);
        return {
          text: `len(${inner.text})${inner.each ? '[*]' : ''}`,
          want: (w) => inner.want(w >= 0 && w < 64 ? 'x'.repeat(w) : 'xx'),
          each: inner.each,
        };
      }]);
    }
    return rng.weighted(opts)();
  }

  private intComparison(lhs: IntLhs): string {
    const rng = this.rng;
    const op = rng.weighted([
      [50, 'eqlike'],
      [10, 'bitwise'],
      [22, 'in'],
      [0.3, 'list'],
    ] as const);
    const lit = (v: number): string => (rng.chance(0.01) ? rng.pick(WIDE_INTS) : intLiteral(rng, v));
    switch (op) {
      case 'eqlike': {
        const [word, sym] = rng.pick(EQ_OPS);
        const v = someInt(rng);
        lhs.want(v);
        if (rng.chance(0.5)) lhs.want(v + rng.pick([-1, 1]));
        const tok = this.opToken(word, sym);
        return `${lhs.text}${this.ws()}${tok}${this.ws()}${lit(v)}`;
      }
      case 'bitwise': {
        const v = rng.pick([1, 2, 4, 0x10, 0xff, 0, -1, 0x7fffffff]);
        lhs.want(v === 0 ? 1 : v);
        lhs.want(rng.pick([0, 8, 3]));
        const tok = this.opToken('bitwise_and', '&');
        return `${lhs.text}${tok === '&' && rng.chance(0.3) ? '' : this.ws()}${tok}${this.ws()}${lit(v)}`;
      }
      case 'in': {
        const n = rng.weighted([[1, 0], [5, 1], [6, 2], [4, 4]] as const);
        const items: string[] = [];
        for (let i = 0; i < n; i++) {
          if (rng.chance(0.35)) {
            const a = someInt(rng);
            const b = a === INT32_MAX ? a : a + rng.pick([0, 1, 5, 100]);
            lhs.want(a + rng.int(b - a + 1));
            if (rng.chance(0.3)) lhs.want(b + 1);
            items.push(`${intLiteral(rng, a)}..${intLiteral(rng, b)}`);
          } else {
            const v = someInt(rng);
            if (rng.chance(0.6)) lhs.want(v);
            items.push(lit(v));
          }
        }
        return `${lhs.text}${this.ws()}in${this.opt()}${this.setText(items)}`;
      }
      case 'list':
        return `${lhs.text}${this.ws()}in${this.ws()}$${rng.pick(LIST_NAMES)}`;
    }
  }

  private ipComparison(): string {
    const rng = this.rng;
    const f = rng.pick(this.fieldsOf('Ip')).name;
    const want = (ip: IpText): void => this.hint({ field: f, value: ip });
    const op = rng.weighted([
      [35, 'eq'],
      [8, 'order'],
      [45, 'in'],
      [2, 'list'],
    ] as const);
    switch (op) {
      case 'eq': {
        const ip = someIp(rng);
        want(ip);
        if (rng.chance(0.3)) want(nearIp(rng, ip));
        const tok = this.opToken(...(rng.chance(0.7) ? EQ_OPS[0] : EQ_OPS[1]));
        return `${f}${this.ws()}${tok}${this.ws()}${ip}`;
      }
      case 'order': {
        const ip = someIp(rng);
        want(ip);
        want(nearIp(rng, ip));
        const [word, sym] = rng.pick(EQ_OPS.slice(2));
        return `${f}${this.ws()}${this.opToken(word, sym)}${this.ws()}${ip}`;
      }
      case 'in': {
        const n = rng.weighted([[1, 0], [6, 1], [6, 2], [3, 4]] as const);
        const items: string[] = [];
        for (let i = 0; i < n; i++) {
          const base = someIp(rng);
          const kind = rng.weighted([[3, 'addr'], [5, 'cidr'], [2, 'range']] as const);
          if (kind === 'addr') {
            if (rng.chance(0.6)) want(base);
            items.push(base);
          } else if (kind === 'cidr') {
            const c = cidrOf(rng, base);
            if (rng.chance(0.6)) want(c.inside);
            items.push(c.cidr);
          } else {
            const r = ipRangeOf(rng, base);
            if (rng.chance(0.6)) want(r.inside);
            items.push(r.range);
          }
        }
        return `${f}${this.ws()}in${this.opt()}${this.setText(items)}`;
      }
      case 'list':
        return `${f}${this.ws()}in${this.ws()}$${rng.pick(LIST_NAMES)}`;
    }
  }

  /** `any(…)` / `all(…)` over an element-wise comparison. */
  private quantified(): string {
    const rng = this.rng;
    const q = rng.chance(0.65) ? 'any' : 'all';
    const sp = rng.chance(0.08) ? ' ' : '';
    const arg = this.arrayBool(1);
    return `${q}${sp}(${arg})`;
  }

  private arrayBool(depth: number): string {
    const rng = this.rng;
    const r = rng.next();
    if (r < 0.1) return (rng.chance(0.6) ? 'not ' : '!') + this.arrayBool(depth);
    if (r < 0.16 && depth > 0) {
      const [word, sym] = rng.pick([
        ['and', '&&'],
        ['or', '||'],
        ['xor', '^^'],
      ] as const);
      const saved = this.noMapEach;
      this.noMapEach = true;
      const out = `(${this.arrayBool(depth - 1)}${this.ws()}${this.opToken(word, sym)}${this.ws()}${this.arrayBool(depth - 1)})`;
      this.noMapEach = saved;
      return out;
    }
    const hasBytesArrays = this.has('Array<Bytes>') || this.has('Map<Array<Bytes>>');
    if (hasBytesArrays && rng.chance(this.has('Array<Int>') ? 0.8 : 1)) {
      const lhs = this.bytesLhs(true);
      if (rng.chance(0.1)) return this.boolFunction(lhs);
      if (rng.chance(0.12)) return this.intComparison(this.intLhs(true));
      return this.bytesComparison(lhs);
    }
    return this.intComparison(this.intLhs(true));
  }
}

// ---------------------------------------------------------------------------------------
// Mutations

const OPERATOR_WORDS: readonly string[] = [
  'eq', 'ne', 'lt', 'le', 'gt', 'ge', '==', '!=', '<', '<=', '>', '>=', 'contains', 'matches', '~', 'in', '&', 'bitwise_and',
  'wildcard', 'strict wildcard', '===', '=', '<>', 'EQ', 'starts_with', 'not in', 'and', 'or', 'xor', '&&', '||', '^^',
];
const INSERT_CHARS: readonly string[] = [...'"(){}[]\\,$*. \t:a0=!&|\'#r-/', '\n', 'é'];
const KEYWORDS: readonly string[] = ['and', 'or', 'xor', 'not', 'eq', 'ne', 'in', 'contains', 'matches', 'any', 'all', 'lower', 'ssl'];

export function mutate(expr: string, rng: Rng): { expr: string; kind: string } {
  const kind = rng.weighted([
    [12, 'delete'],
    [12, 'insert'],
    [6, 'duplicate'],
    [8, 'swap-tokens'],
    [12, 'replace-operator'],
    [6, 'uppercase-keyword'],
    [6, 'tab'],
    [10, 'unbalance'],
    [5, 'truncate'],
    [5, 'replace-literal'],
  ] as const);
  const pos = (): number => rng.int(expr.length + 1);
  switch (kind) {
    case 'delete': {
      const p = rng.int(Math.max(1, expr.length));
      return { expr: expr.slice(0, p) + expr.slice(p + 1), kind };
    }
    case 'insert': {
      const p = pos();
      return { expr: expr.slice(0, p) + rng.pick(INSERT_CHARS) + expr.slice(p), kind };
    }
    case 'duplicate': {
      const p = rng.int(Math.max(1, expr.length));
      return { expr: expr.slice(0, p + 1) + expr.slice(p), kind };
    }
    case 'swap-tokens': {
      const toks = expr.split(' ');
      if (toks.length < 2) return { expr: expr + expr, kind };
      const i = rng.int(toks.length - 1);
      [toks[i], toks[i + 1]] = [toks[i + 1], toks[i]];
      return { expr: toks.join(' '), kind };
    }
    case 'replace-operator': {
      const re = /(?<= )(eq|ne|lt|le|gt|ge|==|!=|<=|>=|<|>|contains|matches|~|in|&|bitwise_and|and|or|xor|&&|\|\||\^\^)(?= )/g;
      const hits = [...expr.matchAll(re)];
      if (hits.length === 0) return { expr: expr + ' ' + rng.pick(OPERATOR_WORDS), kind };
      const h = rng.pick(hits);
      const at = h.index ?? 0;
      return { expr: expr.slice(0, at) + rng.pick(OPERATOR_WORDS) + expr.slice(at + h[0].length), kind };
    }
    case 'uppercase-keyword': {
      const kw = rng.pick(KEYWORDS);
      const at = expr.indexOf(kw);
      if (at < 0) return { expr: expr.toUpperCase(), kind };
      const up = rng.chance(0.5) ? kw.toUpperCase() : kw[0].toUpperCase() + kw.slice(1);
      return { expr: expr.slice(0, at) + up + expr.slice(at + kw.length), kind };
    }
    case 'tab': {
      const spaces = [...expr.matchAll(/ /g)].map((m) => m.index ?? 0);
      if (spaces.length === 0) return { expr: '\t' + expr, kind };
      const at = rng.pick(spaces);
      return { expr: expr.slice(0, at) + (rng.chance(0.5) ? '\t' : ' \t') + expr.slice(at + 1), kind };
    }
    case 'unbalance': {
      const chars = ['(', ')', '"', '{', '}', '[', ']'];
      const c = rng.pick(chars);
      const at = expr.indexOf(c);
      if (at >= 0 && rng.chance(0.6)) return { expr: expr.slice(0, at) + expr.slice(at + 1), kind };
      const p = pos();
      return { expr: expr.slice(0, p) + c + expr.slice(p), kind };
    }
    case 'truncate':
      return { expr: expr.slice(0, rng.int(Math.max(1, expr.length))), kind };
    case 'replace-literal': {
      const lits = [...expr.matchAll(/"(?:[^"\\]|\\.)*"|\b\d+\b/g)];
      if (lits.length === 0) return { expr, kind };
      const h = rng.pick(lits);
      const at = h.index ?? 0;
      const repl = rng.pick(['"x"', '1', '1.2.3.4', '10.0.0.0/8', '61:62', "'a'", '-0x1', '08', '"\\n"', '"\\x4"', 'true', '{1 2}', '""', '1..2']);
      return { expr: expr.slice(0, at) + repl + expr.slice(at + h[0].length), kind };
    }
  }
}

// ---------------------------------------------------------------------------------------
// Field values

/**
 * `count` sets of values for the given fields (every field must get a value: the
 * wirefilter build under test cannot evaluate an absent field). Hints are honoured at
 * random so that some sets satisfy comparisons and others narrowly miss them.
 */
export function generateFieldSets(
  c: Pick<GeneratedCase, 'hints' | 'valueSeed'>,
  fields: ReadonlyArray<PoolField>,
  count: number,
): Record<string, unknown>[] {
  const rng = new Rng(c.valueSeed);
  const sets: Record<string, unknown>[] = [];
  for (let n = 0; n < count; n++) {
    const set: Record<string, unknown> = {};
    // The first set takes every hint it can, the others a random share.
    const p = n === 0 ? 0.95 : rng.pick([0.2, 0.5, 0.8]);
    for (const f of fields) {
      const hints = c.hints.filter((h) => h.field === f.name);
      set[f.name] = fieldValue(rng, f.type, hints, p);
    }
    sets.push(set);
  }
  return sets;
}

function scalar(rng: Rng, type: 'Bytes' | 'Int' | 'Ip' | 'Bool', hints: readonly Hint[], p: number): string | number | boolean {
  const usable = hints.filter((h) => h.key === undefined && h.index === undefined);
  if (usable.length > 0 && rng.chance(p)) {
    const v = usable[rng.int(usable.length)].value;
    return type === 'Int' && typeof v === 'number' ? clampInt(v) : v;
  }
  switch (type) {
    case 'Bytes':
      return someString(rng);
    case 'Int':
      return someInt(rng);
    case 'Ip':
      return usable.length > 0 && rng.chance(0.5) ? nearIp(rng, String(usable[0].value)) : someIp(rng);
    case 'Bool':
      return rng.chance(0.5);
  }
}

/** Int values given to the engines stay within 32 bits (the wirefilter build's Int). */
function clampInt(v: number): number {
  return Math.max(INT32_MIN, Math.min(INT32_MAX, Math.trunc(v)));
}

function element(rng: Rng, type: 'Bytes' | 'Int'): string | number {
  return type === 'Bytes' ? someString(rng) : someInt(rng);
}

function fillArray(rng: Rng, elemType: 'Bytes' | 'Int', hints: readonly Hint[], p: number): (string | number)[] {
  const arr: (string | number)[] = [];
  const n = rng.weighted([[2, 0], [5, 1], [4, 2], [2, 3], [1, 5]] as const);
  for (let i = 0; i < n; i++) arr.push(element(rng, elemType));
  for (const h of hints) {
    if (!rng.chance(p)) continue;
    const v = typeof h.value === 'number' ? clampInt(h.value) : (h.value as string);
    if (h.index === '*' || h.index === undefined) arr.splice(rng.int(arr.length + 1), 0, v);
    else {
      while (arr.length <= h.index) arr.push(element(rng, elemType));
      arr[h.index] = v;
    }
  }
  return arr;
}

function fieldValue(rng: Rng, type: FieldType, hints: readonly Hint[], p: number): unknown {
  switch (type) {
    case 'Bytes':
    case 'Int':
    case 'Ip':
    case 'Bool':
      return scalar(rng, type, hints, p);
    case 'Array<Bytes>':
      return fillArray(rng, 'Bytes', hints, p);
    case 'Array<Int>':
      return fillArray(rng, 'Int', hints, p);
    case 'Map<Array<Bytes>>': {
      const map: Record<string, (string | number)[]> = {};
      const extra = rng.weighted([[3, 0], [4, 1], [2, 2]] as const);
      for (let i = 0; i < extra; i++) map[rng.chance(0.5) ? rng.pick(KEYS) : randomString(rng, 4, ALNUM)] = fillArray(rng, 'Bytes', [], p);
      const byKey = new Map<string, Hint[]>();
      for (const h of hints) {
        const key = h.key === undefined || h.key === '*' ? (Object.keys(map).length > 0 && rng.chance(0.5) ? rng.pick(Object.keys(map)) : rng.pick(KEYS)) : h.key;
        byKey.set(key, [...(byKey.get(key) ?? []), h]);
      }
      for (const [key, hs] of byKey) {
        if (!rng.chance(Math.max(p, 0.3))) continue;
        map[key] = fillArray(rng, 'Bytes', hs, Math.min(1, p + 0.2));
      }
      return map;
    }
  }
}
