// POST /client/v4/graphql over real HTTP: a query document through plain fetch and through
// the official SDK's auth; the hosted field names, filters and group queries; the hourly
// counts give the same answer as the events; limits and bad queries are GraphQL errors.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import Cloudflare from 'cloudflare';
import { addToken, demoZoneId, policy } from '../../../server/src/service/seed';
import { startService, type TestService } from '../harness';
import { BLOCK_ADMIN, CATALOG, CUSTOM_EP, evaluated, LOG_CURL, SKIP_HEALTH } from './fixture';

const ENT = demoZoneId('enterprise.example.com');
const BIZ = demoZoneId('business.example.com');
const T0 = Date.UTC(2026, 10, 26, 0, 0, 0);
const MIN = 60_000;
let svc: TestService;

before(async () => {
  svc = await startService({ events: { catalog: CATALOG, now: () => T0 + 5 * 3_600_000 } });
  const sink = svc.events!;
  // 00:10 block, 00:40 log+block (curl on /admin), 01:05 skip, 01:30 block from another ip, 02:20 block; one in another zone.
  sink.record(evaluated(ENT, { time: T0 + 10 * MIN, path: '/admin', ray: 'ray-a' }));
  sink.record(evaluated(ENT, { time: T0 + 40 * MIN, path: '/admin', ua: 'curl/8.5', ray: 'ray-b', query: 'x=1' }));
  sink.record(evaluated(ENT, { time: T0 + 65 * MIN, path: '/health', ray: 'ray-c' }));
  sink.record(evaluated(ENT, { time: T0 + 90 * MIN, path: '/admin', ip: '198.51.100.4', ray: 'ray-d' }));
  sink.record(evaluated(ENT, { time: T0 + 140 * MIN, path: '/admin', ray: 'ray-e' }));
  sink.record(evaluated(BIZ, { time: T0 + 10 * MIN, path: '/admin', ray: 'ray-z' }));
  await sink.flush();
  addToken(svc.store, 'analytics', 'analytics-token-1234567890', [policy([`com.cloudflare.api.account.zone.${ENT}`], ['Zone Analytics'], 'Read')]);
});
after(() => svc.close());

async function gql(query: string, variables?: unknown, token: string | null = svc.adminToken): Promise<{ status: number; body: any }> {
  const res = await fetch(`${svc.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token !== null ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify({ query, variables }),
  });
  return { status: res.status, body: await res.json() };
}

const TOP_RULES = `query TopRules($zoneTag: String!, $since: Time!, $until: Time!) {
  viewer { zones(filter: {zoneTag: $zoneTag}) {
    firewallEventsAdaptiveGroups(limit: 10, filter: {datetime_geq: $since, datetime_leq: $until}, orderBy: [count_DESC, ruleId_ASC]) {
      count dimensions { ruleId action description }
    } } } }`;

describe('queries', () => {
  test('top rules: counts per rule, most first', async () => {
    const { status, body } = await gql(TOP_RULES, { zoneTag: ENT, since: '2026-11-26T00:00:00Z', until: '2026-11-26T04:00:00Z' });
    assert.equal(status, 200);
    assert.deepEqual(body, {
      data: {
        viewer: {
          zones: [
            {
              firewallEventsAdaptiveGroups: [
                { count: 4, dimensions: { ruleId: BLOCK_ADMIN, action: 'block', description: 'no admin' } },
                { count: 1, dimensions: { ruleId: LOG_CURL, action: 'log', description: 'curl clients' } },
                { count: 1, dimensions: { ruleId: SKIP_HEALTH, action: 'skip', description: 'health checks' } },
              ],
            },
          ],
        },
      },
    });
  });

  test('a range with partial hours at both ends counts exactly (hourly counts inside, events at the edges)', async () => {
    // 00:30–02:19:59 takes 00:40 (two events), 01:05, 01:30 and leaves 00:10 and 02:20 out.
    for (const [since, until] of [['2026-11-26T00:30:00Z', '2026-11-26T02:19:59Z'], ['2026-11-26T00:30:00Z', '2026-11-26T02:20:00Z'], ['2026-11-26T01:00:00Z', '2026-11-26T01:59:59Z']]) {
      const { body } = await gql(TOP_RULES, { zoneTag: ENT, since, until });
      const got = body.data.viewer.zones[0].firewallEventsAdaptiveGroups.map((g: any) => `${g.dimensions.action}:${g.count}`);
      const expected = { '2026-11-26T02:19:59Z': ['block:2', 'log:1', 'skip:1'], '2026-11-26T02:20:00Z': ['block:3', 'log:1', 'skip:1'], '2026-11-26T01:59:59Z': ['block:1', 'skip:1'] }[until!];
      assert.deepEqual(got, expected, `${since} to ${until}`);
    }
  });

  test('events over time by action (datetimeHour), and by minute', async () => {
    const q = `{ viewer { zones(filter: {zoneTag: "${ENT}"}) {
      hours: firewallEventsAdaptiveGroups(limit: 100, filter: {datetime_geq: "2026-11-26T00:00:00Z", datetime_leq: "2026-11-26T03:00:00Z"}, orderBy: [datetimeHour_ASC, action_ASC]) { count dimensions { datetimeHour action } }
      minutes: firewallEventsAdaptiveGroups(limit: 2, filter: {datetime_geq: "2026-11-26T00:00:00Z", action: "block"}, orderBy: [datetimeMinute_ASC]) { count dimensions { datetimeMinute } }
    } } }`;
    const { body } = await gql(q);
    const zone = body.data.viewer.zones[0];
    assert.deepEqual(zone.hours.map((g: any) => `${g.dimensions.datetimeHour} ${g.dimensions.action} ${g.count}`), [
      '2026-11-26T00:00:00Z block 2',
      '2026-11-26T00:00:00Z log 1',
      '2026-11-26T01:00:00Z block 1',
      '2026-11-26T01:00:00Z skip 1',
      '2026-11-26T02:00:00Z block 1',
    ]);
    assert.deepEqual(zone.minutes, [
      { count: 1, dimensions: { datetimeMinute: '2026-11-26T00:10:00Z' } },
      { count: 1, dimensions: { datetimeMinute: '2026-11-26T00:40:00Z' } },
    ]);
  });

  test('events with the hosted field names, filtered by action_in, path LIKE and OR on the client ip', async () => {
    const q = `query Events($zoneTag: String!) { viewer { zones(filter: {zoneTag: $zoneTag}) {
      firewallEventsAdaptive(limit: 10, orderBy: [datetime_ASC], filter: {
        datetime_geq: "2026-11-26T00:00:00Z", action_in: ["block", "log"], clientRequestPath_like: "/adm%",
        OR: [{clientIP: "198.51.100.4"}, {clientRequestQuery: "x=1"}] }) {
        action clientIP clientAsn clientCountryName clientRequestHTTPHost clientRequestHTTPMethodName clientRequestHTTPProtocol
        clientRequestPath clientRequestQuery datetime rayName ruleId rulesetId source userAgent description edgeResponseStatus
        ref outcome anomalyScore defaultedFields anomalyScores { category score }
      } } } }`;
    const { body } = await gql(q, { zoneTag: ENT });
    const common = {
      clientAsn: '64500', clientCountryName: 'NL', clientRequestHTTPHost: 'enterprise.example.com', clientRequestHTTPMethodName: 'GET', clientRequestHTTPProtocol: 'HTTP/1.1',
      clientRequestPath: '/admin', rulesetId: CUSTOM_EP, source: 'firewallCustom', edgeResponseStatus: 403, anomalyScore: 0, defaultedFields: ['ip.src.city'], anomalyScores: [],
    };
    assert.deepEqual(body, {
      data: {
        viewer: {
          zones: [
            {
              firewallEventsAdaptive: [
                { ...common, action: 'log', clientIP: '203.0.113.7', clientRequestQuery: 'x=1', datetime: '2026-11-26T00:40:00Z', rayName: 'ray-b', ruleId: LOG_CURL, userAgent: 'curl/8.5', description: 'curl clients', ref: 'log-curl', outcome: 'logged' },
                { ...common, action: 'block', clientIP: '203.0.113.7', clientRequestQuery: 'x=1', datetime: '2026-11-26T00:40:00Z', rayName: 'ray-b', ruleId: BLOCK_ADMIN, userAgent: 'curl/8.5', description: 'no admin', ref: 'block-admin', outcome: 'terminated' },
                { ...common, action: 'block', clientIP: '198.51.100.4', clientRequestQuery: '', datetime: '2026-11-26T01:30:00Z', rayName: 'ray-d', ruleId: BLOCK_ADMIN, userAgent: 'Mozilla/5.0', description: 'no admin', ref: 'block-admin', outcome: 'terminated' },
              ],
            },
          ],
        },
      },
    });
  });

  test('the time bounds may be inside the top-level AND (then the events are counted, not the hourly counts)', async () => {
    const q = `{ viewer { zones(filter: {zoneTag: "${ENT}"}) { firewallEventsAdaptiveGroups(limit: 5, filter: {AND: [{datetime_geq: "2026-11-26T00:30:00Z"}, {datetime_leq: "2026-11-26T02:19:59Z"}]}, orderBy: [count_DESC, action_ASC]) { count dimensions { action } } } } }`;
    assert.deepEqual((await gql(q)).body.data.viewer.zones[0].firewallEventsAdaptiveGroups, [
      { count: 2, dimensions: { action: 'block' } },
      { count: 1, dimensions: { action: 'log' } },
      { count: 1, dimensions: { action: 'skip' } },
    ]);
  });

  test('two start bounds or two end bounds: the tightest of each counts, in the hourly counts as in the events', async () => {
    const actions = async (filter: string, variables?: unknown) => {
      const q = `query Q${filter.includes('$since') ? '($since: Time)' : ''} { viewer { zones(filter: {zoneTag: "${ENT}"}) { firewallEventsAdaptiveGroups(limit: 5, filter: {${filter}}, orderBy: [action_ASC]) { count dimensions { action } } } } }`;
      return (await gql(q, variables)).body.data.viewer.zones[0].firewallEventsAdaptiveGroups.map((g: any) => `${g.dimensions.action}:${g.count}`);
    };
    // From 00:30:01: 00:40 (block, log), 01:05 (skip), 01:30 and 02:20 (block).
    assert.deepEqual(await actions('datetime_geq: "2026-11-26T00:00:00Z", datetime_gt: "2026-11-26T00:30:00Z", datetime_leq: "2026-11-26T04:00:00Z"'), ['block:3', 'log:1', 'skip:1']);
    // To 01:09:59: 00:10 and 00:40 (block, log), 01:05 (skip).
    assert.deepEqual(await actions('datetime_geq: "2026-11-26T00:00:00Z", datetime_leq: "2026-11-26T04:00:00Z", datetime_lt: "2026-11-26T01:10:00Z"'), ['block:2', 'log:1', 'skip:1']);
    // An unset variable is no bound.
    assert.deepEqual(await actions('datetime_geq: $since, datetime_gt: "2026-11-26T00:30:00Z", datetime_leq: "2026-11-26T04:00:00Z"', { since: null }), ['block:3', 'log:1', 'skip:1']);
  });

  test('an OR with a member that matches everything (an empty filter, a null variable) matches everything', async () => {
    const rays = async (or: string, variables?: unknown) => {
      const q = `query Q${or.includes('$ip') ? '($ip: String)' : ''} { viewer { zones(filter: {zoneTag: "${ENT}"}) { firewallEventsAdaptive(limit: 10, filter: {datetime_geq: "2026-11-26T00:00:00Z", OR: ${or}}, orderBy: [datetime_ASC]) { rayName } } } }`;
      return new Set((await gql(q, variables)).body.data.viewer.zones[0].firewallEventsAdaptive.map((e: any) => e.rayName)).size;
    };
    assert.deepEqual([await rays('[{}, {action: "skip"}]'), await rays('[{clientIP: $ip}, {action: "skip"}]', { ip: null }), await rays('[{action: "skip"}]')], [5, 5, 1]);
  });

  test('groups by the second (datetime), in the order of their dimensions when orderBy does not decide', async () => {
    const q = `{ viewer { zones(filter: {zoneTag: "${ENT}"}) {
      bySecond: firewallEventsAdaptiveGroups(limit: 10, filter: {datetime_geq: "2026-11-26T00:00:00Z"}, orderBy: [datetime_ASC]) { count dimensions { datetime } }
      unordered: firewallEventsAdaptiveGroups(limit: 10, filter: {datetime_geq: "2026-11-26T00:00:00Z"}) { count dimensions { action } }
      ties: firewallEventsAdaptiveGroups(limit: 10, filter: {datetime_geq: "2026-11-26T00:00:00Z", action_neq: "block"}, orderBy: [count_DESC]) { count dimensions { action } }
    } } }`;
    const zone = (await gql(q)).body.data.viewer.zones[0];
    assert.deepEqual(zone.bySecond.map((g: any) => `${g.dimensions.datetime} ${g.count}`), ['2026-11-26T00:10:00Z 1', '2026-11-26T00:40:00Z 2', '2026-11-26T01:05:00Z 1', '2026-11-26T01:30:00Z 1', '2026-11-26T02:20:00Z 1']);
    assert.deepEqual(zone.unordered.map((g: any) => g.dimensions.action), ['block', 'log', 'skip']);
    assert.deepEqual(zone.ties.map((g: any) => g.dimensions.action), ['log', 'skip']);
  });

  test('a dimension left out by @skip or @include does not split the groups', async () => {
    const q = `query Q($all: Boolean!) { viewer { zones(filter: {zoneTag: "${ENT}"}) { firewallEventsAdaptiveGroups(limit: 10, filter: {datetime_geq: "2026-11-26T00:00:00Z", action: "block"}) { count dimensions { action clientIP @include(if: $all) } } } } }`;
    const groups = async (all: boolean) => (await gql(q, { all })).body.data.viewer.zones[0].firewallEventsAdaptiveGroups.map((g: any) => g.count);
    assert.deepEqual([await groups(false), await groups(true)], [[4], [1, 3]]);
  });

  test('LIKE is case-sensitive and its wildcards are the only special characters', async () => {
    const count = async (like: string) => {
      const q = `{ viewer { zones(filter: {zoneTag: "${ENT}"}) { firewallEventsAdaptiveGroups(limit: 1, filter: {datetime_geq: "2026-11-26T00:00:00Z", clientRequestPath_like: ${JSON.stringify(like)}}) { count } } } }`;
      return (await gql(q)).body.data.viewer.zones[0].firewallEventsAdaptiveGroups[0]?.count ?? 0;
    };
    assert.deepEqual([await count('/ADMIN'), await count('/a_min'), await count('%health'), await count('/[a]dmin')], [0, 5, 1, 0]);
  });
});

describe('auth', () => {
  const ZONE_QUERY = `{ viewer { zones(filter: {zoneTag: "${ENT}"}) { firewallEventsAdaptiveGroups(limit: 1, filter: {datetime_geq: "2026-11-26T00:00:00Z"}) { count } } } }`;

  test('Zone Analytics Read and Zone Read may query; a token of another zone gets an authz error', async () => {
    assert.deepEqual((await gql(ZONE_QUERY, undefined, 'analytics-token-1234567890')).body.data.viewer.zones[0].firewallEventsAdaptiveGroups, [{ count: 6 }]);
    assert.deepEqual((await gql(ZONE_QUERY, undefined, svc.credentials.get('demo read-only')!)).body.data.viewer.zones[0].firewallEventsAdaptiveGroups, [{ count: 6 }]);
    const other = await gql(ZONE_QUERY, undefined, svc.credentials.get('business.example.com WAF')!);
    assert.equal(other.status, 200);
    assert.deepEqual(other.body, {
      data: null,
      errors: [
        {
          message: `zone '${ENT}' does not exist or these credentials may not read its analytics (needs Zone Analytics Read or Zone Read)`,
          locations: [{ line: 1, column: 12 }],
          path: ['viewer', 'zones'],
          extensions: { code: 'authz' },
        },
      ],
    });
  });

  test('no credentials: the API status and code, in GraphQL form', async () => {
    assert.deepEqual(await gql(ZONE_QUERY, undefined, null), { status: 400, body: { data: null, errors: [{ message: 'Missing X-Auth-Key, X-Auth-Email or Authorization headers', extensions: { code: 9106 } }] } });
  });

  test("through the official SDK's auth: a token, and the global API key", async () => {
    const viaToken = (await svc.sdk().post('/graphql', { body: { query: ZONE_QUERY } })) as any;
    assert.deepEqual(viaToken.data.viewer.zones[0].firewallEventsAdaptiveGroups, [{ count: 6 }]);
    const key = new Cloudflare({ apiEmail: 'demo@rulesmith.localhost', apiKey: svc.credentials.get('global API key')!, apiToken: null, userServiceKey: null, baseURL: svc.url, maxRetries: 0 });
    const viaKey = (await key.post('/graphql', { body: { query: ZONE_QUERY } })) as any;
    assert.deepEqual(viaKey.data.viewer.zones[0].firewallEventsAdaptiveGroups, [{ count: 6 }]);
  });
});

describe('bad queries and limits are GraphQL errors, never a 500', () => {
  const dataset = (args: string, sel = 'count') => `{ viewer { zones(filter: {zoneTag: "${ENT}"}) { firewallEventsAdaptiveGroups(${args}) { ${sel} } } } }`;
  const cases: [string, string | (() => string), unknown, string][] = [
    ['a syntax error', '{ viewer { zones(', undefined, 'Syntax Error: Expected Name, found <EOF>.'],
    ['an unknown field', dataset('limit: 1, filter: {datetime_geq: "2026-11-26T00:00:00Z"}', 'nope'), undefined, 'Cannot query field "nope" on type "ZoneFirewallEventsAdaptiveGroups". This local endpoint has a subset of the hosted schema: the datasets, fields and filters it has are listed in docs/events.md ("GraphQL API"), and introspection lists them too.'],
    ['a wrong type', dataset('limit: "ten", filter: {datetime_geq: "2026-11-26T00:00:00Z"}'), undefined, 'Int cannot represent non-integer value: "ten"'],
    ['an unknown filter', dataset('limit: 1, filter: {datetime_geq: "2026-11-26T00:00:00Z", rule: "x"}'), undefined, 'Field "rule" is not defined by type "ZoneFirewallEventsAdaptiveFilter_InputObject". Did you mean "ruleId"?'],
    ['a limit over the maximum', dataset('limit: 10001, filter: {datetime_geq: "2026-11-26T00:00:00Z"}'), undefined, 'firewallEventsAdaptiveGroups: limit must be from 1 to 10000, got 10001'],
    ['no start time', dataset('limit: 1, filter: {action: "block"}'), undefined, 'the filter needs a start time: datetime_geq (and datetime_leq, default now), e.g. {datetime_geq: "2026-11-26T00:00:00Z"}'],
    ['a time that is not RFC 3339', dataset('limit: 1, filter: {datetime_geq: "yesterday"}'), undefined, 'filter.datetime_geq: "yesterday" is not a time; write RFC 3339, e.g. 2026-11-26T03:00:00Z'],
    ['a date that does not exist', dataset('limit: 1, filter: {datetime_geq: "2026-02-30T12:00:00Z"}'), undefined, 'filter.datetime_geq: "2026-02-30T12:00:00Z" is not a time; write RFC 3339, e.g. 2026-11-26T03:00:00Z'],
    ['an hour that does not exist', dataset('limit: 1, filter: {datetime_geq: "2026-11-26T24:00:00Z"}'), undefined, 'filter.datetime_geq: "2026-11-26T24:00:00Z" is not a time; write RFC 3339, e.g. 2026-11-26T03:00:00Z'],
    [
      'an order by a dimension not selected',
      dataset('limit: 5, filter: {datetime_geq: "2026-11-26T00:00:00Z"}, orderBy: [datetimeHour_ASC]', 'count dimensions { action }'),
      undefined,
      'orderBy: datetimeHour_ASC orders by a dimension the query does not select; add datetimeHour to dimensions, or order by count or a selected dimension',
    ],
    ['a range over the maximum', dataset('limit: 1, filter: {datetime_geq: "2026-10-01T00:00:00Z", datetime_leq: "2026-11-26T00:00:00Z"}'), undefined, 'the time range 2026-10-01T00:00:00Z to 2026-11-26T00:00:00Z is longer than the maximum of 31 days; narrow datetime_geq/datetime_leq'],
    ['too deep', `{ viewer { ${'a { '.repeat(15)}b${' }'.repeat(15)} } }`, undefined, 'the query is nested more than 15 levels deep; the limit is 15'],
    ['too many datasets', () => `{ viewer { zones(filter: {zoneTag: "${ENT}"}) { ${Array.from({ length: 11 }, (_, i) => `a${i}: firewallEventsAdaptiveGroups(limit: 1, filter: {datetime_geq: "2026-11-26T00:00:00Z"}) { count }`).join(' ')} } } }`, undefined, 'firewallEventsAdaptiveGroups: more than 10 datasets in one query (over all zones and aliases); split the query'],
    [
      'a zone filter that names no zone',
      '{ viewer { zones(filter: {}) { zoneTag } } }',
      undefined,
      'zones: the filter names no zone; write zones(filter: {zoneTag: "<zone id>"}) (or zoneTag_in: ["<zone id>", …], or zoneTag_gt: "<zone id>" for the zones after it), or leave the filter out for every zone these credentials may read',
    ],
    ['a variable of the wrong type', () => `query Q($n: Int!) { viewer { zones(filter: {zoneTag: "${ENT}"}) { firewallEventsAdaptive(limit: $n, filter: {datetime_geq: "2026-11-26T00:00:00Z"}) { action } } } }`, { n: 'x' }, 'Variable "$n" got invalid value "x"; Int cannot represent non-integer value: "x"'],
  ];
  for (const [name, query, variables, message] of cases) {
    test(name, async () => {
      const { status, body } = await gql(typeof query === 'function' ? query() : query, variables);
      assert.equal(status, 200);
      assert.equal(body.errors?.[0]?.message, message, JSON.stringify(body));
    });
  }

  test('a body without a query is a 400 request error; a body that is not JSON is the API error', async () => {
    const noQuery = await svc.call('POST', '/graphql', { body: { variables: {} } });
    assert.deepEqual(noQuery, { ...noQuery, status: 400, body: { errors: [{ message: 'the request needs "query": a GraphQL document as a string (and optionally "variables": an object)', extensions: { code: 'BAD_REQUEST' } }] } });
    const notJson = await svc.call('POST', '/graphql', { rawBody: '{"query": ' });
    assert.equal(notJson.status, 400);
  });
});
