/**
 * The security events' tables, kept apart from the versioned store schema (schema.ts):
 * `CREATE … IF NOT EXISTS`, run every time the store opens, so adding them never takes a
 * schema version another part of the store may need. A later change to these tables adds
 * statements here that are safe to repeat.
 *
 * - `security_events`: one row per acting rule of an evaluated request (fromEvaluation.ts).
 *   `time` is ms since the epoch; JSON columns hold what is only passed through. Two
 *   indexes: (zone, time) for every time-ranged query, (zone, rule, time) for a rule's
 *   events; each index costs every insert, so there are no more (an IP or a path is
 *   filtered within the time range).
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
  CREATE TABLE IF NOT EXISTS security_events_hourly (
    zone_id TEXT NOT NULL, hour INTEGER NOT NULL, action TEXT NOT NULL, source TEXT NOT NULL,
    ruleset_id TEXT NOT NULL, rule_id TEXT NOT NULL, description TEXT NOT NULL, origin TEXT NOT NULL, count INTEGER NOT NULL,
    PRIMARY KEY (zone_id, hour, action, source, ruleset_id, rule_id, description, origin)) WITHOUT ROWID;
`;

/**
 * The store's scope of these tables (store.ts write(fn, scope)): an API read of rulesets
 * does not wait for a batch of events to be durable, nor a GraphQL read for a ruleset write.
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

/** The hourly table's bucket of a time (ms). */
export const HOUR_MS = 3_600_000;
