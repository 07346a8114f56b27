/**
 * The legacy Firewall Rules and Filters APIs' storage and shared rules (rules-api §4):
 * rows ↔ API objects, body decoding, expression checks with the language core, and the
 * per-plan firewall-rule quotas. Used by routes/firewallRules.ts and routes/filters.ts.
 *
 * Storage: `filters` and `firewall_rules` rows (schema.ts). `firewall_rules.seq` keeps a
 * zone's list order (creation order; a new rule gets the zone's largest seq + 1 inside
 * the write transaction, so concurrent creates get distinct, gap-free values).
 * `filters.single_call = 1` marks a filter created inline by a firewall-rule create (the
 * single-call form): it belongs to its rule(s) and the Filters API will not change or
 * delete it while a rule uses it (rules-api §4; issue #6).
 *
 * Decisions where the reference is silent (also in the README's service section):
 *   - quotas: firewall rules per zone by plan, as the hosted service had them:
 *     Free 5, Pro 20, Business 100, Enterprise 1000 (RULE_QUOTA); a create beyond the
 *     quota is refused before its body is decoded, and stores nothing (not even its
 *     inline filters);
 *   - at most 1000 filters per Filters API create or bulk update (MAX_FILTERS_PER_REQUEST);
 *   - an expression error reads like the engine (§1.6, `… is not a valid value for
 *     expression because could not parse filter expression: Filter parsing error (L:C):…`);
 *     a field or function the phase http_request_firewall_custom lacks is an error too;
 *   - a feature the zone's plan lacks (the core's `plan-required` finding, or the `log`
 *     action below Enterprise) does not make a *filter* invalid — it refuses the *rule*;
 *   - a filter in use by a firewall rule cannot be deleted (single or bulk delete).
 */
import type { Plan } from '../language/scheme/types';
import type { Diagnostic } from '../language/index';
import { expressionVerdict, refusalText } from './expressionCheck';
import { ApiError, CODES, ID, type ApiMessage } from './api';
import { expectObject, invalidJson, onlyKeys, optBool, optInt, optString, type Json, type JsonObject } from './body';
import { fromJson, type Store } from './store';
import { PLAN_NAMES } from './scope';
import type { Filter, FirewallRule } from '../rulesApi';

export const PHASE = 'http_request_firewall_custom';

/** Firewall rules per zone, by plan (the hosted service's limits; the reference has none). */
export const RULE_QUOTA: Readonly<Record<Plan, number>> = { free: 5, pro: 20, business: 100, enterprise: 1000 };

export const ACTIONS = ['block', 'challenge', 'js_challenge', 'managed_challenge', 'allow', 'log', 'bypass'] as const;
export type LegacyAction = (typeof ACTIONS)[number];
export const PRODUCTS = ['zoneLockdown', 'uaBlock', 'bic', 'hot', 'securityLevel', 'rateLimit', 'waf'] as const;

/**
 * The most filters one request may create (POST) or change (PUT) on the Filters API. The
 * hosted reference gives no figure; 1000 is the largest per-plan firewall-rule quota
 * (Enterprise), so a filter for each rule a zone may have fits in one request, and it bounds
 * the expressions one request has checked on the service's main thread. A firewall-rule
 * create is bounded by its plan's quota instead (checked before anything is read).
 */
export const MAX_FILTERS_PER_REQUEST = 1000;

/** The most firewall rules one bulk update (PUT) may carry, as the hosted API documents. */
export const MAX_RULES_PER_UPDATE = 25;

/** Refuses a bulk body of more than `max` items before any of them is decoded. */
export function requireBatchSize(items: readonly unknown[], max: number, what: string): void {
  if (items.length > max) {
    throw ApiError.of(400, CODES.invalidValue, `a request may carry at most ${max} ${what}, got ${items.length}: send them in several requests`);
  }
}

export const MAX_PRIORITY = 2147483647;
export const MAX_DESCRIPTION = 500;
export const MAX_REF = 50;

export interface FilterRow {
  readonly id: string;
  readonly zone_id: string;
  readonly expression: string;
  readonly paused: number;
  readonly description: string;
  readonly ref: string;
  readonly single_call: number;
  readonly created_on: string;
  readonly modified_on: string;
}

export interface RuleRow {
  readonly id: string;
  readonly zone_id: string;
  readonly filter_id: string;
  readonly action: string;
  readonly priority: number | null;
  readonly paused: number;
  readonly description: string;
  readonly ref: string;
  readonly products: string;
  readonly seq: number;
  readonly created_on: string;
  readonly modified_on: string;
}

/** The API's filter: every field present. */
export type FilterObject = Required<Filter>;

export function filterObject(f: FilterRow): FilterObject {
  return { id: f.id, expression: f.expression, paused: f.paused === 1, description: f.description, ref: f.ref };
}

/** The API's firewall rule; a filter deleted under it shows as `{id, deleted: true}`. */
export function ruleObject(r: RuleRow, f: FilterRow | undefined): FirewallRule {
  const products = fromJson<string[]>(r.products);
  return {
    id: r.id,
    filter: f ? filterObject(f) : { id: r.filter_id, deleted: true },
    action: r.action,
    priority: r.priority,
    paused: r.paused === 1,
    description: r.description,
    ref: r.ref,
    ...(products.length > 0 || r.action === 'bypass' ? { products } : {}),
  };
}

export function getFilter(store: Store, zoneId: string, id: string): FilterRow | undefined {
  return store.get<FilterRow>('SELECT * FROM filters WHERE zone_id = ? AND id = ?', [zoneId, id]);
}

export function zoneFilters(store: Store, zoneId: string): FilterRow[] {
  return store.all<FilterRow>('SELECT * FROM filters WHERE zone_id = ? ORDER BY rowid', [zoneId]);
}

export function getRule(store: Store, zoneId: string, id: string): RuleRow | undefined {
  return store.get<RuleRow>('SELECT * FROM firewall_rules WHERE zone_id = ? AND id = ?', [zoneId, id]);
}

export function zoneRules(store: Store, zoneId: string): RuleRow[] {
  return store.all<RuleRow>('SELECT * FROM firewall_rules WHERE zone_id = ? ORDER BY seq', [zoneId]);
}

/** Rules as API objects, with their filters, in list order. */
export function ruleObjects(store: Store, zoneId: string, rules: readonly RuleRow[]): FirewallRule[] {
  const filters = new Map(zoneFilters(store, zoneId).map((f) => [f.id, f]));
  return rules.map((r) => ruleObject(r, filters.get(r.filter_id)));
}

/** Ids of the rules (in the zone) that use a filter. */
export function rulesUsing(store: Store, zoneId: string, filterId: string): string[] {
  return store.all<{ id: string }>('SELECT id FROM firewall_rules WHERE zone_id = ? AND filter_id = ? ORDER BY seq', [zoneId, filterId]).map((r) => r.id);
}

// ---------------------------------------------------------------------------------------
// Expressions

export interface ExpressionCheck {
  /** Why the expression is invalid (API wording), and where in the body. */
  readonly invalid?: string;
  /** The first feature the zone's plan lacks (the core's wording); the filter is still valid. */
  readonly planProblem?: string;
}

/**
 * What makes a filter invalid, by the service's one policy (expressionVerdict): the
 * engine's error, else a field or function the phase lacks. A feature above the zone's
 * plan leaves the filter valid: the firewall rule using it is refused (10208).
 */
function invalidBy(expression: string, plan?: Plan): { readonly invalid?: Diagnostic; readonly planRequired?: Diagnostic } {
  const v = expressionVerdict(expression, { plan, phase: PHASE });
  const invalid = v.error ?? v.notInPhase;
  return invalid ? { invalid } : v.planRequired ? { planRequired: v.planRequired } : {};
}

/** The first problem of an expression in the firewall-rules phase, for a zone on `plan`. */
export function firstProblem(expression: string, plan?: Plan): Diagnostic | undefined {
  return invalidBy(expression, plan).invalid;
}

export function checkFilterExpression(expression: string, plan: Plan): ExpressionCheck {
  if (expression.trim() === '') return { invalid: `'${expression}' is not a valid value for expression because the expression cannot be blank` };
  const { invalid, planRequired } = invalidBy(expression, plan);
  if (invalid) {
    return {
      invalid: refusalText(expression, 'expression', 'could not parse filter expression', invalid, 'Filter parsing error'),
    };
  }
  return planRequired ? { planProblem: planRequired.message } : {};
}

/** Throws the API's 400 for an invalid filter expression at `pointer`. */
export function requireValidExpression(expression: string, plan: Plan, pointer: string): ExpressionCheck {
  const c = checkFilterExpression(expression, plan);
  if (c.invalid !== undefined) {
    throw ApiError.of(400, expression.trim() === '' ? CODES.blankExpression : CODES.invalidValue, c.invalid, pointer);
  }
  return c;
}

/**
 * The legacy `/filters/validate-expr` layout: no line:column, the whole input in
 * backticks, then spaces and the carets under the bad span (bytes):
 *
 *   Filter parsing error:
 *   `ip.src==34`
 *             ^^ couldn't parse address in network: invalid IP address syntax
 *
 * wirefilter-ffi's old `ParseError` Display writes `1 + byte offset` spaces, but both
 * answers of the hosted service that its docs quote (`ip.src==34`, and a `/2000` prefix
 * at byte 38 with 40 spaces) have `2 + byte offset`; we follow the hosted service.
 */
export function legacyReport(expression: string, d: Diagnostic): string {
  // An expression over the length limit is not quoted back (with a caret per byte past it).
  if (d.code === 'expression-too-long') return `Filter parsing error: ${d.message}\n`;
  const bytes = (s: string) => Buffer.byteLength(s, 'utf8');
  const start = bytes(expression.slice(0, d.range.start));
  const len = bytes(expression.slice(d.range.start, Math.max(d.range.end, d.range.start)));
  return `Filter parsing error:\n\`${expression}\`\n${' '.repeat(2 + start)}${'^'.repeat(Math.max(1, len))} ${d.message}\n`;
}

// ---------------------------------------------------------------------------------------
// Body decoding

export interface FilterInput {
  readonly expression: string;
  readonly paused: boolean;
  readonly description: string;
  readonly ref: string;
}

export const FILTER_KEYS = ['expression', 'paused', 'description', 'ref'] as const;

/** A filter body (create, or the writable part of an update): omitted fields take their defaults. */
export function decodeFilter(obj: JsonObject, pointer: string): FilterInput {
  const expression = optString(obj, 'expression', pointer);
  if (expression === undefined) throw ApiError.of(400, CODES.invalidValue, 'expression is required', `${pointer}/expression`);
  return {
    expression,
    paused: optBool(obj, 'paused', pointer) ?? false,
    description: optString(obj, 'description', pointer, MAX_DESCRIPTION) ?? '',
    ref: optString(obj, 'ref', pointer, MAX_REF) ?? '',
  };
}

/** A 32-hex id field (`id`, `filter.id`). */
export function decodeId(obj: JsonObject, key: string, pointer: string, what: string): string {
  const v = optString(obj, key, pointer);
  if (v === undefined) throw ApiError.of(400, CODES.invalidValue, `${what} is required`, `${pointer}/${key}`);
  if (!ID.test(v)) throw ApiError.of(400, CODES.invalidValue, `'${v}' is not a valid value for ${what}: expected 32 hexadecimal digits`, `${pointer}/${key}`);
  return v;
}

/**
 * The id of the object a body updates: the body's `id`, or, when the path names the object
 * (`pathId`), the path's; the body's is then optional, and refused when it names another.
 * `what` names the object in the error ("filter", "firewall rule").
 */
export function idOfUpdate(obj: JsonObject, pointer: string, what: string, pathId?: string): string {
  if (pathId === undefined) return decodeId(obj, 'id', pointer, 'id');
  const bodyId = optString(obj, 'id', pointer);
  if (bodyId !== undefined && bodyId !== pathId) {
    throw ApiError.of(400, CODES.invalidValue, `the id in the body (${bodyId}) is not the ${what}'s id in the path (${pathId})`, `${pointer}/id`);
  }
  return pathId;
}

export interface RuleFields {
  readonly action: LegacyAction;
  readonly priority: number | null;
  readonly paused: boolean;
  readonly description: string;
  readonly ref: string;
  readonly products: readonly string[];
}

export const RULE_KEYS = ['filter', 'action', 'priority', 'paused', 'description', 'ref', 'products'] as const;

/** The rule's own fields (everything but `id` and `filter`); omitted ones take their defaults. */
export function decodeRuleFields(obj: JsonObject, pointer: string): RuleFields {
  const raw = obj.action;
  if (raw === undefined || raw === null) throw ApiError.of(400, CODES.invalidValue, 'action is required', `${pointer}/action`);
  if (typeof raw !== 'string') {
    // The official SDK's firewall.rules types borrow rate limiting's action object.
    const sdk = typeof raw === 'object' && !Array.isArray(raw) && 'mode' in raw ? ' ({"mode": …}, as the official SDK\'s firewall.rules types have it: the API takes the action\'s name, e.g. "action": "block")' : '';
    throw invalidJson(`field "action" must be a string, got ${Array.isArray(raw) ? 'array' : typeof raw}${sdk}`, `${pointer}/action`);
  }
  if (!(ACTIONS as readonly string[]).includes(raw)) {
    throw ApiError.of(400, CODES.invalidValue, `'${raw}' is not a valid value for action: expected one of ${ACTIONS.join(', ')}`, `${pointer}/action`);
  }
  const action = raw as LegacyAction;
  const products = decodeProducts(obj.products, `${pointer}/products`);
  if (action === 'bypass' && products.length === 0) {
    throw ApiError.of(400, CODES.invalidValue, "products must be specified for the 'bypass' action", `${pointer}/products`);
  }
  if (action !== 'bypass' && products.length > 0) {
    throw ApiError.of(400, CODES.invalidValue, `products are only allowed with the 'bypass' action, not '${action}'`, `${pointer}/products`);
  }
  return {
    action,
    priority: optInt(obj, 'priority', pointer, 0, MAX_PRIORITY) ?? null,
    paused: optBool(obj, 'paused', pointer) ?? false,
    description: optString(obj, 'description', pointer, MAX_DESCRIPTION) ?? '',
    ref: optString(obj, 'ref', pointer, MAX_REF) ?? '',
    products,
  };
}

function decodeProducts(v: Json | undefined, pointer: string): string[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw invalidJson(`field "products" must be an array of strings, got ${typeof v}`, pointer);
  const out: string[] = [];
  v.forEach((p, i) => {
    if (typeof p !== 'string') throw invalidJson(`products must be strings, got ${p === null ? 'null' : Array.isArray(p) ? 'array' : typeof p}`, `${pointer}/${i}`);
    if (!(PRODUCTS as readonly string[]).includes(p)) {
      throw ApiError.of(400, CODES.invalidValue, `'${p}' is not a valid value for products: expected one of ${PRODUCTS.join(', ')}`, `${pointer}/${i}`);
    }
    if (!out.includes(p)) out.push(p);
  });
  return out;
}

/** A rule's `filter` in a PUT: `{id}` (a full filter object from a GET is accepted; only the id counts). */
export function decodeFilterRef(v: Json | undefined, pointer: string): string {
  if (v === undefined || v === null) throw ApiError.of(400, CODES.invalidValue, 'filter is required: give {"id": "<filter id>"}', `${pointer}/filter`);
  const obj = expectObject(v, `${pointer}/filter`);
  onlyKeys(obj, ['id', ...FILTER_KEYS], `${pointer}/filter`);
  if (obj.id === undefined && obj.expression !== undefined) {
    // A filter is created with its rule (POST) or through the Filters API, never rewritten by a rule's update.
    throw ApiError.of(400, CODES.invalidValue, 'filter.id is required: an update links the rule to an existing filter by its id ({"id": "<filter id>"}); change the filter\'s expression with PUT /zones/{zone_id}/filters/{filter_id}', `${pointer}/filter/id`);
  }
  return decodeId(obj, 'id', `${pointer}/filter`, 'filter.id');
}

// ---------------------------------------------------------------------------------------
// Plan checks on rules

export function capitalPlan(plan: Plan): string {
  return PLAN_NAMES[plan].replace(/ Website$/, '');
}

/** What the zone's plan refuses about a rule (its action, its filter's expression), with the body pointer. */
export function rulePlanProblem(plan: Plan, action: string, expression: string | undefined, pointer: string, filterPointer: string): ApiMessage | undefined {
  if (action === 'log' && plan !== 'enterprise') {
    return {
      code: CODES.planFeature,
      message: `'log' is not a valid value for action because the log action needs an Enterprise plan; this zone is on the ${capitalPlan(plan)} plan`,
      source: { pointer: `${pointer}/action` },
    };
  }
  if (expression !== undefined) {
    const c = checkFilterExpression(expression, plan);
    if (c.planProblem !== undefined) {
      return {
        code: CODES.planFeature,
        message: `the filter's expression uses a feature this zone's ${capitalPlan(plan)} plan lacks: ${c.planProblem}`,
        source: { pointer: filterPointer },
      };
    }
  }
  return undefined;
}

/** Throws the first plan problem of a rule (PUT/PATCH: nothing is written). */
export function requirePlanAllows(plan: Plan, action: string, expression: string | undefined, pointer: string, filterPointer: string): void {
  const p = rulePlanProblem(plan, action, expression, pointer, filterPointer);
  if (p) throw new ApiError(400, [p]);
}

/** Repeated `id` query parameters (bulk delete), each a 32-hex id, without duplicates. */
export function idParams(query: URLSearchParams): string[] {
  const ids: string[] = [];
  for (const id of query.getAll('id')) {
    // The hosted API refused a list in one parameter (400), so a client that sends one here would fail there.
    if (id.includes(',')) throw ApiError.of(400, CODES.invalidValue, `'${id.slice(0, 200)}' is not a valid value for id: send each id as a parameter of its own (?id=<a>&id=<b>), not a comma-separated list`);
    if (!ID.test(id)) throw ApiError.of(400, CODES.invalidValue, `'${id.slice(0, 200)}' is not a valid value for id: expected 32 hexadecimal digits`);
    if (!ids.includes(id)) ids.push(id);
  }
  return ids;
}

/** The optional `paused` list filter (`true`/`false`). */
export function pausedParam(query: URLSearchParams): boolean | undefined {
  const raw = query.get('paused');
  if (raw === null || raw === '') return undefined;
  if (raw === 'true') return true;
  if (raw === 'false') return false;
  throw ApiError.of(400, CODES.invalidValue, `'${raw}' is not a valid value for paused: expected true or false`);
}
