/**
 * IP literals (reference §1.6): single addresses as Rust's std `IpAddr` parser reads
 * them, set elements as the engine reads them (the `cidr` crate for `addr[/len]`, std for
 * both ends of `A..B`), and helpers on IpAddr values.
 */
import type { IpAddr, IpRange } from './ir';
import { rustParseInt, type LitError, type LitResult } from './literals';

const ADDR_SYNTAX = "couldn't parse address in network: invalid IP address syntax";

function fail(code: LitError['code'], message: string, start: number, end: number, hint?: string, data?: LitError['data']): LitError {
  const e: LitError = hint === undefined ? { ok: false, message, start, end, code } : { ok: false, message, start, end, code, hint };
  return data ? { ...e, data } : e;
}

/** The engine's IP token: the maximal run of `[0-9A-Fa-f:./]`. */
function ipRun(s: string, pos: number): number {
  let i = pos;
  for (; i < s.length; i++) {
    const c = s.charCodeAt(i);
    const isIpChar =
      (c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x66) || (c >= 0x41 && c <= 0x46) || c === 0x3a || c === 0x2e || c === 0x2f;
    if (!isIpChar) break;
  }
  return i;
}

// ---------------------------------------------------------------------------------
// Rust std's address grammar. Each reader returns where it stopped; the callers require
// the whole text to be consumed, as `IpAddr::from_str` does.

type Read<T> = { v: T; end: number } | undefined;

/** 1-3 decimal digits, no leading zero unless the octet is `0`, at most 255. */
function readOctet(s: string, i: number): Read<number> {
  let j = i;
  let v = 0;
  while (j < s.length) {
    const c = s.charCodeAt(j);
    if (c < 0x30 || c > 0x39) break;
    if (j - i === 3) return undefined;
    v = v * 10 + (c - 0x30);
    j++;
  }
  if (j === i || (s[i] === '0' && j - i > 1) || v > 255) return undefined;
  return { v, end: j };
}

/** A dotted quad at i (not necessarily ending the text). */
function readIpv4(s: string, i: number): Read<number> {
  let n = 0;
  let j = i;
  for (let k = 0; k < 4; k++) {
    if (k > 0) {
      if (s[j] !== '.') return undefined;
      j++;
    }
    const o = readOctet(s, j);
    if (!o) return undefined;
    n = n * 256 + o.v;
    j = o.end;
  }
  return { v: n, end: j };
}

/** 1-4 hex digits (a fifth digit fails the group). */
function readHexGroup(s: string, i: number): Read<number> {
  let j = i;
  let v = 0;
  while (j < s.length) {
    const c = s.charCodeAt(j);
    const d = c >= 0x30 && c <= 0x39 ? c - 0x30 : c >= 0x61 && c <= 0x66 ? c - 0x57 : c >= 0x41 && c <= 0x46 ? c - 0x37 : -1;
    if (d < 0) break;
    if (j - i === 4) return undefined;
    v = v * 16 + d;
    j++;
  }
  return j === i ? undefined : { v, end: j };
}

/**
 * Up to `limit` colon-separated groups; a trailing embedded IPv4 address counts as two
 * groups and is tried first wherever two groups still fit.
 */
function readGroups(s: string, pos: number, limit: number): { groups: number[]; end: number; ipv4: boolean } {
  const groups: number[] = [];
  let i = pos;
  for (let k = 0; k < limit; k++) {
    const start = k > 0 ? (s[i] === ':' ? i + 1 : -1) : i;
    if (start < 0) break;
    if (k < limit - 1) {
      const v4 = readIpv4(s, start);
      if (v4) {
        groups.push(Math.floor(v4.v / 0x10000), v4.v % 0x10000);
        return { groups, end: v4.end, ipv4: true };
      }
    }
    const g = readHexGroup(s, start);
    if (!g) break;
    groups.push(g.v);
    i = g.end;
  }
  return { groups, end: i, ipv4: false };
}

/** RFC 4291 text forms: 8 groups, or head `::` tail; embedded IPv4 only at the end. */
function readIpv6(s: string, pos: number): Read<number[]> {
  const head = readGroups(s, pos, 8);
  if (head.groups.length === 8) return { v: head.groups, end: head.end };
  if (head.ipv4 || !s.startsWith('::', head.end)) return undefined;
  const tail = readGroups(s, head.end + 2, 8 - (head.groups.length + 1));
  const zeros = new Array<number>(8 - head.groups.length - tail.groups.length).fill(0);
  return { v: [...head.groups, ...zeros, ...tail.groups], end: tail.end };
}

function groupsToBigint(groups: readonly number[]): bigint {
  let n = 0n;
  for (const g of groups) n = (n << 16n) | BigInt(g);
  return n;
}

/** Rust's `IpAddr::from_str`: IPv4 is tried first and, if it reads, must be the whole text. */
function parseStdIp(s: string): IpAddr | undefined {
  const v4 = readIpv4(s, 0);
  if (v4) return v4.end === s.length ? { family: 4, n: v4.v } : undefined;
  const v6 = readIpv6(s, 0);
  return v6 && v6.end === s.length ? { family: 6, n: groupsToBigint(v6.v) } : undefined;
}

/**
 * The `cidr` crate's address reader: std first, then "short" IPv4 (1 to 4 dot-separated
 * `u8`s, each read by Rust's `u8::from_str`, so leading zeros are fine: `1.1.1.01`,
 * `10` = 10.0.0.0, `192.168` = 192.168.0.0).
 */
function parseCidrAddr(s: string): IpAddr | undefined {
  const std = parseStdIp(s);
  if (std) return std;
  const parts = s.split('.');
  if (parts.length > 4) return undefined;
  const octets = [0, 0, 0, 0];
  for (let k = 0; k < parts.length; k++) {
    const r = rustParseInt(parts[k], 10, 0n, 255n);
    if (typeof r !== 'bigint') return undefined;
    octets[k] = Number(r);
  }
  return { family: 4, n: ((octets[0] * 256 + octets[1]) * 256 + octets[2]) * 256 + octets[3] };
}

// ---------------------------------------------------------------------------------
// Literals.

const NETWORK_LENGTH_HINT = 'The network length after `/` is a number of bits: 0–32 for IPv4, 0–128 for IPv6 (`192.0.2.0/24`).';

/** The hint for a set element whose address part does not parse. */
function notAnAddress(text: string): string {
  return `\`${text}\` is not an IP address: write IPv4 as four numbers 0–255 without leading zeros (192.0.2.1), IPv6 like 2001:db8::1.`;
}

/**
 * A single address (RHS of `eq`, `lt`, … and function arguments): std syntax only. A
 * CIDR or a range here is the engine's address error with a hint that it belongs in a set.
 * `after` is the source after the token when a keyword is glued to it.
 */
export function parseIpAddr(text: string, after = ''): LitResult<IpAddr> {
  // A glued keyword (`1.2.3.4and`): the engine's token runs on over its hex letters.
  const glued = ipRun(after, 0);
  if (glued > 0) {
    const r = parseIpAddr(text + after.slice(0, glued));
    return r.ok ? fail('unrecognised-input', 'unrecognised input', text.length + glued, text.length + after.length) : r;
  }
  const end = ipRun(text, 0);
  if (end === 0) return fail('invalid-ip', 'expected IP address character', 0, text.length);
  const chunk = text.slice(0, end);
  const ip = parseStdIp(chunk);
  if (!ip) {
    const slash = chunk.lastIndexOf('/');
    if (slash >= 0 && parseCidrAddr(chunk.slice(0, slash))) {
      return fail('cidr-outside-set', ADDR_SYNTAX, 0, end, `\`${chunk}\` is a network (CIDR), and a network is only allowed in a set: write \`in {${chunk}}\` instead of \`eq\` (e.g. \`ip.src in {${chunk}}\`).`);
    }
    const dots = chunk.indexOf('..');
    if (dots >= 0 && parseStdIp(chunk.slice(0, dots)) && parseStdIp(chunk.slice(dots + 2))) {
      return fail('invalid-ip', ADDR_SYNTAX, 0, end, `a range is only allowed in a set: write \`ip.src in {${chunk}}\``);
    }
    return fail('invalid-ip', ADDR_SYNTAX, 0, end, 'Write an IPv4 address like 192.0.2.1 (no leading zeros) or an IPv6 address like 2001:db8::1.');
  }
  if (end < text.length) return fail('unrecognised-input', 'unrecognised input', end, text.length);
  return { ok: true, value: ip };
}

function familyName(ip: IpAddr): string {
  return ip.family === 4 ? 'Ipv4' : 'Ipv6';
}

/** The range a CIDR covers, or undefined when host bits are set. */
function cidrRange(ip: IpAddr, len: number): IpRange | undefined {
  if (ip.family === 4) {
    const size = 2 ** (32 - len);
    if (ip.n % size !== 0) return undefined;
    return [ip, { family: 4, n: ip.n + size - 1 }];
  }
  const host = (1n << BigInt(128 - len)) - 1n;
  if ((ip.n & host) !== 0n) return undefined;
  return [ip, { family: 6, n: ip.n | host }];
}

/** The network a CIDR with host bits set was probably meant to be. */
function networkOf(ip: IpAddr, len: number): IpAddr {
  if (ip.family === 4) {
    const size = 2 ** (32 - len);
    return { family: 4, n: ip.n - (ip.n % size) };
  }
  return { family: 6, n: ip.n & ~((1n << BigInt(128 - len)) - 1n) };
}

/**
 * An Ip set element: an address, a CIDR `addr/len` (host bits must be zero) or a range
 * `A..B` of one family with A <= B. Spans follow the engine: address and host-part errors
 * underline the address, length errors the length, too-long lengths the whole CIDR.
 */
export function parseIpSetItem(text: string): LitResult<IpRange> {
  const end = ipRun(text, 0);
  if (end === 0) return fail('invalid-ip', 'expected IP address character', 0, text.length);
  // In a set the rest would be the next element, which cannot start with these characters.
  if (end < text.length) return fail('invalid-ip', 'expected IP address character', end, text.length, 'Separate set elements with spaces.');
  const chunk = text.slice(0, end);

  const dots = chunk.indexOf('..');
  if (dots >= 0) {
    const a = parseStdIp(chunk.slice(0, dots));
    if (!a) return fail('invalid-ip', ADDR_SYNTAX, 0, dots, notAnAddress(chunk.slice(0, dots)));
    const b = parseStdIp(chunk.slice(dots + 2));
    if (!b) return fail('invalid-ip', ADDR_SYNTAX, dots + 2, end, notAnAddress(chunk.slice(dots + 2)));
    const order = compareIp(a, b);
    if (order === undefined || order > 0) {
      const hint = order === undefined ? 'Both ends of a range must be IPv4, or both IPv6.' : 'Write the lower address first: A..B with A <= B.';
      return fail('incompatible-range-bounds', 'incompatible range bounds', 0, end, hint);
    }
    return { ok: true, value: [a, b] };
  }

  // The crate splits at the last '/', the engine's spans at the first.
  const first = chunk.indexOf('/');
  const last = chunk.lastIndexOf('/');
  const addrEnd = first < 0 ? end : first;
  const ip = parseCidrAddr(last < 0 ? chunk : chunk.slice(0, last));
  if (!ip) return fail('invalid-ip', ADDR_SYNTAX, 0, addrEnd, notAnAddress(chunk.slice(0, addrEnd)));
  if (last < 0) return { ok: true, value: [ip, ip] };

  const len = rustParseInt(chunk.slice(last + 1), 10, 0n, 255n);
  if (typeof len !== 'bigint') return fail('invalid-ip', `couldn't parse length in network: ${len.error}`, first + 1, end, NETWORK_LENGTH_HINT);
  const max = ip.family === 4 ? 32 : 128;
  if (len > BigInt(max)) {
    return fail(
      'invalid-ip',
      `invalid length for network: Network length ${len} is too long for ${familyName(ip)} (maximum: ${max})`,
      0,
      end,
      NETWORK_LENGTH_HINT,
    );
  }
  const range = cidrRange(ip, Number(len));
  if (!range) {
    const net = networkOf(ip, Number(len));
    return fail('invalid-ip', 'host part of address was not zero', 0, addrEnd, `Did you mean ${formatIp(net)}/${len}? A network is written with its first address.`, { replacement: `${formatIp(net)}/${len}` });
  }
  return { ok: true, value: range };
}

// ---------------------------------------------------------------------------------
// Values.

/** Order within a family; undefined across families (IPv4 never equals or orders with IPv6). */
export function compareIp(a: IpAddr, b: IpAddr): number | undefined {
  if (a.family !== b.family) return undefined;
  return a.n < b.n ? -1 : a.n > b.n ? 1 : 0;
}

export function ipEquals(a: IpAddr, b: IpAddr): boolean {
  return a.family === b.family && a.n === b.n;
}

/** True when ip lies in one of the ranges of its own family. */
export function ipInRanges(ip: IpAddr, ranges: readonly IpRange[]): boolean {
  for (const [lo, hi] of ranges) {
    if (lo.family === ip.family && lo.n <= ip.n && ip.n <= hi.n) return true;
  }
  return false;
}

function formatIpv4(n: number): string {
  return `${Math.floor(n / 0x1000000) % 256}.${Math.floor(n / 0x10000) % 256}.${Math.floor(n / 0x100) % 256}.${n % 256}`;
}

/**
 * Canonical text: dotted quad, or RFC 5952 (lowercase, no leading zeros, the first
 * longest run of two or more zero groups as `::`, IPv4-mapped as `::ffff:a.b.c.d`), which
 * is also what Rust prints.
 */
export function formatIp(ip: IpAddr): string {
  if (ip.family === 4) return formatIpv4(ip.n);
  if (ip.n >> 32n === 0xffffn) return `::ffff:${formatIpv4(Number(ip.n & 0xffffffffn))}`;
  const groups: number[] = [];
  for (let k = 7; k >= 0; k--) groups.push(Number((ip.n >> BigInt(k * 16)) & 0xffffn));
  let bestStart = -1;
  let bestLen = 1;
  for (let k = 0; k < 8; ) {
    if (groups[k] !== 0) {
      k++;
      continue;
    }
    let j = k;
    while (j < 8 && groups[j] === 0) j++;
    if (j - k > bestLen) {
      bestStart = k;
      bestLen = j - k;
    }
    k = j;
  }
  const hex = (gs: number[]) => gs.map((g) => g.toString(16)).join(':');
  if (bestStart < 0) return hex(groups);
  return `${hex(groups.slice(0, bestStart))}::${hex(groups.slice(bestStart + bestLen))}`;
}
