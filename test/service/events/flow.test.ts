// The whole loop on the real service, without the editor: a request evaluated against a
// zone's deployed rules is recorded by the sink; the GraphQL API returns its event; the
// editor's "Add exception" edit (client/src/events/exception.ts) of the zone's entry point
// is deployed through the Rulesets API; the same request, traced again (the editor's
// "Open"), now passes — and the re-evaluation says so.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { planException } from '../../../client/src/events/exception';
import { EVENTS_QUERY, graphqlFilter, type SecurityEvent } from '../../../client/src/events/queries';
import { differenceNow, traceRequestOf } from '../../../client/src/events/reEvaluate';
import { requestValues } from '../../../server/src/requests/fields';
import { entryPointBody } from '../../../server/src/rulesets/diff';
import { compileZone } from '../../../server/src/rulesets/engine';
import type { Ruleset } from '../../../server/src/rulesets/model';
import { zoneConfigOf } from '../../../server/src/service/deployment';
import { DEMO_ACCOUNT, demoZoneId } from '../../../server/src/service/seed';
import { zoneSource } from '../../../server/src/service/zoneConfig';
import { startService, type TestService } from '../harness';

const ZONE = demoZoneId('migrated.example.com');
let svc: TestService;
before(async () => (svc = await startService({ events: {} })));
after(() => svc.close());

test('event → GraphQL → Add exception deployed → the same request passes', async () => {
  const put = await svc.call('PUT', `/zones/${ZONE}/rulesets/phases/http_request_firewall_custom/entrypoint`, {
    body: { rules: [{ ref: 'block-admin', description: 'no admin', action: 'block', expression: 'http.request.uri.path eq "/admin"' }] },
  });
  assert.equal(put.status, 200, JSON.stringify(put.body));

  // The proxy's part: evaluate against what the zone runs, hand the result to the sink.
  const deployed = zoneConfigOf(zoneSource(svc.store, ZONE));
  const sample = { method: 'GET', url: 'https://migrated.example.com/admin', httpVersion: 'HTTP/1.1', headers: [['User-Agent', 'curl/8.5']] as [string, string][], meta: { 'ip.src': '203.0.113.7' } };
  const evaluation = compileZone(deployed.config, deployed.previousWaf ? { previousWaf: deployed.previousWaf } : {}).evaluate(requestValues(sample).values);
  assert.equal(evaluation.decision.action, 'block');
  const sink = svc.events!;
  sink.record({
    rayId: '7a5e000000000001', time: Date.now(), zoneId: ZONE, zoneName: 'migrated.example.com', clientIp: '203.0.113.7', method: 'GET', host: 'migrated.example.com',
    path: '/admin', query: '', userAgent: 'curl/8.5', httpVersion: 'HTTP/1.1', responseStatus: 403, evaluation, defaultedFields: ['ip.src.country'], bodyTruncated: false,
  });
  await sink.flush();

  // The editor's part: the view's query, the exception, the deploy, the re-evaluation.
  const res = await fetch(`${svc.url}/graphql`, {
    method: 'POST',
    headers: { authorization: `Bearer ${svc.adminToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ query: EVENTS_QUERY, variables: { zoneTag: ZONE, filter: graphqlFilter({ sinceMinutes: 5 }, Date.now()), limit: 10 } }),
  });
  const events = ((await res.json()) as { data: { viewer: { zones: { firewallEventsAdaptive: SecurityEvent[] }[] } } }).data.viewer.zones[0]!.firewallEventsAdaptive;
  assert.deepEqual(events.map((e) => [e.rayName, e.action, e.ref, e.clientRequestPath, e.source]), [['7a5e000000000001', 'block', 'block-admin', '/admin', 'firewallCustom']]);
  const event = events[0]!;

  const plan = planException(event, 'skip');
  const current = (await svc.call('GET', `/zones/${ZONE}/rulesets/phases/${plan.phase}/entrypoint`)).body.result;
  // What the editor's deploy sends: the pulled file with the exception, as an entry point body.
  const edited = JSON.parse(plan.apply(`${JSON.stringify(current, null, 2)}\n`)) as Ruleset;
  const deploy = await svc.call('PUT', `/zones/${ZONE}/rulesets/phases/${plan.phase}/entrypoint`, { body: entryPointBody(edited) });
  assert.equal(deploy.status, 200, JSON.stringify(deploy.body));
  assert.deepEqual(deploy.body.result.rules.map((r: { action: string; ref: string }) => [r.action, r.ref]), [['skip', 'exception-' + event.ruleId.slice(0, 8) + '-7a5e0000'], ['block', 'block-admin']]);

  const again = await svc.call('POST', `/accounts/${DEMO_ACCOUNT.id}/request-tracer/trace`, { body: traceRequestOf(event) });
  assert.equal(again.status, 200, JSON.stringify(again.body));
  assert.equal(again.body.result.decision.action, 'allow-through');
  assert.equal(differenceNow(event, again.body.result), `The request now passes: no rule acts on it (the event recorded block by ${event.ruleId}).`);
});
