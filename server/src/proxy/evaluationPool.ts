/**
 * The WAF proxy's evaluation workers (`--proxy-workers N`): the proxy's thread parses,
 * reads bodies and streams; N worker threads (proxyWorker.ts) compile the proxied zones
 * and evaluate requests with the same code as the proxy's thread would (evaluateLive.ts).
 *
 * Deploys: the pool reads a zone's deployment key again only when the store has been
 * written since (Store.generation), and under a new key sends the zone's source to a worker
 * before that worker's next request of the zone. A worker answers its messages in order,
 * so it compiles the new configuration and swaps it in one step before the requests sent
 * after the deploy: no request is evaluated against half a configuration, and each
 * request sent after the write that deployed it sees the new one.
 *
 * Which worker: rate-limit counters live in the worker that counts them, so every request
 * of a zone with `http_ratelimit` rules goes to the first worker, whatever its rules count
 * by: a deploy that changes what they count by moves no client to a worker without its
 * counters (and its mitigation). Other zones' requests go to the worker with the fewest
 * requests in flight.
 *
 * A worker that stops (a crash, an exit) fails the requests it held (the proxy answers
 * them with its error page: a request that may have crashed a thread is not tried again)
 * and is started again: at once if it had run for RESTART_HEALTHY_MS, else after a delay
 * that doubles with each quick stop in a row (`restartDelayMs`), so a worker that cannot
 * start does not spin. Until it is back, the requests it would have had are evaluated on
 * the proxy's thread (`fallback`: the same code, the proxy's own rate-limit counters).
 *
 * Overload and faults: a worker holds at most `queue` requests (the one it evaluates and
 * those waiting behind it); one more is refused at once (EvaluationUnavailable, a 503), so
 * the requests waiting for an evaluation are bounded (the connections still sending the
 * body bytes the rules see come before the queue: proxy.ts `maxConnections` bounds those).
 * Each worker is watched by orderedWorker.ts's deadline: one that has posted nothing for
 * `deadlineMs` while on a request or on a request's counts after it went on (or
 * `compileDeadlineMs` while compiling a zone: an OWASP zone takes seconds), its answer not
 * arrived by one more turn, is taken as hung. That request gets a 503 (a zone's compile:
 * every request of that zone it held; counts: they are lost, the request was answered), the
 * worker is stopped and another started at once, and the requests waiting behind it, which
 * it never began, are sent again.
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { OrderedWorker, type Task } from '../orderedWorker';
import { zoneConfigOf, type ZoneSource } from '../service/deployment';
import type { Store } from '../service/store';
import { deploymentKey, zoneSource } from '../service/zoneConfig';
import type { ResponseHead } from '../requests/responseFields';
import type { LiveEvaluation, LiveJob, ResponseCount } from './evaluateLive';
import type { FromWorker, ProxyWorkerData, ToWorker } from './proxyWorker';
import { rateLimitSettings, type CounterKey } from './rateLimit';

/** The built worker (`npm run build`), beside the bundle or in server/out when run from source. */
export function proxyWorkerFile(): string | undefined {
  return [join(__dirname, 'proxyWorker.js'), resolve(__dirname, '../../out/proxyWorker.js')].find((f) => existsSync(f));
}

interface ZoneState {
  readonly generation: number;
  readonly key: string;
  readonly source: ZoneSource;
  /** Which workers may evaluate the zone's requests (see the file's comment). */
  readonly spread: 'any' | 'first';
}

/** Requests one worker holds (evaluated or waiting) before the next is refused with a 503 (`--proxy-queue`). */
export const DEFAULT_QUEUE = 256;
/** Time a worker may work on one request before it is taken as hung (the regex safeguard bounds an evaluation far below it). */
export const DEFAULT_DEADLINE_MS = 10_000;
/** Time a worker may take to compile one zone's configuration (an OWASP zone takes a few seconds on a loaded machine). */
export const DEFAULT_COMPILE_DEADLINE_MS = 120_000;

/** A request the workers did not evaluate, for want of room or time: the proxy answers 503; the same request may pass later. */
export class EvaluationUnavailable extends Error {}

export interface PoolLimits {
  /** Requests one worker holds before the next is refused (DEFAULT_QUEUE). */
  readonly queue?: number;
  /** DEFAULT_DEADLINE_MS; tests give less. */
  readonly deadlineMs?: number;
  /** DEFAULT_COMPILE_DEADLINE_MS; tests give less. */
  readonly compileDeadlineMs?: number;
}

/** A worker that ran at least this long before it stopped is started again at once. */
export const RESTART_HEALTHY_MS = 10_000;

/** How long to wait before starting a worker again after `quickStops` stops in a row, each within RESTART_HEALTHY_MS of its start. */
export function restartDelayMs(quickStops: number): number {
  return quickStops <= 0 ? 0 : Math.min(30_000, 250 * 2 ** (quickStops - 1));
}

/** A request sent to a worker: what it takes to answer it, or to send it again. */
interface Pending {
  readonly job: LiveJob;
  resolve(e: LiveEvaluation): void;
  reject(e: Error): void;
}

/** A message the worker answers: a request, (with `zoneId`) a zone to compile, or (`count`) a request's counts after it went on. */
interface PoolTask extends Task {
  readonly zoneId?: string;
  readonly count?: true;
}

interface PoolWorker {
  /** The thread and its deadline (orderedWorker.ts). */
  readonly link: OrderedWorker<PoolTask>;
  readonly startedAt: number;
  /** Stops in a row, each soon after its start, before this worker (restartDelayMs). */
  readonly quickStops: number;
  readonly pending: Map<number, Pending>;
  /** The deployment key each zone was last sent to this worker under. */
  readonly keys: Map<string, string>;
  /** How many rate-limit counters it holds, as it last wrote (shared memory: read without a message). */
  readonly counters: Int32Array;
}

/** What the pool does on the proxy's thread while a worker is down. */
export interface OnThisThread {
  evaluate(job: LiveJob): LiveEvaluation;
  count(job: LiveJob | undefined, counts: readonly ResponseCount[], head: ResponseHead | undefined): void;
}

export class EvaluationPool {
  /**
   * Started on the first zone or request (a proxy listener with no zone yet, as the
   * extension's, starts none); a slot is undefined while its worker waits to start again.
   */
  private readonly workers: (PoolWorker | undefined)[] = [];
  private readonly restarts = new Set<NodeJS.Timeout>();
  /** Compile errors already logged, by zone and deployment key (every worker reports its own). */
  private readonly reported = new Set<string>();
  private readonly zones = new Map<string, ZoneState>();
  /** The worker that evaluated a request whose counts wait for the origin (countAfterResponse). */
  private readonly evaluatedBy = new WeakMap<LiveEvaluation, PoolWorker>();
  private nextId = 0;
  private closed = false;
  private readonly queue: number;
  private readonly deadlineMs: number;
  private readonly compileDeadlineMs: number;

  constructor(
    private readonly file: string,
    private readonly wanted: number,
    private readonly store: Store,
    /** The rate-limit counter bound (rateLimit.ts): all in the first worker, which counts every zone's. */
    private readonly maxRateLimitCounters: number,
    private readonly log: (line: string) => void,
    /** Evaluates a request, and counts after an answer, on the proxy's thread while its worker is down (evaluateLive.ts). */
    private readonly fallback: OnThisThread,
    limits: PoolLimits = {},
  ) {
    this.queue = Math.max(1, limits.queue ?? DEFAULT_QUEUE);
    this.deadlineMs = limits.deadlineMs ?? DEFAULT_DEADLINE_MS;
    this.compileDeadlineMs = limits.compileDeadlineMs ?? DEFAULT_COMPILE_DEADLINE_MS;
  }

  /** Workers running (none until the first zone or request). */
  get size(): number {
    return this.workers.filter(Boolean).length;
  }

  /** The rate-limit counters the running workers hold. */
  get rateLimitCounters(): number {
    return this.workers.reduce((n, w) => n + (w ? Atomics.load(w.counters, 0) : 0), 0);
  }

  /** The worker slots, started now if none is yet. */
  private running(): readonly (PoolWorker | undefined)[] {
    if (this.workers.length === 0 && !this.closed) for (let i = 0; i < this.wanted; i++) this.workers.push(this.start(0));
    return this.workers;
  }

  private start(quickStops: number): PoolWorker {
    const counters = new Int32Array(new SharedArrayBuffer(4));
    const w: PoolWorker = {
      link: new OrderedWorker<PoolTask>(this.file, {
        workerData: { maxRateLimitCounters: this.maxRateLimitCounters, counters } satisfies ProxyWorkerData,
        onMessage: (m) => this.answered(w, m as FromWorker),
        onHung: (stuck) => this.hung(w, stuck),
        onStopped: (e) => this.lost(w, e.message),
      }),
      startedAt: performance.now(),
      quickStops,
      pending: new Map(),
      keys: new Map(),
      counters,
    };
    return w;
  }

  private answered(w: PoolWorker, m: FromWorker): void {
    w.link.answered(m.id);
    if ('zoneId' in m) {
      if ('compileError' in m) this.reportCompileError(m);
      return;
    }
    if ('counted' in m) return;
    const p = w.pending.get(m.id);
    if (!p) return;
    w.pending.delete(m.id);
    if ('evaluation' in m) {
      if (m.evaluation.afterResponse) this.evaluatedBy.set(m.evaluation, w);
      p.resolve(m.evaluation);
    } else p.reject(new Error(m.error));
  }

  /** The worker stopped by itself: its requests fail, and it is started again (see the file's comment). */
  private lost(w: PoolWorker, why: string): void {
    for (const p of w.pending.values()) p.reject(new Error(`the evaluation worker stopped (${why})`));
    w.pending.clear();
    const at = this.workers.indexOf(w);
    if (this.closed || at < 0) return;
    const quick = performance.now() - w.startedAt < RESTART_HEALTHY_MS ? w.quickStops + 1 : 0;
    const delay = restartDelayMs(quick);
    if (delay === 0) {
      this.log(`proxy: an evaluation worker stopped (${why}); starting another`);
      this.workers[at] = this.start(quick);
      return;
    }
    this.log(`proxy: an evaluation worker stopped (${why}), ${quick} time(s) in a row within ${RESTART_HEALTHY_MS / 1000} s of its start; starting another in ${delay} ms, evaluating its requests on the proxy's thread until then`);
    this.workers[at] = undefined;
    const timer = setTimeout(() => {
      this.restarts.delete(timer);
      if (!this.closed) this.workers[at] = this.start(quick);
    }, delay);
    timer.unref();
    this.restarts.add(timer);
  }

  /**
   * The worker worked on `stuck` past its deadline and was stopped (orderedWorker.ts): the
   * request it worked on gets a 503 (a zone it compiled: every request of that zone it
   * held); another worker is started in its slot at once; the other requests it held,
   * which it never began, are sent again (to the new worker, or wherever their zone's
   * requests go now).
   */
  private hung(w: PoolWorker, stuck: PoolTask): void {
    const held: [number, Pending][] = [...w.pending.entries()];
    w.pending.clear();
    const at = this.workers.indexOf(w);
    if (at >= 0 && !this.closed) this.workers[at] = this.start(0);
    const zoneId = stuck.zoneId;
    const seconds = stuck.limitMs / 1000;
    const what = zoneId !== undefined ? `compiled zone ${zoneId} for ${seconds} s` : stuck.count ? `counted one request's rate limits after it went on for ${seconds} s (those counts are lost)` : `worked on one request for ${seconds} s`;
    // A zone that hung one worker's compile would hang the next's as long: its requests fail, the others are sent again.
    const hangs = ([id, p]: [number, Pending]) => (zoneId !== undefined ? p.job.zoneId === zoneId : id === stuck.id);
    const failed = held.filter(hangs);
    const again = held.filter((h) => !hangs(h));
    this.log(`proxy: an evaluation worker ${what} and is taken as hung: stopped, and another started; ${failed.length} request(s) get a 503, ${again.length} waiting behind sent again`);
    const error = new EvaluationUnavailable(zoneId !== undefined ? `the zone's rules were not compiled within ${seconds} s` : `its evaluation did not finish within ${seconds} s`);
    for (const [, p] of failed) p.reject(error);
    for (const [, p] of again) this.dispatch(p, false);
  }

  /** The zone as deployed now (SQL only after a write since the last look). */
  private zone(zoneId: string): ZoneState {
    const generation = this.store.generation;
    const held = this.zones.get(zoneId);
    if (held && held.generation === generation) return held;
    const key = deploymentKey(this.store, zoneId);
    if (held && held.key === key) {
      const same = Object.assign({}, held, { generation });
      this.zones.set(zoneId, same);
      return same;
    }
    const source = zoneSource(this.store, zoneId);
    const spread = rateLimitSettings(zoneConfigOf(source).config).length === 0 ? 'any' : 'first';
    const state: ZoneState = { generation, key, source, spread };
    this.zones.set(zoneId, state);
    return state;
  }

  private reportCompileError(m: { zoneId: string; key: string; compileError: string }): void {
    const what = `${m.zoneId} ${m.key}`;
    if (this.reported.has(what)) return;
    if (this.reported.size >= 1000) this.reported.clear();
    this.reported.add(what);
    this.log(`proxy: zone ${m.zoneId} cannot be compiled (its requests get the error page until the next deploy): ${m.compileError}`);
  }

  private send(w: PoolWorker, zoneId: string, z: ZoneState): void {
    if (w.keys.get(zoneId) === z.key) return;
    const id = ++this.nextId;
    w.link.post({ type: 'zone', id, zoneId, key: z.key, source: z.source } satisfies ToWorker, [{ id, zoneId, limitMs: this.compileDeadlineMs }]);
    w.keys.set(zoneId, z.key);
  }

  /** Compiles the zone in every worker now, so that its first requests do not wait for it. */
  warm(zoneId: string): void {
    const z = this.zone(zoneId);
    for (const w of this.running()) if (w) this.send(w, zoneId, z);
  }

  /** The zone left the proxy: the workers drop its compiled rules (in a long-lived service, every zone ever proxied would stay). */
  forget(zoneId: string): void {
    this.zones.delete(zoneId);
    for (const w of this.workers) {
      if (!w?.keys.delete(zoneId)) continue;
      w.link.post({ type: 'forget', zoneId } satisfies ToWorker);
    }
  }

  /**
   * Passing a rate-limit rule's challenge resets its counter (proxy.ts `passChallenge`): every
   * running worker forgets the counter `key` (evaluateLive.ts) before the requests sent after.
   * All of them, as the worker that counted it may not be the one its zone's requests go to
   * now (a deploy since changed the rules' characteristics); the proxy's thread resets its own.
   */
  resetRateLimit(key: CounterKey): void {
    if (this.closed) return;
    for (const w of this.workers) w?.link.post({ type: 'reset', key } satisfies ToWorker);
  }

  /** The request's evaluation; rejects with EvaluationUnavailable when its worker holds `queue` requests already, or hangs on it. */
  evaluate(job: LiveJob): Promise<LiveEvaluation> {
    return new Promise((resolve, reject) => this.dispatch({ job, resolve, reject }, true));
  }

  /** Sends the request to its worker (`bounded`: unless that worker is full), or evaluates it here while that worker is down. */
  private dispatch(p: Pending, bounded: boolean): void {
    try {
      const z = this.zone(p.job.zoneId);
      const workers = this.running();
      // Closed: a request still arriving would be posted to a terminated worker and never answered.
      if (this.closed || workers.length === 0) throw new Error('the evaluation workers are closed');
      const w = z.spread === 'first' ? workers[0] : this.leastBusy();
      if (!w) return p.resolve(this.fallback.evaluate(p.job));
      if (bounded && w.pending.size >= this.queue) throw new EvaluationUnavailable(`the evaluation queue is full (--proxy-queue ${this.queue})`);
      this.send(w, p.job.zoneId, z);
      const id = ++this.nextId;
      w.pending.set(id, p);
      w.link.post({ type: 'eval', id, key: z.key, job: p.job } satisfies ToWorker, [{ id, limitMs: this.deadlineMs }]);
    } catch (e) {
      p.reject(e as Error);
    }
  }

  /**
   * A request whose evaluation left counts for later (evaluateLive.ts `afterResponse`) went on
   * to the origin: they go to the worker that evaluated it, which holds its counters, after
   * the messages sent to it before (the requests evaluated since count after this one). Its
   * counters went with a worker that stopped since; one evaluated on this thread counts here.
   */
  countAfterResponse(evaluation: LiveEvaluation, job: LiveJob | undefined, counts: readonly ResponseCount[], head: ResponseHead | undefined): void {
    if (this.closed) return;
    const w = this.evaluatedBy.get(evaluation);
    if (!w) return this.fallback.count(job, counts, head);
    if (!this.workers.includes(w)) return;
    const id = ++this.nextId;
    w.link.post({ type: 'count', id, ...(job ? { job } : {}), counts, ...(head ? { head } : {}) } satisfies ToWorker, [{ id, count: true, limitMs: this.deadlineMs }]);
  }

  /** The running worker with the fewest requests in flight; undefined while none runs. */
  private leastBusy(): PoolWorker | undefined {
    let best: PoolWorker | undefined;
    for (const w of this.workers) if (w && (!best || w.pending.size < best.pending.size)) best = w;
    return best;
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const t of this.restarts) clearTimeout(t);
    const closed = new Error('the evaluation workers are closed');
    for (const w of this.workers) {
      if (!w) continue;
      for (const p of w.pending.values()) p.reject(closed);
      w.pending.clear();
    }
    await Promise.all(this.workers.map((w) => w?.link.terminate()));
  }
}
