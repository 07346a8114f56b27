/**
 * The fields a live request has no local source for: the client's address, country, AS
 * number, bot score, the request time, the ray id. Where each comes from, in order:
 *
 * 1. `--trust-proxy` (the proxy runs behind another one that says who the client is):
 *    `CF-Connecting-IP`, else the last address of `X-Forwarded-For`, is `ip.src`;
 *    `CF-IPCountry` is `ip.src.country`; `X-Forwarded-Proto: https` makes `ssl` true.
 *    The last address because a proxy in front appends the peer it saw (nginx's
 *    `$proxy_add_x_forwarded_for`, Cloudflare): the ones before it are whatever the client
 *    sent. A last entry that is not an address leaves the socket's peer.
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
import { BlockList, isIP } from 'node:net';
import { formatIp, parseIpAddr } from '../language/ip';

export interface FieldsEntry {
  readonly cidr: string;
  readonly country?: string;
  readonly asn?: number;
  readonly botScore?: number;
  readonly threatScore?: number;
}

export interface FieldsMapping {
  readonly entries: readonly (FieldsEntry & { readonly range: BlockList })[];
}

/** Fields with no local source that a request may leave at the engine's default. */
export const SOURCELESS_FIELDS = ['ip.src.country', 'ip.src.asnum', 'cf.bot_management.score', 'cf.threat_score', 'cf.tls_version', 'cf.tls_cipher'] as const;

/** The mapping file's entries, or an error naming the entry and what to fix. */
export function parseFieldsFile(text: string, file: string): FieldsMapping | { error: string } {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (e) {
    return { error: `${file}: not JSON (${(e as Error).message}); expected an array of {"cidr": "203.0.113.0/24", "country": "DE", "asn": 64500, "bot_score": 12}` };
  }
  if (!Array.isArray(data)) return { error: `${file}: expected a JSON array of {"cidr": …, "country": …, "asn": …, "bot_score": …} entries` };
  const entries: (FieldsEntry & { range: BlockList })[] = [];
  for (const [i, e] of data.entries()) {
    const where = `${file}: entry ${i}`;
    if (typeof e !== 'object' || e === null || Array.isArray(e)) return { error: `${where}: expected an object with "cidr"` };
    const o = e as Record<string, unknown>;
    const unknownKey = Object.keys(o).find((k) => !['cidr', 'country', 'asn', 'bot_score', 'threat_score'].includes(k));
    if (unknownKey) return { error: `${where}: unknown key "${unknownKey}" (keys: cidr, country, asn, bot_score, threat_score)` };
    const cidr = typeof o.cidr === 'string' ? o.cidr : '';
    const m = /^([^/]+)(?:\/(\d{1,3}))?$/.exec(cidr);
    const family = m ? isIP(m[1]!) : 0;
    const bits = m?.[2] === undefined ? (family === 6 ? 128 : 32) : Number(m[2]);
    if (!m || family === 0 || bits > (family === 6 ? 128 : 32)) return { error: `${where}: "cidr" must be an address range such as "203.0.113.0/24" or "2001:db8::/32", got ${JSON.stringify(o.cidr)}` };
    if (o.country !== undefined && (typeof o.country !== 'string' || !/^[A-Z][A-Z0-9]$/.test(o.country))) return { error: `${where}: "country" must be an upper-case ISO 3166-1 alpha-2 code such as "DE", got ${JSON.stringify(o.country)}` };
    for (const [k, max] of [['asn', 4294967295], ['bot_score', 99], ['threat_score', 100]] as const) {
      const v = o[k];
      if (v !== undefined && (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > max)) return { error: `${where}: "${k}" must be a whole number from 0 to ${max}, got ${JSON.stringify(v)}` };
    }
    const range = new BlockList();
    range.addSubnet(m[1]!, bits, family === 6 ? 'ipv6' : 'ipv4');
    entries.push({
      cidr,
      range,
      ...(o.country !== undefined ? { country: o.country as string } : {}),
      ...(o.asn !== undefined ? { asn: o.asn as number } : {}),
      ...(o.bot_score !== undefined ? { botScore: o.bot_score as number } : {}),
      ...(o.threat_score !== undefined ? { threatScore: o.threat_score as number } : {}),
    });
  }
  return { entries };
}

export interface EdgeInput {
  /** The socket's peer address (`::ffff:` prefix allowed). */
  readonly remoteAddress: string;
  /** Lower-cased header names as Node gives them. */
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly trustProxy: boolean;
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
}

function first(h: string | string[] | undefined): string | undefined {
  return Array.isArray(h) ? h[0] : h;
}

/** The last entry of a comma-separated header (repeated headers in order, as Node joins them). */
function last(h: string | string[] | undefined): string | undefined {
  const all = Array.isArray(h) ? h.join(',') : h;
  return all?.slice(all.lastIndexOf(',') + 1).trim();
}

/** An address in canonical text (IPv4-mapped IPv6 as IPv4), or undefined when `a` is not one. */
export function canonicalAddress(a: string): string | undefined {
  const r = parseIpAddr(a.trim());
  if (!r.ok) return undefined;
  const text = formatIp(r.value);
  return text.startsWith('::ffff:') && isIP(text.slice(7)) === 4 ? text.slice(7) : text;
}

export function edgeFields(input: EdgeInput): EdgeFields {
  let clientIp = canonicalAddress(input.remoteAddress) ?? input.remoteAddress;
  let country: string | undefined;
  let asn: number | undefined;
  let botScore: number | undefined;
  let threatScore: number | undefined;
  let ssl = false;
  if (input.trustProxy) {
    const told = first(input.headers['cf-connecting-ip'])?.trim() || last(input.headers['x-forwarded-for']);
    const address = told ? canonicalAddress(told) : undefined;
    if (address) clientIp = address;
    const c = first(input.headers['cf-ipcountry'])?.trim().toUpperCase();
    if (c && /^[A-Z][A-Z0-9]$/.test(c)) country = c;
    ssl = first(input.headers['x-forwarded-proto'])?.split(',')[0]?.trim().toLowerCase() === 'https';
  }
  const family = isIP(clientIp) === 6 ? 'ipv6' : 'ipv4';
  const hit = input.mapping?.entries.find((e) => e.range.check(clientIp, family));
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
  return { edge, clientIp, ...(country !== undefined ? { country } : {}), ...(asn !== undefined ? { asn } : {}), defaulted };
}
