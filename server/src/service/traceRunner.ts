/**
 * Runs Trace evaluations in a worker thread (traceWorker.ts) with a time limit
 * (timedWorker.ts, shared with the language server's Evaluate). The
 * service answers every request on one thread; a trace of a large request can keep the
 * engine busy for seconds (CRS's regular expressions backtrack, as PCRE does without
 * ModSecurity's match limits), and without the limit one request would stall every
 * other client and a SIGTERM. Jobs run one at a time; the limit counts from the start of
 * the evaluation (compiling the zone, bounded and cached, has its own, larger one).
 * On timeout the thread is terminated (a new one starts with the next job) and the
 * client gets a clear error.
 *
 * A trace whose client disconnects is cancelled (the request's signal): not started if
 * it was waiting, stopped with its thread if it was running.
 *
 * Jobs of one trace may be interleaved with others' (the worker's zone cache is keyed).
 * Without the built worker (server/out/traceWorker.js: run `npm run build`) traces run
 * inline (traceEval.ts `traceReply`), without the limit.
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { TraceResult } from '../rulesApi';
import type { Evaluation } from '../rulesets/engine';
import { TimedWorker, WorkerCancelled, WorkerTimeout } from '../timedWorker';
import { ApiError, CODES } from './api';
import type { ZoneSource } from './deployment';
import { traceReply, type TraceJob, type TraceReply } from './traceEval';

/** A trace's answer, and what its security events are made of (events/fromEvaluation.ts `eventEvaluation`). */
export interface TracedRequest {
  readonly result: TraceResult;
  readonly evaluation: Evaluation;
  /** The edge-only fields the zone's rules read that the trace gave no value for (requests/fields.ts `defaultedReads`). */
  readonly defaultedReads: readonly string[];
}

/** The default limit for one trace's evaluation. */
export const TRACE_TIMEOUT_MS = 10_000;
/** What compiling a zone may take on top (it is bounded by the rulesets' limits, and cached). */
const COMPILE_TIMEOUT_MS = 60_000;

/** Where the built worker is: beside the bundle, or server/out when running from source. */
function workerFile(): string | undefined {
  return [join(__dirname, 'traceWorker.js'), resolve(__dirname, '../../out/traceWorker.js')].find((f) => existsSync(f));
}

export class TraceRunner {
  private readonly worker: TimedWorker<TraceJob, TraceReply, true> | undefined;
  /** Counters for tests: compiles and cache hits of the zones traced. */
  readonly stats = { compiles: 0, hits: 0, timeouts: 0, cancelled: 0 };

  constructor(
    private readonly timeoutMs = TRACE_TIMEOUT_MS,
    file = workerFile(),
  ) {
    // The worker reports once the zone is compiled (bounded work, cached): the limit is for the evaluation.
    this.worker = file ? new TimedWorker(file, { timeoutMs, prepareMs: COMPILE_TIMEOUT_MS }) : undefined;
  }

  /**
   * The Trace's result for `job` and the evaluation's acting rules (for its security
   * events); ApiError for a request the evaluation refuses or one that
   * took too long. `source` is read only when the zone is not compiled under `job.key`.
   */
  async run(job: Omit<TraceJob, 'source'>, source: () => ZoneSource, signal?: AbortSignal): Promise<TracedRequest> {
    let reply = await this.answer(job, signal);
    if ('needSource' in reply) reply = await this.answer({ ...job, source: source() }, signal);
    if ('needSource' in reply) throw new Error('the trace worker asked for the zone it was sent');
    if ('result' in reply) {
      this.stats[reply.cached ? 'hits' : 'compiles']++;
      return { result: reply.result, evaluation: reply.evaluation, defaultedReads: reply.defaultedReads };
    }
    if ('apiError' in reply) throw new ApiError(reply.apiError.status, reply.apiError.errors);
    throw new Error(`the trace failed: ${reply.crash}`);
  }

  private async answer(job: TraceJob, signal?: AbortSignal): Promise<TraceReply> {
    if (!this.worker) return traceReply(job);
    try {
      return await this.worker.run(job, undefined, signal);
    } catch (e) {
      if (e instanceof WorkerCancelled) {
        this.stats.cancelled++;
        throw e;
      }
      if (!(e instanceof WorkerTimeout)) throw e;
      this.stats.timeouts++;
      throw ApiError.of(
        422,
        CODES.invalidValue,
        `the trace did not finish within ${this.timeoutMs / 1000} s and was stopped: evaluating this request against the zone's rules takes too long (a large URL, header or body makes the OWASP-based ruleset's regular expressions backtrack). Trace a shorter request.`,
      );
    }
  }

  async close(): Promise<void> {
    await this.worker?.close();
  }
}
