/**
 * The legacy Filters API (rules-api §4.1, §4.3): `/zones/{zone_id}/filters` list, create
 * (array, transactional, at most MAX_FILTERS_PER_REQUEST items), bulk update (the same
 * cap) and delete, get, update and delete one, and the top-level `/filters/validate-expr`.
 * Expressions are checked by the language core in the phase http_request_firewall_custom
 * at the zone's plan (legacyStore.ts). Answers 410 under `--legacy sunset` (router option).
 */
import { ApiError, CODES, newId, notFound, paginate, timestamp, type ApiMessage, type Reply } from '../api';
import { expectArray, expectObject, onlyKeys, optString, type JsonObject } from '../body';
import type { Ctx, Router } from '../router';
import { storeScope, type ZoneRow } from '../scope';
import { requireZone } from '../scopeAccess';
import type { Store } from '../store';
import {
  checkFilterExpression,
  decodeFilter,
  FILTER_KEYS,
  filterObject,
  firstProblem,
  getFilter,
  idOfUpdate,
  idParams,
  legacyReport,
  MAX_FILTERS_PER_REQUEST,
  pausedParam,
  requireBatchSize,
  requireValidExpression,
  rulesUsing,
  zoneFilters,
  capitalPlan,
  type FilterInput,
  type FilterRow,
} from '../legacyStore';

const LEGACY = { legacy: 'filters' } as const;

export function filterRoutes(r: Router): void {
  r.get('/zones/:zone_id/filters', list, LEGACY);
  r.post('/zones/:zone_id/filters', create, LEGACY);
  r.put('/zones/:zone_id/filters', bulkUpdate, LEGACY);
  r.delete('/zones/:zone_id/filters', bulkDelete, LEGACY);
  r.get('/zones/:zone_id/filters/:filter_id', getOne, LEGACY);
  r.put('/zones/:zone_id/filters/:filter_id', updateOne, LEGACY);
  r.delete('/zones/:zone_id/filters/:filter_id', deleteOne, LEGACY);
  // Top level, not under a zone: no plan, any valid credential.
  r.get('/filters/validate-expr', (ctx) => validateExpr(ctx.query.get('expression')), LEGACY);
  r.post(
    '/filters/validate-expr',
    (ctx) => {
      const body = expectObject(ctx.body);
      onlyKeys(body, ['expression']);
      return validateExpr(optString(body, 'expression') ?? null);
    },
    LEGACY,
  );
}

function list(ctx: Ctx): Reply {
  const zone = requireZone(ctx, ['Firewall Services'], 'Read');
  ctx.readScope = storeScope('zone', zone.id);
  const q = ctx.query;
  const id = q.get('id');
  const expression = q.get('expression')?.toLowerCase();
  const description = q.get('description')?.toLowerCase();
  const ref = q.get('ref');
  const paused = pausedParam(q);
  const rows = zoneFilters(ctx.service.store, zone.id).filter(
    (f) =>
      (id === null || f.id === id) &&
      (expression === undefined || f.expression.toLowerCase().includes(expression)) &&
      (description === undefined || f.description.toLowerCase().includes(description)) &&
      (ref === null || f.ref === ref) &&
      (paused === undefined || (f.paused === 1) === paused),
  );
  return paginate(rows.map(filterObject), q, { defaultPerPage: 25, min: 5, max: 100 });
}

function duplicateError(existing: string, pointer: string): ApiError {
  return new ApiError(400, [
    { code: CODES.duplicateFilter, message: 'config duplicates an already existing config', source: { pointer }, meta: { id: existing } },
  ]);
}

function create(ctx: Ctx): Reply {
  const zone = requireZone(ctx, ['Firewall Services'], 'Write');
  const store = ctx.service.store;
  const items = expectArray(ctx.body);
  requireBatchSize(items, MAX_FILTERS_PER_REQUEST, 'filters');
  const inputs = items.map((item, i) => {
    const obj = expectObject(item, `/${i}`);
    onlyKeys(obj, FILTER_KEYS, `/${i}`);
    const f = decodeFilter(obj, `/${i}`);
    requireValidExpression(f.expression, zone.plan, `/${i}/expression`);
    return f;
  });
  // Twins within the body: refused before anything is written (the first one's id would name a filter the refusal rolls back).
  const first = new Map<string, number>();
  inputs.forEach((f, i) => {
    const twin = first.get(f.expression);
    if (twin !== undefined) throw ApiError.of(400, CODES.duplicateFilter, `filter at index ${i} duplicates the filter at index ${twin} (config duplicates an already existing config): send each expression once`, `/${i}/expression`);
    first.set(f.expression, i);
  });
  return {
    messages: planWarnings(zone, inputs),
    result: store.write(() => {
      const seen = new Map(zoneFilters(store, zone.id).map((f) => [f.expression, f.id]));
      const now = timestamp();
      return inputs.map((f, i) => {
        const dup = seen.get(f.expression);
        if (dup !== undefined) throw duplicateError(dup, `/${i}/expression`);
        return filterObject(insertFilter(store, zone.id, f, false, now));
      });
    }, storeScope('zone', zone.id)),
  };
}

/**
 * A filter using a feature of a higher plan is still a valid filter, but a firewall rule
 * using it will be refused on this zone: say so in `messages`.
 */
function planWarnings(zone: ZoneRow, inputs: readonly FilterInput[]): ApiMessage[] {
  const out: ApiMessage[] = [];
  inputs.forEach((f, i) => {
    const plan = checkFilterExpression(f.expression, zone.plan).planProblem;
    if (plan !== undefined) {
      out.push({
        code: CODES.planFeature,
        message: `filter at index ${i}: ${plan}; a firewall rule using this filter will be refused on this zone's ${capitalPlan(zone.plan)} plan`,
      });
    }
  });
  return out;
}

/** Inserts a filter row (single_call marks one created inline by a firewall-rule create). */
export function insertFilter(store: Store, zoneId: string, f: FilterInput, singleCall: boolean, now: string): FilterRow {
  const row: FilterRow = {
    id: newId(),
    zone_id: zoneId,
    expression: f.expression,
    paused: f.paused ? 1 : 0,
    description: f.description,
    ref: f.ref,
    single_call: singleCall ? 1 : 0,
    created_on: now,
    modified_on: now,
  };
  store.run(
    'INSERT INTO filters (id, zone_id, expression, paused, description, ref, single_call, created_on, modified_on) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
    [row.id, row.zone_id, row.expression, row.paused, row.description, row.ref, row.single_call, row.created_on, row.modified_on],
  );
  return row;
}

/**
 * A filter the Filters API may change or delete: it exists, and it is not a filter a
 * single-call firewall-rule create made for a rule that still uses it.
 */
function ownFilter(store: Store, zone: ZoneRow, id: string, verb: 'changed' | 'deleted', pointer?: string): FilterRow {
  const f = getFilter(store, zone.id, id);
  if (!f) throw ApiError.of(404, CODES.notFound, `filter ${id} not found`, pointer);
  const users = rulesUsing(store, zone.id, id);
  if (f.single_call === 1 && users.length > 0) {
    throw ApiError.of(
      400,
      CODES.filterOwnedByRule,
      `filter ${id} was created together with firewall rule ${users[0]} (single-call create) and belongs to it: it cannot be ${verb} through the Filters API. ` +
        (verb === 'changed'
          ? `To change the expression, create a new filter and point the rule at it with PUT /zones/${zone.id}/firewall/rules/${users[0]} and "filter": {"id": "<new filter id>"}.`
          : `Delete the rule with DELETE /zones/${zone.id}/firewall/rules/${users[0]} and {"delete_filter_if_unused": true}.`),
      pointer,
    );
  }
  return f;
}

interface Update {
  readonly id: string;
  readonly input: FilterInput;
  readonly pointer: string;
}

/** Applies updates (all or none): every filter exists and is not owned by a rule; no two filters end up with one expression. */
function applyUpdates(ctx: Ctx, zone: ZoneRow, updates: readonly Update[]): FilterRow[] {
  const store = ctx.service.store;
  return store.write(() => {
    const ids = new Set<string>();
    for (const u of updates) {
      if (ids.has(u.id)) throw ApiError.of(400, CODES.invalidValue, `filter ${u.id} is listed twice`, `${u.pointer}/id`);
      ids.add(u.id);
      ownFilter(store, zone, u.id, 'changed', u.pointer === '' ? undefined : `${u.pointer}/id`);
      const users = rulesUsing(store, zone.id, u.id);
      const plan = checkFilterExpression(u.input.expression, zone.plan).planProblem;
      if (plan !== undefined && users.length > 0) {
        throw ApiError.of(
          400,
          CODES.planFeature,
          `the expression uses a feature this zone's ${capitalPlan(zone.plan)} plan lacks, and firewall rule ${users[0]} uses this filter: ${plan}`,
          `${u.pointer}/expression`,
        );
      }
    }
    // The zone's expressions after the change: none twice.
    const byExpression = new Map<string, string>();
    const updated = new Map(updates.map((u) => [u.id, u]));
    for (const f of zoneFilters(store, zone.id)) {
      const u = updated.get(f.id);
      const expression = u ? u.input.expression : f.expression;
      const other = byExpression.get(expression);
      const mine = u ?? (other !== undefined ? updated.get(other) : undefined);
      if (other !== undefined && mine !== undefined) {
        throw duplicateError(mine.id === f.id ? other : f.id, `${mine.pointer}/expression`);
      }
      byExpression.set(expression, f.id);
    }
    const now = timestamp();
    return updates.map((u) => {
      store.run('UPDATE filters SET expression = ?, paused = ?, description = ?, ref = ?, modified_on = ? WHERE zone_id = ? AND id = ?', [
        u.input.expression,
        u.input.paused ? 1 : 0,
        u.input.description,
        u.input.ref,
        now,
        zone.id,
        u.id,
      ]);
      return getFilter(store, zone.id, u.id)!;
    });
  }, storeScope('zone', zone.id));
}

function decodeUpdate(zone: ZoneRow, obj: JsonObject, pointer: string, pathId?: string): Update {
  onlyKeys(obj, ['id', ...FILTER_KEYS], pointer);
  const id = idOfUpdate(obj, pointer, 'filter', pathId);
  const input = decodeFilter(obj, pointer);
  requireValidExpression(input.expression, zone.plan, `${pointer}/expression`);
  return { id, input, pointer };
}

function bulkUpdate(ctx: Ctx): Reply {
  const zone = requireZone(ctx, ['Firewall Services'], 'Write');
  const items = expectArray(ctx.body);
  requireBatchSize(items, MAX_FILTERS_PER_REQUEST, 'filters');
  const updates = items.map((item, i) => decodeUpdate(zone, expectObject(item, `/${i}`), `/${i}`));
  return { result: applyUpdates(ctx, zone, updates).map(filterObject), messages: planWarnings(zone, updates.map((u) => u.input)) };
}

function updateOne(ctx: Ctx): Reply {
  const zone = requireZone(ctx, ['Firewall Services'], 'Write');
  const id = ctx.params.filter_id!;
  if (!getFilter(ctx.service.store, zone.id, id)) throw notFoundFilter(id);
  const update = decodeUpdate(zone, expectObject(ctx.body), '', id);
  return { result: filterObject(applyUpdates(ctx, zone, [update])[0]!), messages: planWarnings(zone, [update.input]) };
}

function notFoundFilter(id: string): ApiError {
  return notFound(`filter ${id}`);
}

function getOne(ctx: Ctx): Reply {
  const zone = requireZone(ctx, ['Firewall Services'], 'Read');
  ctx.readScope = storeScope('zone', zone.id);
  const f = getFilter(ctx.service.store, zone.id, ctx.params.filter_id!);
  if (!f) throw notFoundFilter(ctx.params.filter_id!);
  return { result: filterObject(f) };
}

/** Deletes filters (all or none); refuses one a firewall rule uses. */
function deleteFilters(ctx: Ctx, zone: ZoneRow, ids: readonly string[], mustExist: boolean): void {
  const store = ctx.service.store;
  store.write(() => {
    for (const id of ids) {
      const f = getFilter(store, zone.id, id);
      if (!f) {
        if (mustExist) throw notFoundFilter(id);
        continue;
      }
      ownFilter(store, zone, id, 'deleted');
      const users = rulesUsing(store, zone.id, id);
      if (users.length > 0) {
        throw ApiError.of(
          400,
          CODES.filterInUse,
          `filter ${id} is used by firewall rule${users.length === 1 ? '' : 's'} ${users.join(', ')}: delete ${users.length === 1 ? 'that rule' : 'those rules'} or point ${users.length === 1 ? 'it' : 'them'} at another filter first`,
        );
      }
      store.run('DELETE FROM filters WHERE zone_id = ? AND id = ?', [zone.id, id]);
    }
  }, storeScope('zone', zone.id));
}

function bulkDelete(ctx: Ctx): Reply {
  const zone = requireZone(ctx, ['Firewall Services'], 'Write');
  const ids = idParams(ctx.query);
  if (ctx.body !== undefined) throw ApiError.of(400, CODES.invalidValue, 'give the filters to delete as repeated id query parameters (?id=…&id=…), not in a body');
  deleteFilters(ctx, zone, ids, false);
  return { result: ids.map((id) => ({ id })) };
}

function deleteOne(ctx: Ctx): Reply {
  const zone = requireZone(ctx, ['Firewall Services'], 'Write');
  const id = ctx.params.filter_id!;
  deleteFilters(ctx, zone, [id], true);
  return { result: { id } };
}

/**
 * `/filters/validate-expr`: the legacy answer (rules-api §4.3), only the first problem, in
 * the old layout without line:column. Checked without a plan (no zone here).
 */
function validateExpr(expression: string | null): Reply {
  if (expression === null) throw ApiError.of(400, CODES.invalidValue, 'expression is required', '/expression');
  const problem = firstProblem(expression);
  if (!problem) return { result: null };
  // The legacy body: a message without a code (docs example).
  throw new ApiError(400, [{ message: legacyReport(expression, problem) } as { code: number; message: string }], null);
}
