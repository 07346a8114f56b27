// The Security Events view's logic without VS Code: "Save as sample request" (.http text
// that the .http parser reads back with the event's metadata), "Add exception" (the
// entry-point edit for each kind of event; the edited zone validates and lets the same
// request through the engine), and the view's filter.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { chartHtml, seriesOf } from '../../../client/src/events/chart';
import { appendSample, eventAsHttp } from '../../../client/src/events/httpSample';
import { differenceNow, traceRequestOf } from '../../../client/src/events/reEvaluate';
import type { TraceResult } from '../../../server/src/rulesApi';
import { ExceptionError, planException } from '../../../client/src/events/exception';
import { DEFAULT_FILTER, describeFilter, graphqlFilter, parseWindow, type SecurityEvent } from '../../../client/src/events/queries';
import { parseHttpFile } from '../../../server/src/requests/http';
import { compileZone } from '../../../server/src/rulesets/engine';
import type { Ruleset } from '../../../server/src/rulesets/model';
import { validateRulesetJson } from '../../../server/src/rulesets/validate';
import { eventsOf } from '../../../server/src/service/events/fromEvaluation';
import { prepareFields } from '../../../server/src/language/index';
import { ANOMALY_RULE, BLOCK_ADMIN, CATALOG, CUSTOM_EP, evaluated, LOG_CURL, SCORED, ZONE, type Req } from '../../service/events/fixture';

const ZONE_ID = 'f'.repeat(32);

/** The event of `ruleId` for the request, as the view reads it from GraphQL. */
function eventFor(r: Req, ruleId: string): SecurityEvent {
  const e = eventsOf(evaluated(ZONE_ID, r)).find((x) => x.ruleId === ruleId);
  assert.ok(e, `no event of ${ruleId}`);
  return {
    rayName: e.rayId, datetime: new Date(e.time).toISOString().replace(/\.\d{3}Z$/, 'Z'), action: e.action, source: e.source, rulesetId: e.rulesetId, ruleId: e.ruleId,
    ref: e.ref, description: e.description, clientIP: e.clientIp, clientCountryName: e.country, clientAsn: String(e.asn), clientRequestHTTPMethodName: e.method,
    clientRequestHTTPHost: e.host, clientRequestHTTPProtocol: e.httpVersion, clientRequestPath: e.path, clientRequestQuery: e.query, userAgent: e.userAgent,
    edgeResponseStatus: e.responseStatus, outcome: e.outcome, ruleAction: e.ruleAction, anomalyScore: e.anomalyScore, origin: e.origin,
  };
}

describe('Save as sample request', () => {
  const event = eventFor({ path: '/admin', query: 'a=1&b="x"', ua: 'curl/8.5', ray: '00c0ffee00c0ffee' }, BLOCK_ADMIN);

  test('the block names the event, its metadata sets the edge fields, and the .http parser reads it back', () => {
    assert.equal(
      eventAsHttp(event),
      [
        '### block by no admin (ray 00c0ffee00c0ffee)',
        `# security event 00c0ffee00c0ffee at 2026-11-26T03:00:00Z: block (firewallCustom) by rule ${BLOCK_ADMIN} of ruleset ${CUSTOM_EP}, response 403`,
        '# @ip.src 203.0.113.7',
        '# @ip.src.country NL',
        '# @ip.src.asnum 64500',
        'GET https://enterprise.example.com/admin?a=1&b="x" HTTP/1.1',
        'User-Agent: curl/8.5',
        '',
      ].join('\n'),
    );
  });

  test('appending keeps what the file had, separated by a blank line', () => {
    const existing = '### first\nGET https://example.com/ HTTP/1.1';
    const text = appendSample(existing, event);
    assert.ok(text.startsWith(`${existing}\n\n### block by no admin`));
    const { requests, problems } = parseHttpFile(text);
    assert.deepEqual(problems, []);
    assert.deepEqual(
      requests.map((r) => [r.name, r.method, r.url, r.headers, r.meta]),
      [
        ['first', 'GET', 'https://example.com/', [], {}],
        ['block by no admin (ray 00c0ffee00c0ffee)', 'GET', 'https://enterprise.example.com/admin?a=1&b="x"', [['User-Agent', 'curl/8.5']], { 'ip.src': '203.0.113.7', 'ip.src.country': 'NL', 'ip.src.asnum': '64500' }],
      ],
    );
    assert.equal(appendSample('', event), eventAsHttp(event));
  });
});

describe('Add exception', () => {
  const json = (rs: Ruleset) => `${JSON.stringify(rs, null, 2)}\n`;
  const custom = ZONE.entryPoints.http_request_firewall_custom!;
  const managed = ZONE.entryPoints.http_request_firewall_managed!;

  /** The decision for the request on ZONE with the edited entry points. */
  function decide(r: Req, eps: Partial<Record<'http_request_firewall_custom' | 'http_request_firewall_managed', Ruleset>>): string {
    const zone = compileZone({ ...ZONE, entryPoints: { ...ZONE.entryPoints, ...eps } });
    assert.deepEqual(zone.problems.filter((p) => p.severity === 'error'), []);
    const { values } = prepareFields({ 'http.host': 'enterprise.example.com', 'http.request.uri.path': r.path ?? '/', 'http.request.uri.query': r.query ?? '', 'http.user_agent': r.ua ?? 'Mozilla/5.0', 'ip.src': '203.0.113.7' });
    return zone.evaluate(values).decision.action;
  }

  function edited(text: string, phase: 'http_request_firewall_custom' | 'http_request_firewall_managed'): Ruleset {
    const problems = validateRulesetJson(text, { catalog: CATALOG, plan: 'enterprise', phase }).filter((p) => p.severity === 'error');
    assert.deepEqual(problems, []);
    return JSON.parse(text) as Ruleset;
  }

  test('a custom rule: a skip of the rest of the entry point, just before the rule, for this host and path', () => {
    const request = { path: '/admin', ray: 'abcdef0123456789' };
    const plan = planException(eventFor(request, BLOCK_ADMIN), 'skip');
    assert.equal(plan.phase, 'http_request_firewall_custom');
    assert.equal(plan.summary, `skips custom rule “no admin” (${BLOCK_ADMIN}) for enterprise.example.com/admin`);
    const rs = edited(plan.apply(json(custom)), 'http_request_firewall_custom');
    assert.deepEqual(rs.rules![3], {
      ref: `exception-b1b1b1b1-abcdef01`,
      description: 'Exception from security event abcdef0123456789: skip the rules from block-admin on for enterprise.example.com/admin',
      expression: '(http.host eq "enterprise.example.com" and http.request.uri.path eq "/admin")',
      action: 'skip',
      action_parameters: { ruleset: 'current' },
      logging: { enabled: true },
      enabled: true,
    });
    assert.deepEqual(rs.rules!.map((r) => r.ref), ['skip-health', 'skip-quiet', 'log-curl', 'exception-b1b1b1b1-abcdef01', 'block-admin']);
    assert.equal(decide(request, {}), 'block');
    assert.equal(decide(request, { http_request_firewall_custom: rs }), 'allow-through');
  });

  test('a managed rule, skip: a skip rule of that rule at the top of the custom entry point; the request then passes', () => {
    const request = { query: 'q=union<script', path: '/search' };
    const plan = planException(eventFor(request, ANOMALY_RULE), 'skip');
    const rs = edited(plan.apply(json(custom)), 'http_request_firewall_custom');
    assert.deepEqual([rs.rules![0]!.action, rs.rules![0]!.action_parameters, rs.rules![0]!.expression], ['skip', { rules: { [SCORED]: [ANOMALY_RULE] } }, '(http.host eq "enterprise.example.com" and http.request.uri.path eq "/search")']);
    assert.equal(decide(request, {}), 'block');
    assert.equal(decide(request, { http_request_firewall_custom: rs }), 'allow-through');
    assert.equal(decide({ ...request, path: '/other' }, { http_request_firewall_custom: rs }), 'block', 'another path is still blocked');
  });

  test('a managed rule, disable: a rule override in the execute rule, added or updated', () => {
    const request = { query: 'q=union<script' };
    const plan = planException(eventFor(request, ANOMALY_RULE), 'disable');
    assert.equal(plan.phase, 'http_request_firewall_managed');
    const rs = edited(plan.apply(json(managed)), 'http_request_firewall_managed');
    assert.deepEqual(rs.rules![0]!.action_parameters, { id: SCORED, overrides: { rules: [{ id: ANOMALY_RULE, enabled: false }] } });
    assert.equal(decide(request, { http_request_firewall_managed: rs }), 'allow-through');
    // Disabling the deciding rule switches the scored ruleset off, and the engine says so.
    assert.deepEqual(
      compileZone({ ...ZONE, entryPoints: { ...ZONE.entryPoints, http_request_firewall_managed: rs } }).problems.map((p) => p.message),
      [`the anomaly-score rule ${ANOMALY_RULE} is disabled by the overrides: the ruleset adds up scores and never acts; enable it with a rule override {"id": "${ANOMALY_RULE}", "enabled": true}`],
    );
    const withOverride: Ruleset = { ...managed, rules: [{ ...managed.rules![0]!, action_parameters: { id: SCORED, overrides: { rules: [{ id: ANOMALY_RULE, action: 'log' }] } } }] };
    assert.deepEqual(edited(plan.apply(json(withOverride)), 'http_request_firewall_managed').rules![0]!.action_parameters, { id: SCORED, overrides: { rules: [{ id: ANOMALY_RULE, action: 'log', enabled: false }] } });
  });

  test('an entry point without rules gets them; legacy firewall rules cannot take an exception', () => {
    const plan = planException(eventFor({ path: '/admin' }, BLOCK_ADMIN), 'skip');
    assert.deepEqual((JSON.parse(plan.apply('{"name": "default", "kind": "zone", "phase": "http_request_firewall_custom"}')) as Ruleset).rules![0]!.action_parameters, { rulesets: [CUSTOM_EP] });
    const legacy = { ...eventFor({ path: '/admin' }, BLOCK_ADMIN), source: 'firewallRules' };
    assert.throws(() => planException(legacy, 'skip'), new ExceptionError(`the event comes from a legacy firewall rule (${BLOCK_ADMIN}): add the exception to that rule's filter in the Firewall Rules view, or migrate the rules first`));
  });
});

describe('the view filter', () => {
  test('controls → GraphQL filter; windows; description', () => {
    const now = Date.UTC(2026, 10, 26, 3, 0, 0);
    assert.deepEqual(graphqlFilter({ sinceMinutes: 30, action: 'block', path: '/admin%', ip: '203.0.113.7' }, now), {
      datetime_geq: '2026-11-26T02:30:00Z', action: 'block', clientIP: '203.0.113.7', clientRequestPath_like: '/admin%',
    });
    assert.deepEqual(graphqlFilter({ sinceMinutes: 60, path: '/admin' }, now, { ruleId: 'r' }), { datetime_geq: '2026-11-26T02:00:00Z', ruleId: 'r', clientRequestPath: '/admin' });
    assert.deepEqual([parseWindow('90m'), parseWindow('2h'), parseWindow('7d'), parseWindow('40d'), parseWindow('soon')], [90, 120, 10080, undefined, undefined]);
    assert.equal(describeFilter({ sinceMinutes: 1440, origin: 'proxy', action: 'log', ip: '198.51.100.4' }), 'last 1 d · log · 198.51.100.4');
  });

  test('live traffic by default; traces, or both, when chosen', () => {
    const now = Date.UTC(2026, 10, 26, 3, 0, 0);
    assert.deepEqual(graphqlFilter(DEFAULT_FILTER, now), { datetime_geq: '2026-11-26T02:00:00Z', origin: 'proxy' });
    assert.deepEqual(graphqlFilter({ sinceMinutes: 60, origin: 'trace' }, now), { datetime_geq: '2026-11-26T02:00:00Z', origin: 'trace' });
    assert.deepEqual(graphqlFilter({ sinceMinutes: 60 }, now), { datetime_geq: '2026-11-26T02:00:00Z' });
    assert.deepEqual(
      [describeFilter(DEFAULT_FILTER), describeFilter({ sinceMinutes: 60, origin: 'trace' }), describeFilter({ sinceMinutes: 60 })],
      ['last 1 h', 'last 1 h · traces', 'last 1 h · live and traces'],
    );
  });
});

describe('the chart and the re-evaluation', () => {
  test('groups become one series per action over the sorted buckets; the SVG has a line per action', () => {
    const groups = [
      { count: 2, dimensions: { datetimeMinute: '2026-11-26T03:01:00Z', action: 'block' } },
      { count: 1, dimensions: { datetimeMinute: '2026-11-26T03:00:00Z', action: 'log' } },
      { count: 4, dimensions: { datetimeMinute: '2026-11-26T03:00:00Z', action: 'block' } },
    ];
    const { buckets, series } = seriesOf(groups, 'datetimeMinute');
    assert.deepEqual(buckets, ['2026-11-26T03:00:00Z', '2026-11-26T03:01:00Z']);
    assert.deepEqual(series, [{ action: 'block', counts: [4, 2] }, { action: 'log', counts: [1, 0] }]);
    const html = chartHtml('Events <zone>', buckets, series);
    assert.equal(html.match(/<polyline /g)?.length, 2);
    assert.ok(html.includes('■ block (6)') && html.includes('■ log (1)') && html.includes('Events &lt;zone&gt;'));
    assert.ok(chartHtml('x', [], []).includes('<p>No events in this window.</p>'));
  });

  test("a challenge solved with the interstitial's button is drawn in the solved colour, as one taken as solved", () => {
    const legend = (action: string) => /<text [^>]*fill="(#[0-9a-f]{6})">■ /.exec(chartHtml('x', ['t'], [{ action, counts: [1] }]))?.[1];
    assert.deepEqual(['managed_challenge_interactive_solved', 'managed_challenge_non_interactive_solved', 'challenge_solved', 'unknown_action'].map(legend), ['#8ddb8c', '#8ddb8c', '#8ddb8c', '#adbac7']);
  });

  test('the Trace request of an event, and what differs when the zone no longer acts the same', () => {
    const e = eventFor({ path: '/admin', query: 'a=1', ua: 'curl/8.5' }, BLOCK_ADMIN);
    assert.deepEqual(traceRequestOf(e), { url: 'https://enterprise.example.com/admin?a=1', method: 'GET', protocol: 'HTTP/1.1', headers: { 'User-Agent': 'curl/8.5' }, context: { ip: '203.0.113.7', country: 'NL' } });
    const result = (action: string, rule_id?: string): TraceResult => ({ trace: [], decision: { action, ...(rule_id ? { rule_id } : {}) } });
    assert.equal(differenceNow(e, result('block', BLOCK_ADMIN)), undefined);
    assert.equal(differenceNow(e, result('allow-through')), `The request now passes: no rule acts on it (the event recorded block by ${BLOCK_ADMIN}).`);
    assert.equal(differenceNow(e, result('managed_challenge', 'x')), `The request is now managed_challenge by x (the event recorded block by ${BLOCK_ADMIN}).`);
    const log = eventFor({ path: '/admin', ua: 'curl/8.5' }, LOG_CURL);
    const withRule = (matched: boolean): TraceResult => ({ trace: [{ step_name: 'custom', type: 'phase', matched: true, trace: [{ step_name: LOG_CURL, type: 'rule', matched, outcome: matched ? 'logged' : 'not-matched' }] }], decision: { action: 'allow-through' } });
    assert.equal(differenceNow(log, withRule(true)), undefined);
    assert.equal(differenceNow(log, withRule(false)), `Rule ${LOG_CURL} no longer logs this request (now: not-matched); the decision is allow-through.`);
    // A managed challenge the proxy answered with the block page (--challenge block): the Trace's managed_challenge is the same decision.
    const blocked = { ...e, action: 'block', ruleAction: 'managed_challenge' };
    assert.equal(differenceNow(blocked, result('managed_challenge', BLOCK_ADMIN)), undefined);
    assert.equal(differenceNow(blocked, result('block', BLOCK_ADMIN)), `The request is now block by ${BLOCK_ADMIN} (the event recorded block (its managed_challenge answered with the block page) by ${BLOCK_ADMIN}).`);
  });
});
