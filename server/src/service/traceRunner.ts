/**
 * Runs Trace evaluations in a worker thread (traceWorker.ts) with a time limit. The
 * service answers every request on one thread; a trace of a large request can keep the
 * engine busy for seconds (CRS's regular expressions backtrack, as PCRE does without
 * ModSecurity's match limits), and without the limit one request would stall every
 * other client and a SIGTERM. Jobs run one at a time; the limit counts from the start of
 * the evaluation (compiling the zone, bounded and cached, has its own, larger one).
 * On timeout the thread is terminated (a new one starts with the next job) and the
 * client gets a clear error.
 *
 * Without the built worker (server/out/traceWorker.js: run `npm run build`) traces run
 * inline (traceEval.ts `traceReply`), without the limit.
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Worker } from 'node:worker_threads';
import type { SampleRequest } from '../requests/types';
import type { TraceResult } from '../rulesApi';
import { ApiError, CODES, type ApiMessage } from './api';
import type { ZoneSource } from './deployment';
import { traceReply } from './traceEval';

export interface TraceJob {
  readonly zoneId: string;
  /** The deployment key (zoneConfig.ts deploymentKey): the compiled zone is reused while it holds. */
  readonly key: string;
  /** What the zone is compiled from; sent only when the worker asks (it has no compiled zone under `key`). */
  readonly source?: ZoneSource;
  readonly sample: SampleRequest;
  readonly skipChallenge: boolean;
}

export type TraceReply =
  | { readonly result: TraceResult; readonly cached: boolean }
  | { readonly apiError: { readonly status: number; readonly errors: readonly ApiMessage[] } }
  | { readonly crash: string }
  | { readonly needSource: true };

/** The default limit for one trace's evaluation. */
export const TRACE_TIMEOUT_MS = 10_000;
/** What compiling a zone may take on top (it is bounded by the rulesets' limits, and cached). */
const COMPILE_TIMEOUT_MS = 60_000;

/** Where the built worker is: beside the bundle, or server/out when running from source. */
function workerFile(): string | undefined {
  return [join(__dirname, 'traceWorker.js'), resolve(__dirname, '../../out/traceWorker.js')].find((f) => existsSync(f));
}

export class TraceRunner {
  private worker: Worker | undefined;
  private nextId = 1;
  private queue: Promise<unknown> = Promise.resolve();
  /** Counters for tests: compiles and cache hits of the zones traced. */
  readonly stats = { compiles: 0, hits: 0, timeouts: 0 };

  constructor(
    private readonly timeoutMs = TRACE_TIMEOUT_MS,
    private readonly file = workerFile(),
  ) {}

  /**
   * The Trace's result for `job`; ApiError for a request the evaluation refuses or one that
   * took too long. `source` is read only when the zone is not compiled under `job.key`.
   */
  run(job: Omit<TraceJob, 'source'>, source: () => ZoneSource): Promise<TraceResult> {
    const next = this.queue.then(() => this.dispatch(job, source));
    this.queue = next.catch(() => undefined);
    return next;
  }

  private async dispatch(job: TraceJob, source: () => ZoneSource): Promise<TraceResult> {
    const answer = (j: TraceJob) => (this.file ? this.inWorker(j, this.file) : Promise.resolve(traceReply(j)));
    let reply = await answer(job);
    if ('needSource' in reply) reply = await answer({ ...job, source: source() });
    if ('needSource' in reply) throw new Error('the trace worker asked for the zone it was sent');
    if ('result' in reply) {
      this.stats[reply.cached ? 'hits' : 'compiles']++;
      return reply.result;
    }
    if ('apiError' in reply) throw new ApiError(reply.apiError.status, reply.apiError.errors);
    throw new Error(`the trace failed: ${reply.crash}`);
  }

  private inWorker(job: TraceJob, file: string): Promise<TraceReply> {
    if (!this.worker) {
      this.worker = new Worker(file);
      // An idle trace thread must not keep the process alive.
      this.worker.unref();
    }
    const worker = this.worker;
    const id = this.nextId++;
    return new Promise<TraceReply>((resolvePromise, reject) => {
      const done = () => {
        clearTimeout(timer);
        worker.off('message', onMessage);
        worker.off('error', onError);
        worker.off('exit', onExit);
      };
      const onMessage = (m: (TraceReply & { id: number }) | { id: number; evaluating: true }) => {
        if (m.id !== id) return;
        if ('evaluating' in m) {
          // The zone is compiled (bounded work, cached): the limit is for the evaluation.
          clearTimeout(timer);
          timer = setTimeout(onTimeout, this.timeoutMs);
          return;
        }
        done();
        resolvePromise(m);
      };
      const onError = (e: Error) => {
        done();
        this.worker = undefined;
        reject(e);
      };
      const onExit = (code: number) => onError(new Error(`the trace worker exited (code ${code})`));
      const onTimeout = () => {
        done();
        this.worker = undefined;
        this.stats.timeouts++;
        void worker.terminate();
        reject(
          ApiError.of(
            422,
            CODES.invalidValue,
            `the trace did not finish within ${this.timeoutMs / 1000} s and was stopped: evaluating this request against the zone's rules takes too long (a large URL, header or body makes the OWASP-based ruleset's regular expressions backtrack). Trace a shorter request.`,
          ),
        );
      };
      let timer = setTimeout(onTimeout, COMPILE_TIMEOUT_MS + this.timeoutMs);
      worker.on('message', onMessage);
      worker.on('error', onError);
      worker.on('exit', onExit);
      worker.postMessage({ ...job, id });
    });
  }

  async close(): Promise<void> {
    const w = this.worker;
    this.worker = undefined;
    if (w) await w.terminate();
  }
}
