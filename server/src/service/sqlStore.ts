/**
 * The store as the code under it sees it: its statements and its cache hooks (Store in
 * store.ts implements them; see there for what each does). Its own file because that code
 * includes the schema's data steps (schema.ts), which store.ts runs as it opens: they and
 * what they call (rulesetHistory.ts, storeCache.ts) name this, not store.ts.
 */
import type { Row, SqlValue } from './sqlite';

export interface SqlStore {
  all<T = Row>(sql: string, params?: readonly SqlValue[]): T[];
  get<T = Row>(sql: string, params?: readonly SqlValue[]): T | undefined;
  /** The number of rows the statement changed. */
  run(sql: string, params?: readonly SqlValue[]): number;
  /** Statements without parameters (a migration's tables and indexes). */
  exec(sql: string): void;
  /** Notes that `key` of `cache` was set, so a rollback of the open write drops it (storeCache.ts). */
  cacheWritten(cache: { delete(key: string): unknown }, key: string): void;
  /** Batches rolled back whole (Store.batchesLost): a write spread over several batches checks that none of its own was. */
  readonly batchesLost: number;
  /** Called after a rollback that undid more than one write: caches empty themselves. */
  readonly rollbackHooks: (() => void)[];
}
