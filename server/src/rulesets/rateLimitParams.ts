/**
 * What a rate limiting rule's `ratelimit` may say, as the hosted API takes it
 * (reference: traffic-events-terraform.md §2.2–2.3), and what each characteristic reads
 * from a request. The validator refuses anything else, so the proxy never counts by a
 * characteristic it cannot read: such a value would be the same for every client, and one
 * client would then rate-limit all the others.
 */

/**
 * The seconds a counting period and a mitigation timeout may take: the longer of the
 * hosted reference's two lists (the parameters page's is a subset), as it advises.
 */
export const RATELIMIT_SECONDS: readonly number[] = [10, 15, 20, 30, 40, 45, 60, 90, 120, 180, 240, 300, 480, 600, 900, 1200, 1800, 2400, 3600, 65535, 86400];

/** A mitigation timeout may also be 0: throttling, the rule acts only while the rate is over the limit. */
export const MITIGATION_SECONDS: readonly number[] = [0, ...RATELIMIT_SECONDS];

/** What one characteristic reads from a request's field values. */
export type Characteristic =
  | { readonly kind: 'colo' }
  /** `cf.unique_visitor_id`, "IP with NAT support": locally the client's address (nothing tells visitors behind one NAT apart here). */
  | { readonly kind: 'visitor' }
  | { readonly kind: 'field'; readonly field: string }
  | { readonly kind: 'entry'; readonly field: string; readonly key: string }
  /** lookup_json_string / lookup_json_integer over the raw body: keys are names, or array indexes as numbers. */
  | { readonly kind: 'json'; readonly type: 'string' | 'integer'; readonly keys: readonly (string | number)[] };

/** Fields a characteristic may name as they are (reference §2.2). */
const FIELDS = ['ip.src', 'http.host', 'http.request.uri.path', 'ip.src.asnum', 'ip.src.country', 'cf.bot_management.ja3_hash', 'cf.bot_management.ja4', 'http.request.body.raw', 'http.request.body.size'];
/** Map fields a characteristic may look a key up in: `name["key"]`. */
const MAPS = ['http.request.headers', 'http.request.cookies', 'http.request.uri.args', 'http.request.body.form'];

const ENTRY = /^([a-z.]+)\["((?:[^"\\]|\\.)*)"\]$/;
const JSON_LOOKUP = /^lookup_json_(string|integer)\(\s*http\.request\.body\.raw\s*((?:,\s*(?:"(?:[^"\\]|\\.)*"|\d+)\s*)+)\)$/;
const JSON_KEY = /"((?:[^"\\]|\\.)*)"|(\d+)/g;

const unescape = (s: string) => s.replace(/\\(.)/g, '$1');

/** What `text` reads, or why it is no characteristic this service can count by. */
export function parseCharacteristic(text: string): Characteristic | { readonly error: string } {
  if (text === 'cf.colo.id') return { kind: 'colo' };
  if (text === 'cf.unique_visitor_id') return { kind: 'visitor' };
  if (FIELDS.includes(text)) return { kind: 'field', field: text };
  const entry = ENTRY.exec(text);
  if (entry && MAPS.includes(entry[1]!)) {
    const key = unescape(entry[2]!);
    // Header names are case-insensitive, and the hosted API takes them lower-cased.
    return { kind: 'entry', field: entry[1]!, key: entry[1] === 'http.request.headers' ? key.toLowerCase() : key };
  }
  const json = JSON_LOOKUP.exec(text);
  if (json) return { kind: 'json', type: json[1] as 'string' | 'integer', keys: [...json[2]!.matchAll(JSON_KEY)].map((m) => (m[2] !== undefined ? Number(m[2]) : unescape(m[1]!))) };
  return {
    error:
      `'${text}' is not a rate limiting characteristic this service counts by: use cf.colo.id, ip.src, cf.unique_visitor_id, ${FIELDS.slice(1).join(', ')}, ` +
      `${MAPS.map((m) => `${m}["<name>"]`).join(', ')}, or lookup_json_string / lookup_json_integer(http.request.body.raw, "<key>", …)` +
      ' (JWT claims and custom expressions are not counted locally)',
  };
}

/** The problems of a rule's characteristics as a whole (each one's own come from parseCharacteristic). */
export function characteristicsProblem(list: readonly string[]): string | undefined {
  if (list.includes('ip.src') && list.includes('cf.unique_visitor_id')) return 'cf.unique_visitor_id (IP with NAT support) cannot be combined with ip.src: keep one of them';
  return undefined;
}
