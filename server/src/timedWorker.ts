/**
 * Jobs in a worker thread with a time limit: the rules service's Trace and the language
 * server's Evaluate. Both answer everything on one thread, and an evaluation of a large
 * request can keep the engine busy for seconds (CRS's regular expressions backtrack, as
 * PCRE does without ModSecurity's match limits): without a limit one request would stall
 * every other one. Jobs run one at a time in one thread; a job may report progress (each
 * report restarts the limit: the work before the first one — compiling, bounded and
 * cached — has `prepareMs` on top). On timeout the thread is terminated (a new one starts
 * with the next job) and the job rejects with WorkerTimeout, carrying the last progress so
 * that the caller can say what was stopped. The thread and its deadline are orderedWorker.ts's.
 */
import { parentPort } from 'node:worker_threads';
import { OrderedWorker, taskMarker, type Task } from './orderedWorker';

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

/** The job in the thread: its task for the deadline, and how to settle it. */
interface Running<R, P> extends Task {
  last: P | undefined;
  readonly onProgress: ((p: P) => void) | undefined;
  readonly resolve: (r: R) => void;
  readonly reject: (e: Error) => void;
}

export class TimedWorker<J, R, P = unknown> {
  /** The thread (orderedWorker.ts), started with the first job after none or a stop. */
  private link: OrderedWorker<Running<R, P>> | undefined;
  /** The job in the thread: one at a time. */
  private job: Running<R, P> | undefined;
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
    const { timeoutMs, prepareMs } = this.options;
    const link = (this.link ??= this.start());
    return new Promise<R>((resolvePromise, reject) => {
      const onAbort = () => {
        if (this.link === link) this.link = undefined;
        void link.terminate();
        settle(() => reject(new WorkerCancelled()));
      };
      const settle = (how: () => void) => {
        signal?.removeEventListener('abort', onAbort);
        this.job = undefined;
        how();
      };
      const running: Running<R, P> = {
        id: this.nextId++,
        limitMs: prepareMs + timeoutMs,
        last: undefined,
        onProgress,
        resolve: (r) => settle(() => resolvePromise(r)),
        reject: (e) => settle(() => reject(e)),
      };
      this.job = running;
      signal?.addEventListener('abort', onAbort);
      link.post({ id: running.id, job }, [running]);
    });
  }

  private start(): OrderedWorker<Running<R, P>> {
    const { timeoutMs } = this.options;
    const link: OrderedWorker<Running<R, P>> = new OrderedWorker(this.file, {
      onMessage: (m) => {
        const job = this.job;
        const message = m as FromWorker<R, P>;
        if (!job || message.id !== job.id) return;
        if ('progress' in message) {
          // Past the first report, only the work after the last one is limited.
          job.last = message.progress;
          job.limitMs = timeoutMs;
          job.onProgress?.(message.progress);
          return;
        }
        link.answered(job.id);
        job.resolve(message.reply);
      },
      onHung: (stuck) => {
        if (this.link === link) this.link = undefined;
        this.timeouts++;
        stuck.reject(new WorkerTimeout<P>(timeoutMs, stuck.last));
      },
      onStopped: (error, left) => {
        if (this.link === link) this.link = undefined;
        for (const job of left) job.reject(new Error(`the worker thread stopped (${error.message})`, { cause: error }));
      },
    });
    return link;
  }

  /** Stops the thread: the job in it rejects with WorkerCancelled; a later run() starts another. */
  async close(): Promise<void> {
    const link = this.link;
    const job = this.job;
    this.link = undefined;
    if (link) await link.terminate();
    job?.reject(new WorkerCancelled());
  }
}

/** The worker thread's side: answers each job with `work`, which reports progress through its second argument. */
export function serveJobs<J, R, P>(work: (job: J, progress: (p: P) => void) => R): void {
  const port = parentPort;
  if (!port) throw new Error('serveJobs runs in a worker thread');
  const mark = taskMarker();
  port.on('message', ({ id, job }: { id: number; job: J }) => {
    mark(id);
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
