/**
 * The security-events sink and reader. `record()` turns the evaluated request into its
 * events (fromEvaluation.ts: a few µs, nothing when no rule acted), each as the row it is
 * stored as, and queues them; a timer hands the queue to the events thread
 * (eventsWorker.ts), which owns the events file (eventsDb.ts) and commits what it gathers
 * every 200 ms. So the WAF proxy's thread never runs an insert, a commit or a checkpoint.
 *
 * Hand-over: FLUSH_MS (20 ms) after the first queued request, or at once (next turn of the
 * event loop) when BATCH_REQUESTS are queued. Short, so that the queued rows are garbage
 * before the proxy thread's next young-generation collection instead of being copied and
 * promoted by it (at 200 ms they all were). A SIGKILL loses at most what was queued or
 * gathered and not yet committed: about 220 ms of traffic (at most BATCH_REQUESTS requests
 * queued here), plus the transaction being written; the file is never left corrupt
 * (eventsDb.ts). When the thread cannot keep up, queued and unwritten requests stop at
 * MAX_QUEUED, or their rows at MAX_QUEUED_BYTES (a row repeats the request's path, query and
 * User-Agent, each up to the header size limit), and later ones are counted in `dropped`
 * instead of growing memory without bound.
 *
 * Reads (the GraphQL endpoint, query.ts) go to the same thread, after the batches handed
 * over before them. Without the built thread (server/out/eventsWorker.js: running from
 * source before `npm run build`) the same code answers on this thread, a turn later.
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Worker } from 'node:worker_threads';
import { LogThrottle } from '../../logThrottle';
import { findManagedRuleset, rulesetVersion } from '../../rulesets/catalog';
import type { ManagedCatalog } from '../../rulesets/catalog';
import { defaultCatalog } from '../../managed/catalog';
import type { EvaluatedRequest, EvaluatedRequestSink } from '../../evaluatedRequest';
import type { Row, SqlValue, Store } from '../store';
import { answer, EventsDb, type EventRow, type FromEvents, type Retention, type ToEvents } from './eventsDb';
import { eventsOf, type CategoriesOf, type SecurityEvent } from './fromEvaluation';
import { eventsFileOf } from './schema';

export const FLUSH_MS = 20;
export const BATCH_REQUESTS = 500;
export const MAX_QUEUED = 20_000;
/** The estimated memory of the rows queued or handed over and not yet written (`rowBytes`). */
export const MAX_QUEUED_BYTES = 64 * 1024 * 1024;
/** Dropped batches are logged one a window this long, with a count of the others (logThrottle.ts). */
export const FAILED_LOG_MS = 60_000;

export interface SecurityEventsOptions extends Retention {
  readonly flushMs?: number;
  readonly now?: () => number;
  readonly catalog?: ManagedCatalog;
  /** Where a failed batch is reported (the batch is dropped, the service goes on). */
  readonly log?: (line: string) => void;
  /** false (`serve --events off`): nothing is recorded; the stored events are still read. */
  readonly recording?: boolean;
  /** The events thread's script; undefined: answer on this thread (tests of that path). Default: the built one. */
  readonly workerFile?: string | undefined;
  /** MAX_QUEUED_BYTES, lower in tests. */
  readonly maxQueuedBytes?: number;
}

export interface EventStats {
  readonly written: number;
  readonly dropped: number;
  /** Requests queued here or handed over and not yet written. */
  readonly queued: number;
}

/** The built events thread, beside the bundle or in server/out when run from source. */
export function eventsWorkerFile(): string | undefined {
  return [join(__dirname, 'eventsWorker.js'), resolve(__dirname, '../../../out/eventsWorker.js')].find((f) => existsSync(f));
}

interface Pending {
  /** Requests in a write (0 for a read). */
  readonly requests: number;
  resolve(f: FromEvents): void;
}

export class SecurityEvents implements EvaluatedRequestSink {
  /** Rows waiting to be handed over, and how many requests they are. */
  private queue: EventRow[] = [];
  private queuedRequests = 0;
  /** Messages handed over and not yet answered, in order (the owner answers in order). */
  private readonly pending: Pending[] = [];
  private inFlightRequests = 0;
  /** The estimated bytes of the rows queued and of those handed over and not yet answered. */
  private queuedBytes = 0;
  private inFlightBytes = 0;
  private timer: NodeJS.Timeout | undefined;
  private immediate: NodeJS.Immediate | undefined;
  private worker: Worker | undefined;
  /** The owner on this thread when there is no built worker. */
  private local: EventsDb | undefined;
  private written = 0;
  private dropped = 0;
  /** Dropped batches' log lines (failedWrite). */
  private readonly failedLog: LogThrottle;
  private readonly pruneLog: LogThrottle;
  private closed = false;
  /** Requests whose events were dropped in the current overflow (the queue full); 0 when there is none. */
  private overflowing = 0;
  private readonly now: () => number;
  private readonly categoriesOf: CategoriesOf;
  readonly file: string;
  private readonly workerFile: string | undefined;

  constructor(
    store: Store,
    private readonly options: SecurityEventsOptions = {},
  ) {
    this.file = eventsFileOf(store.realFile);
    this.now = options.now ?? Date.now;
    this.categoriesOf = attackCategories(options.catalog ?? defaultCatalog);
    this.workerFile = 'workerFile' in options ? options.workerFile : eventsWorkerFile();
    this.failedLog = new LogThrottle((l) => options.log?.(l), { burst: 1, windowMs: FAILED_LOG_MS, summary: (n, s) => `security events: ${n} more batches were not written in the last ${s} s` });
    this.pruneLog = new LogThrottle((l) => options.log?.(l), { burst: 1, windowMs: FAILED_LOG_MS, summary: (n, s) => `security events: pruning failed after ${n} more batches in the last ${s} s (the batches are stored)` });
  }

  record(request: EvaluatedRequest): void {
    this.enqueue(request, 'proxy');
  }

  /** A request the service's Trace evaluated (its events say `origin: trace`). */
  recordTrace(request: EvaluatedRequest): void {
    this.enqueue(request, 'trace');
  }

  private enqueue(request: EvaluatedRequest, origin: 'proxy' | 'trace'): void {
    if (this.closed || this.options.recording === false) return;
    // The request becomes its rows now and only they wait for the batch: a request no rule
    // acted on (most of the traffic) is not kept at all, and one that was keeps a few small
    // arrays instead of its evaluation (a managed ruleset's trace has hundreds of entries).
    const events = eventsOf(request, this.categoriesOf, origin);
    if (events.length === 0) return;
    const rows = events.map(eventRow);
    const bytes = rows.reduce((n, r) => n + rowBytes(r), 0);
    const maxBytes = this.options.maxQueuedBytes ?? MAX_QUEUED_BYTES;
    const full =
      this.queuedRequests + this.inFlightRequests >= MAX_QUEUED ? `${MAX_QUEUED} requests` : this.queuedBytes + this.inFlightBytes + bytes > maxBytes ? `${mib(maxBytes)} of events` : undefined;
    if (full !== undefined) {
      // Said once per overflow, and again when it ends (a batch is written) with how many went.
      if (this.overflowing === 0) this.options.log?.(`security events: ${full} wait for the events file; events are dropped until it catches up`);
      this.overflowing++;
      this.dropped++;
      return;
    }
    for (const r of rows) this.queue.push(r);
    this.queuedRequests++;
    this.queuedBytes += bytes;
    if (this.queuedRequests >= BATCH_REQUESTS) {
      this.immediate ??= setImmediate(() => this.handOver());
    } else if (!this.timer && !this.immediate) {
      this.timer = setTimeout(() => this.handOver(), this.options.flushMs ?? FLUSH_MS);
      this.timer.unref();
    }
  }

  get stats(): EventStats {
    return { written: this.written, dropped: this.dropped, queued: this.queuedRequests + this.inFlightRequests };
  }

  /** Hands the queue over and resolves when everything recorded so far is written (tests, shutdown). */
  async flush(): Promise<void> {
    this.handOver();
    await this.send({ op: 'all', sql: 'SELECT 1', params: [] }, 0);
  }

  /** The rows of a query over the events file (query.ts), after every batch handed over before it. */
  async all(sql: string, params: readonly SqlValue[] = []): Promise<Row[]> {
    const reply = await this.send({ op: 'all', sql, params }, 0);
    if (!reply.ok) throw new Error(reply.error);
    return reply.rows ?? [];
  }

  /** Writes what is queued, stops taking events and closes the events file. */
  async close(): Promise<void> {
    if (this.closed) return;
    // Events recorded while a flush is under way are written too, not refused as "closed".
    do await this.flush();
    while (this.queuedRequests > 0);
    this.failedLog.close();
    this.pruneLog.close();
    this.closed = true;
    if (this.worker || this.local) await this.send({ op: 'close' }, 0);
    await this.worker?.terminate();
    this.worker = undefined;
    this.local = undefined;
  }

  private handOver(): void {
    if (this.timer) clearTimeout(this.timer);
    if (this.immediate) clearImmediate(this.immediate);
    this.timer = undefined;
    this.immediate = undefined;
    if (this.queuedRequests === 0) return;
    const rows = this.queue;
    const count = rows.length;
    const requests = this.queuedRequests;
    const bytes = this.queuedBytes;
    this.queue = [];
    this.queuedRequests = 0;
    this.queuedBytes = 0;
    this.inFlightRequests += requests;
    this.inFlightBytes += bytes;
    // The reply comes after the events thread's commit (eventsWorker.ts COMMIT_MS, 200 ms): what waits for it
    // holds the count, not the rows, which are copied to the thread and garbage from here on
    // (held, they outlived the proxy thread's young-generation collections: ~170 KB copied each).
    void this.send({ op: 'write', rows, now: this.now() }, requests).then((reply) => {
      this.inFlightRequests -= requests;
      this.inFlightBytes -= bytes;
      if (reply.ok) {
        this.written += count;
        if (this.overflowing > 0) this.options.log?.(`security events: caught up; the events of ${this.overflowing} requests were dropped while the events file was behind`);
        this.overflowing = 0;
        // The batch is stored; only the pruning after it failed (it runs again on the next batch and every PRUNE_MS).
        if (reply.pruneError !== undefined) this.pruneLog.line(`security events: the batch is stored, but pruning ${this.file} after it failed: ${reply.pruneError}`);
      } else {
        this.dropped += requests;
        this.failedWrite(requests, reply.error ?? 'unknown error');
      }
    });
  }

  /**
   * Says that a batch was dropped: the first of a minute at once, the others counted into one
   * line (logThrottle.ts; a batch goes every FLUSH_MS, so an events file that cannot be
   * opened would otherwise log 50 lines a second). The file and what to do with it are named
   * when it is the file that fails.
   */
  private failedWrite(requests: number, error: string): void {
    const fix = /^cannot open /.test(error) ? `; move ${this.file} aside (or free its disk) and restart serve: the events start over in a new file` : '';
    this.failedLog.line(`security events: a batch of ${requests} requests was not written: ${error}${fix}`);
  }

  private send(m: ToEvents, requests: number): Promise<FromEvents> {
    if (this.closed && m.op !== 'close') return Promise.resolve({ ok: false, error: 'the security events are closed' });
    return new Promise((resolve) => {
      this.pending.push({ requests, resolve });
      if (!this.workerFile) {
        // No thread: the same answer, on this thread, a turn later (as a reply would come).
        setImmediate(() => {
          let reply: FromEvents;
          try {
            this.local ??= new EventsDb(this.file, this.options);
            reply = answer(this.local, m);
          } catch (e) {
            reply = { ok: false, error: `cannot open ${this.file}: ${(e as Error).message}` };
          }
          this.pending.shift()?.resolve(reply);
        });
        return;
      }
      const worker = this.thread();
      worker.ref();
      worker.postMessage(m);
    });
  }

  /** The events thread, started on first use; a crashed one fails what it held and is started again on the next message. */
  private thread(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(this.workerFile!, { workerData: { file: this.file, retention: { retentionMs: this.options.retentionMs, maxRows: this.options.maxRows } } });
    this.worker = worker;
    worker.on('message', (reply: FromEvents) => {
      this.pending.shift()?.resolve(reply);
      // An idle thread does not keep the process alive; one with work in hand does.
      if (this.pending.length === 0) worker.unref();
    });
    const fail = (why: string) => {
      if (this.worker !== worker) return;
      this.worker = undefined;
      for (const p of this.pending.splice(0)) p.resolve({ ok: false, error: `the security events thread ${why}` });
    };
    worker.on('error', (e) => {
      this.options.log?.(`security events: the events thread failed: ${e.stack ?? e.message}`);
      fail(`failed: ${e.message}`);
    });
    worker.on('exit', (code) => fail(`exited with code ${code}`));
    return worker;
  }
}

/** An event as the row it is stored as (EVENT_COLUMNS' order). */
function eventRow(e: SecurityEvent): EventRow {
  return [
    e.rayId, e.time, e.zoneId, e.action, e.outcome, e.ruleAction, e.source, e.phase, e.rulesetId, e.ruleId, text(e.ref), text(e.description),
    text(e.clientIp), e.country, e.asn, text(e.method), text(e.host), text(e.path), text(e.query), text(e.userAgent), text(e.httpVersion), e.responseStatus,
    e.anomalyScore, JSON.stringify(e.anomalyScores), JSON.stringify(e.defaultedFields), e.bodyTruncated ? 1 : 0, e.origin,
  ];
}

/** A row's memory, estimated high: two bytes a character of its texts, 16 a value. */
function rowBytes(row: EventRow): number {
  let n = 0;
  for (const v of row) n += typeof v === 'string' ? 16 + 2 * v.length : 16;
  return n;
}

const mib = (bytes: number) => `${Math.round((10 * bytes) / 1048576) / 10} MiB`;

/** A stored text: node-sqlite3-wasm binds text as a C string, so a NUL would cut it; it becomes U+FFFD. */
function text(s: string): string {
  return s.includes('\u0000') ? s.replaceAll('\u0000', '\uFFFD') : s;
}

/** The `attack-*` categories of managed rules, by ruleset and rule id (latest versions). */
function attackCategories(catalog: ManagedCatalog): CategoriesOf {
  const cache = new Map<string, ReadonlyMap<string, readonly string[]>>();
  return (rulesetId, ruleId) => {
    if (rulesetId === undefined || ruleId === undefined) return undefined;
    let rules = cache.get(rulesetId);
    if (!rules) {
      const m = new Map<string, readonly string[]>();
      const rs = findManagedRuleset(catalog, rulesetId);
      for (const r of (rs && rulesetVersion(rs)?.rules) ?? []) {
        if (r.id) m.set(r.id, (r.categories ?? []).filter((c) => c.startsWith('attack-')));
      }
      rules = m;
      cache.set(rulesetId, rules);
    }
    return rules.get(ruleId);
  };
}
