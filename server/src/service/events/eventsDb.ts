/**
 * The security events' own SQLite file, `<service db>-events` beside the service's store
 * (named like SQLite's `-wal`: copy or move them together). Its owner is the events
 * thread (eventsWorker.ts), not the service's event loop: an event's insert, its commit
 * and the log's checkpoints (whose fsyncs SQLite runs synchronously) then cost
 * the WAF proxy's thread nothing, and a batch of events never shares a group commit with
 * an API write.
 *
 * Durability: WAL with `synchronous=NORMAL`, one transaction per batch: a batch is on the
 * disk's way once committed, so a SIGKILL loses only what was not yet committed (the
 * batch being written and what waited in the service's queue, writer.ts); a power cut
 * may also lose the last commits before a checkpoint. Never a corrupt file: SQLite
 * rolls an unfinished transaction back when the file opens.
 *
 * Retention (`--events-retention`, `--events-max-rows`) runs after a write at most once
 * per PRUNE_MS: events older than the retention go, then the oldest beyond the row limits,
 * at most PRUNE_CHUNK rows per pass and limit. The hourly counts (schema.ts) are kept in
 * step on insert and on delete.
 *
 * Two row limits, each pruned on its own: the events of traces (`origin = 'trace'`) have a
 * budget of their own, traceBudget(maxRows) (a tenth of the row limit, at least 1 and at
 * most 10,000), and only the other events (the proxy's) count against `maxRows`.
 * A trace needs only read access (Zone WAF Read), so a read-only token tracing in a loop
 * evicts only older trace events, never the proxy's. The file then holds at most
 * maxRows + traceBudget(maxRows) events (until the next pass).
 */
import { clearStaleLock, openSqlite, type Row, type SqlDatabase, type SqlValue } from '../sqlite';
import { EVENT_COLUMNS, eventsSchema, HOUR_MS, HOURLY_KEY } from './schema';

export const PRUNE_MS = 10_000;
const PRUNE_CHUNK = 50_000;
/**
 * Chunks one pass may delete per kind (expired, traces over budget, events over the limit):
 * 500,000 rows every PRUNE_MS keeps up with 50,000 events a second, far beyond what one
 * proxy's thread records.
 */
const PRUNE_CHUNKS_PER_PASS = 10;

export const DEFAULT_RETENTION_MS = 7 * 24 * HOUR_MS;
export const DEFAULT_MAX_ROWS = 5_000_000;
/** The most trace events kept by default, whatever the row limit. */
export const MAX_TRACE_ROWS = 10_000;

/** The trace events' own budget for a row limit: a tenth of it (at least 1), at most MAX_TRACE_ROWS. */
export function traceBudget(maxRows: number): number {
  return Math.min(MAX_TRACE_ROWS, Math.max(1, Math.floor(maxRows / 10)));
}

// The events of traces, as a literal: SQLite uses the partial index security_events_trace
// (schema.ts) only for a WHERE that repeats its own.
const TRACE = "origin = 'trace'";
const NOT_TRACE = "origin <> 'trace'";

export interface Retention {
  /** Events older than this are deleted (ms; default 7 days). */
  readonly retentionMs?: number;
  /** At most this many events other than traces' are kept; the oldest go first (default 5,000,000). Traces' have traceBudget(maxRows) of their own. */
  readonly maxRows?: number;
}

/** One event as stored: its values in EVENT_COLUMNS order (writer.ts `eventRow`). */
export type EventRow = SqlValue[];

// Where the hourly key's values sit in an EventRow (after zone and hour, HOURLY_KEY's order).
const COL = Object.fromEntries(EVENT_COLUMNS.map((c, i) => [c, i])) as Record<(typeof EVENT_COLUMNS)[number], number>;
const INSERT = `INSERT INTO security_events (${EVENT_COLUMNS.join(', ')}) VALUES (${EVENT_COLUMNS.map(() => '?').join(', ')})`;
// One prepared statement run per event, its values bound: where one statement per batch
// with the rows as a JSON array for SQLite to unpack (json_each) took 2.6 times as long —
// the WASM build parses JSON slower than binding costs. The hourly counts of a batch are
// few, so they go in one statement.
const ROLLUP_ADD = `INSERT INTO security_events_hourly (${HOURLY_KEY}, count) SELECT ${[0, 1, 2, 3, 4, 5, 6, 7, 8].map((i) => `value ->> ${i}`).join(', ')} FROM json_each(?) WHERE true
  ON CONFLICT (${HOURLY_KEY}) DO UPDATE SET count = count + excluded.count`;

export class EventsDb {
  private readonly db: SqlDatabase;
  /** Events stored, and how many of them are traces'. */
  private rows: number;
  private traceRows: number;
  private lastPrune = 0;

  constructor(
    readonly file: string,
    private readonly retention: Retention = {},
  ) {
    // node-sqlite3-wasm locks with a `<file>.lock` folder that a killed process leaves
    // behind. The service's claim on its own file (store.ts claim()) makes this process
    // the events file's only user, so a lock found here is a dead process's.
    clearStaleLock(file);
    this.db = openSqlite(file);
    try {
      // As the service's store (store.ts): the only user, WAL without shared memory.
      this.db.exec('PRAGMA locking_mode = EXCLUSIVE');
      this.db.exec('PRAGMA journal_mode = WAL');
      this.db.exec('PRAGMA synchronous = NORMAL');
      eventsSchema(this.db);
      this.rows = Number(this.get('SELECT COUNT(*) AS n FROM security_events')?.n ?? 0);
      this.traceRows = this.countTraces();
    } catch (e) {
      this.db.close();
      throw e;
    }
  }

  /** Stores one batch in one transaction (all of it or none), then prunes when due (pruneIfDue: its failure, if any). */
  insert(rows: readonly EventRow[], now: number): string | undefined {
    const hourly = new Map<string, SqlValue[]>();
    let traces = 0;
    this.db.exec('BEGIN IMMEDIATE');
    try {
      for (const row of rows) {
        this.db.run(INSERT, row);
        if (row[COL.origin] === 'trace') traces++;
        const values = [row[COL.zone_id]!, Math.floor(Number(row[COL.time]) / HOUR_MS) * HOUR_MS, row[COL.action]!, row[COL.source]!, row[COL.ruleset_id]!, row[COL.rule_id]!, row[COL.description]!, row[COL.origin]!];
        const k = values.join('\u0000');
        const h = hourly.get(k);
        if (h) (h[8] as number)++;
        else hourly.set(k, [...values, 1]);
      }
      this.db.run(ROLLUP_ADD, [JSON.stringify([...hourly.values()])]);
      this.db.exec('COMMIT');
    } catch (e) {
      if (this.db.inTransaction) this.db.exec('ROLLBACK');
      throw e;
    }
    this.rows += rows.length;
    this.traceRows += traces;
    return this.pruneIfDue(now);
  }

  /** Deletes what retention and the row limits no longer keep (see the file's comment). */
  prune(now: number): void {
    this.lastPrune = now;
    const cutoff = now - (this.retention.retentionMs ?? DEFAULT_RETENTION_MS);
    // Events arrive nearly in time order, so "older than the cutoff" is a prefix of seq: it is
    // looked for among the oldest PRUNE_CHUNK rows by their key (a search by time over the
    // whole table read every row, 90–140 ms at 2 million).
    let expired = false;
    for (let chunk = 0; chunk < PRUNE_CHUNKS_PER_PASS; chunk++) {
      const oldest = this.oldestSeq();
      const old = this.get('SELECT MAX(seq) AS s FROM security_events WHERE seq BETWEEN ? AND ? AND time < ?', [oldest, oldest + PRUNE_CHUNK - 1, cutoff]);
      if (old?.s === null || old?.s === undefined) break;
      expired = true;
      if (this.deleteWhere('seq <= ? AND time < ?', [Number(old.s), cutoff]) === 0) break;
    }
    if (expired) this.traceRows = this.countTraces();
    const maxRows = this.retention.maxRows ?? DEFAULT_MAX_ROWS;
    // Traces first, against their own budget; then the others against the row limit, so
    // that no number of traces ever removes an event of the proxy. Chunk by chunk, up to
    // PRUNE_CHUNKS_PER_PASS of them, so a burst (or a lowered limit) is caught up with.
    for (let chunk = 0; chunk < PRUNE_CHUNKS_PER_PASS; chunk++) {
      const traceExcess = this.traceRows - traceBudget(maxRows);
      if (traceExcess <= 0) break;
      const gone = this.deleteOldest(TRACE, traceExcess);
      this.traceRows -= gone;
      if (gone === 0) break;
    }
    for (let chunk = 0; chunk < PRUNE_CHUNKS_PER_PASS; chunk++) {
      const excess = this.rows - this.traceRows - maxRows;
      if (excess <= 0 || this.deleteOldest(NOT_TRACE, excess) === 0) break;
    }
  }

  /**
   * Prunes when the last pass is PRUNE_MS old: on a timer too, so an idle store still lets
   * expired events go. A pass that fails is its message, for the caller's log, not a throw:
   * after a write the batch is stored whatever pruning does.
   */
  pruneIfDue(now: number): string | undefined {
    if (now - this.lastPrune < PRUNE_MS) return undefined;
    try {
      this.prune(now);
      return undefined;
    } catch (e) {
      return (e as Error).message;
    }
  }

  private oldestSeq(): number {
    return Number(this.get('SELECT MIN(seq) AS s FROM security_events')?.s ?? 0);
  }

  /** The trace events stored (read from the partial index of traces: a few thousand entries). */
  private countTraces(): number {
    return Number(this.get(`SELECT COUNT(*) AS n FROM security_events WHERE ${TRACE}`)?.n ?? 0);
  }

  /** Deletes the `n` oldest events that match `which` (at most PRUNE_CHUNK); returns how many went. */
  private deleteOldest(which: string, n: number): number {
    const last = this.get(`SELECT seq FROM security_events WHERE ${which} ORDER BY seq LIMIT 1 OFFSET ?`, [Math.min(n, PRUNE_CHUNK) - 1]);
    return last ? this.deleteWhere(`${which} AND seq <= ?`, [Number(last.seq)]) : 0;
  }

  /** Deletes the events that match `where`, and takes them out of the hourly counts; returns how many went. */
  private deleteWhere(where: string, params: readonly SqlValue[]): number {
    this.db.exec('BEGIN IMMEDIATE');
    try {
      this.db.run(
        `INSERT INTO security_events_hourly (${HOURLY_KEY}, count)
         SELECT zone_id, (time / ${HOUR_MS}) * ${HOUR_MS}, action, source, ruleset_id, rule_id, description, origin, -COUNT(*)
           FROM security_events WHERE ${where} GROUP BY 1, 2, 3, 4, 5, 6, 7, 8
         ON CONFLICT (${HOURLY_KEY}) DO UPDATE SET count = count + excluded.count`,
        params,
      );
      this.db.run('DELETE FROM security_events_hourly WHERE count <= 0');
      const deleted = this.db.run(`DELETE FROM security_events WHERE ${where}`, params);
      this.db.exec('COMMIT');
      this.rows -= deleted;
      return deleted;
    } catch (e) {
      if (this.db.inTransaction) this.db.exec('ROLLBACK');
      throw e;
    }
  }

  /** The rows of a query (query.ts builds them; the GraphQL endpoint asks through writer.ts). */
  all(sql: string, params: readonly SqlValue[] = []): Row[] {
    return this.db.all(sql, params);
  }

  private get(sql: string, params: readonly SqlValue[] = []): Row | undefined {
    return this.all(sql, params)[0];
  }

  close(): void {
    if (!this.db.isOpen) return;
    this.db.close();
  }
}

/** What writer.ts asks of the events file's owner; each message is answered, in order. */
export type ToEvents =
  | { readonly op: 'write'; readonly rows: readonly EventRow[]; readonly now: number }
  | { readonly op: 'all'; readonly sql: string; readonly params: readonly SqlValue[] }
  | { readonly op: 'close' };

export type FromEvents = { readonly ok: true; readonly rows?: Row[]; readonly pruneError?: string } | { readonly ok: false; readonly error: string };

/** The owner's answer to one message (the events thread's, or writer.ts's own when there is no thread). */
export function answer(db: EventsDb, m: ToEvents): FromEvents {
  try {
    if (m.op === 'write') {
      const pruneError = db.insert(m.rows, m.now);
      return pruneError === undefined ? { ok: true } : { ok: true, pruneError };
    }
    if (m.op === 'all') return { ok: true, rows: db.all(m.sql, m.params) };
    db.close();
    return { ok: true };
  } catch (e) {
    return { ok: false, error: (e as Error).message };
  }
}
