/**
 * Throttling of concurrent updates to one ruleset, as the hosted API throttles them, so
 * clients can test their retry path (`rulesmith serve --ruleset-write-rate N`, off by
 * default). Each ruleset (a ruleset id, or an entry point's scope and phase, or a scope's
 * ruleset creation) has a token bucket of N writes refilled at N per second: a write
 * past it is answered 429 with `Retry-After` (whole seconds) before anything is done.
 *
 * Headers, in the IETF RateLimit fields' form (draft-ietf-httpapi-ratelimit-headers):
 * with the limit on, every answer carries `Ratelimit-Policy: "ruleset-writes";q=N;w=1`,
 * and every answer to a ruleset write `Ratelimit: "ruleset-writes";r=<left>;t=<seconds
 * until the bucket is full again>`.
 */
export const POLICY_NAME = 'ruleset-writes';

interface Bucket {
  tokens: number;
  at: number;
}

export interface Throttled {
  /** Seconds to wait before a retry can pass (at least 1). */
  readonly retryAfter: number;
}

export class RulesetWriteLimiter {
  private readonly buckets = new Map<string, Bucket>();

  /** `perSecond` writes per second per ruleset, with as many at once. */
  constructor(
    readonly perSecond: number,
    private readonly now: () => number = () => performance.now(),
  ) {
    if (!(perSecond > 0)) throw new Error(`the ruleset write rate must be above 0, got ${perSecond}`);
  }

  /** Takes a write for `key`: the headers to answer with, and whether it is throttled. */
  take(key: string): { headers: Record<string, string>; throttled?: Throttled } {
    const t = this.now();
    const b = this.buckets.get(key) ?? { tokens: this.perSecond, at: t };
    b.tokens = Math.min(this.perSecond, b.tokens + ((t - b.at) / 1000) * this.perSecond);
    b.at = t;
    this.buckets.set(key, b);
    if (this.buckets.size > 10_000) this.forgetFull(t);
    if (b.tokens < 1) {
      const retryAfter = Math.max(1, Math.ceil((1 - b.tokens) / this.perSecond));
      return { headers: this.headers(b), throttled: { retryAfter } };
    }
    b.tokens -= 1;
    return { headers: this.headers(b) };
  }

  policyHeader(): Record<string, string> {
    return { 'ratelimit-policy': `"${POLICY_NAME}";q=${this.perSecond};w=1` };
  }

  private headers(b: Bucket): Record<string, string> {
    const full = Math.ceil((this.perSecond - b.tokens) / this.perSecond);
    return { ratelimit: `"${POLICY_NAME}";r=${Math.floor(b.tokens)};t=${full}` };
  }

  /** Buckets that refilled completely hold nothing worth keeping. */
  private forgetFull(t: number): void {
    for (const [k, b] of this.buckets) if (b.tokens + ((t - b.at) / 1000) * this.perSecond >= this.perSecond) this.buckets.delete(k);
  }
}

/** The ruleset a request writes, when it writes one (the key its updates are throttled by). */
export function rulesetWriteKey(method: string, path: string, params: Readonly<Record<string, string>>): string | undefined {
  if (method === 'GET' || !path.includes('/rulesets')) return undefined;
  const scope = params.zone_id !== undefined ? `zone:${params.zone_id}` : `account:${params.account_id ?? ''}`;
  if (params.ruleset_id !== undefined) return `${scope}:${params.ruleset_id}`;
  if (params.ruleset_phase !== undefined) return `${scope}:phase:${params.ruleset_phase}`;
  return `${scope}:create`;
}
