// A read waits only for the writes it may have read (store.ts durable(scope)): while zone
// B's write waits for its fsync, a GET of zone A is answered, and a GET of zone B is not
// (it could show a write that a power cut would take back).
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { DEMO_ACCOUNT, demoZoneId } from '../../server/src/service/seed';
import { startService, type TestService } from './harness';

let svc: TestService;
before(async () => {
  svc = await startService();
});
after(() => svc.close());

const ZONE_A = demoZoneId('enterprise.example.com');
const ZONE_B = demoZoneId('business.example.com');
const ep = (zone: string) => `/zones/${zone}/rulesets/phases/http_request_firewall_custom/entrypoint`;

/** Holds the log's fsync (every answer that must wait for it waits) until the returned function is called. */
function holdSyncs(): () => void {
  const store = svc.store as unknown as { syncLog(): void };
  const real = store.syncLog;
  store.syncLog = () => {};
  return () => {
    store.syncLog = real;
    store.syncLog();
  };
}

/** Whether `p` settles within `ms` (resolves as soon as it does). */
const settledWithin = <T>(p: Promise<T>, ms: number): Promise<boolean> =>
  new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    const done = () => {
      clearTimeout(timer);
      resolve(true);
    };
    p.then(done, done);
  });

it("answers a GET of zone A while zone B's write waits for the disk, and holds zone B's reader and the writer", async () => {
  const release = holdSyncs();
  try {
    const put = svc.call('PUT', ep(ZONE_B), { body: { rules: [{ expression: 'http.request.uri.path eq "/b"', action: 'block', ref: 'b' }] } });
    assert.equal(await settledWithin(put, 300), false, "the writer's answer waits for its fsync");
    const getA = svc.call('GET', `/zones/${ZONE_A}/rulesets`);
    assert.equal(await settledWithin(getA, 2000), true, 'zone A is answered at once');
    assert.equal((await getA).status, 200);
    const listAccount = svc.call('GET', `/accounts/${DEMO_ACCOUNT.id}/rulesets`);
    assert.equal(await settledWithin(listAccount, 2000), true, "the account's rulesets are another scope too");
    const events = svc.call('POST', '/graphql', { body: { query: `{ viewer { zones(filter: {zoneTag: "${ZONE_A}"}) { zoneTag } } }` } });
    assert.equal(await settledWithin(events, 2000), true, 'and so is a GraphQL read of the events');
    assert.deepEqual((await events).body, { data: { viewer: { zones: [{ zoneTag: ZONE_A }] } } });
    const getB = svc.call('GET', ep(ZONE_B));
    assert.equal(await settledWithin(getB, 300), false, "zone B's reader waits: it read the write");
    release();
    assert.equal((await put).status, 200);
    const b = await getB;
    assert.equal(b.status, 200);
    assert.deepEqual(b.body.result.rules.map((r: { ref: string }) => r.ref), ['b']);
  } finally {
    release();
  }
});

it('holds every reader behind a write that names no scope (a token, a zone setting)', async () => {
  const release = holdSyncs();
  try {
    const write = svc.call('PATCH', `/zones/${ZONE_B}/settings/request_body_inspection_limit`, { body: { value: 262144 } });
    assert.equal(await settledWithin(write, 300), false);
    const getA = svc.call('GET', `/zones/${ZONE_A}/rulesets`);
    assert.equal(await settledWithin(getA, 300), false, 'zone A may have been changed by it');
    release();
    assert.equal((await write).status, 200);
    assert.equal((await getA).status, 200);
  } finally {
    release();
  }
});

it("scopes the legacy filters and firewall rules the same way: zone A's lists answer while zone B's filter write waits", async () => {
  const release = holdSyncs();
  try {
    const write = svc.call('POST', `/zones/${ZONE_B}/filters`, { body: [{ expression: 'http.request.uri.path eq "/legacy-b"' }] });
    assert.equal(await settledWithin(write, 300), false, "the writer's answer waits for its fsync");
    for (const path of [`/zones/${ZONE_A}/filters`, `/zones/${ZONE_A}/firewall/rules`]) {
      const get = svc.call('GET', path);
      assert.equal(await settledWithin(get, 2000), true, `${path} is answered at once`);
      assert.equal((await get).status, 200);
    }
    const getB = svc.call('GET', `/zones/${ZONE_B}/filters`);
    assert.equal(await settledWithin(getB, 300), false, "zone B's filters wait: they include the write");
    release();
    assert.equal((await write).status, 200);
    const b = await getB;
    assert.ok(b.body.result.some((f: { expression: string }) => f.expression === 'http.request.uri.path eq "/legacy-b"'));
  } finally {
    release();
  }
});
