/**
 * The new WAF Managed Rules configuration equivalent to a zone's previous WAF settings:
 * what `GET /zones/{id}/waf_migration/config?phase_two=1` returns (rules-api §3), the body
 * the migration PUT sends back to the `http_request_firewall_managed` entry point. Plus
 * what the migration does not carry over, each with what it was and why.
 *
 * The mapping (sources in brackets):
 * - The CloudFlare package → an `execute` rule of the Cloudflare Managed Ruleset
 *   (efb7b8c9…), enabled when the package is on, present but disabled when it is off; the
 *   rule modes the user set on its deny rules that have a counterpart in that ruleset become
 *   rule overrides of the counterpart (cloudflareCounterparts.ts `cloudflareModeOverrides`; the hosted config example carries
 *   such an override, rules-api §3).
 * - The OWASP package → an `execute` rule of the Cloudflare OWASP Core Ruleset (4814384a…)
 *   with a paranoia level (category overrides from `setParanoiaLevel`) and the anomaly rule
 *   949110's threshold and action (a rule override from `setScoreThreshold`):
 *   sensitivity High → PL2/40, Medium → PL1/25, Low → PL1/40, Default (never set) → PL2/40
 *   [upgrade guide table, crs-and-managed-rules §4.5]; action Simulate → log, Block → block,
 *   Challenge → challenge [upgrade guide: "an almost direct mapping … except for the
 *   Simulate action which will be migrated to Log"; the direct equivalent of the previous
 *   Challenge (an interactive challenge) is the new `challenge` action, not
 *   `managed_challenge`]. Sensitivity Off → no OWASP rule at all [the guide's example
 *   config for a zone without OWASP holds only the Cloudflare Managed Ruleset rule].
 * - The zone-wide WAF switch off → the execute rules are kept but disabled, unless Page
 *   Rules turn the WAF on for some URLs ("Web Application Firewall: On"): then they run,
 *   enabled, for those URLs only.
 * - Exceptions [upgrade guide, "Configurations that will be upgraded"]: firewall rules with
 *   action Bypass whose products include WAF, and Page Rules with "Web Application
 *   Firewall: Off" or "Disable Security", become `skip` rules placed before the execute
 *   rules, with `action_parameters: {"ruleset": "current"}` — "skip all remaining rules" of
 *   the managed entry point, i.e. every managed ruleset, as a bypass of the WAF skipped
 *   every package (crs-and-managed-rules §4.3: exceptions are skip rules before the
 *   execute rule). Paused rules and disabled page rules become disabled skip rules.
 *   Expressions: the firewall rule's filter expression as it is; a Page Rule's URL
 *   patterns as `http.request.full_uri wildcard "…"` (see `urlPatternExpression`).
 * - Not migrated [upgrade guide]: group modes of both packages, rule modes of the OWASP
 *   package and of CloudFlare rules without a counterpart (modes changed from their
 *   defaults), and URI-based overrides (which block the migration anyway). Page rules are
 *   converted where each is the first match (only the first Page Rule for a URL applies).
 *
 * Rules have empty-string `id`, `version` and `ref`, and `description: ""` on the execute
 * rules, exactly as the hosted config; skip rules get a description that names their source.
 */
import { checkExpression } from '../language/index';
import { defaultCatalog } from '../managed/catalog';
import { OWASP_ANOMALY_RULE_ID, OWASP_RULESET_ID, VENDOR_RULESET_ID } from '../rulesets/managedIds';
import { setParanoiaLevel, setScoreThreshold, type ParanoiaLevel } from '../managed/preview';
import { findManagedRuleset, rulesetVersion, type ManagedCatalog } from '../rulesets/catalog';
import { legacyOrder, type LegacyFirewallRule } from '../rulesets/legacy';
import type { Rule } from '../rulesets/model';
import { validateRulesetJson, type RulesetProblem } from '../rulesets/validate';
import { cloudflareModeOverrides } from './cloudflareCounterparts';
import { CLOUDFLARE_PACKAGE_ID, OWASP_PACKAGE, OWASP_PACKAGE_ID, PACKAGES, type ActionMode, type GroupDef, type PackageDef, type RuleDef, type Sensitivity } from './previousWafContent';
import { groupMode, packageSettings, ruleMode, type ZoneWafSettings } from './previousWafSettings';
import type { MigrationZone, PageRule } from './zone';

export const MANAGED_PHASE = 'http_request_firewall_managed';

// --- The OWASP mapping -----------------------------------------------------------------------

/** Sensitivity as the upgrade guide's table names it: the four set values, or `default` (never set). */
export type SensitivityRow = Exclude<Sensitivity, 'off'> | 'default';

/** Upgrade guide table: old sensitivity → paranoia level and score threshold of the new OWASP ruleset. */
export const SENSITIVITY_MAP: Readonly<Record<SensitivityRow, { readonly paranoiaLevel: ParanoiaLevel; readonly threshold: number }>> = {
  high: { paranoiaLevel: 2, threshold: 40 },
  medium: { paranoiaLevel: 1, threshold: 25 },
  low: { paranoiaLevel: 1, threshold: 40 },
  default: { paranoiaLevel: 2, threshold: 40 },
};

/** Old action_mode → the anomaly rule's action (see the header for the source). */
export const ACTION_MAP: Readonly<Record<ActionMode, 'log' | 'block' | 'challenge'>> = {
  simulate: 'log',
  block: 'block',
  challenge: 'challenge',
};

export interface OwaspMapping {
  readonly row: SensitivityRow;
  readonly paranoiaLevel: ParanoiaLevel;
  readonly threshold: number;
  readonly action: 'log' | 'block' | 'challenge';
}

/**
 * The new OWASP settings for the old package's sensitivity and action_mode (undefined =
 * never set: the "Default" row, and the package default `challenge`); undefined when the
 * package is off.
 */
export function owaspMapping(sensitivity: Sensitivity | undefined, actionMode: ActionMode | undefined): OwaspMapping | undefined {
  if (sensitivity === 'off') return undefined;
  const row: SensitivityRow = sensitivity ?? 'default';
  return { row, ...SENSITIVITY_MAP[row], action: ACTION_MAP[actionMode ?? 'challenge'] };
}

// --- URL patterns ------------------------------------------------------------------------------

/**
 * A Page Rules URL pattern as a Rules-language expression over `http.request.full_uri`
 * (`wildcard`, case-insensitive — the Page Rules migration guide's form):
 * - no scheme → `http*://` (Page Rules match both http and https when none is written);
 * - no path → `/` (a bare host matches the root only: "writing example.com will not work"
 *   for every page);
 * - `*` stays a wildcard (runs of stars collapse: the engine rejects a double star);
 *   nothing is appended — without a trailing `*` a Page Rule matches that URL only, query
 *   string included, and so does `wildcard` on the full URI;
 * - a backslash is escaped for the wildcard, then `\` and `"` for the string literal.
 */
export function urlPatternExpression(pattern: string): string {
  let p = pattern.trim().replace(/\*{2,}/g, '*');
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(p)) p = `http*://${p}`;
  const afterScheme = p.indexOf('://') + 3;
  if (!p.slice(afterScheme).includes('/') && !p.endsWith('*')) p += '/';
  const wildcardEscaped = p.replace(/\\/g, '\\\\');
  const literal = wildcardEscaped.replace(/\\/g, '\\\\').replace(/"/g, '\\"');
  return `http.request.full_uri wildcard "${literal}"`;
}

/** `e` in parentheses when it has an `or` or `and` of its own, to be one operand of another. */
function grouped(e: string): string {
  return / (?:or|and) /.test(e) ? `(${e})` : e;
}

function anyOf(expressions: readonly string[]): string {
  return expressions.length === 1 ? expressions[0] : expressions.map(grouped).join(' or ');
}

// --- Output types --------------------------------------------------------------------------------

export type NotMigratedKind = 'group' | 'rule' | 'uri-override' | 'firewall-rule' | 'page-rule';

export interface NotMigrated {
  readonly kind: NotMigratedKind;
  /** The group id, rule id, override id, firewall rule id or page rule id. */
  readonly id: string;
  readonly packageId?: string;
  /** e.g. `OWASP ModSecurity Core Rule Set › OWASP XSS Attacks`, or the rule's description. */
  readonly name: string;
  /** What it was, e.g. `mode off (default on)`. */
  readonly was: string;
  readonly reason: string;
}

/** The hosted config body: an entry point without id/kind/phase. */
export interface MigrationRulesetConfig {
  readonly name: 'default';
  readonly rules: readonly Rule[];
}

export interface MigrationConfigResult {
  /** The API's `result`. */
  readonly config: MigrationRulesetConfig;
  readonly notMigrated: readonly NotMigrated[];
  /** What the execute rules are, for review: the OWASP mapping applied (undefined when OWASP is off). */
  readonly owasp?: OwaspMapping;
  /** Errors the project's ruleset validation finds in the config (none expected; tests check). */
  readonly problems: readonly RulesetProblem[];
}

// --- Building rules ------------------------------------------------------------------------------

/** A rule in the hosted config's shape and key order. */
function configRule(action: string, expression: string, description: string, enabled: boolean, actionParameters: object): Rule {
  return { id: '', version: '', action, expression, description, ref: '', enabled, action_parameters: actionParameters };
}

function owaspExecute(mapping: OwaspMapping, expression: string, enabled: boolean): Rule {
  let rule = configRule('execute', expression, '', enabled, { id: OWASP_RULESET_ID });
  rule = setParanoiaLevel(rule, mapping.paranoiaLevel);
  rule = setScoreThreshold(rule, mapping.threshold, mapping.action, { anomalyRuleId: OWASP_ANOMALY_RULE_ID });
  return rule;
}

function firewallRuleLabel(r: LegacyFirewallRule): string {
  return `firewall rule ${r.id ?? '(no id)'}${r.description ? ` "${r.description}"` : ''}`;
}

function expressionProblem(expression: string, plan: MigrationZone['plan']): string | undefined {
  const errors = checkExpression(expression, { phase: MANAGED_PHASE, plan }).diagnostics.filter((d) => d.severity === 'error');
  return errors.length ? errors.map((d) => d.message).join('; ') : undefined;
}

function bypassesWaf(r: LegacyFirewallRule): boolean {
  return r.action === 'bypass' && Array.isArray(r.products) && r.products.some((p) => String(p).toLowerCase() === 'waf');
}

function turnsWafOff(p: PageRule): boolean {
  return p.waf === 'off' || p.disable_security === true;
}

function pageRuleExpression(p: PageRule): string | undefined {
  const targets = (p.targets ?? []).filter((t) => typeof t === 'string' && t.trim() !== '');
  return targets.length ? anyOf(targets.map(urlPatternExpression)) : undefined;
}

/**
 * Where page rule `p` of `all` (in priority order, the first highest) applies: its URL
 * patterns minus those of the active page rules before it, since only the first Page Rule
 * that matches a URL takes effect (a "WAF: Off" below a rule for the same URLs that leaves
 * the WAF on never turned it off there).
 */
function firstMatchExpression(p: PageRule, all: readonly PageRule[]): string | undefined {
  const own = pageRuleExpression(p);
  if (own === undefined) return undefined;
  const before = all
    .slice(0, all.indexOf(p))
    .filter((q) => q.status !== 'disabled')
    .map(pageRuleExpression)
    .filter((e): e is string => e !== undefined);
  return before.length === 0 ? own : `${grouped(own)} and not ${grouped(anyOf(before))}`;
}

function packageLabel(pkg: PackageDef, group: GroupDef): string {
  return `${pkg.name} › ${group.name}`;
}

/** What a rule does by default: a deny rule's default_mode, or on/off. */
function ruleDefault(rule: RuleDef): string {
  return rule.kind === 'deny' ? (rule.defaultMode ?? 'block') : rule.defaultOn === false ? 'off' : 'on';
}

function overridesNotMigrated(waf: ZoneWafSettings, carried: ReadonlySet<string>): NotMigrated[] {
  const out: NotMigrated[] = [];
  for (const pkg of PACKAGES) {
    const owasp = pkg.id === OWASP_PACKAGE_ID;
    const groupWhy = owasp
      ? 'OWASP group overrides are not migrated: the new Cloudflare OWASP Core Ruleset is based on CRS 3.x and has no direct equivalent of the CRS 2.x groups (upgrade guide). Recreate it with tag overrides (for example attack-xss) on the OWASP execute rule if needed.'
      : "Group modes of the CloudFlare package are not migrated: the new Cloudflare Managed Ruleset has no groups, and Rulesmith's has no mapping from previous-version groups. Recreate it with a category override (for example wordpress) on the Cloudflare Managed Ruleset execute rule if needed.";
    const ruleWhy = owasp
      ? 'OWASP rule overrides are not migrated: there is no direct equivalence between rules of the two versions (upgrade guide). Recreate it with a rule override on the OWASP execute rule if needed.'
      : 'Rule modes of the CloudFlare package are carried as rule overrides of their counterparts in the Cloudflare Managed Ruleset, and this rule has none there (or its group is off). Recreate it with a rule override on the Cloudflare Managed Ruleset execute rule if needed.';
    for (const group of pkg.groups) {
      const mode = groupMode(waf, group);
      if (mode !== group.defaultMode) out.push({ kind: 'group', id: group.id, packageId: pkg.id, name: packageLabel(pkg, group), was: `mode ${mode} (default ${group.defaultMode})`, reason: groupWhy });
      for (const rule of group.rules) {
        const m = ruleMode(waf, rule);
        // A deny rule set to its own default_mode behaves as `default`: nothing is lost.
        if (m !== 'default' && m !== ruleDefault(rule) && !(pkg.id === CLOUDFLARE_PACKAGE_ID && carried.has(rule.id))) out.push({ kind: 'rule', id: rule.id, packageId: pkg.id, name: `${packageLabel(pkg, group)} › ${rule.id} ${rule.description}`, was: `mode ${m} (default ${ruleDefault(rule)})`, reason: ruleWhy });
      }
    }
  }
  for (const o of waf.overrides ?? []) {
    out.push({
      kind: 'uri-override',
      id: o.id,
      name: o.description ?? `override of ${o.urls.join(', ')}`,
      was: `URI-based override for ${o.urls.join(', ')}`,
      reason: 'URI-based WAF overrides are not migrated, and a zone that has them cannot migrate: delete them first, then recreate them as exceptions (skip rules) or overrides of the managed rulesets.',
    });
  }
  return out;
}

/** The new configuration for the zone (see the header). */
export function migrationConfig(zone: MigrationZone, catalog: ManagedCatalog = defaultCatalog): MigrationConfigResult {
  const waf = zone.waf;
  const vendor = findManagedRuleset(catalog, VENDOR_RULESET_ID);
  const carried = cloudflareModeOverrides(waf, (vendor && rulesetVersion(vendor, undefined)?.rules) ?? [], 'userSet');
  const notMigrated: NotMigrated[] = overridesNotMigrated(waf, carried.carried);
  const rules: Rule[] = [];

  // Exceptions from firewall rules (in the order they run), then from page rules.
  for (const fr of legacyOrder(zone.firewallRules ?? []).filter(bypassesWaf)) {
    const label = firewallRuleLabel(fr);
    const expression = fr.filter?.expression;
    if (fr.filter?.deleted || typeof expression !== 'string' || expression.trim() === '') {
      notMigrated.push({ kind: 'firewall-rule', id: fr.id ?? '', name: label, was: 'Bypass > WAF Managed Rules', reason: 'its filter was deleted or has no expression, so there is no condition to carry over' });
      continue;
    }
    const problem = expressionProblem(expression, zone.plan);
    if (problem) {
      notMigrated.push({ kind: 'firewall-rule', id: fr.id ?? '', name: label, was: 'Bypass > WAF Managed Rules', reason: `its filter expression is not valid in the ${MANAGED_PHASE} phase: ${problem}` });
      continue;
    }
    const enabled = fr.paused !== true && fr.filter.paused !== true;
    rules.push(configRule('skip', expression, `Migrated from ${label} (Bypass > WAF Managed Rules)${enabled ? '' : ', paused'}`, enabled, { ruleset: 'current' }));
  }
  const pageRules = zone.pageRules ?? [];
  for (const pr of pageRules) {
    if (!turnsWafOff(pr)) continue;
    const setting = pr.waf === 'off' ? 'Web Application Firewall: Off' : 'Disable Security';
    const expression = firstMatchExpression(pr, pageRules);
    if (expression === undefined) {
      notMigrated.push({ kind: 'page-rule', id: pr.id, name: `page rule ${pr.id}`, was: setting, reason: 'the page rule has no URL pattern' });
      continue;
    }
    const problem = expressionProblem(expression, zone.plan);
    if (problem) {
      notMigrated.push({ kind: 'page-rule', id: pr.id, name: `page rule ${pr.id}`, was: setting, reason: `its URL pattern does not convert to a valid expression: ${problem}` });
      continue;
    }
    const enabled = pr.status !== 'disabled';
    rules.push(configRule('skip', expression, `Migrated from page rule ${pr.id} (${setting}: ${pr.targets.join(', ')})${enabled ? '' : ', disabled'}`, enabled, { ruleset: 'current' }));
  }

  // Where the managed rulesets run: everywhere when the WAF is on; where page rules turn it on otherwise.
  let executeExpression = 'true';
  let executeEnabled = waf.enabled;
  if (!waf.enabled) {
    const onRules = pageRules.filter((p) => p.waf === 'on' && p.status !== 'disabled');
    const exprs: string[] = [];
    // One that cannot be carried over is listed, as an Off one is: else the WAF silently stops there.
    for (const pr of onRules) {
      const expression = firstMatchExpression(pr, pageRules);
      const problem = expression === undefined ? 'the page rule has no URL pattern' : expressionProblem(expression, zone.plan);
      if (expression !== undefined && problem === undefined) exprs.push(expression);
      else notMigrated.push({ kind: 'page-rule', id: pr.id, name: `page rule ${pr.id}`, was: 'Web Application Firewall: On', reason: expression === undefined ? problem! : `its URL pattern does not convert to a valid expression: ${problem}` });
    }
    if (exprs.length > 0) {
      executeExpression = anyOf(exprs);
      executeEnabled = true;
    }
  }

  const cf = packageSettings(waf, CLOUDFLARE_PACKAGE_ID);
  const vendorOverrides = carried.overrides.length > 0 ? { overrides: { rules: carried.overrides } } : {};
  rules.push(configRule('execute', executeExpression, '', executeEnabled && cf.enabled !== false, { id: VENDOR_RULESET_ID, ...vendorOverrides }));
  const ow = packageSettings(waf, OWASP_PACKAGE.id);
  const owasp = owaspMapping(ow.sensitivity, ow.action_mode);
  if (owasp) rules.push(owaspExecute(owasp, executeExpression, executeEnabled));

  const config: MigrationRulesetConfig = { name: 'default', rules };
  return { config, notMigrated, ...(owasp ? { owasp } : {}), problems: validateConfig(config, zone.plan, catalog) };
}

/**
 * The config through the project's ruleset validation (errors only). The hosted config's
 * empty-string `id`/`version`/`ref` are left out first: the entry-point PUT tolerates them
 * (rules-api §3) but `validateRulesetJson` reads them as invalid values.
 */
export function validateConfig(config: MigrationRulesetConfig, plan: MigrationZone['plan'] | undefined, catalog: ManagedCatalog = defaultCatalog): RulesetProblem[] {
  const rules = config.rules.map(withoutEmptyIds);
  const json = JSON.stringify({ name: config.name, phase: MANAGED_PHASE, rules }, null, 2);
  return validateRulesetJson(json, { catalog, phase: MANAGED_PHASE, ...(plan ? { plan } : {}) }).filter((p) => p.severity === 'error');
}


// --- For review in the editor ------------------------------------------------------------------

/** A rule without the hosted config's empty-string `id`, `version` and `ref`. */
export function withoutEmptyIds(rule: Rule): Rule {
  return Object.fromEntries(Object.entries(rule).filter(([k, v]) => !(['id', 'version', 'ref'].includes(k) && v === ''))) as Rule;
}

/**
 * The config as a `*.ruleset.json` document for review (`rulesmith.reviewMigration`): the
 * zone entry point of `http_request_firewall_managed` with `kind` and `phase` (so the
 * editor validates it in context) and without the empty-string ids, 2-space indented.
 * Deploying it is an entry-point PUT of its `rules` (the PUT body must leave out `kind` and `phase`).
 */
export function reviewRulesetJson(config: MigrationRulesetConfig): string {
  return `${JSON.stringify({ name: config.name, kind: 'zone', phase: MANAGED_PHASE, rules: config.rules.map(withoutEmptyIds) }, null, 2)}\n`;
}

/** What is not migrated, one line per item (plain text; empty string when nothing is lost). */
export function notMigratedSummary(list: readonly NotMigrated[]): string {
  return list.map((n) => `- ${n.name}: ${n.was}. ${n.reason}`).join('\n');
}
