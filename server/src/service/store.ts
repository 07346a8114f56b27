/**
 * The service's store: one SQLite file, through the binding sqlite.ts picks (native
 * better-sqlite3 when it loads, else the WebAssembly build). Either way SQLite writes the
 * file itself with its own log and fsync, so durability is SQLite's (and ours, below), not
 * a periodic export. The bindings measured: docs/service.md ("The binding, measured").
 *
 * Journal: WAL — one fsync of the log per commit (the rollback journal needed about
 * four): SQLite's own (`synchronous=FULL`) until group commit is on, then ours (below). With
 * the WebAssembly build WAL runs in `locking_mode=EXCLUSIVE` (the wal-index lives in the
 * process heap: its VFS has no shared memory). The native build shares the wal-index with a
 * second connection of this process, which checkpoints the log on a thread of its own once
 * group commit is on (walCheckpointer.ts). Either way the service is the file's only user
 * process (see dbClaim.ts).
 *
 * Writes run in `write()`: all of `fn`'s writes or none. With `groupCommit()` on (the
 * service turns it on), the writes of every request handled in one turn of the event
 * loop share one transaction — each request's in a SAVEPOINT of its own, so a failing
 * one rolls back alone — and the transaction commits at the end of the turn. The commit
 * itself does not wait for the disk (`synchronous=NORMAL`: SQLite writes the log and
 * syncs only at checkpoints); the fsync that makes it durable runs on libuv's thread
 * pool (`fdatasync` of the log file), so the event loop keeps serving meanwhile, and the
 * commits of the turns that ran during one fsync share the next. A request is answered
 * only after `durable()`: after the fsync that followed the commit holding its writes
 * (and anything it read), so an acknowledged write is never lost, not even to a power
 * cut. Without group commit (the CLI, tests) every outermost `write()` commits with
 * SQLite's own fsync at once.
 */
import { closeSync, fdatasync, fdatasyncSync, fstatSync, fsyncSync, openSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { claim, release } from './dbClaim';
import { clearStaleLock, openSqlite, type Binding, type Row, type SqlDatabase, type SqlValue } from './sqlite';
import { SCHEMA } from './schema';
import type { SqlStore } from './sqlStore';
import { eventsFileOf, moveEventsOut } from './events/schema';
import { checkpointWorkerFile, DEFAULT_PAGES, FALLBACK_PAGES, WalCheckpointer } from './walCheckpointer';

export type { Row, SqlValue };


/** A group-commit batch: its transaction commits once, its log is synced, then every waiter is answered. */
interface Batch {
  readonly done: Promise<void>;
  resolve(): void;
  reject(e: Error): void;
  /** Set when the transaction was lost (SQLite rolled it back by itself): nothing of it is durable. */
  failed?: Error;
  /**
   * The scopes its writes named (`write(fn, scope)`), or undefined once one write named
   * none: then every reader waits for it.
   */
  scopes: Set<string> | undefined;
}

/**
 * Thrown by `write()` once a sync of the log has failed. Linux reports a failed writeback
 * once and then marks the pages clean, so a later fsync can succeed over a log that lost
 * some of its frames. SQLite's recovery then stops at the first frame that is missing, and
 * drops every commit after it. So after one failure, no later write can be promised
 * durable, and the store takes none until it is opened again. Nor can a read: the refused
 * batches stay committed in SQLite (a read would see them) but may be gone after the
 * restart, so durable() rejects with it too and every answer is refused alike.
 */
export class StoreUnavailable extends Error {}

export class Store implements SqlStore {
  private readonly db: SqlDatabase;
  /** The files that hold the claim (dbClaim.ts). */
  private readonly claims: readonly string[];
  /** The real path of the database file (the one SQLite opens, so its -wal sits beside it). */
  readonly realFile: string;
  private grouping = false;
  /** The batch whose transaction is open (requests of this turn write into it). */
  private batch: Batch | undefined;
  /** Committed batches waiting for the next fsync of the log, and whether one is running. */
  private unsynced: Batch[] = [];
  private syncing: Batch[] = [];
  /** Why writes are refused: a sync of the log failed (see StoreUnavailable). */
  private broken: StoreUnavailable | undefined;
  /** durable()'s answer once the store is broken: rejected with `broken` (made once, marked handled). */
  private brokenWait: Promise<void> | undefined;
  /** The thread that checkpoints the log while group commit is on (native binding only). */
  private checkpointer: WalCheckpointer | undefined;
  /** The log file's descriptor, open while group commit syncs it (syncLog()). */
  private logFd: number | undefined;
  /** The newest batch not yet durable: durable() waits for it (batches become durable in order). */
  private newest: Batch | undefined;
  private depth = 0;
  /** Commits done, and fsyncs of the log that made group commits durable (tests and the benchmark count them against the writes). */
  commits = 0;
  syncs = 0;
  /**
   * Bumped by every write statement and every rollback of one: while it holds, nothing read from
   * the store has changed, so a cache keyed on a digest of the store (the WAF proxy's
   * deployment key) need not read it again.
   */
  generation = 0;
  /**
   * Batches rolled back whole (their transaction lost). Their writes were readable before
   * the rollback and their version numbers are given out again, so a digest of versions
   * (zoneConfig.ts deploymentKey) includes this to never name two contents alike.
   */
  batchesLost = 0;
  /**
   * Called after a rollback that undid more than one write (a batch's transaction lost, or
   * rolled back after a failed sync), so caches empty themselves: reads between the
   * batch's writes may have cached any of its rows. A write rolled back alone does not
   * call them: only what it cached (cacheWritten) is dropped, and only the tables it
   * wrote get a new tableVersion, so a refused write or a dry run leaves every other
   * client's cached reads warm.
   */
  readonly rollbackHooks: (() => void)[] = [];
  /** Cache entries set inside the open write (cacheWritten), as two parallel lists: a rollback of that write deletes just these. */
  private readonly touchedCaches: { delete(key: string): unknown }[] = [];
  private readonly touchedKeys: string[] = [];
  /** The tables the open write changed, or all of them (DDL), and `generation` when it began. */
  private readonly touchedTables = new Set<string>();
  private touchedAll = false;
  private writeGeneration = 0;
  /** The table each write statement changes (by its SQL), and a count of changes per table (see tableVersion). */
  private readonly tableOfSql = new Map<string, string | null>();
  private readonly tableVersions = new Map<string, number>();
  private versionBase = 0;

  constructor(readonly file: string) {
    const { real, claims } = claim(file);
    this.realFile = real;
    this.claims = claims;
    let db: SqlDatabase | undefined;
    try {
      this.db = db = openSqlite(real);
      // The service is the file's only user process (dbClaim.ts). Without shared memory
      // (WebAssembly), holding SQLite's lock is what lets WAL work; the native build leaves
      // it shared, for the checkpoint thread's connection.
      if (db.binding === 'wasm') this.db.exec('PRAGMA locking_mode = EXCLUSIVE');
      this.db.exec('PRAGMA journal_mode = WAL');
      this.db.exec('PRAGMA synchronous = FULL');
      this.db.exec('PRAGMA foreign_keys = ON');
      this.migrate();
      // Security events live in a file of their own now (events/eventsDb.ts); a store from before keeps none.
      // A move cut short by a kill may have left the WebAssembly build's lock folder on the
      // events file: this process holds the store's claim (dbClaim.ts), so it is a dead one's.
      clearStaleLock(eventsFileOf(real));
      moveEventsOut(this.db, eventsFileOf(real));
    } catch (e) {
      // Not a database (or a newer one): the claim goes, the file stays as it was.
      if (db?.isOpen) db.close();
      release(this.claims);
      throw e;
    }
  }

  /** Why the store refuses every answer (a sync of the log failed), or undefined: the WAF proxy fails closed on it. */
  get unavailable(): StoreUnavailable | undefined {
    return this.broken;
  }

  /** The SQLite binding the store runs on (sqlite.ts): native when it loads, else the WebAssembly build. */
  get binding(): Binding {
    return this.db.binding;
  }

  /** The schema version this database is at (`PRAGMA user_version`). */
  get schemaVersion(): number {
    return Number((this.db.get('PRAGMA user_version') as Row).user_version);
  }

  /** Brings an older database up to the current schema, one step per version, each atomic. */
  private migrate(): void {
    const from = this.schemaVersion;
    if (from > SCHEMA.length) {
      this.db.close();
      throw new Error(
        `the database ${this.file} has schema version ${from}, newer than this rulesmith (${SCHEMA.length}); use a newer rulesmith or another --db file`,
      );
    }
    for (let v = from; v < SCHEMA.length; v++) {
      this.db.exec('BEGIN IMMEDIATE');
      try {
        const step = SCHEMA[v]!;
        if (typeof step === 'string') this.db.exec(step);
        else {
          // A step that moves data runs its statements inside this transaction.
          this.depth++;
          try {
            step(this);
          } finally {
            this.depth--;
          }
        }
        this.db.exec(`PRAGMA user_version = ${v + 1}`);
        this.db.exec('COMMIT');
      } catch (e) {
        this.db.exec('ROLLBACK');
        throw e;
      }
    }
  }

  all<T = Row>(sql: string, params: readonly SqlValue[] = []): T[] {
    return this.db.all(sql, params) as T[];
  }

  /** The first row. Read to the end (the queries are keyed or LIMIT 1) so the statement is done, not left open mid-read. */
  get<T = Row>(sql: string, params: readonly SqlValue[] = []): T | undefined {
    return this.db.all(sql, params)[0] as T | undefined;
  }

  run(sql: string, params: readonly SqlValue[] = []): number {
    // node-sqlite3-wasm binds text as a C string: a NUL would silently cut the stored value.
    // Request decoding refuses NUL (body.ts refuseNul); this keeps a miss from losing data.
    if (params.some((v) => typeof v === 'string' && v.includes('\u0000'))) throw new Error('a text value with a NUL character cannot be stored');
    // Outside write(), one statement is its own write (its own savepoint in a batch).
    if (this.depth === 0) return this.write(() => this.run(sql, params));
    this.generation++;
    this.changed(sql);
    return this.db.run(sql, params);
  }

  /** Runs statements without parameters (a migration's tables and indexes): every table may have changed. */
  exec(sql: string): void {
    if (this.depth === 0) return this.write(() => this.exec(sql));
    this.generation++;
    this.touchedAll = true;
    this.bumpAll();
    this.db.exec(sql);
  }

  /**
   * A number that changes whenever a statement writes `table` (or a write that wrote it rolls back):
   * a cache of the table's rows (tokens, zones) stays valid while it is the same, whoever
   * wrote (a route, the seed, a test's own SQL).
   */
  tableVersion(table: string): number {
    return this.tableVersions.get(table) ?? this.versionBase;
  }

  private changed(sql: string): void {
    let table = this.tableOfSql.get(sql);
    if (table === undefined) {
      table = /^\s*(?:INSERT(?:\s+OR\s+\w+)?\s+INTO|REPLACE\s+INTO|UPDATE(?:\s+OR\s+\w+)?|DELETE\s+FROM)\s+["`]?(\w+)/i.exec(sql)?.[1]?.toLowerCase() ?? null;
      this.tableOfSql.set(sql, table);
    }
    if (table === null) {
      // Not a plain row write (DDL, a migration step): every table may have changed.
      this.touchedAll = true;
      this.bumpAll();
      return;
    }
    this.touchedTables.add(table);
    this.tableVersions.set(table, this.tableVersion(table) + 1);
  }

  private bumpAll(): void {
    this.versionBase++;
    for (const [t, v] of this.tableVersions) this.tableVersions.set(t, v + 1);
  }

  /**
   * Notes that `key` of `cache` was set. Inside a write, a rollback of that write deletes it
   * again: it may hold what the write wrote, or read from what the write wrote. Outside one
   * (a read, even between the writes of an open batch) it holds what stands. storeCache.ts
   * calls it for every entry set.
   */
  cacheWritten(cache: { delete(key: string): unknown }, key: string): void {
    if (this.depth === 0) return;
    this.touchedCaches.push(cache);
    this.touchedKeys.push(key);
  }

  /** An outermost write begins: nothing touched yet (O(1): the lists are emptied, not made). */
  private beginWrite(): void {
    if (this.touchedKeys.length > 0) {
      this.touchedCaches.length = 0;
      this.touchedKeys.length = 0;
    }
    if (this.touchedTables.size > 0) this.touchedTables.clear();
    this.touchedAll = false;
    this.writeGeneration = this.generation;
  }

  /**
   * The open write rolled back alone (its savepoint, or its own transaction): the rows it
   * wrote are as they were, the rest of the store as it is. So only the tables it wrote
   * get a new tableVersion, only the cache entries it set go, and the generation moves
   * only when it wrote something.
   */
  private rolledBackWrite(): void {
    if (this.generation !== this.writeGeneration) this.generation++;
    if (this.touchedAll) this.bumpAll();
    else for (const t of this.touchedTables) this.tableVersions.set(t, this.tableVersion(t) + 1);
    const caches = this.touchedCaches;
    const keys = this.touchedKeys;
    for (let i = 0; i < keys.length; i++) caches[i]!.delete(keys[i]!);
    caches.length = 0;
    keys.length = 0;
  }

  /** More than one write was rolled back (a batch): every table and every cache may be stale. */
  private rolledBack(): void {
    this.batchesLost++;
    this.generation++;
    this.bumpAll();
    this.touchedCaches.length = 0;
    this.touchedKeys.length = 0;
    for (const hook of this.rollbackHooks) hook();
  }

  /** Turns group commit on (see the file's comment): the service does, once it serves. */
  groupCommit(): void {
    if (this.grouping) return;
    this.grouping = true;
    // Commits no longer fsync on the event loop; syncLog() makes each durable before its answer.
    this.db.exec('PRAGMA synchronous = NORMAL');
    // Nor do checkpoints, where a thread can take them (walCheckpointer.ts).
    const worker = this.db.binding === 'native' ? checkpointWorkerFile() : undefined;
    if (!worker) return;
    this.db.exec(`PRAGMA wal_autocheckpoint = ${FALLBACK_PAGES}`);
    this.checkpointer = new WalCheckpointer(this.realFile, worker, () => {
      if (this.db.isOpen) this.db.exec(`PRAGMA wal_autocheckpoint = ${DEFAULT_PAGES}`);
    });
  }

  /**
   * Runs `fn` atomically: all of its writes or none. Nested calls join the outer one.
   * Without group commit, returns once the commit is durable; with it, the writes are
   * durable when `durable()` resolves. `scope` names what the writes change (e.g.
   * `zone:<id>`, see durable()); the outermost call's is the one that counts, and a write
   * without one may have changed anything.
   */
  write<T>(fn: () => T, scope?: string): T {
    if (this.depth > 0) return fn();
    if (this.broken) throw this.broken;
    if (!this.grouping) return this.writeAlone(fn);
    const batch = this.openBatch();
    if (scope === undefined) batch.scopes = undefined;
    else batch.scopes?.add(scope);
    // One name serves: the batch's writes run one after another, never nested. Prepared
    // once (exec parsed the statement every time).
    this.db.run('SAVEPOINT w');
    this.beginWrite();
    this.depth++;
    try {
      const result = fn();
      this.db.run('RELEASE w');
      return result;
    } catch (e) {
      if (this.db.inTransaction) {
        this.db.exec('ROLLBACK TO w');
        this.db.exec('RELEASE w');
        // Only this write's savepoint went: the batch's other writes stand.
        this.rolledBackWrite();
      } else {
        // SQLite ended the whole transaction (an I/O error, a full disk): the batch's
        // other writes went with it, so their requests must not be told they are saved.
        batch.failed = new Error(`the store lost a transaction: ${(e as Error).message}`);
        this.batch = undefined;
        this.settled(batch);
        batch.reject(batch.failed);
        this.rolledBack();
      }
      throw e;
    } finally {
      this.depth--;
    }
  }

  private writeAlone<T>(fn: () => T): T {
    this.db.exec('BEGIN IMMEDIATE');
    this.beginWrite();
    this.depth++;
    try {
      const result = fn();
      this.db.exec('COMMIT');
      this.commits++;
      return result;
    } catch (e) {
      if (this.db.inTransaction) this.db.exec('ROLLBACK');
      // The transaction held this write alone.
      this.rolledBackWrite();
      throw e;
    } finally {
      this.depth--;
    }
  }

  private openBatch(): Batch {
    if (this.batch) return this.batch;
    let resolve!: () => void;
    let reject!: (e: Error) => void;
    const done = new Promise<void>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    // Waiters are attached by durable(); a batch nobody waits for must not be an unhandled rejection.
    done.catch(() => {});
    const batch: Batch = { done, resolve, reject, scopes: new Set() };
    this.db.exec('BEGIN IMMEDIATE');
    this.batch = batch;
    this.newest = batch;
    // After the I/O callbacks of this turn: every request that arrived together is in.
    setImmediate(() => this.commitBatch(batch));
    return batch;
  }

  private commitBatch(batch: Batch): void {
    if (this.batch !== batch) return;
    this.batch = undefined;
    if (this.broken) {
      // A sync failed while this batch was open: it is rolled back, not committed over a
      // log that may have lost frames, and its requests are told so.
      this.db.exec('ROLLBACK');
      this.rolledBack();
      this.settled(batch);
      batch.reject(this.broken);
      return;
    }
    try {
      this.db.exec('COMMIT');
      this.commits++;
    } catch (e) {
      if (this.db.inTransaction) this.db.exec('ROLLBACK');
      this.rolledBack();
      this.settled(batch);
      batch.reject(new Error(`the store could not commit: ${(e as Error).message}`));
      return;
    }
    this.unsynced.push(batch);
    this.syncLog();
  }

  /**
   * One fsync of the log at a time, for every batch committed before it started: those
   * committed while it runs wait for the next one, so a burst costs two fsyncs, not one
   * per turn. fdatasync on a file descriptor of our own reaches the same file's pages as
   * SQLite's writes (the kernel's page cache is per file, not per descriptor). The
   * descriptor stays open, so a sync is one trip to libuv's thread pool: opening and
   * closing the file around each sync made it three, each waiting for the event loop's
   * turn in between (under 32 clients' PATCHes a sync took 10–20 ms to be seen done, the
   * fdatasync itself 0.2–0.5 ms). It is reopened if the log is no longer the file it
   * names (SQLite deleted and made it again), so the log synced is always the current one.
   */
  private syncLog(): void {
    if (this.syncing.length > 0 || this.unsynced.length === 0) return;
    const batches = this.unsynced;
    this.unsynced = [];
    this.syncing = batches;
    const log = `${this.realFile}-wal`;
    const failed = (e: Error) => this.failSync(batches, new Error(`the store could not make a commit durable (fsync of ${log}): ${e.message}`));
    let fd: number;
    try {
      fd = this.logDescriptor(log);
    } catch (e) {
      return failed(e as Error);
    }
    fdatasync(fd, (e) => {
      // The store closed while this sync ran: the descriptor was left for us to close.
      if (this.logFd !== fd) closeSync(fd);
      if (e) failed(e);
      else this.synced(batches);
    });
  }

  /** An open descriptor of the log file at `log` now (see syncLog()). */
  private logDescriptor(log: string): number {
    if (this.logFd !== undefined && fstatSync(this.logFd).ino !== statSync(log).ino) {
      closeSync(this.logFd);
      this.logFd = undefined;
    }
    if (this.logFd === undefined) {
      this.logFd = openSync(log, 'r+');
      // The log may be new: its name in the folder must reach the disk too, or a power cut
      // could lose the whole file with the commits synced into it (once per log file).
      syncFolder(dirname(log));
    }
    return this.logFd;
  }

  private synced(batches: readonly Batch[]): void {
    this.syncing = [];
    this.syncs++;
    for (const b of batches) {
      this.settled(b);
      b.resolve();
    }
    this.syncLog();
  }

  /**
   * A sync of the log failed: its batches, and those committed behind it (they would be
   * synced over the same log), are committed but not known to be on the disk, so their
   * requests are not told they are saved; and the store takes no more writes.
   */
  private failSync(batches: readonly Batch[], error: Error): void {
    this.syncing = [];
    // Nor may the log go on into the database file: only SQLite's recovery at the restart may
    // say what of a log that lost frames survives.
    this.checkpointer?.stop();
    this.broken ??= new StoreUnavailable(
      `the store takes no more writes: ${error.message}. A failed fsync can lose part of the log, so no later write could be promised durable; restart rulesmith serve (SQLite recovers the log when it opens the database)`,
    );
    for (const b of [...batches, ...this.unsynced.splice(0)]) {
      this.settled(b);
      b.reject(this.broken);
    }
  }

  /** `batch` is durable or lost: durable() now waits for the newest batch still pending, if any. */
  private settled(batch: Batch): void {
    if (this.newest === batch) this.newest = this.unsynced.at(-1) ?? this.syncing.at(-1);
  }

  /**
   * Resolves when everything written or read so far is durable (the open batch and every
   * batch before it have committed and their log is synced); rejects if that batch was
   * lost. Answer a request only after it.
   *
   * Once a sync has failed (StoreUnavailable), it rejects for every reader: the batches
   * refused then are still in SQLite, and what is read may include them, yet they may be
   * gone after the restart the error asks for. So no answer is given from such a store.
   *
   * With `scope`, for a reader that read only that scope's rows (and rows no scoped write
   * changes: tokens, zones): waits only for the newest pending batch that wrote the scope or
   * wrote without one, so a GET of one zone is not held up by the fsync of another zone's
   * 500-rule PUT or of a batch of security events.
   */
  durable(scope?: string): Promise<void> | undefined {
    if (this.broken) {
      if (!this.brokenWait) {
        this.brokenWait = Promise.reject(this.broken);
        // Callers await it; one that does not must not be an unhandled rejection.
        this.brokenWait.catch(() => {});
      }
      return this.brokenWait;
    }
    if (scope === undefined) return this.newest?.done;
    // Batches become durable in order: the newest one this reader may have read from is enough.
    if (this.batch && (!this.batch.scopes || this.batch.scopes.has(scope))) return this.batch.done;
    for (const pending of [this.unsynced, this.syncing]) {
      for (let i = pending.length - 1; i >= 0; i--) {
        const b = pending[i]!;
        if (!b.scopes || b.scopes.has(scope)) return b.done;
      }
    }
    return undefined;
  }

  /** A value kept in the `meta` table (e.g. when the seed ran). */
  meta(key: string): string | undefined {
    return this.get<{ value: string }>('SELECT value FROM meta WHERE key = ?', [key])?.value;
  }

  setMeta(key: string, value: string): void {
    this.run('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value', [key, value]);
  }

  /** Bytes the database's pages in use take (what it would take on disk after a checkpoint and VACUUM). */
  usedBytes(): number {
    const n = (p: string) => Number(Object.values(this.get<Row>(`PRAGMA ${p}`) ?? {})[0]);
    return (n('page_count') - n('freelist_count')) * n('page_size');
  }

  /** Bytes the database takes on disk (the file and its write-ahead log). */
  bytes(): number {
    let total = 0;
    for (const f of [this.realFile, `${this.realFile}-wal`]) {
      try {
        total += statSync(f).size;
      } catch {
        // no log yet
      }
    }
    return total;
  }

  close(): void {
    if (this.db.isOpen) {
      if (this.batch) this.commitBatch(this.batch);
      // The thread's connection closes first, so that this one is the last.
      const last = this.checkpointer?.stop() ?? true;
      // Not the last (the thread did not let go in time): this close will not checkpoint, so
      // what still waits for a sync of the log is synced here, or not acknowledged.
      let unsynced: Error | undefined;
      if (!last && this.unsynced.length + this.syncing.length > 0 && this.logFd !== undefined) {
        try {
          fdatasyncSync(this.logFd);
        } catch (e) {
          unsynced = new StoreUnavailable(`the store could not make a commit durable at close (fsync of ${this.realFile}-wal): ${(e as Error).message}`);
        }
      }
      // Closing checkpoints the log into the database file and syncs it (SQLite does, at any
      // synchronous level), so what still waited for a sync of the log is durable after it.
      this.db.close();
      // A sync still running closes the descriptor when it ends (syncLog()).
      if (this.logFd !== undefined && this.syncing.length === 0) closeSync(this.logFd);
      this.logFd = undefined;
      const pending = [...this.syncing, ...this.unsynced];
      this.unsynced = [];
      if (unsynced) {
        this.syncing = [];
        for (const b of pending) {
          this.settled(b);
          b.reject(unsynced);
        }
      } else this.synced(pending);
    }
    release(this.claims);
  }
}

/** fsync of a folder, so that the files made in it stay after a power cut (not possible on Windows, where NTFS journals names). */
function syncFolder(folder: string): void {
  if (process.platform === 'win32') return;
  const fd = openSync(folder, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** JSON column helpers: the store keeps API objects as JSON documents next to indexed keys. */
export function toJson(v: unknown): string {
  return JSON.stringify(v);
}

export function fromJson<T>(v: SqlValue | undefined): T {
  return JSON.parse(String(v)) as T;
}
