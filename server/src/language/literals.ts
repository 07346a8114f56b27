/**
 * Pure decoders for literal tokens, reproducing the engine's lexers (reference §1.4,
 * §1.5, §1.8, §1.10) and their exact error texts (§7).
 *
 * Spans are UTF-16 offsets relative to the literal text passed in; the checker adds the
 * literal's position. Several engine lexers read past the end of a token (a `\x` escape
 * can swallow the closing quote and the next character; `80` after `http.host eq` needs
 * one more character for the separator), so their messages depend on what follows.
 * Those functions take `after`: the source text right after the literal ('' = end of
 * input, the default). Spans may then reach into `after`; they are still valid source
 * positions relative to the literal's start.
 *
 * When a token holds more than the engine would read as one literal (`1.5` after
 * `tcp.port eq`), the rest is reported as `unrecognised input` (code
 * 'unrecognised-input'), which is what the engine says at the top level; inside
 * parentheses or function arguments it would instead expect `)` or `,`, which the
 * checker may substitute.
 */
import type { DiagnosticCode } from './diagnostics';
import type { IntRange, IntValue } from './ir';
import { binaryToUtf8, utf8ToBinary } from './bytes';

export type LitError = {
  ok: false;
  message: string;
  start: number;
  end: number;
  code: DiagnosticCode;
  hint?: string;
  /** For the quick fix: `replacement` is the whole literal token as it should be. */
  data?: Readonly<Record<string, unknown>>;
};

export type LitResult<T> = { ok: true; value: T } | LitError;

/** A lexer step: a value and where it stopped. */
type Lexed<T> = { ok: true; value: T; end: number } | LitError;

function fail(code: DiagnosticCode, message: string, start: number, end: number, hint?: string): LitError {
  return hint === undefined ? { ok: false, message, start, end, code } : { ok: false, message, start, end, code, hint };
}

function ok<T>(value: T): LitResult<T> {
  return { ok: true, value };
}

function leftover(start: number, end: number, hint?: string): LitError {
  return fail('unrecognised-input', 'unrecognised input', start, end, hint);
}

// ---------------------------------------------------------------------------------
// Rust's integer parsing (`from_str_radix`), whose error texts the engine shows.

export const PARSE_INT_EMPTY = 'cannot parse integer from empty string';
export const PARSE_INT_INVALID = 'invalid digit found in string';
export const PARSE_INT_TOO_LARGE = 'number too large to fit in target type';
export const PARSE_INT_TOO_SMALL = 'number too small to fit in target type';

const I64_MIN = -(2n ** 63n);
const I64_MAX = 2n ** 63n - 1n;

function digitValue(code: number, radix: number): number {
  let d = -1;
  if (code >= 0x30 && code <= 0x39) d = code - 0x30;
  else if (code >= 0x61 && code <= 0x7a) d = code - 0x61 + 10;
  else if (code >= 0x41 && code <= 0x5a) d = code - 0x41 + 10;
  return d < radix ? d : -1;
}

/**
 * Rust's `T::from_str_radix` for an integer type with the given bounds: a lone `+`/`-`
 * is invalid, a leading `+` is accepted (also for unsigned types, so `\x+f` is a byte),
 * `-` only for signed types; each digit is checked before the overflow of its step.
 */
export function rustParseInt(s: string, radix: number, min: bigint, max: bigint): bigint | { error: string } {
  if (s === '') return { error: PARSE_INT_EMPTY };
  if (s === '+' || s === '-') return { error: PARSE_INT_INVALID };
  let i = 0;
  let negative = false;
  if (s[0] === '+') i = 1;
  else if (s[0] === '-' && min < 0n) {
    negative = true;
    i = 1;
  }
  const r = BigInt(radix);
  let acc = 0n;
  for (; i < s.length; i++) {
    const d = digitValue(s.charCodeAt(i), radix);
    if (d < 0) return { error: PARSE_INT_INVALID };
    acc = negative ? acc * r - BigInt(d) : acc * r + BigInt(d);
    if (acc > max) return { error: PARSE_INT_TOO_LARGE };
    if (acc < min) return { error: PARSE_INT_TOO_SMALL };
  }
  return acc;
}

/** Number when it is a safe integer, bigint otherwise (ir.ts IntValue). */
export function toIntValue(b: bigint): IntValue {
  return b >= BigInt(Number.MIN_SAFE_INTEGER) && b <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(b) : b;
}

/** Rust's `{:?}` of a string, as used in `invalid list name {:?}`. */
function rustDebugString(s: string): string {
  let out = '"';
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    if (ch === '"' || ch === '\\') out += '\\' + ch;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (ch === '\0') out += '\\0';
    else if (c < 0x20 || (c >= 0x7f && c < 0xa0)) out += `\\u{${c.toString(16)}}`;
    else out += ch;
  }
  return out + '"';
}

/** UTF-16 length of the code point at i (0 at the end). */
function cpLen(s: string, i: number): number {
  if (i >= s.length) return 0;
  return s.codePointAt(i)! > 0xffff ? 2 : 1;
}

/** The engine's `take(n)`: n characters (code points) from pos, or how many there were. */
function take(s: string, pos: number, n: number): { end: number } | { found: number } {
  let i = pos;
  for (let k = 0; k < n; k++) {
    if (i >= s.length) return { found: k };
    i += cpLen(s, i);
  }
  return { end: i };
}

/**
 * A fixed-width byte (`\xHH`, `\OOO`, a hex-bytes pair): take exactly n characters, then
 * parse them as a u8. Too few characters left in the input is CountMismatch (`expected 2
 * characters, but found 1`), anything unparsable the ParseInt message.
 */
function fixedByte(s: string, pos: number, n: number, radix: number, code: DiagnosticCode, hint?: string): Lexed<number> {
  const t = take(s, pos, n);
  if ('found' in t) return fail(code, `expected ${n} characters, but found ${t.found}`, pos, s.length, hint);
  const r = rustParseInt(s.slice(pos, t.end), radix, 0n, 255n);
  if (typeof r !== 'bigint') return fail(code, `${r.error} while parsing with radix ${radix}`, pos, t.end, hint);
  return { ok: true, value: Number(r), end: t.end };
}

// ---------------------------------------------------------------------------------
// Quoted, regex-quoted and raw strings.

const MISSING_QUOTE = 'could not find an ending quote';

const ESCAPE_EQUIVALENTS: Readonly<Record<string, string>> = {
  n: '\\x0a',
  t: '\\x09',
  r: '\\x0d',
  a: '\\x07',
  b: '\\x08',
  f: '\\x0c',
  v: '\\x0b',
  e: '\\x1b',
};

/** `"\x"`, `"\x4"`: most often a backslash meant literally (a Windows path, a regex). */
const HEX_ESCAPE_HINT =
  '`\\x` starts a byte written as two hex digits (`\\x41` is "A"). For a backslash followed by x write `\\\\x`, or use a raw string `r"…"` in which backslashes are literal.';
const OCTAL_ESCAPE_HINT =
  'A backslash before a digit starts a byte written as three octal digits (`\\101` is "A"). For a backslash write `\\\\`, or use a raw string `r"…"` in which backslashes are literal.';

function escapeHint(ch: string): string {
  const base = 'Only \\", \\\\, \\xHH and \\OOO are escapes; \\n, \\t, \\u… and the like do not exist: ';
  const hex = ESCAPE_EQUIVALENTS[ch];
  if (hex) return `${base}write ${hex} instead of \\${ch}, or use a raw string r"…" in which backslashes are literal.`;
  if (ch === '/' || ch === "'") return `${base}write ${ch} without the backslash.`;
  return (
    `${base}write \\\\ for a backslash, or use a raw string r"…" in which backslashes are literal ` +
    '(a regex after `matches` keeps its backslashes as written).'
  );
}

/**
 * Decodes `"…"` (text includes the quotes) into a binary string: `\"`, `\\`, `\xHH`
 * (exactly two hex digits), `\OOO` (exactly three octal digits, at most \377); other
 * characters are UTF-8 encoded.
 *
 * Truncated escapes, as the engine reads them: it takes the next 2 (or 3) characters
 * whatever they are, including the closing quote and what follows the literal. So
 * `"\x4"` always fails with the radix message on `4"`, while `"\x"` takes the quote plus
 * one more character: at the end of the input that is CountMismatch (`expected 2
 * characters, but found 1`), otherwise the radix message. Hence `after`.
 */
export function decodeQuoted(text: string, after = ''): LitResult<string> {
  if (text[0] !== '"') return fail('syntax-error', 'expected " or r', 0, Math.min(1, text.length));
  const s = text + after;
  let out = '';
  let runStart = 1;
  let i = 1;
  for (;;) {
    if (i >= s.length) return fail('unterminated-string', MISSING_QUOTE, 0, text.length);
    const c = s[i];
    if (c === '"') break;
    if (c !== '\\') {
      i++;
      continue;
    }
    out += utf8ToBinary(s.slice(runStart, i));
    const j = i + 1;
    if (j >= s.length) return fail('unterminated-string', MISSING_QUOTE, 0, text.length);
    const e = s[j];
    if (e === '"' || e === '\\') {
      out += e;
      i = j + 1;
    } else if (e === 'x') {
      const b = fixedByte(s, j + 1, 2, 16, 'invalid-escape', HEX_ESCAPE_HINT);
      if (!b.ok) return b;
      out += String.fromCharCode(b.value);
      i = b.end;
    } else if (e >= '0' && e <= '7') {
      const b = fixedByte(s, j, 3, 8, 'invalid-escape', OCTAL_ESCAPE_HINT);
      if (!b.ok) return b;
      out += String.fromCharCode(b.value);
      i = b.end;
    } else {
      const ch = String.fromCodePoint(s.codePointAt(j)!);
      return fail('invalid-escape', 'expected ", xHH or OOO after \\', j, j + ch.length, escapeHint(ch));
    }
    runStart = i;
  }
  out += utf8ToBinary(s.slice(runStart, i));
  i++;
  if (i > text.length) return fail('unterminated-string', MISSING_QUOTE, 0, text.length);
  if (i < text.length) return leftover(i, text.length);
  return ok(out);
}

/**
 * The regex-literal lexing of `"…"` after `matches`/`~`: returns the regex source (a
 * normal JS string). `\X` is kept as `\X` except `\"` outside a character class, which
 * becomes `"`. Classes are tracked naively (unescaped `[` opens, unescaped `]` closes,
 * no nesting); inside one an unescaped `"` does not end the string and `\"` stays.
 */
export function decodeRegexQuoted(text: string): LitResult<string> {
  if (text[0] !== '"') return fail('syntax-error', 'expected " or r', 0, Math.min(1, text.length));
  let out = '';
  let inClass = false;
  let i = 1;
  for (;;) {
    if (i >= text.length) return fail('unterminated-string', MISSING_QUOTE, 0, text.length);
    const c = text[i];
    if (c === '\\') {
      const n = cpLen(text, i + 1);
      if (n > 0) {
        const e = text.slice(i + 1, i + 1 + n);
        out += inClass || e !== '"' ? '\\' + e : e;
      }
      i += 1 + n;
      continue;
    }
    if (c === '"' && !inClass) break;
    if (c === '[' && !inClass) inClass = true;
    else if (c === ']' && inClass) inClass = false;
    out += c;
    i++;
  }
  i++;
  if (i < text.length) return leftover(i, text.length);
  return ok(out);
}

/**
 * The content of `r"…"`, `r#"…"#`, … as written (a JS string, no escapes). It closes
 * at the first `"` followed by at least as many `#` as opened it.
 */
export function rawStringContent(text: string): LitResult<string> {
  if (text[0] !== 'r') return fail('syntax-error', 'expected " or r', 0, Math.min(1, text.length));
  let hashes = 0;
  while (text[1 + hashes] === '#') hashes++;
  if (hashes > 255) {
    return fail(
      'invalid-raw-string',
      "invalid raw string hash count, there can't be more than 255 #s",
      1,
      1 + hashes,
      'Use fewer # around the raw string: just enough that no "### sequence inside closes it.',
    );
  }
  const q = 1 + hashes;
  if (text[q] !== '"') return fail('invalid-raw-string', 'expected " or #', q, q + cpLen(text, q));
  for (let i = q + 1; i < text.length; i++) {
    if (text[i] !== '"') continue;
    let n = 0;
    while (n < hashes && text[i + 1 + n] === '#') n++;
    if (n < hashes) continue;
    const end = i + 1 + hashes;
    if (end < text.length) return leftover(end, text.length);
    return ok(text.slice(q + 1, i));
  }
  return fail('unterminated-string', MISSING_QUOTE, 0, text.length);
}

/** A raw string decoded to bytes (binary string, UTF-8). */
export function decodeRaw(text: string): LitResult<string> {
  const r = rawStringContent(text);
  return r.ok ? ok(utf8ToBinary(r.value)) : r;
}

// ---------------------------------------------------------------------------------
// Integers (§1.5).

function isHexDigit(code: number): boolean {
  return (code >= 0x30 && code <= 0x39) || (code >= 0x61 && code <= 0x66) || (code >= 0x41 && code <= 0x46);
}

/** The engine swallows every hex digit before validating, for better error locations. */
function hexRun(s: string, pos: number): number {
  let i = pos;
  while (i < s.length && isHexDigit(s.charCodeAt(i))) i++;
  return i;
}

function intHint(radix: number, digits: string, error: string): string | undefined {
  if (error !== PARSE_INT_INVALID) {
    return radix === 10 ? 'Integers are signed 64-bit: -9223372036854775808 to 9223372036854775807.' : undefined;
  }
  if (radix === 8 && /^[0-9]+$/.test(digits)) {
    return 'A leading 0 makes the number octal (digits 0-7): write it without the leading zero.';
  }
  return 'Integers are decimal (-12), hexadecimal with 0x (0x1f, no sign) or octal with a leading 0 (017).';
}

/** The engine's integer lexer at pos: `0x` hex, leading `0` octal, else optional `-` and decimal. */
function lexInt(s: string, pos: number): Lexed<bigint> {
  let digitsStart: number;
  let numberStart: number;
  let radix: number;
  if (s.startsWith('0x', pos)) {
    radix = 16;
    digitsStart = numberStart = pos + 2;
  } else if (s[pos] === '0') {
    radix = 8;
    digitsStart = numberStart = pos;
  } else {
    radix = 10;
    numberStart = pos;
    digitsStart = s[pos] === '-' ? pos + 1 : pos;
  }
  const end = hexRun(s, digitsStart);
  if (end === digitsStart) return fail('invalid-integer', 'expected digit', digitsStart, s.length);
  const digits = s.slice(numberStart, end);
  const r = rustParseInt(digits, radix, I64_MIN, I64_MAX);
  if (typeof r !== 'bigint') {
    return fail('invalid-integer', `${r.error} while parsing with radix ${radix}`, numberStart, end, intHint(radix, digits, r.error));
  }
  return { ok: true, value: r, end };
}

function intLeftover(text: string, end: number): LitError {
  const hint = text.startsWith('-0x')
    ? 'A hexadecimal integer cannot have a sign.'
    : text[end] === '.'
      ? 'Integers have no fraction part.'
      : undefined;
  return leftover(end, text.length, hint);
}

/**
 * An integer literal (i64): a safe-integer number, else a bigint. `after` is given when a
 * keyword is glued to the literal (`1and`): the engine's lexer reads hex digits on into it.
 */
export function parseInt64(text: string, after = ''): LitResult<IntValue> {
  const s = text + after;
  const r = lexInt(s, 0);
  if (!r.ok) return r;
  if (r.end < text.length) return intLeftover(text, r.end);
  if (r.end > text.length) return leftover(r.end, s.length);
  return ok(toIntValue(r.value));
}

/** `A` or `A..B` (inclusive, A <= B) at pos, as the engine lexes a set element. */
function lexIntRange(s: string, pos: number): Lexed<IntRange> {
  const a = lexInt(s, pos);
  if (!a.ok) return a;
  if (!s.startsWith('..', a.end)) return { ok: true, value: [toIntValue(a.value), toIntValue(a.value)], end: a.end };
  const b = lexInt(s, a.end + 2);
  if (!b.ok) return b;
  if (b.value < a.value) {
    return fail('incompatible-range-bounds', 'incompatible range bounds', pos, b.end, 'Write the smaller bound first: A..B with A <= B.');
  }
  return { ok: true, value: [toIntValue(a.value), toIntValue(b.value)], end: b.end };
}

/** One Int set element: an integer or `A..B`. */
export function parseIntSetItem(text: string): LitResult<IntRange> {
  const r = lexIntRange(text, 0);
  if (!r.ok) return r;
  if (r.end < text.length) {
    // In a set the engine would lex the rest as the next element: report its error.
    const next = lexIntRange(text, r.end);
    return next.ok ? intLeftover(text, r.end) : next;
  }
  return ok(r.value);
}

/**
 * Every Int set element in one unspaced token, as the engine reads it: elements need no
 * separator, so `1-2` is the two elements 1 and -2, `1..5-3` is 1..5 and -3.
 */
export function parseIntSetItems(text: string): LitResult<IntRange[]> {
  const items: IntRange[] = [];
  let pos = 0;
  while (pos < text.length) {
    const r = lexIntRange(text, pos);
    if (!r.ok) return r;
    items.push(r.value);
    pos = r.end;
  }
  return ok(items);
}

// ---------------------------------------------------------------------------------
// Hex byte strings (§1.4 c).

const HEX_BYTES_HINT =
  'An unquoted value compared with a string field is read as hex bytes (e.g. 01:2e:f3, at least two bytes); ' +
  'to compare with text, quote it: "80".';

function isByteSeparator(c: string | undefined): boolean {
  return c === ':' || c === '-' || c === '.';
}

/** `XX` (`:`|`-`|`.`) `XX` … at pos; at least two bytes. */
function lexHexBytes(s: string, pos: number, hint: string | undefined): Lexed<string> {
  const first = fixedByte(s, pos, 2, 16, 'invalid-hex-bytes', hint);
  if (!first.ok) return first;
  let out = String.fromCharCode(first.value);
  let i = first.end;
  if (i >= s.length) return fail('invalid-hex-bytes', 'expected 1 characters, but found 0', i, i, hint);
  if (!isByteSeparator(s[i])) return fail('invalid-hex-bytes', 'expected byte separator', i, i + cpLen(s, i), hint);
  i++;
  for (;;) {
    const b = fixedByte(s, i, 2, 16, 'invalid-hex-bytes', hint);
    if (!b.ok) return b;
    out += String.fromCharCode(b.value);
    i = b.end;
    if (!isByteSeparator(s[i])) return { ok: true, value: out, end: i };
    i++;
  }
}

/**
 * Runs a hex-bytes lexer over text + after. A comma in a set is always followed by more
 * input (at least `}`), never the end, so a lone `,` without `after` is read as if a
 * space followed; spans are clamped to the real source.
 */
function withAfter<T>(text: string, after: string, run: (s: string) => LitResult<T>): LitResult<T> {
  const s = text + (text === ',' && after === '' ? ' ' : after);
  const r = run(s);
  const limit = text.length + after.length;
  return r.ok ? r : { ...r, start: Math.min(r.start, limit), end: Math.min(r.end, limit) };
}

/**
 * Hex bytes `01:2e:f3-77.12` to a binary string. A lone `,` (a comma-separated set
 * `{"a", "b"}`) gives the engine's `invalid digit found in string while parsing with
 * radix 16`; the checker adds the hint about spaces.
 */
export function parseHexBytes(text: string, after = ''): LitResult<string> {
  const hint = text === ',' ? undefined : HEX_BYTES_HINT;
  return withAfter(text, after, (s) => {
    const r = lexHexBytes(s, 0, hint);
    if (!r.ok) return r;
    if (r.end < text.length) return leftover(r.end, text.length);
    // Read on into a glued keyword (`61:6and` is 61:6a, then `nd`).
    if (r.end > text.length) return leftover(r.end, s.length);
    return ok(r.value);
  });
}

/** Every Bytes set element in one unspaced hex token (`c2:b4710c` reads c2:b4, then fails on 71). */
export function parseHexBytesItems(text: string, after = ''): LitResult<string[]> {
  const hint = text === ',' ? undefined : HEX_BYTES_HINT;
  return withAfter(text, after, (s) => {
    const items: string[] = [];
    let pos = 0;
    while (pos < text.length) {
      const r = lexHexBytes(s, pos, hint);
      if (!r.ok) return r;
      items.push(r.value);
      pos = r.end;
    }
    return ok(items);
  });
}

// ---------------------------------------------------------------------------------
// List names (§1.8) and index keys (§1.10).

const LIST_NAME_HINT = 'List names are lowercase letters, digits, _ and ., not starting or ending with a dot: $office_network.';

function isListNameChar(c: string): boolean {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c === '_' || c === '.';
}

/**
 * Checks a list name (without the `$`; spans are relative to the name). The engine reads
 * `[a-z0-9_.]+`: an invalid first character is reported alone (`invalid list name "O"`
 * for `$Office`; after a bare `$`, the next source character, or `""` at the end of the
 * input); a leading or trailing dot reports the name read. Characters after a valid
 * name (`$office_A`) are left unread: `unrecognised input`.
 */
export function validateListName(name: string, after = ''): LitResult<string> {
  let n = 0;
  while (n < name.length && isListNameChar(name[n])) n++;
  if (n === 0) {
    const rest = name + after;
    const ch = rest.length > 0 ? String.fromCodePoint(rest.codePointAt(0)!) : '';
    return fail('invalid-list-name', `invalid list name ${rustDebugString(ch)}`, 0, ch.length, LIST_NAME_HINT);
  }
  const read = name.slice(0, n);
  if (read.startsWith('.') || read.endsWith('.')) {
    return fail('invalid-list-name', `invalid list name ${rustDebugString(read)}`, 0, n, LIST_NAME_HINT);
  }
  if (n < name.length) return leftover(n, name.length, LIST_NAME_HINT);
  return ok(read);
}

const EXPECTED_INDEX = 'expected literal "expected quoted utf8 string or positive integer"';

/** An unquoted index `[0]`: an integer literal that fits a u32. */
export function parseIndexLiteral(text: string): LitResult<number> {
  const r = lexInt(text, 0);
  if (!r.ok) {
    return fail('invalid-index', EXPECTED_INDEX, 0, text.length, 'Index an array with a number ([0]) or a map with a quoted key (["name"]).');
  }
  if (r.value < 0n || r.value > 0xffffffffn) {
    return fail('invalid-index', 'expected literal "expected positive integer as index"', 0, text.length, 'Array indexes start at 0 and count from the front.');
  }
  if (r.end < text.length) return fail('invalid-index', 'expected literal "]"', r.end, text.length);
  return ok(Number(r.value));
}

/** A quoted map key `["k"]`: decoded like any quoted string, then required to be UTF-8. Returns the binary string. */
export function decodeMapKey(text: string, after = ''): LitResult<string> {
  const r = decodeQuoted(text, after);
  if (!r.ok) return r;
  if (binaryToUtf8(r.value) === undefined) {
    return fail('invalid-index', 'expected literal "expected utf8 string"', 0, text.length, 'Map keys must be valid UTF-8 text.');
  }
  return r;
}
