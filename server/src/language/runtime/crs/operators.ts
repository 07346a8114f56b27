/**
 * CRS (ModSecurity) operators as functions returning Bool, written from ModSecurity's
 * reference manual. Each takes the inspected value first and its parameter (a literal)
 * second; `prepare` builds the matcher once.
 */
import { buildAutomaton } from '../../ahoCorasick';
import { asciiLower, firstNonUtf8 } from '../../bytes';
import { parseIpAddr } from '../../ip';
import type { IpAddr, IpRange } from '../../ir';
import { CRS_DATA as GENERATED_CRS_DATA } from './crs-data';
import { translatePcre } from './pcre';
import { factorTest, requiredFactors, searchRewrite } from './rxSearch';

/** Phrases of the `.data` files `@pmFromFile` reads, by file name (registered ones first). */
const CRS_DATA = new Map<string, readonly string[]>();

/**
 * Registers the phrases of a CRS `.data` file (one phrase per entry, comments and empty
 * lines already removed), overriding the generated module `crs-data.ts`
 * (written by scripts/crs/convert.ts), which is the default source.
 */
export function registerCrsData(name: string, phrases: readonly string[]): void {
  CRS_DATA.set(name, [...phrases]);
}

export function crsData(name: string): readonly string[] | undefined {
  return CRS_DATA.get(name) ?? (Object.hasOwn(GENERATED_CRS_DATA, name) ? GENERATED_CRS_DATA[name] : undefined);
}

/** A multi-phrase, ASCII-case-insensitive substring matcher (`@pm`). */
export function phraseMatcher(phrases: readonly string[]): (s: string) => boolean {
  const list = [...new Set(phrases.map((p) => asciiLower(p)).filter((p) => p !== ''))];
  if (list.length === 0) return () => false;
  // A long list (the `.data` files: up to 1,264 phrases) is one automaton that reads each
  // byte once; a short one is a regex alternation, which V8 scans fast for a few literals.
  if (list.length >= PM_AUTOMATON_MIN && list.every((p) => !/[^\x00-\xff]/.test(p))) return phraseAutomaton(list);
  // Longest first is not needed for a yes/no answer; one alternation scans once. Letters
  // match both cases (`[aA]`), so the value is not lower-cased first (a copy of a 128 KiB
  // body per rule).
  const re = new RegExp(list.map(caselessLiteral).join('|'));
  return (s) => re.test(s);
}

/** A lower-case phrase as regex source matching it in any ASCII case (the JS `i` flag would fold Latin-1 letters too). */
function caselessLiteral(phrase: string): string {
  let out = '';
  for (const ch of phrase) {
    if (ch >= 'a' && ch <= 'z') out += `[${ch}${ch.toUpperCase()}]`;
    else out += ch.replace(/[\\^$.*+?()[\]{}|/]/g, '\\$&');
  }
  return out;
}

/**
 * From this many phrases on, `@pm` uses the automaton. Measured on pieces of the CRS test
 * corpus (ns per value, regex / automaton): 1,264 phrases 6,873 / 171, 1,090: 5,325 / 410,
 * 218: 473 / 405, 127: 255 / 336, 16: 261 / 448.
 */
const PM_AUTOMATON_MIN = 200;

/** Any of the (lower-case) phrases, ASCII letters in either case: ahoCorasick.ts's automaton, stopping at the first phrase. */
export function phraseAutomaton(phrases: readonly string[]): (s: string) => boolean {
  const { cls, K, next, out: final } = buildAutomaton(phrases, () => 1, true);
  return (s) => {
    let st = 0;
    for (let i = 0; i < s.length; i++) {
      const c = s.charCodeAt(i);
      st = next[st * K + (c < 256 ? cls[c] : 0)];
      if (final[st] !== 0) return true;
    }
    return false;
  };
}


/** `@pm` parameter: phrases separated by spaces. */
export function splitPhrases(param: string): string[] {
  return param.split(/[ \t]+/).filter((p) => p !== '');
}

/** `1-255`, `38,44-46,9`: a 256-entry table of allowed bytes, or an error. */
export function parseByteRanges(param: string): { ok: true; allowed: Uint8Array } | { ok: false; message: string } {
  const allowed = new Uint8Array(256);
  for (const raw of param.split(',')) {
    const item = raw.trim();
    if (item === '') continue;
    const m = /^(\d{1,3})(?:\s*-\s*(\d{1,3}))?$/.exec(item);
    if (!m) return { ok: false, message: `bad byte range ${JSON.stringify(item)} (expected N or N-M, 0..255)` };
    const lo = Number(m[1]);
    const hi = m[2] === undefined ? lo : Number(m[2]);
    if (lo > 255 || hi > 255 || lo > hi) return { ok: false, message: `bad byte range ${JSON.stringify(item)} (expected N or N-M, 0..255)` };
    for (let b = lo; b <= hi; b++) allowed[b] = 1;
  }
  return { ok: true, allowed };
}

/** True when some byte is outside the allowed ranges (ModSecurity reports a match then). */
export function byteOutsideRanges(s: string, allowed: Uint8Array): boolean {
  for (let i = 0; i < s.length; i++) if (!allowed[s.charCodeAt(i) & 0xff]) return true;
  return false;
}

/** True when a `%` does not start a `%HH` escape. */
export function invalidUrlEncoding(s: string): boolean {
  for (let i = s.indexOf('%'); i >= 0; i = s.indexOf('%', i + 1)) {
    if (!/^[0-9A-Fa-f]{2}$/.test(s.slice(i + 1, i + 3))) return true;
  }
  return false;
}

/** True when the bytes are not valid UTF-8 (truncated, overlong, surrogate or > U+10FFFF). */
export function invalidUtf8(s: string): boolean {
  return firstNonUtf8(s) >= 0;
}

/** `@ipMatch` parameter: addresses and CIDRs separated by commas (host bits may be set). */
export function parseIpList(param: string): { ok: true; ranges: IpRange[] } | { ok: false; message: string } {
  const ranges: IpRange[] = [];
  for (const raw of param.split(',')) {
    const item = raw.trim();
    if (item === '') continue;
    const slash = item.indexOf('/');
    const addr = parseIpAddr(slash < 0 ? item : item.slice(0, slash));
    if (!addr.ok) return { ok: false, message: `bad address ${JSON.stringify(item)}` };
    const ip = addr.value;
    const max = ip.family === 4 ? 32 : 128;
    const bits = slash < 0 ? max : /^\d{1,3}$/.test(item.slice(slash + 1)) ? Number(item.slice(slash + 1)) : -1;
    if (bits < 0 || bits > max) return { ok: false, message: `bad network length in ${JSON.stringify(item)}` };
    ranges.push(networkRange(ip, bits));
  }
  return { ok: true, ranges };
}

function networkRange(ip: IpAddr, bits: number): IpRange {
  if (ip.family === 4) {
    const size = 2 ** (32 - bits);
    const lo = ip.n - (ip.n % size);
    return [
      { family: 4, n: lo },
      { family: 4, n: lo + size - 1 },
    ];
  }
  const hostMask = (1n << BigInt(128 - bits)) - 1n;
  const lo = ip.n & ~hostMask & ((1n << 128n) - 1n);
  return [
    { family: 6, n: lo },
    { family: 6, n: lo | hostMask },
  ];
}

/** A Bytes operand read as a number the way ModSecurity does (atoi: leading digits, else 0). */
export function bytesToNumber(s: string): number {
  const m = /^[\t-\r ]*([+-]?\d+)/.exec(s);
  return m ? Number(m[1]) : 0;
}

/**
 * `@rx`: the compiled matcher for a PCRE pattern (flag `i` forced when `caseless`). It runs
 * the pattern's search-equivalent rewrite, and on values of PREFILTER_MIN bytes or more
 * first checks that one of the literals every match contains is there (rxSearch.ts).
 */
export function rxMatcher(pattern: string, caseless = false): { ok: true; test: (s: string) => boolean } | { ok: false; message: string } {
  const t = translatePcre(caseless ? `(?i)${pattern}` : pattern);
  if (!t.ok) return t;
  let re: RegExp;
  try {
    re = new RegExp(searchRewrite(t.source), t.flags);
  } catch (e) {
    return { ok: false, message: `the translated pattern does not compile: ${(e as Error).message}` };
  }
  const source = re.source;
  let roomy: RegExp | undefined;
  const search = (s: string): boolean => (s.length < ROOMY_MIN ? re : (roomy ??= roomyRegex(source, t.flags))).test(s);
  const factors = requiredFactors(t.source);
  if (!factors) return { ok: true, test: search };
  const present = factorTest(factors);
  return { ok: true, test: (s) => (s.length < PREFILTER_MIN || present(s)) && search(s) };
}

/** Below this length a value goes straight to the regex (the prefilter would not pay). */
const PREFILTER_MIN = 64;
/** From this length on, op.rx searches with a copy compiled with a larger backtrack budget. */
const ROOMY_MIN = 4096;
/** That budget: a few backtracks per byte of values up to the inspection limit and beyond (~20 ns each). */
const ROOMY_BACKTRACKS = 2_000_000;

/**
 * The process's roomy-budget regex maker (regexBudget.ts registers it where V8's fallback
 * is on); elsewhere the regex as it is.
 */
function roomyRegex(source: string, flags: string): RegExp {
  const make = (globalThis as Record<symbol, unknown>)[Symbol.for('rulesmith.roomyRegex')] as ((s: string, f: string, b: number) => RegExp) | undefined;
  return make ? make(source, flags, ROOMY_BACKTRACKS) : new RegExp(source, flags);
}
