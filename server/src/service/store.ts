/**
 * The service's store: SQLite through node-sqlite3-wasm (SQLite compiled to WebAssembly
 * with a file-backed VFS). We chose it over better-sqlite3 because the extension host
 * starts the service and must not need a native build; unlike sql.js it writes the
 * database file itself with SQLite's own rollback journal and fsync, so durability is
 * SQLite's, not a periodic export.
 *
 * Every write runs in `write()`: one IMMEDIATE transaction, committed (journal synced
 * with `synchronous=FULL`) before the caller answers the client. The server handles a
 * request's store work synchronously on one thread, so writes are serialized.
 */
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Database, type Statement } from 'node-sqlite3-wasm';
import { SCHEMA } from './schema';
import { EVENTS_SCHEMA } from './events/schema';

export type SqlValue = string | number | bigint | null | Uint8Array;
export type Row = Record<string, SqlValue>;

/** Prepared statements kept at most (the SQL is the code's own, so this is a guard, not an LRU). */
const MAX_STATEMENTS = 256;

export class Store {
  private readonly db: Database;
  /** Statements by SQL: preparing was a fifth of the server's time on the hot reads. */
  private readonly statements = new Map<string, Statement>();

  constructor(readonly file: string) {
    claim(file);
    let db: Database | undefined;
    try {
      this.db = db = new Database(file);
      this.db.exec('PRAGMA synchronous = FULL');
      // The service is the file's only user (see claim()): holding SQLite's lock keeps the
      // page cache valid between statements instead of re-reading the file on each one.
      this.db.exec('PRAGMA locking_mode = EXCLUSIVE');
      this.db.exec('PRAGMA foreign_keys = ON');
      this.migrate();
      this.db.exec(EVENTS_SCHEMA);
    } catch (e) {
      // Not a database (or a newer one): the claim goes, the file stays as it was.
      if (db?.isOpen) db.close();
      release(file);
      throw e;
    }
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
        this.db.exec(SCHEMA[v]!);
        this.db.exec(`PRAGMA user_version = ${v + 1}`);
        this.db.exec('COMMIT');
      } catch (e) {
        this.db.exec('ROLLBACK');
        throw e;
      }
    }
  }

  all<T = Row>(sql: string, params: readonly SqlValue[] = []): T[] {
    return this.use(sql, (st) => st.all(params as SqlValue[]) as T[]);
  }

  /** The first row. Read to the end (the queries are keyed or LIMIT 1) so the statement is done, not left open mid-read. */
  get<T = Row>(sql: string, params: readonly SqlValue[] = []): T | undefined {
    return this.use(sql, (st) => st.all(params as SqlValue[])[0] as T | undefined);
  }

  run(sql: string, params: readonly SqlValue[] = []): number {
    // node-sqlite3-wasm binds text as a C string: a NUL would silently cut the stored value.
    // Request decoding refuses NUL (body.ts refuseNul); this keeps a miss from losing data.
    if (params.some((v) => typeof v === 'string' && v.includes('\u0000'))) throw new Error('a text value with a NUL character cannot be stored');
    return this.use(sql, (st) => st.run(params as SqlValue[]).changes);
  }

  /** Runs `fn` on the cached statement for `sql`. A statement whose step failed cannot be reset for reuse, so it is dropped. */
  private use<T>(sql: string, fn: (st: Statement) => T): T {
    let st = this.statements.get(sql);
    if (!st) {
      if (this.statements.size >= MAX_STATEMENTS) this.finalizeStatements();
      st = this.db.prepare(sql);
      this.statements.set(sql, st);
    }
    try {
      return fn(st);
    } catch (e) {
      this.statements.delete(sql);
      try {
        st.finalize();
      } catch {
        // finalize repeats the step's error; the statement is gone either way
      }
      throw e;
    }
  }

  private finalizeStatements(): void {
    for (const st of this.statements.values()) {
      try {
        st.finalize();
      } catch {
        // as above
      }
    }
    this.statements.clear();
  }

  /**
   * Runs `fn` in one transaction: all of its writes or none. Nested calls join the
   * outer transaction. Returns `fn`'s result once the commit is durable.
   */
  write<T>(fn: () => T): T {
    if (this.db.inTransaction) return fn();
    this.db.exec('BEGIN IMMEDIATE');
    try {
      const result = fn();
      this.db.exec('COMMIT');
      return result;
    } catch (e) {
      if (this.db.inTransaction) this.db.exec('ROLLBACK');
      throw e;
    }
  }

  /** A value kept in the `meta` table (e.g. when the seed ran). */
  meta(key: string): string | undefined {
    return this.get<{ value: string }>('SELECT value FROM meta WHERE key = ?', [key])?.value;
  }

  setMeta(key: string, value: string): void {
    this.run('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value', [key, value]);
  }

  close(): void {
    if (this.db.isOpen) {
      this.finalizeStatements();
      this.db.close();
    }
    release(this.file);
  }
}

/**
 * One service per database file. node-sqlite3-wasm locks with a `<db>.lock` directory,
 * which a killed process leaves behind, and SQLite would then answer "database is locked"
 * forever. So the service records its pid in `<db>.owner`: a live owner means the file is
 * in use; a dead one means its lock is stale and is cleared (SQLite then rolls back any
 * transaction the dead process left in its journal).
 */
function claim(file: string): void {
  const owner = `${file}.owner`;
  if (existsSync(owner)) {
    const pid = Number(readFileSync(owner, 'utf8').trim());
    if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && alive(pid)) {
      throw new Error(`the database is in use by process ${pid} (another rulesmith serve?); stop it, or use another --db file (if no such process is yours, delete ${owner})`);
    }
    rmSync(`${file}.lock`, { recursive: true, force: true });
  }
  writeFileSync(owner, String(process.pid));
}

function release(file: string): void {
  try {
    if (Number(readFileSync(`${file}.owner`, 'utf8').trim()) === process.pid) rmSync(`${file}.owner`, { force: true });
  } catch {
    // already gone
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** JSON column helpers: the store keeps API objects as JSON documents next to indexed keys. */
export function toJson(v: unknown): string {
  return JSON.stringify(v);
}

export function fromJson<T>(v: SqlValue | undefined): T {
  return JSON.parse(String(v)) as T;
}
