/**
 * Jobs in a worker thread with a time limit: the rules service's Trace and the language
 * server's Evaluate. Both answer everything on one thread, and an evaluation of a large
 * request can keep the engine busy for seconds (CRS's regular expressions backtrack, as
 * PCRE does without ModSecurity's match limits): without a limit one request would stall
 * every other one. Jobs run one at a time in one thread; a job may report progress (each
 * report restarts the limit: the work before the first one — compiling, bounded and
 * cached — has `prepareMs` on top). On timeout the thread is terminated (a new one starts
 * with the next job) and the job rejects with WorkerTimeout, carrying the last progress so
 * that the caller can say what was stopped.
 */
import { parentPort, Worker } from 'node:worker_threads';

export interface TimedWorkerOptions {
  /** The limit for the work after each progress report. */
  readonly timeoutMs: number;
  /** What the work before the first progress report may take on top of `timeoutMs`. */
  readonly prepareMs: number;
}

/** A job that ran out of time; `progress` is its last report (undefined: it was still preparing). */
export class WorkerTimeout<P = unknown> extends Error {
  constructor(
    readonly limitMs: number,
    readonly progress: P | undefined,
  ) {
    super(`the job did not finish within ${limitMs} ms and was stopped`);
    this.name = 'WorkerTimeout';
  }
}

/** A job whose caller cancelled it (see TimedWorker.run). */
export class WorkerCancelled extends Error {
  constructor() {
    super('the job was cancelled');
    this.name = 'WorkerCancelled';
  }
}

type FromWorker<R, P> = { readonly id: number; readonly progress: P } | { readonly id: number; readonly reply: R };

export class TimedWorker<J, R, P = unknown> {
  private worker: Worker | undefined;
  private nextId = 1;
  private queue: Promise<unknown> = Promise.resolve();
  /** Jobs stopped by the limit, for tests. */
  timeouts = 0;

  constructor(
    private readonly file: string,
    private readonly options: TimedWorkerOptions,
  ) {}

  /**
   * The worker's reply to `job`, after the jobs before it; `onProgress` sees each report.
   * `signal` cancels it (the caller went away): a queued job never starts, a running one
   * stops with its thread; the promise rejects with WorkerCancelled.
   */
  run(job: J, onProgress?: (p: P) => void, signal?: AbortSignal): Promise<R> {
    const next = this.queue.then(() => (signal?.aborted ? Promise.reject(new WorkerCancelled()) : this.inWorker(job, onProgress, signal)));
    this.queue = next.catch(() => undefined);
    return next;
  }

  private inWorker(job: J, onProgress?: (p: P) => void, signal?: AbortSignal): Promise<R> {
    if (!this.worker) {
      this.worker = new Worker(this.file);
      // An idle thread must not keep the process alive.
      this.worker.unref();
    }
    const worker = this.worker;
    const id = this.nextId++;
    const { timeoutMs, prepareMs } = this.options;
    return new Promise<R>((resolvePromise, reject) => {
      let last: P | undefined;
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        worker.off('message', onMessage);
        worker.off('error', onError);
        worker.off('exit', onExit);
      };
      const onMessage = (m: FromWorker<R, P>) => {
        if (m.id !== id) return;
        if ('progress' in m) {
          last = m.progress;
          clearTimeout(timer);
          timer = setTimeout(onTimeout, timeoutMs);
          onProgress?.(m.progress);
          return;
        }
        done();
        resolvePromise(m.reply);
      };
      const onError = (e: Error) => {
        done();
        if (this.worker === worker) this.worker = undefined;
        reject(e);
      };
      const onExit = (code: number) => onError(new Error(`the worker thread exited (code ${code})`));
      const onTimeout = () => {
        done();
        if (this.worker === worker) this.worker = undefined;
        this.timeouts++;
        void worker.terminate();
        reject(new WorkerTimeout<P>(timeoutMs, last));
      };
      const onAbort = () => {
        done();
        if (this.worker === worker) this.worker = undefined;
        void worker.terminate();
        reject(new WorkerCancelled());
      };
      signal?.addEventListener('abort', onAbort);
      let timer = setTimeout(onTimeout, prepareMs + timeoutMs);
      worker.on('message', onMessage);
      worker.on('error', onError);
      worker.on('exit', onExit);
      worker.postMessage({ id, job });
    });
  }

  async close(): Promise<void> {
    const w = this.worker;
    this.worker = undefined;
    if (w) await w.terminate();
  }
}

/** The worker thread's side: answers each job with `work`, which reports progress through its second argument. */
export function serveJobs<J, R, P>(work: (job: J, progress: (p: P) => void) => R): void {
  const port = parentPort;
  if (!port) throw new Error('serveJobs runs in a worker thread');
  port.on('message', ({ id, job }: { id: number; job: J }) => {
    const reply = work(job, (progress) => port.postMessage({ id, progress }));
    port.postMessage({ id, reply });
  });
}

/**
 * For the tests of the time limits only: when the environment variable
 * RULESMITH_TEST_SLOW_REQUEST holds the 0-based index of the request a worker is about to
 * evaluate, the worker spins (for up to a minute) as an evaluation that does not end would,
 * and the limit has to stop it. No real request is reliably slow any more (issue 20: cost
 * linear in size), so the tests cannot use one.
 */
export function slowForTests(index: number): void {
  const at = process.env['RULESMITH_TEST_SLOW_REQUEST'];
  if (at === undefined || Number(at) !== index) return;
  const end = Date.now() + 60_000;
  while (Date.now() < end) {
    // Busy: terminating the thread stops it, as it would stop a slow evaluation.
  }
}
