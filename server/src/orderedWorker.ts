/**
 * A worker thread that works through what it is sent in order, watched by a deadline: the
 * one mechanism under the language server's Evaluate and the service's Trace
 * (timedWorker.ts), the service's rule checks (service/ruleChecker.ts) and the WAF proxy's
 * evaluation workers (proxy/evaluationPool.ts).
 *
 * The owner posts messages, each carrying tasks (ids it chose, unique within the worker,
 * each with a time limit), and tells it which task each answer settles. The worker marks
 * the task it starts in shared memory (`taskMarker`), so the owner knows which one it is on
 * even when answers are posted in batches, or none at all because it is stuck in one.
 *
 * Deadline: the worker is taken as hung when, with tasks not answered, it has posted
 * nothing (an answer, a progress report, anything) for the limit of the task it is on,
 * counted from its last post or, when it was idle, from when tasks went out to it. So a
 * task that reports progress takes as long as it takes; an owner may change a task's
 * limit (Evaluate: the compile's allowance goes once the first progress comes). One timer,
 * armed again only when a deadline moves earlier, not one per message. When it fires past
 * the deadline, one more turn (setImmediate: timers run before the poll phase that
 * delivers what the worker has posted) lets an answer already sent arrive before the
 * worker is judged. Then the thread is terminated and the owner is told which task it was
 * on and which others were not answered: it fails the one and sends the rest elsewhere.
 *
 * A thread that stops by itself (an uncaught error, an exit) tells the owner once, with
 * the tasks not answered. After either, or after terminate(), nothing more is reported.
 */
import { Worker, workerData } from 'node:worker_threads';

/** What an owner sends: `id` above 0 and unique within the worker; `limitMs` the silence allowed while the worker is on it. */
export interface Task {
  readonly id: number;
  limitMs: number;
}

export interface OrderedWorkerHooks<T extends Task> {
  /** Given to the thread as its workerData (the task marker is added under MARKER). */
  readonly workerData?: Readonly<Record<string, unknown>>;
  /** The clock deadlines are judged by, in ms (default performance.now; tests move their own). */
  readonly clock?: () => number;
  /** Each message the thread posts (the deadline has been restarted before). */
  onMessage(message: unknown): void;
  /** The thread was silent past the limit of `stuck`, the task it was on, and was terminated; `rest` are the others not answered, in order. */
  onHung(stuck: T, rest: T[]): void;
  /** The thread stopped by itself; `left` are the tasks it had not answered, in order. */
  onStopped(error: Error, left: T[]): void;
}

/** The workerData key of the shared Int32 in which the thread marks the task it is on. */
export const MARKER = 'orderedWorkerTask';

export class OrderedWorker<T extends Task> {
  readonly thread: Worker;
  /** The tasks sent and not answered, in the order sent. */
  private readonly tasks: T[] = [];
  /** The same, by id as the Int32 marker holds it (`id | 0`): O(1) however long the queue. */
  private readonly byId = new Map<number, T>();
  /** Judged by the hooks' clock: when the thread last posted or, idle, was sent tasks. */
  private heard = 0;
  private readonly marker = new Int32Array(new SharedArrayBuffer(4));
  private readonly clock: () => number;
  private watchdog: NodeJS.Timeout | undefined;
  /** When the armed watchdog fires, by the clock. */
  private watchdogAt = 0;
  /** The one more turn after the watchdog fired past the deadline (see the file's comment). */
  private recheck: NodeJS.Immediate | undefined;
  private ended = false;

  constructor(
    file: string,
    private readonly hooks: OrderedWorkerHooks<T>,
  ) {
    this.clock = hooks.clock ?? (() => performance.now());
    this.thread = new Worker(file, { workerData: Object.assign({}, hooks.workerData, { [MARKER]: this.marker.buffer }) });
    this.thread.on('message', (m: unknown) => {
      // A thread judged hung (or closed) may still post: its tasks went elsewhere.
      if (this.ended) return;
      this.heard = this.clock();
      this.hooks.onMessage(m);
      this.arm();
    });
    this.thread.on('error', (e) => this.stopped(e));
    this.thread.on('exit', (code) => this.stopped(new Error(`exit code ${code}`)));
    // After the listeners (adding a 'message' listener refs the thread again): an idle thread
    // never keeps a process alive on its own; one with tasks out does, until they are answered.
    this.thread.unref();
  }

  /** When the thread last posted (or, idle, was sent tasks), by the hooks' clock. */
  get heardAt(): number {
    return this.heard;
  }

  /** The tasks not answered, in the order sent. */
  get pending(): readonly T[] {
    return this.tasks;
  }

  /** Posts `message`, which carries `tasks` (none: a message the thread does not answer). */
  post(message: unknown, tasks: readonly T[] = []): void {
    if (this.ended) throw new Error('the worker thread was stopped');
    // An idle thread's silence so far is no sign of a hang: it counts from now.
    if (this.tasks.length === 0 && tasks.length > 0) {
      this.heard = this.clock();
      this.thread.ref();
    }
    for (const t of tasks) {
      this.tasks.push(t);
      this.byId.set(t.id | 0, t);
    }
    this.thread.postMessage(message);
    this.arm();
  }

  /** The task `id` is answered (its answer came in the message being handled); undefined if it was not pending. */
  answered(id: number): T | undefined {
    const task = this.byId.get(id | 0);
    if (task?.id !== id) return undefined;
    this.byId.delete(id | 0);
    this.tasks.splice(this.tasks[0] === task ? 0 : this.tasks.indexOf(task), 1);
    if (this.tasks.length === 0) this.thread.unref();
    return task;
  }

  /** Stops the thread; nothing more is reported (the owner settles what it had sent). */
  terminate(): Promise<number> {
    this.end();
    return this.thread.terminate();
  }

  /** The task the thread is on: the one it marked, if not answered yet, else the first not answered. */
  private current(): T | undefined {
    const marked = this.byId.get(Atomics.load(this.marker, 0));
    return marked ?? this.tasks[0];
  }

  /** The ms left before the thread is taken as hung; undefined when nothing is awaited. */
  private left(): number | undefined {
    const task = this.ended ? undefined : this.current();
    return task && this.heard + task.limitMs - this.clock();
  }

  /** Arms the watchdog for the deadline, unless it is armed to fire by then already. */
  private arm(): void {
    const left = this.left();
    if (left === undefined) return;
    const at = this.clock() + left;
    if (this.watchdog && this.watchdogAt <= at) return;
    clearTimeout(this.watchdog);
    this.watchdogAt = at;
    // (setTimeout takes at most 2^31 - 1 ms: past it, watch() arms again for the rest.)
    this.watchdog = setTimeout(() => this.watch(), Math.min(Math.max(0, left), 2 ** 31 - 1));
    this.watchdog.unref();
  }

  private watch(): void {
    this.watchdog = undefined;
    const left = this.left();
    if (left === undefined) return;
    if (left > 0) return this.arm();
    // What the thread posted before the deadline may still wait for the poll phase.
    this.recheck ??= setImmediate(() => {
      this.recheck = undefined;
      const still = this.left();
      if (still === undefined) return;
      if (still > 0) return this.arm();
      this.hung();
    });
  }

  private hung(): void {
    const stuck = this.current()!;
    const rest = this.tasks.filter((t) => t !== stuck);
    this.end();
    void this.thread.terminate();
    this.hooks.onHung(stuck, rest);
  }

  private stopped(error: Error): void {
    if (this.ended) return;
    const left = [...this.tasks];
    this.end();
    this.hooks.onStopped(error, left);
  }

  private end(): void {
    this.ended = true;
    this.tasks.length = 0;
    this.byId.clear();
    clearTimeout(this.watchdog);
    this.watchdog = undefined;
    if (this.recheck) clearImmediate(this.recheck);
    this.recheck = undefined;
  }
}

/** The thread's side: marks the task it starts (`mark(id)` before working on it), for the owner's deadline. */
export function taskMarker(): (id: number) => void {
  const buffer = (workerData as Record<string, unknown> | null)?.[MARKER];
  const cell = buffer instanceof SharedArrayBuffer ? new Int32Array(buffer) : undefined;
  return (id) => {
    if (cell) Atomics.store(cell, 0, id);
  };
}
