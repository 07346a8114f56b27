// The staged PUT (docs/service.md "Session 25: staged writes") where it meets the rest of the
// service: the write allowance of a refused write, and batches lost while it stages.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { RulesetWriteLimiter } from '../../server/src/service/rateLimit';
import { DEMO_ACCOUNT } from '../../server/src/service/seed';
import { startService, type TestService } from './harness';
import { duringTurns, rule } from './putTurns';

const CUSTOM = 'http_request_firewall_custom';

let svc: TestService;
before(async () => {
  svc = await startService();
});
after(async () => {
  await svc.close();
});

/** Makes the store's next COMMIT fail as a full disk does (the batch is rolled back whole, the store stays open). */
function failNextCommit(): void {
  const db = (svc.store as unknown as { db: { exec(sql: string): void } }).db;
  const own = db.exec;
  db.exec = function (this: unknown, sql: string) {
    if (sql === 'COMMIT') {
      db.exec = own;
      throw new Error('SQLITE_FULL: database or disk is full');
    }
    return own.call(this, sql);
  } as typeof own;
}

/** Lets a staging slice run to the end of the staging (the 1 ms budget never runs out), so the test does not depend on the machine's speed. */
function unboundedSlices(): () => void {
  const own = performance.now;
  performance.now = () => 0;
  return () => {
    performance.now = own;
  };
}

describe('a staged PUT and the rest of the service', () => {
  it('a write refused 429 because its ruleset is staging uses none of the ruleset\'s write allowance (as a 404, a 403 or a 10030 does not)', async () => {
    const service = svc.running.service as { writeLimiter: RulesetWriteLimiter | undefined };
    const made = await svc.call('POST', `/accounts/${DEMO_ACCOUNT.id}/rulesets`, { body: { name: 'limited', kind: 'custom', phase: CUSTOM, rules: Array.from({ length: 80 }, (_, i) => rule(i)) } });
    assert.equal(made.status, 200, JSON.stringify(made.body));
    const base = `/accounts/${DEMO_ACCOUNT.id}/rulesets/${made.body.result.id}`;
    const ids: string[] = made.body.result.rules.map((r: { id: string }) => r.id);
    // Two writes of the ruleset at once, never refilled (the clock stands still).
    service.writeLimiter = new RulesetWriteLimiter(2, () => 0);
    let during: { status: number; code: number; message: string; ratelimit: string | null } | undefined;
    const put = await duringTurns(svc, async (call) => {
      if (call !== 2 || during) return;
      const r = await svc.call('PATCH', `${base}/rules/${ids[3]}`, { body: rule(3, 9) });
      during = { status: r.status, code: r.body.errors?.[0]?.code, message: r.body.messages?.[0]?.message, ratelimit: r.headers.get('ratelimit') };
    }, () => svc.call('PUT', base, { body: { rules: Array.from({ length: 80 }, (_, i) => ({ ...rule(i, 1), id: ids[i] })) } }));
    try {
      assert.equal(put.status, 200, JSON.stringify(put.body));
      assert.ok(during, 'a PATCH ran while the PUT staged');
      assert.equal(during.status, 429);
      assert.match(during.message, /is being updated by another request/);
      // The PUT used one write of two; the PATCH refused for the staging wrote nothing.
      const next = await svc.call('PATCH', `${base}/rules/${ids[3]}`, { body: rule(3, 9) });
      assert.deepEqual([next.status, next.body.errors], [200, []], `the refused PATCH was charged: its 429 said ${during.ratelimit}`);
    } finally {
      service.writeLimiter = undefined;
    }
  });

  it('a PUT retried after its header\'s batch was lost, whose first slice\'s batch is lost too, is refused, not stored with the first PUT\'s rows; sent again it is stored as answered', async () => {
    const made = await svc.call('POST', `/accounts/${DEMO_ACCOUNT.id}/rulesets`, { body: { name: 'lost twice', kind: 'custom', phase: CUSTOM, rules: [rule(1000)] } });
    assert.equal(made.status, 200, JSON.stringify(made.body));
    const base = `/accounts/${DEMO_ACCOUNT.id}/rulesets/${made.body.result.id}`;
    // The kept rule plus 64 new ones (refs, no ids: each PUT gives them new ids): 64 rows added, none closed.
    const body = { rules: [{ ...rule(1000), id: made.body.result.rules[0].id }, ...Array.from({ length: 64 }, (_, i) => rule(i))] };
    const unbounded = unboundedSlices();
    let first;
    let second;
    try {
      // 1. The disk is full when the header's batch commits: the staged rows stay, with no header.
      first = await duringTurns(svc, (call) => {
        if (call === 2) failNextCommit();
      }, () => svc.call('PUT', base, { body }));
      // 2. The client sends the PUT again; the disk is still full when its first slice's batch commits.
      second = await duringTurns(svc, (call) => {
        if (call === 1) failNextCommit();
      }, () => svc.call('PUT', base, { body }));
    } finally {
      unbounded();
    }
    assert.notEqual(first.status, 200, 'the first PUT is not acknowledged');
    // The second lost a batch while it staged: refused, whatever its rows' count says, and the ruleset is as it was.
    assert.deepEqual([second.status, second.body.errors?.[0]?.code], [500, 10001]);
    svc.store.rollbackHooks.forEach((h) => h());
    assert.deepEqual((await svc.call('GET', base)).body.result, made.body.result);
    // Sent once more with the disk back: stored as answered, and the next write builds on it.
    const third = await svc.call('PUT', base, { body });
    assert.equal(third.status, 200, JSON.stringify(third.body));
    svc.store.rollbackHooks.forEach((h) => h());
    assert.deepEqual((await svc.call('GET', base)).body.result, third.body.result);
    const patch = await svc.call('PATCH', `${base}/rules/${third.body.result.rules[1].id}`, { body: rule(0, 7) });
    assert.equal(patch.status, 200, JSON.stringify(patch.body));
  });

  it('checked: a staging slice\'s batch lost (no leftovers) refuses the PUT, leaves the ruleset as it was, and the next PUT is stored as answered', async () => {
    const made = await svc.call('POST', `/accounts/${DEMO_ACCOUNT.id}/rulesets`, { body: { name: 'lost slice', kind: 'custom', phase: CUSTOM, rules: Array.from({ length: 100 }, (_, i) => rule(i)) } });
    const base = `/accounts/${DEMO_ACCOUNT.id}/rulesets/${made.body.result.id}`;
    const body = { rules: Array.from({ length: 100 }, (_, i) => rule(i, 1)) };
    const unbounded = unboundedSlices();
    let put;
    try {
      // Slice 1 does everything (unbounded); its batch is lost.
      put = await duringTurns(svc, (call) => {
        if (call === 1) failNextCommit();
      }, () => svc.call('PUT', base, { body }));
    } finally {
      unbounded();
    }
    assert.notEqual(put.status, 200);
    svc.store.rollbackHooks.forEach((h) => h());
    assert.deepEqual((await svc.call('GET', base)).body.result, made.body.result);
    const again = await svc.call('PUT', base, { body });
    assert.equal(again.status, 200, JSON.stringify(again.body));
    svc.store.rollbackHooks.forEach((h) => h());
    assert.deepEqual((await svc.call('GET', base)).body.result, again.body.result);
    const n = svc.store.get<{ n: number }>('SELECT COUNT(*) AS n FROM ruleset_rules WHERE ruleset_id = ?', [made.body.result.id])!.n;
    assert.equal(n, 200);
  });
});
