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
 *
 * The bodies the official SDK (`cloudflare` 7.x) sends, whose request types for firewall
 * rules are not the API's (rules-api §6.2), are taken too, each answered in the shape the
 * SDK reads (an array for its page-typed calls, one rule for `get`/`update`):
 *   - `create`, `bulkUpdate` and `bulkEdit` send one rule object, not an array: a POST, PUT
 *     or PATCH of `…/firewall/rules` takes one object as a batch of one (its error pointers
 *     start at the top, `/action`, not `/0/action`) and answers an array;
 *   - `create` and `update` type the action as rate limiting's `{"mode": …}`: taken
 *     (legacyStore.ts, decodeAction); the rule answers its action's name;
 *   - `update` sends no `id` (it is in the path) and a filter without one, an inline filter
 *     `{"expression", …}`: the rule gets a filter with exactly those fields. When its filter
 *     is its own (made inline for it and used by no other rule), that filter is rewritten in
 *     place (it keeps its id); otherwise a new filter is made for the rule (marked as its
 *     own, as a single-call create's), and the old one is left to the rules and clients that
 *     use it. The same in a bulk PUT. An inline filter equal to the rule's filter changes
 *     nothing; one whose expression another filter has is refused (10202 with that filter's
 *     id, as at create);
 *   - `edit` (PATCH one) sends its params as the body: `{"priority": …}` works as before, and
 *     a body without `priority` is refused (it is the one thing the call changes);
 *   - `bulkDelete` sends no body: the ids go in its request options' query
 *     (`{ query: { id: [a, b] } }`, repeated `id` parameters).
 */
import { ApiError, CODES, newId, notFound, paginate, timestamp, type ApiMessage, type Reply } from '../api';
import { expectObject, invalidJson, onlyKeys, optBool, optInt, type Json, type JsonObject } from '../body';
import type { Ctx, Router } from '../router';
import { storeScope, type ZoneRow } from '../scope';
import { requireZone } from '../scopeAccess';
import type { Store } from '../store';
import { toJson } from '../store';
import {
  capitalPlan,
  decodeFilter,
  decodeId,
  decodeRuleFields,
  decodeRuleFilter,
  FILTER_KEYS,
  getFilter,
  getRule,
  idOfUpdate,
  idParams,
  MAX_PRIORITY,
  pausedParam,
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
  type FilterRow,
  type RuleFields,
  type RuleFilterInput,
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

/**
 * The items of a bulk body (POST, PUT, PATCH of `…/firewall/rules`): an array, or one object
 * (the official SDK's `create`, `bulkUpdate` and `bulkEdit` send one), taken as a batch of
 * one. Each item's JSON pointer is where it is in the body: `/i`, or `` for the one object.
 */
interface BodyItem {
  readonly item: Json;
  readonly pointer: string;
}

function bodyItems(body: Json | undefined): BodyItem[] {
  if (Array.isArray(body)) return body.map((item, i) => ({ item, pointer: `/${i}` }));
  if (body !== undefined && body !== null && typeof body === 'object') return [{ item: body, pointer: '' }];
  const got = body === undefined ? 'nothing' : body === null ? 'null' : typeof body;
  throw invalidJson(`expected an array (or one object) at the top level, got ${got}`, '/');
}

/** How an error names a body item: `filter at index 2`, or `the filter` of a one-object body. */
function itemName(pointer: string, what: string): string {
  return pointer === '' ? `the ${what}` : `${what} at index ${pointer.slice(1)}`;
}

interface NewRule {
  readonly index: number;
  /** The item's JSON pointer in the body (`/i`, or `` for a one-object body). */
  readonly pointer: string;
  readonly fields: RuleFields;
  /** An inline filter to create, or the id of an existing one. */
  readonly inline?: FilterInput;
  readonly filterId?: string;
  /** The filter's expression (for the plan check). */
  readonly expression: string;
  readonly filterPointer: string;
}

function decodeNewRule(store: Store, zone: ZoneRow, { item, pointer: p }: BodyItem, i: number): NewRule {
  const obj = expectObject(item, p);
  onlyKeys(obj, RULE_KEYS, p);
  const fields = decodeRuleFields(obj, p);
  if (obj.filter === undefined || obj.filter === null) {
    throw ApiError.of(400, CODES.invalidValue, 'filter is required: an inline filter {"expression": …} or an existing one {"id": "<filter id>"}', `${p}/filter`);
  }
  const fo = expectObject(obj.filter, `${p}/filter`);
  if (fo.id !== undefined) {
    onlyKeys(fo, ['id'], `${p}/filter`);
    const id = decodeId(fo, 'id', `${p}/filter`, 'filter.id');
    const f = getFilter(store, zone.id, id);
    if (!f) throw ApiError.of(404, CODES.notFound, `filter ${id} not found`, `${p}/filter/id`);
    return { index: i, pointer: p, fields, filterId: id, expression: f.expression, filterPointer: `${p}/filter/id` };
  }
  onlyKeys(fo, FILTER_KEYS, `${p}/filter`);
  const inline = decodeFilter(fo, `${p}/filter`);
  requireValidExpression(inline.expression, zone.plan, `${p}/filter/expression`);
  return { index: i, pointer: p, fields, inline, expression: inline.expression, filterPointer: `${p}/filter/expression` };
}

function insertRule(store: Store, zoneId: string, id: string, filterId: string, f: RuleFields, seq: number, now: string): void {
  store.run(
    'INSERT INTO firewall_rules (id, zone_id, filter_id, action, priority, paused, description, ref, products, seq, created_on, modified_on) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
    [id, zoneId, filterId, f.action, f.priority, f.paused ? 1 : 0, f.description, f.ref, toJson(f.products), seq, now, now],
  );
}

/** A rule's inline filter whose expression another filter of the zone has (10202, that filter's id in meta.id). */
function duplicateInline(pointer: string, existing: string, advice: string): ApiError {
  return new ApiError(400, [
    {
      code: CODES.duplicateInlineFilter,
      message: `${itemName(pointer, 'filter')} duplicates an already existing filter (config duplicates an already existing config): ${advice} "filter": {"id": "${existing}"}`,
      source: { pointer: `${pointer}/filter/expression` },
      meta: { id: existing },
    },
  ]);
}

/** Two inline filters of one request with one expression: the later one in the body is refused. */
function duplicateInBatch(a: string, b: string, advice: string): ApiError {
  const [twin, pointer] = Number(a.slice(1)) < Number(b.slice(1)) ? [a, b] : [b, a];
  return ApiError.of(
    400,
    CODES.duplicateInlineFilter,
    `${itemName(pointer, 'filter')} duplicates the filter at index ${twin.slice(1)}: ${advice}`,
    `${pointer}/filter/expression`,
  );
}

type CreateOutcome = { readonly rules: RuleRow[] } | { readonly problems: readonly (ApiMessage & { index?: number })[]; readonly filterIds: readonly string[]; readonly created: number };

function create(ctx: Ctx): Reply {
  const zone = requireZone(ctx, GROUPS, 'Write');
  const store = ctx.service.store;
  const items = bodyItems(ctx.body);
  // 1. The quota, before anything is decoded: it bounds the items one request may carry.
  requireRuleQuota(store, zone, items.length);
  // 2. Decode and validate everything: any invalid filter or rule → 400, nothing created.
  const rules = items.map((item, i) => decodeNewRule(store, zone, item, i));
  const outcome = store.write((): CreateOutcome => {
    // Again inside the transaction, which is what counts.
    requireRuleQuota(store, zone, rules.length);
    const existing = new Map(zoneFilters(store, zone.id).map((f) => [f.expression, f.id]));
    const inBatch = new Map<string, string>();
    for (const r of rules) {
      if (!r.inline) continue;
      const dup = existing.get(r.inline.expression);
      if (dup !== undefined) throw duplicateInline(r.pointer, dup, 'to share it, use');
      const twin = inBatch.get(r.inline.expression);
      if (twin !== undefined) throw duplicateInBatch(r.pointer, twin, 'create the filter once and share it with "filter": {"id": …}');
      inBatch.set(r.inline.expression, r.pointer);
    }
    // 3. What the plan refuses: the rules are not created, the inline filters are.
    const problems: (ApiMessage & { index?: number })[] = [];
    for (const r of rules) {
      const p = rulePlanProblem(zone.plan, r.fields.action, r.expression, r.pointer, r.filterPointer);
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
  // An array, also for a one-object body (the SDK reads the answer as a page of rules).
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
// Update (PUT: the full rule; omitted fields are erased; the filter is re-linked by id, or
// given inline)

interface RuleUpdate {
  readonly id: string;
  readonly filter: RuleFilterInput;
  readonly fields: RuleFields;
  readonly pointer: string;
}

function decodeRuleUpdate(zone: ZoneRow, obj: JsonObject, pointer: string, pathId?: string): RuleUpdate {
  onlyKeys(obj, ['id', ...RULE_KEYS], pointer);
  const id = idOfUpdate(obj, pointer, 'firewall rule', pathId);
  const fields = decodeRuleFields(obj, pointer);
  return { id, filter: decodeRuleFilter(obj.filter, pointer, zone.plan), fields, pointer };
}

/** What a PUT does to its rule's filter. */
type FilterChange =
  /** The rule uses this existing filter (given by id, or its own filter, unchanged). */
  | { readonly kind: 'link'; readonly id: string }
  /** The rule's own filter, rewritten in place with the inline filter's fields. */
  | { readonly kind: 'rewrite'; readonly id: string; readonly input: FilterInput }
  /** A new filter, the rule's own, from the inline filter. */
  | { readonly kind: 'new'; readonly input: FilterInput };

function sameFilter(f: FilterRow, input: FilterInput): boolean {
  return f.expression === input.expression && (f.paused === 1) === input.paused && f.description === input.description && f.ref === input.ref;
}

/**
 * Where a rule's inline filter goes: nowhere when it equals the rule's filter; into that
 * filter when the filter is the rule's own (made inline, used by no other rule, and not
 * named by id elsewhere in the request); else into a new filter.
 */
function inlineChange(store: Store, zoneId: string, rule: RuleRow, input: FilterInput, linkedInRequest: ReadonlySet<string>): FilterChange {
  const current = getFilter(store, zoneId, rule.filter_id);
  if (current && sameFilter(current, input)) return { kind: 'link', id: current.id };
  const own =
    current !== undefined && current.single_call === 1 && !linkedInRequest.has(current.id) && rulesUsing(store, zoneId, current.id).every((id) => id === rule.id);
  return own ? { kind: 'rewrite', id: current.id, input } : { kind: 'new', input };
}

/**
 * After a PUT's inline filters, no two filters of the zone may have one expression (as the
 * Filters API keeps them): an inline filter whose expression another filter has is refused
 * with that filter's id (10202, as at create), two of one request with the later one's pointer.
 */
function requireDistinctExpressions(store: Store, zoneId: string, updates: readonly RuleUpdate[], changes: readonly FilterChange[]): void {
  const advice = 'to use it, give the rule';
  const twinAdvice = 'give the filter to one rule, and the others "filter": {"id": …} once it exists';
  const rewrites = new Map<string, { readonly expression: string; readonly pointer: string }>();
  changes.forEach((c, i) => {
    if (c.kind === 'rewrite') rewrites.set(c.id, { expression: c.input.expression, pointer: updates[i]!.pointer });
  });
  // The zone's expressions once the own filters are rewritten, with the filter that has each
  // (and the pointer of the update rewriting it).
  const byExpression = new Map<string, { readonly id: string; readonly pointer?: string }>();
  for (const f of zoneFilters(store, zoneId)) {
    const mine = rewrites.get(f.id);
    const expression = mine?.expression ?? f.expression;
    const other = byExpression.get(expression);
    if (other === undefined) {
      byExpression.set(expression, { id: f.id, pointer: mine?.pointer });
      continue;
    }
    if (mine && other.pointer !== undefined) throw duplicateInBatch(mine.pointer, other.pointer, twinAdvice);
    if (mine) throw duplicateInline(mine.pointer, other.id, advice);
    if (other.pointer !== undefined) throw duplicateInline(other.pointer, f.id, advice);
    // Two filters that already shared an expression (an older store): not this request's doing.
  }
  const made = new Map<string, string>();
  changes.forEach((c, i) => {
    if (c.kind !== 'new') return;
    const pointer = updates[i]!.pointer;
    const other = byExpression.get(c.input.expression);
    if (other?.pointer !== undefined) throw duplicateInBatch(pointer, other.pointer, twinAdvice);
    if (other) throw duplicateInline(pointer, other.id, advice);
    const twin = made.get(c.input.expression);
    if (twin !== undefined) throw duplicateInBatch(pointer, twin, twinAdvice);
    made.set(c.input.expression, pointer);
  });
}

function applyRuleUpdates(store: Store, zone: ZoneRow, updates: readonly RuleUpdate[]): RuleRow[] {
  return store.write(() => {
    const seen = new Set<string>();
    const linkedInRequest = new Set(updates.flatMap((u) => (u.filter.id !== undefined ? [u.filter.id] : [])));
    const changes: FilterChange[] = [];
    for (const u of updates) {
      if (seen.has(u.id)) throw ApiError.of(400, CODES.invalidValue, `firewall rule ${u.id} is listed twice`, `${u.pointer}/id`);
      seen.add(u.id);
      const rule = getRule(store, zone.id, u.id);
      if (!rule) throw notFoundRule(u.id, `${u.pointer}/id`);
      if (u.filter.inline) {
        requirePlanAllows(zone.plan, u.fields.action, u.filter.inline.expression, u.pointer, `${u.pointer}/filter/expression`);
        changes.push(inlineChange(store, zone.id, rule, u.filter.inline, linkedInRequest));
      } else {
        const f = getFilter(store, zone.id, u.filter.id);
        if (!f) throw ApiError.of(404, CODES.notFound, `filter ${u.filter.id} not found`, `${u.pointer}/filter/id`);
        requirePlanAllows(zone.plan, u.fields.action, f.expression, u.pointer, `${u.pointer}/filter/id`);
        changes.push({ kind: 'link', id: f.id });
      }
    }
    requireDistinctExpressions(store, zone.id, updates, changes);
    const now = timestamp();
    return updates.map((u, i) => {
      const c = changes[i]!;
      let filterId: string;
      if (c.kind === 'new') filterId = insertFilter(store, zone.id, c.input, true, now).id;
      else {
        filterId = c.id;
        if (c.kind === 'rewrite') {
          store.run('UPDATE filters SET expression = ?, paused = ?, description = ?, ref = ?, modified_on = ? WHERE zone_id = ? AND id = ?', [
            c.input.expression,
            c.input.paused ? 1 : 0,
            c.input.description,
            c.input.ref,
            now,
            zone.id,
            c.id,
          ]);
        }
      }
      const f = u.fields;
      store.run(
        'UPDATE firewall_rules SET filter_id = ?, action = ?, priority = ?, paused = ?, description = ?, ref = ?, products = ?, modified_on = ? WHERE zone_id = ? AND id = ?',
        [filterId, f.action, f.priority, f.paused ? 1 : 0, f.description, f.ref, toJson(f.products), now, zone.id, u.id],
      );
      return getRule(store, zone.id, u.id)!;
    });
  }, storeScope('zone', zone.id));
}

/** `PUT …/firewall/rules`: an array of full rules, or one (the SDK's `bulkUpdate`); answers an array. */
function bulkUpdate(ctx: Ctx): Reply {
  const zone = requireZone(ctx, GROUPS, 'Write');
  const updates = bodyItems(ctx.body).map(({ item, pointer }) => decodeRuleUpdate(zone, expectObject(item, pointer), pointer));
  return { result: ruleObjects(ctx.service.store, zone.id, applyRuleUpdates(ctx.service.store, zone, updates)) };
}

/** `PUT …/firewall/rules/{id}`: the full rule (its `id` optional); answers the rule. */
function updateOne(ctx: Ctx): Reply {
  const zone = requireZone(ctx, GROUPS, 'Write');
  const id = ctx.params.firewall_rule_id!;
  if (!getRule(ctx.service.store, zone.id, id)) throw notFoundRule(id);
  const update = decodeRuleUpdate(zone, expectObject(ctx.body), '', id);
  const [row] = applyRuleUpdates(ctx.service.store, zone, [update]);
  return { result: ruleObject(row!, getFilter(ctx.service.store, zone.id, row!.filter_id)) };
}

// ---------------------------------------------------------------------------------------
// PATCH: priorities

interface PriorityEdit {
  readonly id: string;
  readonly priority: number | null;
  readonly pointer: string;
  /** Where the id is in the body; none when the path gave it. */
  readonly idPointer?: string;
}

function decodePriority(obj: JsonObject, pointer: string, pathId?: string): PriorityEdit {
  onlyKeys(obj, ['id', 'priority'], pointer);
  const id = idOfUpdate(obj, pointer, 'firewall rule', pathId);
  // The one thing a PATCH changes: a body without it (the SDK's `edit` sends its params, none
  // by its type) is refused rather than answered as a change that did nothing.
  if (!('priority' in obj)) throw ApiError.of(400, CODES.invalidValue, 'priority is required (a number from 0 to 2147483647, or null)', `${pointer}/priority`);
  const priority = optInt(obj, 'priority', pointer, 0, MAX_PRIORITY) ?? null;
  return { id, priority, pointer, ...(pathId === undefined ? { idPointer: `${pointer}/id` } : {}) };
}

function applyPriorities(store: Store, zone: ZoneRow, edits: readonly PriorityEdit[]): RuleRow[] {
  return store.write(() => {
    const seen = new Set<string>();
    for (const e of edits) {
      if (seen.has(e.id)) throw ApiError.of(400, CODES.invalidValue, `firewall rule ${e.id} is listed twice`, `${e.pointer}/id`);
      seen.add(e.id);
      if (!getRule(store, zone.id, e.id)) throw notFoundRule(e.id, e.idPointer);
    }
    const now = timestamp();
    return edits.map((e) => {
      store.run('UPDATE firewall_rules SET priority = ?, modified_on = ? WHERE zone_id = ? AND id = ?', [e.priority, now, zone.id, e.id]);
      return getRule(store, zone.id, e.id)!;
    });
  }, storeScope('zone', zone.id));
}

/** `PATCH …/firewall/rules`: an array of `{id, priority}`, or one (the SDK's `bulkEdit`); answers an array. */
function bulkPriority(ctx: Ctx): Reply {
  const zone = requireZone(ctx, GROUPS, 'Write');
  const edits = bodyItems(ctx.body).map(({ item, pointer }) => decodePriority(expectObject(item, pointer), pointer));
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
