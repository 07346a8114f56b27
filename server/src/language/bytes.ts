/**
 * "Binary strings": a JS string holding one code unit 0..255 per byte (see ir.ts), so
 * that Bytes values compare, sort and search exactly like the engine's byte slices.
 */

const encoder = new TextEncoder();
// fatal: reject invalid UTF-8 instead of substituting U+FFFD; ignoreBOM: keep a
// leading EF BB BF as U+FEFF (the engine does not strip it).
const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** True when every code unit is ASCII, the common case that needs no conversion. */
function isAscii(s: string): boolean {
  // Short strings: a loop; longer ones: the regex engine's native scan is several times faster.
  if (s.length < 32) {
    for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) > 0x7f) return false;
    return true;
  }
  return !NON_ASCII_BYTE.test(s);
}

const NON_ASCII_BYTE = /[^\x00-\x7f]/;

/** Packs bytes into a binary string. */
export function bytesToBinary(bytes: Uint8Array): string {
  let out = '';
  // Chunked so that fromCharCode never receives too many arguments.
  for (let i = 0; i < bytes.length; i += 0x2000) {
    out += String.fromCharCode.apply(null, Array.from(bytes.subarray(i, i + 0x2000)));
  }
  return out;
}

/** The first `length` code units of `codes` as a string (in chunks: fromCharCode's argument limit). */
export function codesToBinary(codes: Uint16Array, length: number): string {
  let out = '';
  for (let i = 0; i < length; i += 0x2000) out += String.fromCharCode.apply(null, codes.subarray(i, Math.min(length, i + 0x2000)) as unknown as number[]);
  return out;
}

/** Unpacks a binary string into bytes (code units above 255 are truncated). */
export function binaryToBytes(b: string): Uint8Array {
  const out = new Uint8Array(b.length);
  for (let i = 0; i < b.length; i++) out[i] = b.charCodeAt(i) & 0xff;
  return out;
}

/** UTF-8 encodes a JS string; lone surrogates become U+FFFD (EF BF BD). */
export function utf8ToBinary(s: string): string {
  return isAscii(s) ? s : bytesToBinary(encoder.encode(s));
}

/** Decodes a binary string as UTF-8, or undefined when it is not valid UTF-8. */
export function binaryToUtf8(b: string): string | undefined {
  if (isAscii(b)) return b;
  // Checked first: the decoder's TypeError on bad bytes cost ~20 µs (a stack trace) per
  // value, and a request with `%FD` in one argument name hits it for every field built.
  return firstNonUtf8(b) < 0 ? decoder.decode(binaryToBytes(b)) : undefined;
}

/**
 * Where the bytes (one per code unit, as binaryToBytes reads them) stop being well-formed
 * UTF-8 — the offset of the first byte the fatal decoder refuses — or -1 when they are.
 */
export function firstNonUtf8(b: string): number {
  const n = b.length;
  for (let i = 0; i < n; ) {
    const c = b.charCodeAt(i) & 0xff;
    if (c < 0x80) {
      i++;
      continue;
    }
    // Continuations after the lead byte, and the first one's range: no overlong forms
    // (E0, F0), no surrogates (ED), nothing past U+10FFFF (F4).
    const more = c >= 0xc2 && c <= 0xdf ? 1 : c >= 0xe0 && c <= 0xef ? 2 : c >= 0xf0 && c <= 0xf4 ? 3 : 0;
    if (more === 0 || i + more >= n) return i;
    const lo = c === 0xe0 ? 0xa0 : c === 0xf0 ? 0x90 : 0x80;
    const hi = c === 0xed ? 0x9f : c === 0xf4 ? 0x8f : 0xbf;
    const first = b.charCodeAt(i + 1) & 0xff;
    if (first < lo || first > hi) return i;
    for (let k = 2; k <= more; k++) {
      const d = b.charCodeAt(i + k) & 0xff;
      if (d < 0x80 || d > 0xbf) return i;
    }
    i += more + 1;
  }
  return -1;
}

/** For messages and hovers: the text when valid UTF-8, else printable ASCII with `\xHH` escapes. */
export function binaryToDisplay(b: string): string {
  const text = binaryToUtf8(b);
  if (text !== undefined) return text;
  let out = '';
  for (let i = 0; i < b.length; i++) {
    const c = b.charCodeAt(i);
    out += c >= 0x20 && c < 0x7f ? b[i] : '\\x' + c.toString(16).padStart(2, '0');
  }
  return out;
}

/** The value of a hex digit's character code, or -1 (also for NaN, past the end). */
export function hexDigitValue(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  if (c >= 65 && c <= 70) return c - 55;
  if (c >= 97 && c <= 102) return c - 87;
  return -1;
}

/** ASCII-only case mapping: bytes 0x80 and above are left alone, as the engine does. */
export function asciiLower(s: string): string {
  // Hot in CRS rules (t:lowercase): the common cases avoid a replace callback.
  if (!/[A-Z]/.test(s)) return s;
  if (!NON_ASCII.test(s)) return s.toLowerCase();
  if (s.length >= 1024) return lowerByTable(s);
  return s.replace(/[A-Z]+/g, (m) => m.toLowerCase());
}

const LOWER_CHUNK = new Uint16Array(8192);

/** asciiLower of a long value with bytes above 0x7f (a binary upload): a loop, not a callback per run of capitals (3x faster). */
function lowerByTable(s: string): string {
  let out = '';
  for (let i = 0; i < s.length; i += LOWER_CHUNK.length) {
    const n = Math.min(LOWER_CHUNK.length, s.length - i);
    const codes = n === LOWER_CHUNK.length ? LOWER_CHUNK : LOWER_CHUNK.subarray(0, n);
    for (let j = 0; j < n; j++) {
      const c = s.charCodeAt(i + j);
      codes[j] = c >= 65 && c <= 90 ? c + 32 : c;
    }
    out += String.fromCharCode.apply(null, codes as unknown as number[]);
  }
  return out;
}

export function asciiUpper(s: string): string {
  if (!/[a-z]/.test(s)) return s;
  if (!NON_ASCII.test(s)) return s.toUpperCase();
  return s.replace(/[a-z]+/g, (m) => m.toUpperCase());
}

const NON_ASCII = /[^\x00-\x7f]/;

/** Four hex digits at `i` as a number, or -1. */
export function hex4At(s: string, i: number): number {
  let v = 0;
  for (let k = 0; k < 4; k++) {
    const d = hexDigitValue(s.charCodeAt(i + k));
    if (d < 0) return -1;
    v = v * 16 + d;
  }
  return v;
}

export interface PercentDecodeOptions {
  /** `+` is a space (query strings and forms). */
  readonly plus?: boolean;
  /**
   * `%uXXXX`, whose meaning differs by user (Cloudflare's url_decode: UTF-8; CRS's
   * urlDecodeUni: one byte). Given the index of the `%`, returns the decoded text and
   * how many characters it used, or undefined to read the `%` as an ordinary escape.
   */
  readonly percentU?: (s: string, i: number) => readonly [string, number] | undefined;
}

/** One pass of percent-decoding over a binary string; malformed escapes stay as written. */
export function percentDecode(s: string, options: PercentDecodeOptions = {}): string {
  const { plus = false, percentU } = options;
  if (s.indexOf('%') < 0 && (!plus || s.indexOf('+') < 0)) return s;
  let out = '';
  // Runs of plain bytes are copied whole (`run` is where the current one starts).
  let run = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 43 && plus) {
      out += s.slice(run, i) + ' ';
      run = i + 1;
      continue;
    }
    if (c !== 37) continue;
    const next = s.charCodeAt(i + 1);
    if (percentU && (next === 117 || next === 85)) {
      const u = percentU(s, i);
      if (u) {
        out += s.slice(run, i) + u[0];
        i += u[1] - 1;
        run = i + 1;
        continue;
      }
    }
    const h = hexDigitValue(next);
    const l = h < 0 ? -1 : hexDigitValue(s.charCodeAt(i + 2));
    if (l >= 0) {
      out += s.slice(run, i) + String.fromCharCode(h * 16 + l);
      i += 2;
      run = i + 1;
    }
    // A malformed escape stays as written: it is part of the current run (a run of `%`
    // is copied once, not one piece per character).
  }
  return out + s.slice(run);
}

/** The UTF-8 length of a string in bytes (a lone surrogate counts as the 3 bytes of U+FFFD). */
export function utf8Length(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      n += 4;
      i++;
    } else n += 3;
  }
  return n;
}

/**
 * The length of a string in characters (code points): what a limit "of N characters"
 * counts, so an emoji is one character, not the two UTF-16 units of `length`.
 */
export function charLength(s: string): number {
  let n = s.length;
  for (let i = 0; i + 1 < s.length; i++) {
    if ((s.charCodeAt(i) & 0xfc00) === 0xd800 && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      n--;
      i++;
    }
  }
  return n;
}

/** Whether a string has more than `max` characters (code points); its UTF-16 `length` settles most strings without counting. */
export function longerThan(s: string, max: number): boolean {
  return s.length > max && charLength(s) > max;
}

/** The UTF-16 offset of the character (code point) numbered `n` from 0, or `s.length` when there are fewer. */
export function charOffset(s: string, n: number): number {
  let i = 0;
  for (let k = 0; k < n && i < s.length; k++) i += (s.charCodeAt(i) & 0xfc00) === 0xd800 && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00 ? 2 : 1;
  return i;
}
