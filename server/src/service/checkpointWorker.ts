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

interface Db {
  exec(sql: string): void;
  pragma(sql: string): unknown;
  close(): void;
}

const { file, intervalMs, stopped } = workerData as { file: string; intervalMs: number; stopped: Int32Array };

function open(): Db {
  // Resolved at run time, as sqlite.ts does: the bundle keeps the native module out.
  const Database = createRequire(__filename)('better-sqlite3') as new (file: string) => Db;
  const db = new Database(file);
  db.exec('PRAGMA synchronous = NORMAL');
  return db;
}

let db: Db | undefined;
let reported = false;
try {
  db = open();
} catch (e) {
  parentPort!.postMessage({ failed: `cannot open ${file}: ${(e as Error).message}` });
}

const timer = setInterval(() => {
  try {
    db?.pragma('wal_checkpoint(PASSIVE)');
  } catch (e) {
    // Told once: the service's connection checkpoints by itself meanwhile.
    if (!reported) parentPort!.postMessage({ failed: (e as Error).message });
    reported = true;
  }
}, intervalMs);

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
