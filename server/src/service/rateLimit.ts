/**
 * Throttling of concurrent updates to one ruleset, as the hosted API throttles them, so
 * clients can test their retry path (`rulesmith serve --ruleset-write-rate N`, off by
 * default). Each ruleset (its id; an entry point not created yet, its scope and phase; a
 * scope's ruleset creation) has a token bucket holding max(1, N) writes, refilled at N
 * per second (0.5: one write every 2 s): a write past it is answered 429 with
 * `Retry-After` (whole seconds). The routes charge a write only once they have authorized
 * it and found its ruleset (Ctx.chargeRulesetWrite), so a refused request costs nothing;
 * a write the service fails by its own fault (10030: the rule checker hung) is given back.
 *
 * Headers, in the IETF RateLimit fields' form (draft-ietf-httpapi-ratelimit-headers),
 * whose values are integers: with the limit on, every answer carries
 * `Ratelimit-Policy: "ruleset-writes";q=<whole writes the bucket holds>;w=<seconds to
 * refill them, rounded up>` (`q=N;w=1` for a whole N), and every answer to a ruleset
 * write `Ratelimit: "ruleset-writes";r=<left>;t=<seconds until the bucket is full again>`.
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
  /** Tokens a full bucket holds: at least one write, or a rate below 1 would never pass one. */
  private readonly capacity: number;
  private readonly policy: Record<string, string>;

  /** `perSecond` writes per second per ruleset, with max(1, perSecond) at once. */
  constructor(
    readonly perSecond: number,
    private readonly now: () => number = () => performance.now(),
  ) {
    if (!(perSecond > 0 && Number.isFinite(perSecond))) throw new Error(`the ruleset write rate must be a number above 0, got ${perSecond}`);
    this.capacity = Math.max(1, perSecond);
    const quota = Math.floor(this.capacity);
    this.policy = { 'ratelimit-policy': `"${POLICY_NAME}";q=${quota};w=${Math.ceil(quota / perSecond)}` };
  }

  /** Takes a write for `key`: the headers to answer with, and whether it is throttled. */
  take(key: string): { headers: Record<string, string>; throttled?: Throttled } {
    const t = this.now();
    const b = this.buckets.get(key) ?? { tokens: this.capacity, at: t };
    b.tokens = Math.min(this.capacity, b.tokens + ((t - b.at) / 1000) * this.perSecond);
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

  /** Returns the write `take` charged to `key` (one the service failed without writing); the headers to answer with. */
  giveBack(key: string): Record<string, string> {
    const t = this.now();
    const b = this.buckets.get(key) ?? { tokens: this.capacity - 1, at: t };
    // Refilled to now as take() would, so the headers say what the next write meets.
    b.tokens = Math.min(this.capacity, b.tokens + ((t - b.at) / 1000) * this.perSecond + 1);
    b.at = t;
    this.buckets.set(key, b);
    return this.headers(b);
  }

  policyHeader(): Record<string, string> {
    return { ...this.policy };
  }

  /** The limit in words, for the 429's message: "2 per second", "1 every 2 s". */
  describe(): string {
    if (this.perSecond >= 1) return `${this.perSecond} per second`;
    return `1 every ${Number((1 / this.perSecond).toFixed(2))} s`;
  }

  private headers(b: Bucket): Record<string, string> {
    const full = Math.ceil((this.capacity - b.tokens) / this.perSecond);
    return { ratelimit: `"${POLICY_NAME}";r=${Math.floor(b.tokens)};t=${full}` };
  }

  /** Buckets that refilled completely hold nothing worth keeping. */
  private forgetFull(t: number): void {
    for (const [k, b] of this.buckets) if (b.tokens + ((t - b.at) / 1000) * this.perSecond >= this.capacity) this.buckets.delete(k);
  }
}
