/**
 * The HTTP scheme as lookup tables, plus the small helpers every consumer needs: plan and
 * phase availability, and "did you mean" suggestions for unknown names.
 */
import type { FieldDef, FunctionDef, Phase, Plan, Scheme } from './types';
import { PLANS } from './types';
import { FIELDS, MAGIC_FIREWALL_FIELDS, RESPONSE_PHASES } from './fields';
import { FUNCTIONS, MAGIC_FIREWALL_FUNCTIONS } from './functions';
import { MANAGED_FIELDS, MANAGED_FUNCTIONS } from './managed';

export { FIELDS, GEOIP_ALIASES, MAGIC_FIREWALL_FIELDS, RESPONSE_PHASES, TRANSFORM_PHASES } from './fields';
export { FUNCTIONS, MAGIC_FIREWALL_FUNCTIONS, REMOVE_QUERY_ARGS_SOURCES, BIT_SLICE_MAX_BITS } from './functions';

/**
 * Builds a scheme from field and function lists. Fields and functions share one
 * namespace in the engine, so a name used twice is a programming error.
 */
export function buildScheme(fields: readonly FieldDef[], functions: readonly FunctionDef[]): Scheme {
  const fieldMap = new Map<string, FieldDef>();
  const functionMap = new Map<string, FunctionDef>();
  for (const f of fields) {
    if (fieldMap.has(f.name)) throw new Error(`duplicate field ${f.name}`);
    fieldMap.set(f.name, f);
  }
  for (const f of functions) {
    if (functionMap.has(f.name) || fieldMap.has(f.name)) throw new Error(`duplicate name ${f.name}`);
    functionMap.set(f.name, f);
  }
  return { fields: fieldMap, functions: functionMap };
}

/**
 * The Cloudflare HTTP scheme: every field of reference §4.1–§4.11 and function of §5, plus
 * the managed-only CRS extensions (managed.ts), which user rules may not use.
 */
export const httpScheme: Scheme = buildScheme([...FIELDS, ...MANAGED_FIELDS], [...FUNCTIONS, ...MANAGED_FUNCTIONS]);

/** The network-layer (Magic Firewall / Cloud Network Firewall) scheme of §4.12. */
export const magicFirewallScheme: Scheme = buildScheme(MAGIC_FIREWALL_FIELDS, MAGIC_FIREWALL_FUNCTIONS);

/** Position of a plan in free < pro < business < enterprise. */
export function planRank(plan: Plan): number {
  return PLANS.indexOf(plan);
}

/** True when an account on plan `actual` has something that needs plan `required`. */
export function planAllows(required: Plan | undefined, actual: Plan): boolean {
  return required === undefined || planRank(actual) >= planRank(required);
}

/**
 * True when a field or function may be used in `phase`. An unknown phase (undefined)
 * allows everything: without a rule context there is nothing to check against.
 */
export function phaseAllows(def: { readonly phases?: readonly Phase[] }, phase?: Phase, countingExpression = false): boolean {
  // A rate limiting rule's counting expression may read the response fields, not cf.response.* (error pages only).
  return phase === undefined || def.phases === undefined || def.phases.includes(phase) || (countingExpression && readsAnswer(def));
}

/** A field of the origin's answer (§4.4: available in every response phase, and in a rate limiting rule's counting expression). */
export function readsAnswer(def: { readonly phases?: readonly Phase[] }): boolean {
  return def.phases === RESPONSE_PHASES;
}

// ---------------------------------------------------------------------------------------
// "Did you mean"

/**
 * Names people write from habit (other firewall languages, other Cloudflare products,
 * guessed shapes) mapped to the scheme's name. Keys are lower case.
 */
const KNOWN_MISTAKES: Readonly<Record<string, readonly string[]>> = {
  'http.request.host': ['http.host'],
  'http.hostname': ['http.host'],
  'http.request.user_agent': ['http.user_agent'],
  'http.request.useragent': ['http.user_agent'],
  'http.request.referer': ['http.referer'],
  'http.request.referrer': ['http.referer'],
  'http.request.cookie': ['http.cookie', 'http.request.cookies'],
  'http.request.path': ['http.request.uri.path'],
  'http.request.query': ['http.request.uri.query'],
  'http.request.args': ['http.request.uri.args'],
  'http.request.url': ['http.request.full_uri', 'http.request.uri'],
  'http.request.uri.extension': ['http.request.uri.path.extension'],
  'http.request.body': ['http.request.body.raw'],
  'http.status': ['http.response.code'],
  'http.status_code': ['http.response.code'],
  'http.response.status': ['http.response.code'],
  'http.response.status_code': ['http.response.code'],
  'ip.asn': ['ip.src.asnum'],
  'ip.src.asn': ['ip.src.asnum'],
  'ip.geoip.asn': ['ip.src.asnum'],
  'ip.country': ['ip.src.country'],
  'ip.src.country_code': ['ip.src.country'],
  'ip.dst': ['cf.edge.server_ip'],
  'cf.bot_score': ['cf.bot_management.score'],
  'cf.client.bot_score': ['cf.bot_management.score'],
  'cf.bot_management.bot_score': ['cf.bot_management.score'],
  'cf.verified_bot': ['cf.client.bot', 'cf.bot_management.verified_bot'],
  'cf.waf.attack_score': ['cf.waf.score'],
  tolower: ['lower'],
  to_lower: ['lower'],
  lowercase: ['lower'],
  toupper: ['upper'],
  to_upper: ['upper'],
  uppercase: ['upper'],
  length: ['len'],
  size: ['len'],
  count: ['len'],
  base64_decode: ['decode_base64'],
  b64decode: ['decode_base64'],
  base64_encode: ['encode_base64'],
  b64encode: ['encode_base64'],
  substr: ['substring'],
  tostring: ['to_string'],
  str: ['to_string'],
  uuid: ['uuidv4'],
};

/**
 * Up to `max` known names close to `name`, best first. Handles wrong case
 * (`HTTP.HOST`), typos and plurals (`http.request.uri.paths`), separators
 * (`startsWith`, `http.useragent`), reordered words (`base64_decode`), the `ip.geoip.*` /
 * `ip.src.*` aliases (deprecated names are replaced by their replacements), a truncated
 * name, a bare last segment (`user_agent`), and a few habitual names from other tools.
 */
export function suggestNames(name: string, scheme: Scheme, max = 3): string[] {
  const query = name.toLowerCase();
  const scores = new Map<string, number>();

  const offer = (candidate: string, score: number): void => {
    const resolved = scheme.fields.get(candidate)?.deprecated?.replacement ?? candidate;
    if (resolved === name) return;
    const def = scheme.fields.get(resolved) ?? scheme.functions.get(resolved);
    // Managed-only names (CRS extensions) are never suggested: user rules cannot use them.
    if (!def || def.managedOnly) return;
    if (score < (scores.get(resolved) ?? Infinity)) scores.set(resolved, score);
  };

  for (const known of (Object.hasOwn(KNOWN_MISTAKES, query) ? KNOWN_MISTAKES[query] : [])) offer(known, 0.5);

  // The query itself, and for `ip.geoip.x` also `ip.src.x` (and the other way round):
  // the two families have the same suffixes.
  const variants: Array<readonly [string, number]> = [[query, 0]];
  if (query.startsWith('ip.geoip.')) variants.push([`ip.src.${query.slice('ip.geoip.'.length)}`, 0.25]);
  else if (query.startsWith('ip.src.')) variants.push([`ip.geoip.${query.slice('ip.src.'.length)}`, 0.25]);

  const candidates = [...scheme.fields.keys(), ...scheme.functions.keys()];
  for (const candidate of candidates) {
    const lower = candidate.toLowerCase();
    for (const [variant, penalty] of variants) {
      const score = similarity(variant, lower);
      if (score !== undefined) offer(candidate, score + penalty);
    }
  }

  const ranked = [...scores.entries()].sort(
    ([a, sa], [b, sb]) => sa - sb || Math.abs(a.length - name.length) - Math.abs(b.length - name.length) || (a < b ? -1 : a > b ? 1 : 0),
  );
  if (ranked.length === 0) return [];
  // Keep only suggestions about as good as the best one: a near-exact hit should not
  // be diluted by far-fetched edits.
  const cutoff = ranked[0][1] + 1;
  return ranked
    .filter(([, s]) => s <= cutoff)
    .slice(0, max)
    .map(([n]) => n);
}

/** Squashes separators so `startsWith`, `starts-with` and `starts_with` compare equal. */
function squash(s: string): string {
  return s.replace(/[._\-\s]/g, '');
}

/** The words of a name in sorted order, so `base64_decode` meets `decode_base64`. */
function wordKey(s: string): string {
  return s
    .split(/[._\-\s]+/)
    .filter(Boolean)
    .sort()
    .join(' ');
}

/**
 * How far `query` is from `candidate` (both lower case): 0 = same name, small = likely
 * meant, undefined = unrelated.
 */
function similarity(query: string, candidate: string): number | undefined {
  if (query === candidate) return 0;
  if (squash(query) === squash(candidate)) return 0.5;
  if (wordKey(query) === wordKey(candidate)) return 0.75;
  // A name cut short: `http.request.uri.path.ext`, `lookup_json_str`.
  if (query.length >= 5 && candidate.startsWith(query)) return 1;
  // Just the tail of the name: `user_agent`, `uri.path`.
  if (query.length >= 3 && candidate.endsWith(`.${query}`)) return 1.5;
  const limit = Math.max(1, Math.floor(query.length / 3));
  const d = editDistance(query, candidate, limit);
  return d <= limit ? d : undefined;
}

/**
 * Optimal-string-alignment distance (Levenshtein plus adjacent transpositions), giving up
 * once every path exceeds `limit` (then any value above `limit` is returned).
 */
export function editDistance(a: string, b: string, limit = Infinity): number {
  if (Math.abs(a.length - b.length) > limit) return limit + 1;
  const n = b.length;
  let prev2 = new Array<number>(n + 1).fill(0);
  let prev = Array.from({ length: n + 1 }, (_, j) => j);
  let cur = new Array<number>(n + 1).fill(0);
  for (let i = 1; i <= a.length; i++) {
    cur[0] = i;
    let rowMin = cur[0];
    for (let j = 1; j <= n; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, prev2[j - 2] + 1);
      cur[j] = v;
      if (v < rowMin) rowMin = v;
    }
    if (rowMin > limit) return limit + 1;
    [prev2, prev, cur] = [prev, cur, prev2];
  }
  return prev[n];
}
