// The store's log checkpointed off the service's thread (walCheckpointer.ts): with group
// commit on and the native binding, a thread of its own copies the log into the database
// file, and the service's connection checkpoints by itself only at a far larger log; should
// the thread end, SQLite's own checkpoint is back at once; the WebAssembly build keeps it.
import assert from 'node:assert/strict';
import { copyFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import type { Worker } from 'node:worker_threads';
import { Store } from '../../server/src/service/store';
import { DEFAULT_PAGES, FALLBACK_PAGES } from '../../server/src/service/walCheckpointer';
import { withStore } from './storeHarness';

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

test(
  'with group commit on, a thread copies the log into the database file; the service checkpoints by itself only past 8,192 pages',
  withStore(
    async (store, dir) => {
      assert.equal(store.binding, 'native');
      assert.equal(autocheckpoint(store), FALLBACK_PAGES);
      store.setMeta('k', 'checkpointed');
      await store.durable();
      // One small write is far below SQLite's own 1,000 pages: only the thread copies it.
      const deadline = Date.now() + 5_000;
      while (inFileAlone(dir, 'k') === undefined && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      assert.equal(inFileAlone(dir, 'k'), 'checkpointed');
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
