/**
 * Runtime implementations of the scheme's functions (reference §5). `any`/`all` are
 * syntax (the evaluator handles them).
 *
 * Values follow ir.ts: Bytes are binary strings, Int is number (or bigint beyond ±2^53),
 * a missing value is `undefined`. A function given a missing argument returns missing,
 * except `concat` (missing counts as empty) and `coalesce`.
 *
 * `prepare` runs once per call site at compile time with the literal arguments (so
 * regexes, wildcard patterns and byte sets are built once) and returns the closure the
 * evaluator calls per request; that closure never throws.
 *
 * Edge context: a request sample has no JWT validation state, so `is_jwt_valid` reads it
 * from the request's field values, under the pseudo-field `cf.api_gateway.jwt_valid`
 * (Map<Bool>: token configuration ID -> whether the request carried a valid JWT for it).
 */
import type { IpAddr, Value } from '../ir';
import { asciiLower, asciiUpper, binaryToUtf8, hex4At, hexDigitValue, percentDecode, utf8ToBinary } from '../bytes';
import { formatIp } from '../ip';
import { lazyRegex, type LazyRegex } from '../regex';
import { parseWildcard, wildcardCaptures } from '../wildcard';
import { BOOL, mapOf, type Type } from '../types';
import { CRS_RUNTIME_FUNCTIONS } from './crs';
import type { CallEnv, RuntimeArgs, RuntimeFunction } from './runtimeFunction';

/** Pseudo-fields that carry edge context into a request sample, with their types. */
export const JWT_VALID_FIELD = 'cf.api_gateway.jwt_valid';
export const EDGE_CONTEXT_FIELDS: ReadonlyMap<string, Type> = new Map([[JWT_VALID_FIELD, mapOf(BOOL)]]);

// ---------------------------------------------------------------------------------------
// Small helpers

function isBytes(v: Value | undefined): v is string {
  return typeof v === 'string';
}

function isInt(v: Value | undefined): v is number | bigint {
  return typeof v === 'number' || typeof v === 'bigint';
}

function isArray(v: Value | undefined): v is readonly Value[] {
  return Array.isArray(v);
}

function isMap(v: Value | undefined): v is ReadonlyMap<string, Value> {
  return v instanceof Map;
}

function isIp(v: Value | undefined): v is IpAddr {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Map) && 'family' in v;
}

/** An Int as a JS number clamped to ±2^53 (positions and lengths). */
function toNumber(v: number | bigint): number {
  if (typeof v === 'number') return v;
  const max = BigInt(Number.MAX_SAFE_INTEGER);
  return Number(v > max ? max : v < -max ? -max : v);
}

/** Normalises an integer: number when safe, bigint otherwise (ir.ts convention). */
function intValue(b: bigint): number | bigint {
  return b >= BigInt(Number.MIN_SAFE_INTEGER) && b <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(b) : b;
}

/** Deep equality of runtime values (has_value). Ints compare numerically. */
export function valuesEqual(a: Value, b: Value): boolean {
  if (typeof a === 'string' || typeof a === 'boolean') return a === b;
  if (isInt(a)) return isInt(b) && (typeof a === typeof b ? a === b : BigInt(a) === BigInt(b));
  if (isArray(a)) return isArray(b) && a.length === b.length && a.every((x, i) => valuesEqual(x, b[i]));
  if (isMap(a)) {
    if (!isMap(b) || a.size !== b.size) return false;
    for (const [k, v] of a) {
      const w = b.get(k);
      if (w === undefined || !valuesEqual(v, w)) return false;
    }
    return true;
  }
  return isIp(b) && a.family === b.family && a.n === b.n;
}

const fn = (prepare: RuntimeFunction['prepare']): RuntimeFunction => ({ prepare });

/** A function of plain arguments that returns missing when any required one is missing. */
function simple(required: number, body: (args: RuntimeArgs, env?: CallEnv) => Value | undefined): RuntimeFunction {
  return fn(() => (args, env) => {
    for (let i = 0; i < required; i++) if (args[i] === undefined) return undefined;
    return body(args, env);
  });
}

// ---------------------------------------------------------------------------------------
// Base64 over binary strings

const STD = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const URL_SAFE = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

export function base64Encode(bin: string, urlSafe: boolean, pad: boolean): string {
  const abc = urlSafe ? URL_SAFE : STD;
  let out = '';
  let i = 0;
  for (; i + 2 < bin.length; i += 3) {
    const n = (bin.charCodeAt(i) << 16) | (bin.charCodeAt(i + 1) << 8) | bin.charCodeAt(i + 2);
    out += abc[n >> 18] + abc[(n >> 12) & 63] + abc[(n >> 6) & 63] + abc[n & 63];
  }
  const rest = bin.length - i;
  if (rest === 1) {
    const n = bin.charCodeAt(i) << 16;
    out += abc[n >> 18] + abc[(n >> 12) & 63] + (pad ? '==' : '');
  } else if (rest === 2) {
    const n = (bin.charCodeAt(i) << 16) | (bin.charCodeAt(i + 1) << 8);
    out += abc[n >> 18] + abc[(n >> 12) & 63] + abc[(n >> 6) & 63] + (pad ? '=' : '');
  }
  return out;
}

const DECODE_STD = decodeTable(STD);
const DECODE_URL = decodeTable(URL_SAFE);

function decodeTable(abc: string): Int8Array {
  const t = new Int8Array(256).fill(-1);
  for (let i = 0; i < abc.length; i++) t[abc.charCodeAt(i)] = i;
  return t;
}

/**
 * Decodes Base64 (padding optional, but when present it must be correct); undefined when
 * the text is not Base64. Non-zero trailing bits are rejected, as Rust's base64 does.
 */
export function base64Decode(text: string, urlSafe: boolean): string | undefined {
  const t = urlSafe ? DECODE_URL : DECODE_STD;
  let end = text.length;
  if (end % 4 === 0 && end > 0) {
    if (text.charCodeAt(end - 1) === 61) end--;
    if (text.charCodeAt(end - 1) === 61) end--;
  }
  if (end % 4 === 1) return undefined;
  let out = '';
  let acc = 0;
  let bits = 0;
  for (let i = 0; i < end; i++) {
    const c = text.charCodeAt(i);
    const d = c < 256 ? t[c] : -1;
    if (d < 0) return undefined;
    acc = (acc << 6) | d;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += String.fromCharCode((acc >> bits) & 0xff);
      acc &= (1 << bits) - 1;
    }
  }
  if (acc !== 0) return undefined;
  return out;
}

// ---------------------------------------------------------------------------------------
// SHA-256 and HMAC-SHA256 (synchronous, pure; binary strings in and out)

const K = new Uint32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01,
  0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc,
  0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
  0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
  0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08,
  0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
  0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
]);

export function sha256(bin: string): string {
  const len = bin.length;
  // Message + 0x80 + zero padding + 64-bit big-endian bit length, in 64-byte blocks.
  const total = Math.ceil((len + 9) / 64) * 64;
  const bytes = new Uint8Array(total);
  for (let i = 0; i < len; i++) bytes[i] = bin.charCodeAt(i);
  bytes[len] = 0x80;
  const bitLen = len * 8;
  const dv = new DataView(bytes.buffer);
  dv.setUint32(total - 8, Math.floor(bitLen / 0x100000000));
  dv.setUint32(total - 4, bitLen >>> 0);
  const h = new Uint32Array([0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19]);
  const w = new Uint32Array(64);
  for (let off = 0; off < total; off += 64) {
    for (let i = 0; i < 16; i++) w[i] = dv.getUint32(off + i * 4);
    for (let i = 16; i < 64; i++) {
      const a = w[i - 15];
      const b = w[i - 2];
      const s0 = ((a >>> 7) | (a << 25)) ^ ((a >>> 18) | (a << 14)) ^ (a >>> 3);
      const s1 = ((b >>> 17) | (b << 15)) ^ ((b >>> 19) | (b << 13)) ^ (b >>> 10);
      w[i] = (w[i - 16] + s0 + w[i - 7] + s1) | 0;
    }
    let [a, b, c, d, e, f, g, hh] = h;
    for (let i = 0; i < 64; i++) {
      const S1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
      const ch = (e & f) ^ (~e & g);
      const t1 = (hh + S1 + ch + K[i] + w[i]) | 0;
      const S0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
      const maj = (a & b) ^ (a & c) ^ (b & c);
      const t2 = (S0 + maj) | 0;
      hh = g;
      g = f;
      f = e;
      e = (d + t1) | 0;
      d = c;
      c = b;
      b = a;
      a = (t1 + t2) | 0;
    }
    h[0] += a;
    h[1] += b;
    h[2] += c;
    h[3] += d;
    h[4] += e;
    h[5] += f;
    h[6] += g;
    h[7] += hh;
  }
  let out = '';
  for (let i = 0; i < 8; i++) out += String.fromCharCode(h[i] >>> 24, (h[i] >>> 16) & 0xff, (h[i] >>> 8) & 0xff, h[i] & 0xff);
  return out;
}

export function hmacSha256(key: string, message: string): string {
  let k = key.length > 64 ? sha256(key) : key;
  k = k + '\0'.repeat(64 - k.length);
  let ipad = '';
  let opad = '';
  for (let i = 0; i < 64; i++) {
    ipad += String.fromCharCode(k.charCodeAt(i) ^ 0x36);
    opad += String.fromCharCode(k.charCodeAt(i) ^ 0x5c);
  }
  return sha256(opad + sha256(ipad + message));
}

// ---------------------------------------------------------------------------------------
// A small JSON reader over binary strings that keeps integers exact

type Json = { readonly k: 'str'; readonly v: string } | { readonly k: 'num'; readonly raw: string } | { readonly k: 'obj'; readonly v: Map<string, Json> } | { readonly k: 'arr'; readonly v: Json[] } | { readonly k: 'lit' };

class JsonReader {
  i = 0;
  constructor(private readonly s: string) {}

  ws(): void {
    for (;;) {
      const c = this.s.charCodeAt(this.i);
      if (c === 32 || c === 9 || c === 10 || c === 13) this.i++;
      else return;
    }
  }

  value(depth: number): Json | undefined {
    if (depth > 128) return undefined;
    this.ws();
    const c = this.s[this.i];
    if (c === '{') {
      this.i++;
      const v = new Map<string, Json>();
      this.ws();
      if (this.s[this.i] === '}') return this.i++, { k: 'obj', v };
      for (;;) {
        this.ws();
        if (this.s[this.i] !== '"') return undefined;
        const key = this.string();
        if (key === undefined) return undefined;
        this.ws();
        if (this.s[this.i++] !== ':') return undefined;
        const item = this.value(depth + 1);
        if (item === undefined) return undefined;
        v.set(key, item); // a repeated key keeps the last value, as serde_json does
        this.ws();
        const sep = this.s[this.i++];
        if (sep === '}') return { k: 'obj', v };
        if (sep !== ',') return undefined;
      }
    }
    if (c === '[') {
      this.i++;
      const v: Json[] = [];
      this.ws();
      if (this.s[this.i] === ']') return this.i++, { k: 'arr', v };
      for (;;) {
        const item = this.value(depth + 1);
        if (item === undefined) return undefined;
        v.push(item);
        this.ws();
        const sep = this.s[this.i++];
        if (sep === ']') return { k: 'arr', v };
        if (sep !== ',') return undefined;
      }
    }
    if (c === '"') {
      const v = this.string();
      return v === undefined ? undefined : { k: 'str', v };
    }
    for (const lit of ['true', 'false', 'null']) {
      if (this.s.startsWith(lit, this.i)) {
        this.i += lit.length;
        return { k: 'lit' };
      }
    }
    const m = /^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/.exec(this.s.slice(this.i, this.i + 400));
    if (!m) return undefined;
    this.i += m[0].length;
    return { k: 'num', raw: m[0] };
  }

  /** A JSON string at this.i; returns its bytes (escapes decoded to UTF-8). */
  string(): string | undefined {
    this.i++; // opening quote
    let out = '';
    for (;;) {
      if (this.i >= this.s.length) return undefined;
      const c = this.s.charCodeAt(this.i++);
      if (c === 34) return out;
      if (c < 0x20) return undefined;
      if (c !== 92) {
        out += String.fromCharCode(c);
        continue;
      }
      const e = this.s[this.i++];
      const simpleEsc: Record<string, string> = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };
      if (e in simpleEsc) {
        out += simpleEsc[e];
        continue;
      }
      if (e !== 'u') return undefined;
      let cp = this.hex4();
      if (cp === undefined) return undefined;
      if (cp >= 0xd800 && cp <= 0xdbff && this.s.startsWith('\\u', this.i)) {
        const save = this.i;
        this.i += 2;
        const lo = this.hex4();
        if (lo !== undefined && lo >= 0xdc00 && lo <= 0xdfff) cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
        else this.i = save;
      }
      out += utf8ToBinary(String.fromCodePoint(cp >= 0xd800 && cp <= 0xdfff ? 0xfffd : cp));
    }
  }

  hex4(): number | undefined {
    const h = this.s.slice(this.i, this.i + 4);
    if (!/^[0-9A-Fa-f]{4}$/.test(h)) return undefined;
    this.i += 4;
    return parseInt(h, 16);
  }
}

function parseJson(bin: string): Json | undefined {
  const r = new JsonReader(bin);
  const v = r.value(0);
  if (v === undefined) return undefined;
  r.ws();
  return r.i === bin.length ? v : undefined;
}

const I64_MIN = -(2n ** 63n);
const I64_MAX = 2n ** 63n - 1n;

function lookupJson(result: 'int' | 'str'): RuntimeFunction {
  return fn(() => {
    // The same document is often looked up by several calls; keep the last parse.
    let lastText: string | undefined;
    let lastDoc: Json | undefined;
    return (args) => {
      const text = args[0];
      if (!isBytes(text)) return undefined;
      if (text !== lastText) {
        lastText = text;
        lastDoc = parseJson(text);
      }
      let node = lastDoc;
      for (let i = 1; i < args.length && node !== undefined; i++) {
        const key = args[i];
        if (isBytes(key)) node = node.k === 'obj' ? node.v.get(key) : undefined;
        else if (isInt(key)) node = node.k === 'arr' && key >= 0 && key < node.v.length ? node.v[Number(key)] : undefined;
        else return undefined;
      }
      if (node === undefined) return undefined;
      if (result === 'str') return node.k === 'str' ? node.v : undefined;
      if (node.k !== 'num' || !/^-?[0-9]+$/.test(node.raw)) return undefined;
      const b = BigInt(node.raw);
      return b < I64_MIN || b > I64_MAX ? undefined : intValue(b);
    };
  });
}

// ---------------------------------------------------------------------------------------
// URL decoding

/** One pass: `%HH` -> byte, `+` -> space, `%uXXXX` -> UTF-8 (option u); malformed escapes stay. */
export function urlDecodeOnce(s: string, unicode: boolean): string {
  return percentDecode(s, { plus: true, percentU: unicode ? percentUtf8 : undefined });
}

/** A one-character string's hex digit value, or -1 (bytes.ts `hexDigitValue`). */
const hexOf = (c: string | undefined): number => hexDigitValue(c === undefined ? NaN : c.charCodeAt(0));

/**
 * `url_decode(s, "r")` after its first pass: decoded again and again until nothing changes,
 * in one pass. Escapes never overlap (`%`, `u` and `+` are not hex digits), so the order they
 * are decoded in does not change the result: each byte is appended to the output, and when
 * the output's end then forms an escape (`%HH`, with "u" `%uHHHH`) or is a `+`, it is decoded
 * in place and its bytes appended the same way. Linear: pass after pass took O(n²) on
 * `%2525…41` (20 s for a 128 KB body).
 */
export function urlDecodeSettled(s: string, unicode: boolean): string {
  const out: string[] = [];
  /**
   * Where a `%uHHHH` of a high surrogate sits in `out`, undecoded: a low one's escape may
   * still follow it (formed by decoding, `%uD83D%25uDE00`), and the pair is one character.
   * One that none follows is a lone surrogate (U+FFFD) in the end.
   */
  const highs: number[] = [];
  // What is still to be appended, last first.
  const pending = [...s].reverse();
  const shorten = (to: number) => {
    out.length = to;
    while (highs.length > 0 && highs[highs.length - 1]! >= to) highs.pop();
  };
  while (pending.length > 0) {
    const c = pending.pop()!;
    out.push(c === '+' ? ' ' : c);
    const n = out.length;
    const hi = hexOf(out[n - 2]);
    const lo = hexOf(out[n - 1]);
    const cp = unicode && n >= 6 && out[n - 6] === '%' && (out[n - 5] === 'u' || out[n - 5] === 'U') ? hex4At(out.slice(n - 4).join(''), 0) : -1;
    if (n >= 3 && out[n - 3] === '%' && hi >= 0 && lo >= 0) {
      shorten(n - 3);
      pending.push(String.fromCharCode(hi * 16 + lo));
    } else if (cp >= 0) {
      if (cp >= 0xd800 && cp <= 0xdbff) {
        highs.push(n - 6);
        continue;
      }
      const paired = cp >= 0xdc00 && cp <= 0xdfff && highs[highs.length - 1] === n - 12;
      const [bytes] = percentUtf8(out.slice(paired ? n - 12 : n - 6).join(''), 0)!;
      shorten(paired ? n - 12 : n - 6);
      for (let i = bytes.length - 1; i >= 0; i--) pending.push(bytes[i]!);
    }
  }
  if (highs.length === 0) return out.join('');
  // The highs no low followed: each a lone surrogate (U+FFFD's bytes; they form no escape with what is around them).
  const lone = new Set(highs);
  const replacement = utf8ToBinary('\ufffd');
  let result = '';
  for (let i = 0; i < out.length; i++) {
    if (lone.has(i)) {
      result += replacement;
      i += 5;
    } else result += out[i];
  }
  return result;
}

/** `%uXXXX` (a surrogate pair as two escapes) -> UTF-8; a lone surrogate -> U+FFFD. */
function percentUtf8(s: string, i: number): readonly [string, number] | undefined {
  let cp = hex4At(s, i + 2);
  if (cp < 0) return undefined;
  let consumed = 6;
  if (cp >= 0xd800 && cp <= 0xdbff && s[i + 6] === '%' && (s[i + 7] === 'u' || s[i + 7] === 'U')) {
    const lo = hex4At(s, i + 8);
    if (lo >= 0xdc00 && lo <= 0xdfff) {
      cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
      consumed = 12;
    }
  }
  return [utf8ToBinary(String.fromCodePoint(cp >= 0xd800 && cp <= 0xdfff ? 0xfffd : cp)), consumed];
}

// ---------------------------------------------------------------------------------------
// Replacement templates (regex_replace, wildcard_replace)

/**
 * Expands `${n}` / `$n` (group n, empty when absent or unmatched) and `$$` (a `$`);
 * any other `$` is literal.
 */
export function expandTemplate(template: string, group: (n: number) => string | undefined): string {
  if (template.indexOf('$') < 0) return template;
  let out = '';
  for (let i = 0; i < template.length; i++) {
    const c = template[i];
    if (c !== '$' || i + 1 >= template.length) {
      out += c;
      continue;
    }
    if (template[i + 1] === '$') {
      out += '$';
      i++;
      continue;
    }
    const braced = template[i + 1] === '{';
    let j = braced ? i + 2 : i + 1;
    const start = j;
    while (j < template.length && template.charCodeAt(j) >= 48 && template.charCodeAt(j) <= 57) j++;
    if (j === start || (braced && template[j] !== '}')) {
      out += c;
      continue;
    }
    out += group(Number(template.slice(start, j))) ?? '';
    i = braced ? j : j - 1;
  }
  return out;
}

// ---------------------------------------------------------------------------------------
// The functions

function asciiCase(upper: boolean): RuntimeFunction {
  const map = upper ? asciiUpper : asciiLower;
  return simple(1, ([s]) => (isBytes(s) ? map(s) : undefined));
}

function maskIpv4(n: number, bits: number): number {
  const b = Math.max(0, Math.min(32, bits));
  const size = 2 ** (32 - b);
  return n - (n % size);
}

function maskIpv6(n: bigint, bits: number): bigint {
  const b = BigInt(Math.max(0, Math.min(128, bits)));
  return n & ~((1n << (128n - b)) - 1n) & ((1n << 128n) - 1n);
}

function cidrOf(ip: IpAddr, v4: number | undefined, v6: number | undefined): IpAddr {
  if (ip.family === 4) return v4 === undefined ? ip : { family: 4, n: maskIpv4(ip.n, v4) };
  return v6 === undefined ? ip : { family: 6, n: maskIpv6(ip.n, v6) };
}

function splitBytes(s: string, sep: string, limit: number): string[] {
  const out: string[] = [];
  let from = 0;
  while (out.length < limit - 1) {
    const at = s.indexOf(sep, from);
    if (at < 0) break;
    out.push(s.slice(from, at));
    from = at + sep.length;
  }
  out.push(s.slice(from));
  return out;
}

/** Version 4 UUID text from 16 bytes (version and variant bits forced). */
function formatUuid(b: string): string {
  const bytes: number[] = [];
  for (let i = 0; i < 16; i++) bytes.push(b.charCodeAt(i) & 0xff);
  bytes[6] = (bytes[6] & 0x0f) | 0x40;
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  const hex = bytes.map((x) => x.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** Reads a bit range [start, end) of a packet, most significant bit first. */
function bitSlice(packet: string, start: number, end: number): number | undefined {
  if (start < 0 || end < start || end - start > 32 || end > packet.length * 8) return undefined;
  let v = 0;
  for (let bit = start; bit < end; bit++) {
    const byte = packet.charCodeAt(bit >> 3);
    v = v * 2 + ((byte >> (7 - (bit & 7))) & 1);
  }
  return v;
}

const TIMESTAMP_LEN = 10;

/**
 * Cloudflare's timed HMAC token: `message ‖ separator ‖ timestamp(10 digits) ‖ "-" ‖ mac`
 * where mac = Base64(HMAC-SHA256(key, message ‖ timestamp)), standard alphabet with
 * padding (flag `s`: URL-safe alphabet, no padding; a percent-encoded mac is decoded
 * first). Valid when the mac matches and 0 <= now - timestamp <= ttl.
 */
function timedHmacValid(key: string, token: string, ttl: number, now: number, sepLen: number, urlSafe: boolean): boolean {
  // The mac may itself contain '-' (URL-safe alphabet), so try every "<10 digits>-".
  for (let dash = token.indexOf('-'); dash >= 0; dash = token.indexOf('-', dash + 1)) {
    const tsStart = dash - TIMESTAMP_LEN;
    if (tsStart - sepLen < 0) continue;
    const ts = token.slice(tsStart, dash);
    if (!/^[0-9]{10}$/.test(ts)) continue;
    const age = now - Number(ts);
    if (age < 0 || age > ttl) continue;
    let macText = token.slice(dash + 1);
    if (macText.includes('%')) macText = urlDecodeOnce(macText, false);
    const mac = base64Decode(macText, urlSafe);
    if (mac === undefined) continue;
    const message = token.slice(0, tsStart - sepLen);
    if (mac === hmacSha256(key, message + ts)) return true;
  }
  return false;
}

export const RUNTIME_FUNCTIONS: ReadonlyMap<string, RuntimeFunction> = new Map<string, RuntimeFunction>([
  [
    'concat',
    fn((_lits, info) => {
      const arrayResult = info?.type?.kind === 'Array';
      return (args) => {
        let kind: 'bytes' | 'array' | undefined = arrayResult ? 'array' : undefined;
        for (const a of args) {
          if (a !== undefined) {
            kind = isArray(a) ? 'array' : 'bytes';
            break;
          }
        }
        if (kind === 'array') {
          const out: Value[] = [];
          for (const a of args) if (isArray(a)) for (const x of a) out.push(x);
          return out;
        }
        let s = '';
        for (const a of args) if (isBytes(a)) s += a;
        return s;
      };
    }),
  ],
  [
    'coalesce',
    fn(() => (args) => {
      for (const a of args) if (a !== undefined) return a;
      return undefined;
    }),
  ],
  ['cidr', simple(3, ([ip, v4, v6]) => (isIp(ip) && isInt(v4) && isInt(v6) ? cidrOf(ip, toNumber(v4), toNumber(v6)) : undefined))],
  ['cidr6', simple(2, ([ip, v6]) => (isIp(ip) && isInt(v6) ? cidrOf(ip, undefined, toNumber(v6)) : undefined))],
  ['decode_base64', simple(1, ([s]) => (isBytes(s) ? base64Decode(s, false) : undefined))],
  [
    'encode_base64',
    fn(() => (args) => {
      const [s, flags] = args;
      if (!isBytes(s)) return undefined;
      const f = isBytes(flags) ? flags : '';
      return base64Encode(s, f.includes('u'), f.includes('p'));
    }),
  ],
  ['ends_with', simple(2, ([s, x]) => (isBytes(s) && isBytes(x) ? s.endsWith(x) : undefined))],
  ['starts_with', simple(2, ([s, x]) => (isBytes(s) && isBytes(x) ? s.startsWith(x) : undefined))],
  ['has_key', simple(2, ([m, k]) => (isMap(m) && isBytes(k) ? m.has(k) : undefined))],
  [
    'has_value',
    simple(2, ([c, v]) => {
      if (v === undefined) return undefined;
      if (isArray(c)) return c.some((x) => valuesEqual(x, v));
      if (isMap(c)) {
        for (const x of c.values()) if (valuesEqual(x, v)) return true;
        return false;
      }
      return undefined;
    }),
  ],
  ['join', simple(2, ([items, sep]) => (isArray(items) && isBytes(sep) ? items.filter(isBytes).join(sep) : undefined))],
  [
    'split',
    fn(() => (args) => {
      const [s, sep, limit] = args;
      if (!isBytes(s) || !isBytes(sep) || sep === '') return undefined;
      if (args.length > 2 && !isInt(limit)) return undefined;
      // Without a limit (the 2-argument form) every separator splits.
      const n = isInt(limit) ? toNumber(limit) : Infinity;
      return n < 1 ? undefined : splitBytes(s, sep, n);
    }),
  ],
  [
    'len',
    simple(1, ([v]) => {
      if (isBytes(v) || isArray(v)) return v.length;
      if (isMap(v)) return v.size;
      return undefined;
    }),
  ],
  ['lookup_json_integer', lookupJson('int')],
  ['lookup_json_string', lookupJson('str')],
  ['lower', asciiCase(false)],
  ['upper', asciiCase(true)],
  [
    'regex_replace',
    fn((lits) => {
      // The pattern literal is Bytes; the engine reads it as UTF-8 text.
      const compileArg = (p: Value | undefined): LazyRegex | undefined => {
        if (!isBytes(p)) return undefined;
        const text = binaryToUtf8(p);
        return text === undefined ? undefined : lazyRegex(text);
      };
      const fixed = lits[1] !== undefined ? compileArg(lits[1]) : undefined;
      return (args) => {
        const [s, p, rep] = args;
        if (!isBytes(s) || !isBytes(rep) || p === undefined) return undefined;
        const re = lits[1] !== undefined ? fixed : compileArg(p);
        return re?.replaceFirst(s, rep);
      };
    }),
  ],
  [
    'remove_bytes',
    fn((lits) => {
      const setOf = (b: string): Uint8Array => {
        const set = new Uint8Array(256);
        for (let i = 0; i < b.length; i++) set[b.charCodeAt(i) & 0xff] = 1;
        return set;
      };
      const fixed = isBytes(lits[1]) ? setOf(lits[1]) : undefined;
      return (args) => {
        const [s, b] = args;
        if (!isBytes(s) || !isBytes(b)) return undefined;
        const set = fixed ?? setOf(b);
        let out = '';
        for (let i = 0; i < s.length; i++) if (!set[s.charCodeAt(i)]) out += s[i];
        return out;
      };
    }),
  ],
  [
    'remove_query_args',
    fn(() => (args) => {
      const q = args[0];
      if (!isBytes(q)) return undefined;
      const names = new Set<string>();
      for (let i = 1; i < args.length; i++) {
        const n = args[i];
        if (isBytes(n)) names.add(n);
      }
      if (q === '') return q;
      // Names compare as written (no percent-decoding); `a` and `a=` both name `a`.
      return q
        .split('&')
        .filter((part) => {
          const eq = part.indexOf('=');
          return !names.has(eq < 0 ? part : part.slice(0, eq));
        })
        .join('&');
    }),
  ],
  ['sha256', simple(1, ([s]) => (isBytes(s) ? sha256(s) : undefined))],
  [
    'substring',
    fn(() => (args) => {
      const [s, start, end] = args;
      if (!isBytes(s) || !isInt(start)) return undefined;
      if (args.length > 2 && !isInt(end)) return undefined;
      // Byte positions; negative ones count from the end (slice semantics, clamped).
      return isInt(end) ? s.slice(toNumber(start), toNumber(end)) : s.slice(toNumber(start));
    }),
  ],
  [
    'to_string',
    simple(1, ([v]) => {
      if (typeof v === 'boolean') return v ? 'true' : 'false';
      if (isInt(v)) return String(v);
      if (isIp(v)) return formatIp(v);
      return undefined;
    }),
  ],
  [
    'url_decode',
    fn(() => (args) => {
      const [s, opts] = args;
      if (!isBytes(s)) return undefined;
      const o = isBytes(opts) ? opts : '';
      const unicode = o.includes('u');
      const once = urlDecodeOnce(s, unicode);
      return o.includes('r') ? urlDecodeSettled(once, unicode) : once;
    }),
  ],
  [
    'uuidv4',
    // Deterministic: the first 16 seed bytes (cf.random_seed has 32), or the SHA-256 of
    // a shorter seed, with the version (4) and variant (10xx) bits set.
    simple(1, ([seed]) => (isBytes(seed) ? formatUuid(seed.length >= 16 ? seed : sha256(seed)) : undefined)),
  ],
  [
    'wildcard_replace',
    fn((lits) => {
      const parse = (p: Value | undefined) => {
        if (!isBytes(p)) return undefined;
        const r = parseWildcard(p);
        return r.ok ? r.value : undefined;
      };
      const fixed = lits[1] !== undefined ? parse(lits[1]) : undefined;
      return (args) => {
        const [s, p, rep, flags] = args;
        if (!isBytes(s) || !isBytes(rep) || p === undefined) return undefined;
        const pattern = lits[1] !== undefined ? fixed : parse(p);
        if (!pattern) return undefined;
        const caseSensitive = isBytes(flags) && flags.includes('s');
        const caps = wildcardCaptures(pattern, s, caseSensitive);
        if (!caps) return s;
        return expandTemplate(rep, (n) => (n === 0 ? s : caps[n - 1]));
      };
    }),
  ],
  [
    'is_timed_hmac_valid_v0',
    fn(() => (args) => {
      const [key, token, ttl, now, sepLen, flags] = args;
      if (!isBytes(key) || !isBytes(token) || !isInt(ttl) || !isInt(now)) return undefined;
      if (args.length > 4 && !isInt(sepLen)) return undefined;
      const sep = isInt(sepLen) ? toNumber(sepLen) : 0;
      return timedHmacValid(key, token, toNumber(ttl), toNumber(now), sep, isBytes(flags) && flags.includes('s'));
    }),
  ],
  [
    'is_jwt_valid',
    fn(() => (args, env) => {
      const id = args[0];
      if (!isBytes(id)) return undefined;
      const state = env?.fields.get(JWT_VALID_FIELD);
      if (!isMap(state)) return undefined;
      return state.get(id) === true;
    }),
  ],
  [
    'bit_slice',
    simple(3, ([packet, start, end]) =>
      isBytes(packet) && isInt(start) && isInt(end) ? bitSlice(packet, toNumber(start), toNumber(end)) : undefined,
    ),
  ],
  // Managed-only CRS transformations, operators and collection helpers (scheme/managed.ts).
  ...CRS_RUNTIME_FUNCTIONS,
]);
