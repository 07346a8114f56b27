/**
 * Rate limiting for the WAF proxy: the request counts that the engine does not keep
 * (rulesets/engine.ts asks `rateLimitExceeded` when an `http_ratelimit` rule matches, and
 * tells `rateLimitReached` of every such rule a request reaches).
 *
 * - A counter per rule and per value of the rule's `characteristics` (`ip.src`,
 *   `cf.colo.id`, `http.request.headers["x-api-key"]`, …).
 * - What counts (rulesets/rateLimitParams.ts `rateCounting`): by default the requests that match the rule's expression,
 *   each as it is evaluated (`hit`: the request that makes the count exceed
 *   `requests_per_period` is the first one mitigated). With a `counting_expression`, the
 *   requests that match it, matched by the rule or not (reference: it "does not extend the
 *   match expression"); with response fields in it, once the origin's answer is known. With
 *   `requests_to_origin`, once the request was sent to the origin. Complexity-based rules
 *   (`score_per_period` and `score_response_header_name`) add the score the origin's
 *   answer carries in that header (1 to 1,000,000; another value or none adds nothing).
 *   Counted apart from the match (`add`), a matching request is mitigated once the window's
 *   count is over the limit (`exceeded`).
 * - Windows: a counter's window opens with the first request it counts and lasts `period`
 *   seconds; the next request after that opens a new one.
 * - Mitigation: for `mitigation_timeout` seconds from the count that went over the limit,
 *   every matching request with those characteristics is mitigated (and not counted), and
 *   the first one after it opens a new window; with a timeout of 0, only the requests over
 *   the limit in the current window are. The timeout is the rule's as it is now: a deploy
 *   that shortens it (or sets it to 0) ends the mitigations that have run that long.
 * - Memory: a counter is stored under a SHA-256 digest of its key (`counterKey`), so its
 *   size does not depend on the characteristic values (a 16 KB header value is not kept).
 *   At most `maxCounters` counting, least recently used dropped first, so a flood of
 *   distinct clients costs a bounded amount (a dropped client starts again from zero); and
 *   apart from them at most `maxCounters` mitigating, the one mitigated longest dropped
 *   first: a client cannot end its own mitigation by sending requests that fill the
 *   counters (a header value of its choosing per request), only by being mitigated on
 *   `maxCounters` other counters, each of which takes going over its limit.
 */
import type { RuleRef, ZoneConfig } from '../rulesets/engine';
import type { RateLimit } from '../rulesets/model';
import { limitOf, parseCharacteristic, type Characteristic } from '../rulesets/rateLimitParams';
import { RUNTIME_FUNCTIONS } from '../language/runtime/functions';
import { utf8ToBinary } from '../language/bytes';
import { convertFieldValue } from '../language/fieldValues';
import { BYTES } from '../language/types';
import { sha256 } from '../service/sha256';

/**
 * Counters kept at most by default, counting and mitigating each: about 200 bytes each on
 * the heap (the digest key, the Map entry, the counter), so about 20 MB when one kind is
 * full, whatever the characteristic values.
 */
export const DEFAULT_MAX_COUNTERS = 100_000;
/** `cf.colo.id` of the local proxy: every request comes through the same "data center". */
export const LOCAL_COLO_ID = 0;

interface Counter {
  windowStart: number;
  count: number;
  /** When its mitigation began (ms), undefined when none did: mitigated until the rule's timeout has passed since. */
  mitigatedAt: number | undefined;
  /** While mitigating: its end as the rule deployed then last said (ms), for counts made after the request went on (`addLater`). */
  endsAt?: number;
  /** While mitigating, past `endsAt`: the window those late counts opened, which the counter takes up when its mitigation ends. */
  late?: { windowStart: number; count: number };
}

/** When the mitigation of `c` ends under `limit` as deployed now (ms); -Infinity when it has none. */
function mitigationEnd(c: Counter, limit: RateLimit): number {
  return c.mitigatedAt === undefined ? -Infinity : c.mitigatedAt + (limit.mitigation_timeout ?? 0) * 1000;
}

/**
 * The key a counter is stored under: SHA-256 of what it counts, base64url (43 characters).
 * The caller's key holds whole characteristic values (a header can be 16 KB); keeping it
 * would make each counter cost that much. Distinct values still count apart (a collision
 * would take 2^128 tries).
 */
export function counterKey(key: string): CounterKey {
  return sha256(key, 'base64url') as CounterKey;
}

/** A counter's stored key, made once per request by `counterKey` (the limiter takes it as it is, never hashing again). */
export type CounterKey = string & { readonly __brand: 'CounterKey' };

export class RateLimiter {
  /** Counters not mitigating, least recently used first. */
  private readonly counters = new Map<CounterKey, Counter>();
  /** Counters whose mitigation began, the earliest first; apart, so that filling the counters drops no mitigation. */
  private readonly mitigating = new Map<CounterKey, Counter>();

  constructor(
    private readonly now: () => number = Date.now,
    private readonly maxCounters = DEFAULT_MAX_COUNTERS,
  ) {}

  /** Counters held now, counting and mitigating (for tests and the proxy's status). */
  get size(): number {
    return this.counters.size + this.mitigating.size;
  }

  /** The stored keys: counting ones least recently used first, then mitigating ones (for tests). */
  keys(): CounterKey[] {
    return [...this.counters.keys(), ...this.mitigating.keys()];
  }

  /** Counts one matching request on the counter `stored` (the `counterKey` of the rule and its characteristic values); true when it is to be mitigated. */
  hit(stored: CounterKey, limit: RateLimit): boolean {
    const max = limit.requests_per_period;
    if (max === undefined || !(limit.period > 0)) return false;
    const now = this.now();
    if (this.mitigated(stored, limit, now)) return true;
    return this.counted(stored, this.held(stored, now), limit, max, 1, now);
  }

  /**
   * Counts `amount` (a request, or its score) for a rule that counts apart from its match
   * (`rateCounting`), as the request is evaluated: nothing while the counter's mitigation
   * lasts, as `hit`.
   */
  add(stored: CounterKey, limit: RateLimit, amount: number): void {
    const max = limitOf(limit);
    if (max === undefined || !(limit.period > 0)) return;
    const now = this.now();
    if (!this.mitigated(stored, limit, now)) this.counted(stored, this.held(stored, now), limit, max, amount, now);
  }

  /**
   * `add` for a count made once the request went on (evaluateLive.ts `countAfterResponse`),
   * whose `limit` is the rule of the version that evaluated the request, maybe deployed over
   * since: it never ends a mitigation (the timeout is the rule's as deployed now, and a
   * count under an older, shorter one would free the client early); the next matching
   * request, asked with the rule as it is now (`exceeded`, `hit`), does. A count made past
   * the mitigation's end (as the rule last said it, or its own rule says) is kept for the
   * window it opens, which the counter takes up when the mitigation is ended.
   */
  addLater(stored: CounterKey, limit: RateLimit, amount: number): void {
    const max = limitOf(limit);
    if (max === undefined || !(limit.period > 0)) return;
    const now = this.now();
    const c = this.mitigating.get(stored);
    if (!c) return void this.counted(stored, this.held(stored, now), limit, max, amount, now);
    if (now < Math.max(c.endsAt ?? -Infinity, mitigationEnd(c, limit))) return;
    // Past its end, but not yet ended by a request under the rule as it is now: the count opens (or adds to) the window it will take up then.
    c.late = c.late && now - c.late.windowStart < limit.period * 1000 ? { windowStart: c.late.windowStart, count: c.late.count + amount } : { windowStart: now, count: amount };
  }

  /** Whether a matching request of a rule that counts apart from its match (`add`) is to be mitigated: no count of its own. */
  exceeded(stored: CounterKey, limit: RateLimit): boolean {
    const max = limitOf(limit);
    if (max === undefined) return false;
    const now = this.now();
    if (this.mitigated(stored, limit, now)) return true;
    const c = this.counters.get(stored);
    // (A counter whose mitigation ended opens a new window with its next count.)
    const over = !!c && c.mitigatedAt === undefined && now - c.windowStart < limit.period * 1000 && c.count > max;
    // A client kept out is not counted (nothing reaches `held`): its counter is used all the same, or the bound would drop it first.
    if (over) this.keep(this.counters, stored, c);
    return over;
  }

  /** Whether the counter `stored` is in a mitigation that lasts under `limit` now; one that has ended goes back among the counting ones. */
  private mitigated(stored: CounterKey, limit: RateLimit, now: number): boolean {
    const c = this.mitigating.get(stored);
    if (!c) return false;
    c.endsAt = mitigationEnd(c, limit);
    if (now < c.endsAt) return true;
    // Counts made after their requests went on, once the mitigation was over: the window they opened, when it is still open.
    const late = c.late && now - c.late.windowStart < limit.period * 1000 ? c.late : undefined;
    c.late = undefined;
    const max = limitOf(limit);
    if (late && max !== undefined && late.count > max && (limit.mitigation_timeout ?? 0) > 0) {
      // They went over the limit: a new mitigation, for the whole timeout from now.
      [c.windowStart, c.count, c.mitigatedAt] = [late.windowStart, late.count, now];
      c.endsAt = mitigationEnd(c, limit);
      this.keep(this.mitigating, stored, c);
      return true;
    }
    this.mitigating.delete(stored);
    if (late) [c.windowStart, c.count, c.mitigatedAt] = [late.windowStart, late.count, undefined];
    c.endsAt = undefined;
    this.keep(this.counters, stored, c);
    return false;
  }

  /** Puts `c` last in `map` (its most recent), the first dropped past the bound: the one rule for both kinds of counter. */
  private keep(map: Map<CounterKey, Counter>, stored: CounterKey, c: Counter): void {
    map.delete(stored);
    map.set(stored, c);
    if (map.size > this.maxCounters) map.delete(map.keys().next().value!);
  }

  /** The counting counter `stored`, made the most recently used (created, and the oldest dropped past the bound). */
  private held(stored: CounterKey, now: number): Counter {
    const c = this.counters.get(stored) ?? { windowStart: now, count: 0, mitigatedAt: undefined };
    this.keep(this.counters, stored, c);
    return c;
  }

  /** Adds `amount` to a counter not mitigated now; true when that takes it over `max` (and starts its mitigation, if it has a timeout). */
  private counted(stored: CounterKey, c: Counter, limit: RateLimit, max: number, amount: number, now: number): boolean {
    // A mitigation that ended, or a window that has passed, starts a new window.
    if (c.mitigatedAt !== undefined || now - c.windowStart >= limit.period * 1000) {
      c.mitigatedAt = undefined;
      c.windowStart = now;
      c.count = 0;
    }
    c.count += amount;
    if (c.count <= max) return false;
    if ((limit.mitigation_timeout ?? 0) > 0) {
      c.mitigatedAt = now;
      c.endsAt = mitigationEnd(c, limit);
      this.counters.delete(stored);
      this.keep(this.mitigating, stored, c);
    }
    return true;
  }

  /**
   * Whole seconds (at least 1) until a counter that `hit` just mitigated lets requests through
   * again: the end of its mitigation, or with a timeout of 0 the end of its window; the
   * `Retry-After` of the answer. Undefined when no counter is held under `stored`.
   */
  retryAfter(stored: CounterKey, limit: RateLimit): number | undefined {
    const c = this.mitigating.get(stored) ?? this.counters.get(stored);
    if (!c) return undefined;
    const end = c.mitigatedAt !== undefined ? mitigationEnd(c, limit) : c.windowStart + limit.period * 1000;
    return Math.max(1, Math.ceil((end - this.now()) / 1000));
  }

  /** Forgets the counter held under `stored` (its count and any mitigation): the next matching request opens a new window. */
  reset(stored: CounterKey): void {
    this.counters.delete(stored);
    this.mitigating.delete(stored);
  }
}

/**
 * The `ratelimit` of every rule that counts requests: the `http_ratelimit` entry point's own,
 * and those of every custom ruleset of that phase it may `execute` (an account's rate
 * limiting ruleset), every version given (a zone may pin an older one). The evaluation pool
 * reads their characteristics to choose the worker that counts a zone's requests (the engine
 * hands each rule's own parameters to the counting, evaluateLive.ts).
 */
export function rateLimitSettings(config: Pick<ZoneConfig, 'entryPoints' | 'customRulesets'>): RateLimit[] {
  const rulesets = [config.entryPoints.http_ratelimit, ...(config.customRulesets ?? []).filter((rs) => rs.phase === 'http_ratelimit')];
  return rulesets.flatMap((rs) => (rs?.rules ?? []).flatMap((r) => (r?.ratelimit ? [r.ratelimit] : [])));
}

export function ruleKey(rule: Pick<RuleRef, 'rulesetId' | 'ruleId'>): string {
  return `${rule.rulesetId ?? ''}/${rule.ruleId ?? ''}`;
}

/** Each characteristic's text as parsed: the validator has refused any it cannot parse. */
const parsedCharacteristics = new Map<string, Characteristic | undefined>();
/** The engine's own JSON lookups, so a counter keys on the value a rule's expression sees. */
const lookupJson = { string: RUNTIME_FUNCTIONS.get('lookup_json_string')!.prepare([]), integer: RUNTIME_FUNCTIONS.get('lookup_json_integer')!.prepare([]) };

function characteristicOf(text: string): Characteristic | undefined {
  let c = parsedCharacteristics.get(text);
  if (c === undefined && !parsedCharacteristics.has(text)) {
    const parsed = parseCharacteristic(text);
    c = 'error' in parsed ? undefined : parsed;
    // Bounded: the texts come from deployed rules, but a long-running proxy sees many deploys.
    if (parsedCharacteristics.size >= 10_000) parsedCharacteristics.clear();
    parsedCharacteristics.set(text, c);
  }
  return c;
}

/**
 * One request's value of each characteristic, from its field values as fields.ts builds
 * them (before typing), as rateLimitParams.ts reads them. The characteristics are a set (the
 * API's and Terraform's): taken in sorted order, so a deploy that only reorders them keeps
 * the rule's counters and mitigations. A text it cannot read, or a rule without a list (both
 * stored before the validator refused them), counts per client address, so that no client's
 * requests can rate-limit another's.
 */
export function characteristicsKey(characteristics: readonly string[] | undefined, fields: Readonly<Record<string, unknown>>): string {
  const texts = Array.isArray(characteristics) ? [...new Set(characteristics.map(String))].sort() : ['ip.src'];
  const values = texts.map((text) => {
    const c = characteristicOf(text);
    if (!c) return fields['ip.src'] ?? null;
    switch (c.kind) {
      case 'colo':
        return LOCAL_COLO_ID;
      case 'visitor':
        return fields['ip.src'] ?? null;
      case 'field':
        // A field with no value here (JA3/JA4 over plain HTTP; country and ASN with no source)
        // would be one value for every client: counted by the client's address instead.
        return fields[c.field] ?? { noValue: fields['ip.src'] ?? null };
      case 'entry': {
        const map = fields[c.field] as Record<string, unknown> | undefined;
        return map && Object.prototype.hasOwnProperty.call(map, c.key) ? map[c.key] : null;
      }
      case 'json': {
        // The body's bytes as the engine reads the field (fields.ts gives text, or the exact bytes when not UTF-8).
        const body = convertFieldValue(fields[c.field], BYTES, c.field, []);
        if (typeof body !== 'string') return null;
        const v = lookupJson[c.type]([body, ...c.keys.map((k) => (typeof k === 'number' ? k : utf8ToBinary(k)))]);
        return v === undefined ? null : String(v);
      }
    }
  });
  return JSON.stringify(values);
}
