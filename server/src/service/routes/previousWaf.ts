/**
 * The previous version of WAF managed rules (rules-api §5): packages, rule groups, rules
 * and URI-based overrides of a zone, over the core's pure functions
 * (server/src/migration/previousWaf.ts) and the zone's settings in table `previous_waf`.
 *
 * - Permissions: Firewall Services Read (GET) / Write (PATCH, POST, PUT, DELETE).
 * - Access (the core's `previousWafAccess`): Free zones never had the previous WAF; after
 *   the zone migrated every call answers that it was migrated on <date> and to use the
 *   managed rulesets; creating or replacing URI-based overrides needs Enterprise (reading
 *   and deleting them stays open, so any zone can clear what blocks its migration).
 * - Page-based pagination with the service's pager (page, per_page 5–100, default 50),
 *   `[]` beyond the last page; the core filters and orders, this file pages.
 * - The core's errors are answered through migrationErrors.ts (an unknown id: 404 + 7003).
 * - Legacy family 'previous WAF': 410 Gone under `--legacy sunset`.
 *
 * Rule ids of the previous WAF are numeric ("100015"), so the rule route's parameter is
 * `:waf_rule_id`, not the router's 32-hex `:rule_id`.
 */
import {
  createOverride,
  deleteOverride,
  getGroup,
  getOverride,
  getPackage,
  getRule,
  listGroups,
  listOverrides,
  listPackages,
  listRules,
  migrationConfig,
  patchGroup,
  patchPackage,
  patchRule,
  previousWafAccess,
  updateOverride,
  MAGENTO_GROUP_ID,
  OWASP_PACKAGE_ID,
  PACKAGES,
  type ActionMode,
  type List,
  type PageRule,
  type PreviousWafOperation,
  type Sensitivity,
  type Query,
  type Result,
  type ZoneWafSettings,
} from '../../migration/index';
import { defaultCatalog } from '../../managed/catalog';
import { newId, paginate, type Reply } from '../api';
import { withoutNulls } from '../body';
import { migrationApiError } from '../migrationErrors';
import { migrationZone, saveMigrationRecord, saveWafSettings } from '../migrationFlow';
import type { Ctx, Router } from '../router';
import { putEntryPoint, type RuleInput } from '../rulesetStore';
import { requireZone } from '../scopeAccess';
import { seedId, type SeedStep } from '../seed';
import { toJson } from '../store';

const LEGACY = { legacy: 'previous WAF' } as const;
const BASE = '/zones/:zone_id/firewall/waf';

/** The body for the core, `null` members dropped (the hosted API decodes like Go: null = absent). */
function bodyOf(ctx: Ctx): unknown {
  const b = ctx.body;
  return b !== null && typeof b === 'object' && !Array.isArray(b) ? withoutNulls(b) : b;
}

function queryOf(ctx: Ctx): Query {
  const q: Record<string, string> = {};
  for (const [k, v] of ctx.query) q[k] ??= v;
  return q;
}

/** The zone's settings, after the permission and access checks. */
function settingsFor(ctx: Ctx, op: PreviousWafOperation): ZoneWafSettings {
  const zone = requireZone(ctx, ['Firewall Services'], op === 'read' ? 'Read' : 'Write');
  const mz = migrationZone(ctx.service.store, zone);
  const denied = previousWafAccess(mz, op);
  if (denied) throw migrationApiError(denied, ctx.path);
  return mz.waf;
}

function unwrap<T>(ctx: Ctx, r: Result<T>): T {
  if (!r.ok) throw migrationApiError(r.error, ctx.path);
  return r;
}

/** A read of one object. */
function read(ctx: Ctx, fn: (s: ZoneWafSettings) => Result<{ result: unknown }>): Reply {
  return { result: unwrap(ctx, fn(settingsFor(ctx, 'read'))).result };
}

/** A read of a list: the core's items, paged as every page-based list of the service. */
function list(ctx: Ctx, fn: (s: ZoneWafSettings) => Result<List<unknown>>): Reply {
  return paginate(unwrap(ctx, fn(settingsFor(ctx, 'read'))).result, ctx.query, { defaultPerPage: 50, min: 5, max: 100 });
}

/** A change: computed and stored in one transaction. */
function change(ctx: Ctx, op: PreviousWafOperation, fn: (s: ZoneWafSettings) => Result<{ settings: ZoneWafSettings; result: unknown }>): Reply {
  return ctx.service.store.write(() => {
    const r = unwrap(ctx, fn(settingsFor(ctx, op)));
    saveWafSettings(ctx.service.store, r.settings);
    return { result: r.result };
  });
}

export function previousWafRoutes(r: Router): void {
  const pkg = `${BASE}/packages/:package_id`;
  r.get(`${BASE}/packages`, (ctx) => list(ctx, (s) => listPackages(s, queryOf(ctx))), LEGACY);
  r.get(pkg, (ctx) => read(ctx, (s) => getPackage(s, ctx.params.package_id!)), LEGACY);
  r.patch(pkg, (ctx) => change(ctx, 'write', (s) => patchPackage(s, ctx.params.package_id!, bodyOf(ctx))), LEGACY);

  r.get(`${pkg}/groups`, (ctx) => list(ctx, (s) => listGroups(s, ctx.params.package_id!, queryOf(ctx))), LEGACY);
  r.get(`${pkg}/groups/:group_id`, (ctx) => read(ctx, (s) => getGroup(s, ctx.params.package_id!, ctx.params.group_id!)), LEGACY);
  r.patch(`${pkg}/groups/:group_id`, (ctx) => change(ctx, 'write', (s) => patchGroup(s, ctx.params.package_id!, ctx.params.group_id!, bodyOf(ctx))), LEGACY);

  r.get(`${pkg}/rules`, (ctx) => list(ctx, (s) => listRules(s, ctx.params.package_id!, queryOf(ctx))), LEGACY);
  r.get(`${pkg}/rules/:waf_rule_id`, (ctx) => read(ctx, (s) => getRule(s, ctx.params.package_id!, ctx.params.waf_rule_id!)), LEGACY);
  r.patch(`${pkg}/rules/:waf_rule_id`, (ctx) => change(ctx, 'write', (s) => patchRule(s, ctx.params.package_id!, ctx.params.waf_rule_id!, bodyOf(ctx))), LEGACY);

  const override = `${BASE}/overrides/:override_id`;
  r.get(`${BASE}/overrides`, (ctx) => list(ctx, (s) => ({ ok: true, ...listOverrides(s) })), LEGACY);
  r.post(`${BASE}/overrides`, (ctx) => change(ctx, 'override-write', (s) => createOverride(s, bodyOf(ctx), newId())), LEGACY);
  r.get(override, (ctx) => read(ctx, (s) => getOverride(s, ctx.params.override_id!)), LEGACY);
  r.put(override, (ctx) => change(ctx, 'override-write', (s) => updateOverride(s, ctx.params.override_id!, bodyOf(ctx))), LEGACY);
  r.delete(override, (ctx) => change(ctx, 'write', (s) => deleteOverride(s, ctx.params.override_id!)), LEGACY);
}

// --- Demo seed ---------------------------------------------------------------------------------

/** When the demo's migrated zone started and completed its migration (fixed, so tests can name it). */
export const DEMO_MIGRATED_CREATED = '2022-09-19T09:30:00.000000Z';
export const DEMO_MIGRATED_ON = '2022-09-19T09:45:00.000000Z';

const owaspSettings = (sensitivity: Sensitivity, action_mode: ActionMode) => ({ [OWASP_PACKAGE_ID]: { sensitivity, action_mode } });

/**
 * The previous WAF of the demo zones (issue 6's seed):
 * - pro.example.com: OWASP high + challenge; a page rule turning the WAF off for /wp-admin/*;
 * - business.example.com: OWASP medium + simulate; group and rule modes changed from their
 *   defaults (the config's `not_migrated` lists them);
 * - enterprise.example.com: OWASP low + block (validation mode allowed); a "Disable
 *   Security" page rule for /internal/* (its first firewall rule, seeded by the
 *   coordinator, bypasses the WAF: both become exceptions);
 * - overrides.example.com: two URI-based overrides (not eligible); OWASP never set ("Default");
 * - firewall.example.com: defaults (its 201 firewall rules make the check ask for support);
 * - migrated.example.com: was OWASP high + block; migrated (state complete), its managed
 *   entry point deployed as the migration config says.
 */
export const seedPreviousWaf: SeedStep = (store, zones) => {
  const id = (name: string) => zones.get(name)!;
  const settings = (name: string, s: Omit<ZoneWafSettings, 'zoneId' | 'enabled'>) => saveWafSettings(store, { zoneId: id(name), enabled: true, ...s });
  const pageRules = (name: string, rules: readonly PageRule[]) => store.run('UPDATE zones SET page_rules = ? WHERE id = ?', [toJson(rules), id(name)]);

  settings('pro.example.com', { packages: owaspSettings('high', 'challenge') });
  pageRules('pro.example.com', [{ id: seedId('page-rule:pro:wp-admin'), targets: ['pro.example.com/wp-admin/*'], waf: 'off' }]);

  settings('business.example.com', {
    packages: owaspSettings('medium', 'simulate'),
    groupModes: { [findGroupByName('Cloudflare WordPress')]: 'on', [findGroupByName('OWASP Trojan Detection')]: 'on' },
    ruleModes: { '100030': 'block', '973300': 'off' },
  });

  settings('enterprise.example.com', { packages: owaspSettings('low', 'block') });
  pageRules('enterprise.example.com', [{ id: seedId('page-rule:enterprise:internal'), targets: ['enterprise.example.com/internal/*'], disable_security: true }]);

  settings('overrides.example.com', {
    overrides: [
      {
        id: seedId('waf-override:overrides.example.com:1'),
        description: 'Enable Cloudflare Magento ruleset for shop.overrides.example.com',
        urls: ['shop.overrides.example.com/*'],
        priority: 1,
        paused: false,
        groups: { [MAGENTO_GROUP_ID]: 'default' },
        rules: {},
        rewrite_action: {},
      },
      {
        id: seedId('waf-override:overrides.example.com:2'),
        description: 'Simulate the SQLi tautology rule on the search API',
        urls: ['overrides.example.com/api/search*'],
        priority: 2,
        paused: false,
        groups: {},
        rules: { '100008': 'simulate' },
        rewrite_action: { default: 'simulate', block: 'challenge' },
      },
    ],
  });

  const migrated = id('migrated.example.com');
  const waf: ZoneWafSettings = { zoneId: migrated, enabled: true, packages: owaspSettings('high', 'block') };
  saveWafSettings(store, waf);
  saveMigrationRecord(store, { plan: 'business', waf }, { state: 'complete', created: DEMO_MIGRATED_CREATED, completedAt: DEMO_MIGRATED_ON });
  // What its migration deployed: the core's config for those settings (Cloudflare Managed
  // Ruleset + OWASP at PL2, threshold 40, block).
  const { config } = migrationConfig({ plan: 'business', waf }, defaultCatalog);
  putEntryPoint(store, 'zone', migrated, 'http_request_firewall_managed', config.rules as unknown as readonly RuleInput[]);
};

function findGroupByName(name: string): string {
  for (const p of PACKAGES) for (const g of p.groups) if (g.name === name) return g.id;
  throw new Error(`no previous-WAF group ${name}`);
}
