// A store in a temporary folder for one test, and a disk whose fsync answers when the test
// says: what the store tests (storeSync, rollbackCaches, deploymentKeyLostBatch) share.
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire, syncBuiltinESMExports } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Store } from '../../server/src/service/store';

/** One turn of the event loop: a group-commit batch commits at the end of the turn its writes ran in. */
export const turn = () => new Promise<void>((r) => setImmediate(r));

/** A test body run on a fresh store (group commit on when asked, as the service runs it), closed and deleted after. */
export function withStore(fn: (store: Store, dir: string) => void | Promise<void>, o: { groupCommit?: boolean } = {}): () => Promise<void> {
  return async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rulesmith-store-'));
    const store = new Store(join(dir, 's.db'));
    if (o.groupCommit) store.groupCommit();
    try {
      await fn(store, dir);
    } finally {
      store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  };
}

/** The log's fsync held: the store's sync waits until the test fails it (`failEio`), as a disk reporting a lost writeback. */
export interface HeldSync {
  /** A sync has started and waits for its answer. */
  readonly started: boolean;
  /** Answers the waiting sync with EIO. */
  failEio(): void;
}

/** Runs `fn` with node:fs's fdatasync held (HeldSync), and puts the real one back after. */
export async function withHeldSync(fn: (sync: HeldSync) => Promise<void>): Promise<void> {
  const fs = createRequire(import.meta.url)('node:fs') as typeof import('node:fs');
  const real = fs.fdatasync;
  let answer: ((e: NodeJS.ErrnoException | null) => void) | undefined;
  fs.fdatasync = ((_fd: number, cb: (e: NodeJS.ErrnoException | null) => void) => void (answer = cb)) as typeof fs.fdatasync;
  syncBuiltinESMExports();
  try {
    await fn({
      get started() {
        return answer !== undefined;
      },
      failEio() {
        answer!(Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' }));
      },
    });
  } finally {
    fs.fdatasync = real;
    syncBuiltinESMExports();
  }
}
