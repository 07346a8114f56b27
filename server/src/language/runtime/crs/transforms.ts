/**
 * CRS (ModSecurity v3) transformations over binary strings, written from ModSecurity's
 * reference manual (the "Transformation functions" section), not from its code.
 *
 * Choices where the manual is terse:
 * - `%uHHHH` (urlDecodeUni), `\uHHHH` (jsDecode) and CSS escapes give one byte: the
 *   full-width forms U+FF01..U+FF5E become their ASCII counterparts (U+0021..U+007E),
 *   any other code point its low byte ("converts one entity into one byte").
 * - htmlEntityDecode knows `&#DDD;` `&#xHH;` `&quot;` `&amp;` `&lt;` `&gt;` `&nbsp;`
 *   (semicolon optional); `&nbsp;` is byte 0xA0; numeric entities give their low byte.
 * - Whitespace is ASCII white space (space, \t \n \v \f \r) plus 0xA0 where the manual
 *   mentions non-breaking space (compressWhitespace, removeWhitespace).
 */
import { asciiLower, codesToBinary, hex4At, hexDigitValue, percentDecode } from '../../bytes';
export type Transform = (s: string) => string;

function isHex(c: number): boolean {
  return hexDigitValue(c) >= 0;
}

/** A code point to the single byte ModSecurity keeps. */
function codePointByte(cp: number): string {
  if (cp >= 0xff01 && cp <= 0xff5e) return String.fromCharCode(cp - 0xff01 + 0x21);
  return String.fromCharCode(cp & 0xff);
}

function isSpace(c: number): boolean {
  return c === 32 || (c >= 9 && c <= 13);
}

export function urlDecode(s: string): string {
  return percentDecode(s, { plus: true });
}

export function urlDecodeUni(s: string): string {
  return percentDecode(s, { plus: true, percentU: percentUByte });
}

/** `%uXXXX` -> the single byte ModSecurity keeps. */
function percentUByte(s: string, i: number): readonly [string, number] | undefined {
  const cp = hex4At(s, i + 2);
  return cp < 0 ? undefined : [codePointByte(cp), 6];
}

const NAMED_ENTITIES: Readonly<Record<string, string>> = { quot: '"', amp: '&', lt: '<', gt: '>', nbsp: '\xa0' };

export function htmlEntityDecode(s: string): string {
  if (s.indexOf('&') < 0) return s;
  let out = '';
  for (let i = 0; i < s.length; i++) {
    if (s[i] !== '&') {
      out += s[i];
      continue;
    }
    let j = i + 1;
    if (s[j] === '#') {
      j++;
      const hex = s[j] === 'x' || s[j] === 'X';
      if (hex) j++;
      const start = j;
      let v = 0;
      while (j < s.length && (hex ? isHex(s.charCodeAt(j)) : s.charCodeAt(j) >= 48 && s.charCodeAt(j) <= 57)) {
        v = (v * (hex ? 16 : 10) + hexDigitValue(s.charCodeAt(j))) % 0x1000000;
        j++;
      }
      if (j > start) {
        out += String.fromCharCode(v & 0xff);
        if (s[j] === ';') j++;
        i = j - 1;
        continue;
      }
      out += '&';
      continue;
    }
    const m = /^(quot|amp|lt|gt|nbsp)/i.exec(s.slice(j, j + 4));
    if (m) {
      out += NAMED_ENTITIES[m[1].toLowerCase()];
      j += m[1].length;
      if (s[j] === ';') j++;
      i = j - 1;
      continue;
    }
    out += '&';
  }
  return out;
}

const JS_SIMPLE: Readonly<Record<string, string>> = { a: '\x07', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v' };

export function jsDecode(s: string): string {
  if (s.indexOf('\\') < 0) return s;
  let out = '';
  for (let i = 0; i < s.length; i++) {
    if (s[i] !== '\\' || i + 1 >= s.length) {
      out += s[i];
      continue;
    }
    const e = s[i + 1];
    if (e === 'u' && i + 5 < s.length && [2, 3, 4, 5].every((k) => isHex(s.charCodeAt(i + k)))) {
      out += codePointByte(parseInt(s.slice(i + 2, i + 6), 16));
      i += 5;
    } else if (e === 'x' && i + 3 < s.length && isHex(s.charCodeAt(i + 2)) && isHex(s.charCodeAt(i + 3))) {
      out += String.fromCharCode(parseInt(s.slice(i + 2, i + 4), 16));
      i += 3;
    } else if (e >= '0' && e <= '7') {
      let j = i + 1;
      let v = 0;
      while (j < s.length && j < i + 4 && s[j] >= '0' && s[j] <= '7' && v * 8 + (s.charCodeAt(j) - 48) <= 0xff) v = v * 8 + (s.charCodeAt(j++) - 48);
      out += String.fromCharCode(v);
      i = j - 1;
    } else if (Object.hasOwn(JS_SIMPLE, e)) {
      out += JS_SIMPLE[e];
      i++;
    } else {
      out += e; // \\ \' \" \? and any other escaped character: the character itself
      i++;
    }
  }
  return out;
}

export function cssDecode(s: string): string {
  if (s.indexOf('\\') < 0) return s;
  let out = '';
  for (let i = 0; i < s.length; i++) {
    if (s[i] !== '\\') {
      out += s[i];
      continue;
    }
    if (i + 1 >= s.length) break; // a trailing backslash is dropped
    let j = i + 1;
    let v = 0;
    while (j < s.length && j < i + 7 && isHex(s.charCodeAt(j))) v = v * 16 + hexDigitValue(s.charCodeAt(j++));
    if (j > i + 1) {
      out += codePointByte(v);
      if (j < s.length && isSpace(s.charCodeAt(j))) j++; // one white space ends the escape
      i = j - 1;
    } else if (s[i + 1] === '\n') i++; // line continuation
    else {
      out += s[i + 1];
      i++;
    }
  }
  return out;
}

export function cmdLine(s: string): string {
  // Nothing to delete, replace, compress or lower-case: the value as it is.
  if (!/[\\"'^,;\t-\r A-Z]/.test(s)) return s;
  // Into an array of code units, not `out += ch`: a long value (a 100 KB query) would
  // otherwise become a rope of one node per character for the collector to walk.
  const n = s.length;
  const out = new Uint16Array(n + 1); // + a trailing space
  let k = 0;
  let pendingSpace = false;
  for (let i = 0; i < n; i++) {
    let c = s.charCodeAt(i);
    if (c === 92 || c === 34 || c === 39 || c === 94) continue; // \ " ' ^
    if (c === 44 || c === 59) c = 32; // , ;
    if (isSpace(c)) {
      pendingSpace = true;
      continue;
    }
    if (pendingSpace && c !== 47 && c !== 40) out[k++] = 32; // not before / (
    pendingSpace = false;
    out[k++] = c >= 65 && c <= 90 ? c + 32 : c;
  }
  if (pendingSpace) out[k++] = 32;
  return sameOrNew(s, out, k);
}

/** `s` itself when the codes spell it (a value with single spaces and no capitals), else the codes as a string. */
function sameOrNew(s: string, codes: Uint16Array, length: number): string {
  if (length === s.length) {
    let i = 0;
    while (i < length && codes[i] === s.charCodeAt(i)) i++;
    if (i === length) return s;
  }
  return codesToBinary(codes, length);
}

export function compressWhitespace(s: string): string {
  return s.replace(/[\t-\r \xa0]+/g, ' ');
}

export function removeNulls(s: string): string {
  return s.indexOf('\0') < 0 ? s : s.replace(/\0/g, '');
}

export function removeWhitespace(s: string): string {
  return s.replace(/[\t-\r \xa0]+/g, '');
}

export function trim(s: string): string {
  return s.replace(/^[\t-\r ]+|[\t-\r ]+$/g, '');
}

export function replaceComments(s: string): string {
  if (s.indexOf('/*') < 0) return s;
  let out = '';
  for (let i = 0; i < s.length; i++) {
    if (s[i] === '/' && s[i + 1] === '*') {
      const end = s.indexOf('*/', i + 2);
      out += ' ';
      if (end < 0) return out; // an unterminated comment runs to the end
      i = end + 1;
    } else out += s[i];
  }
  return out;
}

/** Removes `//`, `./` and `x/../` from a path; a leading `..` of a relative path stays. */
export function normalizePath(s: string): string {
  // Without `//` and `.`/`..` segments there is nothing to remove.
  if (s === '' || !/\/\/|(?:^|\/)\.\.?(?:\/|$)/.test(s)) return s;
  const absolute = s[0] === '/';
  const segments = s.split('/');
  const last = segments[segments.length - 1];
  const trailing = segments.length > 1 && (last === '' || last === '.' || last === '..');
  const out: string[] = [];
  for (const seg of segments) {
    if (seg === '' || seg === '.') continue;
    if (seg === '..') {
      if (out.length > 0 && out[out.length - 1] !== '..') out.pop();
      else if (!absolute) out.push('..');
      continue;
    }
    out.push(seg);
  }
  let r = (absolute ? '/' : '') + out.join('/');
  if (trailing && out.length > 0) r += '/';
  return r;
}

export function normalizePathWin(s: string): string {
  return normalizePath(s.replace(/\\/g, '/'));
}

/** UTF-8 multi-byte sequences -> `%uHHHH`; bytes that are not valid UTF-8 stay as they are. */
export function utf8toUnicode(s: string): string {
  let first = 0;
  while (first < s.length && s.charCodeAt(first) < 0x80) first++;
  if (first === s.length) return s;
  let out = s.slice(0, first);
  for (let i = first; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) {
      out += s[i];
      continue;
    }
    const n = c >= 0xc2 && c <= 0xdf ? 1 : c >= 0xe0 && c <= 0xef ? 2 : c >= 0xf0 && c <= 0xf4 ? 3 : -1;
    let cp = n === 1 ? c & 0x1f : n === 2 ? c & 0x0f : c & 0x07;
    let ok = n > 0 && i + n < s.length;
    for (let k = 1; ok && k <= n; k++) {
      const b = s.charCodeAt(i + k);
      if (Number.isNaN(b) || (b & 0xc0) !== 0x80) ok = false;
      else cp = (cp << 6) | (b & 0x3f);
    }
    if (ok && ((n === 2 && cp < 0x800) || (n === 3 && (cp < 0x10000 || cp > 0x10ffff)))) ok = false;
    if (!ok) {
      out += s[i];
      continue;
    }
    out += '%u' + cp.toString(16).padStart(4, '0');
    i += n;
  }
  return out;
}

export function lowercase(s: string): string {
  return asciiLower(s);
}

const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

/**
 * Decodes Base64 (padding optional). A value with a character outside the alphabet is
 * not Base64 and is returned unchanged: decoding it would turn plain payloads into
 * garbage, and CRS's own regression tests for 934100 (`t:urlDecodeUni,t:base64Decode`)
 * expect plain `_$$ND_FUNC$$_` to still match.
 */
export function base64Decode(s: string): string {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(s)) return s;
  let out = '';
  let acc = 0;
  let bits = 0;
  for (let i = 0; i < s.length; i++) {
    const d = B64.indexOf(s[i]);
    if (d < 0) break;
    acc = ((acc << 6) | d) & 0xffffff;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += String.fromCharCode((acc >> bits) & 0xff);
    }
  }
  return out;
}

export function hexEncode(s: string): string {
  let out = '';
  for (let i = 0; i < s.length; i++) out += (s.charCodeAt(i) & 0xff).toString(16).padStart(2, '0');
  return out;
}

/** SHA-1 digest (20 raw bytes). */
export function sha1(bin: string): string {
  const len = bin.length;
  const total = Math.ceil((len + 9) / 64) * 64;
  const bytes = new Uint8Array(total);
  for (let i = 0; i < len; i++) bytes[i] = bin.charCodeAt(i) & 0xff;
  bytes[len] = 0x80;
  const dv = new DataView(bytes.buffer);
  dv.setUint32(total - 8, Math.floor((len * 8) / 0x100000000));
  dv.setUint32(total - 4, (len * 8) >>> 0);
  let [h0, h1, h2, h3, h4] = [0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476, 0xc3d2e1f0];
  const w = new Uint32Array(80);
  for (let off = 0; off < total; off += 64) {
    for (let i = 0; i < 16; i++) w[i] = dv.getUint32(off + i * 4);
    for (let i = 16; i < 80; i++) {
      const x = w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16];
      w[i] = (x << 1) | (x >>> 31);
    }
    let [a, b, c, d, e] = [h0, h1, h2, h3, h4];
    for (let i = 0; i < 80; i++) {
      const f = i < 20 ? (b & c) | (~b & d) : i < 40 ? b ^ c ^ d : i < 60 ? (b & c) | (b & d) | (c & d) : b ^ c ^ d;
      const k = i < 20 ? 0x5a827999 : i < 40 ? 0x6ed9eba1 : i < 60 ? 0x8f1bbcdc : 0xca62c1d6;
      const t = (((a << 5) | (a >>> 27)) + f + e + k + w[i]) | 0;
      e = d;
      d = c;
      c = (b << 30) | (b >>> 2);
      b = a;
      a = t;
    }
    h0 = (h0 + a) | 0;
    h1 = (h1 + b) | 0;
    h2 = (h2 + c) | 0;
    h3 = (h3 + d) | 0;
    h4 = (h4 + e) | 0;
  }
  let out = '';
  for (const h of [h0, h1, h2, h3, h4]) out += String.fromCharCode(h >>> 24, (h >>> 16) & 0xff, (h >>> 8) & 0xff, h & 0xff);
  return out;
}

/** Transformations by their CRS name (without `t.`), Bytes -> Bytes. */
export const TRANSFORMS: ReadonlyMap<string, Transform> = new Map<string, Transform>([
  ['urlDecodeUni', urlDecodeUni],
  ['urlDecode', urlDecode],
  ['htmlEntityDecode', htmlEntityDecode],
  ['jsDecode', jsDecode],
  ['cssDecode', cssDecode],
  ['cmdLine', cmdLine],
  ['compressWhitespace', compressWhitespace],
  ['removeNulls', removeNulls],
  ['removeWhitespace', removeWhitespace],
  ['replaceComments', replaceComments],
  ['normalisePath', normalizePath],
  ['normalizePath', normalizePath],
  ['normalizePathWin', normalizePathWin],
  ['utf8toUnicode', utf8toUnicode],
  ['lowercase', lowercase],
  ['base64Decode', base64Decode],
  ['hexEncode', hexEncode],
  ['sha1', sha1],
  ['trim', trim],
  ['none', (s) => s],
]);
