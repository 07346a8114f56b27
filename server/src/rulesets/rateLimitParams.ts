/**
 * What a rate limiting rule's `ratelimit` may say, as the hosted API takes it
 * (reference: traffic-events-terraform.md §2.2–2.3), and what each characteristic reads
 * from a request. The validator refuses anything else, so the proxy never counts by a
 * characteristic it cannot read: such a value would be the same for every client, and one
 * client would then rate-limit all the others.
 */
import { compileExpression, irFieldNames, type Diagnostic } from '../language/index';
import type { CompiledFilter } from '../language/evaluate';
import { SizedLru } from '../language/sizedLru';
import { httpScheme, readsAnswer } from '../language/scheme/index';
import { PLANS, type Plan } from '../language/scheme/types';
import type { RateLimit } from './model';

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
  /** lookup_json_string / lookup_json_integer over the raw body (`field`): keys are names, or array indexes as numbers. */
  | { readonly kind: 'json'; readonly field: 'http.request.body.raw'; readonly type: 'string' | 'integer'; readonly keys: readonly (string | number)[] };

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
  if (json) return { kind: 'json', field: 'http.request.body.raw', type: json[1] as 'string' | 'integer', keys: [...json[2]!.matchAll(JSON_KEY)].map((m) => (m[2] !== undefined ? Number(m[2]) : unescape(m[1]!))) };
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

/**
 * What each plan allows of a rate limiting rule (reference §2.3's table). Enterprise is taken
 * with Advanced Rate Limiting (every characteristic, complexity-based counting): the plan
 * alone does not tell the add-on, and refusing what a customer has would be worse.
 */
interface PlanLimits {
  /** The longest counting period, in seconds. */
  readonly period: number;
  /** The longest mitigation timeout, in seconds. */
  readonly timeout: number;
  /** Rules in the zone's rate limiting entry point. */
  readonly rules: number;
  /** The characteristics allowed; undefined: all of them. */
  readonly characteristics?: readonly string[];
  readonly counting: boolean;
  readonly complexity: boolean;
  /** Challenge actions need `mitigation_timeout: 0`; `block` may not have it. */
  readonly challengeThrottles: boolean;
}

export const RATELIMIT_PLAN_LIMITS: Readonly<Record<Plan, PlanLimits>> = {
  free: { period: 10, timeout: 10, rules: 1, characteristics: ['cf.colo.id', 'ip.src'], counting: false, complexity: false, challengeThrottles: true },
  pro: { period: 60, timeout: 3600, rules: 2, characteristics: ['cf.colo.id', 'ip.src'], counting: false, complexity: false, challengeThrottles: true },
  business: { period: 600, timeout: 86400, rules: 5, characteristics: ['cf.colo.id', 'ip.src', 'cf.unique_visitor_id'], counting: true, complexity: false, challengeThrottles: true },
  enterprise: { period: 65535, timeout: 86400, rules: 100, counting: true, complexity: true, challengeThrottles: false },
};

const PLAN_NAMES: Readonly<Record<Plan, string>> = { free: 'Free', pro: 'Pro', business: 'Business', enterprise: 'Enterprise' };
const CHALLENGES = ['challenge', 'js_challenge', 'managed_challenge'];

/** The first plan that allows what `ok` tests, named. */
function planFor(ok: (l: PlanLimits) => boolean): string {
  const p = PLANS.find((x) => ok(RATELIMIT_PLAN_LIMITS[x]))!;
  return `the ${PLAN_NAMES[p]} plan${p === 'enterprise' ? '' : ' or above'}`;
}

/** The longest counting period of any plan. */
const LONGEST_PERIOD = RATELIMIT_PLAN_LIMITS.enterprise.period;

/** One field of a `ratelimit` the zone's plan does not allow, and why. */
export interface PlanProblem {
  /** `period`, `mitigation_timeout`, `characteristics`, `counting_expression`, `score_per_period`. */
  readonly field: string;
  readonly message: string;
}

/** What of `ratelimit` (with the rule's `action`) the zone's `plan` does not allow. */
export function ratelimitPlanProblems(
  rl: { readonly period?: unknown; readonly mitigation_timeout?: unknown; readonly characteristics?: unknown; readonly counting_expression?: unknown; readonly score_per_period?: unknown },
  action: unknown,
  plan: Plan,
): PlanProblem[] {
  const l = RATELIMIT_PLAN_LIMITS[plan];
  const on = `the ${PLAN_NAMES[plan]} plan`;
  const out: PlanProblem[] = [];
  const period = rl.period;
  if (typeof period === 'number' && period > LONGEST_PERIOD) {
    out.push({ field: 'period', message: `a counting period of ${period} seconds is longer than any plan's: at most ${LONGEST_PERIOD} seconds` });
  } else if (typeof period === 'number' && period > l.period) {
    out.push({ field: 'period', message: `a counting period of ${period} seconds needs ${planFor((x) => x.period >= period)}: ${on} counts over at most ${l.period} seconds` });
  }
  const timeout = rl.mitigation_timeout;
  if (l.challengeThrottles && CHALLENGES.includes(String(action)) && typeof timeout === 'number' && timeout !== 0) {
    // Below Enterprise a challenge throttles, whatever timeout the plan allows a block.
    out.push({ field: 'mitigation_timeout', message: `a ${String(action)} rule on ${on} throttles: set mitigation_timeout to 0 (a challenge with a timeout needs the Enterprise plan)` });
  } else if (typeof timeout === 'number' && timeout > l.timeout) {
    out.push({ field: 'mitigation_timeout', message: `a mitigation timeout of ${timeout} seconds needs ${planFor((x) => x.timeout >= timeout)}: ${on} mitigates for at most ${l.timeout} seconds` });
  }
  // A rule without a timeout throttles (the proxy counts it as 0, rateLimit.ts).
  if (l.challengeThrottles && action === 'block' && (timeout === 0 || timeout === undefined)) {
    const what = timeout === 0 ? 'mitigation_timeout 0' : 'no mitigation_timeout, which is 0';
    out.push({ field: 'mitigation_timeout', message: `throttling with block (${what}) needs the Enterprise plan: give ${on}'s rule a timeout, or a challenge action` });
  }
  const allowed = l.characteristics;
  if (allowed && Array.isArray(rl.characteristics)) {
    // A Terraform interpolation ("${var.header}") is not known here.
    const other = rl.characteristics.filter((c): c is string => typeof c === 'string' && !allowed.includes(c) && !c.includes('${'));
    if (other.length > 0) {
      out.push({ field: 'characteristics', message: `counting by ${other.join(', ')} needs ${planFor((x) => x.characteristics === undefined || other.every((c) => x.characteristics!.includes(c)))}: ${on} counts by ${allowed.join(', ')}` });
    }
  }
  if (!l.counting && typeof rl.counting_expression === 'string' && rl.counting_expression.trim() !== '') {
    out.push({ field: 'counting_expression', message: `a counting expression needs ${planFor((x) => x.counting)}: on ${on} a rule counts the requests its expression matches` });
  }
  if (!l.complexity && rl.score_per_period !== undefined) {
    out.push({ field: 'score_per_period', message: `complexity-based counting (score_per_period) needs the Enterprise plan with Advanced Rate Limiting` });
  }
  return out;
}

// ---------------------------------------------------------------------------------------
// What counts toward a rule's limit (the WAF proxy counts; docs/proxy.md "What counts")

/** A complexity-based rule's score limit, else its request limit. */
export function limitOf(limit: RateLimit): number | undefined {
  return scoreHeaderOf(limit) !== undefined ? limit.score_per_period : limit.requests_per_period;
}

/** The response header a complexity-based rule reads its score from (lower case), when it is one. */
function scoreHeaderOf(limit: RateLimit): string | undefined {
  const name = limit.score_response_header_name;
  return limit.score_per_period !== undefined && typeof name === 'string' && name !== '' ? name.toLowerCase() : undefined;
}

/** How a rate-limit rule counts (see the file's comment). */
export interface RateCounting {
  /**
   * `match`: each request the rule's expression matches, as it is evaluated (`hit`);
   * `request`: each request its `counting_expression` matches, as it is evaluated;
   * `sent`: once the request went to the origin (`requests_to_origin`, no response field read);
   * `answer`: once the origin's answer head came (a response field, or a score, is read).
   */
  readonly when: 'match' | 'request' | 'sent' | 'answer';
  /** The compiled `counting_expression` (undefined: the rule's expression decides, at the match). */
  readonly filter?: CompiledFilter;
  /** The fields the counting expression reads. */
  readonly fields?: ReadonlySet<string>;
  /** Complexity-based: the response header that carries each request's score (lower case). */
  readonly scoreHeader?: string;
  /** Why the counting expression does not compile (it then counts nothing): the engine reports it with the zone's problems. */
  readonly problems?: readonly Diagnostic[];
}

const MATCH: RateCounting = { when: 'match' };
const NEVER: CompiledFilter = { matches: () => false };
/** By the rule's `ratelimit` object (the engine hands the same one for every request of a deployment)… */
const byLimit = new WeakMap<RateLimit, RateCounting>();
/** …and by what decides it (a count's settings come back from the proxy's thread as a copy): compiled once per text while in use. */
const byText = new SizedLru<RateCounting>(8 * 1024 * 1024, undefined, 10_000);

/**
 * How `limit` counts (see RateCounting): the one compile of its counting expression, for the
 * engine (which reports one that does not compile) and for the WAF proxy (which counts by it).
 */
export function rateCounting(limit: RateLimit): RateCounting {
  let c = byLimit.get(limit);
  if (c) return c;
  const text = typeof limit.counting_expression === 'string' && limit.counting_expression.trim() !== '' ? limit.counting_expression : undefined;
  const scoreHeader = scoreHeaderOf(limit);
  const toOrigin = limit.requests_to_origin === true;
  if (text === undefined && scoreHeader === undefined && !toOrigin) c = MATCH;
  else {
    const key = `${toOrigin ? 1 : 0}\u0000${scoreHeader ?? ''}\u0000${text ?? ''}`;
    c = byText.get(key);
    if (!c) {
      const compiled = text === undefined ? undefined : compileExpression(text, { phase: 'http_ratelimit', countingExpression: true });
      const filter = compiled === undefined ? undefined : (compiled.filter ?? NEVER);
      const fields = compiled?.ir ? irFieldNames(compiled.ir) : undefined;
      const answerRead = fields !== undefined && [...fields].some((name) => readsAnswer(httpScheme.fields.get(name) ?? {}));
      const when = scoreHeader !== undefined || answerRead ? 'answer' : toOrigin ? 'sent' : 'request';
      const problems = compiled?.diagnostics.filter((d) => d.severity === 'error');
      c = { when, ...(filter ? { filter } : {}), ...(fields ? { fields } : {}), ...(scoreHeader ? { scoreHeader } : {}), ...(compiled && !compiled.filter ? { problems } : {}) };
      byText.set(key, c, 512 + 4 * key.length);
    }
  }
  byLimit.set(limit, c);
  return c;
}

/**
 * The request fields that counting by `limit` reads: its counting expression's, and its
 * characteristics' (the proxy's rateLimit.ts `characteristicsKey`; a characteristic that
 * has no value, or cannot be read, counts by `ip.src`).
 */
export function rateLimitFieldsRead(limit: RateLimit): string[] {
  const out = ['ip.src', ...(rateCounting(limit).fields ?? [])];
  for (const text of Array.isArray(limit.characteristics) ? limit.characteristics : []) {
    const c = typeof text === 'string' ? parseCharacteristic(text) : undefined;
    if (c && 'field' in c) out.push(c.field);
  }
  return out;
}

/** The score an origin's answer gives a complexity-based rule: the header's whole number from 1 to 1,000,000, else none. */
export function scoreOf(value: string | undefined): number | undefined {
  if (value === undefined || !/^\s*\d{1,7}\s*$/.test(value)) return undefined;
  const n = Number(value);
  return n >= 1 && n <= 1_000_000 ? n : undefined;
}
