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
 * Deadline (the worker and its watchdog are orderedWorker.ts's): it judges progress, not
 * how long a job or a message takes. While it has jobs out, the worker posts at least once
 * a second (ruleCheckWorker.ts: a message's answers when it is done, else its progress),
 * so a write of thousands of heavy rules, or a turn of several, takes as long as it takes.
 * The worker is taken as hung only when, with jobs not answered, nothing has come from it
 * for RULE_CHECK_DEADLINE_MS. Then it is terminated and a new one started; the job it was
 * on (marked in shared memory: stuck in one rule, it posts nothing) fails with a 503
 * (CODES.ruleCheckTimeout; its write has written nothing, a write writes after its check),
 * and every other job not answered, including any whose answer had not been posted, goes
 * to the new worker, as do jobs that come while it loads. Jobs answered before stand (and
 * routes/rulesets.ts keeps their findings). Never on this thread: whatever hung the worker
 * (a rule that makes a check run away, sent again) must not hang the thread that answers
 * every request. A hang is not counted among the stops that leave checks on this thread.
 * A new worker that does not load within the deadline fails the jobs sent to it.
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Phase } from '../language/scheme/types';
import { OrderedWorker, type Task } from '../orderedWorker';
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
  /** The worker thread and its deadline (orderedWorker.ts). */
  private link: OrderedWorker<Task> | undefined;
  /** Jobs go to the worker: it has loaded (its first message), or was started after a hang. */
  private ready = false;
  /** The running worker has loaded. */
  private loaded = false;
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
  private readonly clock: (() => number) | undefined;
  private readonly progressMs: number | undefined;

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
    this.clock = options.clock;
    this.progressMs = options.progressMs;
    this.running();
  }

  /** What checking each of `rules` finds, in their order. */
  check(target: RuleTarget, custom: ReadonlyMap<string, Phase>, rules: readonly JsonObject[]): Promise<RuleFindings[]> {
    if (rules.length === 0) return Promise.resolve([]);
    const link = this.running();
    if (!link || !this.ready) return this.inThread(target, custom, rules);
    return new Promise((resolve, reject) => {
      const id = this.nextId++;
      this.pending.set(id, { target, custom, rules, resolve, reject });
      this.outbox.push(this.job(id, target, custom, rules));
      if (this.outbox.length === 1) setImmediate(() => this.flush(link));
    });
  }

  private flush(link: OrderedWorker<Task>): void {
    // A worker that stopped meanwhile left these jobs to this thread (stopped()).
    if (this.link !== link || this.outbox.length === 0) return;
    link.post(
      this.outbox,
      this.outbox.map((j) => ({ id: j.id, limitMs: this.deadlineMs })),
    );
    this.outbox = [];
  }

  /**
   * The worker was silent past the deadline with jobs out: the job it was on fails (or,
   * a worker started after a hang that had not loaded, every job sent to it); another
   * worker is started, and every other pending job is sent to it.
   */
  private hung(link: OrderedWorker<Task>, stuck: Task, rest: readonly Task[]): void {
    const failing = this.loaded ? [stuck] : [stuck, ...rest];
    this.drop(link);
    const error = ApiError.of(
      503,
      CODES.ruleCheckTimeout,
      `the rules of this write were not checked: the rule checker made no progress for ${this.deadlineMs / 1000} s and was restarted. Nothing was written; send the request again`,
    );
    for (const t of failing) {
      const p = this.pending.get(t.id);
      if (!p) continue;
      this.pending.delete(t.id);
      this.timedOut++;
      p.reject(error);
    }
    const next = this.running();
    if (!next) {
      // No new worker (closed, or out of stops): what is left goes as a stopped worker's does.
      return this.leftToThread();
    }
    // Never on this thread: whatever hung the worker must not hang the one that answers every request.
    this.ready = true;
    for (const [id, p] of this.pending) this.outbox.push(this.job(id, p.target, p.custom, p.rules));
    this.flush(next);
  }

  /**
   * Stops the worker. The service is closing: checks not yet answered, and any asked
   * later, reject with WorkerCancelled (their requests get no answer, as a trace's), so
   * no write goes on to a store that is about to close.
   */
  async close(): Promise<void> {
    this.closed = true;
    const link = this.link;
    if (link) this.drop(link);
    // Closed: each rejects with WorkerCancelled there.
    this.leftToThread();
    if (link) await link.terminate();
  }

  private job(id: number, target: RuleTarget, custom: ReadonlyMap<string, Phase>, rules: readonly JsonObject[]): RuleCheckJob {
    let key = this.customKeys.get(custom);
    if (key === undefined) this.customKeys.set(custom, (key = this.nextCustomKey++));
    if (this.sent.includes(key)) return { id, target, customKey: key, rules };
    this.sent.push(key);
    const forget = this.sent.length > CUSTOM_KEPT ? this.sent.shift() : undefined;
    return { id, target, customKey: key, custom: [...custom], ...(forget !== undefined ? { forget } : {}), rules };
  }

  private running(): OrderedWorker<Task> | undefined {
    if (this.link || this.closed || !this.file || this.stops >= MAX_STOPS) return this.link;
    const workerData: RuleCheckWorkerData = this.progressMs !== undefined ? { progressMs: this.progressMs } : {};
    const link: OrderedWorker<Task> = new OrderedWorker(this.file, {
      workerData: { ...workerData },
      ...(this.clock ? { clock: this.clock } : {}),
      onMessage: (m) => this.answered(link, m as RuleCheckReport),
      onHung: (stuck, rest) => this.hung(link, stuck, rest),
      onStopped: () => {
        // Not a hang: the worker crashed or exited. Its jobs are checked here instead.
        this.drop(link);
        if (!this.closed) this.stops++;
        this.leftToThread();
      },
    });
    this.link = link;
    return link;
  }

  private answered(link: OrderedWorker<Task>, m: RuleCheckReport): void {
    if ('ready' in m) {
      this.loaded = this.ready = true;
      return;
    }
    // Answers come in the order sent: done so far (with `on`, progress), or the rest of a message of jobs.
    for (const r of m.answers) {
      link.answered(r.id);
      const p = this.pending.get(r.id);
      if (!p) continue;
      this.pending.delete(r.id);
      this.stats.inWorker++;
      if ('error' in r) p.reject(r.error);
      else p.resolve(r.found as RuleFindings[]);
    }
  }

  /** Forgets the worker `link` (stopped, hung or closing): what it held is the caller's to settle. */
  private drop(link: OrderedWorker<Task>): void {
    if (this.link !== link) return;
    this.link = undefined;
    this.ready = this.loaded = false;
    this.sent = [];
    this.outbox = [];
  }

  /** Every pending job, checked on this thread (no worker to send it to). */
  private leftToThread(): void {
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
