// POST /client/v4/graphql refuses, before validating or executing, a query whose aliases
// multiply through fragments (introspection included: its `__` fields count for depth and
// width like any other), and refuses an `_in` list given as a variable past the filter's
// value cap (a BAD_INPUT error, not SQLite's "too many SQL variables" as an internal error).
// The dashboard's own queries and the standard introspection query still answer.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { getIntrospectionQuery } from 'graphql';
import { addToken, demoZoneId, policy } from '../../../server/src/service/seed';
import { EVENTS_QUERY, graphqlFilter, RULE_GROUPS_QUERY } from '../../../client/src/events/queries';
import { runGraphql } from '../../../server/src/service/events/graphql';
import { startService, type TestService } from '../harness';
import { CATALOG, evaluated } from './fixture';

const ENT = demoZoneId('enterprise.example.com');
const T0 = Date.UTC(2026, 10, 26, 0, 0, 0);
const NOW = T0 + 3_600_000;
const SINCE = '2026-11-26T00:00:00Z';
let svc: TestService;

before(async () => {
  svc = await startService({ events: { catalog: CATALOG, now: () => NOW } });
  svc.events!.record(evaluated(ENT, { time: T0 + 10 * 60_000, path: '/admin', ray: 'ray-a' }));
  await svc.events!.flush();
  // A token with no analytics permission at all: the shape limits hold before any permission check.
  addToken(svc.store, 'waf only', 'waf-only-token-1234567890', [policy([`com.cloudflare.api.account.zone.${ENT}`], ['Zone WAF'], 'Read')]);
});
after(() => svc.close());

async function gql(query: string, variables?: unknown, token = svc.adminToken): Promise<{ status: number; body: any; ms: number }> {
  const t0 = performance.now();
  const res = await fetch(`${svc.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ query, variables }),
  });
  const body = await res.json();
  return { status: res.status, body, ms: performance.now() - t0 };
}

const aliased = (n: number, field: (i: number) => string) => Array.from({ length: n }, (_, i) => field(i)).join(' ');

/** 1.4 KB: 20 × 20 × 20 aliases through three fragments; unchecked it answered 28 MB after ~8 s. */
const HOSTILE_INTROSPECTION = `{ __schema { types { ...A } } }
fragment A on __Type { ${aliased(20, (i) => `f${i}: fields { ...B }`)} }
fragment B on __Field { ${aliased(20, (i) => `t${i}: type { ...C }`)} }
fragment C on __Type { ${aliased(20, (i) => `o${i}: ofType { name kind }`)} }`;

const tooWide = (count: number) => ({
  errors: [
    {
      message: `the query selects ${count} fields (fragments expanded, every alias counted); the limit is 5000: use fewer aliases and fragment spreads, or split the query`,
      extensions: { code: 'QUERY_TOO_WIDE' },
    },
  ],
});

describe('query width: fields multiplied through aliases and fragments are refused before execution', () => {
  test('the hostile introspection query: 2 + 20 × (1 + 20 × (1 + 20 × 3)) = 24422 fields', async () => {
    for (const token of [svc.adminToken, 'waf-only-token-1234567890']) {
      const { status, body, ms } = await gql(HOSTILE_INTROSPECTION, undefined, token);
      assert.equal(status, 200);
      assert.deepEqual(body, tooWide(24422));
      assert.ok(ms < 1_000, `answered in ${Math.round(ms)} ms`);
    }
  });

  test('ordinary fields: 10 viewer × 300 zones × 300 zoneTag aliases = 903010 fields', async () => {
    const query = `{ ${aliased(10, (i) => `v${i}: viewer { ...V }`)} }
      fragment V on Viewer { ${aliased(300, (i) => `z${i}: zones(filter: {zoneTag: "${ENT}"}) { ...Z }`)} }
      fragment Z on Zone { ${aliased(300, (i) => `a${i}: zoneTag`)} }`;
    const { body, ms } = await gql(query);
    assert.deepEqual(body, tooWide(903010));
    assert.ok(ms < 1_000, `answered in ${Math.round(ms)} ms`);
  });

  test('a fragment chain multiplying 2× per level is counted per fragment, not expanded', async () => {
    // 40 fragments, each spreading the next twice: 2^40 zoneTag selections, counted in 40 steps.
    const chain = Array.from({ length: 40 }, (_, i) => `fragment F${i} on Zone { ...F${i + 1} ...F${i + 1} }`).join('\n');
    const query = `{ viewer { zones(filter: {zoneTag: "${ENT}"}) { ...F0 } } }\n${chain}\nfragment F40 on Zone { zoneTag }`;
    const { body, ms } = await gql(query);
    assert.deepEqual(body, tooWide(2 + 2 ** 40));
    assert.ok(ms < 1_000, `answered in ${Math.round(ms)} ms`);
  });

  test('at the limit the query runs; one field more is refused', async () => {
    // viewer + zones + n zoneTag aliases.
    const query = (n: number) => `{ viewer { zones(filter: {zoneTag: "${ENT}"}) { ${aliased(n, (i) => `a${i}: zoneTag`)} } } }`;
    const ok = await gql(query(4998));
    assert.equal(ok.body.errors, undefined, JSON.stringify(ok.body.errors));
    assert.equal(ok.body.data.viewer.zones[0].a4997, ENT);
    assert.deepEqual((await gql(query(4999))).body, tooWide(5001));
  });

  test('only the operation that runs is counted', async () => {
    const wide = `query Wide { viewer { zones(filter: {zoneTag: "${ENT}"}) { ${aliased(5000, (i) => `a${i}: zoneTag`)} } } }`;
    const narrow = `query Narrow { viewer { zones(filter: {zoneTag: "${ENT}"}) { zoneTag } } }`;
    const res = await fetch(`${svc.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${svc.adminToken}` },
      body: JSON.stringify({ query: `${wide}\n${narrow}`, operationName: 'Narrow' }),
    });
    assert.deepEqual(await res.json(), { data: { viewer: { zones: [{ zoneTag: ENT }] } } });
    assert.deepEqual((await gql(`${narrow}\n${wide}`)).body, tooWide(5002));
  });
});

describe('introspection and dataset rows: their lists multiply the selections, so they have lower limits', () => {
  test('introspection over 500 fields is refused (one list of input fields with 500 aliases answered 19 MB)', async () => {
    const query = `{ __schema { types { inputFields { ${aliased(498, (i) => `n${i}: name`)} } } } }`;
    assert.deepEqual((await gql(query)).body, {
      errors: [
        {
          message:
            "the query's introspection (__schema, __type) selects 501 fields (fragments expanded, every alias counted); the limit is 500: use fewer aliases and fragment spreads (the standard introspection query selects 220)",
          extensions: { code: 'QUERY_TOO_WIDE' },
        },
      ],
    });
    const ok = await gql(`{ __schema { types { inputFields { ${aliased(497, (i) => `n${i}: name`)} } } } }`);
    assert.equal(ok.body.errors, undefined, JSON.stringify(ok.body.errors));
  });

  test('a dataset row over 50 fields is refused before its events are read', async () => {
    const dataset = (fields: string) => `{ viewer { zones(filter: {zoneTag: "${ENT}"}) {
      firewallEventsAdaptive(limit: 10000, filter: {datetime_geq: "${SINCE}"}) { ...R } } } }
      fragment R on ZoneFirewallEventsAdaptive { ${fields} }`;
    const { body } = await gql(dataset(aliased(51, (i) => `a${i}: clientIP`)));
    assert.deepEqual(body.errors, [
      {
        message: 'firewallEventsAdaptive: each row selects 51 fields (fragments expanded, every alias counted); the limit is 50: use fewer aliases',
        locations: [{ line: 2, column: 7 }],
        path: ['viewer', 'zones', 0, 'firewallEventsAdaptive'],
        extensions: { code: 'QUERY_TOO_WIDE' },
      },
    ]);
    const ok = await gql(dataset(aliased(50, (i) => `a${i}: clientIP`)));
    assert.equal(ok.body.data.viewer.zones[0].firewallEventsAdaptive[0].a49, '203.0.113.7');
  });
});

describe("the answer's size: field values count once per alias", () => {
  test('over 32 million characters is refused (RESULT_TOO_LARGE), not a 500 or an answer of hundreds of MB', async () => {
    const biz = demoZoneId('business.example.com');
    const ua = 'x'.repeat(8_000);
    for (let i = 0; i < 600; i++) svc.events!.record(evaluated(biz, { time: T0 + 20 * 60_000, path: '/admin', ua, ray: `big-${i}` }));
    await svc.events!.flush();
    const query = (aliases: number) => `{ viewer { zones(filter: {zoneTag: "${biz}"}) { firewallEventsAdaptive(limit: 600, filter: {datetime_geq: "${SINCE}"}) { ${aliased(aliases, (i) => `u${i}: userAgent`)} } } } }`;
    // 600 × 8,000 × 7 = 33.6 million.
    const { status, body } = await gql(query(7));
    assert.equal(status, 200);
    assert.deepEqual(body.errors.map((e: any) => [e.message, e.extensions.code]), [
      ['firewallEventsAdaptive: the answer would hold more than 32 million characters of field values (every alias counted); lower limit, select fewer fields or aliases, or split the query', 'RESULT_TOO_LARGE'],
    ]);
    const ok = await gql(query(1));
    assert.equal(ok.body.data.viewer.zones[0].firewallEventsAdaptive.length, 600);
  });
});

describe('query depth counts introspection fields', () => {
  test('an ofType chain 16 deep is refused', async () => {
    const query = `{ __schema { types { ${'ofType { '.repeat(14)}name${' }'.repeat(14)} } } }`;
    assert.deepEqual((await gql(query)).body, { errors: [{ message: 'the query is nested more than 15 levels deep; the limit is 15', extensions: { code: 'QUERY_TOO_DEEP' } }] });
  });

  test('the standard introspection query (14 deep, a few hundred fields) answers', async () => {
    const { body } = await gql(getIntrospectionQuery());
    assert.equal(body.errors, undefined, JSON.stringify(body.errors));
    assert.ok(body.data.__schema.types.some((t: { name: string }) => t.name === 'ZoneFirewallEventsAdaptive'));
  });
});

describe('the dashboard queries still answer', () => {
  test('rule groups and events with the view filter', async () => {
    const filter = graphqlFilter({ sinceMinutes: 60 }, NOW);
    assert.equal(filter.datetime_geq, SINCE);
    const groups = await gql(RULE_GROUPS_QUERY, { zoneTag: ENT, filter });
    assert.equal(groups.body.errors, undefined, JSON.stringify(groups.body.errors));
    assert.equal(groups.body.data.viewer.zones[0].firewallEventsAdaptiveGroups[0].count, 1);
    const events = await gql(EVENTS_QUERY, { zoneTag: ENT, filter, limit: 50 });
    assert.equal(events.body.errors, undefined, JSON.stringify(events.body.errors));
    assert.equal(events.body.data.viewer.zones[0].firewallEventsAdaptive[0].rayName, 'ray-a');
  });
});

describe('_in and _notin lists: every value counts toward the filter cap, inline or as a variable', () => {
  const ips = (n: number, from = 0) => Array.from({ length: n }, (_, i) => `10.${(from + i) >> 16}.${((from + i) >> 8) & 255}.${(from + i) & 255}`);
  const listQuery = `query($ips: [String!], $out: [String!]) { viewer { zones(filter: {zoneTag: "${ENT}"}) {
    firewallEventsAdaptive(limit: 10, filter: {datetime_geq: "${SINCE}", clientIP_in: $ips, clientIP_notin: $out}) { rayName } } } }`;
  const groupQuery = `query($ips: [String!]) { viewer { zones(filter: {zoneTag: "${ENT}"}) {
    firewallEventsAdaptiveGroups(limit: 10, filter: {datetime_geq: "${SINCE}", datetime_leq: "2026-11-26T01:00:00Z", action_notin: $ips}) { count } } } }`;
  const badInput = (message: string, field: string) => [{ message, locations: [{ line: 2, column: 5 }], path: ['viewer', 'zones', 0, field], extensions: { code: 'BAD_INPUT' } }];

  test('40,000 values in a variable: BAD_INPUT, not an internal error', async () => {
    const { status, body } = await gql(listQuery, { ips: ips(40_000) });
    assert.equal(status, 200);
    assert.deepEqual(body.errors, badInput("filter.clientIP_in: the filter's _in and _notin lists have more than 1000 values in all (this list has 40000); use fewer values or split the query", 'firewallEventsAdaptive'));
  });

  test('the cap is over all the lists of the filter; 1000 values in all still run', async () => {
    const ok = await gql(listQuery, { ips: [...ips(999), '192.0.2.1'], out: [] });
    assert.equal(ok.body.errors, undefined, JSON.stringify(ok.body.errors));
    const split = await gql(listQuery, { ips: ips(600), out: ips(401, 600) });
    assert.deepEqual(split.body.errors, badInput("filter.clientIP_notin: the filter's _in and _notin lists have more than 1000 values in all (this list has 401); use fewer values or split the query", 'firewallEventsAdaptive'));
  });

  test('a group query over the hourly counts (the filter bound three times) is capped the same way', async () => {
    const { body } = await gql(groupQuery, { ips: ips(30_000) });
    assert.deepEqual(body.errors, badInput("filter.action_notin: the filter's _in and _notin lists have more than 1000 values in all (this list has 30000); use fewer values or split the query", 'firewallEventsAdaptiveGroups'));
    const ok = await gql(groupQuery, { ips: ips(1000) });
    assert.deepEqual(ok.body, { data: { viewer: { zones: [{ firewallEventsAdaptiveGroups: [{ count: 1 }] }] } } });
  });
});

describe('variables nested deeply', () => {
  const query = `query($f: ZoneFirewallEventsAdaptiveFilter_InputObject!) { viewer { zones(filter: { zoneTag: "${ENT}" }) { firewallEventsAdaptive(filter: $f, limit: 1) { action } } } }`;
  const nested = (levels: number) => {
    let f: unknown = { action: 'block' };
    for (let i = 0; i < levels; i++) f = { AND: [f] };
    return f;
  };

  test('over HTTP, 2,000 levels of AND never reach GraphQL: the body is refused for its depth', async () => {
    const r = await gql(query, { f: nested(2_000) });
    assert.deepEqual([r.status, r.body.errors], [400, [{ code: 10026, message: 'invalid JSON: exceeded max depth: the body nests objects and arrays more than 64 levels deep' }]]);
  });

  test('called directly, a failure graphql-js gives as a plain error is an INTERNAL error, logged, not a throw', async () => {
    const logged: Error[] = [];
    const principal = { kind: 'key' as const, userId: 'test', accounts: new Set(['any']) };
    const r = await runGraphql(svc.store, svc.events!, principal, { query, variables: { f: nested(20_000) } }, (e) => logged.push(e), NOW);
    assert.deepEqual(r, { errors: [{ message: 'internal error; see the rules service log', extensions: { code: 'INTERNAL' } }] });
    assert.equal(logged.length, 1);
  });
});
