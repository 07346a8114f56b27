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
 * Which worker: rate-limit counters live in the worker that counts them, so a zone with
 * `http_ratelimit` rules keeps every counter in one worker — when each of its rules counts
 * per `ip.src`, a client's requests all go to the worker its address hashes to; otherwise
 * all of the zone's requests go to the first worker. Other zones' requests go to the
 * worker with the fewest requests in flight.
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
 * body bytes the rules see come before the queue: proxy.ts `maxConnections` bounds those). A
 * worker answers its messages in order, so the first it has not answered is the one it
 * works on: if that is a request it has worked on for `deadlineMs` (or a zone it has
 * compiled for `compileDeadlineMs`: an OWASP zone takes seconds), and no answer to it has
 * come by the next check phase (`overdueUnlessAnswered`), the worker is taken as hung. That
 * request gets a 503, the worker is stopped and another started at once, and the requests
 * waiting behind it, which it never began, are sent again.
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Worker } from 'node:worker_threads';
import type { Evaluation } from '../rulesets/engine';
import { zoneConfigOf, type ZoneSource } from '../service/deployment';
import type { Store } from '../service/store';
import { deploymentKey, zoneSource } from '../service/zoneConfig';
import type { LiveJob } from './evaluateLive';
import type { FromWorker, ToWorker } from './proxyWorker';
import { rateLimitRules } from './rateLimit';

/** The built worker (`npm run build`), beside the bundle or in server/out when run from source. */
export function proxyWorkerFile(): string | undefined {
  return [join(__dirname, 'proxyWorker.js'), resolve(__dirname, '../../out/proxyWorker.js')].find((f) => existsSync(f));
}

interface ZoneState {
  readonly generation: number;
  readonly key: string;
  readonly source: ZoneSource;
  /** Which workers may evaluate the zone's requests (see the file's comment). */
  readonly spread: 'any' | 'by-client' | 'first';
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
  readonly clientIp: string;
  resolve(e: Evaluation): void;
  reject(e: Error): void;
}

/** A message the worker answers: a request (by id) or a zone to compile. */
type Task = { readonly id: number } | { readonly zoneId: string; readonly key: string };

interface PoolWorker {
  readonly worker: Worker;
  readonly startedAt: number;
  /** Stops in a row, each soon after its start, before this worker (restartDelayMs). */
  readonly quickStops: number;
  readonly pending: Map<number, Pending>;
  /** The deployment key each zone was last sent to this worker under. */
  readonly keys: Map<string, string>;
  /** What it was sent and has not answered, in order: it answers in order, so the first is what it works on. */
  readonly tasks: Task[];
  /** Runs while it works on `tasks[0]`: past it, the worker is taken as hung (`overdue`). */
  deadline: NodeJS.Timeout | undefined;
  /** Whether `deadline` is a compile's (else a request's). */
  deadlineCompile: boolean;
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
  private nextId = 0;
  private closed = false;
  /** Each worker's share of the rate-limit counter bound. */
  private readonly countersPerWorker: number;
  private readonly queue: number;
  private readonly deadlineMs: number;
  private readonly compileDeadlineMs: number;

  constructor(
    private readonly file: string,
    private readonly wanted: number,
    private readonly store: Store,
    maxRateLimitCounters: number,
    private readonly log: (line: string) => void,
    /** Evaluates a request on the proxy's thread, while its worker is down. */
    private readonly fallback: (job: LiveJob) => Evaluation,
    limits: PoolLimits = {},
  ) {
    this.countersPerWorker = Math.ceil(maxRateLimitCounters / wanted);
    this.queue = Math.max(1, limits.queue ?? DEFAULT_QUEUE);
    this.deadlineMs = limits.deadlineMs ?? DEFAULT_DEADLINE_MS;
    this.compileDeadlineMs = limits.compileDeadlineMs ?? DEFAULT_COMPILE_DEADLINE_MS;
  }

  /** Workers running (none until the first zone or request). */
  get size(): number {
    return this.workers.filter(Boolean).length;
  }

  /** The worker slots, started now if none is yet. */
  private running(): readonly (PoolWorker | undefined)[] {
    if (this.workers.length === 0 && !this.closed) for (let i = 0; i < this.wanted; i++) this.workers.push(this.start(0));
    return this.workers;
  }

  private start(quickStops: number): PoolWorker {
    const worker = new Worker(this.file, { workerData: { maxRateLimitCounters: this.countersPerWorker } });
    const w: PoolWorker = { worker, startedAt: performance.now(), quickStops, pending: new Map(), keys: new Map(), tasks: [], deadline: undefined, deadlineCompile: false };
    worker.unref();
    worker.on('message', (m: FromWorker) => {
      if ('zoneId' in m) {
        this.answered(w, (t) => 'zoneId' in t && t.zoneId === m.zoneId && t.key === m.key);
        if ('compileError' in m) this.reportCompileError(m);
        return;
      }
      this.answered(w, (t) => 'id' in t && t.id === m.id);
      const p = w.pending.get(m.id);
      if (!p) return;
      w.pending.delete(m.id);
      if ('evaluation' in m) p.resolve(m.evaluation);
      else p.reject(new Error(m.error));
    });
    const lost = (why: string) => {
      for (const p of w.pending.values()) p.reject(new Error(`the evaluation worker stopped (${why})`));
      w.pending.clear();
      this.idle(w);
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
    };
    worker.on('error', (e) => lost(e.message));
    worker.on('exit', (code) => lost(`exit code ${code}`));
    return w;
  }

  /** The worker answered the task `is` matches (normally its first): the deadline now runs for the next one. */
  private answered(w: PoolWorker, is: (t: Task) => boolean): void {
    const at = w.tasks.findIndex(is);
    if (at < 0) return;
    w.tasks.splice(at, 1);
    if (at === 0) this.watch(w);
  }

  /** Posts a message the worker will answer, and starts its deadline if the worker had nothing else to do. */
  private post(w: PoolWorker, task: Task, message: ToWorker): void {
    w.tasks.push(task);
    w.worker.postMessage(message);
    if (w.tasks.length === 1) this.watch(w);
  }

  /** The deadline for the worker's first task, restarted in full (it has just begun on it); none when it has nothing to do. */
  private watch(w: PoolWorker): void {
    const first = w.tasks[0];
    if (!first) return this.idle(w);
    const compile = 'zoneId' in first;
    if (w.deadline && w.deadlineCompile === compile) {
      w.deadline.refresh();
      return;
    }
    clearTimeout(w.deadline);
    w.deadlineCompile = compile;
    w.deadline = setTimeout(() => this.overdueUnlessAnswered(w), compile ? this.compileDeadlineMs : this.deadlineMs);
    w.deadline.unref();
  }

  private idle(w: PoolWorker): void {
    w.tasks.length = 0;
    clearTimeout(w.deadline);
    w.deadline = undefined;
  }

  /**
   * The deadline passed: `overdue`, unless the worker's answer to that task had already come.
   * Timers run before the poll phase that delivers a worker's messages, so an answer posted
   * before the deadline may still be queued when it fires (the proxy's thread was busy): the
   * task is looked at again after one `setImmediate` (the check phase, after that poll), and
   * if it has been answered meanwhile (`answered` moved the deadline on to the next task, or
   * `idle` stopped it), the answer is used and nothing is done.
   */
  private overdueUnlessAnswered(w: PoolWorker): void {
    const first = w.tasks[0];
    if (!first) return;
    setImmediate(() => {
      if (w.tasks[0] === first) this.overdue(w);
    });
  }

  /**
   * The worker has worked on its first task past the deadline: it is taken as hung. The
   * request it works on gets a 503 (a zone it compiles: every request of that zone it holds);
   * the worker is stopped and another started in its slot at once; the other requests it
   * holds, which it never began, are sent again (to the new worker, or wherever their zone's
   * requests go now).
   */
  private overdue(w: PoolWorker): void {
    const first = w.tasks[0];
    if (!first) return;
    const compile = 'zoneId' in first;
    const held: [number, Pending][] = [...w.pending.entries()];
    w.pending.clear();
    this.idle(w);
    const at = this.workers.indexOf(w);
    // Out of its slot first, so that its exit is not taken for a crash (`lost`).
    if (at >= 0 && !this.closed) this.workers[at] = this.start(0);
    void w.worker.terminate();
    const seconds = (compile ? this.compileDeadlineMs : this.deadlineMs) / 1000;
    const what = 'zoneId' in first ? `compiled zone ${first.zoneId} for ${seconds} s` : `worked on one request for ${seconds} s`;
    // A zone that hung one worker's compile would hang the next's as long: its requests fail, the others are sent again.
    const hung = ([id, p]: [number, Pending]) => ('zoneId' in first ? p.job.zoneId === first.zoneId : id === first.id);
    const failed = held.filter(hung);
    const again = held.filter((h) => !hung(h));
    this.log(`proxy: an evaluation worker ${what} and is taken as hung: stopped, and another started; ${failed.length} request(s) get a 503, ${again.length} waiting behind sent again`);
    const error = new EvaluationUnavailable(compile ? `the zone's rules were not compiled within ${seconds} s` : `its evaluation did not finish within ${seconds} s`);
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
      const same = { ...held, generation };
      this.zones.set(zoneId, same);
      return same;
    }
    const source = zoneSource(this.store, zoneId);
    const limits = [...rateLimitRules(zoneConfigOf(source).config.entryPoints.http_ratelimit).values()];
    const spread = limits.length === 0 ? 'any' : limits.every((l) => l.characteristics.includes('ip.src')) ? 'by-client' : 'first';
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
    this.post(w, { zoneId, key: z.key }, { type: 'zone', zoneId, key: z.key, source: z.source });
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
      w.worker.postMessage({ type: 'forget', zoneId } satisfies ToWorker);
    }
  }

  /** The request's evaluation; rejects with EvaluationUnavailable when its worker holds `queue` requests already, or hangs on it. */
  evaluate(job: LiveJob, clientIp: string): Promise<Evaluation> {
    return new Promise((resolve, reject) => this.dispatch({ job, clientIp, resolve, reject }, true));
  }

  /** Sends the request to its worker (`bounded`: unless that worker is full), or evaluates it here while that worker is down. */
  private dispatch(p: Pending, bounded: boolean): void {
    try {
      const z = this.zone(p.job.zoneId);
      const workers = this.running();
      // Closed: a request still arriving would be posted to a terminated worker and never answered.
      if (this.closed || workers.length === 0) throw new Error('the evaluation workers are closed');
      const w = z.spread === 'first' ? workers[0] : z.spread === 'by-client' ? workers[hash(p.clientIp) % workers.length] : this.leastBusy();
      if (!w) return p.resolve(this.fallback(p.job));
      if (bounded && w.pending.size >= this.queue) throw new EvaluationUnavailable(`the evaluation queue is full (--proxy-queue ${this.queue})`);
      this.send(w, p.job.zoneId, z);
      const id = ++this.nextId;
      w.pending.set(id, p);
      this.post(w, { id }, { type: 'eval', id, key: z.key, job: p.job });
    } catch (e) {
      p.reject(e as Error);
    }
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
    for (const w of this.workers) if (w) this.idle(w);
    await Promise.all(this.workers.map((w) => w?.worker.terminate()));
  }
}

/** FNV-1a of a string: spreads client addresses over the workers. */
function hash(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h >>> 0;
}
