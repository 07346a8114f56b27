/**
 * The Rulesets API (rules-api §2) at account and zone level: rulesets, their versions,
 * rules (with `position`), phase entry points, and the managed rulesets of the catalog
 * (read-only). Every mutation takes `dry_run=true`: full validation (and the migration
 * hook), inside a transaction that is rolled back; `200` answers then carry
 * `result: null`, `204` stays `204`.
 *
 * Validation is the core's: the body is decoded strictly here (unknown fields, types),
 * then the rules go through `validateRulesetValue` (actions, phase/action matrix,
 * action_parameters, overrides, the managed ruleset an execute rule runs) and every
 * expression through the core's `checkExpression` (cached, see expressionCheck.ts) at the zone's plan and the ruleset's phase. The
 * core's problems become API errors in one place (ruleProblems.ts), run off the service's
 * thread (ruleChecker.ts); `validateRules` puts them at their places in the body.
 *
 * Decisions where the reference is silent (also in the README's service section):
 * - `GET …/rulesets` pages with a cursor over (name, id); `per_page` 1–50, default 50.
 * - A request rule may carry `version` and `last_updated` (what a GET returned): they are
 *   read-only and ignored. `""` for `id`, `version` or `ref` (the WAF migration config
 *   has them) means absent. An `id` that names no rule of the ruleset is not taken: the
 *   rule is new and gets a minted id.
 * - `null` for any field of a body is the same as leaving it out (Go's decoding, which
 *   the hosted API has). A ruleset has at most MAX_RULES (1000) rules, checked first.
 * - The zone's http_request_firewall_managed entry-point PUT takes back the
 *   `not_migrated` our WAF migration config adds (ignored), so the config round-trips.
 * - PATCH of a rule replaces its definition; a body without `ref` keeps the rule's ref.
 * - An execute rule written without `action_parameters.version` is stored and returned
 *   with `version: "latest"`, as the hosted API returns it.
 * - The entry-point PUT may set the name (the implicit entry point is named "default");
 *   `PUT …/rulesets/{id}` refuses a different name, kind or phase.
 * - Field or function not available at the zone's plan or in the phase: refused (the
 *   core reports it as a warning for editors; the API is where it is enforced).
 * - The latest version cannot be deleted while an execute rule deploys the ruleset,
 *   nor can the only version: delete the ruleset instead.
 * - Managed-ruleset entitlements (each catalog entry's `plan`: the Cloudflare
 *   Managed Ruleset and the OWASP Core Ruleset from Pro up): a zone write whose rules
 *   deploy one the plan lacks is refused as a whole, 400 + 10208 at
 *   `/rules/<i>/action_parameters/id` (only the rules the request writes are judged: an
 *   entry point kept from a higher plan can still be edited elsewhere).
 * - Rule quota of the zone's http_request_firewall_custom entry point, the legacy
 *   firewall rules' figures (Free 5, Pro 20, Business 100, Enterprise 1000; disabled rules
 *   count): a write that leaves more rules than the quota is refused with 10207, unless
 *   it does not add any (a zone over quota after a downgrade can still shrink). The same for
 *   the rate limiting rules of its http_ratelimit entry point (Free 1, Pro 2, Business 5,
 *   Enterprise 100; an execute rule is not one), and each rate limiting rule's settings
 *   within the plan (rateLimitParams.ts `ratelimitPlanProblems`: 400 + 20021 at the field).
 * - The core's warnings (deprecated fields, literals that never match, plan findings the
 *   API accepts such as the log action below Enterprise) about the rules a write
 *   carries come back in `messages` of the successful answer (dry runs too), code 20040,
 *   with `source.pointer`; they never refuse the write.
 */
import { PHASES, type Phase, type Plan } from '../../language/scheme/types';
import { SizedLru } from '../../language/sizedLru';
import { defaultCatalog } from '../../managed/catalog';
import { rulesetVersion, type ManagedRuleset } from '../../rulesets/catalog';
import { SKIP_PRODUCTS, type RulesetKind } from '../../rulesets/model';
import { missingVersionMessage, repeatedExecute, repeatedExecuteMessage } from '../../rulesets/validateOverrides';
import { ApiError, boolParam, CODES, intParam, notFound, timestamp, type ApiMessage, type Reply } from '../api';
import { ZONE_WAF_GROUPS, type PermissionGroup } from '../auth';
import { longerThan } from '../../language/bytes';
import { expectArray, expectObject, invalidJson, onlyKeys, refuseLong, refuseNul, refuseNulWithin, withoutNulls, type Json, type JsonObject } from '../body';
import { capitalPlan, MAX_DESCRIPTION, RULE_QUOTA } from '../legacyStore';
import { RATELIMIT_PLAN_LIMITS } from '../../rulesets/rateLimitParams';
import { managedEntryPointWrite } from '../migrationFlow';
import type { Ctx, Router } from '../router';
import {
  deleteRuleset,
  deleteVersion,
  deploymentsOf,
  type Deployment,
  entryPoint,
  entryPointId,
  entryPointKind,
  hasVersion,
  latestRuleset,
  managedHeader,
  managedObject,
  managedRuleset,
  customRulesetPhases,
  mergeRules,
  pinOf,
  withRule,
  saveRuleset,
  withStagedVersion,
  withVersion,
  storedRulesets,
  storedVersion,
  storedVersionPage,
  storedVersions,
  tooManyEntryPoints,
  type RuleInput,
  type RulesetHeader,
  type RulesetScope,
  type StoredRule,
  type StoredRuleset,
} from '../rulesetStore';
import { bodyHash, makeBody, type StagedVersion } from '../rulesetHistory';
import { inSlices } from '../ruleChecker';
import { findRuleProblems, type Found, type RuleFindings, type RuleTarget } from '../ruleProblems';
import { storeScope, zoneRow, type ZoneRow } from '../scope';
import { requireAccount, requireZone } from '../scopeAccess';
import type { Store } from '../store';

const CATALOG = defaultCatalog;
const MANAGED_PHASE: Phase = 'http_request_firewall_managed';

// --- Scope and permissions ---------------------------------------------------------------

const ACCOUNT_GROUPS: readonly PermissionGroup[] = ['Account WAF', 'Account Rulesets'];

interface Where {
  readonly scope: RulesetScope;
  readonly scopeId: string;
  readonly accountId: string;
  readonly zone?: ZoneRow;
  readonly plan?: Plan;
}

function where(ctx: Ctx, access: 'Read' | 'Write'): Where {
  let w: Where;
  if (ctx.params.zone_id !== undefined) {
    const zone = requireZone(ctx, ZONE_WAF_GROUPS, access);
    w = { scope: 'zone', scopeId: zone.id, accountId: zone.account_id, zone, plan: zone.plan };
  } else {
    const account = requireAccount(ctx, ACCOUNT_GROUPS, access);
    w = { scope: 'account', scopeId: account.id, accountId: account.id };
  }
  // A read of these routes reads only this scope's rulesets: another zone's pending write
  // does not hold its answer (store.ts durable()).
  if (access === 'Read') ctx.readScope = storeScope(w.scope, w.scopeId);
  return w;
}

/** Parses `dry_run` before anything else, so a bad value is refused even on an otherwise bad request. */
function dryRun(ctx: Ctx): boolean {
  return boolParam(ctx.query, 'dry_run') ?? false;
}

/**
 * Charges a write to `what` (rulesetKey, or `create`: a scope's custom ruleset creation)
 * against `--ruleset-write-rate`. Called once the write is authorized and its ruleset
 * found: a 403 or 404 neither uses the allowance nor shows it. (A write whose ruleset is
 * deleted while its rules are checked has been charged, and then answers 404.)
 */
function chargeWrite(ctx: Ctx, w: Where, what: string): void {
  ctx.chargeRulesetWrite(`${storeScope(w.scope, w.scopeId)}:${what}`);
}

/**
 * The allowance a ruleset's writes share. An entry point is one per scope and phase, and
 * is keyed so whichever path writes it (by phase, by id, or the write creating it): keyed
 * by id, the write that created it and the next one by id had an allowance each.
 */
function rulesetKey(rs: { id: string; kind: RulesetKind; phase: Phase }): string {
  return rs.kind === 'custom' ? rs.id : entryPointKey(rs.phase);
}

function entryPointKey(phase: Phase): string {
  return `phase:${phase}`;
}

/** Thrown inside the write transaction to roll a dry run back. */
class DryRun {
  constructor(readonly reply: Reply) {}
}

/** Runs a mutation in one write transaction; a dry run rolls it back and answers `null` (or 204). */
function mutate(store: Store, w: Where, dry: boolean, fn: () => Reply): Reply {
  try {
    return store.write(() => {
      const reply = fn();
      if (dry) throw new DryRun(reply);
      return reply;
    }, storeScope(w.scope, w.scopeId));
  } catch (e) {
    if (e instanceof DryRun) return e.reply.status === 204 ? { status: 204 } : { result: null, ...(e.reply.messages?.length ? { messages: e.reply.messages } : {}) };
    throw e;
  }
}

// --- Errors ------------------------------------------------------------------------------

function invalid(message: string, pointer?: string): ApiError {
  return ApiError.of(400, CODES.invalidValue, message, pointer);
}

/**
 * The hosted API's text for a missing ruleset is "could not find ruleset" (Terraform's
 * cloudflare_ruleset looks for it to drop a ruleset deleted elsewhere from its state).
 */
function rulesetNotFound(id: string): ApiError {
  return ApiError.of(404, CODES.notFound, `could not find ruleset '${id}'`);
}

function managedReadOnly(rs: { name: string; id: string }): ApiError {
  return ApiError.of(
    403,
    CODES.managedReadOnly,
    `${rs.name} (${rs.id}) is a managed ruleset: it cannot be changed or deleted. Deploy it with an execute rule in a ${MANAGED_PHASE} entry point and tune it with overrides.`,
  );
}

function phaseParam(ctx: Ctx): Phase {
  const p = ctx.params.ruleset_phase!;
  if (!(PHASES as readonly string[]).includes(p)) {
    throw invalid(`'${p}' is not a valid value for ruleset_phase: expected a phase such as http_request_firewall_custom or ${MANAGED_PHASE}`);
  }
  return p as Phase;
}

function versionParam(ctx: Ctx): number {
  const v = ctx.params.ruleset_version!;
  if (!/^[0-9]+$/.test(v)) throw invalid(`'${v}' is not a valid value for ruleset_version: expected a version number such as 1`);
  return Number(v);
}

/** The version of the path as digits (for messages: `1e+23` is not what the user asked for). */
function versionText(ctx: Ctx): string {
  return ctx.params.ruleset_version!.replace(/^0+(?=\d)/, '');
}

const CUSTOM_PHASE: Phase = 'http_request_firewall_custom';

/**
 * The rule quota of a zone's custom rules (its http_request_firewall_custom entry point):
 * the legacy firewall rules' figures. A write may leave at most the quota, or (a zone over
 * quota after a downgrade) no more rules than there were.
 */
function checkQuota(w: Where, kind: RulesetKind, phase: Phase, before: number, after: number, pointer?: string): void {
  if (w.scope !== 'zone' || kind !== 'zone' || (phase !== CUSTOM_PHASE && phase !== 'http_ratelimit') || w.plan === undefined) return;
  // Rate limiting rules per plan: reference traffic-events-terraform.md §2.3.
  const quota = phase === CUSTOM_PHASE ? RULE_QUOTA[w.plan] : RATELIMIT_PLAN_LIMITS[w.plan].rules;
  if (after <= quota || after <= before) return;
  const what = phase === CUSTOM_PHASE ? 'custom rules' : 'rate limiting rules';
  throw ApiError.of(
    400,
    CODES.firewallRuleQuota,
    `exceeded the maximum number of ${what} for the ${capitalPlan(w.plan)} plan (${quota}): the zone's ${phase} entry point would have ${after} rules (it has ${before})`,
    pointer,
  );
}

/** The rules a quota counts: in the rate limiting phase, the rate limiting rules (an execute rule runs others, counted in their own ruleset). */
function counted(phase: Phase, rules: readonly { readonly action?: unknown }[]): number {
  return phase === 'http_ratelimit' ? rules.filter((r) => r.action !== 'execute').length : rules.length;
}

/** The core's warnings in `messages` of a successful write. */
function withWarnings(reply: Reply, warnings: readonly ApiMessage[]): Reply {
  return warnings.length ? { ...reply, messages: warnings } : reply;
}

function noEntryPoint(phase: Phase): ApiError {
  return ApiError.of(404, CODES.entryPointNotFound, `could not find entrypoint ruleset in the ${phase} phase`);
}

// --- Request bodies ----------------------------------------------------------------------

/**
 * The body of a Rulesets write, an object, its keys checked (`keys`) and its `null` members
 * dropped: the hosted API decodes like Go's encoding/json, where `"description": null` is the
 * same as no description (clients that serialise unset fields as null rely on it), and an
 * unknown field is refused whatever its value, `"bogus": null` included. A rule in it is
 * checked and stripped the same way by decodeRule.
 */
function requestBody(ctx: Ctx, keys: readonly string[]): JsonObject {
  const raw = expectObject(ctx.body);
  onlyKeys(raw, keys);
  return Object.fromEntries(Object.entries(raw).filter(([, v]) => v !== null));
}

/** Keys a rule may carry in a request (`version`/`last_updated` are read-only and ignored). */
const RULE_KEYS = ['id', 'version', 'action', 'action_parameters', 'expression', 'description', 'enabled', 'ref', 'logging', 'exposed_credential_check', 'ratelimit', 'last_updated'];

function kindOf(v: Json | undefined): string {
  if (v === undefined) return 'nothing';
  if (v === null) return 'null';
  return Array.isArray(v) ? 'array' : typeof v;
}

/**
 * A ruleset's `name` or `description` (or another string of its body), refused past
 * MAX_RULESET_TEXT characters: each version keeps both, so an uncapped description would
 * make every later one-rule write of the ruleset cost its size. A value the ruleset holds
 * already (`kept`: one stored before the cap) is taken back unchanged, so a client's GET
 * and PUT of it round-trips.
 */
function stringField(obj: JsonObject, key: string, pointer: string, kept?: () => string | undefined): string | undefined {
  const v = obj[key];
  if (v === undefined) return undefined;
  if (typeof v !== 'string') throw invalidJson(`field "${key}" must be a string, got ${kindOf(v)}`, `${pointer}/${key}`);
  refuseNul(v, key, pointer);
  return longerThan(v, MAX_RULESET_TEXT) && v === kept?.() ? v : refuseLong(v, MAX_RULESET_TEXT, key, pointer);
}

/**
 * A rule of a request, decoded strictly: unknown keys refused; read-only and empty
 * id/version/ref dropped. The result is the JSON the validator sees and the store keeps.
 */
function decodeRule(v: Json | undefined, pointer: string, extraKeys: readonly string[] = []): JsonObject {
  const raw = expectObject(v, pointer);
  // Before the nulls go: an unknown key is refused whatever its value (requestBody).
  onlyKeys(raw, [...RULE_KEYS, ...extraKeys], pointer);
  const obj = withoutNulls(raw);
  refuseNulWithin(obj, pointer);
  for (const key of ['description', 'ref'] as const) {
    const text = obj[key];
    if (typeof text === 'string') refuseLong(text, MAX_RULE_TEXT, key, pointer);
  }
  const out: JsonObject = {};
  for (const [k, val] of Object.entries(obj)) {
    if (k === 'version' || k === 'last_updated' || extraKeys.includes(k)) continue;
    if ((k === 'id' || k === 'ref') && val === '') continue;
    out[k] = val;
  }
  return out;
}

/**
 * The longest rule `description` and `ref`: the hosted reference gives no figure for
 * rules, so the Filters API's cap on its descriptions (500) applies, with its wording.
 */
export const MAX_RULE_TEXT = MAX_DESCRIPTION;
/** The longest ruleset `name` and `description`: no hosted figure either, so the same 500. */
export const MAX_RULESET_TEXT = MAX_DESCRIPTION;


/**
 * The most rules one ruleset may have: the largest per-plan quota of custom rules
 * (Enterprise). Checked before the rules are validated, so a request cannot make the
 * service check an unbounded number of expressions.
 */
export const MAX_RULES = 1000;

function tooManyRules(count: number, pointer: string): ApiError {
  return ApiError.of(400, CODES.tooManyRules, `a ruleset may have at most ${MAX_RULES} rules; this one would have ${count}`, pointer);
}

function decodeRules(v: Json | undefined, pointer = '/rules'): JsonObject[] {
  if (v === undefined || v === null) return [];
  const list = expectArray(v, pointer);
  if (list.length > MAX_RULES) throw tooManyRules(list.length, pointer);
  return list.map((r, i) => decodeRule(r, `${pointer}/${i}`));
}

/** The stored form's input of a decoded (and validated) rule. */
function ruleInput(r: JsonObject): RuleInput {
  const params = r.action_parameters as Record<string, unknown> | undefined;
  return {
    ...(typeof r.id === 'string' ? { id: r.id } : {}),
    ...(typeof r.ref === 'string' ? { ref: r.ref } : {}),
    action: r.action as string,
    ...(params !== undefined ? { action_parameters: r.action === 'skip' ? canonicalSkip(params) : r.action === 'execute' ? withVersion(params) : params } : {}),
    expression: r.expression as string,
    ...(typeof r.description === 'string' ? { description: r.description } : {}),
    ...(typeof r.enabled === 'boolean' ? { enabled: r.enabled } : {}),
    ...(r.logging !== undefined ? { logging: r.logging as { enabled: boolean } } : {}),
    ...(r.exposed_credential_check !== undefined ? { exposed_credential_check: r.exposed_credential_check as Record<string, unknown> } : {}),
    ...(r.ratelimit !== undefined ? { ratelimit: r.ratelimit as Record<string, unknown> } : {}),
  };
}

/** Skip products are accepted in any case and echoed in the API's camelCase (rules-api §2.5). */
function canonicalSkip(p: Record<string, unknown>): Record<string, unknown> {
  if (!Array.isArray(p.products)) return p;
  return { ...p, products: p.products.map((x) => SKIP_PRODUCTS.find((c) => typeof x === 'string' && c.toLowerCase() === x.toLowerCase()) ?? x) };
}

type Position = { before: string } | { after: string } | { index: number };

function decodePosition(v: Json | undefined): Position | undefined {
  if (v === undefined) return undefined;
  const obj = withoutNulls(expectObject(v, '/position'));
  onlyKeys(obj, ['before', 'after', 'index'], '/position');
  const keys = Object.keys(obj);
  if (keys.length !== 1) {
    throw invalid(`position needs exactly one of "before", "after" or "index", got ${keys.length === 0 ? 'none' : keys.map((k) => `"${k}"`).join(' and ')}`, '/position');
  }
  const key = keys[0]!;
  const val = obj[key];
  if (key === 'index') {
    if (typeof val !== 'number' || !Number.isInteger(val)) throw invalidJson(`field "index" must be an integer, got ${kindOf(val)}`, '/position/index');
    if (val < 1) throw invalid(`'${val}' is not a valid value for index: positions start at 1`, '/position/index');
    return { index: val };
  }
  if (typeof val !== 'string') throw invalidJson(`field "${key}" must be a string, got ${kindOf(val)}`, `/position/${key}`);
  if (!/^(?:[0-9a-f]{32})?$/.test(val)) throw invalid(`'${val}' is not a valid value for ${key}: expected a rule id (32 lowercase hexadecimal characters) or ""`, `/position/${key}`);
  return key === 'before' ? { before: val } : { after: val };
}

/** Where a rule goes in `rules` (the list without it): an index from 0 to rules.length. */
function placeAt(rules: readonly StoredRule[], position: Position, selfId?: string): number {
  const find = (id: string, key: string) => {
    if (id === selfId) throw invalid(`'${id}' is not a valid value for ${key}: a rule cannot be placed relative to itself`, `/position/${key}`);
    const i = rules.findIndex((r) => r.id === id);
    if (i < 0) throw invalid(`'${id}' is not a valid value for ${key}: the ruleset has no rule with this id`, `/position/${key}`);
    return i;
  };
  if ('before' in position) return position.before === '' ? 0 : find(position.before, 'before');
  if ('after' in position) return position.after === '' ? rules.length : find(position.after, 'after') + 1;
  if (position.index > rules.length + 1) {
    throw invalid(`'${position.index}' is not a valid value for index: the ruleset has ${rules.length} other rule${rules.length === 1 ? '' : 's'}, so the index goes from 1 to ${rules.length + 1}`, '/position/index');
  }
  return position.index - 1;
}

// --- Validation with the core ------------------------------------------------------------

interface Target {
  readonly kind: RulesetKind;
  readonly phase: Phase;
  readonly where: Where;
  /** The ruleset being written (an execute rule may not run it). */
  readonly id?: string;
}


/**
 * Rule findings by the rule's text and what else they depend on: the target's kind,
 * phase, plan and id, and the account's custom rulesets (execute targets). That map is
 * replaced when they change (rulesetStore.ts customRulesetPhases), and its cache goes with
 * it. A PUT re-sends every rule, most of them unchanged (a Terraform apply of one changed
 * rule sends all 500): those are not checked again.
 */
const ruleFindings = new WeakMap<ReadonlyMap<string, Phase>, SizedLru<RuleFindings>>();
/** The most warnings a write's answer lists (docs/service.md "Limits"). */
const MAX_WARNINGS = 100;
/** What is remembered per custom-rulesets map, in bytes (a digest of the rule and what was found): ~26,000 rules without findings. */
const REMEMBERED_RULE_BYTES = 8 * 1024 * 1024;

/**
 * Validates `rules` (decoded), the rules a write brings to a ruleset of `target`, at
 * `pointerOf(i)`; throws the API's errors, else returns the core's warnings. Rules are
 * checked one at a time: what the core finds about a rule depends only on that rule
 * (duplicate ids and refs are the store's, mergeRules, and a managed ruleset run twice is executesOnce's), so a
 * write validates only the rules it brings, and a rule checked before in the same context
 * is not checked again (ruleFindings). The rest are checked off the service's thread
 * (ruleChecker.ts): the caller reads the ruleset again after this, since other writes may
 * have changed it meanwhile.
 */
async function validateRules(ctx: Ctx, rules: readonly JsonObject[], target: Target, pointerOf: (i: number) => string): Promise<ApiMessage[]> {
  return verdictNow(ctx, rules, await checkRules(ctx, rules, target), pointerOf);
}

/** What checking a write's rules found, against the account's custom-rulesets list of then. */
interface Checked {
  readonly accountId: string;
  readonly ruleTarget: RuleTarget;
  readonly custom: ReadonlyMap<string, Phase>;
  readonly keys: readonly string[];
  readonly found: readonly RuleFindings[];
}

/** validateRules' checks, which let other requests in (see there); verdictNow() judges them. */
async function checkRules(ctx: Ctx, rules: readonly JsonObject[], target: Target): Promise<Checked> {
  const store = ctx.service.store;
  const custom = customRulesetPhases(store, target.where.accountId);
  const ruleTarget: RuleTarget = { kind: target.kind, phase: target.phase, ...(target.where.plan ? { plan: target.where.plan } : {}), ...(target.id !== undefined ? { id: target.id } : {}) };
  // A digest per rule (a 500-rule PUT's take ~7 ms): in slices, so that a GET never waits behind them.
  const keys = await inSlices(rules, (r) => findingsKey(ruleTarget, r));
  const cache = findingsOf(custom);
  const found = keys.map((k) => cache.get(k));
  const unseen = found.flatMap((f, i) => (f ? [] : [i]));
  const checked = await ctx.service.ruleChecks.check(ruleTarget, custom, unseen.map((i) => rules[i]!));
  unseen.forEach((i, k) => remember(cache, keys[i]!, (found[i] = checked[k]!)));
  return { accountId: target.where.accountId, ruleTarget, custom, keys, found: found as RuleFindings[] };
}

/**
 * The verdict on checked rules: throws the API's errors, else returns the warnings. Call it
 * in the turn that writes, after the last await: a custom ruleset created or deleted since
 * the rules were checked changes what an execute rule may run, so the rules are checked
 * again here against the list as it is now, and no other request runs between this and the
 * write (a rule could otherwise be saved running a ruleset deleted meanwhile). Only an
 * execute rule's findings depend on that list (the id it runs). The version of a custom
 * ruleset an execute rule pins is checked here too, against the store as it is now
 * (missingTarget): 400, 20021 at its `action_parameters/version`, as the core refuses a
 * managed ruleset's version it does not have.
 */
function verdictNow(ctx: Ctx, rules: readonly JsonObject[], c: Checked, pointerOf: (i: number) => string): ApiMessage[] {
  const now = customRulesetPhases(ctx.service.store, c.accountId);
  let found = c.found;
  if (now !== c.custom) {
    const fresh = findingsOf(now);
    found = rules.map((r, i) => fresh.get(c.keys[i]!) ?? remember(fresh, c.keys[i]!, r.action === 'execute' ? findRuleProblems(c.ruleTarget, now, r) : c.found[i]!));
  }
  const errors: Found[] = [];
  const warnings: Found[] = [];
  found.forEach((f, i) => {
    const base = pointerOf(i);
    const at = (x: Found): Found => ({ ...x, rule: i, message: x.message.source ? { ...x.message, source: { pointer: `${base}${x.message.source.pointer}` } } : x.message });
    for (const x of f.errors) errors.push(at(x));
    for (const x of f.warnings) warnings.push(at(x));
    // The version of a custom ruleset an execute rule pins, a fact of the store (the core
    // knows the account's custom rulesets by id only): checked here, in the turn that writes.
    const missing = f.errors.length === 0 ? missingTarget(ctx.service.store, c.accountId, now, rules[i]!) : undefined;
    if (missing?.field === 'version') {
      errors.push({ rule: i, order: Number.MAX_SAFE_INTEGER, message: { code: CODES.invalidValue, message: missingVersionText(missing), source: { pointer: `${base}/action_parameters/version` } } });
    }
  });
  return verdict(errors, warnings);
}

/** What an execute rule runs that the account does not have (missingTarget). */
type MissingTarget =
  /** No managed ruleset nor custom ruleset of the account has the id (a custom ruleset deleted since). */
  | { readonly field: 'id'; readonly id: string }
  /** The account's custom ruleset `name` (how messages name it) has no version `version`; `newest` is its current one. */
  | { readonly field: 'version'; readonly id: string; readonly version: string; readonly name: string; readonly newest?: string };

/**
 * What execute rule `rule` (any other rule: undefined) runs that account `accountId`,
 * whose custom rulesets are `custom`, does not have: an id that is no managed ruleset nor
 * one of them, or a pinned `version` of one of them that it does not have (a managed
 * ruleset's version is the core's check). The rules service refuses to write such a rule,
 * and to make one live again by deleting the newest version of its ruleset.
 */
function missingTarget(store: Store, accountId: string, custom: ReadonlyMap<string, Phase>, rule: { readonly action?: unknown; readonly action_parameters?: unknown }): MissingTarget | undefined {
  if (rule.action !== 'execute') return undefined;
  const id = (rule.action_parameters as { readonly id?: unknown } | undefined)?.id;
  if (typeof id !== 'string' || managedRuleset(id, CATALOG)) return undefined;
  if (!custom.has(id)) return { field: 'id', id };
  const v = pinOf(rule)?.version;
  if (v === undefined || hasVersion(store, id, v)) return undefined;
  const rs = latestRuleset(store, 'account', accountId, id);
  return { field: 'version', id, version: v, name: rs ? `custom ruleset '${rs.name}' (${id})` : `custom ruleset ${id}`, ...(rs ? { newest: rs.version } : {}) };
}

/** An execute rule that pins a version of a ruleset that is not managed (missingTarget checks it exists). */
function pinsCustomVersion(rule: JsonObject): boolean {
  const pin = pinOf(rule);
  return pin !== undefined && !managedRuleset(pin.id, CATALOG);
}

/** The refusal's words for a pinned version that a custom ruleset does not have, as the core words a managed ruleset's. */
function missingVersionText(m: MissingTarget & { field: 'version' }): string {
  return `${missingVersionMessage(m.name, m.version)}${m.newest !== undefined ? ` (its newest is ${m.newest})` : ''}`;
}

/** The findings remembered under an account's custom-rulesets list. */
function findingsOf(custom: ReadonlyMap<string, Phase>): SizedLru<RuleFindings> {
  let cache = ruleFindings.get(custom);
  if (!cache) ruleFindings.set(custom, (cache = new SizedLru(REMEMBERED_RULE_BYTES)));
  return cache;
}

/** Keeps `f` under `key` (its size, roughly: the key and the text of what was found) and returns it. */
function remember(cache: SizedLru<RuleFindings>, key: string, f: RuleFindings): RuleFindings {
  let bytes = 64 + 2 * key.length;
  for (const x of [...f.errors, ...f.warnings]) bytes += 96 + 2 * (x.message.message.length + (x.message.source?.pointer.length ?? 0));
  cache.set(key, f, bytes);
  return f;
}

/**
 * The cache key of a rule's findings: a digest (not the text: a write of new rules fills
 * the cache with keys that live for seconds, and each would survive young-generation
 * collections, docs/service.md) of the one-rule ruleset the core validates, with the
 * plan and the ruleset's id.
 */
function findingsKey(target: RuleTarget, r: JsonObject): string {
  const text = JSON.stringify({ kind: target.kind, phase: target.phase, rules: [r] });
  return bodyHash(`${target.plan ?? ''}\u0000${target.id ?? ''}\u0000${text}`);
}

/**
 * Refuses rules that run one managed ruleset twice (the core's repeatedExecute): `rules`
 * as the write would store them, and `written` the index of the one rule a POST or PATCH
 * of a rule brings (its body is the rule), else the whole list is the body's.
 */
function executesOnce(kind: RulesetKind, rules: readonly JsonObject[] | readonly StoredRule[], written?: number): void {
  const r = repeatedExecute(defaultCatalog, kind, rules, written === undefined ? undefined : (i) => i === written);
  if (!r) return;
  if (written === undefined) throw invalid(repeatedExecuteMessage(r.name, r.first), `/rules/${r.rule}/action_parameters/id`);
  throw invalid(repeatedExecuteMessage(r.name, r.rule === written ? r.first : r.rule, ' of the ruleset'), '/action_parameters/id');
}

/** The warnings to answer with, or the API's error for what was found. */
function verdict(errors: Found[], warnings: Found[]): ApiMessage[] {
  if (errors.length === 0) {
    warnings.sort((a, b) => a.rule - b.rule || a.order - b.order);
    return listed(warnings);
  }
  // Every error, as the API answers them (a rule has few, each at most ~12 KB).
  errors.sort((a, b) => a.rule - b.rule || a.order - b.order);
  throw new ApiError(
    400,
    errors.map((e) => e.message),
  );
}

/**
 * The first MAX_WARNINGS of `found`, and a last message counting the rest: each quotes its
 * expression (up to 4 KB), so a 500-rule write with ten warnings a rule would otherwise
 * answer tens of megabytes.
 */
function listed(found: readonly Found[]): ApiMessage[] {
  const out = found.slice(0, MAX_WARNINGS).map((f) => f.message);
  const more = found.length - out.length;
  if (more > 0) {
    out.push({ code: CODES.rulesetWarning, message: `${more} more warnings are not listed (a write's answer lists at most ${MAX_WARNINGS}); \`rulesmith check\` on the ruleset lists them all` });
  }
  return out;
}

// --- The migration hook ------------------------------------------------------------------

/** Writes to the zone's managed-phase entry point go through the WAF migration state machine. */
/** `rulePointer`: where rule i is in the request's body (a rule-level write carries one rule, at the top). */
function migrationHook(ctx: Ctx, w: Where, kind: RulesetKind, phase: Phase, rawRules: readonly unknown[], query: URLSearchParams, rulePointer?: (index: number) => string): void {
  if (w.scope !== 'zone' || kind !== 'zone' || phase !== MANAGED_PHASE) return;
  managedEntryPointWrite(ctx.service.store, w.zone!, rawRules, query, rulePointer);
}

// --- Reading -----------------------------------------------------------------------------

function header(r: RulesetHeader): RulesetHeader {
  return { id: r.id, name: r.name, description: r.description, kind: r.kind, version: r.version, last_updated: r.last_updated, phase: r.phase };
}

/** A ruleset of the scope: stored (current version) or managed; 404 otherwise. */
function findRuleset(ctx: Ctx, w: Where): { stored?: StoredRuleset; managed?: StoredRuleset } {
  const id = ctx.params.ruleset_id!;
  const m = managedRuleset(id, CATALOG);
  if (m) return { managed: managedObject(m)! };
  const stored = latestRuleset(ctx.service.store, w.scope, w.scopeId, id);
  if (!stored) throw rulesetNotFound(id);
  return { stored };
}

/**
 * The stored ruleset this request writes (a managed one is refused, an unknown one is 404),
 * its write charged against the rate (chargeWrite). `ruleId`: the rule of it the request
 * writes (a PATCH or DELETE of a rule), a 404 when the ruleset has no such rule, found
 * before the charge as the ruleset is: a 404 uses none of the allowance.
 */
function writable(ctx: Ctx, w: Where, ruleId?: string): StoredRuleset {
  const { stored, managed } = findRuleset(ctx, w);
  if (managed) throw managedReadOnly(managed);
  if (ruleId !== undefined && !stored!.rules.some((r) => r.id === ruleId)) throw notFound(`rule '${ruleId}' in ruleset '${stored!.id}'`);
  chargeWrite(ctx, w, rulesetKey(stored!));
  return stored!;
}

/** The ruleset a write read before an await, as it is now (its write was charged then). */
function rulesetAgain(ctx: Ctx, w: Where): StoredRuleset {
  return findRuleset(ctx, w).stored!;
}

function encodeCursor(r: RulesetHeader): string {
  return Buffer.from(JSON.stringify([r.name, r.id])).toString('base64url');
}

function decodeCursor(raw: string): [string, string] {
  try {
    const v = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8')) as unknown;
    if (Array.isArray(v) && v.length === 2 && typeof v[0] === 'string' && typeof v[1] === 'string') return [v[0], v[1]];
  } catch {
    // fall through
  }
  throw invalid(`'${raw}' is not a valid value for cursor: pass the cursor of the previous page's result_info`);
}

function list(ctx: Ctx): Reply {
  const w = where(ctx, 'Read');
  const perPage = intParam(ctx.query, 'per_page', 50, 1, 50);
  const cursor = ctx.query.get('cursor');
  const all = [...CATALOG.rulesets.map((m) => managedHeader(m)), ...storedRulesets(ctx.service.store, w.scope, w.scopeId).map(header)];
  const key = (r: RulesetHeader): [string, string] => [r.name, r.id];
  const cmp = (a: [string, string], b: [string, string]) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0);
  all.sort((a, b) => cmp(key(a), key(b)));
  const after = cursor === null || cursor === '' ? undefined : decodeCursor(cursor);
  const rest = after ? all.filter((r) => cmp(key(r), after) > 0) : all;
  const page = rest.slice(0, perPage);
  const more = rest.length > perPage;
  const next = more ? encodeCursor(page[page.length - 1]!) : undefined;
  return {
    result: page,
    result_info: { per_page: perPage, count: page.length, ...(next ? { cursor: next, cursors: { after: next } } : {}) },
  };
}

function get(ctx: Ctx): Reply {
  const w = where(ctx, 'Read');
  const { stored, managed } = findRuleset(ctx, w);
  return { result: managed ?? stored };
}

function versions(ctx: Ctx): Reply {
  const w = where(ctx, 'Read');
  const id = ctx.params.ruleset_id!;
  const m = managedRuleset(id, CATALOG);
  if (m) return managedVersionPage(ctx, m);
  const reply = versionPage(ctx, w, id);
  if (reply.result.length === 0 && !latestRuleset(ctx.service.store, w.scope, w.scopeId, id)) throw rulesetNotFound(id);
  return reply;
}

/**
 * Largest page of a versions list, and the default one. The hosted endpoint does not page,
 * and the official SDK reads it as one page (`SinglePage`): a default page of 50 hid every
 * version past the 50th, the current one included. So a list asked for without `per_page`
 * holds up to 1,000 versions (headers only, about 200 KB); past that, the cursor goes on.
 */
export const VERSIONS_PER_PAGE = { max: 1000, default: 1000 };

interface VersionPaging {
  readonly perPage: number;
  /** The last version of the previous page. */
  readonly after?: number;
}

/**
 * A versions list's paging parameters, as the rulesets list takes them: `per_page` (1–500,
 * default 50) and the `cursor` of the previous page's result_info. Every versions list
 * checks them, even one with nothing to page (a client's bad value is told, not ignored).
 */
function versionPaging(ctx: Ctx): VersionPaging {
  const perPage = intParam(ctx.query, 'per_page', VERSIONS_PER_PAGE.default, 1, VERSIONS_PER_PAGE.max);
  const raw = ctx.query.get('cursor');
  if (raw === null || raw === '') return { perPage };
  const text = Buffer.from(raw, 'base64url').toString('utf8');
  if (!/^v[0-9]{1,15}$/.test(text)) throw invalid(`'${raw}' is not a valid value for cursor: pass the cursor of the previous page's result_info`);
  return { perPage, after: Number(text.slice(1)) };
}

/** The answer for one page of versions (`more`: a next page exists, whose cursor it carries). */
function versionReply(headers: RulesetHeader[], more: boolean, perPage: number): Reply & { result: RulesetHeader[] } {
  const next = more ? Buffer.from(`v${headers[headers.length - 1]!.version}`).toString('base64url') : undefined;
  return { result: headers, result_info: { per_page: perPage, count: headers.length, ...(next ? { cursor: next, cursors: { after: next } } : {}) } };
}

/** A page of a stored ruleset's versions, oldest first (versionPaging). */
function versionPage(ctx: Ctx, w: Where, id: string): Reply & { result: RulesetHeader[] } {
  const { perPage, after } = versionPaging(ctx);
  const page = storedVersionPage(ctx.service.store, w.scope, w.scopeId, id, { ...(after !== undefined ? { after } : {}), limit: perPage });
  return versionReply(page.headers, page.more, perPage);
}

/** A page of a managed ruleset's versions, oldest first, paged as a stored ruleset's are. */
function managedVersionPage(ctx: Ctx, m: ManagedRuleset): Reply {
  const { perPage, after } = versionPaging(ctx);
  const all = m.versions.map((v) => managedHeader(m, v)); // the catalog's order: oldest first
  const rest = after === undefined ? all : all.filter((h) => Number(h.version) > after);
  return versionReply(rest.slice(0, perPage), rest.length > perPage, perPage);
}

function oneVersion(ctx: Ctx, w: Where): StoredRuleset {
  const id = ctx.params.ruleset_id!;
  const v = versionParam(ctx);
  const m = managedRuleset(id, CATALOG);
  if (m) {
    const mv = rulesetVersion(m, String(v));
    if (!mv) throw notFound(`version ${versionText(ctx)} of ruleset '${id}'`);
    return managedObject(m, mv)!;
  }
  const found = storedVersion(ctx.service.store, w.scope, w.scopeId, id, v);
  if (found) return found;
  if (!latestRuleset(ctx.service.store, w.scope, w.scopeId, id)) throw rulesetNotFound(id);
  throw notFound(`version ${versionText(ctx)} of ruleset '${id}'`);
}

function getVersion(ctx: Ctx): Reply {
  return { result: oneVersion(ctx, where(ctx, 'Read')) };
}

function byTag(ctx: Ctx): Reply {
  const rs = oneVersion(ctx, where(ctx, 'Read'));
  const tag = ctx.params.rule_tag!;
  return { result: { ...rs, rules: rs.rules.filter((r) => r.categories?.includes(tag)) } };
}

// --- Rulesets: create, update, delete ----------------------------------------------------

const KINDS: readonly RulesetKind[] = ['managed', 'custom', 'root', 'zone'];

async function create(ctx: Ctx): Promise<Reply> {
  const dry = dryRun(ctx);
  const w = where(ctx, 'Write');
  const body = requestBody(ctx, ['name', 'description', 'kind', 'phase', 'rules']);
  const name = stringField(body, 'name', '');
  const description = stringField(body, 'description', '') ?? '';
  const kind = stringField(body, 'kind', '');
  const phase = stringField(body, 'phase', '');
  if (name === undefined || name === '') throw invalid(name === '' ? "'' is not a valid value for name because it cannot be blank" : 'name is required', '/name');
  if (kind === undefined) throw invalid('kind is required: custom, or the entry point kind (root for an account, zone for a zone)', '/kind');
  if (!(KINDS as readonly string[]).includes(kind)) throw invalid(`'${kind}' is not a valid value for kind: expected ${KINDS.join(', ')}`, '/kind');
  if (phase === undefined) throw invalid('phase is required', '/phase');
  if (!(PHASES as readonly string[]).includes(phase)) throw invalid(`'${phase}' is not a valid value for phase`, '/phase');
  const allowed: readonly RulesetKind[] = w.scope === 'account' ? ['custom', 'root'] : ['zone'];
  if (!allowed.includes(kind as RulesetKind)) {
    const why =
      kind === 'managed'
        ? 'managed rulesets are provided by Cloudflare; create a custom ruleset, or deploy a managed one with an execute rule'
        : w.scope === 'account'
          ? 'an account can create custom rulesets and its root entry points; zone entry points are created at zone level'
          : 'a zone can create only its entry points (kind zone); custom rulesets belong to the account';
    throw invalid(`'${kind}' is not a valid value for kind because ${why}`, '/kind');
  }
  // An entry point's creation shares its allowance with the entry point's later writes.
  chargeWrite(ctx, w, kind === 'custom' ? 'create' : entryPointKey(phase as Phase));
  const store = ctx.service.store;
  if (kind !== 'custom' && entryPoint(store, w.scope, w.scopeId, phase as Phase)) throw tooManyEntryPoints(kind as RulesetKind, phase as Phase);
  const rules = decodeRules(body.rules);
  const target: Target = { kind: kind as RulesetKind, phase: phase as Phase, where: w };
  const warnings = await validateRules(ctx, rules, target, (i) => `/rules/${i}`);
  executesOnce(target.kind, rules);
  // Another request may have created the entry point while this one was validated.
  if (kind !== 'custom' && entryPoint(store, w.scope, w.scopeId, phase as Phase)) throw tooManyEntryPoints(kind as RulesetKind, phase as Phase);
  checkQuota(w, target.kind, target.phase, 0, counted(target.phase, rules), '/rules');
  return mutate(store, w, dry, () => {
    const now = timestamp();
    migrationHook(ctx, w, target.kind, target.phase, rules, new URLSearchParams());
    const merged = mergeRules([], rules.map(ruleInput), now);
    return withWarnings({ result: saveRuleset(store, w.scope, w.scopeId, { name, description, kind: target.kind, phase: target.phase, rules: merged }, now) }, warnings);
  });
}

/**
 * `PUT …/rulesets/{id}` and the entry-point PUT: the rules are replaced as a whole.
 * Validation lets other requests in (validateRules), so the ruleset is read
 * again after it (`fresh`): the write merges with what is current then, not before.
 */
async function replaceRules(
  ctx: Ctx,
  w: Where,
  target: Target,
  body: JsonObject,
  fresh: () => StoredRuleset | undefined,
  naming: (current: StoredRuleset | undefined) => { name: string; description: string },
  dry: boolean,
): Promise<Reply> {
  const store = ctx.service.store;
  if (body.rules === undefined) throw invalid('rules is required: the whole list of rules the ruleset will have ([] for none)', '/rules');
  const rules = decodeRules(body.rules);
  const pointerOf = (i: number) => `/rules/${i}`;
  const checked = await checkRules(ctx, rules, target);
  let warnings = verdictNow(ctx, rules, checked, pointerOf);
  executesOnce(target.kind, rules);
  const inputs = rules.map(ruleInput);
  const plan = (current: StoredRuleset | undefined) => {
    checkQuota(w, target.kind, target.phase, counted(target.phase, current?.rules ?? []), counted(target.phase, rules), '/rules');
    const now = timestamp();
    return { current, now, ...naming(current), merged: mergeRules(current?.rules ?? [], inputs, now) };
  };
  let p = plan(fresh());
  // The new rules' bodies are made before the turn that writes, so that turn does not hold
  // every other request for them too (a PUT of 500 new rules: 3 ms). Should the ruleset
  // change meanwhile, the write merges with it as it is then.
  await inSlices(p.merged, makeBody);
  await ctx.service.nextTurn();
  const again = fresh();
  if (again !== p.current) p = plan(again);
  // Hundreds of new rows go in over several turns before the write that makes them the
  // ruleset's version (withStagedVersion); its other writes wait meanwhile (429).
  const current = p.current;
  const save = (staged: StagedVersion | undefined): Reply => {
    if (staged && fresh()?.version !== current!.version) throw new Error(`ruleset ${current!.id} changed while its version ${staged.version} was staged`);
    // The last check, in the turn that writes: a custom ruleset, or a version an execute
    // rule pins, may have been deleted meanwhile. Only then: for 500 rules it is a turn's ms.
    if (customRulesetPhases(store, w.accountId) !== checked.custom || rules.some(pinsCustomVersion)) warnings = verdictNow(ctx, rules, checked, pointerOf);
    return mutate(store, w, dry, () => {
      migrationHook(ctx, w, target.kind, target.phase, rules, ctx.query);
      const { name, description, merged, now } = p;
      return withWarnings({ result: saveRuleset(store, w.scope, w.scopeId, { id: current?.id, name, description, kind: target.kind, phase: target.phase, rules: merged }, now, staged) }, warnings);
    });
  };
  return dry || !current ? save(undefined) : withStagedVersion(store, w.scope, w.scopeId, current.id, p.merged, () => ctx.service.nextTurn(), save);
}

function update(ctx: Ctx): Promise<Reply> {
  const dry = dryRun(ctx);
  const w = where(ctx, 'Write');
  const current = writable(ctx, w);
  const body = requestBody(ctx, ['name', 'description', 'kind', 'phase', 'rules']);
  for (const key of ['name', 'kind', 'phase'] as const) {
    const v = stringField(body, key, '', () => current[key]);
    if (v !== undefined && v !== current[key]) {
      throw invalid(`'${v}' is not a valid value for ${key} because the ${key} of a ruleset cannot be changed (it is '${current[key]}')`, `/${key}`);
    }
  }
  const description = stringField(body, 'description', '', () => current.description);
  const fresh = () => latestRuleset(ctx.service.store, w.scope, w.scopeId, current.id) ?? (() => { throw rulesetNotFound(current.id); })();
  return replaceRules(ctx, w, { kind: current.kind, phase: current.phase, where: w, id: current.id }, body, fresh, (c) => ({ name: c!.name, description: description ?? c!.description }), dry);
}

function remove(ctx: Ctx): Reply {
  const dry = dryRun(ctx);
  const w = where(ctx, 'Write');
  const current = writable(ctx, w);
  const store = ctx.service.store;
  const users = deploymentsOf(store, w.accountId, current.id);
  if (users.length > 0) throw inUse(store, current, users[0]!);
  return mutate(store, w, dry, () => {
    deleteRuleset(store, current.id);
    return { status: 204 };
  });
}

/** The rule that deploys a ruleset, and where it is: entry points are all named 'default', so their zone (or the account) and phase say which. */
function deployedBy(store: Store, d: Deployment): string {
  const where = d.scope === 'zone' ? `zone ${zoneRow(store, d.scopeId)?.name ?? d.scopeId}` : 'the account';
  const what = d.kind === 'custom' ? `a custom ruleset of ${where}` : `the ${d.phase} entry point of ${where}`;
  return `rule ${d.ruleId} of ruleset '${d.rulesetName}' (${d.rulesetId}: ${what})`;
}

function inUse(store: Store, rs: StoredRuleset, d: Deployment): ApiError {
  return ApiError.of(
    400,
    CODES.rulesetInUse,
    `ruleset '${rs.name}' (${rs.id}) is deployed by ${deployedBy(store, d)}; change or delete that execute rule first`,
  );
}

function removeVersion(ctx: Ctx): Reply {
  const dry = dryRun(ctx);
  const w = where(ctx, 'Write');
  const id = ctx.params.ruleset_id!;
  const m = managedRuleset(id, CATALOG);
  if (m) throw managedReadOnly(m);
  const store = ctx.service.store;
  const target = oneVersion(ctx, w);
  chargeWrite(ctx, w, rulesetKey(target));
  const all = storedVersions(store, w.scope, w.scopeId, id);
  const latest = all[all.length - 1]!;
  if (all.length === 1) {
    throw invalid(`version ${target.version} is the only version of ruleset '${target.name}' (${id}); delete the ruleset instead`);
  }
  const users = deploymentsOf(store, w.accountId, id).filter((d) => d.version === target.version || (d.version === 'latest' && latest.version === target.version));
  if (users.length > 0) {
    const d = users[0]!;
    throw ApiError.of(
      400,
      CODES.rulesetInUse,
      `version ${target.version} of ruleset '${target.name}' (${id}) is deployed by ${deployedBy(store, d)}; change or delete that execute rule first`,
    );
  }
  if (latest.version === target.version) rollbackRunsWhatExists(store, w, target, all[all.length - 2]!.version);
  return mutate(store, w, dry, () => {
    deleteVersion(store, id, Number(target.version));
    return { status: 204 };
  });
}

/**
 * Deleting the newest version `target` makes version `previous` current (a rollback): refused
 * when one of that version's execute rules runs a custom ruleset, or a version of one, deleted
 * since (missingTarget), as a write of that rule would be. The entry point would otherwise
 * hold a rule of nothing, which its GET then PUT (what Terraform does) could not send back.
 */
function rollbackRunsWhatExists(store: Store, w: Where, target: StoredRuleset, previous: string): void {
  const before = storedVersion(store, w.scope, w.scopeId, target.id, Number(previous));
  if (!before) return;
  const custom = customRulesetPhases(store, w.accountId);
  before.rules.forEach((rule, i) => {
    const m = missingTarget(store, w.accountId, custom, rule);
    if (!m) return;
    const runs =
      m.field === 'id'
        ? `ruleset '${m.id}', and no managed ruleset nor custom ruleset of the account has this id (deleted since)`
        : `version ${m.version} of ${m.name}, deleted since: ${missingVersionText(m)}`;
    throw invalid(
      `version ${target.version} of ruleset '${target.name}' (${target.id}) cannot be deleted: it would make version ${previous} current, whose rule ${i + 1} (${rule.id}) executes ${runs}. PUT the rules you want as a new version instead`,
    );
  });
}

// --- Rules -------------------------------------------------------------------------------

/** `written`: the index in `rules` of the rule the request's body carries (a POST or PATCH of one rule). */
function saveRules(ctx: Ctx, w: Where, current: StoredRuleset, rules: readonly StoredRule[], dry: boolean, now: string, warnings: readonly ApiMessage[] = [], written?: number): Reply {
  const store = ctx.service.store;
  // A finding about the rule the body carries points into the body (`/enabled`); one about another rule names the stored list's.
  const rulePointer = written === undefined ? undefined : (i: number) => (i === written ? '' : `/rules/${i}`);
  return mutate(store, w, dry, () => {
    migrationHook(ctx, w, current.kind, current.phase, rules, new URLSearchParams(), rulePointer);
    return withWarnings({ result: saveRuleset(store, w.scope, w.scopeId, { id: current.id, name: current.name, description: current.description, kind: current.kind, phase: current.phase, rules }, now) }, warnings);
  });
}

function target(current: StoredRuleset, w: Where): Target {
  return { kind: current.kind, phase: current.phase, where: w, id: current.id };
}

/** A ref another rule already has: the API's answer names that rule. */
function refTaken(rules: readonly StoredRule[], ref: Json | undefined): void {
  if (typeof ref !== 'string') return;
  const j = rules.findIndex((r) => r.ref === ref);
  if (j >= 0) throw invalid(`'${ref}' is not a valid value for ref because rule ${j + 1} (${rules[j]!.id}) already has it: a ref is unique within a ruleset`, '/ref');
}

async function addRule(ctx: Ctx): Promise<Reply> {
  const dry = dryRun(ctx);
  const w = where(ctx, 'Write');
  // What can be refused before the rule is checked is, in the API's order: a bad request
  // fails the same whether or not the rule is valid.
  const placing = (current: StoredRuleset) => {
    if (current.rules.length + 1 > MAX_RULES) throw tooManyRules(current.rules.length + 1, '');
    return position ? placeAt(current.rules, position) : current.rules.length;
  };
  const first = writable(ctx, w);
  const body = requestBody(ctx, [...RULE_KEYS, 'position']);
  if (first.rules.length + 1 > MAX_RULES) throw tooManyRules(first.rules.length + 1, '');
  const rule = decodeRule(body, '', ['position']);
  const position = decodePosition(body.position);
  placing(first);
  const warnings = await validateRules(ctx, [rule], target(first, w), () => '');
  // Other writes may have changed the ruleset while its rule was checked.
  const current = rulesetAgain(ctx, w);
  const at = placing(current);
  refTaken(current.rules, rule.ref);
  checkQuota(w, current.kind, current.phase, counted(current.phase, current.rules), counted(current.phase, [...current.rules, rule]));
  const now = timestamp();
  const merged = withRule(current.rules, undefined, ruleInput(rule), at, now);
  executesOnce(current.kind, merged, at);
  return saveRules(ctx, w, current, merged, dry, now, warnings, at);
}

async function editRule(ctx: Ctx): Promise<Reply> {
  const dry = dryRun(ctx);
  const w = where(ctx, 'Write');
  const ruleId = ctx.params.rule_id!;
  /** The rule edited in `current` and where it goes (404 when the ruleset no longer has it). */
  const placing = (current: StoredRuleset, position: Position | undefined) => {
    const index = current.rules.findIndex((r) => r.id === ruleId);
    if (index < 0) throw notFound(`rule '${ruleId}' in ruleset '${current.id}'`);
    const others = current.rules.filter((_, i) => i !== index);
    return { old: current.rules[index]!, others, at: position ? placeAt(others, position, ruleId) : index };
  };
  let current = writable(ctx, w, ruleId);
  const body = requestBody(ctx, [...RULE_KEYS, 'position']);
  const position = decodePosition(body.position);
  let placed = placing(current, position);
  const onlyPosition = position !== undefined && Object.keys(body).length === 1;
  let replacement: RuleInput = placed.old;
  let warnings: ApiMessage[] = [];
  if (!onlyPosition) {
    const rule = decodeRule(body, '', ['position']);
    if (typeof rule.id === 'string' && rule.id !== ruleId) {
      throw invalid(`'${rule.id}' is not a valid value for id because the rule edited is ${ruleId}`, '/id');
    }
    warnings = await validateRules(ctx, [rule], target(current, w), () => '');
    // Other writes may have changed the ruleset while the rule was checked.
    current = rulesetAgain(ctx, w);
    placed = placing(current, position);
    refTaken(placed.others, rule.ref);
    replacement = { ...ruleInput(rule), id: ruleId, ref: typeof rule.ref === 'string' ? rule.ref : placed.old.ref };
  }
  const now = timestamp();
  const merged = withRule(placed.others, placed.old, replacement, placed.at, now);
  if (!onlyPosition) executesOnce(current.kind, merged, placed.at);
  return saveRules(ctx, w, current, merged, dry, now, warnings, placed.at);
}

function deleteRule(ctx: Ctx): Reply {
  const dry = dryRun(ctx);
  const w = where(ctx, 'Write');
  const ruleId = ctx.params.rule_id!;
  const current = writable(ctx, w, ruleId);
  if (ctx.body !== undefined) {
    // The API takes no body here; a stray one is refused rather than ignored.
    onlyKeys(expectObject(ctx.body), []);
  }
  return saveRules(ctx, w, current, current.rules.filter((r) => r.id !== ruleId), dry, timestamp());
}

// --- Entry points ------------------------------------------------------------------------

function getEntryPoint(ctx: Ctx): Reply {
  const w = where(ctx, 'Read');
  const phase = phaseParam(ctx);
  const ep = entryPoint(ctx.service.store, w.scope, w.scopeId, phase);
  if (!ep) throw noEntryPoint(phase);
  return { result: ep };
}

function putEntryPointRoute(ctx: Ctx): Promise<Reply> {
  const dry = dryRun(ctx);
  const w = where(ctx, 'Write');
  const phase = phaseParam(ctx);
  chargeWrite(ctx, w, entryPointKey(phase));
  // The WAF migration config (GET …/waf_migration/config) is meant to be sent back as it
  // is; our config adds `not_migrated` (read-only, ignored here) to what the hosted one has.
  const migrationConfig = w.scope === 'zone' && phase === MANAGED_PHASE;
  const body = requestBody(ctx, ['name', 'description', 'rules', ...(migrationConfig ? ['not_migrated'] : [])]);
  const store = ctx.service.store;
  const stored = () => entryPoint(store, w.scope, w.scopeId, phase);
  const name = stringField(body, 'name', '', () => stored()?.name);
  if (name === '') throw invalid("'' is not a valid value for name because it cannot be blank", '/name');
  const description = stringField(body, 'description', '', () => stored()?.description);
  const kind = entryPointKind(w.scope);
  const id = entryPointId(store, w.scope, w.scopeId, phase);
  return replaceRules(
    ctx,
    w,
    { kind, phase, where: w, ...(id !== undefined ? { id } : {}) },
    body,
    () => entryPoint(store, w.scope, w.scopeId, phase),
    (c) => ({ name: name ?? c?.name ?? 'default', description: description ?? c?.description ?? '' }),
    dry,
  );
}

function entryPointVersions(ctx: Ctx): Reply {
  const w = where(ctx, 'Read');
  const phase = phaseParam(ctx);
  const id = entryPointId(ctx.service.store, w.scope, w.scopeId, phase);
  if (id !== undefined) return versionPage(ctx, w, id);
  // No entry point yet: an empty list, its paging parameters checked all the same.
  return versionReply([], false, versionPaging(ctx).perPage);
}

function entryPointVersion(ctx: Ctx): Reply {
  const w = where(ctx, 'Read');
  const phase = phaseParam(ctx);
  const v = versionParam(ctx);
  const ep = entryPoint(ctx.service.store, w.scope, w.scopeId, phase);
  if (!ep) throw noEntryPoint(phase);
  const found = storedVersion(ctx.service.store, w.scope, w.scopeId, ep.id, v);
  if (!found) throw notFound(`version ${versionText(ctx)} of the ${phase} entry point`);
  return { result: found };
}

// --- Registration ------------------------------------------------------------------------

export function rulesetRoutes(r: Router): void {
  for (const scope of ['/accounts/:account_id', '/zones/:zone_id']) {
    r.get(`${scope}/rulesets`, list);
    r.post(`${scope}/rulesets`, create);
    r.get(`${scope}/rulesets/phases/:ruleset_phase/entrypoint`, getEntryPoint);
    r.put(`${scope}/rulesets/phases/:ruleset_phase/entrypoint`, putEntryPointRoute);
    r.get(`${scope}/rulesets/phases/:ruleset_phase/entrypoint/versions`, entryPointVersions);
    r.get(`${scope}/rulesets/phases/:ruleset_phase/entrypoint/versions/:ruleset_version`, entryPointVersion);
    r.get(`${scope}/rulesets/:ruleset_id`, get);
    r.put(`${scope}/rulesets/:ruleset_id`, update);
    r.delete(`${scope}/rulesets/:ruleset_id`, remove);
    r.get(`${scope}/rulesets/:ruleset_id/versions`, versions);
    r.get(`${scope}/rulesets/:ruleset_id/versions/:ruleset_version`, getVersion);
    r.delete(`${scope}/rulesets/:ruleset_id/versions/:ruleset_version`, removeVersion);
    r.post(`${scope}/rulesets/:ruleset_id/rules`, addRule);
    r.patch(`${scope}/rulesets/:ruleset_id/rules/:rule_id`, editRule);
    r.delete(`${scope}/rulesets/:ruleset_id/rules/:rule_id`, deleteRule);
  }
  r.get('/accounts/:account_id/rulesets/:ruleset_id/versions/:ruleset_version/by_tag/:rule_tag', byTag);
}
