/**
 * The security-events sink: `record()` turns the evaluated request into its events
 * (fromEvaluation.ts: a few µs, nothing when no rule acted) and queues them; a timer
 * writes the queue in one transaction, off the request path.
 *
 * Batches: a flush runs FLUSH_MS after the first queued request, or at once (next turn of
 * the event loop) when BATCH_REQUESTS are queued, and writes SLICE_REQUESTS requests per
 * turn until the queue is empty, so the proxy's requests are served in between. So a
 * SIGKILL loses at most the requests queued and not yet written — at most FLUSH_MS
 * (200 ms) of traffic, and a flush is started for every 500 requests — and never corrupts
 * the store: each slice is one SQLite transaction (or part of the service's group
 * commit), committed whole or rolled back by SQLite on the next open. When the store
 * cannot keep up, the queue stops at MAX_QUEUED requests and later ones are counted in
 * `dropped` instead of growing memory without bound.
 *
 * Retention (`--events-retention`, `--events-max-rows`) runs after a flush at most once per
 * PRUNE_MS: events older than the retention go, then the oldest beyond the row limit, at
 * most PRUNE_CHUNK rows per pass so a pass never holds the event loop for long. The hourly
 * counts (schema.ts) are kept in step on insert and on delete.
 */
import { findManagedRuleset, rulesetVersion } from '../../rulesets/catalog';
import type { ManagedCatalog } from '../../rulesets/catalog';
import { defaultCatalog } from '../../managed/catalog';
import type { EvaluatedRequest, EvaluatedRequestSink } from '../../evaluatedRequest';
import type { SqlValue, Store } from '../store';
import { eventsOf, type CategoriesOf, type SecurityEvent } from './fromEvaluation';
import { EVENTS_SCOPE, HOUR_MS, HOURLY_KEY } from './schema';

export const FLUSH_MS = 200;
export const BATCH_REQUESTS = 500;
export const MAX_QUEUED = 20_000;
/** Requests written per turn of the event loop: ~3-4 ms of work at one event each; fewer would commit (and rewrite the same WAL pages) more often. */
const SLICE_REQUESTS = 200;
const PRUNE_MS = 10_000;
const PRUNE_CHUNK = 50_000;

export const DEFAULT_RETENTION_MS = 7 * 24 * HOUR_MS;
export const DEFAULT_MAX_ROWS = 5_000_000;

export interface SecurityEventsOptions {
  /** Events older than this are deleted (ms; default 7 days). */
  readonly retentionMs?: number;
  /** At most this many events are kept; the oldest go first (default 5,000,000). */
  readonly maxRows?: number;
  readonly flushMs?: number;
  readonly now?: () => number;
  readonly catalog?: ManagedCatalog;
  /** Where a failed batch is reported (the batch is dropped, the service goes on). */
  readonly log?: (line: string) => void;
}

export interface EventStats {
  readonly written: number;
  readonly dropped: number;
  readonly queued: number;
}

const COLUMNS = [
  'ray_id', 'time', 'zone_id', 'action', 'outcome', 'rule_action', 'source', 'phase', 'ruleset_id', 'rule_id', 'ref', 'description',
  'client_ip', 'country', 'asn', 'method', 'host', 'path', 'query', 'user_agent', 'http_version', 'response_status',
  'anomaly_score', 'anomaly_scores', 'defaulted_fields', 'body_truncated', 'origin',
] as const;
// One prepared statement run per event, its values bound: 16 µs of CPU per event, where
// one statement per batch with the rows as a JSON array for SQLite to unpack (json_each)
// took 42 µs — the WASM build parses JSON slower than binding costs.
const INSERT = `INSERT INTO security_events (${COLUMNS.join(', ')}) VALUES (${COLUMNS.map(() => '?').join(', ')})`;
const ROLLUP_KEY = HOURLY_KEY;
const ROLLUP_ADD = `INSERT INTO security_events_hourly (${ROLLUP_KEY}, count) SELECT ${[0, 1, 2, 3, 4, 5, 6, 7, 8].map((i) => `value ->> ${i}`).join(', ')} FROM json_each(?) WHERE true
  ON CONFLICT (${ROLLUP_KEY}) DO UPDATE SET count = count + excluded.count`;

export class SecurityEvents implements EvaluatedRequestSink {
  /** Per queued request, its events (never empty). */
  private queue: SecurityEvent[][] = [];
  private timer: NodeJS.Timeout | undefined;
  private immediate: NodeJS.Immediate | undefined;
  private lastPrune = 0;
  private rows: number;
  private written = 0;
  private dropped = 0;
  private closed = false;
  private overflowing = false;
  private readonly now: () => number;
  private readonly categoriesOf: CategoriesOf;

  constructor(
    private readonly store: Store,
    private readonly options: SecurityEventsOptions = {},
  ) {
    this.now = options.now ?? Date.now;
    this.categoriesOf = attackCategories(options.catalog ?? defaultCatalog);
    this.rows = Number(store.get<{ n: number }>('SELECT COUNT(*) AS n FROM security_events')?.n ?? 0);
  }

  record(request: EvaluatedRequest): void {
    this.enqueue(request, 'proxy');
  }

  /** A request the service's Trace evaluated (its events say `origin: trace`). */
  recordTrace(request: EvaluatedRequest): void {
    this.enqueue(request, 'trace');
  }

  private enqueue(request: EvaluatedRequest, origin: 'proxy' | 'trace'): void {
    if (this.closed) return;
    if (this.queue.length >= MAX_QUEUED) {
      // Said once per overflow (the flag clears when a batch is written), not per request.
      if (!this.overflowing) this.options.log?.(`security events: ${MAX_QUEUED} requests wait for the store; events are dropped until it catches up`);
      this.overflowing = true;
      this.dropped++;
      return;
    }
    // The request becomes its events now and only they wait for the batch: a request no
    // rule acted on (most of the traffic) is not kept at all, and one that was keeps a few
    // small objects instead of its evaluation (a managed ruleset's trace has hundreds of
    // entries) — less for the garbage collector to copy while the batch waits, and no
    // hundreds of MB when the store falls behind.
    const events = eventsOf(request, this.categoriesOf, origin);
    if (events.length === 0) return;
    this.queue.push(events);
    if (this.queue.length >= BATCH_REQUESTS) {
      this.immediate ??= setImmediate(() => this.drain());
    } else if (!this.timer && !this.immediate) {
      this.timer = setTimeout(() => this.drain(), this.options.flushMs ?? FLUSH_MS);
      this.timer.unref();
    }
  }

  get stats(): EventStats {
    return { written: this.written, dropped: this.dropped, queued: this.queue.length };
  }

  /** Writes everything queued now (tests, shutdown). */
  flush(): void {
    this.unschedule();
    while (this.queue.length > 0) this.writeSlice(this.queue.length);
    if (this.now() - this.lastPrune >= PRUNE_MS) this.prune();
  }

  /**
   * The timer's flush: SLICE_REQUESTS requests per turn of the event loop, so the proxy's
   * requests are served between slices instead of waiting behind a whole batch.
   */
  private drain(): void {
    this.unschedule();
    this.writeSlice(SLICE_REQUESTS);
    if (this.queue.length > 0) this.immediate = setImmediate(() => this.drain());
    else if (this.now() - this.lastPrune >= PRUNE_MS) this.prune();
  }

  private unschedule(): void {
    if (this.timer) clearTimeout(this.timer);
    if (this.immediate) clearImmediate(this.immediate);
    this.timer = undefined;
    this.immediate = undefined;
  }

  private writeSlice(n: number): void {
    const batch = this.queue.splice(0, n);
    try {
      const events = batch.flat();
      this.store.write(() => this.insert(events), EVENTS_SCOPE);
      this.written += events.length;
      this.overflowing = false;
      this.rows += events.length;
    } catch (e) {
      this.dropped += batch.length;
      this.options.log?.(`security events: a batch of ${batch.length} requests was not written: ${(e as Error).message}`);
    }
  }

  private insert(events: readonly SecurityEvent[]): void {
    const hourly = new Map<string, unknown[]>();
    for (const e of events) {
      this.store.run(INSERT, [
        e.rayId, e.time, e.zoneId, e.action, e.outcome, e.ruleAction, e.source, e.phase, e.rulesetId, e.ruleId, text(e.ref), text(e.description),
        text(e.clientIp), e.country, e.asn, text(e.method), text(e.host), text(e.path), text(e.query), text(e.userAgent), text(e.httpVersion), e.responseStatus,
        e.anomalyScore, JSON.stringify(e.anomalyScores), JSON.stringify(e.defaultedFields), e.bodyTruncated ? 1 : 0, e.origin,
      ] as SqlValue[]);
      const values = [e.zoneId, Math.floor(e.time / HOUR_MS) * HOUR_MS, e.action, e.source, e.rulesetId, e.ruleId, text(e.description), e.origin];
      const k = values.join('\u0000');
      const h = hourly.get(k);
      if (h) (h[8] as number)++;
      else hourly.set(k, [...values, 1]);
    }
    this.store.run(ROLLUP_ADD, [JSON.stringify([...hourly.values()])]);
  }

  /** Deletes what retention and the row limit no longer keep (see the header). */
  prune(): void {
    this.lastPrune = this.now();
    try {
      const retention = this.options.retentionMs ?? DEFAULT_RETENTION_MS;
      const cutoff = this.now() - retention;
      const old = this.store.get<{ seq: number }>('SELECT seq FROM security_events WHERE time < ? ORDER BY time DESC LIMIT 1', [cutoff]);
      // Events arrive nearly in time order, so "older than the cutoff" is a prefix of seq.
      if (old) this.deleteThrough(Math.min(old.seq, this.oldestSeq() + PRUNE_CHUNK - 1), cutoff);
      const excess = this.rows - (this.options.maxRows ?? DEFAULT_MAX_ROWS);
      if (excess > 0) this.deleteThrough(this.oldestSeq() + Math.min(excess, PRUNE_CHUNK) - 1);
    } catch (e) {
      this.options.log?.(`security events: pruning failed: ${(e as Error).message}`);
    }
  }

  private oldestSeq(): number {
    return Number(this.store.get<{ s: number | null }>('SELECT MIN(seq) AS s FROM security_events')?.s ?? 0);
  }

  /** Deletes events with seq <= `seq` (and, with `before`, only those older than it). */
  private deleteThrough(seq: number, before?: number): void {
    const where = before === undefined ? 'seq <= ?' : 'seq <= ? AND time < ?';
    const params = before === undefined ? [seq] : [seq, before];
    this.store.write(() => {
      this.store.run(
        `INSERT INTO security_events_hourly (${ROLLUP_KEY}, count)
         SELECT zone_id, (time / ${HOUR_MS}) * ${HOUR_MS}, action, source, ruleset_id, rule_id, description, origin, -COUNT(*)
           FROM security_events WHERE ${where} GROUP BY 1, 2, 3, 4, 5, 6, 7, 8
         ON CONFLICT (${ROLLUP_KEY}) DO UPDATE SET count = count + excluded.count`,
        params,
      );
      this.store.run('DELETE FROM security_events_hourly WHERE count <= 0');
      this.rows -= this.store.run(`DELETE FROM security_events WHERE ${where}`, params);
    }, EVENTS_SCOPE);
  }

  /** Writes what is queued and stops taking events. */
  close(): void {
    this.flush();
    this.closed = true;
  }
}

/** A stored text: NUL cannot be stored (store.ts `run`), so it becomes U+FFFD. */
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
