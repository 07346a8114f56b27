/**
 * Regular expressions with the engine's semantics on top of re2js (RE2, linear time).
 *
 * The engine (Rust `regex-automata`, Unicode mode and UTF-8 mode off) matches raw bytes:
 * `.` is any byte but `\n`, `\w \d \s \b` are ASCII, `(?i)` folds ASCII only, `\xFF` is
 * the byte 0xFF, and a non-ASCII character in the pattern is an error ("Unicode not
 * allowed here") unless `(?u)` enables Unicode mode, where characters and classes match
 * their UTF-8 encodings.
 *
 * re2js has no Latin-1/byte mode, but our values are binary strings (one code unit per
 * byte), so re2js sees each byte as one "rune" 0..255. We parse the Rust syntax
 * ourselves and emit an RE2 pattern in which every byte-level decision is explicit:
 * classes become explicit byte sets (no re2js case folding, which would be Unicode
 * folding and wrongly map 0xC0 to 0xE0), Unicode constructs become alternations of
 * UTF-8 byte sequences, `(?x)` is stripped, anchors are spelled out. Capture groups keep
 * their numbers, so `${1}` in regex_replace refers to the same group as in Rust.
 *
 * Known differences: `\<`, `\>`, `\b{start}`-style boundaries are rejected; under
 * `(?u)`, `\b`/`\B` stay ASCII; `(?R)` only affects `.` (not `^`/`$`); `\p{…}` names are
 * resolved by re2js's tables (general categories, scripts, a few binary properties) with
 * loose matching of case, `_`, `-` and spaces; counted repetitions beyond re2js's limit
 * of 1000 are split into equivalent chunks (only the last copy keeps its capture groups).
 *
 * Checking a pattern (`checkRegex`: what the checker, the service and the editor ask)
 * parses it and models the engine's compiled-size limit (regexSize.ts); it builds no
 * program, so it costs time linear in the pattern whatever its repetition counts. Only
 * evaluation compiles (`compileRegex`), in the evaluation workers, with a cache bounded
 * by bytes.
 *
 * The pattern is text (a JS string), as the engine reads it from the expression; a
 * pattern held as Bytes (regex_replace's argument) must be decoded from UTF-8 first.
 */
import { RE2JS } from 're2js';
import { SizedLru } from './sizedLru';
import { compiledSize, REGEX_SIZE_LIMIT, utf8Sequences, type Look, type RegexNode as Node, type Utf8Seqs } from './regexSize';

export { REGEX_SIZE_LIMIT };

export interface CompiledRegex {
  /** Unanchored search in a binary string. */
  test(binary: string): boolean;
  /**
   * Replaces the first match: `${n}` / `$n` insert group n (empty when it did not take
   * part), `$$` inserts `$`, any other `$` is literal. Returns the input unchanged when
   * nothing matches.
   */
  replaceFirst(binary: string, replacement: string): string;
  /** Number of capture groups. */
  readonly groups: number;
  /**
   * The same search as `test` on V8's own engine, when the pattern allows it (see
   * nativeTest); `test` uses it. Exposed so that generated filter code can call it directly.
   */
  readonly native?: RegExp;
  /** The program's estimated heap size in bytes. */
  readonly bytes: number;
}

export type RegexResult =
  | { readonly ok: true; readonly regex: CompiledRegex }
  | {
      readonly ok: false;
      /** The engine's wording, e.g. `Unicode not allowed here`. */
      readonly message: string;
      /** Where in the pattern (UTF-16 offsets), when known. */
      readonly start?: number;
      readonly end?: number;
      /** How to fix it, when there is more to say than the engine's message. */
      readonly hint?: string;
    };

const SIZE_MESSAGE = `Compiled regex exceeds size limit of ${REGEX_SIZE_LIMIT} bytes.`;
const SIZE_HINT =
  'The engine compiles a counted repetition by copying its body: `x{1000}` is 1,000 copies of `x`, and nested counts multiply. ' +
  'Use a smaller count, `+` or `*` instead of a large upper bound, or a shorter body (Unicode classes such as `(?u)\\w` are hundreds of instructions each).';

/**
 * Caches. A check (parse and size estimate, no program) is kept by the pattern's length;
 * a compiled program by its estimated heap size (measured: about BYTES_PER_UNIT bytes per
 * RE2 program unit), least recently used first out past the budget, so that distinct
 * large patterns cannot grow a long-running process (the language server, `serve`'s
 * trace worker) without bound. A program larger than the whole budget is not kept.
 */
export const REGEX_CACHE_BUDGET = 64 * 1024 * 1024;
const CHECK_CACHE_BUDGET = 8 * 1024 * 1024;
const BYTES_PER_UNIT = 80;

/** A pattern's validity as the engine decides it, without building a program. */
export type RegexCheck =
  | { readonly ok: true; readonly groups: number }
  | Extract<RegexResult, { ok: false }>;

interface Parsed {
  readonly check: RegexCheck;
  readonly tree?: Node;
}

const checks = new SizedLru<RegexCheck>(CHECK_CACHE_BUDGET);
let programs = new SizedLru<RegexResult>(REGEX_CACHE_BUDGET);

/**
 * Whether the engine accepts a pattern (the checker's question): parsed and its compiled
 * size estimated (regexSize.ts), in time linear in the pattern whatever its repetition
 * counts. Never throws.
 */
export function checkRegex(pattern: string): RegexCheck {
  return parsed(pattern).check;
}

/** Compiles a pattern given as text (the evaluator's question). Never throws. */
export function compileRegex(pattern: string): RegexResult {
  const hit = programs.get(pattern);
  if (hit) return hit;
  let p = parsed(pattern);
  if (p.check.ok && !p.tree) p = parseAndCheck(pattern);
  if (!p.check.ok || !p.tree) return p.check as RegexResult;
  const r = compileTree(p.tree, p.check.groups, size(p.tree) * BYTES_PER_UNIT + 2 * pattern.length);
  programs.set(pattern, r, r.ok ? r.regex.bytes : 2 * pattern.length + 64);
  return r;
}

/** What a compiled filter may hold on to itself; larger programs live only in the cache. */
const HOLD_BYTES = 64 * 1024;

/** A regex as the evaluator holds it: `undefined` from each method when the pattern does not compile. */
export interface LazyRegex {
  test(binary: string): boolean | undefined;
  replaceFirst(binary: string, replacement: string): string | undefined;
}

/**
 * The evaluator's regex: compiled at first use (a rule never reached costs nothing, and
 * the cost of a large program falls in the evaluation, which runs in a worker with a time
 * limit), held when small, and otherwise asked of the cache at each use, so that compiled
 * filters hold at most HOLD_BYTES per regex and the cache's budget bounds the rest.
 */
export function lazyRegex(pattern: string): LazyRegex {
  let held: CompiledRegex | undefined;
  const get = (): CompiledRegex | undefined => {
    if (held) return held;
    const r = compileRegex(pattern);
    if (!r.ok) return undefined;
    if (r.regex.bytes <= HOLD_BYTES) held = r.regex;
    return r.regex;
  };
  return {
    test: (binary) => get()?.test(binary),
    replaceFirst: (binary, replacement) => get()?.replaceFirst(binary, replacement),
  };
}

/** The bytes the compiled-program cache holds now (estimated), for tests and benchmarks. */
export function regexCacheBytes(): number {
  return programs.bytes;
}

/** Empties the compiled-program cache and sets its budget (tests use a small one). */
export function resetRegexCache(budget = REGEX_CACHE_BUDGET): void {
  programs = new SizedLru<RegexResult>(budget);
}

function parsed(pattern: string): Parsed {
  const hit = checks.get(pattern);
  if (hit) return { check: hit };
  const p = parseAndCheck(pattern);
  // Only the verdict is kept (a tree can be much larger than its pattern); compiling parses again.
  checks.set(pattern, p.check, 128 + 2 * pattern.length);
  return p;
}

function parseAndCheck(pattern: string): Parsed {
  let tree: Node;
  let groups: number;
  try {
    const p = new Parser(pattern);
    tree = p.parse();
    groups = p.captures;
  } catch (e) {
    if (e instanceof RegexError) return { check: { ok: false, message: e.message, start: e.start, end: e.end } };
    throw e;
  }
  if (compiledSize(tree) > REGEX_SIZE_LIMIT) return { check: { ok: false, message: SIZE_MESSAGE, hint: SIZE_HINT } };
  return { check: { ok: true, groups }, tree };
}

function compileTree(tree: Node, groups: number, bytes: number): RegexResult {
  const source = emit(tree, 'top', true);
  let re: RE2JS;
  try {
    re = RE2JS.compile(source);
  } catch (e) {
    const msg = e instanceof Error ? e.message : String(e);
    // re2js's own limits (beyond the engine's: a pattern the checker accepted).
    if (/expression too large|invalid repeat count/.test(msg)) return { ok: false, message: SIZE_MESSAGE, hint: SIZE_HINT };
    // Our emitter only produces valid RE2; anything else is re2js's own wording.
    return { ok: false, message: msg.replace(/^error parsing regexp: /, '') };
  }
  return { ok: true, regex: new Re2Regex(re, groups, bytes, nativeTest(tree)) };
}

/** Formats an error the way regex-syntax prints it (used in the engine's message). */
export function formatRegexError(pattern: string, err: { message: string; start?: number }): string {
  const lines = ['regex parse error:', '    ' + pattern];
  if (err.start !== undefined && !pattern.includes('\n')) lines.push('    ' + ' '.repeat(err.start) + '^');
  lines.push('error: ' + err.message);
  return lines.join('\n');
}

/**
 * How deep groups, classes and repetitions may nest: Rust's regex syntax refuses more by
 * default (its `nest_limit`), and the parser and the size estimate here recurse that deep.
 */
export const NEST_LIMIT = 250;

/** How many repetitions wrap each other at the top of `node` (`a**` is 2). */
function repetitionDepth(node: Node): number {
  let n = 0;
  for (let x: Node = node; x.t === 'rep'; x = x.sub) n++;
  return n;
}

class Re2Regex implements CompiledRegex {
  readonly native: RegExp | undefined;

  constructor(
    private readonly re: RE2JS,
    readonly groups: number,
    readonly bytes: number,
    native: RegExp | undefined,
  ) {
    this.native = native;
  }

  test(binary: string): boolean {
    return this.native ? this.native.test(binary) : this.re.test(binary);
  }

  replaceFirst(binary: string, replacement: string): string {
    const m = this.re.matcher(binary);
    if (!m.find()) return binary;
    let out = binary.slice(0, m.start());
    for (let i = 0; i < replacement.length; i++) {
      const c = replacement[i];
      if (c !== '$' || i + 1 >= replacement.length) {
        out += c;
        continue;
      }
      const next = replacement[i + 1];
      if (next === '$') {
        out += '$';
        i++;
        continue;
      }
      let j = i + 1;
      let braced = false;
      if (next === '{') {
        braced = true;
        j++;
      }
      const digitsStart = j;
      while (j < replacement.length && replacement.charCodeAt(j) >= 48 && replacement.charCodeAt(j) <= 57) j++;
      if (j === digitsStart || (braced && replacement[j] !== '}')) {
        out += c; // not a group reference: a literal `$`
        continue;
      }
      const n = Number(replacement.slice(digitsStart, j));
      if (n <= this.groups) out += m.group(n) ?? '';
      i = braced ? j : j - 1;
    }
    return out + binary.slice(m.end());
  }
}

// ---------------------------------------------------------------------------------------
// Tree

class RegexError extends Error {
  constructor(
    message: string,
    readonly start: number,
    readonly end: number,
  ) {
    super(message);
  }
}

interface Flags {
  i: boolean;
  m: boolean;
  s: boolean;
  U: boolean;
  u: boolean;
  x: boolean;
  R: boolean;
}

/** A code point set: sorted, disjoint, inclusive ranges [lo0, hi0, lo1, hi1, …]. */
type Ranges = number[];

const MAX_CP = 0x10ffff;

// ---------------------------------------------------------------------------------------
// Parser (Rust regex-syntax, octal off, Unicode off by default)

class Parser {
  private pos = 0;
  private flags: Flags = { i: false, m: false, s: false, U: false, u: false, x: false, R: false };
  captures = 0;
  private readonly names = new Set<string>();

  constructor(private readonly p: string) {}

  parse(): Node {
    const n = this.alternation(0);
    if (this.pos < this.p.length) throw this.error('unopened group', this.pos, this.pos + 1);
    return n;
  }

  /** Character classes open around the one being read (`[a[b[c]]]`): they nest like groups. */
  private classDepth = 0;

  private error(message: string, start = this.pos, end = start + 1): RegexError {
    return new RegexError(message, start, Math.min(end, this.p.length));
  }

  private eof(): boolean {
    return this.pos >= this.p.length;
  }

  private peekCp(): number {
    return this.p.codePointAt(this.pos)!;
  }

  private nextCp(): number {
    const c = this.p.codePointAt(this.pos)!;
    this.pos += c > 0xffff ? 2 : 1;
    return c;
  }

  /** In `(?x)` mode, skips whitespace and `#` comments. */
  /** Inside `{m,n}` Rust's regex syntax (1.9+) allows white space whatever the flags. */
  private skipSpace(): void {
    if (this.flags.x) return this.skipX();
    while (!this.eof() && /\s/.test(this.p[this.pos])) this.pos++;
  }

  private skipX(): void {
    if (!this.flags.x) return;
    while (!this.eof()) {
      const c = this.p[this.pos];
      if (/\s/.test(c)) this.pos++;
      else if (c === '#') {
        while (!this.eof() && this.p[this.pos] !== '\n') this.pos++;
      } else break;
    }
  }

  private alternation(depth: number): Node {
    const alts: Node[] = [];
    let seq: Node[] = [];
    // Index in seq of the last repeatable atom, or -1 (start, after `|`, after a flag group).
    let last = -1;
    for (;;) {
      this.skipX();
      if (this.eof()) break;
      const start = this.pos;
      const c = this.p[this.pos];
      if (c === '|') {
        this.pos++;
        alts.push(seqOf(seq));
        seq = [];
        last = -1;
        continue;
      }
      if (c === ')') {
        if (depth === 0) throw this.error('unopened group');
        break;
      }
      if (c === '*' || c === '+' || c === '?' || c === '{') {
        if (last < 0 || last !== seq.length - 1) throw this.error('repetition operator missing expression');
        // Repetitions of repetitions (`a***…`) nest like groups.
        if (depth + repetitionDepth(seq[last]) + 1 > NEST_LIMIT) throw this.error(`exceed the maximum number of nested parentheses/brackets (${NEST_LIMIT})`, start, start + 1);
        seq[last] = this.repetition(seq[last], start);
        continue;
      }
      const atom = this.atom(depth);
      if (atom === undefined) {
        last = -1; // a flag group: `(?i)*` has nothing to repeat
        continue;
      }
      seq.push(atom);
      last = seq.length - 1;
    }
    alts.push(seqOf(seq));
    return alts.length === 1 ? alts[0] : { t: 'alt', items: alts };
  }

  private repetition(sub: Node, start: number): Node {
    const c = this.p[this.pos++];
    let min: number;
    let max: number;
    if (c === '*') [min, max] = [0, -1];
    else if (c === '+') [min, max] = [1, -1];
    else if (c === '?') [min, max] = [0, 1];
    else {
      this.skipSpace();
      const a = this.decimal();
      this.skipSpace();
      if (this.eof()) throw this.error('unclosed counted repetition', start, this.pos);
      if (this.p[this.pos] === ',') {
        this.pos++;
        this.skipSpace();
        if (this.eof()) throw this.error('unclosed counted repetition', start, this.pos);
        const b = this.p[this.pos] === '}' ? undefined : this.decimal();
        // Rust's regex syntax requires the lower bound: `{,n}` is an error there.
        if (a === undefined) throw this.error('repetition quantifier expects a valid decimal', this.pos);
        min = a ?? 0;
        max = b ?? -1;
      } else {
        if (a === undefined) throw this.error('repetition quantifier expects a valid decimal', this.pos);
        min = max = a;
      }
      this.skipSpace();
      if (this.eof() || this.p[this.pos] !== '}') throw this.error('unclosed counted repetition', start, this.pos);
      this.pos++;
      if (max >= 0 && min > max) throw this.error('invalid repetition count range, the start must be <= the end', start, this.pos);
    }
    let greedy = true;
    if (!this.eof() && this.p[this.pos] === '?') {
      greedy = false;
      this.pos++;
    }
    if (this.flags.U) greedy = !greedy;
    return { t: 'rep', sub, min, max, greedy, counted: c === '{' };
  }

  private decimal(): number | undefined {
    const start = this.pos;
    while (!this.eof() && this.p[this.pos] >= '0' && this.p[this.pos] <= '9') this.pos++;
    if (start === this.pos) {
      if (!this.eof() && this.p[this.pos] !== ',' && this.p[this.pos] !== '}') throw this.error('repetition quantifier expects a valid decimal');
      return undefined;
    }
    const n = Number(this.p.slice(start, this.pos));
    if (n > 0xffffffff) throw this.error('decimal literal invalid', start, this.pos);
    return n;
  }

  /** One atom, or undefined for a flag-setting group `(?i)`. */
  private atom(depth: number): Node | undefined {
    const start = this.pos;
    const c = this.p[this.pos];
    switch (c) {
      case '(':
        return this.group(depth);
      case '[':
        return this.classToNode(this.bracketed());
      case '.': {
        this.pos++;
        return this.dot();
      }
      case '^':
        this.pos++;
        return { t: 'look', k: this.flags.m ? '(?m:^)' : '\\A' };
      case '$':
        this.pos++;
        return { t: 'look', k: this.flags.m ? '(?m:$)' : '\\z' };
      case '\\': {
        const e = this.escape(false);
        if (e.kind === 'look') return { t: 'look', k: e.look };
        if (e.kind === 'class') return this.classToNode(e.cls);
        return this.literal(e.cp, e.byte, start);
      }
      default:
        return this.literal(this.nextCp(), false, start);
    }
  }

  private dot(): Node {
    if (this.flags.u) {
      let r: Ranges = [0, MAX_CP];
      if (!this.flags.s) r = subtract(r, this.flags.R ? [10, 10, 13, 13] : [10, 10]);
      return utf8Node(r);
    }
    const s = new Uint8Array(256).fill(1);
    if (!this.flags.s) {
      s[10] = 0;
      if (this.flags.R) s[13] = 0;
    }
    return { t: 'set', s };
  }

  private literal(cp: number, isByte: boolean, start: number): Node {
    if (isByte && cp > 0x7f && !this.flags.u) return { t: 'set', s: byteSet([cp, cp]) };
    if (!this.flags.u) {
      if (cp > 0x7f) throw this.error('Unicode not allowed here', start, this.pos);
      const s = byteSet([cp, cp]);
      if (this.flags.i) foldAsciiBytes(s);
      return { t: 'set', s };
    }
    if (this.flags.i) return utf8Node(unicodeFold([cp, cp]));
    return utf8Node([cp, cp]);
  }

  private group(depth: number): Node | undefined {
    const start = this.pos;
    if (depth + 1 > NEST_LIMIT) throw this.error(`exceed the maximum number of nested parentheses/brackets (${NEST_LIMIT})`, start, start + 1);
    this.pos++; // (
    let capture = true;
    let name: string | undefined;
    const saved = { ...this.flags };
    if (this.p.startsWith('?', this.pos)) {
      this.pos++;
      if (this.p.startsWith('P<', this.pos) || (this.p.startsWith('<', this.pos) && !this.p.startsWith('<=', this.pos) && !this.p.startsWith('<!', this.pos))) {
        this.pos += this.p[this.pos] === 'P' ? 2 : 1;
        name = this.captureName();
      } else if (this.p.startsWith('=', this.pos) || this.p.startsWith('!', this.pos) || this.p.startsWith('<=', this.pos) || this.p.startsWith('<!', this.pos)) {
        throw this.error('look-around, including look-ahead and look-behind, is not supported', start, this.pos + 1);
      } else {
        capture = false;
        const end = this.flagItems();
        if (end === ')') return undefined; // (?flags) applies to the rest of the enclosing group
      }
    }
    if (capture) {
      this.captures++;
      if (name !== undefined) {
        if (this.names.has(name)) throw this.error('duplicate capture group name', start, this.pos);
        this.names.add(name);
      }
    }
    const sub = this.alternation(depth + 1);
    if (this.eof()) throw this.error('unclosed group', start, start + 1);
    this.pos++; // )
    this.flags = saved;
    return capture ? { t: 'cap', sub } : sub;
  }

  private captureName(): string {
    const start = this.pos;
    while (!this.eof() && this.p[this.pos] !== '>') {
      const ch = this.p[this.pos];
      const first = this.pos === start;
      const ok = /[A-Za-z_]/.test(ch) || (!first && /[0-9.[\]]/.test(ch));
      if (!ok) throw this.error('invalid capture group character');
      this.pos++;
    }
    if (this.eof()) throw this.error('unclosed capture group name', start, this.pos);
    if (this.pos === start) throw this.error('empty capture group name', start, start + 1);
    const name = this.p.slice(start, this.pos);
    this.pos++; // >
    return name;
  }

  /** Reads flags after `(?` up to `)` or `:`; sets them; returns the terminator. */
  private flagItems(): ')' | ':' {
    const seen = new Set<string>();
    let negate = false;
    let negStart = -1;
    let any = false;
    for (;;) {
      if (this.eof()) throw this.error('expected flag but got end of regex', this.pos, this.pos);
      const c = this.p[this.pos];
      if (c === ')' || c === ':') {
        // `(?)` is not an empty flag group: Rust reads it as a repetition with nothing to repeat.
        if (c === ')' && !any && !negate) throw this.error('repetition operator missing expression', this.pos - 1, this.pos);
        if (negate && !any) throw this.error('dangling flag negation operator', negStart);
        if (negate && this.p[this.pos - 1] === '-') throw this.error('dangling flag negation operator', negStart);
        this.pos++;
        return c;
      }
      if (c === '-') {
        if (negate) throw this.error('flag negation operator repeated');
        negate = true;
        negStart = this.pos;
        this.pos++;
        continue;
      }
      if (!'imsUuxR'.includes(c)) throw this.error('unrecognized flag');
      if (seen.has(c)) throw this.error('duplicate flag');
      seen.add(c);
      any = true;
      this.flags[c as keyof Flags] = !negate;
      this.pos++;
    }
  }

  // --- escapes -------------------------------------------------------------------------

  private escape(inClass: boolean):
    | { kind: 'lit'; cp: number; byte: boolean }
    | { kind: 'class'; cls: ClassValue }
    | { kind: 'look'; look: Look } {
    const start = this.pos;
    this.pos++; // backslash
    if (this.eof()) throw this.error('incomplete escape sequence, reached end of pattern prematurely', start, this.pos);
    const c = this.nextCp();
    const ch = String.fromCodePoint(c);
    switch (ch) {
      case 'a':
        return { kind: 'lit', cp: 7, byte: false };
      case 'f':
        return { kind: 'lit', cp: 12, byte: false };
      case 't':
        return { kind: 'lit', cp: 9, byte: false };
      case 'n':
        return { kind: 'lit', cp: 10, byte: false };
      case 'r':
        return { kind: 'lit', cp: 13, byte: false };
      case 'v':
        return { kind: 'lit', cp: 11, byte: false };
      case 'x':
      case 'u':
      case 'U':
        return this.hex(ch, start);
      case 'd':
      case 'D':
      case 's':
      case 'S':
      case 'w':
      case 'W':
        return { kind: 'class', cls: this.perl(ch.toLowerCase() as 'd' | 's' | 'w', ch !== ch.toLowerCase()) };
      case 'p':
      case 'P':
        return { kind: 'class', cls: this.unicodeProperty(ch === 'P', start) };
      case 'A':
      case 'z':
      case 'b':
      case 'B':
      case '<':
      case '>': {
        if (inClass) throw this.error('invalid escape sequence found in character class', start, this.pos);
        // `\b{start}` and friends are assertions; `\b{2}` is a repetition of `\b`.
        if (ch === '<' || ch === '>' || (ch === 'b' && this.p[this.pos] === '{' && !/[0-9,]/.test(this.p[this.pos + 1] ?? ''))) {
          throw this.error('this word boundary assertion is not supported by Rulesmith (use \\b)', start, this.pos);
        }
        return { kind: 'look', look: ch === 'A' ? '\\A' : ch === 'z' ? '\\z' : ch === 'b' ? '\\b' : '\\B' };
      }
    }
    if (c >= 0x30 && c <= 0x39) throw this.error('backreferences are not supported', start, this.pos);
    if (c <= 0x7f && !/[0-9A-Za-z<>]/.test(ch)) return { kind: 'lit', cp: c, byte: false };
    throw this.error('unrecognized escape sequence', start, this.pos);
  }

  private hex(kind: 'x' | 'u' | 'U', start: number): { kind: 'lit'; cp: number; byte: boolean } {
    if (this.eof()) throw this.error('incomplete escape sequence, reached end of pattern prematurely', start, this.pos);
    let digits: string;
    let fixed = false;
    if (this.p[this.pos] === '{') {
      const open = this.pos++;
      const close = this.p.indexOf('}', this.pos);
      if (close < 0) throw this.error('unclosed hexadecimal literal (missing closing brace)', open, this.p.length);
      digits = this.p.slice(this.pos, close);
      if (digits.length === 0) throw this.error('hexadecimal literal empty', open, close + 1);
      for (let k = 0; k < digits.length; k++) if (!/[0-9A-Fa-f]/.test(digits[k])) throw this.error('invalid hexadecimal digit', this.pos + k);
      this.pos = close + 1;
    } else {
      fixed = true;
      const n = kind === 'x' ? 2 : kind === 'u' ? 4 : 8;
      digits = '';
      for (let k = 0; k < n; k++) {
        if (this.eof()) throw this.error('incomplete escape sequence, reached end of pattern prematurely', start, this.pos);
        const d = this.p[this.pos];
        if (!/[0-9A-Fa-f]/.test(d)) throw this.error('invalid hexadecimal digit', this.pos);
        digits += d;
        this.pos++;
      }
    }
    const cp = parseInt(digits, 16);
    if (digits.length > 8 || cp > MAX_CP || (cp >= 0xd800 && cp <= 0xdfff)) {
      throw this.error('hexadecimal literal is not a Unicode scalar value', start, this.pos);
    }
    // Only the fixed `\xHH` form denotes a raw byte when Unicode mode is off.
    return { kind: 'lit', cp, byte: fixed && kind === 'x' };
  }

  private perl(k: 'd' | 's' | 'w', negated: boolean): ClassValue {
    if (!this.flags.u) {
      const r = k === 'd' ? [48, 57] : k === 's' ? [9, 13, 32, 32] : [48, 57, 65, 90, 95, 95, 97, 122];
      return { unicode: false, r: negated ? subtract([0, 255], r) : r };
    }
    const r = k === 'd' ? unicodeTable('Nd') : k === 's' ? unicodeTable('White_Space') : unicodeWord();
    return { unicode: true, r: negated ? complementScalars(r) : r };
  }

  private unicodeProperty(negated: boolean, start: number): ClassValue {
    if (this.eof()) throw this.error('incomplete escape sequence, reached end of pattern prematurely', start, this.pos);
    let name: string;
    if (this.p[this.pos] === '{') {
      const close = this.p.indexOf('}', this.pos);
      if (close < 0) throw this.error('unclosed Unicode class (missing closing brace)', start, this.p.length);
      name = this.p.slice(this.pos + 1, close);
      this.pos = close + 1;
    } else {
      name = String.fromCodePoint(this.nextCp());
    }
    if (!this.flags.u) throw this.error('Unicode not allowed here', start, this.pos);
    if (name.startsWith('^')) {
      negated = !negated;
      name = name.slice(1);
    }
    let valueNegated = false;
    const ne = name.indexOf('!=');
    const eq = name.indexOf('=');
    if (ne >= 0) {
      valueNegated = true;
      name = name.slice(ne + 2);
    } else if (eq >= 0) {
      name = name.slice(eq + 1);
    } else if (name.includes(':')) {
      name = name.slice(name.indexOf(':') + 1);
    }
    const r = lookupProperty(name);
    if (r === undefined) throw this.error('Unicode property not found', start, this.pos);
    return { unicode: true, r: negated !== valueNegated ? complementScalars(r) : r };
  }

  // --- classes -------------------------------------------------------------------------

  /** `[...]` at this.pos; returns its set (folded and negated per the flags). */
  private bracketed(): ClassValue {
    const start = this.pos;
    if (++this.classDepth > NEST_LIMIT) throw this.error(`exceed the maximum number of nested parentheses/brackets (${NEST_LIMIT})`, start, start + 1);
    try {
      return this.bracketedBody(start);
    } finally {
      this.classDepth--;
    }
  }

  private bracketedBody(start: number): ClassValue {
    this.pos++; // [
    let negated = false;
    if (this.p[this.pos] === '^') {
      negated = true;
      this.pos++;
    }
    let acc = this.classUnion(start, true);
    for (;;) {
      if (this.eof()) throw this.error('unclosed character class', start, this.p.length);
      const two = this.p.slice(this.pos, this.pos + 2);
      if (two === '&&' || two === '--' || two === '~~') {
        this.pos += 2;
        const rhs = this.classUnion(start, false);
        const a = this.fold(acc);
        const b = this.fold(rhs);
        acc = two === '&&' ? intersect(a, b) : two === '--' ? subtract(a, b) : union(subtract(a, b), subtract(b, a));
        continue;
      }
      // classUnion only returns at `]`, an operator, or the end
      this.pos++; // ]
      break;
    }
    acc = this.fold(acc);
    if (negated) acc = this.flags.u ? complementScalars(acc) : subtract([0, 255], acc);
    return { unicode: this.flags.u, r: acc };
  }

  private fold(r: Ranges): Ranges {
    if (!this.flags.i) return r;
    return this.flags.u ? unicodeFold(r) : foldAsciiRanges(r);
  }

  /** Items up to `]` or a set operator. `first`: a leading `]` is a literal. */
  private classUnion(start: number, first: boolean): Ranges {
    let acc: Ranges = [];
    let isFirst = first;
    for (;;) {
      this.skipX();
      if (this.eof()) throw this.error('unclosed character class', start, this.p.length);
      const c = this.p[this.pos];
      if (c === ']' && !isFirst) return acc;
      const two = this.p.slice(this.pos, this.pos + 2);
      if (!isFirst && (two === '&&' || two === '--' || two === '~~')) return acc;
      isFirst = false;
      if (c === '[') {
        const posix = this.posixClass();
        if (posix) {
          acc = union(acc, posix);
          continue;
        }
        const nested = this.bracketed();
        acc = union(acc, nested.r);
        continue;
      }
      const itemStart = this.pos;
      const item = this.classAtom();
      // A range `a-z`, unless the `-` ends the class or starts `--`.
      this.skipX();
      const isRange = this.p[this.pos] === '-' && this.p[this.pos + 1] !== ']' && this.p[this.pos + 1] !== '-' && this.pos + 1 < this.p.length;
      if (item.kind === 'class') {
        if (isRange) throw this.error('invalid range boundary, must be a literal', itemStart, this.pos);
        acc = union(acc, item.cls.r);
        continue;
      }
      if (isRange) {
        this.pos++;
        this.skipX();
        const endStart = this.pos;
        const end = this.classAtom();
        if (end.kind === 'class') throw this.error('invalid range boundary, must be a literal', endStart, this.pos);
        const lo = this.classByte(item, itemStart);
        const hi = this.classByte(end, endStart);
        if (lo > hi) throw this.error('invalid character class range, the start must be <= the end', itemStart, this.pos);
        acc = union(acc, [lo, hi]);
      } else {
        const v = this.classByte(item, itemStart);
        acc = union(acc, [v, v]);
      }
    }
  }

  /** The code point (Unicode mode) or byte of a class literal. */
  private classByte(item: { cp: number; byte: boolean }, start: number): number {
    if (this.flags.u) return item.cp;
    if (item.byte || item.cp <= 0x7f) return item.cp;
    throw this.error('Unicode not allowed here', start, this.pos);
  }

  private classAtom(): { kind: 'lit'; cp: number; byte: boolean } | { kind: 'class'; cls: ClassValue } {
    if (this.p[this.pos] === '\\') {
      const e = this.escape(true);
      if (e.kind === 'look') throw this.error('invalid escape sequence found in character class');
      return e;
    }
    return { kind: 'lit', cp: this.nextCp(), byte: false };
  }

  /** `[:alpha:]` / `[:^alpha:]` inside a class (always ASCII). */
  private posixClass(): Ranges | undefined {
    const m = /^\[:(\^?)([a-z]+):\]/.exec(this.p.slice(this.pos, this.pos + 16));
    if (!m) return undefined;
    const r = POSIX[m[2]];
    if (!r) throw this.error('invalid ASCII character class', this.pos, this.pos + m[0].length);
    this.pos += m[0].length;
    if (!m[1]) return r;
    return this.flags.u ? complementScalars(r) : subtract([0, 255], r);
  }

  private classToNode(c: ClassValue): Node {
    return c.unicode ? utf8Node(c.r) : { t: 'set', s: byteSet(c.r) };
  }
}

interface ClassValue {
  /** Code points (Unicode mode) or bytes. */
  readonly unicode: boolean;
  readonly r: Ranges;
}

const POSIX: Record<string, Ranges> = {
  alnum: [48, 57, 65, 90, 97, 122],
  alpha: [65, 90, 97, 122],
  ascii: [0, 127],
  blank: [9, 9, 32, 32],
  cntrl: [0, 31, 127, 127],
  digit: [48, 57],
  graph: [33, 126],
  lower: [97, 122],
  print: [32, 126],
  punct: [33, 47, 58, 64, 91, 96, 123, 126],
  space: [9, 13, 32, 32],
  upper: [65, 90],
  word: [48, 57, 65, 90, 95, 95, 97, 122],
  xdigit: [48, 57, 65, 70, 97, 102],
};

function seqOf(items: Node[]): Node {
  return items.length === 1 ? items[0] : { t: 'seq', items };
}

// ---------------------------------------------------------------------------------------
// Range sets

function normalize(pairs: [number, number][]): Ranges {
  pairs.sort((a, b) => a[0] - b[0]);
  const out: Ranges = [];
  for (const [lo, hi] of pairs) {
    const n = out.length;
    if (n > 0 && lo <= out[n - 1] + 1) out[n - 1] = Math.max(out[n - 1], hi);
    else out.push(lo, hi);
  }
  return out;
}

function toPairs(r: Ranges): [number, number][] {
  const out: [number, number][] = [];
  for (let i = 0; i < r.length; i += 2) out.push([r[i], r[i + 1]]);
  return out;
}

/** a or b, both sorted and disjoint: merged in one pass. */
function union(a: Ranges, b: Ranges): Ranges {
  if (a.length === 0) return b;
  if (b.length === 0) return a;
  const out: Ranges = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    let lo: number;
    let hi: number;
    if (j >= b.length || (i < a.length && a[i] <= b[j])) {
      [lo, hi] = [a[i], a[i + 1]];
      i += 2;
    } else {
      [lo, hi] = [b[j], b[j + 1]];
      j += 2;
    }
    const n = out.length;
    if (n > 0 && lo <= out[n - 1] + 1) out[n - 1] = Math.max(out[n - 1], hi);
    else out.push(lo, hi);
  }
  return out;
}

/** a minus b, both sorted and disjoint: one pass over each. */
function subtract(a: Ranges, b: Ranges): Ranges {
  const out: Ranges = [];
  let j = 0;
  for (let i = 0; i < a.length; i += 2) {
    let lo = a[i];
    const hi = a[i + 1];
    while (j < b.length && b[j + 1] < lo) j += 2;
    for (let k = j; k < b.length && b[k] <= hi; k += 2) {
      if (b[k] > lo) out.push(lo, b[k] - 1);
      lo = Math.max(lo, b[k + 1] + 1);
      if (lo > hi) break;
    }
    if (lo <= hi) out.push(lo, hi);
  }
  return out;
}

function intersect(a: Ranges, b: Ranges): Ranges {
  const out: [number, number][] = [];
  for (const [alo, ahi] of toPairs(a)) {
    for (const [blo, bhi] of toPairs(b)) {
      const lo = Math.max(alo, blo);
      const hi = Math.min(ahi, bhi);
      if (lo <= hi) out.push([lo, hi]);
    }
  }
  return normalize(out);
}

const SURROGATES: Ranges = [0xd800, 0xdfff];

function complementScalars(r: Ranges): Ranges {
  return subtract(subtract([0, MAX_CP], r), SURROGATES);
}

function byteSet(r: Ranges): Uint8Array {
  const s = new Uint8Array(256);
  for (let i = 0; i < r.length; i += 2) for (let b = r[i]; b <= Math.min(r[i + 1], 255); b++) s[b] = 1;
  return s;
}

function foldAsciiBytes(s: Uint8Array): void {
  for (let b = 65; b <= 90; b++) {
    if (s[b] || s[b + 32]) s[b] = s[b + 32] = 1;
  }
}

function foldAsciiRanges(r: Ranges): Ranges {
  const s = byteSet(r);
  foldAsciiBytes(s);
  return union(r, setToRanges(s));
}

function setToRanges(s: Uint8Array): Ranges {
  const out: Ranges = [];
  for (let b = 0; b < 256; b++) {
    if (!s[b]) continue;
    let e = b;
    while (e + 1 < 256 && s[e + 1]) e++;
    out.push(b, e);
    b = e;
  }
  return out;
}

// ---------------------------------------------------------------------------------------
// Unicode data, borrowed from re2js's tables by compiling a class and reading the
// instruction's rune ranges (re2js does not export its tables).

const tableCache = new Map<string, Ranges | null>();

function re2Ranges(classSource: string): Ranges | null {
  const hit = tableCache.get(classSource);
  if (hit !== undefined) return hit;
  let out: Ranges | null = null;
  try {
    const prog = (RE2JS.compile(classSource) as unknown as { re2Input: { prog: { inst: { op: number; runes: Int32Array }[] } } }).re2Input.prog;
    for (const inst of prog.inst) {
      // 8 = RUNE, 9 = RUNE1, 10 = RUNE_ANY, 11 = RUNE_ANY_NOT_NL (all carry their ranges)
      if (inst.op < 8 || inst.op > 11) continue;
      const runes = Array.from(inst.runes);
      out = inst.op === 9 ? [runes[0], runes[0]] : normalize(toPairs(runes));
      break;
    }
  } catch {
    out = null;
  }
  tableCache.set(classSource, out);
  return out;
}

function rangesToRe2Class(r: Ranges): string {
  let s = '';
  for (let i = 0; i < r.length; i += 2) s += `\\x{${r[i].toString(16)}}-\\x{${r[i + 1].toString(16)}}`;
  return s;
}

function unicodeTable(name: string): Ranges {
  return re2Ranges(`[\\p{${name}}]`) ?? [];
}

/** Rust's Unicode `\w`: Alphabetic, marks, decimal digits, connector punctuation, joiners. */
function unicodeWord(): Ranges {
  return (unicodeWordRanges ??= union(union(union(unicodeTable('Alphabetic'), unicodeTable('M')), union(unicodeTable('Nd'), unicodeTable('Pc'))), [0x200c, 0x200d]));
}

let unicodeWordRanges: Ranges | undefined;

/** Unicode simple case folding of a set (re2js's orbit tables). */
function unicodeFold(r: Ranges): Ranges {
  if (r.length === 0) return r;
  // The sentinel U+10FFFF keeps re2js from reducing a one-rune class to a literal.
  const folded = re2Ranges(`(?i)[${rangesToRe2Class(r)}\\x{10ffff}]`);
  if (!folded) return r;
  const hasMax = r[r.length - 1] === MAX_CP;
  return hasMax ? folded : subtract(folded, [MAX_CP, MAX_CP]);
}

const GENERAL_CATEGORY_ALIASES: Record<string, string> = {
  letter: 'L', casedletter: 'LC', uppercaseletter: 'Lu', lowercaseletter: 'Ll', titlecaseletter: 'Lt',
  modifierletter: 'Lm', otherletter: 'Lo', mark: 'M', combiningmark: 'M', nonspacingmark: 'Mn',
  spacingmark: 'Mc', enclosingmark: 'Me', number: 'N', decimalnumber: 'Nd', digit: 'Nd', letternumber: 'Nl',
  othernumber: 'No', punctuation: 'P', connectorpunctuation: 'Pc', dashpunctuation: 'Pd',
  openpunctuation: 'Ps', closepunctuation: 'Pe', initialpunctuation: 'Pi', finalpunctuation: 'Pf',
  otherpunctuation: 'Po', symbol: 'S', mathsymbol: 'Sm', currencysymbol: 'Sc', modifiersymbol: 'Sk',
  othersymbol: 'So', separator: 'Z', spaceseparator: 'Zs', lineseparator: 'Zl', paragraphseparator: 'Zp',
  other: 'C', control: 'Cc', cntrl: 'Cc', format: 'Cf', surrogate: 'Cs', privateuse: 'Co', unassigned: 'Cn',
  any: 'Any', ascii: 'Ascii', assigned: 'Assigned', whitespace: 'White_Space', space: 'White_Space',
  alpha: 'Alphabetic', alphabetic: 'Alphabetic', lower: 'Lowercase', lowercase: 'Lowercase',
  upper: 'Uppercase', uppercase: 'Uppercase', hexdigit: 'Hex_Digit', asciihexdigit: 'ASCII_Hex_Digit',
};

/** Resolves a `\p{…}` name loosely (case, `_`, `-`, spaces ignored) against re2js's tables. */
function lookupProperty(raw: string): Ranges | undefined {
  const loose = raw.toLowerCase().replace(/[\s_-]/g, '');
  const candidates = [raw, GENERAL_CATEGORY_ALIASES[loose], loose.length <= 2 ? loose[0].toUpperCase() + loose.slice(1) : undefined];
  // Title_Case of the words as written: `old italic` -> `Old_Italic`.
  candidates.push(
    raw
      .split(/[\s_-]+/)
      .filter(Boolean)
      .map((w) => w[0].toUpperCase() + w.slice(1).toLowerCase())
      .join('_'),
  );
  for (const c of candidates) {
    if (!c || !/^[A-Za-z_]+$/.test(c)) continue;
    const r = re2Ranges(`[\\p{${c}}]`);
    if (r) return c === 'Any' ? [0, MAX_CP] : r;
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------
// UTF-8 byte sequences for a code point set

/**
 * A Unicode class as a node: its UTF-8 sequences only (the byte-level alternation is
 * spelled out when emitted). Shared between equal classes, so that `(?u)\\w` written
 * 1,000 times is one set of sequences (nodes are immutable).
 */
function utf8Node(r: Ranges): Node {
  const same = classNodesByRanges.get(r);
  if (same) return same;
  const key = r.join(',');
  const hit = classNodes.get(key);
  if (hit) {
    classNodesByRanges.set(r, hit);
    return hit;
  }
  const scalars = subtract(r, SURROGATES);
  const seqs: Utf8Seqs = { count: 0, data: [] };
  for (let i = 0; i < scalars.length; i += 2) utf8Sequences(scalars[i], scalars[i + 1], seqs);
  const node: Node = { t: 'class', seqs };
  if (classNodes.size >= CLASS_NODES_MAX) classNodes.clear();
  classNodes.set(key, node);
  classNodesByRanges.set(r, node);
  return node;
}

const classNodes = new Map<string, Node>();
/** The same, by the ranges' identity (the Perl classes' ranges are computed once). */
const classNodesByRanges = new WeakMap<Ranges, Node>();
const CLASS_NODES_MAX = 256;

// ---------------------------------------------------------------------------------------
// Size estimate (RE2 program units, like re2js's calcSize) and emission

function size(n: Node): number {
  switch (n.t) {
    case 'set':
    case 'look':
      return 1;
    case 'class':
      // An alternation of the sequences, one unit per byte range.
      return Math.max(1, (n.seqs.data.length - n.seqs.count) / 2 + n.seqs.count - 1);
    case 'seq':
      return Math.max(1, n.items.reduce((a, x) => a + size(x), 0));
    case 'alt':
      return n.items.reduce((a, x) => a + size(x), 0) + n.items.length - 1;
    case 'cap':
      return 2 + size(n.sub);
    case 'rep': {
      const s = size(n.sub);
      if (n.max < 0) return n.min === 0 ? 2 + s : 1 + n.min * s;
      return Math.max(1, n.max * s + (n.max - n.min));
    }
  }
}

/** re2js (like Go) rejects counted repetitions whose nested product of counts exceeds 1000. */
const REPEAT_LIMIT = 1000;

function repeatValid(n: Node, limit: number): boolean {
  switch (n.t) {
    case 'set':
    case 'look':
    case 'class':
      return true;
    case 'seq':
    case 'alt':
      return n.items.every((x) => repeatValid(x, limit));
    case 'cap':
      return repeatValid(n.sub, limit);
    case 'rep': {
      if (isSimpleRep(n)) return repeatValid(n.sub, limit);
      let m = n.max;
      if (m === 0) return true;
      if (m < 0) m = n.min;
      if (m > limit) return false;
      return repeatValid(n.sub, m > 0 ? Math.floor(limit / m) : limit);
    }
  }
}

function isSimpleRep(n: { min: number; max: number }): boolean {
  return (n.min === 0 && n.max < 0) || (n.min === 1 && n.max < 0) || (n.min === 0 && n.max === 1);
}

type Ctx = 'top' | 'seq' | 'rep';

function emit(n: Node, ctx: Ctx, caps: boolean): string {
  switch (n.t) {
    case 'set':
      return emitSet(n.s);
    case 'class':
      return emitClass(n.seqs, ctx);
    case 'look':
      return ctx === 'rep' ? `(?:${n.k})` : n.k;
    case 'cap':
      return caps ? `(${emit(n.sub, 'top', caps)})` : `(?:${emit(n.sub, 'top', caps)})`;
    case 'seq': {
      if (n.items.length === 0) return '(?:)';
      if (n.items.length === 1) return emit(n.items[0], ctx, caps);
      const s = n.items.map((x) => emit(x, 'seq', caps)).join('');
      return ctx === 'rep' && n.items.length > 1 ? `(?:${s})` : s;
    }
    case 'alt': {
      const s = n.items.map((x) => emit(x, 'top', caps)).join('|');
      return ctx === 'top' ? s : `(?:${s})`;
    }
    case 'rep': {
      const s = emitRep(n, caps);
      return ctx === 'rep' ? `(?:${s})` : s;
    }
  }
}

function repOp(min: number, max: number, greedy: boolean): string {
  const op = min === 0 && max < 0 ? '*' : min === 1 && max < 0 ? '+' : min === 0 && max === 1 ? '?' : max < 0 ? `{${min},}` : min === max ? `{${min}}` : `{${min},${max}}`;
  return greedy ? op : op + '?';
}

function emitRep(n: Extract<Node, { t: 'rep' }>, caps: boolean): string {
  if (repeatValid(n, REPEAT_LIMIT)) return emit(n.sub, 'rep', caps) + repOp(n.min, n.max, n.greedy);
  // Too many counted repetitions for re2js: split into a concatenation of chunks with the
  // same language (x{2500} = x{1000}x{1000}x{500}); only the last mandatory chunk keeps
  // the capture groups so that group numbers do not change.
  let k = REPEAT_LIMIT;
  while (k > 1 && !repeatValid(n.sub, Math.floor(REPEAT_LIMIT / k))) k = Math.floor(k / 2);
  const parts: string[] = [];
  const chunk = (count: number, optional: boolean, withCaps: boolean): void => {
    if (count <= 0) return;
    const sub = emit(n.sub, 'rep', withCaps);
    parts.push(sub + repOp(optional ? 0 : count, count, n.greedy));
  };
  const mandatory = n.min;
  const full = Math.floor(mandatory / k);
  const rest = mandatory % k;
  const capsIn = rest > 0 ? full : full - 1; // index of the chunk that keeps captures
  for (let i = 0; i < full; i++) chunk(k, false, caps && i === capsIn);
  chunk(rest, false, caps);
  if (n.max < 0) parts.push(emit(n.sub, 'rep', caps && mandatory === 0) + (n.greedy ? '*' : '*?'));
  else {
    let opt = n.max - n.min;
    while (opt > 0) {
      const c = Math.min(k, opt);
      chunk(c, true, caps && mandatory === 0 && opt === c);
      opt -= c;
    }
  }
  return parts.length === 1 ? parts[0] : `(?:${parts.join('')})`;
}

function emitClass(seqs: Utf8Seqs, ctx: Ctx): string {
  if (seqs.count === 0) return emitSet(new Uint8Array(256));
  const alts: string[] = [];
  const d = seqs.data;
  for (let p = 0; p < d.length; p += 1 + 2 * d[p]) {
    let out = '';
    for (let k = p + 1; k < p + 1 + 2 * d[p]; k += 2) out += emitSet(byteSet([d[k], d[k + 1]]));
    alts.push(d[p] > 1 && ctx === 'rep' && seqs.count === 1 ? `(?:${out})` : out);
  }
  if (alts.length === 1) return alts[0];
  const s = alts.join('|');
  return ctx === 'top' ? s : `(?:${s})`;
}

function hex2(b: number): string {
  return `\\x${b.toString(16).padStart(2, '0')}`;
}

function emitSet(s: Uint8Array): string {
  let count = 0;
  let only = -1;
  for (let b = 0; b < 256; b++) {
    if (!s[b]) continue;
    count++;
    only = b;
  }
  if (count === 0) return '[^\\x00-\\x{10ffff}]';
  if (count === 1) return /[0-9A-Za-z]/.test(String.fromCharCode(only)) ? String.fromCharCode(only) : hex2(only);
  let out = '[';
  for (let b = 0; b < 256; b++) {
    if (!s[b]) continue;
    let e = b;
    while (e + 1 < 256 && s[e + 1]) e++;
    out += e === b ? hex2(b) : `${hex2(b)}-${hex2(e)}`;
    b = e;
  }
  return out + ']';
}

// ---------------------------------------------------------------------------------------
// The same byte-level tree as a JavaScript regex, for `test`

/**
 * Whether V8's linear-time fallback is on in this process (server/src/regexBudget.ts
 * marks it): only then may a user regex run on irregexp, which backtracks. Read through a
 * global symbol so that the core imports nothing of the adapters.
 */
function linearFallbackOn(): boolean {
  return (globalThis as Record<symbol, unknown>)[Symbol.for('rulesmith.regexLinearFallback')] === true;
}

/**
 * The tree as a JavaScript RegExp for unanchored search (`test`), or undefined when it must
 * stay on re2js. Same language: every set is an explicit byte class (no flags, so no case
 * folding or Unicode), and JS without the `m` flag reads `^`/`$` as \A/\z, `\b`/`\B` as
 * ASCII word boundaries, like the engine with Unicode off. Whether a search finds a match
 * does not depend on match priorities, so only the language matters. Multi-line anchors
 * would need lookbehind, which V8's linear engine lacks, so those stay on re2js; so do
 * patterns whose counted repetitions the linear engine refuses (V8 11: counts up to 16, the
 * product of nested counts up to 16): a pattern that backtracks too much must be one the
 * linear engine takes over. `force` skips the process check (tests).
 */
function nativeTest(tree: Node, force = false): RegExp | undefined {
  if (!force && !linearFallbackOn()) return undefined;
  const source = emitJs(tree, 1);
  return source === undefined ? undefined : new RegExp(source);
}

/** Largest count, and product of nested counts, V8's linear engine accepts. */
const LINEAR_REPLICATION = 16;

function emitJs(n: Node, replication: number): string | undefined {
  switch (n.t) {
    case 'set':
      return emitJsSet(n.s);
    case 'class': {
      // A Unicode class: one alternative per UTF-8 sequence of byte classes.
      if (n.seqs.count === 0) return emitJsSet(new Uint8Array(256));
      const alts: string[] = [];
      const d = n.seqs.data;
      for (let p = 0; p < d.length; p += 1 + 2 * d[p]) {
        let out = '';
        for (let k = p + 1; k < p + 1 + 2 * d[p]; k += 2) out += emitJsSet(byteSet([d[k], d[k + 1]]));
        alts.push(out);
      }
      return `(?:${alts.join('|')})`;
    }
    case 'look':
      return n.k === '\\A' ? '^' : n.k === '\\z' ? '$' : n.k === '\\b' || n.k === '\\B' ? n.k : undefined;
    case 'cap':
      return emitJs(n.sub, replication);
    case 'seq':
    case 'alt': {
      const parts: string[] = [];
      for (const x of n.items) {
        const p = emitJs(x, replication);
        if (p === undefined) return undefined;
        parts.push(`(?:${p})`);
      }
      return parts.join(n.t === 'seq' ? '' : '|');
    }
    case 'rep': {
      if (n.min > LINEAR_REPLICATION || n.max > LINEAR_REPLICATION) return undefined;
      // As V8 counts (an upper bound of it): a finite repetition copies its body max times.
      const local = n.max < 0 ? n.min + 1 : n.max;
      if (replication * local > LINEAR_REPLICATION) return undefined;
      const sub = emitJs(n.sub, replication * local);
      return sub === undefined ? undefined : `(?:${sub})${repOp(n.min, n.max, n.greedy)}`;
    }
  }
}

/** A byte class in JS syntax: RE2's, but for the empty class (RE2 has no `[]`). */
function emitJsSet(s: Uint8Array): string {
  return s.some((x) => x) ? emitSet(s) : '[]';
}

/** Both engines for one pattern, uncached (tests compare them). */
export function regexEngines(pattern: string): { re2: (s: string) => boolean; native: ((s: string) => boolean) | undefined } | undefined {
  const { tree } = parseAndCheck(pattern);
  if (!tree) return undefined;
  const re = RE2JS.compile(emit(tree, 'top', true));
  const native = nativeTest(tree, true);
  return { re2: (s) => re.test(s), native: native && ((s) => native.test(s)) };
}
