/**
 * The SQLite binding the store and the security events run on: native (better-sqlite3, an
 * optional dependency built from source by `npm install` for the Node that installed it)
 * when it loads here, else node-sqlite3-wasm (SQLite compiled to WebAssembly, which any
 * Node and the editor's Electron load without a native build).
 *
 * Why both: a statement costs the WebAssembly build two to three times the CPU of the
 * native one, and at team scale statements are most of a write (a 500-rule PUT that
 * changes 50 rules: 150 statements, ~5 ms of the event loop's time against ~2 ms native;
 * docs/service.md "The binding"). The extension's service runs under the editor's own
 * Node (Electron), whose ABI the native module was not built for: it falls back.
 *
 * `RULESMITH_SQLITE=native|wasm` picks one (native refuses to start without the module).
 * Both open the same file format; a database written by one opens with the other.
 */
import { rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Database as WasmDatabase } from 'node-sqlite3-wasm';

export type SqlValue = string | number | bigint | null | Uint8Array;
export type Row = Record<string, SqlValue>;
export type Binding = 'native' | 'wasm';

/** A prepared statement of either binding. */
interface SqlStatement {
  /** Runs the statement to its end; the number of rows it changed. */
  run(params?: readonly SqlValue[]): number;
  all(params?: readonly SqlValue[]): Row[];
  /** Frees it (the WebAssembly build's statements hold memory until finalized). */
  finalize(): void;
}

export interface SqlDatabase {
  readonly binding: Binding;
  readonly isOpen: boolean;
  readonly inTransaction: boolean;
  /** Runs one or more statements, no parameters. */
  exec(sql: string): void;
  /** The first row of a query, or null. */
  get(sql: string): Row | null;
  /** The rows of `sql` (prepared once and kept, see Sqlite). */
  all(sql: string, params?: readonly SqlValue[]): Row[];
  /** Runs `sql` (prepared once and kept); the number of rows it changed. */
  run(sql: string, params?: readonly SqlValue[]): number;
  /** Frees the kept statements, then closes the file. */
  close(): void;
}

/** better-sqlite3's surface used here (the package ships no types of its own). */
interface NativeStatement {
  readonly reader: boolean;
  run(...params: SqlValue[]): { changes: number };
  all(...params: SqlValue[]): Row[];
  get(...params: SqlValue[]): Row | undefined;
}
interface NativeDatabase {
  readonly open: boolean;
  readonly inTransaction: boolean;
  exec(sql: string): void;
  prepare(sql: string): NativeStatement;
  close(): void;
}
type NativeConstructor = new (file: string) => NativeDatabase;

let native: NativeConstructor | Error | undefined;

/** better-sqlite3, or why it cannot be loaded in this process (not installed, built for another Node). */
function loadNative(): NativeConstructor | Error {
  if (native === undefined) {
    try {
      // Resolved at run time (the bundle keeps it out): from the project's node_modules.
      native = createRequire(__filename)('better-sqlite3') as NativeConstructor;
    } catch (e) {
      native = e instanceof Error ? e : new Error(String(e));
    }
  }
  return native;
}

/** The binding `openSqlite` would use: the environment's choice, else native when it loads. */
export function sqliteBinding(want = process.env.RULESMITH_SQLITE): Binding {
  if (want !== undefined && want !== '' && want !== 'native' && want !== 'wasm') {
    throw new Error(`RULESMITH_SQLITE is '${want}': set it to native or wasm, or leave it unset to use native when it loads`);
  }
  if (want === 'wasm') return 'wasm';
  const n = loadNative();
  if (n instanceof Error && want === 'native') {
    throw new Error(`RULESMITH_SQLITE=native, but better-sqlite3 does not load in this Node (${process.version}): ${n.message.split('\n')[0]}. Run \`npm rebuild better-sqlite3\` with this Node (it builds the module for it; g++, make and python3 are needed), or unset RULESMITH_SQLITE`);
  }
  return n instanceof Error ? 'wasm' : 'native';
}

/**
 * Removes the `<file>.lock` folder node-sqlite3-wasm locks `file` with, which a killed
 * process leaves behind. Only for a file this process is known to be the only user of (its
 * store's claim, dbClaim.ts): a lock found then is a dead process's.
 */
export function clearStaleLock(file: string): void {
  rmSync(`${file}.lock`, { recursive: true, force: true });
}

/** Opens (or creates) the database `file` with the binding sqliteBinding() picks. */
export function openSqlite(file: string): SqlDatabase {
  return sqliteBinding() === 'native' ? new NativeSqlite(new (loadNative() as NativeConstructor)(file)) : new WasmSqlite(new WasmDatabase(file));
}

/**
 * Parameters as the WebAssembly build binds them: better-sqlite3 binds every number as a
 * REAL (7 in a TEXT column reads back '7.0'), node-sqlite3-wasm an integral one as an
 * INTEGER. A whole number goes over as a BigInt, which better-sqlite3 binds as an INTEGER.
 */
function bound(params: readonly SqlValue[]): SqlValue[] {
  return params.map((v) => (typeof v === 'number' && Number.isSafeInteger(v) ? BigInt(v) : v));
}

/** Statements kept at most (the SQL is the code's own, so this is a guard, not an LRU). */
const MAX_STATEMENTS = 256;

/**
 * What both bindings share: each statement is prepared once and kept by its SQL
 * (preparing was a fifth of the service's time on the hot reads). A statement whose step
 * failed cannot be reset for reuse, so it is dropped.
 */
abstract class Sqlite<D extends { readonly inTransaction: boolean; exec(sql: string): void; close(): void }> implements SqlDatabase {
  abstract readonly binding: Binding;
  abstract readonly isOpen: boolean;
  abstract get(sql: string): Row | null;
  protected abstract prepare(sql: string): SqlStatement;
  private readonly statements = new Map<string, SqlStatement>();

  constructor(protected readonly db: D) {}

  get inTransaction(): boolean {
    return this.db.inTransaction;
  }

  exec(sql: string): void {
    this.db.exec(sql);
  }

  all(sql: string, params: readonly SqlValue[] = []): Row[] {
    return this.use(sql, (st) => st.all(params));
  }

  run(sql: string, params: readonly SqlValue[] = []): number {
    return this.use(sql, (st) => st.run(params));
  }

  close(): void {
    this.finalizeAll();
    this.db.close();
  }

  private use<T>(sql: string, fn: (st: SqlStatement) => T): T {
    let st = this.statements.get(sql);
    if (!st) {
      if (this.statements.size >= MAX_STATEMENTS) this.finalizeAll();
      st = this.prepare(sql);
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

  private finalizeAll(): void {
    for (const st of this.statements.values()) {
      try {
        st.finalize();
      } catch {
        // as above
      }
    }
    this.statements.clear();
  }
}

class NativeSqlite extends Sqlite<NativeDatabase> {
  readonly binding = 'native';
  get isOpen(): boolean {
    return this.db.open;
  }
  get(sql: string): Row | null {
    const st = this.db.prepare(sql);
    return st.reader ? (st.get() ?? null) : (st.run(), null);
  }
  protected prepare(sql: string): SqlStatement {
    const st = this.db.prepare(sql);
    return {
      run: (params = []) => st.run(...bound(params)).changes,
      // better-sqlite3's all() refuses a statement that returns no rows (a write): it has none to give.
      all: (params = []) => (st.reader ? st.all(...bound(params)) : (st.run(...bound(params)), [])),
      finalize: () => {},
    };
  }
}

class WasmSqlite extends Sqlite<WasmDatabase> {
  readonly binding = 'wasm';
  get isOpen(): boolean {
    return this.db.isOpen;
  }
  get(sql: string): Row | null {
    return (this.db.get(sql) as Row | null) ?? null;
  }
  protected prepare(sql: string): SqlStatement {
    const st = this.db.prepare(sql);
    return {
      run: (params = []) => st.run(params as SqlValue[]).changes,
      all: (params = []) => st.all(params as SqlValue[]) as Row[],
      finalize: () => st.finalize(),
    };
  }
}
