// Rate limiting rules that throttle or log, over real sockets, on a fake clock. docs/proxy.md
// (Rate limiting): with a `mitigation_timeout` of 0 only the requests over the limit in the
// window are mitigated; `block` answers the rule's custom response with Retry-After, the
// whole seconds until the window ends; the next window counts from zero. `log` logs (a
// `log/ratelimit` event for each request over the limit) and forwards.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { eventsOf } from '../../server/src/service/events/fromEvaluation';
import { proxyTestFile, send, ZONE } from './proxyHarness';

/** The proxies' clock (rate limits, clearance, events). */
let clock = 1_800_000_000_000;

const file = proxyTestFile({
  events: true,
  proxy: { now: () => clock },
  ratelimit: [
    { action: 'block', expression: 'http.request.uri.path eq "/t"', description: 'throttle', action_parameters: { response: { status_code: 429, content_type: 'application/json', content: '{"slow":"down"}' } }, ratelimit: { characteristics: ['cf.colo.id', 'ip.src'], period: 10, requests_per_period: 2, mitigation_timeout: 0 } },
    { action: 'log', expression: 'http.request.uri.path eq "/l"', description: 'log over one', ratelimit: { characteristics: ['cf.colo.id', 'ip.src'], period: 10, requests_per_period: 1, mitigation_timeout: 60 } },
  ],
});

/** The hosted event actions of the requests the proxy handed its sink since `n`, one list per request. */
const actionsSince = (n: number) => file.events.slice(n).map((r) => eventsOf(r).map((e) => `${e.action}/${e.source}`));

describe('a throttling rate limit (mitigation_timeout 0)', () => {
  it("blocks the requests over the limit in the window with the rule's custom response and Retry-After to the window's end; the next window counts from zero", async () => {
    await file.withProxy({}, async (p) => {
      const out: unknown[] = [];
      for (let i = 0; i < 4; i++) {
        const a = await send(p.url(), ZONE, '/t');
        out.push([a.status, a.headers['retry-after'], a.headers['content-type'], a.body]);
        clock += 2_000;
      }
      clock += 2_500;
      for (let i = 0; i < 3; i++) {
        const a = await send(p.url(), ZONE, '/t');
        out.push([a.status, a.headers['retry-after']]);
      }
      assert.deepEqual(out, [
        [200, undefined, 'text/plain', 'ok GET /t'],
        [200, undefined, 'text/plain', 'ok GET /t'],
        [429, '6', 'application/json', '{"slow":"down"}'],
        [429, '4', 'application/json', '{"slow":"down"}'],
        [200, undefined],
        [200, undefined],
        [429, '10'],
      ]);
    });
  });
});

describe('a rate limit that logs', () => {
  it('logs each request over the limit and forwards every one', async () => {
    await file.withProxy({}, async (p) => {
      const n = file.events.length;
      const logged = [];
      for (let i = 0; i < 3; i++) logged.push((await send(p.url(), ZONE, '/l')).status);
      assert.deepEqual({ statuses: logged, events: actionsSince(n) }, { statuses: [200, 200, 200], events: [[], ['log/ratelimit'], ['log/ratelimit']] });
    });
  });
});
