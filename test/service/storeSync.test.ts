// Group commit with the log's fsync off the event loop (store.ts): a write is committed at
// the end of its turn, but durable() — what the service awaits before answering — waits
// for an fsync of the log that started after that commit; writes of the turns that ran
// during one fsync share the next one; a log that cannot be synced fails its writes and
// every later one (a failed fsync may have lost frames of the log), and from then on every
// read too (the refused writes are still in SQLite, so a read could see them); a close
// while a sync runs leaves the log's descriptor to that sync to close.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { demoZoneId } from '../../server/src/service/seed';
import { Store, StoreUnavailable } from '../../server/src/service/store';
import { startService } from './harness';
import { turn, withHeldSync, withStore } from './storeHarness';

/** Every test here runs with group commit on, as the service does. */
const withGroupedStore = (fn: (store: Store, dir: string) => Promise<void>) => withStore(fn, { groupCommit: true });

test(
  'a commit does not wait for the disk, its answer does: durable() settles only after the log is synced',
  withGroupedStore(async (store) => {
    assert.equal(Object.values(store.get('PRAGMA synchronous')!)[0], 1, 'NORMAL: the commit itself does not fsync');
    store.setMeta('k', 'v1');
    const durable = store.durable();
    assert.ok(durable, 'a write leaves something to wait for');
    let settled = false;
    void durable.then(() => (settled = true));
    await turn();
    assert.equal(store.commits, 1, 'committed at the end of the turn');
    assert.equal(settled, false, 'but not acknowledged before the fsync');
    assert.equal(store.durable(), durable, 'a read now waits for the same fsync (it may have read the write)');
    await durable;
    assert.equal(store.syncs, 1);
    assert.equal(store.durable(), undefined, 'nothing left to wait for');
  }),
);

test(
  'writes of turns that ran during one fsync share the next: 20 turns, 20 commits, fewer fsyncs',
  withGroupedStore(async (store) => {
    const waits: Promise<void>[] = [];
    for (let i = 0; i < 20; i++) {
      store.setMeta(`k${i}`, 'v');
      waits.push(store.durable()!);
      await turn();
    }
    await Promise.all(waits);
    assert.equal(store.commits, 20);
    assert.ok(store.syncs < 20, `${store.syncs} fsyncs for 20 commits`);
    assert.equal(store.meta('k19'), 'v');
  }),
);

test(
  'a log that cannot be synced fails the writes waiting for it, with the file named; then the store takes no write, and lets no read be answered, until it is opened again',
  withGroupedStore(async (store, dir) => {
    store.setMeta('k', 'v1');
    await store.durable();
    // The log replaced by a folder: opening it for the fsync fails.
    rmSync(join(dir, 's.db-wal'));
    mkdirSync(join(dir, 's.db-wal'));
    store.setMeta('k', 'v2');
    await assert.rejects(store.durable()!, (e: Error) => e instanceof StoreUnavailable && /the store could not make a commit durable \(fsync of .*s\.db-wal\): EISDIR/.test(e.message));
    // The refused write is still in SQLite: a read sees it, so its answer must not be given.
    assert.equal(store.meta('k'), 'v2', 'SQLite still holds the refused write');
    for (const scope of [undefined, 'zone:A']) {
      const wait = store.durable(scope);
      assert.ok(wait, `a reader (scope ${scope}) is held, not answered`);
      await assert.rejects(wait, (e: Error) => e instanceof StoreUnavailable && /^the store takes no more writes: .*EISDIR.*; restart rulesmith serve/.test(e.message));
    }
    assert.throws(
      () => store.setMeta('k', 'v3'),
      (e: Error) => e instanceof StoreUnavailable && /^the store takes no more writes: .*EISDIR.*; restart rulesmith serve/.test(e.message),
    );
    assert.equal(store.meta('k'), 'v2');
  }),
);

test(
  'an fsync that fails (EIO) while later writes wait: those committed are not acknowledged, the open one is rolled back',
  // A batch left waiting for a sync that never comes would hang the run.
  { timeout: 10_000 },
  withGroupedStore(async (store) => {
    store.setMeta('k', 'v1');
    await store.durable();
    // The sync's answer is held, and given when the test says: the disk reports EIO then.
    await withHeldSync(async (sync) => {
      store.setMeta('k', 'v2');
      const first = store.durable()!;
      await turn();
      assert.ok(sync.started, 'the first batch is committed and its sync runs');
      store.setMeta('second', 'committed while the first sync runs');
      const second = store.durable()!;
      await turn();
      store.setMeta('third', 'open when the sync fails');
      const third = store.durable()!;
      sync.failEio();
      for (const w of [first, second, third]) await assert.rejects(w, (e: Error) => e instanceof StoreUnavailable && /EIO: i\/o error, fdatasync/.test(e.message));
      assert.equal(store.meta('second'), 'committed while the first sync runs', 'committed, but its request was not told it is saved');
      assert.equal(store.meta('third'), undefined, 'the batch still open was rolled back');
      assert.throws(() => store.setMeta('k', 'v3'), StoreUnavailable);
    });
  }),
);

test(
  "a reader of one scope waits only for the pending writes of that scope or of none, not another zone's",
  withGroupedStore(async (store) => {
    store.write(() => store.setMeta('b', '1'), 'zone:B');
    const ofB = store.durable('zone:B');
    assert.ok(ofB, "zone B's reader waits for zone B's write");
    assert.equal(store.durable(), ofB, 'a reader of anything waits for it too');
    assert.equal(store.durable('zone:A'), undefined, "zone A's reader has nothing to wait for");
    await turn();
    assert.equal(store.commits, 1);
    assert.equal(store.durable('zone:A'), undefined, 'still nothing once committed and syncing');
    assert.equal(store.durable('zone:B'), ofB);
    await ofB;

    // An older write without a scope holds every reader, even behind a newer scoped one.
    store.setMeta('k', 'any');
    const unscoped = store.durable()!;
    await turn();
    store.write(() => store.setMeta('b', '2'), 'zone:B');
    assert.equal(store.durable('zone:A'), unscoped, 'the unscoped write may have changed zone A');
    assert.notEqual(store.durable('zone:B'), unscoped, "zone B's reader waits for the newer batch");
    await store.durable();

    // One turn's batch with a scoped and an unscoped write is unscoped as a whole.
    store.write(() => store.setMeta('b', '3'), 'zone:B');
    store.setMeta('k', 'any again');
    assert.ok(store.durable('zone:A'), 'the batch also holds a write without a scope');
    await store.durable();
    assert.equal(store.durable('zone:A'), undefined);
  }),
);

test('closing the store while a sync of the log runs answers its writes and leaves no descriptor of the log open', { skip: process.platform !== 'linux' && 'reads /proc/self/fd' }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'rulesmith-sync-'));
  const logFds = () => readdirSync('/proc/self/fd').filter((fd) => {
    try {
      return readlinkSync(`/proc/self/fd/${fd}`).startsWith(join(dir, 's.db-wal'));
    } catch {
      return false; // closed since it was listed
    }
  });
  try {
    const store = new Store(join(dir, 's.db'));
    store.groupCommit();
    store.setMeta('k', 'v1');
    const durable = store.durable()!;
    await turn();
    assert.equal(store.commits, 1, 'committed; its sync has started');
    store.close();
    await durable;
    // The sync ends after the close: its descriptor is closed then, once.
    await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(logFds(), []);
    const again = new Store(join(dir, 's.db'));
    assert.equal(again.meta('k'), 'v1');
    again.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('after a failed fsync the service answers every request 503 (code 10029, what happened and to restart), reads too: they could see the refused writes', async () => {
  const svc = await startService();
  try {
    const zone = demoZoneId('enterprise.example.com');
    const filters = `/zones/${zone}/filters`;
    const add = (ref: string) => svc.call('POST', filters, { body: [{ expression: `http.host eq "${ref}.example"`, ref }] });
    assert.equal((await add('before')).status, 200);
    rmSync(join(svc.dir, 'service.db-wal'));
    mkdirSync(join(svc.dir, 'service.db-wal'));
    const refused = /^the store takes no more writes: the store could not make a commit durable \(fsync of .*service\.db-wal\): EISDIR: illegal operation on a directory, open '.*service\.db-wal'\. A failed fsync can lose part of the log, so no later write could be promised durable; restart rulesmith serve \(SQLite recovers the log when it opens the database\)$/;
    const unavailable = (r: { status: number; body: any }, what: string) => {
      assert.equal(r.status, 503, `${what}: ${JSON.stringify(r.body)}`);
      assert.equal(r.body.success, false);
      assert.equal(r.body.errors.length, 1);
      assert.equal(r.body.errors[0].code, 10029);
      assert.match(r.body.errors[0].message, refused);
      assert.equal(r.body.result, null);
    };
    for (const ref of ['failed', 'after']) unavailable(await add(ref), `POST ${ref}`);
    // 'failed' was committed before its sync failed: SQLite still holds it, so a read would
    // have shown a write answered 503, which the restart may take back. No read is answered.
    assert.deepEqual(svc.store.all("SELECT ref FROM filters WHERE ref IN ('failed', 'after')"), [{ ref: 'failed' }], 'the refused write is in SQLite');
    unavailable(await svc.call('GET', filters), 'GET of the zone written');
    unavailable(await svc.call('GET', `/zones/${demoZoneId('pro.example.com')}/filters`), 'GET of another zone (scoped read)');
    unavailable(await svc.call('GET', '/zones'), 'GET /zones');
    unavailable(await svc.call('GET', filters, { token: null }), 'an error answer (no credentials) too');
  } finally {
    await svc.close();
  }
});
