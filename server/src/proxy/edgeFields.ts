/**
 * The fields a live request has no local source for: the client's address, country, AS
 * number, bot score, the request time, the ray id. Where each comes from, in order:
 *
 * 1. `--trust-proxy` (the proxy runs behind another one that says who the client is):
 *    `CF-Connecting-IP`, else the last address of `X-Forwarded-For`, is `ip.src`;
 *    `CF-IPCountry` is `ip.src.country`; `X-Forwarded-Proto: https` makes `ssl` true.
 *    The last address because a proxy in front appends the peer it saw (nginx's
 *    `$proxy_add_x_forwarded_for`, Cloudflare): the ones before it are whatever the client
 *    sent. A last entry that is not an address leaves the socket's peer. With
 *    `--trust-proxy-from CIDR,…` only a socket peer in one of those ranges is trusted so
 *    (nginx's `set_real_ip_from`); any other peer's request is taken as without
 *    `--trust-proxy` (`EdgeTrust`). That decision is made here, once per request
 *    (`EdgeFields.trusted`), and forwarding follows it too.
 * 2. `--fields-file FILE`: a JSON array of `{"cidr": "203.0.113.0/24", "country": "DE",
 *    "asn": 64500, "bot_score": 12, "threat_score": 0}` entries (every key but `cidr`
 *    optional); the first entry whose range holds `ip.src` gives the rest.
 * 3. Else the field is left to the engine's default (missing: a comparison with it is
 *    false), and the request's event lists it as defaulted.
 *
 * `ip.src` is always known (the socket's peer address); TLS fields are never known (the
 * proxy speaks plain HTTP) and are always listed as defaulted.
 *
 * Addresses are in canonical text (language/ip.ts: `2001:0db8:0:0:0:0:0:1` is
 * `2001:db8::1`, an IPv4-mapped IPv6 address is the IPv4 one), so one client is one
 * rate-limit counter and one worker however its address is spelled.
 */
import type { IpAddr, IpRange } from '../language/ir';
import { formatIp, ipInRanges, parseIpAddr, parseIpSetItem } from '../language/ip';
import { positionAt } from '../language/report';

export interface FieldsEntry {
  readonly cidr: string;
  readonly country?: string;
  readonly asn?: number;
  readonly botScore?: number;
  readonly threatScore?: number;
}

export interface FieldsMapping {
  readonly entries: readonly (FieldsEntry & { readonly range: AddressRanges })[];
  /** The first entry, in the file's order, whose range holds `ip` (canonicalIp). */
  readonly find: (ip: IpAddr) => FieldsEntry | undefined;
}

/** Entries a fields file may hold (a whole-Internet country table at /24 is ~15 million; aggregate it first). */
export const MAX_FIELDS_ENTRIES = 1_000_000;

/** Fields with no local source that a request may leave at the engine's default. */
export const SOURCELESS_FIELDS = ['ip.src.country', 'ip.src.asnum', 'cf.bot_management.score', 'cf.threat_score', 'cf.tls_version', 'cf.tls_cipher'] as const;

/** The mapping file's entries, or an error naming the entry and what to fix. */
export function parseFieldsFile(text: string, file: string): FieldsMapping | { error: string } {
  let data: unknown;
  try {
    data = JSON.parse(text.startsWith('\uFEFF') ? text.slice(1) : text);
  } catch (e) {
    return { error: `${file}${jsonErrorPlace(text, (e as Error).message)}: not JSON (${(e as Error).message}); expected an array of {"cidr": "203.0.113.0/24", "country": "DE", "asn": 64500, "bot_score": 12}` };
  }
  if (!Array.isArray(data)) return { error: `${file}: expected a JSON array of {"cidr": …, "country": …, "asn": …, "bot_score": …} entries` };
  if (data.length > MAX_FIELDS_ENTRIES) return { error: `${file}: ${data.length} entries; at most ${MAX_FIELDS_ENTRIES} (merge adjacent ranges of the same values into wider ones)` };
  const entries: (FieldsEntry & { range: AddressRanges })[] = [];
  for (const [i, e] of data.entries()) {
    const where = `${file}: entry ${i + 1} of ${data.length}`;
    if (typeof e !== 'object' || e === null || Array.isArray(e)) return { error: `${where}: expected an object with "cidr"` };
    const o = e as Record<string, unknown>;
    const unknownKey = Object.keys(o).find((k) => !['cidr', 'country', 'asn', 'bot_score', 'threat_score'].includes(k));
    if (unknownKey) return { error: `${where}: unknown key "${unknownKey}" (keys: cidr, country, asn, bot_score, threat_score)` };
    if (o.cidr === undefined) return { error: `${where}: "cidr" is required: the address range the entry is for, such as "203.0.113.0/24" or "2001:db8::/32"` };
    const cidr = typeof o.cidr === 'string' ? o.cidr : '';
    const range = parseRange(cidr);
    if ('wrong' in range) {
      return range.wrong === 'host-bits'
        ? { error: `${where}: "cidr" "${cidr}" has bits set past its /${range.bits} prefix; write the range with its first address (${range.first})` }
        : { error: `${where}: "cidr" must be an address range such as "203.0.113.0/24" or "2001:db8::/32", got ${JSON.stringify(o.cidr)}` };
    }
    if (o.country !== undefined && (typeof o.country !== 'string' || !/^[A-Z][A-Z0-9]$/.test(o.country))) return { error: `${where}: "country" must be an upper-case ISO 3166-1 alpha-2 code such as "DE", got ${JSON.stringify(o.country)}` };
    for (const [k, max] of [['asn', 4294967295], ['bot_score', 99], ['threat_score', 100]] as const) {
      const v = o[k];
      if (v !== undefined && (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > max)) return { error: `${where}: "${k}" must be a whole number from 0 to ${max}, got ${JSON.stringify(v)}` };
    }
    entries.push({
      cidr,
      range,
      ...(o.country !== undefined ? { country: o.country as string } : {}),
      ...(o.asn !== undefined ? { asn: o.asn as number } : {}),
      ...(o.bot_score !== undefined ? { botScore: o.bot_score as number } : {}),
      ...(o.threat_score !== undefined ? { threatScore: o.threat_score as number } : {}),
    });
  }
  return { entries, find: firstMatch(entries) };
}

/** ` (line L, column C)` for a JSON.parse message that names a position; else nothing. */
function jsonErrorPlace(text: string, message: string): string {
  const m = /at position (\d+)/.exec(message);
  if (!m) return '';
  const at = positionAt(text, Number(m[1]));
  return ` (line ${at.line + 1}, column ${at.character + 1})`;
}

/**
 * The fields file's first-match lookup without a scan of every entry (a country table has
 * hundreds of thousands, and the lookup runs for every request): CIDR ranges are nested or
 * apart, so the entries holding an address are at most one network per prefix length. Per
 * family, per length in use, the network → the first entry with it; a lookup is one Map
 * get per length (at most 33 for IPv4, 129 for IPv6), and the first entry among the hits wins.
 */
function firstMatch(entries: readonly (FieldsEntry & { readonly range: AddressRanges })[]): (ip: IpAddr) => FieldsEntry | undefined {
  const v4 = new Map<number, Map<number, number>>();
  const v6 = new Map<bigint, Map<bigint, number>>();
  const add = <N extends number | bigint>(byBlock: Map<N, Map<N, number>>, block: N, network: N, at: number) => {
    let networks = byBlock.get(block);
    if (!networks) byBlock.set(block, (networks = new Map()));
    if (!networks.has(network)) networks.set(network, at);
  };
  entries.forEach((e, at) => {
    for (const [lo, hi] of e.range.v4) {
      const block = (hi.n as number) - (lo.n as number) + 1;
      add(v4, block, Math.floor((lo.n as number) / block), at);
    }
    for (const [lo, hi] of e.range.v6) {
      const block = (hi.n as bigint) - (lo.n as bigint) + 1n;
      add(v6, block, (lo.n as bigint) / block, at);
    }
  });
  return (ip) => {
    let first = Infinity;
    if (ip.family === 4) for (const [block, networks] of v4) first = Math.min(first, networks.get(Math.floor(ip.n / block)) ?? Infinity);
    else for (const [block, networks] of v6) first = Math.min(first, networks.get(ip.n / block) ?? Infinity);
    return first === Infinity ? undefined : entries[first];
  };
}

export interface EdgeInput {
  /** The socket's peer address (`::ffff:` prefix allowed). */
  readonly remoteAddress: string;
  /** Lower-cased header names as Node gives them. */
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  /** Whose forwarding headers are the edge's word. */
  readonly trust: EdgeTrust;
  readonly mapping?: FieldsMapping;
  /** ms since the epoch. */
  readonly now: number;
  readonly rayId: string;
}

export interface EdgeFields {
  /** Field → text, as a sample's `# @field value` lines (requests/live.ts). */
  readonly edge: Record<string, string>;
  readonly clientIp: string;
  readonly country?: string;
  readonly asn?: number;
  readonly defaulted: string[];
  /**
   * Whether this request's peer was trusted (EdgeTrust): the one decision per request,
   * which the forwarded headers follow too (proxy.ts `forwarding`).
   */
  readonly trusted: boolean;
}

function first(h: string | string[] | undefined): string | undefined {
  return Array.isArray(h) ? h[0] : h;
}

/** The last entry of a comma-separated header (repeated headers in order, as Node joins them). */
function last(h: string | string[] | undefined): string | undefined {
  const all = Array.isArray(h) ? h.join(',') : h;
  return all?.slice(all.lastIndexOf(',') + 1).trim();
}

/** The first and last IPv4-mapped IPv6 addresses (`::ffff:0.0.0.0/96`). */
const MAPPED_FIRST = 0xffff_0000_0000n;
const MAPPED_LAST = 0xffff_ffff_ffffn;

/** An address, an IPv4-mapped IPv6 one as the IPv4 address; undefined when `a` is not an address. */
export function canonicalIp(a: string): IpAddr | undefined {
  const r = parseIpAddr(a.trim());
  if (!r.ok) return undefined;
  const ip = r.value;
  return ip.family === 6 && ip.n >= MAPPED_FIRST && ip.n <= MAPPED_LAST ? { family: 4, n: Number(ip.n - MAPPED_FIRST) } : ip;
}

/** An address in canonical text (IPv4-mapped IPv6 as IPv4), or undefined when `a` is not one. */
export function canonicalAddress(a: string): string | undefined {
  const ip = canonicalIp(a);
  return ip && formatIp(ip);
}

/** The most ranges `--trust-proxy-from` takes (Cloudflare publishes about 22). */
export const MAX_TRUSTED_RANGES = 1000;

/** `--trust-proxy-from`'s ranges, parsed once at startup: the per-request check is a scan of the peer's family's ranges. */
/** Address ranges as the engine reads them (language/ip.ts, as `ip.src in {…}` does), by family. */
export interface AddressRanges {
  readonly v4: readonly IpRange[];
  readonly v6: readonly IpRange[];
}

/** `--trust-proxy-from`'s ranges, parsed once at startup: the per-request check is a scan of the peer's family's ranges. */
export interface TrustedPeers extends AddressRanges {
  /** The entries as given. */
  readonly cidrs: readonly string[];
}

/**
 * One address (`10.0.0.1`, `2001:db8::1`) or CIDR range written with its first address
 * (`10.0.0.0/8`), as the engine's ranges; an IPv4-mapped IPv6 range (`::ffff:10.0.0.0/104`)
 * also holds the IPv4 addresses it maps, as addresses are compared in canonical form
 * (`::ffff:10.0.0.1` is 10.0.0.1). Else what is wrong: not a range, or bits set past the
 * prefix (`first` is the range written right), so a mistyped prefix is not silently widened.
 */
function parseRange(text: string): AddressRanges | { wrong: 'not-range' } | { wrong: 'host-bits'; address: string; bits: string; first: string } {
  // The engine's set reader also takes `A..B` and short IPv4 (`10/8`); here only an address in full, with an optional length.
  const m = /^([0-9A-Fa-f:.]+)(?:\/(0|[1-9]\d{0,2}))?$/.exec(text);
  if (!m || !parseIpAddr(m[1]!).ok) return { wrong: 'not-range' };
  const r = parseIpSetItem(text);
  if (!r.ok) {
    const first = r.data?.replacement;
    return first ? { wrong: 'host-bits', address: m[1]!, bits: m[2]!, first: String(first) } : { wrong: 'not-range' };
  }
  const [lo, hi] = r.value;
  if (lo.family === 4) return { v4: [r.value], v6: [] };
  const hiN = hi.n as bigint;
  const loN = lo.n as bigint;
  if (loN > MAPPED_LAST || hiN < MAPPED_FIRST) return { v4: [], v6: [r.value] };
  const from = loN > MAPPED_FIRST ? loN : MAPPED_FIRST;
  const to = hiN < MAPPED_LAST ? hiN : MAPPED_LAST;
  return {
    v4: [
      [
        { family: 4, n: Number(from - MAPPED_FIRST) },
        { family: 4, n: Number(to - MAPPED_FIRST) },
      ],
    ],
    v6: [r.value],
  };
}

/** Whether an address (canonicalIp) is in one of the ranges; one that did not parse never is. */
function inRanges(ranges: AddressRanges, ip: IpAddr | undefined): boolean {
  return ip !== undefined && ipInRanges(ip, ip.family === 4 ? ranges.v4 : ranges.v6);
}

const LIKE = '(like 10.0.0.0/8 or 2001:db8::/32)';

/**
 * `--trust-proxy-from`'s values (repeated flags; each a comma-separated list) as address
 * ranges (`parseRange`), or an error naming the entry and what is expected.
 */
export function parseTrustedPeers(values: readonly string[], flag = '--trust-proxy-from'): TrustedPeers | { error: string } {
  const cidrs: string[] = [];
  for (const value of values) {
    if (value.trim() === '') return { error: `${flag} needs at least one IP address or CIDR range ${LIKE}, got "${value}"` };
    for (const entry of value.split(',')) {
      if (entry.trim() === '') return { error: `${flag}: empty entry in "${value}"; separate IP addresses or CIDR ranges with single commas (like 10.0.0.0/8,2001:db8::/32)` };
      cidrs.push(entry.trim());
    }
  }
  if (cidrs.length === 0) return { error: `${flag} needs at least one IP address or CIDR range ${LIKE}` };
  if (cidrs.length > MAX_TRUSTED_RANGES) return { error: `${flag} takes at most ${MAX_TRUSTED_RANGES} ranges, got ${cidrs.length}` };
  const v4: IpRange[] = [];
  const v6: IpRange[] = [];
  for (const cidr of cidrs) {
    const r = parseRange(cidr);
    if ('wrong' in r) {
      return r.wrong === 'host-bits'
        ? { error: `${flag}: "${cidr}" has bits set past its /${r.bits} prefix; write the range with its first address (${r.first}), or ${r.address} alone for that one address` }
        : { error: `${flag}: "${cidr}" is not an IP address or CIDR range ${LIKE}` };
    }
    v4.push(...r.v4);
    v6.push(...r.v6);
  }
  return { cidrs, v4, v6 };
}

/**
 * The socket peer's address (canonicalIp), its zone id dropped: Node reports a link-local
 * peer as `fe80::1%eth0`, and the address, not the interface, is what ranges and rules
 * compare. Only the socket's own word: an address a header names has no zone id.
 */
export function peerIp(remoteAddress: string): IpAddr | undefined {
  const zone = remoteAddress.indexOf('%');
  return canonicalIp(zone >= 0 ? remoteAddress.slice(0, zone) : remoteAddress);
}

/** The socket peer as text, as `ip.src` and the forwarded headers name it: peerIp's canonical form, or as Node gave it when it is not an address. */
export function peerAddress(remoteAddress: string): string {
  const ip = peerIp(remoteAddress);
  return ip ? formatIp(ip) : remoteAddress;
}

/**
 * Whose forwarding headers are the edge's word: nobody (the default), every peer
 * (`--trust-proxy`), or only peers in ranges (`--trust-proxy-from`, which wins when both
 * flags are given: the narrower trust).
 */
export type EdgeTrust = 'nobody' | 'everyone' | TrustedPeers;

/** Whether the trust holds for a peer (peerIp); in ranges, an address that did not parse never is. */
export function trustsPeer(trust: EdgeTrust, peer: IpAddr | undefined): boolean {
  if (trust === 'nobody' || trust === 'everyone') return trust === 'everyone';
  return inRanges(trust, peer);
}

/** Whether the request's socket peer is one whose forwarding headers are the edge's word. */
export function peerTrusted(input: Pick<EdgeInput, 'remoteAddress' | 'trust'>): boolean {
  return trustsPeer(input.trust, peerIp(input.remoteAddress));
}

/** The client's address: the peer's, or what a trusted peer says it is (CF-Connecting-IP, else the last X-Forwarded-For). */
export function clientAddress(input: Pick<EdgeInput, 'remoteAddress' | 'headers' | 'trust'>): string {
  const peer = peerIp(input.remoteAddress);
  const own = peer ? formatIp(peer) : input.remoteAddress;
  if (!trustsPeer(input.trust, peer)) return own;
  const told = first(input.headers['cf-connecting-ip'])?.trim() || last(input.headers['x-forwarded-for']);
  return (told ? canonicalAddress(told) : undefined) ?? own;
}

/**
 * The protocol the client used: from a trusted peer the edge's `X-Forwarded-Proto` (its first
 * entry, `http` or `https`: what the rules' `ssl` follows), else this connection's (`own`).
 */
export function forwardedProto(headers: EdgeInput['headers'], trusted: boolean, own: string): string {
  if (!trusted) return own;
  const told = first(headers['x-forwarded-proto'])?.split(',')[0]?.trim().toLowerCase();
  return told === 'http' || told === 'https' ? told : own;
}

export function edgeFields(input: EdgeInput): EdgeFields {
  const clientIp = clientAddress(input);
  const trusted = peerTrusted(input);
  let country: string | undefined;
  let asn: number | undefined;
  let botScore: number | undefined;
  let threatScore: number | undefined;
  let ssl = false;
  if (trusted) {
    const c = first(input.headers['cf-ipcountry'])?.trim().toUpperCase();
    if (c && /^[A-Z][A-Z0-9]$/.test(c)) country = c;
    ssl = forwardedProto(input.headers, true, 'http') === 'https';
  }
  const client = input.mapping && canonicalIp(clientIp);
  const hit = client && input.mapping?.find(client);
  if (hit) {
    country ??= hit.country;
    asn = hit.asn;
    botScore = hit.botScore;
    threatScore = hit.threatScore;
  }
  const edge: Record<string, string> = {
    'ip.src': clientIp,
    'http.request.timestamp.sec': String(Math.floor(input.now / 1000)),
    'http.request.timestamp.msec': String(input.now % 1000),
    'cf.ray_id': input.rayId,
  };
  if (ssl) edge.ssl = 'true';
  if (country !== undefined) edge['ip.src.country'] = country;
  if (asn !== undefined) edge['ip.src.asnum'] = String(asn);
  if (botScore !== undefined) edge['cf.bot_management.score'] = String(botScore);
  if (threatScore !== undefined) edge['cf.threat_score'] = String(threatScore);
  const defaulted = SOURCELESS_FIELDS.filter((f) => edge[f] === undefined);
  return { edge, clientIp, ...(country !== undefined ? { country } : {}), ...(asn !== undefined ? { asn } : {}), defaulted, trusted };
}
