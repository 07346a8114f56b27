/**
 * The previous version of WAF managed rules (rules-api §5, crs-and-managed-rules §4.5) as
 * data: its vocabulary, packages, rule groups and rules, the same for every zone. A zone's
 * settings over them are previousWafSettings.ts (and previousWafOverrides.ts).
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
 */
import { mintId } from '../rulesets/managedIds';

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

// --- The content ---------------------------------------------------------------------------

/** The rule flavours of rules-api §5.3. */
export type RuleKind = 'anomaly' | 'deny' | 'allow';

export interface RuleDef {
  readonly id: string;
  readonly description: string;
  readonly kind: RuleKind;
  /** Deny rules: the mode `default` stands for. */
  readonly defaultMode?: DenyDefaultMode;
  /**
   * CloudFlare package deny rules: the description of the rule of the Cloudflare Managed
   * Ruleset (managed/vendor.ts) that does its job, where it is not the same text — the same
   * CVE, or the same attack at the same place. The previous WAF's verdict applies this
   * rule's mode to it (previousWafVerdict.ts). Undefined: the rule of the same description.
   */
  readonly counterpart?: string;
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
const deny = (id: string, description: string, defaultMode: DenyDefaultMode = 'block', counterpart?: string): RuleDef => ({ id, description, kind: 'deny', defaultMode, ...(counterpart ? { counterpart } : {}) });
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
        deny('100000', 'SQLi - UNION SELECT - URI', 'block', 'SQLi - UNION SELECT'),
        deny('100001', 'XSS - Script Tag - URI'),
        deny('100003', 'Generic - Path Traversal - URI', 'block', 'Generic Rules - Path Traversal - URI Path'),
        deny('100005', 'Generic - Command Execution - Body', 'challenge', 'Generic Rules - Command Execution - Body'),
        deny('100008', 'SQLi - Tautology - URI'),
        deny('100015', 'Anomaly:URL:Query String - Multiple Slashes, Relative Paths, CR, LF or NULL', 'challenge'),
        deny('100016', 'Version Control - Information Disclosure', 'block', 'Generic Rules - Source Code Disclosure - .git'),
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
        deny('100020', 'WordPress - Broken Access Control - xmlrpc.php pingback', 'challenge', 'WordPress - Reflected DDoS and SSRF - XML-RPC pingback.ping'),
        deny('100021', 'WordPress:Plugin:WooCommerce - Unauthorized Administrator Access - CVE:CVE-2023-28121'),
        allow('100048', 'WordPress - Allow requests to the admin area from logged-in users'),
      ],
    },
    {
      id: gid('Cloudflare Drupal'),
      name: 'Cloudflare Drupal',
      description: 'Rules for Drupal sites.',
      defaultMode: 'off',
      rules: [deny('100006', 'Drupal - Code Injection - CVE:CVE-2018-7600', 'block', 'Drupal - Remote Code Execution - Drupalgeddon2 - CVE:CVE-2018-7600'), deny('100007', 'Drupal - Code Injection - CVE:CVE-2018-7602', 'block', 'Drupal - Remote Code Execution - Drupalgeddon3 - CVE:CVE-2018-7602')],
    },
    {
      id: gid('Cloudflare Joomla'),
      name: 'Cloudflare Joomla',
      description: 'Rules for Joomla sites.',
      defaultMode: 'off',
      rules: [deny('100009', 'Joomla - SQLi - CVE:CVE-2017-8917'), deny('100010', 'Joomla - Object Injection - CVE:CVE-2015-8562', 'block', 'Joomla - Remote Code Execution - CVE:CVE-2015-8562')],
    },
    {
      id: gid('Cloudflare PHP'),
      name: 'Cloudflare PHP',
      description: 'Rules for PHP applications.',
      defaultMode: 'off',
      rules: [deny('100011', 'PHP - Code Injection - php://input', 'block', 'PHP - Stream Wrapper Inclusion - php://'), deny('100012', 'PHP - Information Disclosure - phpinfo()', 'challenge')],
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

/** Every rule of a package with its priority (1-based position in the package). */
export function packageRules(pkg: PackageDef): { group: GroupDef; rule: RuleDef; priority: number }[] {
  let n = 0;
  return pkg.groups.flatMap((group) => group.rules.map((rule) => ({ group, rule, priority: ++n })));
}
