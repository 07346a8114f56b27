// A rate-limit rule's challenge that the visitor passes, over real sockets. Reference §2.3
// (traffic-events-terraform.md): "Passing the challenge resets the
// counter." So once the visitor presses the interstitial's button for the challenge a rate
// limiting rule issued (proxy.ts `passChallenge`), that rule's counter for the visitor's
// characteristics starts from zero: the next request is the first of a new count, under the
// limit (no rate-limit event; 200 even without the cookie). The reset needs no events (the
// sink), works where the counter lives (an evaluation worker), and takes only a press of a
// challenge served to the same visitor, once.
import assert from 'node:assert/strict';
import { beforeEach, describe, it } from 'node:test';
import { proxyWorkerFile } from '../../server/src/proxy/evaluationPool';
import type { RunningProxy } from '../../server/src/proxy/proxy';
import { eventsOf } from '../../server/src/service/events/fromEvaluation';
import { challengeForm, proxyTestFile, send, ZONE } from './proxyHarness';

/** The proxies' clock (rate limits, clearance, events): each test moves it past the last one's windows. */
let clock = 1_800_000_000_000;

const file = proxyTestFile({
  events: true,
  proxy: { now: () => clock },
  ratelimit: [
    { action: 'managed_challenge', expression: 'http.request.uri.path eq "/rl"', description: 'two per minute, then challenge', ratelimit: { characteristics: ['cf.colo.id', 'ip.src'], period: 60, requests_per_period: 2, mitigation_timeout: 0 } },
  ],
});

const UA = { 'user-agent': 'Mozilla/5.0 (challenge reset)' };

/** The hosted event actions of the requests the proxy handed its sink since `n`, one list per request. */
const actionsSince = (n: number) => file.events.slice(n).map((r) => eventsOf(r).map((e) => `${e.action}/${e.source}`));

/** Moves the clock past every counter's window: each test starts from zero. */
beforeEach(() => {
  clock += 24 * 3600 * 1000;
});

/** Two requests under the limit, then the third challenged: that answer (403, `cf-mitigated: challenge`). */
async function overTheLimit(p: RunningProxy, headers: Record<string, string> = UA) {
  assert.deepEqual([(await send(p.url(), ZONE, '/rl', { headers })).status, (await send(p.url(), ZONE, '/rl', { headers })).status], [200, 200]);
  const served = await send(p.url(), ZONE, '/rl', { headers });
  assert.equal(served.status, 403);
  assert.equal(served.headers['cf-mitigated'], 'challenge');
  return served;
}

/** The interstitial's button pressed with `form` (challengeForm of the page): its 303 and the clearance cookie (`name=value`), or the 403 of a press without a valid pass for this visitor. */
async function press(p: RunningProxy, form: string, headers: Record<string, string> = UA, status = 303): Promise<string> {
  const pressed = await send(p.url(), ZONE, '/.rulesmith/challenge', { method: 'POST', headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded' }, body: form });
  assert.deepEqual([pressed.status, pressed.headers['set-cookie'] === undefined], [status, status !== 303]);
  return String(pressed.headers['set-cookie']).split(';')[0]!;
}

describe('a rate-limit challenge the visitor passes', () => {
  it('resets the counter', async () => {
    await file.withProxy({}, async (p) => {
      const served = await overTheLimit(p);
      const cookie = await press(p, challengeForm(served));
      const n = file.events.length;
      const withCookie = await send(p.url(), ZONE, '/rl', { headers: { ...UA, cookie } });
      const withoutCookie = await send(p.url(), ZONE, '/rl', { headers: UA });
      assert.deepEqual(
        { withCookie: [withCookie.status, actionsSince(n)[0]], withoutCookie: withoutCookie.status },
        // The first and second requests of the new count: under the limit, no rate-limit event.
        { withCookie: [200, []], withoutCookie: 200 },
      );
      // The third of the new count is over the limit again.
      assert.equal((await send(p.url(), ZONE, '/rl', { headers: UA })).status, 403);
    });
  });

  it('resets the counter with the events off (no sink)', async () => {
    await file.withProxy({ sink: undefined }, async (p) => {
      const served = await overTheLimit(p);
      await press(p, challengeForm(served));
      assert.deepEqual([(await send(p.url(), ZONE, '/rl', { headers: UA })).status, (await send(p.url(), ZONE, '/rl', { headers: UA })).status], [200, 200]);
    });
  });

  it('resets the counter an evaluation worker keeps', { timeout: 30_000 }, async () => {
    assert.ok(proxyWorkerFile(), 'server/out/proxyWorker.js is built (npm run build)');
    // Workers count on the real clock (a new proxy's worker holds no counter yet).
    await file.withProxy({ workers: 1, now: undefined }, async (p) => {
      const served = await overTheLimit(p);
      await press(p, challengeForm(served));
      assert.deepEqual([(await send(p.url(), ZONE, '/rl', { headers: UA })).status, (await send(p.url(), ZONE, '/rl', { headers: UA })).status], [200, 200]);
    });
  });

  it("does not reset it for a press without that challenge's ray, by another visitor, or pressed again", async () => {
    await file.withProxy({}, async (p) => {
      const served = await overTheLimit(p);
      const form = challengeForm(served);
      const ray = String(served.headers['cf-ray']);
      // No form, another ray id with this pass, only the ray id, another User-Agent (another visitor): 403, no cookie, no reset.
      await press(p, '', UA, 403);
      await press(p, form.replace(encodeURIComponent(ray), '0123456789abcdef-LCL'), UA, 403);
      await press(p, `ray=${ray}&return=%2Frl`, UA, 403);
      await press(p, form, { 'user-agent': 'another visitor' }, 403);
      assert.equal((await send(p.url(), ZONE, '/rl', { headers: UA })).status, 403);
      // The visitor's own press resets it, once: the count starts again, and goes over the limit again.
      await press(p, form);
      assert.deepEqual([(await send(p.url(), ZONE, '/rl', { headers: UA })).status, (await send(p.url(), ZONE, '/rl', { headers: UA })).status], [200, 200]);
      // Pressed again: the cookie again, no second reset.
      await press(p, form);
      assert.equal((await send(p.url(), ZONE, '/rl', { headers: UA })).status, 403);
    });
  });
});

describe('a rate-limit challenge for one visitor', () => {
  it("passed, resets that visitor's counter only", async () => {
    await file.withProxy({ trust: 'everyone' }, async (p) => {
      const one = { ...UA, 'cf-connecting-ip': '198.51.100.1' };
      const two = { ...UA, 'cf-connecting-ip': '198.51.100.2' };
      const served = await overTheLimit(p, one);
      await overTheLimit(p, two);
      await press(p, challengeForm(served), one);
      assert.deepEqual([(await send(p.url(), ZONE, '/rl', { headers: one })).status, (await send(p.url(), ZONE, '/rl', { headers: two })).status], [200, 403]);
    });
  });
});
