/**
 * An evaluation worker of the WAF proxy (bundled to server/out/proxyWorker.js; started by
 * evaluationPool.ts when `--proxy-workers` is above 0). It holds each proxied zone compiled
 * and evaluates the requests the proxy's thread sends it, in order:
 *
 * - `{ type: 'zone', id, zoneId, key, source }`: a zone's deployed configuration (the pool
 *   sends it before the first request under a new deployment key). It is compiled here and
 *   then replaces the zone's previous one in one step: a request is evaluated against the
 *   old configuration or the new one, never a mix. The answer is `{ id, zoneId, key,
 *   compiled }`, or if it cannot be compiled `{ id, zoneId, key, compileError }` (the pool
 *   logs it once) and the zone's requests get the error until the next deployment.
 * - `{ type: 'forget', zoneId }`: the zone left the proxy; its compiled rules go.
 * - `{ type: 'reset', key }`: the visitor passed a rate-limit rule's challenge; that rule's
 *   counter (`key`, evaluateLive.ts) goes, if this worker holds it.
 * - `{ type: 'eval', id, key, job }`: one request (evaluateLive.ts); the answer is
 *   `{ id, evaluation }` or `{ id, error }`.
 * - `{ type: 'count', id, job?, counts, head? }`: a request whose evaluation left rate-limit
 *   counts for later went to the origin (`head`: and its answer came; evaluateLive.ts
 *   `countAfterResponse`); the answer is `{ id, counted: true }` (a count that fails is
 *   logged and lost, not the worker).
 *
 * Each `zone`, `eval` and `count` message is marked in shared memory as it starts
 * (orderedWorker.ts `taskMarker`): the pool's deadline judges the one the worker is on, so
 * a counting expression that hangs the worker is told from the request waiting behind it.
 *
 * Rate-limit counters live in the worker that evaluates the requests they count; the pool
 * sends every request a counter could see to the same worker (see evaluationPool.ts).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { taskMarker } from '../orderedWorker';
import { boundRegexBacktracking } from '../regexBudget';
import type { ZoneSource } from '../service/deployment';
import type { ResponseHead } from '../requests/responseFields';
import { countAfterResponse, evaluateLive, type LiveEvaluation, type LiveJob, type ResponseCount } from './evaluateLive';
import { RateLimiter, type CounterKey } from './rateLimit';
import { compiledLiveZone, type LiveZone } from './zones';

boundRegexBacktracking();

export type ToWorker =
  | { readonly type: 'zone'; readonly id: number; readonly zoneId: string; readonly key: string; readonly source: ZoneSource }
  | { readonly type: 'forget'; readonly zoneId: string }
  | { readonly type: 'reset'; readonly key: CounterKey }
  | { readonly type: 'count'; readonly id: number; readonly job?: LiveJob; readonly counts: readonly ResponseCount[]; readonly head?: ResponseHead }
  | { readonly type: 'eval'; readonly id: number; readonly key: string; readonly job: LiveJob };

export type FromWorker =
  | { readonly id: number; readonly evaluation: LiveEvaluation }
  | { readonly id: number; readonly error: string }
  | { readonly id: number; readonly counted: true }
  | { readonly id: number; readonly zoneId: string; readonly key: string; readonly compiled: true }
  | { readonly id: number; readonly zoneId: string; readonly key: string; readonly compileError: string };

/** What the pool starts a worker with. */
export interface ProxyWorkerData {
  readonly maxRateLimitCounters: number;
  /** One slot where the worker keeps how many rate-limit counters it holds (the pool's status reads it). */
  readonly counters: Int32Array;
}

const data = workerData as ProxyWorkerData;
const answer = (m: FromWorker) => {
  Atomics.store(data.counters, 0, limiter.size);
  parentPort!.postMessage(m);
};
/** Marks the message it works on, for the pool's deadline (orderedWorker.ts). */
const mark = taskMarker();

const limiter = new RateLimiter(Date.now, data.maxRateLimitCounters);
const zones = new Map<string, { key: string; zone?: LiveZone; error?: string }>();

parentPort!.on('message', (m: ToWorker) => {
  if (m.type === 'forget') {
    zones.delete(m.zoneId);
    return;
  }
  if (m.type === 'reset') {
    limiter.reset(m.key);
    Atomics.store(data.counters, 0, limiter.size);
    return;
  }
  mark(m.id);
  if (m.type === 'count') {
    // A count that fails is lost, not the worker (and the requests and counters it holds).
    try {
      countAfterResponse(m.job, m.counts, m.head, limiter);
    } catch (e) {
      console.error(`proxy: rate-limit counts after an answer failed: ${(e as Error).message}`);
    }
    answer({ id: m.id, counted: true });
    return;
  }
  if (m.type === 'zone') {
    try {
      zones.set(m.zoneId, { key: m.key, zone: compiledLiveZone(m.zoneId, m.key, m.source) });
      answer({ id: m.id, zoneId: m.zoneId, key: m.key, compiled: true });
    } catch (e) {
      zones.set(m.zoneId, { key: m.key, error: (e as Error).message });
      answer({ id: m.id, zoneId: m.zoneId, key: m.key, compileError: (e as Error).message });
    }
    return;
  }
  const held = zones.get(m.job.zoneId);
  try {
    if (!held || held.key !== m.key) throw new Error(`zone ${m.job.zoneId} is not compiled in this worker under the deployment asked for`);
    if (!held.zone) throw new Error(held.error);
    answer({ id: m.id, evaluation: evaluateLive(held.zone, m.job, limiter) });
  } catch (e) {
    answer({ id: m.id, error: (e as Error).message });
  }
});
