// The interstitial's button records the solve (docs/proxy.md, "Challenges") for every kind of
// challenge: a long URL's, a rate limit's, the previous WAF's, a WebSocket handshake's.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CLOUDFLARE_PACKAGE_ID, OWASP_PACKAGE_ID } from '../../server/src/migration/index';
import type { RunningProxy } from '../../server/src/proxy/proxy';
import { eventsOf } from '../../server/src/service/events/fromEvaluation';
import { DEMO_ACCOUNT } from '../../server/src/service/seed';
import { handshake, proxyTestFile, raw, send, ZONE } from './proxyHarness';

const OLD_ID = '01dwaf01'.repeat(4);
const OLD = 'old-waf-challenge.test';

const file = proxyTestFile({
  events: true,
  custom: [{ ref: 'mc', action: 'managed_challenge', expression: 'http.request.uri.path eq "/mc"', description: 'managed' }],
  ratelimit: [{ ref: 'rl', action: 'managed_challenge', expression: 'http.request.uri.path eq "/rl"', description: 'one per 10 s', ratelimit: { characteristics: ['ip.src', 'cf.colo.id'], period: 10, requests_per_period: 1, mitigation_timeout: 0 } }],
  setup: (f) => {
    // A zone before its migration whose previous WAF challenges (OWASP, action_mode challenge).
    f.svc.store.run('INSERT INTO zones (id, account_id, name, plan, status, created_on) VALUES (?, ?, ?, ?, ?, ?)', [OLD_ID, DEMO_ACCOUNT.id, OLD, 'business', 'active', new Date().toISOString()]);
    const settings = { zoneId: OLD_ID, enabled: true, packages: { [CLOUDFLARE_PACKAGE_ID]: { enabled: false }, [OWASP_PACKAGE_ID]: { sensitivity: 'medium', action_mode: 'challenge' } } };
    f.svc.store.run('INSERT INTO previous_waf (zone_id, settings) VALUES (?, ?)', [OLD_ID, JSON.stringify(settings)]);
  },
});

const ray = (a: { headers: Record<string, unknown> }) => String(a.headers['cf-ray']);
const UA = { 'user-agent': 'Mozilla/5.0 (review)' };

/** The interstitial's hidden fields as a browser posts them (application/x-www-form-urlencoded). */
function formOf(body: string): string {
  const fields = [...body.matchAll(/<input type="hidden" name="(\w+)" value="([^"]*)">/g)].map((m) => [m[1]!, m[2]!.replace(/&#(\d+);/g, (_, c) => String.fromCharCode(Number(c))).replace(/&amp;/g, '&')]);
  return new URLSearchParams(fields).toString();
}

const press = (p: RunningProxy, form: string, host = ZONE, headers: Record<string, string> = UA) =>
  send(p.url(), host, '/.rulesmith/challenge', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, body: form });

/** What the proxy handed its sink since `n`, as `ray action source status`. */
const handedSince = (n: number) => file.events.slice(n).flatMap((r) => eventsOf(r).map((e) => `${e.rayId} ${e.action} ${e.source} ${e.responseStatus}`));

describe('the interstitial solve of every kind of challenge', () => {
  it('a challenged URL of ~2.4 KB (a query of 200 encoded params): its press records the solve', async () => {
    await file.withProxy({}, async (p) => {
      const query = Array.from({ length: 200 }, (_, i) => `k${i}=%E2%9C%93`).join('&');
      const served = await send(p.url(), ZONE, `/mc?${query}`, { headers: UA });
      assert.equal(served.status, 403);
      const form = formOf(served.body);
      // The form is longer than the 4096 bytes passChallenge reads (the URL in `return`, every % and & encoded again); `ray` comes first.
      assert.ok(Buffer.byteLength(form) > 4096 && form.startsWith('ray='), `form ${Buffer.byteLength(form)} bytes, ray at ${form.indexOf('ray=')}`);
      const before = file.events.length;
      const pass = await press(p, form);
      assert.equal(pass.status, 303);
      assert.deepEqual(handedSince(before), [`${ray(served)} managed_challenge_interactive_solved firewallCustom 303`]);
    });
  });

  it('a rate-limit rule that challenges: its press records the solve with source ratelimit', async () => {
    await file.withProxy({}, async (p) => {
      assert.equal((await send(p.url(), ZONE, '/rl', { headers: UA })).status, 200);
      const served = await send(p.url(), ZONE, '/rl', { headers: UA });
      assert.equal(served.status, 403);
      const before = file.events.length;
      assert.equal((await press(p, formOf(served.body))).status, 303);
      assert.deepEqual(handedSince(before), [`${ray(served)} managed_challenge_interactive_solved ratelimit 303`]);
    });
  });

  it("the previous WAF's challenge: its press records challenge_solved with source waf and that WAF's score", async () => {
    await file.withProxy({ routes: [{ zone: OLD, upstream: file.upstream.url }] }, async (p) => {
      const served = await send(p.url(), OLD, `/search?q=${encodeURIComponent('<script>alert(document.cookie)</script>')}&r=${encodeURIComponent("1' or '1'='1' -- ")}`, { headers: UA });
      assert.equal(served.status, 403, served.body);
      const before = file.events.length;
      const challengeEvent = eventsOf(file.events[before - 1]!)[0]!;
      assert.equal((await press(p, formOf(served.body), OLD)).status, 303);
      const solves = file.events.slice(before).flatMap((r) => eventsOf(r));
      assert.deepEqual(
        solves.map((e) => [e.rayId, e.action, e.source, e.ruleId, e.anomalyScore]),
        [[ray(served), 'challenge_solved', 'waf', challengeEvent.ruleId, challengeEvent.anomalyScore]],
      );
    });
  });

  it('a WebSocket handshake that is challenged: its press records the solve (GET, the handshake path)', async () => {
    await file.withProxy({}, async (p) => {
      const served = await raw(p.url(), handshake('/mc?ws=1', ZONE), { waitMs: 2_000 });
      assert.match(served.data, /^HTTP\/1\.1 403/);
      const r = /cf-ray: (\S+)/i.exec(served.data)![1]!;
      const before = file.events.length;
      assert.equal((await press(p, formOf(served.data), ZONE, {})).status, 303);
      assert.deepEqual(file.events.slice(before).flatMap((q) => eventsOf(q).map((e) => `${e.rayId} ${e.action} ${e.method} ${e.path}?${e.query} ${e.responseStatus}`)), [`${r} managed_challenge_interactive_solved GET /mc?ws=1 303`]);
    });
  });
});
