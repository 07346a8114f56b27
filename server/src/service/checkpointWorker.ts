/**
 * The store's checkpoint thread (bundled to server/out/checkpointWorker.js; walCheckpointer.ts
 * starts it). It opens the database with a connection of its own and, every `intervalMs`,
 * copies what the write-ahead log holds into the database file (a PASSIVE checkpoint: it
 * never waits for, nor holds up, the service's connection). `synchronous = NORMAL` makes
 * SQLite sync the log before the copy and the database file after it, so the log is only
 * ever reused over frames that are safely in the database.
 */
import { createRequire } from 'node:module';
import { parentPort, workerData } from 'node:worker_threads';
import { runInBackground } from './backgroundThread';

runInBackground();

interface Db {
  exec(sql: string): void;
  pragma(sql: string): unknown;
  close(): void;
}

/** `stopped[0]`: set here once the connection is closed; `stopped[1]`: set by the store when no checkpoint may start any more. */
const { file, intervalMs, stopped } = workerData as { file: string; intervalMs: number; stopped: Int32Array };

function open(): Db {
  // Resolved at run time, as sqlite.ts does: the bundle keeps the native module out.
  const Database = createRequire(__filename)('better-sqlite3') as new (file: string) => Db;
  const db = new Database(file);
  db.exec('PRAGMA synchronous = NORMAL');
  return db;
}

let db: Db | undefined;
let timer: NodeJS.Timeout | undefined;

/** Stops checkpointing for good (walCheckpointer.ts is told): a failed checkpoint is not retried. */
function fail(why: string): void {
  clearInterval(timer);
  timer = undefined;
  parentPort!.postMessage({ failed: why });
}

try {
  db = open();
  timer = setInterval(() => {
    // The store has stopped the thread (a failed sync of its log, or its close): the 'stop' message may come after this tick.
    if (Atomics.load(stopped, 1) === 1) return;
    try {
      db!.pragma('wal_checkpoint(PASSIVE)');
    } catch (e) {
      // Its fsync of the log may have failed: the next could succeed over lost frames (Linux
      // reports a failed write-back once), and this thread must never copy those into the file.
      fail((e as Error).message);
    }
  }, intervalMs);
} catch (e) {
  fail(`cannot open ${file}: ${(e as Error).message}`);
}

// walCheckpointer.ts waits on `stopped` for the connection to be closed.
parentPort!.on('message', () => {
  clearInterval(timer);
  try {
    db?.close();
  } finally {
    Atomics.store(stopped, 0, 1);
    Atomics.notify(stopped, 0);
    parentPort!.close();
  }
});
