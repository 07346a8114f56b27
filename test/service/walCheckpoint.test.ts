// The store's log checkpointed off the service's thread (walCheckpointer.ts): with group
// commit on and the native binding, a thread of its own copies the log into the database
// file, and the service's connection checkpoints by itself only at a far larger log; should
// the thread end, SQLite's own checkpoint is back at once; the WebAssembly build keeps it.
// Once a sync of the log has failed, nothing more is copied from it; a close whose thread does
// not let go in time syncs the log itself before it acknowledges anything.
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, writeFileSync } from 'node:fs';
import { createRequire, syncBuiltinESMExports } from 'node:module';
import { join } from 'node:path';
import { test } from 'node:test';
import type { Worker } from 'node:worker_threads';
import { Store } from '../../server/src/service/store';
import { DEFAULT_PAGES, FALLBACK_PAGES, WalCheckpointer } from '../../server/src/service/walCheckpointer';
import { turn, withHeldSync, withStore } from './storeHarness';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const autocheckpoint = (store: Store) => Number(Object.values(store.get('PRAGMA wal_autocheckpoint')!)[0]);
const threadOf = (store: Store) => (store as unknown as { checkpointer?: { worker: Worker } }).checkpointer?.worker;

/** What a copy of the database file alone (no log) holds under `key`: only what a checkpoint put there. */
function inFileAlone(dir: string, key: string): string | undefined {
  const copy = join(dir, 'copy.db');
  copyFileSync(join(dir, 's.db'), copy);
  const alone = new Store(copy);
  try {
    return alone.meta(key);
  } finally {
    alone.close();
  }
}

/** Writes `key`, then what the database file alone holds under it once a checkpoint copied it there (within 5 s). */
async function writtenThrough(store: Store, dir: string, key: string, value: string): Promise<string | undefined> {
  store.setMeta(key, value);
  await store.durable();
  const deadline = Date.now() + 5_000;
  while (inFileAlone(dir, key) === undefined && Date.now() < deadline) await sleep(50);
  return inFileAlone(dir, key);
}

test(
  'with group commit on, a thread copies the log into the database file; the service checkpoints by itself only past 8,192 pages',
  withStore(
    async (store, dir) => {
      assert.equal(store.binding, 'native');
      assert.equal(autocheckpoint(store), FALLBACK_PAGES);
      // One small write is far below SQLite's own 1,000 pages: only the thread copies it.
      assert.equal(await writtenThrough(store, dir, 'k', 'checkpointed'), 'checkpointed');
    },
    { groupCommit: true },
  ),
);

test(
  "should the thread end, the service's connection checkpoints at SQLite's default size again",
  withStore(
    async (store) => {
      const thread = threadOf(store)!;
      await thread.terminate();
      await new Promise((r) => setImmediate(r));
      assert.equal(autocheckpoint(store), DEFAULT_PAGES);
    },
    { groupCommit: true },
  ),
);

test(
  "closing closes the thread's connection first, so the store's close checkpoints the whole log and removes it",
  withStore(
    async (store, dir) => {
      store.setMeta('k', 'at close');
      await store.durable();
      store.close();
      assert.equal(existsSync(join(dir, 's.db-wal')), false, 'the log is gone');
      assert.equal(inFileAlone(dir, 'k'), 'at close');
    },
    { groupCommit: true },
  ),
);

test('the WebAssembly build has no thread: it checkpoints as SQLite does by itself', async () => {
  const before = process.env.RULESMITH_SQLITE;
  process.env.RULESMITH_SQLITE = 'wasm';
  try {
    await withStore(
      (store) => {
        assert.equal(store.binding, 'wasm');
        assert.equal(threadOf(store), undefined);
        assert.equal(autocheckpoint(store), DEFAULT_PAGES);
      },
      { groupCommit: true },
    )();
  } finally {
    if (before === undefined) delete process.env.RULESMITH_SQLITE;
    else process.env.RULESMITH_SQLITE = before;
  }
});

test(
  'once a sync of the log has failed, the thread copies nothing more into the database file (only the restart may say what of that log survives)',
  withStore(
    async (store, dir) => {
      assert.equal(await writtenThrough(store, dir, 'ready', 'yes'), 'yes', 'the thread is up');
      await withHeldSync(async (sync) => {
        store.setMeta('k', 'refused');
        const answer = store.durable()!;
        await turn();
        assert.ok(sync.started);
        sync.failEio();
        await assert.rejects(answer);
        assert.ok(store.unavailable);
        // Several of the thread's 100 ms ticks: a retried sync of the log could succeed over lost frames.
        await sleep(600);
        assert.equal(inFileAlone(dir, 'k'), undefined);
      });
    },
    { groupCommit: true },
  ),
);

/** Runs `fn` with node:fs's fdatasyncSync counted (and failing with EIO when `fail`). */
async function withCountedSyncSync(fail: boolean, fn: (calls: () => number) => Promise<void>): Promise<void> {
  const fs = createRequire(import.meta.url)('node:fs') as typeof import('node:fs');
  const real = fs.fdatasyncSync;
  let calls = 0;
  fs.fdatasyncSync = ((fd: number) => {
    calls++;
    if (fail) throw Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' });
    real(fd);
  }) as typeof fs.fdatasyncSync;
  syncBuiltinESMExports();
  try {
    await fn(() => calls);
  } finally {
    fs.fdatasyncSync = real;
    syncBuiltinESMExports();
  }
}

for (const fail of [false, true]) {
  test(
    `a close whose thread does not let go of its connection in time syncs the log itself: pending writes are ${fail ? 'refused when that sync fails' : 'acknowledged after it'}`,
    withStore(
      async (store, dir) => {
        // A thread slow to close its connection (a checkpoint stuck on a slow disk): it answers
        // 'stop' only after the store's 2 s wait, so the store's own close is not the last.
        const slowThread = join(dir, 'slowCheckpointer.js');
        writeFileSync(
          slowThread,
          `const { parentPort, workerData } = require('node:worker_threads');
           const db = new (require(${JSON.stringify(createRequire(import.meta.url).resolve('better-sqlite3'))}))(workerData.file);
           parentPort.on('message', () => setTimeout(() => { db.close(); Atomics.store(workerData.stopped, 0, 1); Atomics.notify(workerData.stopped, 0); parentPort.close(); }, 4000));`,
        );
        const s = store as unknown as { checkpointer: WalCheckpointer };
        s.checkpointer.stop();
        s.checkpointer = new WalCheckpointer(store.realFile, slowThread, () => {});
        await sleep(300);
        await withCountedSyncSync(fail, async (calls) => {
          await withHeldSync(async (sync) => {
            store.setMeta('a', '1');
            const a = store.durable()!;
            await turn();
            assert.ok(sync.started, "a's sync is held");
            store.setMeta('b', '2');
            const b = store.durable()!;
            store.close();
            assert.equal(calls(), 1, 'one sync of the log at close');
            if (fail) for (const w of [a, b]) await assert.rejects(w, /the store could not make a commit durable at close \(fsync of .*s\.db-wal\): EIO/);
            else await Promise.all([a, b]);
          });
        });
      },
      { groupCommit: true },
    ),
  );
}
