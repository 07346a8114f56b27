// Rate-limit counting on a fake clock: windows, mitigation, the LRU bound, characteristics.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { characteristicsKey, counterKey, RateLimiter, rateLimitSettings } from '../../../server/src/proxy/rateLimit';
import { rateCounting, scoreOf } from '../../../server/src/rulesets/rateLimitParams';
import { prepareFields } from '../../../server/src/language/index';

const LIMIT = { characteristics: ['ip.src', 'cf.colo.id'], period: 10, requests_per_period: 3, mitigation_timeout: 60 };

function run(limiter: RateLimiter, clock: { t: number }, steps: readonly [advanceMs: number, key: string][], limit = LIMIT): boolean[] {
  return steps.map(([ms, key]) => {
    clock.t += ms;
    return limiter.hit(counterKey(key), limit);
  });
}

describe('RateLimiter', () => {
  it('mitigates the request over the limit and every one for mitigation_timeout, then counts from zero', () => {
    const clock = { t: 0 };
    const l = new RateLimiter(() => clock.t);
    assert.deepEqual(
      run(l, clock, [[0, 'a'], [1000, 'a'], [1000, 'a'], [1000, 'a'], [50_000, 'a'], [9_999, 'a'], [1, 'a'], [0, 'a']]),
      // 3 allowed, the 4th at 3 s starts 60 s of mitigation (until 63 s): 53 s and 62.999 s mitigated; 63 s opens a window.
      [false, false, false, true, true, true, false, false],
    );
  });

  it('opens a new window once the period has passed since the first request counted', () => {
    const clock = { t: 0 };
    const l = new RateLimiter(() => clock.t);
    assert.deepEqual(run(l, clock, [[0, 'a'], [0, 'a'], [0, 'a'], [9_999, 'a']]).at(-1), true);
    const m = new RateLimiter(() => clock.t);
    assert.deepEqual(run(m, clock, [[0, 'a'], [0, 'a'], [0, 'a'], [10_000, 'a'], [0, 'a'], [0, 'a'], [0, 'a']]), [false, false, false, false, false, false, true]);
  });

  it('with mitigation_timeout 0 mitigates only the requests over the limit in the window', () => {
    const clock = { t: 0 };
    const l = new RateLimiter(() => clock.t);
    const limit = { ...LIMIT, mitigation_timeout: 0 };
    assert.deepEqual(run(l, clock, [[0, 'a'], [0, 'a'], [0, 'a'], [0, 'a'], [5_000, 'a'], [5_000, 'a']], limit), [false, false, false, true, true, false]);
  });

  it("says how long a mitigated client waits (Retry-After): to the mitigation's end, or with timeout 0 to the window's", () => {
    const clock = { t: 0 };
    const l = new RateLimiter(() => clock.t);
    run(l, clock, [[0, 'a'], [0, 'a'], [0, 'a'], [3_000, 'a']]);
    assert.equal(l.retryAfter(counterKey('a'), LIMIT), 60);
    clock.t += 59_001;
    assert.equal(l.retryAfter(counterKey('a'), LIMIT), 1);
    const noTimeout = { ...LIMIT, mitigation_timeout: 0 };
    const m = new RateLimiter(() => clock.t);
    run(m, clock, [[0, 'b'], [0, 'b'], [0, 'b'], [2_500, 'b']], noTimeout);
    assert.equal(m.retryAfter(counterKey('b'), noTimeout), 8);
    assert.equal(m.retryAfter(counterKey('never-seen'), noTimeout), undefined);
  });

  it('counts each key apart, and never holds more than its bound (least recently used dropped)', () => {
    const clock = { t: 0 };
    const l = new RateLimiter(() => clock.t, 2);
    run(l, clock, [[0, 'a'], [0, 'a'], [0, 'b'], [0, 'a'], [0, 'c']]);
    // 'b' was least recently used when 'c' came: dropped; 'a' is at 3 requests, and its 4th is mitigated.
    assert.deepEqual(l.keys(), [counterKey('a'), counterKey('c')]);
    assert.deepEqual([l.hit(counterKey('a'), LIMIT), l.hit(counterKey('b'), LIMIT)], [true, false]);
    const many = new RateLimiter(() => clock.t, 1000);
    for (let i = 0; i < 100_000; i++) many.hit(counterKey(`client-${i}`), LIMIT);
    assert.equal(many.size, 1000);
  });

  it('keeps a mitigation however many counters come after it: a client cannot end its own by filling the bound', () => {
    const clock = { t: 0 };
    const l = new RateLimiter(() => clock.t, 2);
    run(l, clock, [[0, 'a'], [0, 'a'], [0, 'a'], [0, 'a']]);
    // A header value of the client's choosing per request: each a new counter.
    for (let i = 0; i < 1000; i++) l.hit(counterKey(`a with x-key ${i}`), LIMIT);
    assert.deepEqual([l.hit(counterKey('a'), LIMIT), l.retryAfter(counterKey('a'), LIMIT), l.size], [true, 60, 3]);
    // Mitigations have their own bound: the one mitigated longest goes first.
    for (const key of ['m1', 'm2']) run(l, clock, [[1, key], [0, key], [0, key], [0, key]]);
    assert.deepEqual([l.hit(counterKey('a'), LIMIT), l.hit(counterKey('m1'), LIMIT), l.hit(counterKey('m2'), LIMIT)], [false, true, true]);
  });

  it("ends a mitigation by the rule's timeout as deployed now: a deploy that shortens it frees the clients mitigated that long", () => {
    const clock = { t: 0 };
    const l = new RateLimiter(() => clock.t);
    const day = { ...LIMIT, mitigation_timeout: 86_400 };
    run(l, clock, [[0, 'a'], [0, 'a'], [0, 'a'], [0, 'a']], day);
    clock.t += 3_600_000;
    assert.deepEqual([l.hit(counterKey('a'), day), l.retryAfter(counterKey('a'), day)], [true, 82_800]);
    const minute = { ...LIMIT, mitigation_timeout: 60 };
    assert.deepEqual([l.hit(counterKey('a'), minute), l.hit(counterKey('a'), minute)], [false, false]);
  });

  it('never limits a score-based rule (not modelled)', () => {
    const l = new RateLimiter(() => 0);
    const score = { characteristics: ['ip.src'], period: 10, score_per_period: 1 };
    assert.deepEqual([l.hit(counterKey('a'), score), l.hit(counterKey('a'), score), l.hit(counterKey('a'), score)], [false, false, false]);
  });
});

describe('characteristics', () => {
  const fields = { 'ip.src': '203.0.113.9', 'http.request.headers': { 'x-api-key': ['k1'] }, 'http.request.cookies': { session: ['s'] } };

  it('keys on the field values, map entries by name (header names case-insensitive) and the local colo', () => {
    assert.equal(characteristicsKey(['ip.src', 'cf.colo.id'], fields), '[0,"203.0.113.9"]');
    assert.equal(characteristicsKey(['http.request.headers["X-API-Key"]', 'http.request.cookies["session"]', 'http.request.cookies["none"]'], fields), '[null,["s"],["k1"]]');
  });

  it('takes them as a set: another order (a deploy that only reorders them) is the same counter', () => {
    assert.equal(characteristicsKey(['cf.colo.id', 'ip.src'], fields), characteristicsKey(['ip.src', 'cf.colo.id'], fields));
    assert.equal(characteristicsKey(['ip.src', 'ip.src'], fields), characteristicsKey(['ip.src'], fields));
  });

  it('counts a rule stored without a list of characteristics by the client address (no crash)', () => {
    assert.equal(characteristicsKey(undefined, fields), '["203.0.113.9"]');
    assert.equal(characteristicsKey('ip.src' as unknown as string[], fields), '["203.0.113.9"]');
  });

  it('counts cf.unique_visitor_id by the client address, and JSON lookups as the engine reads them (a missing or mistyped value is null)', () => {
    const body = (raw: string) => ({ ...fields, 'http.request.body.raw': raw });
    assert.equal(characteristicsKey(['cf.colo.id', 'cf.unique_visitor_id'], fields), '[0,"203.0.113.9"]');
    const user = 'lookup_json_string(http.request.body.raw, "user", "name")';
    assert.equal(characteristicsKey([user], body('{"user": {"name": "alice"}}')), '["alice"]');
    assert.equal(characteristicsKey([user], body('{"user": {"name": "Zoë"}}')), JSON.stringify(['Zo\u00c3\u00ab']));
    assert.equal(characteristicsKey([user], body('{"user": {"name": 7}}')), '[null]');
    assert.equal(characteristicsKey([user], body('not json')), '[null]');
    assert.equal(characteristicsKey(['lookup_json_integer(http.request.body.raw, "ids", 1)'], body('{"ids": [5, 42]}')), '["42"]');
  });

  it('counts a characteristic it cannot read (stored before the validator refused it) by the client address, never one counter for all', () => {
    assert.equal(characteristicsKey(['cf.colo.id', 'http.request.jwt.claims["x"][0]'], fields), '[0,"203.0.113.9"]');
  });

  it('counts a field with no value here (JA3 over plain HTTP, a country with no source) by the client address', () => {
    assert.equal(characteristicsKey(['cf.colo.id', 'cf.bot_management.ja3_hash'], fields), '[{"noValue":"203.0.113.9"},0]');
    assert.equal(characteristicsKey(['ip.src.country'], { ...fields, 'ip.src': '198.51.100.1' }), '[{"noValue":"198.51.100.1"}]');
    assert.equal(characteristicsKey(['ip.src.country'], { ...fields, 'ip.src.country': 'PT' }), '["PT"]');
  });

  it("lists the rate-limit settings of the entry point's rules and of every version of the rate limiting rulesets it may execute", () => {
    const byKey = { ...LIMIT, characteristics: ['cf.colo.id', 'http.request.headers["x-api-key"]'] };
    const limits = rateLimitSettings({
      entryPoints: { http_ratelimit: { id: 'ep', rules: [{ id: 'r1', expression: 'true', action: 'block', ratelimit: LIMIT }, { id: 'r2', expression: 'true', action: 'log' }] } },
      customRulesets: [
        // A pinned older version of the account's ruleset counts by another characteristic than the current one.
        { id: 'account-rl', version: '1', kind: 'custom', phase: 'http_ratelimit', rules: [{ id: 'a1', expression: 'true', action: 'block', ratelimit: byKey }] },
        { id: 'account-rl', version: '2', kind: 'custom', phase: 'http_ratelimit', rules: [{ id: 'a1', expression: 'true', action: 'block', ratelimit: LIMIT }] },
        { id: 'waf', kind: 'custom', phase: 'http_request_firewall_custom', rules: [{ id: 'w1', expression: 'true', action: 'block' }] },
      ],
    });
    assert.deepEqual(limits, [LIMIT, byKey, LIMIT]);
  });
});

describe('counting apart from the match (counting_expression, complexity, requests_to_origin)', () => {
  it('says when each rule counts: with its match, by its counting expression now, or once the origin answered', () => {
    const how = (extra: Record<string, unknown>) => {
      const c = rateCounting({ ...LIMIT, ...extra });
      return [c.when, c.filter !== undefined, c.scoreHeader];
    };
    assert.deepEqual(how({}), ['match', false, undefined]);
    // An empty counting expression is the rule's own (reference §2.1).
    assert.deepEqual(how({ counting_expression: ' ' }), ['match', false, undefined]);
    assert.deepEqual(how({ counting_expression: 'http.request.uri.path eq "/cart"' }), ['request', true, undefined]);
    assert.deepEqual(how({ counting_expression: 'http.request.uri.path eq "/login" and http.response.code eq 401' }), ['answer', true, undefined]);
    assert.deepEqual(how({ counting_expression: 'any(http.response.headers["x-cache"][*] eq "MISS")' }), ['answer', true, undefined]);
    assert.deepEqual(how({ requests_to_origin: true }), ['sent', false, undefined]);
    assert.deepEqual(how({ requests_to_origin: true, counting_expression: 'http.request.method eq "POST"' }), ['sent', true, undefined]);
    assert.deepEqual(how({ score_per_period: 100, score_response_header_name: 'X-Score' }), ['answer', false, 'x-score']);
    // Without its limit the header is not complexity-based counting (the validator refuses one without the other).
    assert.deepEqual(how({ score_response_header_name: 'X-Score' }), ['match', false, undefined]);
  });

  it('matches a counting expression against the answer\'s fields', () => {
    const c = rateCounting({ ...LIMIT, counting_expression: 'http.response.code in {401 403} and http.response.content_type.media_type eq "application/json"' });
    const values = (code: number, type: string) => prepareFields({ 'http.response.code': code, 'http.response.content_type.media_type': type }).values;
    assert.deepEqual([c.filter!.matches(values(401, 'application/json')), c.filter!.matches(values(200, 'application/json')), c.filter!.matches(values(403, 'text/html'))], [true, false, false]);
  });

  it('mitigates a matching request once the counted amount is over the limit, and counts nothing while mitigating', () => {
    const clock = { t: 0 };
    const l = new RateLimiter(() => clock.t);
    const limit = { ...LIMIT, requests_per_period: 2 };
    assert.equal(l.exceeded(counterKey('a'), limit), false);
    l.add(counterKey('a'), limit, 1);
    l.add(counterKey('a'), limit, 1);
    assert.equal(l.exceeded(counterKey('a'), limit), false);
    l.add(counterKey('a'), limit, 1);
    assert.deepEqual([l.exceeded(counterKey('a'), limit), l.exceeded(counterKey('b'), limit), l.retryAfter(counterKey('a'), limit)], [true, false, 60]);

    clock.t += 60_000;
    // The mitigation is over: the next count opens a new window.
    assert.equal(l.exceeded(counterKey('a'), limit), false);
    l.add(counterKey('a'), limit, 1);
    assert.equal(l.exceeded(counterKey('a'), limit), false);
  });

  it('keeps counts made after their requests went on once a mitigation is over, though no request has ended it yet', () => {
    const clock = { t: 0 };
    const l = new RateLimiter(() => clock.t);
    const limit = { ...LIMIT, period: 60, requests_per_period: 2, mitigation_timeout: 60 };
    for (let i = 0; i < 3; i++) l.addLater(counterKey('a'), limit, 1);
    assert.equal(l.exceeded(counterKey('a'), limit), true);
    // During the mitigation a late count is not counted; past it, three are (a response-based counting expression that the rule's own expression does not match).
    clock.t += 30_000;
    l.addLater(counterKey('a'), limit, 1);
    clock.t += 31_000;
    for (let i = 0; i < 3; i++) l.addLater(counterKey('a'), limit, 1);
    clock.t += 30_000;
    assert.equal(l.exceeded(counterKey('a'), limit), true, '3 > 2 in this period');
    // Over the limit, they start a mitigation of the whole timeout, not one that ends with their window.
    assert.equal(l.retryAfter(counterKey('a'), limit), 60);
    clock.t += 59_000;
    assert.equal(l.exceeded(counterKey('a'), limit), true);
    // Late counts whose window has passed when the mitigation ends count for nothing.
    const m = new RateLimiter(() => clock.t);
    for (let i = 0; i < 3; i++) m.addLater(counterKey('b'), limit, 1);
    assert.equal(m.exceeded(counterKey('b'), limit), true);
    clock.t += 61_000;
    for (let i = 0; i < 3; i++) m.addLater(counterKey('b'), limit, 1);
    clock.t += 61_000;
    assert.equal(m.exceeded(counterKey('b'), limit), false);
  });

  it('never ends a mitigation with a count made after the request went on under an older version of the rule', () => {
    const clock = { t: 0 };
    const l = new RateLimiter(() => clock.t);
    const before = { ...LIMIT, requests_per_period: 2, mitigation_timeout: 60 };
    const now = { ...before, mitigation_timeout: 3600 };
    for (let i = 0; i < 3; i++) l.add(counterKey('a'), before, 1);
    assert.equal(l.exceeded(counterKey('a'), before), true);
    // A deploy lengthens the mitigation to an hour; 70 s on, the answer of a request
    // evaluated before it arrives, and its count carries the rule as it was (60 s).
    clock.t += 70_000;
    l.addLater(counterKey('a'), before, 1);
    assert.deepEqual([l.exceeded(counterKey('a'), now), l.retryAfter(counterKey('a'), now)], [true, 3530]);
    // Once the hour is over, the next matching request ends it, and counting starts again.
    clock.t += 3530_000;
    assert.equal(l.exceeded(counterKey('a'), now), false);
    l.addLater(counterKey('a'), now, 1);
    l.addLater(counterKey('a'), now, 1);
    assert.equal(l.exceeded(counterKey('a'), now), false);
    l.addLater(counterKey('a'), now, 1);
    assert.equal(l.exceeded(counterKey('a'), now), true);
  });

  it('keeps the counter of a client it throttles (timeout 0): asked while over, the counter is the most recently used', () => {
    const clock = { t: 0 };
    const l = new RateLimiter(() => clock.t, 2);
    const limit = { ...LIMIT, requests_per_period: 1, mitigation_timeout: 0 };
    l.add(counterKey('a'), limit, 2);
    l.add(counterKey('b'), limit, 1);
    assert.equal(l.exceeded(counterKey('a'), limit), true);
    // A third client: the bound of 2 drops the least recently used, b.
    l.add(counterKey('c'), limit, 1);
    assert.deepEqual(l.keys(), [counterKey('a'), counterKey('c')]);
  });

  it('throttles with a timeout of 0: over the limit only while the window lasts', () => {
    const clock = { t: 0 };
    const l = new RateLimiter(() => clock.t);
    const limit = { ...LIMIT, score_per_period: 100, score_response_header_name: 'x-score', mitigation_timeout: 0 };
    l.add(counterKey('a'), limit, 70);
    l.add(counterKey('a'), limit, 40);
    assert.equal(l.exceeded(counterKey('a'), limit), true);
    clock.t += 10_000;
    assert.equal(l.exceeded(counterKey('a'), limit), false);
  });

  it('reads a score from 1 to 1,000,000 and nothing else', () => {
    assert.deepEqual(['60', ' 7 ', '1000000', '0', '1000001', '-5', '2.5', 'oops', '', undefined].map(scoreOf), [60, 7, 1_000_000, undefined, undefined, undefined, undefined, undefined, undefined, undefined]);
  });
});
