/**
 * The previous version of WAF managed rules (rules-api §5, crs-and-managed-rules §4.5) as
 * data, a zone's settings over it, and the pure functions behind its API: packages,
 * rule groups, rules and URI-based overrides. The HTTP layer stores `ZoneWafSettings`,
 * calls these functions, and answers with what they return (an object, a page, or an
 * `ApiError`).
 *
 * The rules content is ours and modest: the service never published it. Two packages,
 * as every Pro/Business/Enterprise zone had:
 * - "CloudFlare" (traditional): groups named like the real ones ("Cloudflare Specials",
 *   "Cloudflare WordPress", …), numeric rule ids in the real style ("100015"), deny rules
 *   with `default_mode` and allow rules that are on|off;
 * - "OWASP ModSecurity Core Rule Set" (anomaly, CRS 2.x based): groups named after the
 *   CRS 2.x files, rule ids and messages of CRS 2.x rules (950001, 958000, 960015, …),
 *   each rule on|off. Its package id is the documented example id `a25a9a7e…`.
 * Ids are the same for every zone (as the real package and group ids were); the group id
 * `ea8687e5…` is the one the documented override example names for Magento.
 *
 * Settings store only what differs from the defaults, so an untouched zone is
 * `defaultWafSettings(zoneId)`; an OWASP package whose sensitivity was never set is the
 * migration table's "Default" row (the API shows it as `high`, the package default).
 */
import { mintId } from '../managed/ids';
import {
  apiError,
  couldNotRoute,
  fail,
  invalidValue,
  isRecord,
  MIGRATION_CODES,
  show,
  unknownFieldError,
  type ApiError,
  type Result,
} from './errors';

// --- Vocabulary --------------------------------------------------------------------------

export const SENSITIVITIES = ['high', 'medium', 'low', 'off'] as const;
export type Sensitivity = (typeof SENSITIVITIES)[number];
export const ACTION_MODES = ['simulate', 'block', 'challenge'] as const;
export type ActionMode = (typeof ACTION_MODES)[number];
/** Package defaults (rules-api §5.1). */
export const DEFAULT_SENSITIVITY: Sensitivity = 'high';
export const DEFAULT_ACTION_MODE: ActionMode = 'challenge';

export const GROUP_MODES = ['on', 'off'] as const;
export type GroupMode = (typeof GROUP_MODES)[number];
export const DENY_RULE_MODES = ['default', 'disable', 'simulate', 'block', 'challenge'] as const;
export const DENY_DEFAULT_MODES = ['disable', 'simulate', 'block', 'challenge'] as const;
export type DenyDefaultMode = (typeof DENY_DEFAULT_MODES)[number];
export type RuleMode = (typeof DENY_RULE_MODES)[number] | GroupMode;
/** Values in an override's `groups`, `rules` and `rewrite_action` (rules-api §5.4). */
export const OVERRIDE_VALUES = ['challenge', 'block', 'simulate', 'disable', 'default'] as const;
export type OverrideValue = (typeof OVERRIDE_VALUES)[number];
export const REWRITE_ACTION_KEYS = ['block', 'challenge', 'default', 'disable', 'simulate'] as const;
export const OVERRIDE_PRIORITY_MIN = -1_000_000_000;
export const OVERRIDE_PRIORITY_MAX = 1_000_000_000;
/** The `mode` filter of GET …/rules (rules-api §5.3) and the modes it stands for. */
export const RULE_MODE_FILTERS: Readonly<Record<string, DenyDefaultMode>> = { DIS: 'disable', CHL: 'challenge', BLK: 'block', SIM: 'simulate' };

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

// --- The content ---------------------------------------------------------------------------

/** The rule flavours of rules-api §5.3. */
export type RuleKind = 'anomaly' | 'deny' | 'allow';

export interface RuleDef {
  readonly id: string;
  readonly description: string;
  readonly kind: RuleKind;
  /** Deny rules: the mode `default` stands for. */
  readonly defaultMode?: DenyDefaultMode;
  /** Allow and anomaly rules: default on (true) unless false. */
  readonly defaultOn?: boolean;
}

export interface GroupDef {
  readonly id: string;
  readonly name: string;
  readonly description: string | null;
  readonly defaultMode: GroupMode;
  readonly rules: readonly RuleDef[];
}

export interface PackageDef {
  readonly id: string;
  readonly name: string;
  readonly description: string;
  readonly detection_mode: 'anomaly' | 'traditional';
  readonly groups: readonly GroupDef[];
}

export const OWASP_PACKAGE_ID = 'a25a9a7e9c00afc1fb2e0245519d725b';
export const CLOUDFLARE_PACKAGE_ID = mintId('previous-waf:package:CloudFlare');

const gid = (name: string) => mintId(`previous-waf:group:${name}`);
const deny = (id: string, description: string, defaultMode: DenyDefaultMode = 'block'): RuleDef => ({ id, description, kind: 'deny', defaultMode });
const allow = (id: string, description: string, defaultOn = true): RuleDef => ({ id, description, kind: 'allow', defaultOn });
const anomaly = (id: string, description: string, defaultOn = true): RuleDef => ({ id, description, kind: 'anomaly', defaultOn });

/** The magento group id of the documented override example (rules-api §5.4). */
export const MAGENTO_GROUP_ID = 'ea8687e59929c1fd05ba97574ad43f77';

export const CLOUDFLARE_PACKAGE: PackageDef = {
  id: CLOUDFLARE_PACKAGE_ID,
  name: 'CloudFlare',
  description: 'Rules written by Cloudflare for common attacks and for the vulnerabilities of popular applications.',
  detection_mode: 'traditional',
  groups: [
    {
      id: gid('Cloudflare Specials'),
      name: 'Cloudflare Specials',
      description: 'Cloudflare Specials: rules for common attacks, recommended on for every site.',
      defaultMode: 'on',
      rules: [
        deny('100000', 'SQLi - UNION SELECT - URI'),
        deny('100001', 'XSS - Script Tag - URI'),
        deny('100003', 'Generic - Path Traversal - URI'),
        deny('100005', 'Generic - Command Execution - Body', 'challenge'),
        deny('100008', 'SQLi - Tautology - URI'),
        deny('100015', 'Anomaly:URL:Query String - Multiple Slashes, Relative Paths, CR, LF or NULL', 'challenge'),
        deny('100016', 'Version Control - Information Disclosure'),
        deny('100030', 'Anomaly:Header:User-Agent - Missing', 'disable'),
        deny('100038', 'Information Disclosure - Common Files', 'simulate'),
        deny('100045', 'Apache Struts - Open Redirect - CVE:CVE-2013-2248', 'simulate'),
      ],
    },
    {
      id: gid('Cloudflare WordPress'),
      name: 'Cloudflare WordPress',
      description: 'Rules for WordPress sites.',
      defaultMode: 'off',
      rules: [
        deny('100020', 'WordPress - Broken Access Control - xmlrpc.php pingback', 'challenge'),
        deny('100021', 'WordPress:Plugin:WooCommerce - Unauthorized Administrator Access - CVE:CVE-2023-28121'),
        allow('100048', 'WordPress - Allow requests to the admin area from logged-in users'),
      ],
    },
    {
      id: gid('Cloudflare Drupal'),
      name: 'Cloudflare Drupal',
      description: 'Rules for Drupal sites.',
      defaultMode: 'off',
      rules: [deny('100006', 'Drupal - Code Injection - CVE:CVE-2018-7600'), deny('100007', 'Drupal - Code Injection - CVE:CVE-2018-7602')],
    },
    {
      id: gid('Cloudflare Joomla'),
      name: 'Cloudflare Joomla',
      description: 'Rules for Joomla sites.',
      defaultMode: 'off',
      rules: [deny('100009', 'Joomla - SQLi - CVE:CVE-2017-8917'), deny('100010', 'Joomla - Object Injection - CVE:CVE-2015-8562')],
    },
    {
      id: gid('Cloudflare PHP'),
      name: 'Cloudflare PHP',
      description: 'Rules for PHP applications.',
      defaultMode: 'off',
      rules: [deny('100011', 'PHP - Code Injection - php://input'), deny('100012', 'PHP - Information Disclosure - phpinfo()', 'challenge')],
    },
    {
      id: MAGENTO_GROUP_ID,
      name: 'Cloudflare Magento',
      description: 'Rules for Magento stores.',
      defaultMode: 'off',
      rules: [deny('100013', 'Magento - SQLi - CVE:CVE-2015-1397'), deny('100014', 'Magento - Remote Code Execution - CVE:CVE-2016-4010')],
    },
    {
      id: gid('Cloudflare Miscellaneous'),
      name: 'Cloudflare Miscellaneous',
      description: null,
      defaultMode: 'on',
      rules: [allow('100050', 'Allow known monitoring services to reach health-check paths', false), deny('100051', 'Anomaly:Method - Unusual HTTP method', 'simulate')],
    },
  ],
};

export const OWASP_PACKAGE: PackageDef = {
  id: OWASP_PACKAGE_ID,
  name: 'OWASP ModSecurity Core Rule Set',
  description: 'Covers OWASP Top 10 vulnerabilities, and more.',
  detection_mode: 'anomaly',
  groups: [
    {
      id: gid('OWASP Protocol Anomalies'),
      name: 'OWASP Protocol Anomalies',
      description: 'Requests that do not follow the HTTP protocol as common clients do.',
      defaultMode: 'on',
      rules: [
        anomaly('960008', 'Request Missing a Host Header'),
        anomaly('960009', 'Request Missing a User Agent Header'),
        anomaly('960015', 'Request Missing an Accept Header'),
      ],
    },
    {
      id: gid('OWASP Protocol Violations'),
      name: 'OWASP Protocol Violations',
      description: 'Requests that violate the HTTP protocol.',
      defaultMode: 'on',
      rules: [anomaly('960911', 'Invalid HTTP Request Line'), anomaly('960000', 'Attempted multipart/form-data bypass'), anomaly('960012', 'POST request missing Content-Length Header')],
    },
    {
      id: gid('OWASP Bad Robots'),
      name: 'OWASP Bad Robots',
      description: 'Security scanners and rogue crawlers.',
      defaultMode: 'on',
      rules: [anomaly('990002', 'Request Indicates a Security Scanner Scanned the Site'), anomaly('990012', 'Rogue web site crawler')],
    },
    {
      id: gid('OWASP Generic Attacks'),
      name: 'OWASP Generic Attacks',
      description: 'Command injection, remote file access and inclusion, session fixation.',
      defaultMode: 'on',
      rules: [
        anomaly('950907', 'System Command Injection'),
        anomaly('950005', 'Remote File Access Attempt'),
        anomaly('950120', 'Possible Remote File Inclusion (RFI) Attack: Off-Domain Reference/Link'),
        anomaly('950009', 'Possible Session Fixation Attack: SessionID Parameter Name with No Referer'),
      ],
    },
    {
      id: gid('OWASP SQL Injection Attacks'),
      name: 'OWASP SQL Injection Attacks',
      description: 'SQL injection.',
      defaultMode: 'on',
      rules: [
        anomaly('950001', 'SQL Injection Attack'),
        anomaly('959070', 'SQL Injection Attack'),
        anomaly('981242', 'Detects classic SQL injection probings 1/2'),
        anomaly('981318', 'SQL Injection Attack: Common Injection Testing Detected'),
      ],
    },
    {
      id: gid('OWASP XSS Attacks'),
      name: 'OWASP XSS Attacks',
      description: 'Cross-site scripting.',
      defaultMode: 'on',
      rules: [
        anomaly('958000', 'Cross-site Scripting (XSS) Attack'),
        anomaly('973300', 'Possible XSS Attack Detected - HTML Tag Handler'),
        anomaly('973336', 'XSS Filter - Category 1: Script Tag Vector'),
      ],
    },
    {
      id: gid('OWASP Uri XSS Attacks'),
      name: 'OWASP Uri XSS Attacks',
      description: 'Cross-site scripting in the URI.',
      defaultMode: 'on',
      rules: [anomaly('973337', 'XSS Filter - Category 2: Event Handler Vector'), anomaly('973338', 'XSS Filter - Category 3: Javascript URI Vector', false)],
    },
    {
      id: gid('OWASP Trojan Detection'),
      name: 'OWASP Trojan Detection',
      description: null,
      defaultMode: 'off',
      rules: [anomaly('950110', 'Backdoor access')],
    },
  ],
};

/** Every package a zone on a paid plan has, in list order. */
export const PACKAGES: readonly PackageDef[] = [CLOUDFLARE_PACKAGE, OWASP_PACKAGE];

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

// --- Lookups ---------------------------------------------------------------------------------

export function findPackageDef(id: string): PackageDef | undefined {
  return PACKAGES.find((p) => p.id === id.toLowerCase());
}

export function findGroupDef(id: string): { pkg: PackageDef; group: GroupDef } | undefined {
  for (const pkg of PACKAGES) for (const group of pkg.groups) if (group.id === id.toLowerCase()) return { pkg, group };
  return undefined;
}

export function findRuleDef(id: string): { pkg: PackageDef; group: GroupDef; rule: RuleDef } | undefined {
  for (const pkg of PACKAGES) for (const group of pkg.groups) for (const rule of group.rules) if (rule.id === id) return { pkg, group, rule };
  return undefined;
}

export function allowedModes(rule: RuleDef): readonly RuleMode[] {
  return rule.kind === 'deny' ? DENY_RULE_MODES : GROUP_MODES;
}

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

/** Every rule of a package with its priority (1-based position in the package). */
function packageRules(pkg: PackageDef): { group: GroupDef; rule: RuleDef; priority: number }[] {
  let n = 0;
  return pkg.groups.flatMap((group) => group.rules.map((rule) => ({ group, rule, priority: ++n })));
}

// --- Pagination and list queries ---------------------------------------------------------------

export interface PageInfo {
  readonly page: number;
  readonly per_page: number;
  readonly count: number;
  readonly total_count: number;
  readonly total_pages: number;
}

export interface Page<T> {
  readonly result: readonly T[];
  readonly result_info: PageInfo;
}

/** Query parameters as strings (what a URL gives), all optional. */
export type Query = Readonly<Record<string, string | undefined>>;

export const PER_PAGE_MIN = 5;
export const PER_PAGE_MAX = 100;

/**
 * Page-based pagination (rules-api §1.2): `page` ≥ 1 (default 1), `per_page` 5–100
 * (default `defaultPerPage`). A page past the end is `[]` with status 200 — the SDK's
 * iterator stops on the first empty page.
 */
export function paginate<T>(items: readonly T[], query: Query, defaultPerPage = 50): Result<Page<T>> {
  const page = intParam(query.page, 'page', 1, 1, Number.MAX_SAFE_INTEGER, 'a page number is an integer of 1 or more');
  if (!page.ok) return page;
  const perPage = intParam(query.per_page, 'per_page', defaultPerPage, PER_PAGE_MIN, PER_PAGE_MAX, `per_page is an integer from ${PER_PAGE_MIN} to ${PER_PAGE_MAX}`);
  if (!perPage.ok) return perPage;
  const start = (page.value - 1) * perPage.value;
  const result = items.slice(start, start + perPage.value);
  return {
    ok: true,
    result,
    result_info: { page: page.value, per_page: perPage.value, count: result.length, total_count: items.length, total_pages: Math.ceil(items.length / perPage.value) },
  };
}

function queryError(message: string): ApiError {
  return apiError(MIGRATION_CODES.invalidQuery, message, 400);
}

function intParam(raw: string | undefined, name: string, dflt: number, min: number, max: number, rule: string): Result<{ value: number }> {
  if (raw === undefined || raw === '') return { ok: true, value: dflt };
  const n = /^-?\d+$/.test(raw.trim()) ? Number(raw.trim()) : NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max) return fail(queryError(`${show(raw)} is not a valid value for ${name} because ${rule}`));
  return { ok: true, value: n };
}

function enumParam<T extends string>(raw: string | undefined, name: string, allowed: readonly T[]): Result<{ value?: T }> {
  if (raw === undefined || raw === '') return { ok: true };
  if ((allowed as readonly string[]).includes(raw)) return { ok: true, value: raw as T };
  return fail(queryError(`${show(raw)} is not a valid value for ${name} because it must be one of: ${allowed.join(', ')}`));
}

/**
 * Filters, then orders, then paginates. `filters` are predicates for the query filters
 * that are present; `match=all` (default) keeps items that pass every one, `match=any`
 * items that pass one of them.
 */
function listQuery<T>(
  items: readonly T[],
  query: Query,
  filters: readonly ((x: T) => boolean)[],
  orders: Readonly<Record<string, (a: T, b: T) => number>>,
): Result<Page<T>> {
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
  return paginate(out, query);
}

const byString = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
const contains = (haystack: string | null, needle: string) => (haystack ?? '').toLowerCase().includes(needle.toLowerCase());

// --- Packages ----------------------------------------------------------------------------------

const packagesPath = (s: ZoneWafSettings) => `/zones/${s.zoneId}/firewall/waf/packages`;

/** GET /zones/{zone_id}/firewall/waf/packages — `name`, `order=name`, `direction`, `match`, `page`, `per_page`. */
export function listPackages(settings: ZoneWafSettings, query: Query = {}): Result<Page<WafPackage>> {
  const all = PACKAGES.map((p) => packageObject(settings, p));
  const filters = query.name ? [(p: WafPackage) => contains(p.name, query.name!)] : [];
  return listQuery(all, query, filters, { name: (a, b) => byString(a.name, b.name) });
}

export function getPackage(settings: ZoneWafSettings, packageId: string): Result<{ result: WafPackage }> {
  const pkg = findPackageDef(packageId);
  if (!pkg) return fail(couldNotRoute(`${packagesPath(settings)}/${packageId}`));
  return { ok: true, result: packageObject(settings, pkg) };
}

/** PATCH …/packages/{id} `{sensitivity?, action_mode?}` — anomaly packages only. */
export function patchPackage(settings: ZoneWafSettings, packageId: string, body: unknown): Result<{ settings: ZoneWafSettings; result: WafPackage }> {
  const pkg = findPackageDef(packageId);
  if (!pkg) return fail(couldNotRoute(`${packagesPath(settings)}/${packageId}`));
  if (!isRecord(body)) return fail(apiError(MIGRATION_CODES.invalidValue, 'the request body must be a JSON object such as {"sensitivity": "medium", "action_mode": "block"}', 400, ''));
  const unknown = unknownFieldError(body, ['sensitivity', 'action_mode'], 'a package accepts "sensitivity" and "action_mode"');
  if (unknown) return fail(unknown);
  if (pkg.detection_mode !== 'anomaly') {
    return fail(
      apiError(
        MIGRATION_CODES.invalidValue,
        `package ${pkg.id} ("${pkg.name}") uses the traditional detection mode: sensitivity and action_mode can only be set on an anomaly package ("${OWASP_PACKAGE.name}", ${OWASP_PACKAGE.id}); change its rule groups and rules instead`,
        400,
        body.sensitivity !== undefined ? '/sensitivity' : '/action_mode',
      ),
    );
  }
  if (body.sensitivity === undefined && body.action_mode === undefined) {
    return fail(apiError(MIGRATION_CODES.missingField, `nothing to change: send "sensitivity" (${SENSITIVITIES.join('|')}) and/or "action_mode" (${ACTION_MODES.join('|')})`, 400, ''));
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

/** GET …/packages/{id}/groups — `mode`, `name`, `rules_count`, `order=mode|rules_count`, `direction`, `match`, `page`, `per_page`. */
export function listGroups(settings: ZoneWafSettings, packageId: string, query: Query = {}): Result<Page<WafGroup>> {
  const pkg = findPackageDef(packageId);
  if (!pkg) return fail(couldNotRoute(`${packagesPath(settings)}/${packageId}/groups`));
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
  if (!pkg) return fail(couldNotRoute(`${packagesPath(settings)}/${packageId}/groups/${groupId}`));
  const group = pkg.groups.find((g) => g.id === groupId.toLowerCase());
  if (!group) return fail(couldNotRoute(`${packagesPath(settings)}/${packageId}/groups/${groupId}`));
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
  if (!isRecord(body)) return fail(apiError(MIGRATION_CODES.invalidValue, 'the request body must be a JSON object such as {"mode": "on"}', 400, ''));
  const unknown = unknownFieldError(body, ['mode'], 'a rule group accepts only "mode"');
  if (unknown) return fail(unknown);
  if (body.mode === undefined) return fail(apiError(MIGRATION_CODES.missingField, 'mode is required: one of on, off', 400, '/mode'));
  if (!(GROUP_MODES as readonly unknown[]).includes(body.mode)) return fail(invalidValue('mode', body.mode, `it must be one of the group's allowed_modes: ${GROUP_MODES.join(', ')}`));
  const next: ZoneWafSettings = { ...settings, groupModes: { ...settings.groupModes, [g.group.id]: body.mode as GroupMode } };
  return { ok: true, settings: next, result: groupObject(next, g.pkg, g.group) };
}

// --- Rules -------------------------------------------------------------------------------------

/**
 * GET …/packages/{id}/rules — `mode` (DIS|CHL|BLK|SIM, also a mode's full name or on|off),
 * `group_id`, `description` (case-insensitive substring), `priority` (exact),
 * `order=priority|group_id|description`, `direction`, `match`, `page`, `per_page`.
 * A `mode` filter matches what the rule does: a deny rule in `default` matches its default_mode.
 */
export function listRules(settings: ZoneWafSettings, packageId: string, query: Query = {}): Result<Page<WafRule>> {
  const pkg = findPackageDef(packageId);
  if (!pkg) return fail(couldNotRoute(`${packagesPath(settings)}/${packageId}/rules`));
  const filters: ((r: { rule: RuleDef; obj: WafRule }) => boolean)[] = [];
  if (query.mode !== undefined && query.mode !== '') {
    const wanted = RULE_MODE_FILTERS[query.mode.toUpperCase()] ?? query.mode.toLowerCase();
    const known = [...Object.keys(RULE_MODE_FILTERS), ...DENY_RULE_MODES, ...GROUP_MODES];
    if (!known.includes(query.mode.toUpperCase()) && !known.includes(wanted)) {
      return fail(queryError(`${show(query.mode)} is not a valid value for mode because it must be one of: DIS, CHL, BLK, SIM (or a mode: ${[...DENY_RULE_MODES, ...GROUP_MODES].join(', ')})`));
    }
    filters.push(({ rule, obj }) => obj.mode === wanted || effectiveRuleMode(settings, rule) === wanted);
  }
  if (query.group_id) filters.push(({ obj }) => obj.group.id === query.group_id!.toLowerCase());
  if (query.description) filters.push(({ obj }) => contains(obj.description, query.description!));
  if (query.priority) filters.push(({ obj }) => obj.priority === query.priority);
  const items = packageRules(pkg).map(({ group, rule, priority }) => ({ rule, obj: ruleObject(settings, pkg, group, rule, priority) }));
  const page = listQuery(items, query, filters, {
    priority: (a, b) => Number(a.obj.priority) - Number(b.obj.priority),
    group_id: (a, b) => byString(a.obj.group.id, b.obj.group.id),
    description: (a, b) => byString(a.obj.description, b.obj.description),
  });
  if (!page.ok) return page;
  return { ok: true, result: page.result.map((x) => x.obj), result_info: page.result_info };
}

function ruleIn(settings: ZoneWafSettings, packageId: string, ruleId: string): Result<{ pkg: PackageDef; group: GroupDef; rule: RuleDef; priority: number }> {
  const pkg = findPackageDef(packageId);
  const found = pkg && packageRules(pkg).find((r) => r.rule.id === ruleId);
  if (!pkg || !found) return fail(couldNotRoute(`${packagesPath(settings)}/${packageId}/rules/${ruleId}`));
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
  if (!isRecord(body)) return fail(apiError(MIGRATION_CODES.invalidValue, 'the request body must be a JSON object such as {"mode": "block"}', 400, ''));
  const unknown = unknownFieldError(body, ['mode'], 'a rule accepts only "mode"');
  if (unknown) return fail(unknown);
  const allowed = allowedModes(r.rule);
  if (body.mode === undefined) return fail(apiError(MIGRATION_CODES.missingField, `mode is required: one of the rule's allowed_modes: ${allowed.join(', ')}`, 400, '/mode'));
  if (!(allowed as readonly unknown[]).includes(body.mode)) {
    const flavour = r.rule.kind === 'deny' ? 'a traditional deny rule' : r.rule.kind === 'allow' ? 'a traditional allow rule' : 'an anomaly rule';
    return fail(invalidValue('mode', body.mode, `rule ${r.rule.id} is ${flavour}: its allowed_modes are ${allowed.join(', ')}`));
  }
  const next: ZoneWafSettings = { ...settings, ruleModes: { ...settings.ruleModes, [r.rule.id]: body.mode as RuleMode } };
  return { ok: true, settings: next, result: ruleObject(next, r.pkg, r.group, r.rule, r.priority) };
}

// --- URI-based overrides -------------------------------------------------------------------------

const overridesPath = (s: ZoneWafSettings) => `/zones/${s.zoneId}/firewall/waf/overrides`;
const OVERRIDE_FIELDS = ['id', 'description', 'urls', 'priority', 'paused', 'groups', 'rules', 'rewrite_action'] as const;

/** GET /zones/{zone_id}/firewall/waf/overrides — `page`, `per_page` (5–100, default 50); by priority, lowest first. */
export function listOverrides(settings: ZoneWafSettings, query: Query = {}): Result<Page<UriOverride>> {
  const sorted = (settings.overrides ?? []).map((o, i) => ({ o, i })).sort((a, b) => a.o.priority - b.o.priority || a.i - b.i).map((e) => e.o);
  return paginate(sorted, query);
}

export function getOverride(settings: ZoneWafSettings, id: string): Result<{ result: UriOverride }> {
  const o = (settings.overrides ?? []).find((x) => x.id === id);
  if (!o) return fail(couldNotRoute(`${overridesPath(settings)}/${id}`));
  return { ok: true, result: o };
}

/**
 * Validates an override body. `urls` is always required; on PUT (`replace`) `rules` and
 * `rewrite_action` are required too and `id`, when sent, must match. Keys of `groups` must
 * be group ids and keys of `rules` rule ids of the zone's packages.
 */
export function validateOverrideBody(body: unknown, mode: 'create' | 'replace', id?: string): Result<{ value: Omit<UriOverride, 'id'> }> {
  if (!isRecord(body)) return fail(apiError(MIGRATION_CODES.invalidValue, 'the request body must be a JSON object with "urls" (required), and "rules", "groups", "rewrite_action", "priority", "paused", "description"', 400, ''));
  const unknown = unknownFieldError(body, OVERRIDE_FIELDS, `an override accepts ${OVERRIDE_FIELDS.join(', ')}`);
  if (unknown) return fail(unknown);
  if (mode === 'replace' && body.id !== undefined && body.id !== id) return fail(invalidValue('id', body.id, `it must be the id in the URL (${id})`));
  if (mode === 'create' && body.id !== undefined) return fail(invalidValue('id', body.id, 'the id of a new override is assigned by the service'));
  const required = mode === 'replace' ? (['urls', 'rules', 'rewrite_action'] as const) : (['urls'] as const);
  for (const f of required) {
    if (body[f] === undefined) return fail(apiError(MIGRATION_CODES.missingField, `${f} is required${mode === 'replace' ? ' when replacing an override (PUT needs urls, rules and rewrite_action)' : ': a list of URL patterns such as ["shop.example.com/*"]'}`, 400, `/${f}`));
  }
  const urls = body.urls;
  if (!Array.isArray(urls) || urls.length === 0) return fail(invalidValue('urls', urls, 'it must be a non-empty list of URL patterns such as ["shop.example.com/*"]'));
  for (let i = 0; i < urls.length; i++) {
    if (typeof urls[i] !== 'string' || (urls[i] as string).trim() === '') return fail(invalidValue('urls', urls[i], 'every URL pattern must be a non-empty string such as "shop.example.com/*"', `/urls/${i}`));
  }
  if (body.description !== undefined && body.description !== null) {
    if (typeof body.description !== 'string' || body.description.length > 1024) return fail(invalidValue('description', body.description, 'it must be a string of at most 1024 characters (or null)'));
  }
  if (body.priority !== undefined && (typeof body.priority !== 'number' || !Number.isInteger(body.priority) || body.priority < OVERRIDE_PRIORITY_MIN || body.priority > OVERRIDE_PRIORITY_MAX)) {
    return fail(invalidValue('priority', body.priority, `it must be an integer from ${OVERRIDE_PRIORITY_MIN} to ${OVERRIDE_PRIORITY_MAX} (lower runs first)`));
  }
  if (body.paused !== undefined && typeof body.paused !== 'boolean') return fail(invalidValue('paused', body.paused, 'it must be true or false'));
  const maps: Record<string, Record<string, OverrideValue>> = {};
  for (const field of ['groups', 'rules', 'rewrite_action'] as const) {
    const v = body[field];
    if (v === undefined) {
      maps[field] = {};
      continue;
    }
    if (!isRecord(v)) return fail(invalidValue(field, v, `it must be an object mapping ${field === 'groups' ? 'group ids' : field === 'rules' ? 'rule ids' : `actions (${REWRITE_ACTION_KEYS.join(', ')})`} to one of: ${OVERRIDE_VALUES.join(', ')}`));
    for (const [k, val] of Object.entries(v)) {
      const pointer = `/${field}/${k.replace(/~/g, '~0').replace(/\//g, '~1')}`;
      if (field === 'groups' && !findGroupDef(k)) return fail(invalidValue('groups', k, 'it is not the id of a rule group of this zone\'s WAF packages', pointer));
      if (field === 'rules' && !findRuleDef(k)) return fail(invalidValue('rules', k, 'it is not the id of a rule of this zone\'s WAF packages', pointer));
      if (field === 'rewrite_action' && !(REWRITE_ACTION_KEYS as readonly string[]).includes(k)) {
        return fail(invalidValue('rewrite_action', k, `its keys must be actions: ${REWRITE_ACTION_KEYS.join(', ')}`, pointer));
      }
      if (!(OVERRIDE_VALUES as readonly unknown[]).includes(val)) return fail(invalidValue(field, val, `the value for ${k} must be one of: ${OVERRIDE_VALUES.join(', ')}`, pointer));
    }
    maps[field] = v as Record<string, OverrideValue>;
  }
  return {
    ok: true,
    value: {
      description: (body.description as string | null | undefined) ?? null,
      urls: urls as string[],
      priority: (body.priority as number | undefined) ?? 1,
      paused: (body.paused as boolean | undefined) ?? false,
      groups: maps.groups,
      rules: maps.rules,
      rewrite_action: maps.rewrite_action,
    },
  };
}

/** POST /firewall/waf/overrides; `id` is minted by the caller (32 hex). */
export function createOverride(settings: ZoneWafSettings, body: unknown, id: string): Result<{ settings: ZoneWafSettings; result: UriOverride }> {
  const v = validateOverrideBody(body, 'create');
  if (!v.ok) return v;
  const o: UriOverride = { id, ...v.value };
  return { ok: true, settings: { ...settings, overrides: [...(settings.overrides ?? []), o] }, result: o };
}

/** PUT /firewall/waf/overrides/{id}: replaces the override (omitted optional fields reset). */
export function updateOverride(settings: ZoneWafSettings, id: string, body: unknown): Result<{ settings: ZoneWafSettings; result: UriOverride }> {
  const existing = getOverride(settings, id);
  if (!existing.ok) return existing;
  const v = validateOverrideBody(body, 'replace', id);
  if (!v.ok) return v;
  const o: UriOverride = { id, ...v.value };
  return { ok: true, settings: { ...settings, overrides: (settings.overrides ?? []).map((x) => (x.id === id ? o : x)) }, result: o };
}

/** DELETE /firewall/waf/overrides/{id} → `{id}`. */
export function deleteOverride(settings: ZoneWafSettings, id: string): Result<{ settings: ZoneWafSettings; result: { id: string } }> {
  const existing = getOverride(settings, id);
  if (!existing.ok) return existing;
  return { ok: true, settings: { ...settings, overrides: (settings.overrides ?? []).filter((x) => x.id !== id) }, result: { id } };
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
  if (!isRecord(body)) return fail(apiError(MIGRATION_CODES.invalidValue, 'the request body must be a JSON object such as {"value": "on"}', 400, ''));
  const unknown = unknownFieldError(body, ['value'], 'the waf setting accepts only "value"');
  if (unknown) return fail(unknown);
  if (body.value !== 'on' && body.value !== 'off') return fail(invalidValue('value', body.value, 'it must be on or off'));
  const next: ZoneWafSettings = { ...settings, enabled: body.value === 'on' };
  return { ok: true, settings: next, result: wafZoneSetting(next) };
}
