// What the security events say of challenges on live traffic, through the proxy, the real
// events sink and the GraphQL API, beside the proxy's counters: a challenge served is the
// challenge; one passed with the clearance cookie is the hosted "bypassed" action and one
// taken as solved by `--challenge pass` the "solved" one (both forwarded, neither a
// challenge served); the interstitial's button pressed is the interactive "solved" one, for
// the rule that challenged, once, and only for the visitor it challenged; `--challenge
// block` is a block, as the counters and the log say.
// Also the previous WAF's events on live traffic carry its anomaly score.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { EvaluatedRequest } from '../../server/src/evaluatedRequest';
import type { RunningProxy, ProxyOptions, ZoneCounters } from '../../server/src/proxy/proxy';
import { CLOUDFLARE_PACKAGE_ID, OWASP_PACKAGE_ID } from '../../server/src/migration/index';
import { eventsOf as eventsOfRequest } from '../../server/src/service/events/fromEvaluation';
import { DEMO_ACCOUNT } from '../../server/src/service/seed';
import { startService, type TestService } from './harness';
import { addProxiedZone, challengeForm, entrypoint, listenProxy, send, startUpstream, type Upstream } from './proxyHarness';

const ZONE_ID = 'c4a11e06'.repeat(4);
const ZONE = 'challenges.test';
/** A zone before its migration: the previous managed rules decide (OWASP at medium sensitivity, PL1/25, action block; the CloudFlare package off). */
const OLD_ID = '01dwaf00'.repeat(4);
const OLD = 'old-waf.test';

let svc: TestService;
let upstream: Upstream;
/** The deployed custom rules' ids, by ref. */
let ruleIds: Record<string, string>;

before(async () => {
  svc = await startService({ events: {} });
  addProxiedZone(svc.store, ZONE_ID, ZONE);
  upstream = await startUpstream();
  svc.store.run('INSERT INTO zones (id, account_id, name, plan, status, created_on) VALUES (?, ?, ?, ?, ?, ?)', [OLD_ID, DEMO_ACCOUNT.id, OLD, 'business', 'active', new Date().toISOString()]);
  const settings = { zoneId: OLD_ID, enabled: true, packages: { [CLOUDFLARE_PACKAGE_ID]: { enabled: false }, [OWASP_PACKAGE_ID]: { sensitivity: 'medium', action_mode: 'block' } } };
  svc.store.run('INSERT INTO previous_waf (zone_id, settings) VALUES (?, ?)', [OLD_ID, JSON.stringify(settings)]);
  const put = await svc.call('PUT', entrypoint(ZONE_ID, 'http_request_firewall_custom'), {
    body: {
      rules: [
        { ref: 'ch', action: 'challenge', expression: 'http.request.uri.path eq "/ch"', description: 'interactive' },
        { ref: 'js', action: 'js_challenge', expression: 'http.request.uri.path eq "/js"', description: 'js' },
        { ref: 'mc', action: 'managed_challenge', expression: 'http.request.uri.path eq "/mc"', description: 'managed' },
      ],
    },
  });
  assert.equal(put.status, 200, JSON.stringify(put.body));
  ruleIds = Object.fromEntries((put.body as any).result.rules.map((r: any) => [r.ref, r.id]));
});
after(async () => {
  await upstream?.close();
  await svc?.close();
});

/** What the proxy of `withProxy` handed its sink (the service's events), in order. */
const handed: EvaluatedRequest[] = [];

async function withProxy(options: Partial<ProxyOptions> & { zone?: string; zones?: string[] }, fn: (p: RunningProxy, logs: string[]) => Promise<void>): Promise<void> {
  const logs: string[] = [];
  const { zone = ZONE, zones = [zone], ...rest } = options;
  handed.length = 0;
  const sink = { record: (e: EvaluatedRequest) => (handed.push(e), svc.events!.record(e)) };
  const p = await listenProxy({ store: svc.store, routes: zones.map((z) => ({ zone: z, upstream: upstream.url })), sink, log: (l) => logs.push(l), ...rest });
  try {
    await fn(p, logs);
  } finally {
    await p.close();
  }
}

async function gql(query: string, variables: unknown): Promise<any> {
  await svc.events!.flush();
  const res = await fetch(`${svc.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${svc.adminToken}` },
    body: JSON.stringify({ query, variables }),
  });
  const body = (await res.json()) as any;
  assert.equal(body.errors, undefined, JSON.stringify(body.errors));
  return body.data.viewer.zones[0];
}

const since = () => new Date(Date.now() - 3_600_000).toISOString().replace(/\.\d{3}Z$/, 'Z');

/** The events of these rays, as the GraphQL API answers them: `ray action (ruleAction) status`. */
async function eventsOf(zoneId: string, rays: readonly string[], fields = 'rayName action ruleAction edgeResponseStatus'): Promise<any[]> {
  const zone = await gql(`query($zoneTag: String!, $since: Time!, $rays: [String!]) { viewer { zones(filter: {zoneTag: $zoneTag}) {
    firewallEventsAdaptive(limit: 100, filter: {datetime_geq: $since, rayName_in: $rays}, orderBy: [datetime_ASC]) { ${fields} } } } }`, { zoneTag: zoneId, since: since(), rays });
  return zone.firewallEventsAdaptive;
}

/** The group counts by action of these rays. */
async function countsOf(zoneId: string, rays: readonly string[]): Promise<Record<string, number>> {
  const zone = await gql(`query($zoneTag: String!, $since: Time!, $rays: [String!]) { viewer { zones(filter: {zoneTag: $zoneTag}) {
    firewallEventsAdaptiveGroups(limit: 100, filter: {datetime_geq: $since, rayName_in: $rays}, orderBy: [action_ASC]) { count dimensions { action } } } } }`, { zoneTag: zoneId, since: since(), rays });
  return Object.fromEntries(zone.firewallEventsAdaptiveGroups.map((g: any) => [g.dimensions.action, g.count]));
}

const ray = (a: { headers: Record<string, unknown> }) => String(a.headers['cf-ray']);

/** The interstitial's form fields (`return`, `ray`), as a browser posts them. */
const formOf = challengeForm;

/** The interstitial's button pressed: the form posted to the challenge path of `host`. */
const press = (p: RunningProxy, form: string, o: { host?: string; headers?: Record<string, string> } = {}) =>
  send(p.url(), o.host ?? ZONE, '/.rulesmith/challenge', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', ...o.headers }, body: form });

/** What the proxy handed its sink, as `ray action (ruleAction, outcome) ruleId method path?query status`. */
const handedSince = (n: number) =>
  handed.slice(n).flatMap((r) => eventsOfRequest(r).map((e) => `${e.rayId} ${e.action} (${e.ruleAction}, ${e.outcome}) ${e.ruleId} ${e.method} ${e.path}${e.query ? `?${e.query}` : ''} ${e.responseStatus}`));
const counts = (c: ZoneCounters) => ({ requests: c.requests, blocked: c.blocked, challenged: c.challenged, forwarded: c.forwarded });

describe('challenges in the security events', () => {
  it('a challenge served is the challenge; the same request with the clearance cookie is bypassed and forwarded', async () => {
    await withProxy({}, async (p) => {
      const served = await send(p.url(), ZONE, '/mc');
      assert.equal(served.status, 403);
      const pass = await press(p, formOf(served));
      const cookie = String(pass.headers['set-cookie']).split(';')[0]!;
      const passed = await Promise.all(['/mc', '/js', '/ch'].map((path) => send(p.url(), ZONE, path, { headers: { cookie } })));
      assert.deepEqual(passed.map((a) => a.status), [200, 200, 200]);
      const rays = [served, ...passed].map(ray);
      assert.deepEqual(
        (await eventsOf(ZONE_ID, rays)).map((e) => [e.rayName, e.action, e.ruleAction, e.edgeResponseStatus]).sort((a, b) => rays.indexOf(a[0]) - rays.indexOf(b[0])),
        [
          [rays[0], 'managed_challenge', 'managed_challenge', 403],
          [rays[0], 'managed_challenge_interactive_solved', 'managed_challenge', 303],
          [rays[1], 'managed_challenge_bypassed', 'managed_challenge', 200],
          [rays[2], 'jschallenge_bypassed', 'js_challenge', 200],
          [rays[3], 'challenge_bypassed', 'challenge', 200],
        ],
      );
      // One challenge served, in the counters and in the events' counts alike.
      assert.deepEqual(counts(p.counters()[0]!), { requests: 4, blocked: 0, challenged: 1, forwarded: 3 });
      assert.deepEqual(await countsOf(ZONE_ID, rays), { challenge_bypassed: 1, jschallenge_bypassed: 1, managed_challenge: 1, managed_challenge_bypassed: 1, managed_challenge_interactive_solved: 1 });
    });
  });

  it('--challenge pass: the hosted "solved" actions, forwarded', async () => {
    await withProxy({ challenge: 'pass' }, async (p) => {
      const answers = await Promise.all(['/mc', '/js', '/ch'].map((path) => send(p.url(), ZONE, path)));
      assert.deepEqual(answers.map((a) => a.status), [200, 200, 200]);
      const rays = answers.map(ray);
      assert.deepEqual(await countsOf(ZONE_ID, rays), { challenge_solved: 1, jschallenge_solved: 1, managed_challenge_non_interactive_solved: 1 });
      assert.deepEqual(counts(p.counters()[0]!), { requests: 3, blocked: 0, challenged: 0, forwarded: 3 });
    });
  });

  it("the interstitial's button records the solve: managed_challenge_interactive_solved, for the rule that challenged, once", async () => {
    await withProxy({}, async (p) => {
      const ua = { 'user-agent': 'Mozilla/5.0 (solver)' };
      const served = await send(p.url(), ZONE, '/mc?x=1', { headers: ua });
      const r = ray(served);
      assert.equal(served.status, 403);
      assert.match(formOf(served), new RegExp(`^ray=${r}&pass=\\d+\\.[\\w-]{43}&return=%2Fmc%3Fx%3D1$`));
      const before = handed.length;
      const pass = await press(p, formOf(served), { headers: ua });
      assert.deepEqual([pass.status, pass.headers.location, /^rulesmith_clearance=/.test(String(pass.headers['set-cookie']))], [303, '/mc?x=1', true]);
      // One event handed over by the press: the challenged request's ray id and fields, the press's status.
      assert.deepEqual(handedSince(before), [`${r} managed_challenge_interactive_solved (managed_challenge, logged) ${ruleIds.mc} GET /mc?x=1 303`]);
      // Pressed again (a replayed POST): the cookie again, no second solve.
      const again = await press(p, formOf(served), { headers: ua });
      assert.deepEqual([again.status, /^rulesmith_clearance=/.test(String(again.headers['set-cookie'])), handed.length], [303, true, before + 1]);
      assert.deepEqual(
        (await eventsOf(ZONE_ID, [r], 'rayName action ruleAction outcome ruleId description clientRequestHTTPMethodName clientRequestPath clientRequestQuery userAgent edgeResponseStatus')).map((e) => Object.values(e)),
        [
          [r, 'managed_challenge', 'managed_challenge', 'terminated', ruleIds.mc, 'managed', 'GET', '/mc', 'x=1', 'Mozilla/5.0 (solver)', 403],
          [r, 'managed_challenge_interactive_solved', 'managed_challenge', 'logged', ruleIds.mc, 'managed', 'GET', '/mc', 'x=1', 'Mozilla/5.0 (solver)', 303],
        ],
      );
      assert.deepEqual(await countsOf(ZONE_ID, [r]), { managed_challenge: 1, managed_challenge_interactive_solved: 1 });
      // The press is no request to the app: the counters have the one challenge served.
      assert.deepEqual(counts(p.counters()[0]!), { requests: 1, blocked: 0, challenged: 1, forwarded: 0 });
    });
  });

  it("the interstitial's button on a challenge or js_challenge rule: challenge_solved, jschallenge_solved", async () => {
    await withProxy({}, async (p) => {
      const served = await Promise.all(['/ch', '/js'].map((path) => send(p.url(), ZONE, path)));
      assert.deepEqual(served.map((a) => a.status), [403, 403]);
      const before = handed.length;
      for (const page of served) assert.equal((await press(p, formOf(page))).status, 303);
      const rays = served.map(ray);
      assert.deepEqual(handedSince(before), [`${rays[0]} challenge_solved (challenge, logged) ${ruleIds.ch} GET /ch 303`, `${rays[1]} jschallenge_solved (js_challenge, logged) ${ruleIds.js} GET /js 303`]);
      assert.deepEqual(await countsOf(ZONE_ID, rays), { challenge: 1, challenge_solved: 1, jschallenge: 1, jschallenge_solved: 1 });
    });
  });

  it('a forged, missing, expired, other zone\'s or other visitor\'s ray id: 403, no cookie and no solve', async () => {
    let clock = Date.now();
    await withProxy({ now: () => clock, zones: [ZONE, OLD] }, async (p) => {
      const cookieOf = (a: { headers: Record<string, unknown> }) => /^rulesmith_clearance=\d+\.[A-Za-z0-9_-]{43};/.test(String(a.headers['set-cookie']));
      const ua = { 'user-agent': 'Mozilla/5.0 (solver)' };
      const served = await send(p.url(), ZONE, '/mc', { headers: ua });
      assert.equal(served.status, 403);
      const form = formOf(served);
      const before = handed.length;
      const refused = [
        await press(p, 'return=%2Fmc&ray=0123456789abcdef-LCL', { headers: ua }),
        await press(p, 'return=%2Fmc', { headers: ua }),
        await press(p, form.replace('ray=', 'ray=x'), { headers: ua }),
        // Another visitor (its User-Agent), and another zone of this proxy.
        await press(p, form, { headers: { 'user-agent': 'python-requests/2.31' } }),
        await press(p, form, { host: OLD, headers: ua }),
      ];
      // Another site's form cannot pass a challenge for the browser that submits it.
      assert.deepEqual(refused.map((a) => [a.status, a.headers['cf-mitigated'], cookieOf(a), /The challenge was not passed/.test(a.body), /<a href="\/mc">Open the page again<\/a>/.test(a.body)]), Array(5).fill([403, 'challenge', false, true, true]));
      assert.deepEqual(handedSince(before), []);
      // Kept for its own visitor meanwhile; once expired (the clearance's lifetime), no solve and no cookie for it either.
      clock += 30 * 60 * 1000;
      const late = await press(p, form, { headers: ua });
      assert.deepEqual([late.status, cookieOf(late), handedSince(before)], [403, false, []]);
      // A challenge served now is solved by its own visitor.
      const fresh = await send(p.url(), ZONE, '/mc', { headers: ua });
      assert.equal((await press(p, formOf(fresh), { headers: ua })).status, 303);
      assert.deepEqual(handedSince(before + 1), [`${ray(fresh)} managed_challenge_interactive_solved (managed_challenge, logged) ${ruleIds.mc} GET /mc 303`]);
    });
  });

  it('with the events off (no sink): a press passes, and pressed again gets the cookie again', async () => {
    await withProxy({ sink: undefined }, async (p) => {
      const served = await send(p.url(), ZONE, '/mc');
      const presses = [await press(p, formOf(served)), await press(p, formOf(served))];
      assert.deepEqual(presses.map((a) => [a.status, /^rulesmith_clearance=/.test(String(a.headers['set-cookie']))]), [[303, true], [303, true]]);
    });
  });

  it('--challenge block: the event says block, as the block page, the counters and the log line do', async () => {
    await withProxy({ challenge: 'block' }, async (p, logs) => {
      const a = await send(p.url(), ZONE, '/mc');
      assert.deepEqual([a.status, /Sorry, you have been blocked/.test(a.body)], [403, true]);
      assert.deepEqual(
        (await eventsOf(ZONE_ID, [ray(a)])).map((e) => [e.action, e.ruleAction, e.edgeResponseStatus]),
        [['block', 'managed_challenge', 403]],
      );
      assert.deepEqual(counts(p.counters()[0]!), { requests: 1, blocked: 1, challenged: 0, forwarded: 0 });
      assert.deepEqual(
        logs.map((l) => l.replace(/[0-9a-f]{16}-LCL/, 'RAY').replace(/ rule \w+$/, ' rule ID')),
        [`proxy: RAY ${ZONE} GET /mc 403 block (managed_challenge, --challenge block) rule ID`],
      );
    });
  });

  it('--challenge block: the challenge button\'s path is the app\'s, so no clearance cookie is had and the challenge still blocks', async () => {
    await withProxy({ challenge: 'block' }, async (p) => {
      upstream.seen.length = 0;
      const post = await send(p.url(), ZONE, '/.rulesmith/challenge', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'return=%2Fmc' });
      assert.deepEqual([post.status, post.headers['set-cookie'], upstream.seen.map((r) => `${r.method} ${r.url}`)], [200, undefined, ['POST /.rulesmith/challenge']]);
      assert.equal((await send(p.url(), ZONE, '/mc')).status, 403);
    });
  });
});

describe("the previous WAF's events on live traffic", () => {
  it('carry the anomaly score its OWASP package gave', async () => {
    await withProxy({ zone: OLD }, async (p) => {
      const query = [
        ['q', '<script>alert(document.cookie)</script>'],
        ['r', "1' or '1'='1' -- "],
        ['t', '<img src=x onerror=alert(1)>'],
      ];
      const a = await send(p.url(), OLD, `/search?${query.map(([k, v]) => `${k}=${encodeURIComponent(v!)}`).join('&')}`);
      assert.equal(a.status, 403);
      const events = await eventsOf(OLD_ID, [ray(a)], 'source action description anomalyScore');
      assert.equal(events.length, 1, JSON.stringify(events));
      const [e] = events;
      assert.deepEqual([e.source, e.action], ['waf', 'block'], JSON.stringify(e));
      const stated = /\(score (\d+) ≥ (\d+)\)$/.exec(e.description);
      assert.ok(stated, e.description);
      assert.ok(Number(stated[1]) >= Number(stated[2]));
      assert.equal(e.anomalyScore, Number(stated[1]));
    });
  });
});
