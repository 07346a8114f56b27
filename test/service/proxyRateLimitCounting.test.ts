// What a rate limiting rule counts, beyond its own expression (reference
// traffic-events-terraform.md §2.1): a counting_expression (with request fields, or with the
// origin's answer), complexity-based scores from a response header, requests_to_origin.
// The upstream's `/status?code=N&score=S` answers status N with `x-score: S`.
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { describe, it } from 'node:test';
import { firstError } from './harness';
import { entrypoint, proxyTestFile, send, ZONE, ZONE_ID } from './proxyHarness';

/** The proxies' clock (rate limits): each test moves it past the last one's windows. */
let clock = 1_900_000_000_000;
const RATELIMIT = entrypoint(ZONE_ID, 'http_ratelimit');

const file = proxyTestFile({ proxy: { now: () => clock } });

async function rateLimitRule(ratelimit: Record<string, unknown>, expression = 'http.request.uri.path eq "/status"'): Promise<void> {
  clock += 24 * 3600 * 1000;
  await file.deploy(RATELIMIT, [{ action: 'block', expression, description: 'the limit under test', ratelimit: { characteristics: ['cf.colo.id', 'ip.src'], period: 60, mitigation_timeout: 600, ...ratelimit } }]);
}

/** The statuses the client got for each path, in order (one client unless `ip` says). */
async function statuses(url: string, paths: readonly string[], ip?: string): Promise<number[]> {
  const out: number[] = [];
  for (const p of paths) out.push((await send(url, ZONE, p, ip ? { headers: { 'cf-connecting-ip': ip } } : {})).status);
  return out;
}

/** Sends a GET for `path` and closes the connection after `ms`, before any answer. */
function leaveAfter(url: string, path: string, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const u = new URL(url);
    const req = request({ host: u.hostname, port: u.port, path, headers: { host: ZONE }, agent: false });
    req.on('error', () => undefined);
    req.on('response', () => assert.fail(`${path} was answered before the client left`));
    req.on('close', () => resolve());
    req.end();
    setTimeout(() => req.destroy(), ms);
  });
}

describe('rate limiting rules that count apart from their expression', () => {
  // The reference's example: "increment counter when" the origin answered 401. Answers of 200
  // are not counted; the second 401 takes the count over 1, so the next request is blocked.
  it('a counting expression with a response field counts the answers it matches, once the origin answered', async () => {
    await rateLimitRule({ requests_per_period: 1, counting_expression: 'http.request.uri.path eq "/status" and http.response.code eq 401' });
    await file.withProxy({}, async (p) => {
      assert.deepEqual(await statuses(p.url(), ['/status?code=200', '/status?code=200', '/status?code=401', '/status?code=401', '/status?code=200']), [200, 200, 401, 401, 429]);
    });
  });

  // The counting expression "does not extend the match expression": requests to /cart count,
  // only requests to /checkout are mitigated, each client by its own counter.
  it('a counting expression with request fields counts requests the rule does not match', async () => {
    await rateLimitRule({ requests_per_period: 2, counting_expression: 'http.request.uri.path eq "/cart"' }, 'http.request.uri.path eq "/checkout"');
    await file.withProxy({ trust: 'everyone' }, async (p) => {
      assert.deepEqual(await statuses(p.url(), ['/checkout', '/cart', '/cart', '/cart', '/checkout', '/cart'], '198.51.100.7'), [200, 200, 200, 200, 429, 200]);
      assert.deepEqual(await statuses(p.url(), ['/checkout'], '198.51.100.8'), [200]);
      // The rule's own matches do not count: requests to /checkout alone never reach the limit.
      assert.deepEqual(await statuses(p.url(), ['/checkout', '/checkout', '/checkout', '/checkout'], '198.51.100.9'), [200, 200, 200, 200]);
    });
  });

  // Complexity-based: the scores 60 + 30 stay within 100; a score that is not a whole number
  // from 1 to 1,000,000 adds nothing; 20 more is 110, so the next request is blocked.
  it('a complexity-based rule adds up the scores the origin gives in its response header', async () => {
    await rateLimitRule({ score_per_period: 100, score_response_header_name: 'X-Score' });
    await file.withProxy({}, async (p) => {
      const paths = ['/status?score=60', '/status?score=30', '/status?score=oops', '/status?score=2000000', '/status?score=20', '/status?score=1'];
      assert.deepEqual(await statuses(p.url(), paths), [200, 200, 200, 200, 200, 429]);
    });
  });

  // A client that leaves before the answer does not take its request out of the count: the
  // proxy lets the origin's request go on until its answer's head, adds the score, and drops
  // the answer. 150 is over 100, so the next request is blocked. On the proxy's thread, then in
  // a worker (its real clock: the window of 60 s outlasts the test).
  it('a request whose client left before the answer still adds its score once the origin answers', async () => {
    for (const options of [{}, { workers: 1, now: undefined }]) {
      await rateLimitRule({ score_per_period: 100, score_response_header_name: 'X-Score' });
      await file.withProxy(options, async (p) => {
        // The zone compiled first: a client that leaves during the evaluation is never forwarded.
        assert.deepEqual(await statuses(p.url(), ['/warm-up']), [200]);
        await leaveAfter(p.url(), '/status?score=150&delay=300', 50);
        await new Promise((r) => setTimeout(r, 600));
        assert.deepEqual(await statuses(p.url(), ['/status?score=1']), [429], JSON.stringify(options));
      });
    }
  });

  // requests_to_origin: a request counts once it went to the origin, answered or not (504);
  // one the proxy could not send (502: nothing listens there) does not. Without it every request
  // counts, and the second is over the limit of 1.
  it('requests_to_origin counts only the requests that went to the origin', async () => {
    const dead = 'http://127.0.0.1:9';
    await rateLimitRule({ requests_per_period: 1, requests_to_origin: true });
    await file.withProxy({}, async (p) => {
      assert.deepEqual(await statuses(p.url(), ['/status', '/status', '/status']), [200, 200, 429]);
    });
    await rateLimitRule({ requests_per_period: 1, requests_to_origin: true }, 'http.request.uri.path eq "/slow"');
    await file.withProxy({ upstreamTimeoutMs: 200 }, async (p) => {
      assert.deepEqual(await statuses(p.url(), ['/slow', '/slow', '/slow']), [504, 504, 429]);
    });
    await rateLimitRule({ requests_per_period: 1, requests_to_origin: true });
    await file.withProxy({ upstream: dead }, async (p) => {
      assert.deepEqual(await statuses(p.url(), ['/status', '/status', '/status']), [502, 502, 502]);
    });
    await rateLimitRule({ requests_per_period: 1 });
    await file.withProxy({ upstream: dead }, async (p) => {
      assert.deepEqual(await statuses(p.url(), ['/status', '/status', '/status']), [502, 429, 429]);
    });
  });

  // With evaluation workers the counts go to the worker that evaluated the request, which
  // holds its counter (the first: a rate-limited zone's requests all go to it), after the
  // requests sent to it before. The workers count on the real clock: the window of 60 s
  // outlasts the test.
  it('counts after the answer in the evaluation worker that holds the counter', async () => {
    await rateLimitRule({ requests_per_period: 1, counting_expression: 'http.response.code eq 401' });
    await file.withProxy({ workers: 2, now: undefined, trust: 'everyone' }, async (p) => {
      const got: Record<string, number[]> = { '198.51.100.1': [], '198.51.100.2': [] };
      for (const path of ['/status?code=401', '/status?code=200', '/status?code=401', '/status?code=200']) {
        for (const ip of Object.keys(got)) got[ip]!.push((await send(p.url(), ZONE, path, { headers: { 'cf-connecting-ip': ip } })).status);
      }
      assert.deepEqual(got, { '198.51.100.1': [401, 200, 401, 429], '198.51.100.2': [401, 200, 401, 429] });
    });
  });

  // Only the counting expression is matched once the origin answered: the rule's own expression may not read the answer.
  it('the API takes response fields in a counting expression, not in the rule expression', async () => {
    const put = (rule: Record<string, unknown>) => file.svc.call('PUT', RATELIMIT, { body: { rules: [{ action: 'block', ratelimit: { characteristics: ['cf.colo.id', 'ip.src'], period: 60, requests_per_period: 5 }, ...rule }] } });
    const counted = await put({ expression: 'http.request.uri.path eq "/login"', ratelimit: { characteristics: ['cf.colo.id', 'ip.src'], period: 60, requests_per_period: 5, counting_expression: 'http.response.code eq 401' } });
    assert.equal(counted.status, 200);
    // "" is the rule's own expression, as the hosted API answers a rule without one.
    const blank = await put({ expression: 'http.request.uri.path eq "/login"', ratelimit: { characteristics: ['cf.colo.id', 'ip.src'], period: 60, requests_per_period: 5, counting_expression: '' } });
    assert.equal(blank.status, 200);
    const refused = await put({ expression: 'http.response.code eq 401' });
    assert.equal(refused.status, 400);
    const e = firstError(refused.body);
    assert.deepEqual([e.code, e.pointer], [20021, '/rules/0/expression']);
    assert.match(e.message, /the field `http\.response\.code` is not available in phase http_ratelimit/);
  });
});
