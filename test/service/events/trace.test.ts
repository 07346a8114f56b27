// A trace leaves security events as live traffic does: `rulesmith serve` (the built CLI,
// as users run it) traces a request through POST …/request-tracer/trace, and a GraphQL
// query document (plain fetch) finds its events by the ray id the trace answered with,
// marked `origin: trace`, with the fields it had no value for. With `--events off` a trace leaves none.
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { DEMO_ACCOUNT, demoZoneId } from '../../../server/src/service/seed';
import { spawnService } from '../harness';

const ZONE = demoZoneId('migrated.example.com');
const TOKEN = 'trace-events-test-token-0123456789';
const RULES = [
  { ref: 'log-curl', description: 'curl clients', action: 'log', expression: 'http.user_agent contains "curl"' },
  { ref: 'block-admin', description: 'no admin', action: 'block', expression: 'http.request.uri.path eq "/admin"' },
  // Reads a field only an edge gives, which no trace here sets: every event lists it as defaulted.
  { ref: 'block-test-continent', description: 'test continent', action: 'block', expression: 'ip.src.continent eq "T1"' },
];
const EVENT_FIELDS = `rayName action source origin outcome ruleAction ref description clientIP clientCountryName clientAsn
  clientRequestHTTPHost clientRequestHTTPMethodName clientRequestHTTPProtocol clientRequestPath clientRequestQuery userAgent
  edgeResponseStatus defaultedFields`;
const BY_RAY = `query ByRay($zoneTag: String!, $since: Time!, $ray: String!) {
  viewer { zones(filter: {zoneTag: $zoneTag}) {
    firewallEventsAdaptive(limit: 10, filter: {datetime_geq: $since, rayName: $ray}, orderBy: [ref_ASC]) { ${EVENT_FIELDS} }
  } } }`;
const BY_ORIGIN = `query ByOrigin($zoneTag: String!, $since: Time!) {
  viewer { zones(filter: {zoneTag: $zoneTag}) {
    firewallEventsAdaptiveGroups(limit: 10, filter: {datetime_geq: $since}, orderBy: [count_DESC, action_ASC]) { count dimensions { origin action } }
  } } }`;

interface Served {
  readonly child: ChildProcess;
  readonly url: string;
  readonly dir: string;
}

async function serve(extra: readonly string[]): Promise<Served> {
  const dir = mkdtempSync(join(tmpdir(), 'rulesmith-trace-events-'));
  const s = await spawnService(['--db', join(dir, 'service.db'), '--seed', 'demo', ...extra], { RULESMITH_SERVICE_TOKEN: TOKEN });
  return { child: s.child, url: s.url, dir };
}

async function stop(s: Served | undefined): Promise<void> {
  if (!s) return;
  const exited = new Promise((resolve) => s.child.once('exit', resolve));
  s.child.kill('SIGTERM');
  await exited;
  rmSync(s.dir, { recursive: true, force: true });
}

async function call(s: Served, method: string, path: string, body: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(`${s.url}${path}`, { method, headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, body: await res.json() };
}

async function setUp(s: Served): Promise<void> {
  const put = await call(s, 'PUT', `/zones/${ZONE}/rulesets/phases/http_request_firewall_custom/entrypoint`, { rules: RULES });
  assert.equal(put.status, 200, JSON.stringify(put.body));
}

function trace(s: Served, body: Record<string, unknown>) {
  return call(s, 'POST', `/accounts/${DEMO_ACCOUNT.id}/request-tracer/trace`, { method: 'GET', ...body });
}

/** The GraphQL answer's data (an error fails the test with its message). */
async function gql(s: Served, query: string, variables: Record<string, unknown>): Promise<any> {
  const r = await call(s, 'POST', '/graphql', { query, variables });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  assert.equal(r.body.errors, undefined, JSON.stringify(r.body.errors));
  return r.body.data.viewer.zones[0];
}

const since = () => new Date(Date.now() - 60_000).toISOString();

describe('traces → security events (rulesmith serve)', () => {
  let on: Served | undefined;
  before(async () => {
    on = await serve([]);
    await setUp(on);
  });
  after(() => stop(on));

  test("a trace's acting rules are events with origin trace, found by the ray id the trace answered", async () => {
    const t = await trace(on!, {
      url: 'https://migrated.example.com/admin?x=1',
      protocol: 'HTTP/2',
      headers: { 'User-Agent': 'curl/8.5' },
      context: { ip: '203.0.113.7', country: 'NL' },
    });
    assert.equal(t.status, 200, JSON.stringify(t.body));
    assert.equal(t.body.result.decision.action, 'block');
    const ray: string = t.body.result.ray_id;
    assert.match(ray, /^[0-9a-f]{16}-TRC$/);

    // Written off the request path (within the writer's 200 ms batch): ask until it is there.
    let events: unknown[] = [];
    for (let i = 0; i < 50 && events.length === 0; i++) {
      if (i > 0) await new Promise((r) => setTimeout(r, 100));
      events = (await gql(on!, BY_RAY, { zoneTag: ZONE, since: since(), ray })).firewallEventsAdaptive;
    }
    const common = {
      rayName: ray,
      source: 'firewallCustom',
      origin: 'trace',
      clientIP: '203.0.113.7',
      clientCountryName: 'NL',
      clientAsn: '',
      clientRequestHTTPHost: 'migrated.example.com',
      clientRequestHTTPMethodName: 'GET',
      clientRequestHTTPProtocol: 'HTTP/2',
      clientRequestPath: '/admin',
      clientRequestQuery: 'x=1',
      userAgent: 'curl/8.5',
      edgeResponseStatus: 403,
      defaultedFields: ['ip.src.asnum', 'cf.bot_management.score', 'cf.threat_score', 'ip.src.continent'],
    };
    assert.deepEqual(events, [
      { ...common, action: 'block', outcome: 'terminated', ruleAction: 'block', ref: 'block-admin', description: 'no admin' },
      { ...common, action: 'log', outcome: 'logged', ruleAction: 'log', ref: 'log-curl', description: 'curl clients' },
    ]);
  });

  test('a trace no rule acts on leaves no event; a passing trace says status 0 (no origin is reached), managed rules that scored included', async () => {
    const quiet = await trace(on!, { url: 'https://migrated.example.com/', headers: { 'User-Agent': 'Mozilla/5.0', Accept: 'text/html' } });
    const logged = await trace(on!, { url: 'https://migrated.example.com/home', headers: { 'User-Agent': 'curl/8.5' } });
    assert.deepEqual([quiet.body.result.decision.action, logged.body.result.decision.action], ['allow-through', 'allow-through']);
    let events: any[] = [];
    for (let i = 0; i < 50 && events.length === 0; i++) {
      if (i > 0) await new Promise((r) => setTimeout(r, 100));
      events = (await gql(on!, BY_RAY, { zoneTag: ZONE, since: since(), ray: logged.body.result.ray_id })).firewallEventsAdaptive;
    }
    // The zone's OWASP ruleset scores the missing Accept header (920300) below its threshold.
    const defaulted = ['ip.src', 'ip.src.country', 'ip.src.asnum', 'cf.bot_management.score', 'cf.threat_score', 'ip.src.continent'];
    assert.deepEqual(
      events.map((e) => [e.action, e.source, e.ref, e.clientIP, e.clientCountryName, e.edgeResponseStatus, e.defaultedFields]),
      [
        ['score', 'firewallManaged', '920300', '192.0.2.1', '', 0, defaulted],
        ['log', 'firewallCustom', 'log-curl', '192.0.2.1', '', 0, defaulted],
      ],
    );
    const none = await gql(on!, BY_RAY, { zoneTag: ZONE, since: since(), ray: quiet.body.result.ray_id });
    assert.deepEqual(none.firewallEventsAdaptive, []);
    // Origin is a group dimension (kept in the hourly counts): the 3 traces so far left 4 events.
    const groups = await gql(on!, BY_ORIGIN, { zoneTag: ZONE, since: since() });
    assert.deepEqual(groups.firewallEventsAdaptiveGroups, [
      { count: 2, dimensions: { origin: 'trace', action: 'log' } },
      { count: 1, dimensions: { origin: 'trace', action: 'block' } },
      { count: 1, dimensions: { origin: 'trace', action: 'score' } },
    ]);
  });
});

describe('rulesmith serve --events off', () => {
  let off: Served | undefined;
  before(async () => {
    off = await serve(['--events', 'off']);
    await setUp(off);
  });
  after(() => stop(off));

  test('a trace still answers, and leaves no event', async () => {
    const t = await trace(off!, { url: 'https://migrated.example.com/admin', headers: { 'User-Agent': 'curl/8.5' } });
    assert.equal(t.body.result.decision.action, 'block');
    // Longer than the writer's batch delay (200 ms) twice over: an event would be stored by now.
    await new Promise((r) => setTimeout(r, 500));
    const groups = await gql(off!, BY_ORIGIN, { zoneTag: ZONE, since: since() });
    assert.deepEqual(groups.firewallEventsAdaptiveGroups, []);
  });
});
