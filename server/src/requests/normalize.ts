/**
 * Cloudflare's URL normalization of the request path (reference rules-language.md §6.4,
 * Cloudflare docs "How URL normalization works" and "URL normalization examples"):
 *
 * - RFC 3986 type: percent-decode the unreserved characters (`A-Z a-z 0-9 - . _ ~`),
 *   leave the reserved ones (`: / ? # [ ] @ ! $ & ' ( ) * + , ; =`) as they are,
 *   percent-encode every other byte, upper-case the hex digits of the escapes that stay,
 *   then remove dot segments (RFC 3986 §5.2.4).
 * - Cloudflare type (the reference's default): first `\` -> `/`, then merge runs of `/`,
 *   then the RFC 3986 steps.
 *
 * Only the path is normalized. The docs describe and exemplify paths only, and the query
 * fields (`http.request.uri.query`, `.args*`) are documented as "no decoding performed",
 * so the query string is kept as written.
 *
 * Where the docs are silent we choose: a `%` that does not start a valid escape is "another
 * character" and becomes `%25`; unreserved characters are decoded before dot segments
 * are removed, so `/%2e%2e/` is a `..` segment (the RFC's order of operations).
 *
 * All strings here are binary strings (one code unit per byte, see language/bytes.ts).
 */
import { hexDigitValue, percentDecode as decodePercent } from '../language/bytes';

export type UrlNormalization = 'cloudflare' | 'rfc3986' | 'none';

const HEX = '0123456789ABCDEF';

const isHexDigit = (c: number) => hexDigitValue(c) >= 0;

/** RFC 3986 §2.3 unreserved: ALPHA / DIGIT / "-" / "." / "_" / "~". */
export function isUnreserved(c: number): boolean {
  return (
    (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39) || c === 0x2d || c === 0x2e || c === 0x5f || c === 0x7e
  );
}

const RESERVED = new Set(Array.from(":/?#[]@!$&'()*+,;=", (ch) => ch.charCodeAt(0)));

/** RFC 3986 §2.2 reserved: gen-delims and sub-delims. */
export function isReserved(c: number): boolean {
  return RESERVED.has(c);
}

function escape(byte: number): string {
  return '%' + HEX[byte >> 4] + HEX[byte & 15];
}

/**
 * Decodes `%XX` escapes of unreserved characters, upper-cases the other escapes and
 * percent-encodes every byte that is neither unreserved nor reserved (including a `%`
 * that does not start an escape).
 */
export function normalizePercentEncoding(s: string): string {
  let out = '';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i) & 0xff;
    if (c === 0x25) {
      if (i + 2 < s.length && isHexDigit(s.charCodeAt(i + 1)) && isHexDigit(s.charCodeAt(i + 2))) {
        const b = hexDigitValue(s.charCodeAt(i + 1)) * 16 + hexDigitValue(s.charCodeAt(i + 2));
        out += isUnreserved(b) ? String.fromCharCode(b) : escape(b);
        i += 2;
      } else out += '%25';
    } else if (isUnreserved(c) || isReserved(c)) out += String.fromCharCode(c);
    else out += escape(c);
  }
  return out;
}

/** RFC 3986 §5.2.4 remove_dot_segments. */
export function removeDotSegments(path: string): string {
  let input = path;
  let output = '';
  const dropLastSegment = (): void => {
    const i = output.lastIndexOf('/');
    output = i < 0 ? '' : output.slice(0, i);
  };
  while (input.length > 0) {
    if (input.startsWith('../')) input = input.slice(3);
    else if (input.startsWith('./')) input = input.slice(2);
    else if (input.startsWith('/./')) input = input.slice(2);
    else if (input === '/.') input = '/';
    else if (input.startsWith('/../')) {
      input = input.slice(3);
      dropLastSegment();
    } else if (input === '/..') {
      input = '/';
      dropLastSegment();
    } else if (input === '.' || input === '..') input = '';
    else {
      const next = input.indexOf('/', input.startsWith('/') ? 1 : 0);
      const end = next < 0 ? input.length : next;
      output += input.slice(0, end);
      input = input.slice(end);
    }
  }
  return output;
}

/** The path as `http.request.uri.path` sees it under the zone's normalization setting. */
export function normalizeUrlPath(path: string, type: UrlNormalization = 'cloudflare'): string {
  if (type === 'none') return path;
  let p = path;
  if (type === 'cloudflare') p = p.replace(/\\/g, '/').replace(/\/{2,}/g, '/');
  return removeDotSegments(normalizePercentEncoding(p));
}

/**
 * The file extension of the last path segment, without the dot: the text after the last
 * dot; "" when there is no dot, when the segment's only dot is its first character
 * (`/.mp3`), or when the dot ends the segment (`/foo.`). `lower` lower-cases ASCII letters
 * (`http.request.uri.path.extension`; the raw field keeps the case).
 */
export function pathExtension(path: string, lower: boolean): string {
  const segment = path.slice(path.lastIndexOf('/') + 1);
  const dot = segment.lastIndexOf('.');
  if (dot <= 0) return '';
  const ext = segment.slice(dot + 1);
  return lower ? ext.replace(/[A-Z]+/g, (m) => m.toLowerCase()) : ext;
}

/** Decodes every valid `%XX` escape (no `+` handling); invalid escapes stay as written. */
export function percentDecode(s: string): string {
  return decodePercent(s);
}
