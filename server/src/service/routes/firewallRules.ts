/**
 * The legacy Firewall Rules API (rules-api §4.1, §4.2): `/zones/{zone_id}/firewall/rules`
 * list, create (an array, with inline filters or `filter.id`), bulk update / priority
 * edit / delete, and get / update / priority edit / delete of one rule. Answers 410
 * under `--legacy sunset` (router option).
 *
 * The single-call create (a rule with an inline filter), as the hosted service did it:
 *   - an invalid filter or rule (bad expression, bad action, duplicate filter …): 400,
 *     nothing is created;
 *   - the zone's rule quota exceeded: 400 (10207) and nothing is created, not even the
 *     inline filters (the hosted service kept those; here a refused request stores
 *     nothing). Checked first, before the body's items are decoded, so the quota also
 *     bounds how many items one request may carry;
 *   - a feature its plan lacks (the `log` action below Enterprise; a field or function of a
 *     higher plan): the inline filters ARE created, no rule is, and the error gives the
 *     created filters' ids (`meta.filter_id`, `meta.filter_ids` in body order) and says
 *     how to finish with the two-call flow (`POST …/firewall/rules` with
 *     `"filter": {"id": …}`);
 *   - a filter made this way belongs to its rule: the Filters API will not change or
 *     delete it while a rule uses it (routes/filters.ts);
 *   - several rules may share one filter through `filter.id`.
 */
import { ApiError, CODES, newId, notFound, paginate, timestamp, type ApiMessage, type Reply } from '../api';
import { expectArray, expectObject, invalidJson, onlyKeys, optBool, optInt, withoutNulls, type Json, type JsonObject } from '../body';
import type { Ctx, Router } from '../router';
import { storeScope, type ZoneRow } from '../scope';
import { requireZone } from '../scopeAccess';
import type { Store } from '../store';
import { toJson } from '../store';
import {
  capitalPlan,
  decodeFilter,
  decodeFilterRef,
  decodeId,
  decodeRuleFields,
  FILTER_KEYS,
  getFilter,
  getRule,
  idOfUpdate,
  idParams,
  MAX_PRIORITY,
  MAX_RULES_PER_UPDATE,
  pausedParam,
  requireBatchSize,
  requirePlanAllows,
  requireValidExpression,
  RULE_KEYS,
  RULE_QUOTA,
  ruleObject,
  ruleObjects,
  rulePlanProblem,
  rulesUsing,
  zoneFilters,
  zoneRules,
  type FilterInput,
  type RuleFields,
  type RuleRow,
} from '../legacyStore';
import { insertFilter } from './filters';

const LEGACY = { legacy: 'firewall rules' } as const;
const GROUPS = ['Firewall Services'] as const;

export function firewallRuleRoutes(r: Router): void {
  r.get('/zones/:zone_id/firewall/rules', list, LEGACY);
  r.post('/zones/:zone_id/firewall/rules', create, LEGACY);
  r.put('/zones/:zone_id/firewall/rules', bulkUpdate, LEGACY);
  r.patch('/zones/:zone_id/firewall/rules', bulkPriority, LEGACY);
  r.delete('/zones/:zone_id/firewall/rules', bulkDelete, LEGACY);
  r.get('/zones/:zone_id/firewall/rules/:firewall_rule_id', getOne, LEGACY);
  r.put('/zones/:zone_id/firewall/rules/:firewall_rule_id', updateOne, LEGACY);
  r.patch('/zones/:zone_id/firewall/rules/:firewall_rule_id', priorityOne, LEGACY);
  r.delete('/zones/:zone_id/firewall/rules/:firewall_rule_id', deleteOne, LEGACY);
}

function notFoundRule(id: string, pointer?: string): ApiError {
  const e = notFound(`firewall rule ${id}`);
  return pointer === undefined ? e : new ApiError(404, [{ ...e.errors[0]!, source: { pointer } }]);
}

function list(ctx: Ctx): Reply {
  const zone = requireZone(ctx, GROUPS, 'Read');
  ctx.readScope = storeScope('zone', zone.id);
  const q = ctx.query;
  const id = q.get('id');
  const description = q.get('description')?.toLowerCase();
  const action = q.get('action');
  const paused = pausedParam(q);
  const rules = zoneRules(ctx.service.store, zone.id).filter(
    (r) =>
      (id === null || r.id === id) &&
      (description === undefined || r.description.toLowerCase().includes(description)) &&
      (action === null || r.action === action) &&
      (paused === undefined || (r.paused === 1) === paused),
  );
  const page = paginate(rules, q, { defaultPerPage: 25, min: 5, max: 100 });
  return { result: ruleObjects(ctx.service.store, zone.id, page.result), result_info: page.result_info };
}

function getOne(ctx: Ctx): Reply {
  const zone = requireZone(ctx, GROUPS, 'Read');
  ctx.readScope = storeScope('zone', zone.id);
  const rule = getRule(ctx.service.store, zone.id, ctx.params.firewall_rule_id!);
  if (!rule) throw notFoundRule(ctx.params.firewall_rule_id!);
  return { result: ruleObject(rule, getFilter(ctx.service.store, zone.id, rule.filter_id)) };
}

// ---------------------------------------------------------------------------------------
// Create

interface NewRule {
  readonly index: number;
  readonly fields: RuleFields;
  /** An inline filter to create, or the id of an existing one. */
  readonly inline?: FilterInput;
  readonly filterId?: string;
  /** The filter's expression (for the plan check). */
  readonly expression: string;
  readonly filterPointer: string;
}

function decodeNewRule(store: Store, zone: ZoneRow, item: Json, i: number): NewRule {
  const p = `/${i}`;
  const obj = expectObject(item, p);
  onlyKeys(obj, RULE_KEYS, p);
  const fields = decodeRuleFields(obj, p);
  if (obj.filter === undefined || obj.filter === null) {
    throw ApiError.of(400, CODES.invalidValue, 'filter is required: an inline filter {"expression": …} or an existing one {"id": "<filter id>"}', `${p}/filter`);
  }
  // A field sent as null counts as not sent (docs/service.md): {"id": null, "expression": …} is an inline filter.
  const fo = withoutNulls(expectObject(obj.filter, `${p}/filter`));
  if (fo.id !== undefined) {
    onlyKeys(fo, ['id'], `${p}/filter`);
    const id = decodeId(fo, 'id', `${p}/filter`, 'filter.id');
    const f = getFilter(store, zone.id, id);
    if (!f) throw ApiError.of(404, CODES.notFound, `filter ${id} not found`, `${p}/filter/id`);
    return { index: i, fields, filterId: id, expression: f.expression, filterPointer: `${p}/filter/id` };
  }
  onlyKeys(fo, FILTER_KEYS, `${p}/filter`);
  const inline = decodeFilter(fo, `${p}/filter`);
  requireValidExpression(inline.expression, zone.plan, `${p}/filter/expression`);
  return { index: i, fields, inline, expression: inline.expression, filterPointer: `${p}/filter/expression` };
}

function insertRule(store: Store, zoneId: string, id: string, filterId: string, f: RuleFields, seq: number, now: string): void {
  store.run(
    'INSERT INTO firewall_rules (id, zone_id, filter_id, action, priority, paused, description, ref, products, seq, created_on, modified_on) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
    [id, zoneId, filterId, f.action, f.priority, f.paused ? 1 : 0, f.description, f.ref, toJson(f.products), seq, now, now],
  );
}

type CreateOutcome = { readonly rules: RuleRow[] } | { readonly problems: readonly (ApiMessage & { index?: number })[]; readonly filterIds: readonly string[]; readonly created: number };

/**
 * The rules of a collection write: the API takes an array. The official SDK's
 * firewall.rules create, bulkEdit and bulkUpdate send one object, which the hosted API
 * refused too (its request types are not the API's): the error says how to send it.
 */
function ruleList(body: Json | undefined, method: 'post' | 'put' | 'patch'): Json[] {
  if (body !== null && typeof body === 'object' && !Array.isArray(body)) {
    const call = { post: 'create', put: 'bulkUpdate', patch: 'bulkEdit' }[method];
    throw invalidJson(`expected an array of firewall rules at the top level, got one object: send it as [{…}] (the official SDK's firewall.rules.${call} sends one object, which the API refuses; call the endpoint with an array body instead: client.${method}(path, { body: [${method === 'post' ? 'rule' : method === 'put' ? '{ id, …rule }' : '{ id, priority }'}] }))`, '/');
  }
  return expectArray(body);
}

function create(ctx: Ctx): Reply {
  const zone = requireZone(ctx, GROUPS, 'Write');
  const store = ctx.service.store;
  const items = ruleList(ctx.body, 'post');
  // 1. The quota, before anything is decoded: it bounds the items one request may carry.
  requireRuleQuota(store, zone, items.length);
  // 2. Decode and validate everything: any invalid filter or rule → 400, nothing created.
  const rules = items.map((item, i) => decodeNewRule(store, zone, item, i));
  const outcome = store.write((): CreateOutcome => {
    // Again inside the transaction, which is what counts.
    requireRuleQuota(store, zone, rules.length);
    const existing = new Map(zoneFilters(store, zone.id).map((f) => [f.expression, f.id]));
    const inBatch = new Map<string, number>();
    for (const r of rules) {
      if (!r.inline) continue;
      const dup = existing.get(r.inline.expression);
      if (dup !== undefined) {
        throw new ApiError(400, [
          {
            code: CODES.duplicateInlineFilter,
            message: `filter at index ${r.index} duplicates an already existing filter (config duplicates an already existing config): to share it, use "filter": {"id": "${dup}"}`,
            source: { pointer: `/${r.index}/filter/expression` },
            meta: { id: dup },
          },
        ]);
      }
      const twin = inBatch.get(r.inline.expression);
      if (twin !== undefined) {
        throw ApiError.of(
          400,
          CODES.duplicateInlineFilter,
          `filter at index ${r.index} duplicates the filter at index ${twin}: create the filter once and share it with "filter": {"id": …}`,
          `/${r.index}/filter/expression`,
        );
      }
      inBatch.set(r.inline.expression, r.index);
    }
    // 3. What the plan refuses: the rules are not created, the inline filters are.
    const problems: (ApiMessage & { index?: number })[] = [];
    for (const r of rules) {
      const p = rulePlanProblem(zone.plan, r.fields.action, r.expression, `/${r.index}`, r.filterPointer);
      if (p) problems.push({ ...p, index: r.index });
    }
    const now = timestamp();
    const filterIds = rules.map((r) => (r.inline ? insertFilter(store, zone.id, r.inline, true, now).id : r.filterId!));
    const created = rules.filter((r) => r.inline).length;
    if (problems.length > 0) return { problems, filterIds, created };
    let seq = Number(store.get<{ s: number | null }>('SELECT MAX(seq) AS s FROM firewall_rules WHERE zone_id = ?', [zone.id])!.s ?? -1) + 1;
    return {
      rules: rules.map((r, i) => {
        const id = newId();
        insertRule(store, zone.id, id, filterIds[i]!, r.fields, seq++, now);
        return getRule(store, zone.id, id)!;
      }),
    };
  }, storeScope('zone', zone.id));
  if ('problems' in outcome) throw singleCallError(zone, outcome.problems, outcome.filterIds, outcome.created, rules);
  return { result: ruleObjects(store, zone.id, outcome.rules) };
}

/**
 * Refuses a create that would take the zone past its plan's firewall-rule quota: 400
 * (10207), nothing stored. Run before the body's items are decoded (a body of thousands of
 * rules is refused without checking one expression) and again in the write transaction.
 */
function requireRuleQuota(store: Store, zone: ZoneRow, adding: number): void {
  const count = Number(store.get<{ n: number }>('SELECT COUNT(*) AS n FROM firewall_rules WHERE zone_id = ?', [zone.id])!.n);
  const quota = RULE_QUOTA[zone.plan];
  if (count + adding > quota) {
    throw ApiError.of(
      400,
      CODES.firewallRuleQuota,
      `exceeded the maximum number of firewall rules for the ${capitalPlan(zone.plan)} plan (${quota}): the zone has ${count} and the request adds ${adding}; nothing was created`,
    );
  }
}

/** The error of a create refused for plan reasons, with the two-call advice when filters were created. */
function singleCallError(
  zone: ZoneRow,
  problems: readonly (ApiMessage & { index?: number })[],
  filterIds: readonly string[],
  created: number,
  rules: readonly NewRule[],
): ApiError {
  let advice = '';
  if (created > 0) {
    const path = `POST /zones/${zone.id}/firewall/rules`;
    advice =
      rules.length === 1
        ? ` The filter was created (id ${filterIds[0]}) but the rule was not: fix the rule and finish with the two-call flow, ${path} with "filter": {"id": "${filterIds[0]}"}.`
        : ` The request's filters were created (ids in meta.filter_ids, in body order) but no rule was: fix the rules and finish with the two-call flow, ${path} with each rule's "filter": {"id": …}.`;
  }
  return new ApiError(
    400,
    problems.map(({ index, ...p }) => ({
      ...p,
      message: advice && !p.message.endsWith('.') ? `${p.message}.${advice}` : p.message + advice,
      meta: { ...(index !== undefined ? { filter_id: filterIds[index] } : rules.length === 1 ? { filter_id: filterIds[0] } : {}), filter_ids: filterIds },
    })),
  );
}

// ---------------------------------------------------------------------------------------
// Update (PUT: the full rule; omitted fields are erased; the filter is re-linked by id)

interface RuleUpdate {
  readonly id: string;
  readonly filterId: string;
  readonly fields: RuleFields;
  readonly pointer: string;
}

function decodeRuleUpdate(obj: JsonObject, pointer: string, pathId?: string): RuleUpdate {
  onlyKeys(obj, ['id', ...RULE_KEYS], pointer);
  if (pathId !== undefined && obj.id === undefined) {
    throw ApiError.of(400, CODES.invalidValue, 'id is required: the body of a PUT of one firewall rule names the rule\'s id too (the official SDK\'s firewall.rules.update sends none; send the rule with its id)', `${pointer}/id`);
  }
  const id = decodeId(obj, 'id', pointer, 'id');
  if (pathId !== undefined && id !== pathId) {
    throw ApiError.of(400, CODES.invalidValue, `the id in the body (${id}) is not the firewall rule's id in the path (${pathId})`, `${pointer}/id`);
  }
  const filterId = decodeFilterRef(obj.filter, pointer);
  return { id, filterId, fields: decodeRuleFields(obj, pointer), pointer };
}

function applyRuleUpdates(store: Store, zone: ZoneRow, updates: readonly RuleUpdate[]): RuleRow[] {
  return store.write(() => {
    const seen = new Set<string>();
    for (const u of updates) {
      if (seen.has(u.id)) throw ApiError.of(400, CODES.invalidValue, `firewall rule ${u.id} is listed twice`, `${u.pointer}/id`);
      seen.add(u.id);
      if (!getRule(store, zone.id, u.id)) throw notFoundRule(u.id, `${u.pointer}/id`);
      const f = getFilter(store, zone.id, u.filterId);
      if (!f) throw ApiError.of(404, CODES.notFound, `filter ${u.filterId} not found`, `${u.pointer}/filter/id`);
      requirePlanAllows(zone.plan, u.fields.action, f.expression, u.pointer, `${u.pointer}/filter/id`);
    }
    const now = timestamp();
    return updates.map((u) => {
      const f = u.fields;
      store.run(
        'UPDATE firewall_rules SET filter_id = ?, action = ?, priority = ?, paused = ?, description = ?, ref = ?, products = ?, modified_on = ? WHERE zone_id = ? AND id = ?',
        [u.filterId, f.action, f.priority, f.paused ? 1 : 0, f.description, f.ref, toJson(f.products), now, zone.id, u.id],
      );
      return getRule(store, zone.id, u.id)!;
    });
  }, storeScope('zone', zone.id));
}

function bulkUpdate(ctx: Ctx): Reply {
  const zone = requireZone(ctx, GROUPS, 'Write');
  const items = ruleList(ctx.body, 'put');
  requireBatchSize(items, MAX_RULES_PER_UPDATE, 'firewall rules in a bulk update');
  const updates = items.map((item, i) => decodeRuleUpdate(expectObject(item, `/${i}`), `/${i}`));
  return { result: ruleObjects(ctx.service.store, zone.id, applyRuleUpdates(ctx.service.store, zone, updates)) };
}

function updateOne(ctx: Ctx): Reply {
  const zone = requireZone(ctx, GROUPS, 'Write');
  const id = ctx.params.firewall_rule_id!;
  if (!getRule(ctx.service.store, zone.id, id)) throw notFoundRule(id);
  const update = decodeRuleUpdate(expectObject(ctx.body), '', id);
  const [row] = applyRuleUpdates(ctx.service.store, zone, [update]);
  return { result: ruleObject(row!, getFilter(ctx.service.store, zone.id, row!.filter_id)) };
}

// ---------------------------------------------------------------------------------------
// PATCH: priorities

interface PriorityEdit {
  readonly id: string;
  readonly priority: number | null;
  readonly pointer: string;
}

function decodePriority(obj: JsonObject, pointer: string, pathId?: string): PriorityEdit {
  onlyKeys(obj, ['id', 'priority'], pointer);
  const id = idOfUpdate(obj, pointer, 'firewall rule', pathId);
  if (!('priority' in obj)) {
    // The official SDK's firewall.rules.edit takes no priority: it cannot send the one thing a PATCH changes.
    const sdk = pathId === undefined ? '' : "; the official SDK's firewall.rules.edit sends none: call client.patch(path, { body: { priority } })";
    throw ApiError.of(400, CODES.invalidValue, `priority is required (a number from 0 to 2147483647, or null)${sdk}`, `${pointer}/priority`);
  }
  return { id, priority: optInt(obj, 'priority', pointer, 0, MAX_PRIORITY) ?? null, pointer };
}

function applyPriorities(store: Store, zone: ZoneRow, edits: readonly PriorityEdit[]): RuleRow[] {
  return store.write(() => {
    const seen = new Set<string>();
    for (const e of edits) {
      if (seen.has(e.id)) throw ApiError.of(400, CODES.invalidValue, `firewall rule ${e.id} is listed twice`, `${e.pointer}/id`);
      seen.add(e.id);
      if (!getRule(store, zone.id, e.id)) throw notFoundRule(e.id, e.pointer === '' ? undefined : `${e.pointer}/id`);
    }
    const now = timestamp();
    return edits.map((e) => {
      store.run('UPDATE firewall_rules SET priority = ?, modified_on = ? WHERE zone_id = ? AND id = ?', [e.priority, now, zone.id, e.id]);
      return getRule(store, zone.id, e.id)!;
    });
  }, storeScope('zone', zone.id));
}

function bulkPriority(ctx: Ctx): Reply {
  const zone = requireZone(ctx, GROUPS, 'Write');
  const edits = ruleList(ctx.body, 'patch').map((item, i) => decodePriority(expectObject(item, `/${i}`), `/${i}`));
  return { result: ruleObjects(ctx.service.store, zone.id, applyPriorities(ctx.service.store, zone, edits)) };
}

function priorityOne(ctx: Ctx): Reply {
  const zone = requireZone(ctx, GROUPS, 'Write');
  const id = ctx.params.firewall_rule_id!;
  const edit = decodePriority(expectObject(ctx.body), '', id);
  // The API answers an array with the one rule (the SDK types it as a page).
  return { result: ruleObjects(ctx.service.store, zone.id, applyPriorities(ctx.service.store, zone, [edit])) };
}

// ---------------------------------------------------------------------------------------
// Delete

/** The optional `{"delete_filter_if_unused": true}` body of a delete. */
function deleteFilterIfUnused(body: Json | undefined): boolean {
  if (body === undefined) return false;
  const obj = expectObject(body);
  onlyKeys(obj, ['delete_filter_if_unused']);
  return optBool(obj, 'delete_filter_if_unused') ?? false;
}

function deleteRules(store: Store, zone: ZoneRow, ids: readonly string[], dropFilters: boolean): void {
  store.write(() => {
    for (const id of ids) {
      const rule = getRule(store, zone.id, id);
      if (!rule) continue;
      store.run('DELETE FROM firewall_rules WHERE zone_id = ? AND id = ?', [zone.id, id]);
      if (dropFilters && rulesUsing(store, zone.id, rule.filter_id).length === 0) {
        store.run('DELETE FROM filters WHERE zone_id = ? AND id = ?', [zone.id, rule.filter_id]);
      }
    }
  }, storeScope('zone', zone.id));
}

function deleteOne(ctx: Ctx): Reply {
  const zone = requireZone(ctx, GROUPS, 'Write');
  const id = ctx.params.firewall_rule_id!;
  const drop = deleteFilterIfUnused(ctx.body);
  if (!getRule(ctx.service.store, zone.id, id)) throw notFoundRule(id);
  deleteRules(ctx.service.store, zone, [id], drop);
  return { result: { id } };
}

/** `DELETE …/firewall/rules?id=a&id=b`: unknown ids are no error (they are gone either way). */
function bulkDelete(ctx: Ctx): Reply {
  const zone = requireZone(ctx, GROUPS, 'Write');
  const ids = idParams(ctx.query);
  if (Array.isArray(ctx.body)) {
    // The 2024 spec showed the ids in a body; the API reads them from the query.
    throw ApiError.of(400, CODES.invalidValue, 'give the firewall rules to delete as repeated id query parameters (?id=…&id=…), not in a body');
  }
  const drop = deleteFilterIfUnused(ctx.body);
  deleteRules(ctx.service.store, zone, ids, drop);
  return { result: ids.map((id) => ({ id })) };
}
