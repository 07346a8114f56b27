/**
 * One live request through a zone's compiled configuration: the one engine path of the
 * WAF proxy, whether it runs on the proxy's thread or in an evaluation worker
 * (evaluationPool.ts). Field values come from requests/ (live.ts → fields.ts); the rate
 * limiter and the clearance cookie's verdict are the engine's per-request hooks.
 *
 * The rules see the request as it was routed (`asRouted`): the host that chose the zone,
 * so that a host rule cannot be passed by spelling the host another way.
 */
import { requestValues } from '../requests/fields';
import type { LiveRequest } from '../requests/live';
import { liveSampleRequest } from '../requests/live';
import type { CompiledZone, Evaluation, RuleRef } from '../rulesets/engine';
import type { RateLimit } from '../rulesets/model';
import { characteristicsKey, ruleKey, type RateLimiter } from './rateLimit';
import { canonicalHost } from './zones';

export interface EvaluableZone {
  readonly compiled: CompiledZone;
  readonly rateLimits: ReadonlyMap<string, RateLimit>;
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
  return { ...live, rawHeaders };
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
  readonly rateLimitCounter?: string;
}

export function evaluateLive(zone: EvaluableZone, job: LiveJob, limiter: RateLimiter): LiveEvaluation {
  const { fields, values } = requestValues(liveSampleRequest(asRouted(job.live)), { bodyLimit: job.bodyLimit });
  const counter = (ref: Pick<RuleRef, 'rulesetId' | 'ruleId'>, rl: RateLimit) => `${job.zoneId}/${ruleKey(ref)}\u0000${characteristicsKey(rl.characteristics, fields)}`;
  const evaluation = zone.compiled.evaluate(values, undefined, {
    rateLimitExceeded: (ref) => {
      const rl = zone.rateLimits.get(ruleKey(ref));
      return rl !== undefined && limiter.hit(counter(ref, rl), rl);
    },
    challengePassed: () => job.cleared,
    // Nothing downstream of the proxy reads the rules that did not act (the security events
    // are the rules that acted, events/fromEvaluation.ts), and each would be copied out of a worker.
    omitIdleRules: true,
  });
  const d = evaluation.decision;
  const rl = d.phase === 'http_ratelimit' && d.action !== 'allow-through' ? zone.rateLimits.get(ruleKey(d)) : undefined;
  if (!rl) return evaluation;
  const rateLimitCounter = counter(d, rl);
  const retryAfter = limiter.retryAfter(rateLimitCounter, rl);
  return { ...evaluation, rateLimitCounter, ...(retryAfter === undefined ? {} : { retryAfter }) };
}
