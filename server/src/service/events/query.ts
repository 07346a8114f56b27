/**
 * The SQL behind the GraphQL fields: a filter (`{ruleId: "…", datetime_geq: "…", OR: […]}`)
 * as a WHERE clause, the events list, and the group counts. Every value is a bound
 * parameter; names come from fields.ts only.
 *
 * A group query whose dimensions and filter use only fields kept in the hourly counts
 * (action, source, rulesetId, ruleId, description, origin, datetimeHour, date) reads those counts
 * for the whole hours inside the time range and the events only for the partial hours at
 * its two ends, so its cost follows the number of hours and rules, not of events.
 */
import type { Row, SqlValue } from '../store';

/** Where the events are read (writer.ts SecurityEvents: the events thread answers). */
export interface EventReader {
  all(sql: string, params: readonly SqlValue[]): Promise<Row[]>;
}
import { EVENT_ROW_FIELDS, FIELD_BY_NAME, formatDate, formatTime, type EventField } from './fields';
import { HOUR_MS } from './schema';

export class QueryError extends Error {}

export type Filter = { readonly [key: string]: unknown };

export const OPERATORS: Readonly<Record<string, readonly string[]>> = {
  String: ['', '_neq', '_in', '_notin', '_like', '_notlike'],
  Int: ['', '_neq', '_gt', '_geq', '_lt', '_leq', '_in', '_notin'],
  Time: ['', '_gt', '_geq', '_lt', '_leq'],
};

/** At most this many conditions in one filter (AND/OR nesting included). */
export const MAX_FILTER_TERMS = 100;

/**
 * At most this many values in all the `_in` / `_notin` lists of one filter. A list is one
 * condition but each of its values is a bound SQL parameter (a group query binds the filter
 * up to three times), and a list given as a variable is not bounded by the query's size.
 */
export const MAX_FILTER_LIST_VALUES = 1_000;

const SQL_OP: Readonly<Record<string, string>> = { '': '=', _neq: '<>', _gt: '>', _geq: '>=', _lt: '<', _leq: '<=' };
const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.\d+)?(?:Z|[+-](\d{2}):(\d{2}))$/;

export function parseTime(value: unknown, where: string): number {
  const m = typeof value === 'string' ? RFC3339.exec(value) : null;
  // Date.parse rolls an impossible date over (02-30 is 03-02, 24:00 the next day): refused instead.
  const [y, mo, d, h, mi, sec, oh = 0, om = 0] = (m?.slice(1) ?? []).map((x) => (x === undefined ? undefined : Number(x)));
  const real = m !== null && mo! >= 1 && mo! <= 12 && d! >= 1 && d! <= new Date(Date.UTC(y!, mo!, 0)).getUTCDate() && h! <= 23 && mi! <= 59 && sec! <= 59 && oh <= 23 && om <= 59;
  const ms = real ? Date.parse(value as string) : NaN;
  if (Number.isNaN(ms)) throw new QueryError(`${where}: ${JSON.stringify(value)} is not a time; write RFC 3339, e.g. 2026-11-26T03:00:00Z`);
  return ms;
}

/** The second that a time names (ms at its start): a time is shown, and compared, to the second. */
export function wholeSecond(ms: number): number {
  return Math.floor(ms / 1000) * 1000;
}

/** A comparison of a time column (ms) with the second `ms` names, and its bound parameters. */
function secondBounds(col: string, op: string, ms: number): [string, ...number[]] {
  const s = wholeSecond(ms);
  switch (op) {
    case '':
      return [`${col} >= ? AND ${col} < ?`, s, s + 1000];
    case '_gt':
      return [`${col} >= ?`, s + 1000];
    case '_geq':
      return [`${col} >= ?`, s];
    case '_lt':
      return [`${col} < ?`, s];
    default:
      return [`${col} < ?`, s + 1000];
  }
}

/** A LIKE pattern (`%` any run, `_` one character) as a case-sensitive GLOB pattern. */
export function likeToGlob(like: string): string {
  let out = '';
  for (const ch of like) {
    if (ch === '%') out += '*';
    else if (ch === '_') out += '?';
    else if (ch === '*' || ch === '?' || ch === '[') out += `[${ch}]`;
    else out += ch;
  }
  return out;
}

interface Compiled {
  readonly sql: string;
  readonly params: SqlValue[];
}

/** The WHERE clause of a filter; `column` maps a field to its SQL (the hourly view renames time). */
export function compileFilter(filter: Filter | undefined, column: (f: EventField) => string = (f) => f.sql): Compiled {
  let terms = 0;
  let listValues = 0;
  const params: SqlValue[] = [];
  const walk = (f: Filter, path: string): string => {
    const parts: string[] = [];
    for (const [key, value] of Object.entries(f)) {
      if (value === undefined || value === null) continue;
      if (++terms > MAX_FILTER_TERMS) throw new QueryError(`the filter has more than ${MAX_FILTER_TERMS} conditions; narrow it or split the query`);
      if (key === 'AND' || key === 'OR') {
        const bound = params.length;
        const subs = (value as Filter[]).map((s, i) => walk(s, `${path}.${key}[${i}]`));
        // A member that matches everything ('1': an empty filter, a null variable) is nothing to AND, and makes an OR match everything.
        if (key === 'OR' && subs.includes('1')) {
          params.length = bound;
          continue;
        }
        const kept = subs.filter((s) => s !== '1');
        if (kept.length > 0) parts.push(`(${kept.join(key === 'AND' ? ' AND ' : ' OR ')})`);
        continue;
      }
      const m = /^(.*?)(_neq|_in|_notin|_like|_notlike|_gt|_geq|_lt|_leq)?$/.exec(key)!;
      const field = FIELD_BY_NAME.get(m[1]!);
      const op = m[2] ?? '';
      if (!field) throw new QueryError(`${path}: unknown filter field ${key}`);
      const col = column(field);
      const val = (v: unknown): SqlValue => (field.type === 'Time' ? parseTime(v, `${path}.${key}`) : (v as SqlValue));
      if (op === '_in' || op === '_notin') {
        const list = value as unknown[];
        listValues += list.length;
        if (listValues > MAX_FILTER_LIST_VALUES) {
          throw new QueryError(
            `${path}.${key}: the filter's _in and _notin lists have more than ${MAX_FILTER_LIST_VALUES} values in all (this list has ${list.length}); use fewer values or split the query`,
          );
        }
        if (list.length === 0) {
          parts.push(op === '_in' ? '0' : '1');
          continue;
        }
        params.push(...list.map(val));
        parts.push(`${col} ${op === '_in' ? 'IN' : 'NOT IN'} (${list.map(() => '?').join(', ')})`);
      } else if (op === '_like' || op === '_notlike') {
        params.push(likeToGlob(String(value)));
        parts.push(`${op === '_notlike' ? 'NOT ' : ''}${col} GLOB ?`);
      } else if (field.type === 'Time') {
        // A time is shown to the second, so a bound names a whole second: an event matches
        // `datetime` and `datetime_leq` of the time it is shown with.
        const [sql, ...bounds] = secondBounds(col, op, parseTime(value, `${path}.${key}`));
        params.push(...bounds);
        parts.push(sql);
      } else {
        params.push(val(value));
        parts.push(`${col} ${SQL_OP[op]} ?`);
      }
    }
    return parts.length === 0 ? '1' : parts.join(' AND ');
  };
  const sql = filter ? walk(filter, 'filter') : '1';
  return { sql, params };
}

/**
 * The time range of a filter's top-level datetime bounds (ms, both inclusive): the tightest
 * of them, on the filter itself and on the filters of its top-level AND; every group and
 * list query needs a start.
 */
export function timeRange(top: Filter, now: number, maxRangeMs: number): { from: number; to: number } {
  const filters: [Filter, string][] = [[top, 'filter']];
  if (Array.isArray(top.AND)) (top.AND as unknown[]).forEach((f, i) => f && typeof f === 'object' && filters.push([f as Filter, `filter.AND[${i}]`]));
  const starts: number[] = [];
  const ends: number[] = [];
  for (const [f, path] of filters) {
    // Whole seconds, as the filter compares them (secondBounds); null is an unset variable.
    const at = (key: string) => (f[key] === undefined || f[key] === null ? undefined : wholeSecond(parseTime(f[key], `${path}.${key}`)));
    const exact = at('datetime');
    const [geq, gt, leq, lt] = [at('datetime_geq'), at('datetime_gt'), at('datetime_leq'), at('datetime_lt')];
    if (exact !== undefined) {
      starts.push(exact);
      ends.push(exact + 999);
    }
    if (geq !== undefined) starts.push(geq);
    if (gt !== undefined) starts.push(gt + 1000);
    if (leq !== undefined) ends.push(leq + 999);
    if (lt !== undefined) ends.push(lt - 1);
  }
  if (starts.length === 0) {
    throw new QueryError('the filter needs a start time: datetime_geq (and datetime_leq, default now), e.g. {datetime_geq: "2026-11-26T00:00:00Z"}');
  }
  const from = Math.max(...starts);
  const to = ends.length > 0 ? Math.min(...ends) : now;
  if (to - from > maxRangeMs) {
    throw new QueryError(`the time range ${formatTime(from)} to ${formatTime(to)} is longer than the maximum of ${maxRangeMs / 86_400_000} days; narrow datetime_geq/datetime_leq`);
  }
  return { from, to };
}

export interface ListQuery {
  readonly zoneId: string;
  readonly filter: Filter;
  readonly limit: number;
  /** e.g. `datetime_DESC`. */
  readonly orderBy: readonly string[];
  /** Field names to read. */
  readonly fields: readonly string[];
}

/** `firewallEventsAdaptive`: the events, newest first unless ordered otherwise. */
export async function listEvents(events: EventReader, q: ListQuery): Promise<Record<string, unknown>[]> {
  const where = compileFilter(q.filter);
  const order = orderSql(q.orderBy, (name) => FIELD_BY_NAME.get(name)?.sql);
  // Rows of one request (same time) keep the order they were recorded in, in the order's direction.
  const tie = q.orderBy[0]?.endsWith('_ASC') ? 'ASC' : 'DESC';
  const cols = q.fields.map((name) => `${FIELD_BY_NAME.get(name)!.sql} AS "${name}"`);
  const sql = `SELECT ${['anomaly_scores', 'defaulted_fields', ...cols].join(', ')} FROM security_events
    WHERE zone_id = ? AND ${where.sql} ORDER BY ${[...order, `seq ${tie}`].join(', ')} LIMIT ?`;
  return (await events.all(sql, [q.zoneId, ...where.params, q.limit])).map((row) => {
    const out: Record<string, unknown> = {};
    for (const name of q.fields) out[name] = outValue(FIELD_BY_NAME.get(name)!, row[name]);
    out.anomalyScores = Object.entries(JSON.parse(String(row.anomaly_scores)) as Record<string, number>).map(([category, score]) => ({ category, score }));
    out.defaultedFields = JSON.parse(String(row.defaulted_fields));
    return out;
  });
}

export interface GroupQuery {
  readonly zoneId: string;
  readonly filter: Filter;
  readonly range: { readonly from: number; readonly to: number };
  readonly limit: number;
  readonly orderBy: readonly string[];
  readonly dimensions: readonly string[];
}

export interface Group {
  readonly count: number;
  readonly dimensions: Record<string, unknown>;
}

/** `firewallEventsAdaptiveGroups`: counts per distinct value of the dimensions. */
export async function groupEvents(events: EventReader, q: GroupQuery): Promise<Group[]> {
  // Ordering by a dimension not selected would split the groups by it, unseen.
  const unselected = q.orderBy.find((o) => !['count', ...q.dimensions].includes(o.replace(/_(ASC|DESC)$/, '')) && FIELD_BY_NAME.has(o.replace(/_(ASC|DESC)$/, '')));
  if (unselected) throw new QueryError(`orderBy: ${unselected} orders by a dimension the query does not select; add ${unselected.replace(/_(ASC|DESC)$/, '')} to dimensions, or order by count or a selected dimension`);
  const dims = [...new Set(q.dimensions)].map((n) => FIELD_BY_NAME.get(n)!);
  // A time bound inside AND/OR would cut an hour's count in two: then only events are exact.
  const nested = [...((q.filter.AND as Filter[] | undefined) ?? []), ...((q.filter.OR as Filter[] | undefined) ?? [])].flatMap(filterFields);
  // `datetime` as a dimension is the second: the hourly counts have only the hour.
  const usesHourly = dims.every((d) => d.hourly && d.name !== 'datetime') && filterFields(q.filter).every((n) => FIELD_BY_NAME.get(n)?.hourly === true) && !nested.includes('datetime');
  const select = dims.map((d, i) => `${d.sql} AS d${i}`);
  const groupBy = dims.length ? `GROUP BY ${dims.map((_, i) => `d${i}`).join(', ')}` : '';
  // After the order asked for, the groups' own dimensions, so that the order is always the same.
  const order = [...orderSql(q.orderBy, (name) => (name === 'count' ? 'count' : `d${dims.findIndex((d) => d.name === name)}`)), ...dims.map((_, i) => `d${i} ASC`)];
  let sql: string;
  let params: SqlValue[];
  const hStart = Math.ceil(q.range.from / HOUR_MS) * HOUR_MS;
  const hEnd = Math.floor((q.range.to + 1) / HOUR_MS) * HOUR_MS;
  if (usesHourly && hStart < hEnd) {
    const onEvents = compileFilter(q.filter);
    const onHourly = compileFilter(q.filter, (f) => (f.sql === 'time' ? 'hour' : f.sql));
    const view = `
      SELECT hour AS time, action, source, ruleset_id, rule_id, description, origin, count AS c FROM security_events_hourly
       WHERE zone_id = ? AND hour >= ? AND hour < ? AND ${onHourly.sql}
      UNION ALL
      SELECT time, action, source, ruleset_id, rule_id, description, origin, 1 AS c FROM security_events INDEXED BY security_events_zone_time
       WHERE zone_id = ? AND time >= ? AND time < ? AND ${onEvents.sql}
      UNION ALL
      SELECT time, action, source, ruleset_id, rule_id, description, origin, 1 AS c FROM security_events INDEXED BY security_events_zone_time
       WHERE zone_id = ? AND time >= ? AND time <= ? AND ${onEvents.sql}`;
    // Two plain ranges, not one OR of them: SQLite then reads each edge by the time index.
    sql = `SELECT ${[...select, 'SUM(c) AS count'].join(', ')} FROM (${view}) ${groupBy}`;
    params = [q.zoneId, hStart, hEnd, ...onHourly.params, q.zoneId, q.range.from, hStart, ...onEvents.params, q.zoneId, hEnd, q.range.to, ...onEvents.params];
  } else {
    const where = compileFilter(q.filter);
    sql = `SELECT ${[...select, 'COUNT(*) AS count'].join(', ')} FROM security_events INDEXED BY ${indexFor(q.filter)} WHERE zone_id = ? AND ${where.sql} ${groupBy}`;
    params = [q.zoneId, ...where.params];
  }
  sql += ` ${order.length ? `ORDER BY ${order.join(', ')}` : ''} LIMIT ?`;
  return (await events.all(sql, [...params, q.limit])).map((row) => {
    const dimensions: Record<string, unknown> = {};
    dims.forEach((d, i) => (dimensions[d.name] = outValue(d, row[`d${i}`])));
    return { count: Number(row.count), dimensions };
  });
}

/**
 * The index a group query reads. Without statistics SQLite prefers an index that delivers
 * the rows in GROUP BY order (zone, rule) and then reads every event of the zone, whatever
 * the time range; the time range, or an exact rule when the filter has one, selects far
 * fewer.
 */
function indexFor(filter: Filter): string {
  if (typeof filter.ruleId === 'string') return 'security_events_zone_rule';
  return 'security_events_zone_time';
}

function outValue(f: EventField, v: unknown): unknown {
  if (f.type === 'Time') return formatTime(Number(v));
  if (f.type === 'Date') return formatDate(Number(v));
  if (f.type === 'Int') return Number(v);
  return v;
}

function orderSql(orderBy: readonly string[], sqlOf: (name: string) => string | undefined): string[] {
  return orderBy.map((o) => {
    const m = /^(.*)_(ASC|DESC)$/.exec(o);
    const sql = m ? sqlOf(m[1]!) : undefined;
    if (!m || sql === undefined) throw new QueryError(`orderBy: unknown order ${o}`);
    return `${sql} ${m[2]}`;
  });
}

/** Every field name a filter uses (at any depth). */
function filterFields(filter: Filter): string[] {
  const out: string[] = [];
  for (const [key, value] of Object.entries(filter)) {
    if (value === undefined || value === null) continue;
    if (key === 'AND' || key === 'OR') for (const s of value as Filter[]) out.push(...filterFields(s));
    else out.push(key.replace(/_(neq|in|notin|like|notlike|gt|geq|lt|leq)$/, ''));
  }
  return out;
}

export { EVENT_ROW_FIELDS };
