// Times are shown to the second, so filters compare whole seconds: an event at 00:10:00.500
// is shown as 00:10:00Z and matches `datetime`, `datetime_leq` and `datetime_geq` of that
// second, not `datetime_lt` of it nor `datetime_gt`.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { demoZoneId } from '../../../server/src/service/seed';
import { startService, type TestService } from '../harness';
import { CATALOG, evaluated } from './fixture';

const ENT = demoZoneId('enterprise.example.com');
const T0 = Date.UTC(2026, 10, 26, 0, 10, 0);
let svc: TestService;

before(async () => {
  svc = await startService({ events: { catalog: CATALOG, now: () => T0 + 3_600_000 } });
  svc.events!.record(evaluated(ENT, { time: T0 + 500, path: '/admin', ray: 'ray-half-second' }));
  await svc.events!.flush();
});
after(() => svc.close());

async function rays(filter: string): Promise<unknown> {
  const query = `{ viewer { zones(filter: {zoneTag: "${ENT}"}) { firewallEventsAdaptive(limit: 10, filter: {${filter}}) { rayName datetime } } } }`;
  const res = await fetch(`${svc.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${svc.adminToken}` }, body: JSON.stringify({ query }) });
  const body = (await res.json()) as { data: { viewer: { zones: { firewallEventsAdaptive: { rayName: string; datetime: string }[] }[] } } };
  return body.data.viewer.zones[0]!.firewallEventsAdaptive.map((e) => `${e.rayName} ${e.datetime}`);
}

test('an event matches the second it is shown with', async () => {
  const shown = ['ray-half-second 2026-11-26T00:10:00Z'];
  const second = '"2026-11-26T00:10:00Z"';
  assert.deepEqual(
    [
      await rays(`datetime: ${second}`),
      await rays(`datetime_geq: ${second}, datetime_leq: ${second}`),
      await rays(`datetime_geq: "2026-11-26T00:00:00Z", datetime_lt: ${second}`),
      await rays(`datetime_gt: ${second}`),
      await rays(`datetime_geq: "2026-11-26T00:00:00Z", datetime_lt: "2026-11-26T00:10:01Z"`),
    ],
    [shown, shown, [], [], shown],
  );
});
