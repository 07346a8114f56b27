/**
 * Checkpoints of the store's write-ahead log, off the service's thread.
 *
 * SQLite copies the log into the database file when it reaches `wal_autocheckpoint` pages,
 * inside the COMMIT that crosses it: on the service's thread, with an fsync of the log and
 * one of the database file, so every request waited for it. Under a loop of 500-rule PUTs
 * that was a stall of several ms every few PUTs (docs/service.md, "Checkpoints off the
 * service's thread"). With the native binding a second connection, on a thread of its own
 * (checkpointWorker.ts), checkpoints every CHECKPOINT_MS instead; the service's connection
 * keeps an automatic checkpoint at a far larger size (FALLBACK_PAGES), which then finds almost
 * everything copied already, and which bounds the log should the thread fail or fall behind.
 * The WebAssembly build has no shared memory for a second connection: it checkpoints as before.
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Worker } from 'node:worker_threads';

/** How often the thread checkpoints. */
export const CHECKPOINT_MS = 100;
/** The service's own automatic checkpoint while the thread runs (pages of 4 KB: 32 MB of log). */
export const FALLBACK_PAGES = 8192;
/** SQLite's default, put back should the thread fail. */
export const DEFAULT_PAGES = 1000;
/** How long a close waits for the thread's connection to close (a checkpoint running then must end first). */
export const STOP_WAIT_MS = 2_000;

/** The built thread, or undefined (not built: the service's connection checkpoints). */
export function checkpointWorkerFile(): string | undefined {
  return [join(__dirname, 'checkpointWorker.js'), resolve(__dirname, '../../out/checkpointWorker.js')].find((f) => existsSync(f));
}

export class WalCheckpointer {
  private readonly worker: Worker;
  /** [0]: the thread's connection is closed; [1]: no checkpoint may start (checkpointWorker.ts). */
  private readonly stopped = new Int32Array(new SharedArrayBuffer(8));
  private running = true;
  private exited = false;
  /** What the first stop() found: whether the thread's connection was closed in time. */
  private letGo: boolean | undefined;

  /** `failed` is told once if the thread cannot checkpoint (the caller checkpoints by itself then). */
  constructor(file: string, workerFile: string, failed: (why: string) => void, intervalMs = CHECKPOINT_MS) {
    this.worker = new Worker(workerFile, { workerData: { file, intervalMs, stopped: this.stopped } });
    this.worker.unref();
    let told = false;
    const fail = (why: string) => {
      if (told || !this.running) return;
      told = true;
      failed(why);
    };
    this.worker.on('message', (m: { failed?: string }) => m.failed && fail(m.failed));
    this.worker.on('error', (e) => fail(e.message));
    this.worker.on('exit', () => {
      this.exited = true;
      fail('the checkpoint thread ended');
    });
  }

  /**
   * Closes the thread's connection before the caller closes its own, waiting for it (at most
   * STOP_WAIT_MS): the last connection to close is the one that checkpoints the whole log and
   * removes it. False when the thread did not confirm in time: the caller's close is then not
   * the last, and must make its pending commits durable itself.
   */
  stop(): boolean {
    if (this.letGo !== undefined) return this.letGo;
    this.running = false;
    Atomics.store(this.stopped, 1, 1);
    // Gone already (its 'exit' may not have been delivered yet): no one to wait for.
    if (this.exited || this.worker.threadId === -1) return (this.letGo = true);
    this.worker.postMessage('stop');
    this.letGo = Atomics.wait(this.stopped, 0, 0, STOP_WAIT_MS) !== 'timed-out';
    void this.worker.terminate();
    return this.letGo;
  }
}
