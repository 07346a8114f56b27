/**
 * The security events' tables, in their own file (eventsDb.ts), apart from the service's
 * versioned store schema (../schema.ts): `CREATE … IF NOT EXISTS`, run every time the file
 * opens. A later change to these tables adds statements here that are safe to repeat.
 *
 * - `security_events`: one row per acting rule of an evaluated request (fromEvaluation.ts).
 *   `time` is ms since the epoch; JSON columns hold what is only passed through. Two
 *   indexes: (zone, time) for every time-ranged query, (zone, rule, time) for a rule's
 *   events; each index costs every insert, so there are no more (an IP or a path is
 *   filtered within the time range). A third, partial one holds only the events of traces
 *   (`origin = 'trace'`, by seq): their own row limit (eventsDb.ts) counts and prunes them
 *   without a scan, and a proxy event's insert skips it.
 * - `security_events_hourly`: event counts per zone, hour and (action, source, ruleset,
 *   rule, description, origin), kept in step with `security_events` by the writer (added on
 *   insert, subtracted on delete), so the top-rules and actions-over-time queries read a
 *   few thousand rows instead of a million (query.ts decides when it may be used).
 *   A store whose hourly table predates `origin` has it rebuilt from the events once
 *   (`eventsSchema`): the counts are derived data.
 */
export const EVENTS_SCHEMA = `
  CREATE TABLE IF NOT EXISTS security_events (
    seq INTEGER PRIMARY KEY,
    ray_id TEXT NOT NULL, time INTEGER NOT NULL, zone_id TEXT NOT NULL,
    action TEXT NOT NULL, outcome TEXT NOT NULL, rule_action TEXT NOT NULL, source TEXT NOT NULL, phase TEXT NOT NULL,
    ruleset_id TEXT NOT NULL, rule_id TEXT NOT NULL, ref TEXT NOT NULL, description TEXT NOT NULL,
    client_ip TEXT NOT NULL, country TEXT NOT NULL, asn INTEGER NOT NULL,
    method TEXT NOT NULL, host TEXT NOT NULL, path TEXT NOT NULL, query TEXT NOT NULL,
    user_agent TEXT NOT NULL, http_version TEXT NOT NULL, response_status INTEGER NOT NULL,
    anomaly_score INTEGER NOT NULL, anomaly_scores TEXT NOT NULL, defaulted_fields TEXT NOT NULL,
    body_truncated INTEGER NOT NULL, origin TEXT NOT NULL);
  CREATE INDEX IF NOT EXISTS security_events_zone_time ON security_events (zone_id, time);
  CREATE INDEX IF NOT EXISTS security_events_zone_rule ON security_events (zone_id, rule_id, time);
  CREATE INDEX IF NOT EXISTS security_events_trace ON security_events (seq) WHERE origin = 'trace';
  CREATE TABLE IF NOT EXISTS security_events_hourly (
    zone_id TEXT NOT NULL, hour INTEGER NOT NULL, action TEXT NOT NULL, source TEXT NOT NULL,
    ruleset_id TEXT NOT NULL, rule_id TEXT NOT NULL, description TEXT NOT NULL, origin TEXT NOT NULL, count INTEGER NOT NULL,
    PRIMARY KEY (zone_id, hour, action, source, ruleset_id, rule_id, description, origin)) WITHOUT ROWID;
`;

/** The events file of the service's database file (its real path, store.ts `realFile`); eventsDb.ts says why apart. */
export function eventsFileOf(storeFile: string): string {
  return `${storeFile}-events`;
}

/** The columns an event is written with, in the order writer.ts `eventRow` gives its values. */
export const EVENT_COLUMNS = [
  'ray_id', 'time', 'zone_id', 'action', 'outcome', 'rule_action', 'source', 'phase', 'ruleset_id', 'rule_id', 'ref', 'description',
  'client_ip', 'country', 'asn', 'method', 'host', 'path', 'query', 'user_agent', 'http_version', 'response_status',
  'anomaly_score', 'anomaly_scores', 'defaulted_fields', 'body_truncated', 'origin',
] as const;

/**
 * The scope a GraphQL read names to the service's store (store.ts durable(scope)): no
 * write of the store names it, so such a read waits only for writes that name no scope
 * (it reads zones and tokens from the store; its events come from the events file).
 */
export const EVENTS_SCOPE = 'events';

/** The hourly counts' key columns (after zone and hour, the order the writer binds them). */
export const HOURLY_KEY = 'zone_id, hour, action, source, ruleset_id, rule_id, description, origin';

/** Fills the (empty) hourly counts from the stored events. */
export const HOURLY_REBUILD = `INSERT INTO security_events_hourly (${HOURLY_KEY}, count)
  SELECT zone_id, (time / 3600000) * 3600000, action, source, ruleset_id, rule_id, description, origin, COUNT(*) FROM security_events GROUP BY 1, 2, 3, 4, 5, 6, 7, 8`;

interface SchemaDb {
  exec(sql: string): void;
  /** A row, or null (node-sqlite3-wasm) when there is none. */
  get(sql: string): unknown;
}

/** Creates the events' tables; rebuilds an hourly table from before `origin` (once). */
export function eventsSchema(db: SchemaDb): void {
  const hasHourly = db.get("SELECT 1 AS y FROM sqlite_master WHERE type = 'table' AND name = 'security_events_hourly'") !== null;
  const hasOrigin = db.get("SELECT 1 AS y FROM pragma_table_info('security_events_hourly') WHERE name = 'origin'") !== null;
  if (hasHourly && !hasOrigin) {
    db.exec(`BEGIN; DROP TABLE security_events_hourly; ${EVENTS_SCHEMA} ${HOURLY_REBUILD}; COMMIT;`);
    return;
  }
  db.exec(EVENTS_SCHEMA);
}

/**
 * Moves the events of a service store from before the events file (they were tables of
 * the store itself) into `eventsFile`, once, when the store opens, keeping each event's
 * seq. Two transactions, each whole: the copy into the events file (with its hourly counts
 * rebuilt) commits first, then the store drops its tables. The two files have different
 * journals (the store's WAL, the attached file's rollback journal), so SQLite could not
 * commit one transaction over both atomically: a process killed in between left the store's
 * tables dropped and the copy not yet durable. Now a kill at any point leaves the store's
 * tables in place and the move runs again at the next open, copying nothing twice (INSERT
 * OR IGNORE). Returns the events moved.
 */
export function moveEventsOut(db: SchemaDb, eventsFile: string): number {
  if (db.get("SELECT 1 AS y FROM main.sqlite_master WHERE type = 'table' AND name = 'security_events'") === null) return 0;
  db.exec(`ATTACH DATABASE '${eventsFile.replaceAll("'", "''")}' AS moved`);
  try {
    const n = Number((db.get('SELECT COUNT(*) AS n FROM main.security_events') as { n: number }).n);
    const cols = ['seq', ...EVENT_COLUMNS].join(', ');
    inTransaction(db, `${EVENTS_SCHEMA.replaceAll('IF NOT EXISTS ', 'IF NOT EXISTS moved.')}
      INSERT OR IGNORE INTO moved.security_events (${cols}) SELECT ${cols} FROM main.security_events ORDER BY seq;
      DELETE FROM moved.security_events_hourly; ${HOURLY_REBUILD.replace('INTO security_events_hourly', 'INTO moved.security_events_hourly').replace('FROM security_events', 'FROM moved.security_events')};`);
    inTransaction(db, 'DROP TABLE main.security_events; DROP TABLE IF EXISTS main.security_events_hourly;');
    return n;
  } finally {
    db.exec('DETACH DATABASE moved');
  }
}

/** `sql` in one transaction: committed whole, or rolled back. */
function inTransaction(db: SchemaDb, sql: string): void {
  db.exec('BEGIN IMMEDIATE');
  try {
    db.exec(`${sql}\nCOMMIT`);
  } catch (e) {
    try {
      db.exec('ROLLBACK');
    } catch {
      // SQLite had ended the transaction itself
    }
    throw e;
  }
}

/** The hourly table's bucket of a time (ms). */
export const HOUR_MS = 3_600_000;
