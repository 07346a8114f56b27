/**
 * One live request through a zone's compiled configuration: the one engine path of the
 * WAF proxy, whether it runs on the proxy's thread or in an evaluation worker
 * (evaluationPool.ts). Field values come from requests/ (live.ts → fields.ts); the rate
 * limiter and the clearance cookie's verdict are the engine's per-request hooks.
 *
 * The rules see the request as it was routed (`asRouted`): the host that chose the zone,
 * so that a host rule cannot be passed by spelling the host another way.
 */
import { prepareFields } from '../language/index';
import { defaultedReads, requestFields, requestValues } from '../requests/fields';
import type { LiveRequest } from '../requests/live';
import { liveSampleRequest } from '../requests/live';
import { firstHeader, responseFields, type ResponseHead } from '../requests/responseFields';
import type { CompiledZone, Evaluation, RuleRef } from '../rulesets/engine';
import type { RateLimit } from '../rulesets/model';
import { rateCounting, scoreOf } from '../rulesets/rateLimitParams';
import { characteristicsKey, counterKey, ruleKey, type CounterKey, type RateLimiter } from './rateLimit';
import { canonicalHost } from './zones';

export interface EvaluableZone {
  readonly compiled: CompiledZone;
}

export interface LiveJob {
  readonly zoneId: string;
  readonly live: LiveRequest;
  /** Body bytes the fields see. */
  readonly bodyLimit: number;
  /** The client holds a valid clearance (or challenges pass by flag). */
  readonly cleared: boolean;
}

/**
 * The request with its first Host header (the one the proxy routes by, as Node's
 * `req.headers.host`) spelled as the host that chose the zone (zones.ts `canonicalHost`:
 * lower case, no trailing dot, no `.localhost`, port kept). So `http.host`, `full_uri` and
 * the Host header name the zone's host as its rules expect it, not `Admin.Example.com.`.
 * The target is origin-form already (proxy.ts makes an absolute-form one so, or refuses it),
 * so it names no other host.
 */
export function asRouted(live: LiveRequest): LiveRequest {
  const rawHeaders = [...live.rawHeaders];
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    if (rawHeaders[i]!.toLowerCase() !== 'host') continue;
    rawHeaders[i + 1] = canonicalHost(rawHeaders[i + 1]);
    break;
  }
  return { method: live.method, target: live.target, httpVersion: live.httpVersion, rawHeaders, body: live.body, bodySize: live.bodySize, edge: live.edge };
}

/** An evaluation of a live request, with what its answer needs beyond the engine's verdict. */
export interface LiveEvaluation extends Evaluation {
  /** A rate limit decided the request: seconds until it lets the client through again (the answer's `Retry-After`). */
  readonly retryAfter?: number;
  /**
   * A rate limit decided the request: its counter's key (the rule and the request's
   * characteristic values, as counted), so that passing the challenge it issued resets it
   * (RateLimiter.reset, proxy.ts `passChallenge`).
   */
  readonly rateLimitCounter?: CounterKey;
  /**
   * Counts that wait for the request to go on (rulesets/rateLimitParams.ts `rateCounting`: `sent` once it went
   * to the origin, `answer` once the origin's answer head came): the proxy hands them to
   * `countAfterResponse` then, and drops them if the request never gets that far.
   */
  readonly afterResponse?: readonly ResponseCount[];
  /** Some of them match a counting expression then: the proxy keeps the request (`LiveJob`) for it. */
  readonly countsReadRequest?: boolean;
  /** Fields the zone's rules read that had no value and no local source (`defaultedReads`); absent when none. */
  readonly defaultedFields?: readonly string[];
  /** The time this evaluation took where it ran (a worker, the proxy's thread), in ms: without the hand-over to a worker and the wait in its queue. */
  readonly workMs: number;
}

/** A count that waits for the request to go on: the counter (a digest), and the rule's settings (of the version that evaluated the request). */
export interface ResponseCount {
  readonly counter: CounterKey;
  readonly limit: RateLimit;
  readonly at: 'sent' | 'answer';
}

export function evaluateLive(zone: EvaluableZone, job: LiveJob, limiter: RateLimiter): LiveEvaluation {
  const started = performance.now();
  // Only the fields the zone's rules and rate limits read: an OWASP-only zone builds no header or argument maps.
  const { fields, values } = requestValues(liveSampleRequest(asRouted(job.live)), { bodyLimit: job.bodyLimit, only: zone.compiled.fieldsRead });
  // A digest: a count that waits for the answer carries it, and a header value can be 16 KB.
  // Once per rule and request (both hooks may ask for it).
  const counters = new Map<RateLimit, CounterKey>();
  const counter = (ref: Pick<RuleRef, 'rulesetId' | 'ruleId'>, rl: RateLimit) => {
    let key = counters.get(rl);
    if (key === undefined) counters.set(rl, (key = counterKey(`${job.zoneId}/${ruleKey(ref)}\u0000${characteristicsKey(rl.characteristics, fields)}`)));
    return key;
  };
  const afterResponse: ResponseCount[] = [];
  /**
   * Each counter counts a request once, however often its rule runs for it (its ruleset
   * executed by two rules of the entry point, or a pinned version beside the latest): the
   * counters this request has counted into by a counting expression or after it went on
   * (`counted`), and those counted by the rule's match with the answer that count gave (`hits`).
   */
  const hits = new Map<CounterKey, boolean>();
  const counted = new Set<CounterKey>();
  const countLater = (c: ResponseCount) => {
    if (counted.has(c.counter)) return;
    counted.add(c.counter);
    afterResponse.push(c);
  };
  /** The rate limit that last said "exceeded": the one a rate-limit decision is by. */
  let exceeded: { counter: CounterKey; limit: RateLimit } | undefined;
  const evaluation = zone.compiled.evaluate(values, undefined, {
    rateLimitReached: (ref, _values, rl) => {
      const how = rateCounting(rl);
      if (!how.filter) return;
      const key = counter(ref, rl);
      // A counting expression counts what it matches, whether the rule's expression matches or not.
      if (how.when !== 'request') return countLater({ counter: key, limit: rl, at: how.when === 'answer' ? 'answer' : 'sent' });
      if (counted.has(key) || !how.filter.matches(values)) return;
      counted.add(key);
      limiter.add(key, rl, 1);
    },
    rateLimitExceeded: (ref, _values, rl) => {
      if (!rl) return false;
      const key = counter(ref, rl);
      const how = rateCounting(rl);
      let over: boolean;
      if (how.when !== 'match') over = limiter.exceeded(key, rl);
      else if (hits.has(key)) over = hits.get(key)!;
      else hits.set(key, (over = limiter.hit(key, rl)));
      if (over) exceeded = { counter: key, limit: rl };
      // Counted by its match once the request went on (requests_to_origin, complexity-based).
      else if (!how.filter && (how.when === 'sent' || how.when === 'answer')) countLater({ counter: key, limit: rl, at: how.when });
      return over;
    },
    challengePassed: () => job.cleared,
    // Nothing downstream of the proxy reads the rules that did not act (the security events
    // are the rules that acted, events/fromEvaluation.ts), and each would be copied out of a worker.
    omitIdleRules: true,
  });
  const d = evaluation.decision;
  const defaulted = defaultedReads(zone.compiled.fieldsRead, fields);
  // Copied with Object.assign, not `{ ...evaluation, … }`: see "No spread-first objects per request" in docs/proxy.md.
  const live: { -readonly [K in keyof LiveEvaluation]?: LiveEvaluation[K] } = {};
  if (afterResponse.length > 0) {
    live.afterResponse = afterResponse;
    if (afterResponse.some((c) => rateCounting(c.limit).filter)) live.countsReadRequest = true;
  }
  if (defaulted.length > 0) live.defaultedFields = defaulted;
  const limited = d.phase === 'http_ratelimit' && d.action !== 'allow-through' ? exceeded : undefined;
  if (limited) {
    live.rateLimitCounter = limited.counter;
    const retryAfter = limiter.retryAfter(limited.counter, limited.limit);
    if (retryAfter !== undefined) live.retryAfter = retryAfter;
  }
  live.workMs = performance.now() - started;
  return Object.assign({}, evaluation, live) as LiveEvaluation;
}

/**
 * The counts an evaluation left for later (`afterResponse`) whose moment came: those `at`
 * `sent` once the request went to the origin, those `at` `answer` with its answer's head
 * (`head`). A counting expression is matched against the request's fields (read again from
 * `job`: only rules that count so pay for it) and the answer's.
 */
export function countAfterResponse(job: LiveJob | undefined, counts: readonly ResponseCount[], head: ResponseHead | undefined, limiter: RateLimiter): void {
  let values: ReturnType<typeof prepareFields>['values'] | undefined;
  for (const c of counts) {
    const how = rateCounting(c.limit);
    if (how.filter) {
      // Without the request (or, for the answer's fields, the answer) nothing can be matched.
      if (!job || (c.at === 'answer' && !head)) continue;
      values ??= withResponse(job, head);
      if (!how.filter.matches(values)) continue;
    }
    const amount = how.scoreHeader === undefined ? 1 : head ? scoreOf(firstHeader(head.rawHeaders, how.scoreHeader)) : undefined;
    if (amount !== undefined) limiter.addLater(c.counter, c.limit, amount);
  }
}

function withResponse(job: LiveJob, head: ResponseHead | undefined) {
  const { fields } = requestFields(liveSampleRequest(asRouted(job.live)), { bodyLimit: job.bodyLimit });
  return prepareFields(head ? Object.assign({}, fields, responseFields(head)) : fields).values;
}
