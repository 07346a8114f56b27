// Queries as Cloudflare's docs and dashboards write them run unchanged: variables declared
// with the hosted API's type names (`string`, `uint64`, the hosted filter names) and without
// `!`, and `viewer { zones { … } }` without a filter (the zones the credentials may read,
// never another account's). A variable that does not fit still gets an error naming it,
// its declared type and the type expected.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { addToken, DEMO_ACCOUNT, DEMO_ZONES, demoZoneId, policy } from '../../../server/src/service/seed';
import { startService, type TestService } from '../harness';
import { BLOCK_ADMIN, CATALOG, evaluated, LOG_CURL } from './fixture';

const ENT = demoZoneId('enterprise.example.com');
const T0 = Date.UTC(2026, 10, 26, 0, 0, 0);
const MIN = 60_000;
/** Another account, with more zones than one query may answer. */
const OTHER_ACCOUNT = 'f'.repeat(32);
const OTHER_ZONES = Array.from({ length: 11 }, (_, i) => `${'e'.repeat(30)}${i.toString(16).padStart(2, '0')}`);
const TOKENS = { analytics: 'hosted-analytics-token-1234567890', other: 'hosted-other-account-token-123456', wafOnly: 'hosted-waf-only-token-1234567890' };
let svc: TestService;

before(async () => {
  svc = await startService({ events: { catalog: CATALOG, now: () => T0 + 5 * 3_600_000 } });
  svc.events!.record(evaluated(ENT, { time: T0 + 10 * MIN, path: '/admin', ray: 'ray-a' }));
  svc.events!.record(evaluated(ENT, { time: T0 + 40 * MIN, path: '/admin', ua: 'curl/8.5', ray: 'ray-b' }));
  svc.events!.record(evaluated(OTHER_ZONES[0]!, { time: T0 + 10 * MIN, path: '/admin', ray: 'ray-other' }));
  await svc.events!.flush();
  svc.store.write(() => {
    svc.store.run("INSERT INTO accounts (id, name, created_on) VALUES (?, 'Other', '2024-01-01T00:00:00Z')", [OTHER_ACCOUNT]);
    OTHER_ZONES.forEach((id, i) =>
      svc.store.run('INSERT INTO zones (id, account_id, name, plan, status, created_on) VALUES (?, ?, ?, ?, ?, ?)', [id, OTHER_ACCOUNT, `other${i}.example.net`, 'enterprise', 'active', '2026-01-01T00:00:00.000000Z']),
    );
    addToken(svc.store, 'hosted analytics', TOKENS.analytics, [policy([`com.cloudflare.api.account.zone.${ENT}`], ['Zone Analytics'], 'Read')]);
    addToken(svc.store, 'hosted other account', TOKENS.other, [policy([`com.cloudflare.api.account.${OTHER_ACCOUNT}`], ['Zone Analytics'], 'Read')]);
    addToken(svc.store, 'hosted waf only', TOKENS.wafOnly, [policy([`com.cloudflare.api.account.zone.${ENT}`], ['Zone WAF'], 'Write')]);
  });
});
after(() => svc.close());

async function gql(query: string, variables?: unknown, token: string = svc.adminToken): Promise<any> {
  const res = await fetch(`${svc.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ query, variables }),
  });
  assert.equal(res.status, 200);
  return res.json();
}

const SINCE = '2026-11-26T00:00:00Z';
const UNTIL = '2026-11-26T04:00:00Z';

describe('variables declared with the hosted type names', () => {
  test("the tutorial's query: $zoneTag: string and a nullable FirewallEventsAdaptiveFilter_InputObject", async () => {
    const q = `query ListFirewallEvents($zoneTag: string, $filter: FirewallEventsAdaptiveFilter_InputObject) { viewer { zones(filter: { zoneTag: $zoneTag }) {
      firewallEventsAdaptive( filter: $filter limit: 10 orderBy: [datetime_DESC] ) { action rayName datetime } } } }`;
    assert.deepEqual(await gql(q, { zoneTag: ENT, filter: { datetime_geq: SINCE, datetime_leq: UNTIL } }), {
      data: {
        viewer: {
          zones: [
            {
              firewallEventsAdaptive: [
                { action: 'block', rayName: 'ray-b', datetime: '2026-11-26T00:40:00Z' },
                { action: 'log', rayName: 'ray-b', datetime: '2026-11-26T00:40:00Z' },
                { action: 'block', rayName: 'ray-a', datetime: '2026-11-26T00:10:00Z' },
              ],
            },
          ],
        },
      },
    });
  });

  test('string, Time, uint64 and a nullable ZoneFirewallEventsAdaptiveFilter_InputObject, as a dashboard declares them', async () => {
    const q = `query ($zoneTag: string, $start: Time, $end: Time, $limit: uint64, $filter: ZoneFirewallEventsAdaptiveFilter_InputObject) {
      viewer { zones(filter: { zoneTag: $zoneTag }) {
        events: firewallEventsAdaptive(filter: $filter, limit: $limit, orderBy: [datetime_ASC]) { rayName ruleId }
        groups: firewallEventsAdaptiveGroups(filter: { datetime_geq: $start, datetime_leq: $end }, limit: $limit, orderBy: [count_DESC, ruleId_ASC]) { count dimensions { ruleId } }
      } } }`;
    const body = await gql(q, { zoneTag: ENT, start: SINCE, end: UNTIL, limit: 2, filter: { datetime_geq: SINCE, action: 'block' } });
    assert.deepEqual(body, {
      data: {
        viewer: {
          zones: [
            {
              events: [
                { rayName: 'ray-a', ruleId: BLOCK_ADMIN },
                { rayName: 'ray-b', ruleId: BLOCK_ADMIN },
              ],
              groups: [
                { count: 2, dimensions: { ruleId: BLOCK_ADMIN } },
                { count: 1, dimensions: { ruleId: LOG_CURL } },
              ],
            },
          ],
        },
      },
    });
  });

  test('the hosted groups filter name, [string!] for zoneTag_in, Int for the limit and a default value', async () => {
    const q = `query G($zones: [string!], $filter: ZoneFirewallEventsAdaptiveGroupsFilter_InputObject, $limit: Int, $min: uint16 = 400) {
      viewer { zones(filter: { zoneTag_in: $zones }) {
        firewallEventsAdaptiveGroups(filter: { AND: [$filter, { edgeResponseStatus_geq: $min }] }, limit: $limit, orderBy: [count_DESC]) { count dimensions { action } }
      } } }`;
    assert.deepEqual((await gql(q, { zones: [ENT], filter: { datetime_geq: SINCE }, limit: 5 })).data.viewer.zones, [
      { firewallEventsAdaptiveGroups: [{ count: 2, dimensions: { action: 'block' } }, { count: 1, dimensions: { action: 'log' } }] },
    ]);
  });

  test('the hosted scalars are in the schema (introspection lists them)', async () => {
    const body = await gql('{ __schema { types { name kind } } }');
    const scalars = body.data.__schema.types.filter((t: { kind: string }) => t.kind === 'SCALAR').map((t: { name: string }) => t.name);
    for (const name of ['string', 'bool', 'uint8', 'uint16', 'uint32', 'uint64', 'int64', 'Time', 'Date']) assert.ok(scalars.includes(name), name);
  });

  const dataset = (declare: string, zone: string, args: string) =>
    `query Q(${declare}) { viewer { zones(filter: {zoneTag: ${zone}}) { firewallEventsAdaptive(${args}) { action } } } }`;
  const errors: [string, string, unknown, string][] = [
    [
      'a string where the limit is expected',
      dataset('$limit: string', `"${ENT}"`, `limit: $limit, filter: {datetime_geq: "${SINCE}"}`),
      { limit: '10' },
      'Variable "$limit" of type "string" used in position expecting type "Int!"; declare it Int, uint8, uint16, uint32, uint64 or int64.',
    ],
    [
      'a number where the zone tag is expected',
      dataset('$zoneTag: uint64!', '$zoneTag', `limit: 1, filter: {datetime_geq: "${SINCE}"}`),
      { zoneTag: 1 },
      'Variable "$zoneTag" of type "uint64!" used in position expecting type "String"; declare it String or string.',
    ],
    [
      'the hosted filter name where a string is expected (the type as declared)',
      dataset('$f: ZoneFirewallEventsAdaptiveGroupsFilter_InputObject', '$f', `limit: 1, filter: {datetime_geq: "${SINCE}"}`),
      {},
      'Variable "$f" of type "ZoneFirewallEventsAdaptiveGroupsFilter_InputObject" used in position expecting type "String"; declare it String or string.',
    ],
    [
      'a list whose items may be null where they may not',
      `query Q($zones: [string]) { viewer { zones(filter: {zoneTag_in: $zones}) { zoneTag } } }`,
      { zones: [ENT] },
      'Variable "$zones" of type "[string]" used in position expecting type "[String!]"; declare it [String!] or [string!].',
    ],
    [
      'a uint64 value that is negative',
      dataset('$limit: uint64', `"${ENT}"`, `limit: $limit, filter: {datetime_geq: "${SINCE}"}`),
      { limit: -1 },
      'Variable "$limit" got invalid value -1; uint64 cannot represent -1: it takes a whole number from 0 to 9007199254740991',
    ],
    [
      'a string variable given a number',
      dataset('$zoneTag: string', '$zoneTag', `limit: 1, filter: {datetime_geq: "${SINCE}"}`),
      { zoneTag: 5 },
      'Variable "$zoneTag" got invalid value 5; string cannot represent a non-string value: 5',
    ],
    [
      'a nullable filter variable left out: the required argument says so',
      dataset('$filter: ZoneFirewallEventsAdaptiveFilter_InputObject', `"${ENT}"`, 'limit: 1, filter: $filter'),
      {},
      'Argument "filter" of required type "ZoneFirewallEventsAdaptiveFilter_InputObject!" was provided the variable "$filter" which was not provided a runtime value.',
    ],
    [
      'a name the hosted API does not have either (lower-case int)',
      dataset('$limit: int', `"${ENT}"`, `limit: $limit, filter: {datetime_geq: "${SINCE}"}`),
      { limit: 1 },
      'Unknown type "int". Did you mean "Int", "int64", or "uint8"?',
    ],
  ];
  for (const [name, query, variables, message] of errors) {
    test(`a clear error: ${name}`, async () => {
      const body = await gql(query, variables);
      assert.equal(body.errors?.[0]?.message, message, JSON.stringify(body));
    });
  }
});

describe('viewer { zones } without a filter: the zones the credentials may read', () => {
  const ZONES = '{ viewer { zones { zoneTag } } }';
  const tags = (body: any) => body.data.viewer.zones.map((z: { zoneTag: string }) => z.zoneTag);
  const demoZones = DEMO_ZONES.map((z) => demoZoneId(z.name)).sort();

  test("an account's tokens and its global API key: its zones, by zone tag; never another account's", async () => {
    assert.equal(demoZones.length <= 10, true);
    assert.deepEqual(tags(await gql(ZONES)), demoZones);
    assert.deepEqual(tags(await gql(ZONES, undefined, svc.credentials.get('demo read-only')!)), demoZones);
    const res = await fetch(`${svc.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-auth-email': 'demo@rulesmith.localhost', 'x-auth-key': svc.credentials.get('global API key')! },
      body: JSON.stringify({ query: ZONES }),
    });
    assert.deepEqual(tags(await res.json()), demoZones);
    assert.ok(!demoZones.some((id) => OTHER_ZONES.includes(id)));
    assert.ok(DEMO_ACCOUNT.id !== OTHER_ACCOUNT);
  });

  test("a token of one zone gets that zone and its events; a token without analytics on any zone gets none", async () => {
    const q = `{ viewer { zones { zoneTag firewallEventsAdaptiveGroups(limit: 5, filter: {datetime_geq: "${SINCE}"}, orderBy: [count_DESC]) { count } } } }`;
    assert.deepEqual((await gql(q, undefined, TOKENS.analytics)).data, { viewer: { zones: [{ zoneTag: ENT, firewallEventsAdaptiveGroups: [{ count: 3 }] }] } });
    assert.deepEqual(tags(await gql(ZONES, undefined, svc.credentials.get('business.example.com WAF')!)), [demoZoneId('business.example.com')]);
    assert.deepEqual(await gql(ZONES, undefined, TOKENS.wafOnly), { data: { viewer: { zones: [] } } });
  });

  test('at most 10 zones, the first by zone tag; zoneTag_gt pages on', async () => {
    assert.deepEqual(tags(await gql(ZONES, undefined, TOKENS.other)), OTHER_ZONES.slice(0, 10));
    const next = `query ($after: string) { viewer { zones(filter: {zoneTag_gt: $after}) { zoneTag firewallEventsAdaptive(limit: 5, filter: {datetime_geq: "${SINCE}"}) { rayName } } } }`;
    assert.deepEqual((await gql(next, { after: OTHER_ZONES[9] }, TOKENS.other)).data.viewer.zones, [{ zoneTag: OTHER_ZONES[10], firewallEventsAdaptive: [] }]);
    const first = (await gql(next, { after: '' }, TOKENS.other)).data.viewer.zones;
    assert.deepEqual(first[0], { zoneTag: OTHER_ZONES[0], firewallEventsAdaptive: [{ rayName: 'ray-other' }] });
    // The demo account's credentials page through their own zones only.
    assert.deepEqual(tags(await gql('query ($after: string) { viewer { zones(filter: {zoneTag_gt: $after}) { zoneTag } } }', { after: '' })), demoZones);
  });

  test('a filter that names no zone says how to write one; zoneTag_gt does not combine', async () => {
    assert.deepEqual((await gql('{ viewer { zones(filter: {}) { zoneTag } } }')).errors.map((e: { message: string }) => e.message), [
      'zones: the filter names no zone; write zones(filter: {zoneTag: "<zone id>"}) (or zoneTag_in: ["<zone id>", …], or zoneTag_gt: "<zone id>" for the zones after it), or leave the filter out for every zone these credentials may read',
    ]);
    assert.deepEqual((await gql(`{ viewer { zones(filter: {zoneTag: "${ENT}", zoneTag_gt: ""}) { zoneTag } } }`)).errors.map((e: { message: string }) => e.message), [
      'zones: the filter takes one of zoneTag, zoneTag_in or zoneTag_gt, not zoneTag_gt with another',
    ]);
  });
});
