// What the security events say of challenges on live traffic, through the proxy, the real
// events sink and the GraphQL API, beside the proxy's counters: a challenge served is the
// challenge; one passed with the clearance cookie is the hosted "bypassed" action and one
// taken as solved by `--challenge pass` the "solved" one (both forwarded, neither a
// challenge served); `--challenge block` is a block, as the counters and the log say.
// Also the previous WAF's events on live traffic carry its anomaly score.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { RunningProxy, ProxyOptions, ZoneCounters } from '../../server/src/proxy/proxy';
import { CLOUDFLARE_PACKAGE_ID, OWASP_PACKAGE_ID } from '../../server/src/migration/index';
import { DEMO_ACCOUNT } from '../../server/src/service/seed';
import { startService, type TestService } from './harness';
import { addProxiedZone, entrypoint, listenProxy, send, startUpstream, type Upstream } from './proxyHarness';

const ZONE_ID = 'c4a11e06'.repeat(4);
const ZONE = 'challenges.test';
/** A zone before its migration: the previous managed rules decide (OWASP at medium sensitivity, PL1/25, action block; the CloudFlare package off). */
const OLD_ID = '01dwaf00'.repeat(4);
const OLD = 'old-waf.test';

let svc: TestService;
let upstream: Upstream;

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
});
after(async () => {
  await upstream?.close();
  await svc?.close();
});

async function withProxy(options: Partial<ProxyOptions> & { zone?: string }, fn: (p: RunningProxy, logs: string[]) => Promise<void>): Promise<void> {
  const logs: string[] = [];
  const { zone = ZONE, ...rest } = options;
  const p = await listenProxy({ store: svc.store, routes: [{ zone, upstream: upstream.url }], sink: svc.events!, log: (l) => logs.push(l), ...rest });
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
const counts = (c: ZoneCounters) => ({ requests: c.requests, blocked: c.blocked, challenged: c.challenged, forwarded: c.forwarded });

describe('challenges in the security events', () => {
  it('a challenge served is the challenge; the same request with the clearance cookie is bypassed and forwarded', async () => {
    await withProxy({}, async (p) => {
      const served = await send(p.url(), ZONE, '/mc');
      assert.equal(served.status, 403);
      const pass = await send(p.url(), ZONE, '/.rulesmith/challenge', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'return=%2Fmc' });
      const cookie = String(pass.headers['set-cookie']).split(';')[0]!;
      const passed = await Promise.all(['/mc', '/js', '/ch'].map((path) => send(p.url(), ZONE, path, { headers: { cookie } })));
      assert.deepEqual(passed.map((a) => a.status), [200, 200, 200]);
      const rays = [served, ...passed].map(ray);
      assert.deepEqual(
        (await eventsOf(ZONE_ID, rays)).map((e) => [e.rayName, e.action, e.ruleAction, e.edgeResponseStatus]).sort((a, b) => rays.indexOf(a[0]) - rays.indexOf(b[0])),
        [
          [rays[0], 'managed_challenge', 'managed_challenge', 403],
          [rays[1], 'managed_challenge_bypassed', 'managed_challenge', 200],
          [rays[2], 'jschallenge_bypassed', 'js_challenge', 200],
          [rays[3], 'challenge_bypassed', 'challenge', 200],
        ],
      );
      // One challenge served, in the counters and in the events' counts alike.
      assert.deepEqual(counts(p.counters()[0]!), { requests: 4, blocked: 0, challenged: 1, forwarded: 3 });
      assert.deepEqual(await countsOf(ZONE_ID, rays), { challenge_bypassed: 1, jschallenge_bypassed: 1, managed_challenge: 1, managed_challenge_bypassed: 1 });
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
