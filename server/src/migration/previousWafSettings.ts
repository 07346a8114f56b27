/**
 * A zone's settings of the previous WAF (previousWafContent.ts) and the pure functions
 * behind its API for packages, rule groups and rules: what a zone's setting resolves to,
 * the objects as the API shows them, list filters and order, and the changes. The HTTP
 * layer stores `ZoneWafSettings`, calls these functions, pages the lists and answers
 * with what they return (a value, or a `MigrationError`).
 *
 * Settings store only what differs from the defaults, so an untouched zone is
 * `defaultWafSettings(zoneId)`; an OWASP package whose sensitivity was never set is the
 * migration table's "Default" row (the API shows it as `high`, the package default).
 */
import { fail, invalidOption, invalidValue, isRecord, migrationError, notFound, show, unknownFieldError, type Result } from './errors';
import {
  ACTION_MODES,
  allowedModes,
  DEFAULT_ACTION_MODE,
  DEFAULT_SENSITIVITY,
  DENY_RULE_MODES,
  findPackageDef,
  GROUP_MODES,
  OWASP_PACKAGE,
  PACKAGES,
  packageRules,
  RULE_MODE_FILTERS,
  SENSITIVITIES,
  type ActionMode,
  type DenyDefaultMode,
  type GroupDef,
  type GroupMode,
  type OverrideValue,
  type PackageDef,
  type RuleDef,
  type RuleMode,
  type Sensitivity,
} from './previousWafContent';

// --- API objects (rules-api §5.1–§5.4) ---------------------------------------------------

export interface WafPackage {
  readonly id: string;
  readonly name: string;
  readonly description: string;
  readonly detection_mode: 'anomaly' | 'traditional';
  readonly zone_id: string;
  readonly status: 'active';
  /** Anomaly packages only. */
  readonly sensitivity?: Sensitivity;
  readonly action_mode?: ActionMode;
}

export interface WafGroup {
  readonly id: string;
  readonly name: string;
  readonly description: string | null;
  readonly rules_count: number;
  readonly modified_rules_count: number;
  readonly package_id: string;
  readonly mode: GroupMode;
  readonly allowed_modes: readonly GroupMode[];
}

export interface WafRule {
  readonly id: string;
  readonly description: string;
  readonly priority: string;
  readonly package_id: string;
  readonly group: { readonly id: string; readonly name: string };
  readonly mode: RuleMode;
  readonly allowed_modes: readonly RuleMode[];
  /** Traditional deny rules only. */
  readonly default_mode?: DenyDefaultMode;
}

export interface UriOverride {
  readonly id: string;
  readonly description: string | null;
  readonly urls: readonly string[];
  readonly priority: number;
  readonly paused: boolean;
  readonly groups: Readonly<Record<string, OverrideValue>>;
  readonly rules: Readonly<Record<string, OverrideValue>>;
  readonly rewrite_action: Readonly<Record<string, OverrideValue>>;
}

// --- Settings --------------------------------------------------------------------------------

export interface PackageSettings {
  /** Anomaly packages: undefined = never set (shown as `high`; the migration's "Default"). */
  readonly sensitivity?: Sensitivity;
  /** Anomaly packages: undefined = never set (shown as `challenge`). */
  readonly action_mode?: ActionMode;
  /** Traditional packages: the package's on/off switch (default on). */
  readonly enabled?: boolean;
}

/** One zone's settings of the previous WAF: only what differs from the defaults. */
export interface ZoneWafSettings {
  readonly zoneId: string;
  /** The zone-wide switch of the previous WAF (Security > WAF > Managed rules: On/Off). */
  readonly enabled: boolean;
  /** By package id. */
  readonly packages?: Readonly<Record<string, PackageSettings>>;
  /** Group modes set by the user, by group id. */
  readonly groupModes?: Readonly<Record<string, GroupMode>>;
  /** Rule modes set by the user, by rule id (rule ids are unique across packages). */
  readonly ruleModes?: Readonly<Record<string, RuleMode>>;
  /** URI-based overrides (Enterprise, API only). */
  readonly overrides?: readonly UriOverride[];
}

export function defaultWafSettings(zoneId: string, enabled = true): ZoneWafSettings {
  return { zoneId, enabled };
}

// --- What a zone's settings resolve to --------------------------------------------------------

function defaultRuleMode(rule: RuleDef): RuleMode {
  if (rule.kind === 'deny') return 'default';
  return rule.defaultOn === false ? 'off' : 'on';
}

/** The rule's mode in the zone (`default` for an untouched deny rule). */
export function ruleMode(settings: ZoneWafSettings, rule: RuleDef): RuleMode {
  return settings.ruleModes?.[rule.id] ?? defaultRuleMode(rule);
}

/** What a rule does in the zone: a deny rule's `default` resolved to its default_mode; on/off otherwise. */
export function effectiveRuleMode(settings: ZoneWafSettings, rule: RuleDef): RuleMode {
  const m = ruleMode(settings, rule);
  return m === 'default' && rule.defaultMode ? rule.defaultMode : m;
}

export function groupMode(settings: ZoneWafSettings, group: GroupDef): GroupMode {
  return settings.groupModes?.[group.id] ?? group.defaultMode;
}

export function packageSettings(settings: ZoneWafSettings, packageId: string): PackageSettings {
  return settings.packages?.[packageId] ?? {};
}

// --- Objects as the API shows them -------------------------------------------------------------

export function packageObject(settings: ZoneWafSettings, pkg: PackageDef): WafPackage {
  const base = { id: pkg.id, name: pkg.name, description: pkg.description, detection_mode: pkg.detection_mode, zone_id: settings.zoneId, status: 'active' as const };
  if (pkg.detection_mode !== 'anomaly') return base;
  const s = packageSettings(settings, pkg.id);
  return { ...base, sensitivity: s.sensitivity ?? DEFAULT_SENSITIVITY, action_mode: s.action_mode ?? DEFAULT_ACTION_MODE };
}

export function groupObject(settings: ZoneWafSettings, pkg: PackageDef, group: GroupDef): WafGroup {
  return {
    id: group.id,
    name: group.name,
    description: group.description,
    rules_count: group.rules.length,
    modified_rules_count: group.rules.filter((r) => ruleMode(settings, r) !== defaultRuleMode(r)).length,
    package_id: pkg.id,
    mode: groupMode(settings, group),
    allowed_modes: GROUP_MODES,
  };
}

export function ruleObject(settings: ZoneWafSettings, pkg: PackageDef, group: GroupDef, rule: RuleDef, priority: number): WafRule {
  const base: WafRule = {
    id: rule.id,
    description: rule.description,
    priority: String(priority),
    package_id: pkg.id,
    group: { id: group.id, name: group.name },
    mode: ruleMode(settings, rule),
    allowed_modes: allowedModes(rule),
  };
  return rule.kind === 'deny' ? { ...base, default_mode: rule.defaultMode ?? 'block' } : base;
}


// --- List options -------------------------------------------------------------------------------

/** List options as strings (what a URL gives), all optional. Paging (`page`, `per_page`) is the caller's. */
export type Query = Readonly<Record<string, string | undefined>>;

/** A list: every item that passes the filters, in the order asked for (the caller pages it). */
export interface List<T> {
  readonly result: readonly T[];
}

function intParam(raw: string | undefined, name: string, dflt: number, min: number, max: number, rule: string): Result<{ value: number }> {
  if (raw === undefined || raw === '') return { ok: true, value: dflt };
  const n = /^-?\d+$/.test(raw.trim()) ? Number(raw.trim()) : NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max) return fail(invalidOption(`${show(raw)} is not a valid value for ${name} because ${rule}`));
  return { ok: true, value: n };
}

function enumParam<T extends string>(raw: string | undefined, name: string, allowed: readonly T[]): Result<{ value?: T }> {
  if (raw === undefined || raw === '') return { ok: true };
  if ((allowed as readonly string[]).includes(raw)) return { ok: true, value: raw as T };
  return fail(invalidOption(`${show(raw)} is not a valid value for ${name} because it must be one of: ${allowed.join(', ')}`));
}

/**
 * Filters, then orders. `filters` are predicates for the query filters that are present;
 * `match=all` (default) keeps items that pass every one, `match=any` items that pass one of them.
 */
function listQuery<T>(
  items: readonly T[],
  query: Query,
  filters: readonly ((x: T) => boolean)[],
  orders: Readonly<Record<string, (a: T, b: T) => number>>,
): Result<List<T>> {
  const match = enumParam(query.match, 'match', ['any', 'all'] as const);
  if (!match.ok) return match;
  const direction = enumParam(query.direction, 'direction', ['asc', 'desc'] as const);
  if (!direction.ok) return direction;
  const order = enumParam(query.order, 'order', Object.keys(orders));
  if (!order.ok) return order;
  let out = filters.length === 0 ? [...items] : items.filter((x) => (match.value === 'any' ? filters.some((f) => f(x)) : filters.every((f) => f(x))));
  if (order.value !== undefined) {
    const cmp = orders[order.value];
    out = out.map((x, i) => ({ x, i })).sort((a, b) => cmp(a.x, b.x) || a.i - b.i).map((e) => e.x);
  }
  if (direction.value === 'desc') out.reverse();
  return { ok: true, result: out };
}

const byString = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
const contains = (haystack: string | null, needle: string) => (haystack ?? '').toLowerCase().includes(needle.toLowerCase());

// --- Packages ----------------------------------------------------------------------------------

const noPackage = (id: string) => notFound(`WAF package ${id}`);

/** GET /zones/{zone_id}/firewall/waf/packages — `name`, `order=name`, `direction`, `match`. */
export function listPackages(settings: ZoneWafSettings, query: Query = {}): Result<List<WafPackage>> {
  const all = PACKAGES.map((p) => packageObject(settings, p));
  const filters = query.name ? [(p: WafPackage) => contains(p.name, query.name!)] : [];
  return listQuery(all, query, filters, { name: (a, b) => byString(a.name, b.name) });
}

export function getPackage(settings: ZoneWafSettings, packageId: string): Result<{ result: WafPackage }> {
  const pkg = findPackageDef(packageId);
  if (!pkg) return fail(noPackage(packageId));
  return { ok: true, result: packageObject(settings, pkg) };
}

/** PATCH …/packages/{id} `{sensitivity?, action_mode?}` — anomaly packages only. */
export function patchPackage(settings: ZoneWafSettings, packageId: string, body: unknown): Result<{ settings: ZoneWafSettings; result: WafPackage }> {
  const pkg = findPackageDef(packageId);
  if (!pkg) return fail(noPackage(packageId));
  if (!isRecord(body)) return fail(migrationError('invalid-value', 'the request body must be a JSON object such as {"sensitivity": "medium", "action_mode": "block"}', ''));
  const unknown = unknownFieldError(body, ['sensitivity', 'action_mode'], 'a package accepts "sensitivity" and "action_mode"');
  if (unknown) return fail(unknown);
  if (pkg.detection_mode !== 'anomaly') {
    return fail(
      migrationError(
        'invalid-value',
        `package ${pkg.id} ("${pkg.name}") uses the traditional detection mode: sensitivity and action_mode can only be set on an anomaly package ("${OWASP_PACKAGE.name}", ${OWASP_PACKAGE.id}); change its rule groups and rules instead`,
        body.sensitivity !== undefined ? '/sensitivity' : '/action_mode',
      ),
    );
  }
  if (body.sensitivity === undefined && body.action_mode === undefined) {
    return fail(migrationError('missing-field', `nothing to change: send "sensitivity" (${SENSITIVITIES.join('|')}) and/or "action_mode" (${ACTION_MODES.join('|')})`, ''));
  }
  if (body.sensitivity !== undefined && !(SENSITIVITIES as readonly unknown[]).includes(body.sensitivity)) {
    return fail(invalidValue('sensitivity', body.sensitivity, `it must be one of: ${SENSITIVITIES.join(', ')}`));
  }
  if (body.action_mode !== undefined && !(ACTION_MODES as readonly unknown[]).includes(body.action_mode)) {
    return fail(invalidValue('action_mode', body.action_mode, `it must be one of: ${ACTION_MODES.join(', ')}`));
  }
  const before = packageSettings(settings, pkg.id);
  const after: PackageSettings = {
    ...before,
    ...(body.sensitivity !== undefined ? { sensitivity: body.sensitivity as Sensitivity } : {}),
    ...(body.action_mode !== undefined ? { action_mode: body.action_mode as ActionMode } : {}),
  };
  const next: ZoneWafSettings = { ...settings, packages: { ...settings.packages, [pkg.id]: after } };
  return { ok: true, settings: next, result: packageObject(next, pkg) };
}

// --- Groups ------------------------------------------------------------------------------------

/** GET …/packages/{id}/groups — `mode`, `name`, `rules_count`, `order=mode|rules_count`, `direction`, `match`. */
export function listGroups(settings: ZoneWafSettings, packageId: string, query: Query = {}): Result<List<WafGroup>> {
  const pkg = findPackageDef(packageId);
  if (!pkg) return fail(noPackage(packageId));
  const mode = enumParam(query.mode, 'mode', GROUP_MODES);
  if (!mode.ok) return mode;
  let rulesCount: number | undefined;
  if (query.rules_count !== undefined && query.rules_count !== '') {
    const r = intParam(query.rules_count, 'rules_count', 0, 0, Number.MAX_SAFE_INTEGER, 'rules_count is an integer of 0 or more');
    if (!r.ok) return r;
    rulesCount = r.value;
  }
  const filters: ((g: WafGroup) => boolean)[] = [];
  if (mode.value) filters.push((g) => g.mode === mode.value);
  if (query.name) filters.push((g) => contains(g.name, query.name!));
  if (rulesCount !== undefined) filters.push((g) => g.rules_count === rulesCount);
  return listQuery(
    pkg.groups.map((g) => groupObject(settings, pkg, g)),
    query,
    filters,
    { mode: (a, b) => byString(a.mode, b.mode), rules_count: (a, b) => a.rules_count - b.rules_count },
  );
}

function groupIn(settings: ZoneWafSettings, packageId: string, groupId: string): Result<{ pkg: PackageDef; group: GroupDef }> {
  const pkg = findPackageDef(packageId);
  if (!pkg) return fail(notFound(`rule group ${groupId} of package ${packageId}`));
  const group = pkg.groups.find((g) => g.id === groupId.toLowerCase());
  if (!group) return fail(notFound(`rule group ${groupId} of package ${packageId}`));
  return { ok: true, pkg, group };
}

export function getGroup(settings: ZoneWafSettings, packageId: string, groupId: string): Result<{ result: WafGroup }> {
  const g = groupIn(settings, packageId, groupId);
  if (!g.ok) return g;
  return { ok: true, result: groupObject(settings, g.pkg, g.group) };
}

/** PATCH …/groups/{id} `{mode: "on"|"off"}`. */
export function patchGroup(settings: ZoneWafSettings, packageId: string, groupId: string, body: unknown): Result<{ settings: ZoneWafSettings; result: WafGroup }> {
  const g = groupIn(settings, packageId, groupId);
  if (!g.ok) return g;
  if (!isRecord(body)) return fail(migrationError('invalid-value', 'the request body must be a JSON object such as {"mode": "on"}', ''));
  const unknown = unknownFieldError(body, ['mode'], 'a rule group accepts only "mode"');
  if (unknown) return fail(unknown);
  if (body.mode === undefined) return fail(migrationError('missing-field', 'mode is required: one of on, off', '/mode'));
  if (!(GROUP_MODES as readonly unknown[]).includes(body.mode)) return fail(invalidValue('mode', body.mode, `it must be one of the group's allowed_modes: ${GROUP_MODES.join(', ')}`));
  const next: ZoneWafSettings = { ...settings, groupModes: { ...settings.groupModes, [g.group.id]: body.mode as GroupMode } };
  return { ok: true, settings: next, result: groupObject(next, g.pkg, g.group) };
}

// --- Rules -------------------------------------------------------------------------------------

/**
 * GET …/packages/{id}/rules — `mode` (DIS|CHL|BLK|SIM, also a mode's full name or on|off),
 * `group_id`, `description` (case-insensitive substring), `priority` (exact),
 * `order=priority|group_id|description`, `direction`, `match`.
 * A `mode` filter matches what the rule does: a deny rule in `default` matches its default_mode.
 */
export function listRules(settings: ZoneWafSettings, packageId: string, query: Query = {}): Result<List<WafRule>> {
  const pkg = findPackageDef(packageId);
  if (!pkg) return fail(noPackage(packageId));
  const filters: ((r: { rule: RuleDef; obj: WafRule }) => boolean)[] = [];
  if (query.mode !== undefined && query.mode !== '') {
    const wanted = RULE_MODE_FILTERS[query.mode.toUpperCase()] ?? query.mode.toLowerCase();
    const known = [...Object.keys(RULE_MODE_FILTERS), ...DENY_RULE_MODES, ...GROUP_MODES];
    if (!known.includes(query.mode.toUpperCase()) && !known.includes(wanted)) {
      return fail(invalidOption(`${show(query.mode)} is not a valid value for mode because it must be one of: DIS, CHL, BLK, SIM (or a mode: ${[...DENY_RULE_MODES, ...GROUP_MODES].join(', ')})`));
    }
    filters.push(({ rule, obj }) => obj.mode === wanted || effectiveRuleMode(settings, rule) === wanted);
  }
  if (query.group_id) filters.push(({ obj }) => obj.group.id === query.group_id!.toLowerCase());
  if (query.description) filters.push(({ obj }) => contains(obj.description, query.description!));
  if (query.priority) filters.push(({ obj }) => obj.priority === query.priority);
  const items = packageRules(pkg).map(({ group, rule, priority }) => ({ rule, obj: ruleObject(settings, pkg, group, rule, priority) }));
  const list = listQuery(items, query, filters, {
    priority: (a, b) => Number(a.obj.priority) - Number(b.obj.priority),
    group_id: (a, b) => byString(a.obj.group.id, b.obj.group.id),
    description: (a, b) => byString(a.obj.description, b.obj.description),
  });
  if (!list.ok) return list;
  return { ok: true, result: list.result.map((x) => x.obj) };
}

function ruleIn(settings: ZoneWafSettings, packageId: string, ruleId: string): Result<{ pkg: PackageDef; group: GroupDef; rule: RuleDef; priority: number }> {
  const pkg = findPackageDef(packageId);
  const found = pkg && packageRules(pkg).find((r) => r.rule.id === ruleId);
  if (!pkg || !found) return fail(notFound(`rule ${ruleId} of package ${packageId}`));
  return { ok: true, pkg, ...found };
}

export function getRule(settings: ZoneWafSettings, packageId: string, ruleId: string): Result<{ result: WafRule }> {
  const r = ruleIn(settings, packageId, ruleId);
  if (!r.ok) return r;
  return { ok: true, result: ruleObject(settings, r.pkg, r.group, r.rule, r.priority) };
}

/** PATCH …/rules/{id} `{mode}`: the mode must be one of the rule's allowed_modes. */
export function patchRule(settings: ZoneWafSettings, packageId: string, ruleId: string, body: unknown): Result<{ settings: ZoneWafSettings; result: WafRule }> {
  const r = ruleIn(settings, packageId, ruleId);
  if (!r.ok) return r;
  if (!isRecord(body)) return fail(migrationError('invalid-value', 'the request body must be a JSON object such as {"mode": "block"}', ''));
  const unknown = unknownFieldError(body, ['mode'], 'a rule accepts only "mode"');
  if (unknown) return fail(unknown);
  const allowed = allowedModes(r.rule);
  if (body.mode === undefined) return fail(migrationError('missing-field', `mode is required: one of the rule's allowed_modes: ${allowed.join(', ')}`, '/mode'));
  if (!(allowed as readonly unknown[]).includes(body.mode)) {
    const flavour = r.rule.kind === 'deny' ? 'a traditional deny rule' : r.rule.kind === 'allow' ? 'a traditional allow rule' : 'an anomaly rule';
    return fail(invalidValue('mode', body.mode, `rule ${r.rule.id} is ${flavour}: its allowed_modes are ${allowed.join(', ')}`));
  }
  const next: ZoneWafSettings = { ...settings, ruleModes: { ...settings.ruleModes, [r.rule.id]: body.mode as RuleMode } };
  return { ok: true, settings: next, result: ruleObject(next, r.pkg, r.group, r.rule, r.priority) };
}

// --- The zone-wide switch ----------------------------------------------------------------------

/** The zone setting `waf` (`/zones/{zone_id}/settings/waf`), the previous WAF's on/off switch. */
export interface WafZoneSetting {
  readonly id: 'waf';
  readonly value: 'on' | 'off';
  readonly editable: true;
}

export function wafZoneSetting(settings: ZoneWafSettings): WafZoneSetting {
  return { id: 'waf', value: settings.enabled ? 'on' : 'off', editable: true };
}

/** PATCH `/zones/{zone_id}/settings/waf` `{"value": "on"|"off"}`. */
export function patchWafZoneSetting(settings: ZoneWafSettings, body: unknown): Result<{ settings: ZoneWafSettings; result: WafZoneSetting }> {
  if (!isRecord(body)) return fail(migrationError('invalid-value', 'the request body must be a JSON object such as {"value": "on"}', ''));
  const unknown = unknownFieldError(body, ['value'], 'the waf setting accepts only "value"');
  if (unknown) return fail(unknown);
  if (body.value !== 'on' && body.value !== 'off') return fail(invalidValue('value', body.value, 'it must be on or off'));
  const next: ZoneWafSettings = { ...settings, enabled: body.value === 'on' };
  return { ok: true, settings: next, result: wafZoneSetting(next) };
}
