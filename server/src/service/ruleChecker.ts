/**
 * Checks the rules a write brings (ruleProblems.ts) in a worker thread
 * (ruleCheckWorker.ts), so that the service's thread, which answers every request, does
 * not spend its time on them: a PATCH's one rule is a sixth of its work there, and a
 * Terraform apply's PUT of 500 rules from 100 ms to seconds. Jobs go to the worker as they
 * come, several in flight, answered in order.
 *
 * Without the built worker (server/out/ruleCheckWorker.js: run `npm run build`), or once
 * it has stopped three times, the rules are checked on the service's thread, in slices of
 * SLICE_MS with other requests answered in between, so a small GET never waits behind a
 * large write's checks. A job the worker had not answered when it stopped is checked there
 * too: no write fails because the worker did. After close(), checks are cancelled.
 *
 * Deadline: it judges progress, not how long a job or a message takes. While it has jobs
 * out, the worker posts at least once a second (ruleCheckWorker.ts: a message's answers
 * when it is done, else its progress, answers so far and the job it is on), so a write of
 * thousands of heavy rules, or a turn of several, takes as long as it takes. The worker is
 * taken as hung only when, with jobs sent and not answered, nothing has come from it for
 * RULE_CHECK_DEADLINE_MS (counted from the last thing it posted, or from when jobs went
 * out to it idle), and still nothing after one more turn of this thread's event loop (a
 * timer runs before the poll phase that delivers what the worker has already posted).
 * Then it is terminated and a new one started; the job it was on (it keeps the job's id
 * in shared memory: stuck in one rule, it posts nothing) fails with a 503
 * (CODES.ruleCheckTimeout; its write has written nothing, a write writes after its check),
 * and every other job not answered, those behind it and any whose answer had not been
 * posted, with any that come while the new worker loads, waits for the new worker and is
 * checked there. Jobs answered before are answered: their findings stand (and
 * routes/rulesets.ts keeps them). Never on this thread: whatever hung the worker (a rule
 * that makes a check run away, sent again) must not hang the thread that answers every
 * request. A hang is not counted among the stops that leave checks on this thread. A new
 * worker that does not load within the deadline fails the jobs waiting for it.
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Worker } from 'node:worker_threads';
import type { Phase } from '../language/scheme/types';
import { WorkerCancelled } from '../timedWorker';
import { ApiError, CODES } from './api';
import type { JsonObject } from './body';
import type { RuleCheckJob, RuleCheckReport, RuleCheckWorkerData } from './ruleCheckWorker';
import { findRuleProblems, type RuleFindings, type RuleTarget } from './ruleProblems';

/** The longest the service's thread works through a write's rules before it lets other requests in. */
const SLICE_MS = 2;
/** Custom-ruleset lists the worker keeps (one per account written to lately, per change of its list). */
const CUSTOM_KEPT = 32;
/** Stops of the worker after which the rules are checked on the service's thread for good. */
const MAX_STOPS = 3;
/**
 * How long the worker, with jobs out, may go without posting anything (see the file's
 * comment). Ample: it posts at least once a second while it works.
 */
export const RULE_CHECK_DEADLINE_MS = 30_000;

export interface RuleCheckerOptions {
  /** The longest the worker may go without posting while it has jobs (default RULE_CHECK_DEADLINE_MS). */
  readonly deadlineMs?: number;
  /** The clock the deadline is judged by, in ms (default performance.now; tests move their own). */
  readonly clock?: () => number;
  /** The longest the worker works without posting its progress (default 1000; tests). */
  readonly progressMs?: number;
}

interface Pending {
  readonly target: RuleTarget;
  readonly custom: ReadonlyMap<string, Phase>;
  readonly rules: readonly JsonObject[];
  readonly resolve: (found: RuleFindings[]) => void;
  readonly reject: (e: Error) => void;
}

/** Where the built worker is: beside the bundle, or server/out when running from source. */
export function ruleCheckWorkerFile(): string | undefined {
  return [join(__dirname, 'ruleCheckWorker.js'), resolve(__dirname, '../../out/ruleCheckWorker.js')].find((f) => existsSync(f));
}

export class RuleChecker {
  private worker: Worker | undefined;
  /** The worker has loaded (its first message): jobs before that are checked here. */
  private ready = false;
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  /** Jobs of this turn, sent together at its end. */
  private outbox: RuleCheckJob[] = [];
  /** A key per custom-rulesets list (customRulesetPhases gives a new Map when the list changes). */
  private readonly customKeys = new WeakMap<ReadonlyMap<string, Phase>, number>();
  private nextCustomKey = 1;
  /** The keys the running worker holds, oldest first. */
  private sent: number[] = [];
  private stops = 0;
  private closed = false;
  /** Jobs answered by the worker and on this thread (tests). */
  readonly stats = { inWorker: 0, inThread: 0 };
  /** Jobs failed by the deadline (tests, the log). */
  timedOut = 0;
  private readonly deadlineMs: number;
  private readonly clock: () => number;
  private readonly progressMs: number | undefined;
  /** The ids of the jobs sent to the running worker and not yet answered, in the order sent. */
  private inFlight: number[] = [];
  /** When the running worker last posted (or, idle, was sent jobs). */
  private heardAt = 0;
  /** Where the running worker keeps the id of the job it is on (ruleCheckWorker.ts). */
  private working = new Int32Array(new SharedArrayBuffer(4));
  /** Since when a worker started after a hang has been loading; jobs wait for it meanwhile. */
  private replacingSince: number | undefined;
  /** The one timer that watches the deadline (armed while jobs are out, see watch()). */
  private watchdog: NodeJS.Timeout | undefined;

  /**
   * `file`: the built worker; undefined checks every rule on the service's thread. The
   * worker starts now, and until it has loaded the core (a few hundred ms) rules are
   * checked here: no write waits for it to start.
   */
  constructor(
    private readonly file: string | undefined,
    options: RuleCheckerOptions = {},
  ) {
    this.deadlineMs = options.deadlineMs ?? RULE_CHECK_DEADLINE_MS;
    this.clock = options.clock ?? (() => performance.now());
    this.progressMs = options.progressMs;
    this.running();
  }

  /** What checking each of `rules` finds, in their order. */
  check(target: RuleTarget, custom: ReadonlyMap<string, Phase>, rules: readonly JsonObject[]): Promise<RuleFindings[]> {
    if (rules.length === 0) return Promise.resolve([]);
    const worker = this.running();
    // After a hang, jobs wait for the new worker (see the file's comment).
    const waiting = this.replacingSince !== undefined;
    if (!worker || (!this.ready && !waiting)) return this.inThread(target, custom, rules);
    return new Promise((resolve, reject) => {
      const id = this.nextId++;
      this.pending.set(id, { target, custom, rules, resolve, reject });
      this.outbox.push(this.job(id, target, custom, rules));
      // While the new worker loads, its 'ready' sends them.
      if (this.outbox.length === 1 && this.ready) setImmediate(() => this.flush(worker));
    });
  }

  private flush(worker: Worker): void {
    // A worker that stopped meanwhile left these jobs to this thread (running()).
    if (this.worker !== worker || this.outbox.length === 0) return;
    // An idle worker's silence so far is no sign of a hang: it counts from now.
    if (this.inFlight.length === 0) this.heardAt = this.clock();
    worker.postMessage(this.outbox);
    for (const j of this.outbox) this.inFlight.push(j.id);
    this.outbox = [];
    this.arm(this.deadlineMs);
  }

  /** Arms the watchdog unless it is armed: one timer, not one per message (see watch()). */
  private arm(ms: number): void {
    if (this.watchdog) return;
    this.watchdog = setTimeout(() => this.watch(), ms);
    // Never keeps a process alive on its own (the service's server does, while it serves).
    this.watchdog.unref();
  }

  /**
   * The watchdog fired: if the worker has been silent past the deadline with jobs out (or
   * a worker started after a hang has not loaded by it), it is taken as hung, once what it
   * may have posted meanwhile has been delivered (one setImmediate: timers run before the
   * poll phase that delivers it); else the timer is armed again for what is left. Under
   * steady load that is one timer per deadline period.
   */
  private watch(): void {
    const left = this.overdue();
    if (left !== undefined && left <= 0) {
      // The watchdog stays set meanwhile: nothing arms another.
      setImmediate(() => {
        this.watchdog = undefined;
        const still = this.overdue();
        if (still === undefined) return;
        if (still > 0) return this.arm(still);
        this.hung();
      });
      return;
    }
    this.watchdog = undefined;
    if (left !== undefined) this.arm(left);
  }

  /** The ms left before the running worker is taken as hung; undefined when nothing is waited for. */
  private overdue(): number | undefined {
    if (this.closed || !this.worker) return undefined;
    const since = this.replacingSince ?? (this.inFlight.length > 0 ? this.heardAt : undefined);
    return since === undefined ? undefined : since + this.deadlineMs - this.clock();
  }

  /**
   * The worker was silent past the deadline with jobs out: the job it was on fails (or,
   * a worker started after a hang that did not load in time, every job waiting for it);
   * the worker is terminated and another started; every other pending job is sent to that
   * one.
   */
  private hung(): void {
    const w = this.worker;
    let stuck: number | undefined;
    if (this.replacingSince === undefined) {
      const on = Atomics.load(this.working, 0);
      stuck = this.inFlight.find((id) => (id | 0) === on) ?? this.inFlight[0];
    }
    // Unset first: the terminated worker's 'exit' (and any late answer) is then ignored.
    this.worker = undefined;
    this.ready = false;
    this.sent = [];
    this.outbox = [];
    this.inFlight = [];
    const error = ApiError.of(
      503,
      CODES.ruleCheckTimeout,
      `the rules of this write were not checked: the rule checker made no progress for ${this.deadlineMs / 1000} s and was restarted. Nothing was written; send the request again (it may be answered 429 first: this write counted against the ruleset's write rate, if that is limited)`,
    );
    const rest: [number, Pending][] = [];
    for (const [id, p] of this.pending) {
      if (stuck !== undefined && id !== stuck) {
        rest.push([id, p]);
        continue;
      }
      this.pending.delete(id);
      this.timedOut++;
      p.reject(error);
    }
    if (w) void w.terminate();
    const next = this.running();
    if (!next) {
      // No new worker (closed, or out of stops): what is left goes as a stopped worker's does.
      this.replacingSince = undefined;
      for (const [id, p] of rest) {
        this.pending.delete(id);
        this.inThread(p.target, p.custom, p.rules).then(p.resolve, p.reject);
      }
      return;
    }
    this.replacingSince = this.clock();
    for (const [id, p] of rest) this.outbox.push(this.job(id, p.target, p.custom, p.rules));
    this.arm(this.deadlineMs);
  }

  /**
   * Stops the worker. The service is closing: checks not yet answered, and any asked
   * later, reject with WorkerCancelled (their requests get no answer, as a trace's), so
   * no write goes on to a store that is about to close.
   */
  async close(): Promise<void> {
    this.closed = true;
    if (this.watchdog) clearTimeout(this.watchdog);
    this.watchdog = undefined;
    this.replacingSince = undefined;
    const w = this.worker;
    if (w) this.stopped(w);
    if (w) await w.terminate();
  }

  private job(id: number, target: RuleTarget, custom: ReadonlyMap<string, Phase>, rules: readonly JsonObject[]): RuleCheckJob {
    let key = this.customKeys.get(custom);
    if (key === undefined) this.customKeys.set(custom, (key = this.nextCustomKey++));
    if (this.sent.includes(key)) return { id, target, customKey: key, rules };
    this.sent.push(key);
    const forget = this.sent.length > CUSTOM_KEPT ? this.sent.shift() : undefined;
    return { id, target, customKey: key, custom: [...custom], ...(forget !== undefined ? { forget } : {}), rules };
  }

  private running(): Worker | undefined {
    if (this.worker || this.closed || !this.file || this.stops >= MAX_STOPS) return this.worker;
    const on = new SharedArrayBuffer(4);
    const workerData: RuleCheckWorkerData = { on, ...(this.progressMs !== undefined ? { progressMs: this.progressMs } : {}) };
    const w = new Worker(this.file, { workerData });
    // The service's close() stops it; it never keeps a process alive on its own.
    w.unref();
    const working = new Int32Array(on);
    w.on('message', (m: RuleCheckReport) => {
      // A worker replaced (hung, stopped) may still answer: its jobs went elsewhere.
      if (this.worker !== w) return;
      this.heardAt = this.clock();
      if ('ready' in m) {
        this.ready = true;
        if (this.replacingSince !== undefined) {
          // Loaded after a hang: the jobs that waited for it go now.
          this.replacingSince = undefined;
          this.flush(w);
        }
        return;
      }
      // Answers come in the order sent: done so far (with `on`, progress), or the rest of a message of jobs.
      for (const r of m.answers) {
        if (this.inFlight[0] === r.id) this.inFlight.shift();
        else {
          const at = this.inFlight.indexOf(r.id);
          if (at >= 0) this.inFlight.splice(at, 1);
        }
        const p = this.pending.get(r.id);
        if (!p) continue;
        this.pending.delete(r.id);
        this.stats.inWorker++;
        if ('error' in r) p.reject(r.error);
        else p.resolve(r.found as RuleFindings[]);
      }
    });
    w.on('error', () => this.stopped(w));
    w.on('exit', () => this.stopped(w));
    this.worker = w;
    this.working = working;
    return w;
  }

  /** Worker `w` stopped (or is being stopped): the jobs it had not answered are checked here instead. */
  private stopped(w: Worker): void {
    if (this.worker !== w) return;
    this.worker = undefined;
    this.ready = false;
    this.sent = [];
    this.outbox = [];
    this.inFlight = [];
    this.replacingSince = undefined;
    if (!this.closed) this.stops++;
    const left = [...this.pending.values()];
    this.pending.clear();
    for (const p of left) this.inThread(p.target, p.custom, p.rules).then(p.resolve, p.reject);
  }

  private inThread(target: RuleTarget, custom: ReadonlyMap<string, Phase>, rules: readonly JsonObject[]): Promise<RuleFindings[]> {
    this.stats.inThread++;
    return inSlices(rules, (r) => {
      if (this.closed) throw new WorkerCancelled();
      return findRuleProblems(target, custom, r);
    });
  }
}

/** `fn` of each item, in order, on the service's thread, letting other requests in every SLICE_MS. */
export async function inSlices<T, R>(items: readonly T[], fn: (item: T) => R): Promise<R[]> {
  const out: R[] = [];
  let slice = performance.now();
  for (const item of items) {
    if (performance.now() - slice > SLICE_MS) {
      await new Promise((resolve) => setImmediate(resolve));
      slice = performance.now();
    }
    out.push(fn(item));
  }
  return out;
}
