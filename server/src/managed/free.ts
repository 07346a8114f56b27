/**
 * The Free Managed Ruleset (id `77454fe2…`, the hosted "Cloudflare Free Managed Ruleset"'s
 * id): deployable on every plan. The hosted one is a small subset of the Cloudflare
 * Managed Ruleset for high-impact, widely exploited vulnerabilities; its rule list is not
 * public, so ours is the vendor ruleset's rules for the vulnerabilities below, chosen for
 * being mass-exploited remote code execution on common software. The rules keep the vendor
 * rules' refs, expressions, actions and categories, under ids of their own (`free:<ref>`):
 * an override or skip written for one ruleset never reaches the other.
 */
import { FREE_RULESET_ID, mintId } from '../rulesets/managedIds';
import type { ManagedRule, ManagedRuleset } from '../rulesets/catalog';
import { VENDOR_RULES, VENDOR_VERSIONS } from './vendor';

/** The vendor rules the Free Managed Ruleset carries, in evaluation order. */
export const FREE_RULE_REFS: readonly string[] = [
  // Apache Log4j (Log4Shell), CVE-2021-44228: URI, headers, body.
  'log4shell-uri',
  'log4shell-header',
  'log4shell-body',
  // Bash Shellshock, CVE-2014-6271.
  'shellshock-header',
  // Spring Framework (Spring4Shell), CVE-2022-22965.
  'spring4shell',
  // Apache Struts, Content-Type OGNL, CVE-2017-5638.
  'struts-content-type-ognl',
  // Atlassian Confluence OGNL injection, CVE-2022-26134.
  'confluence-ognl-path',
  // Drupal (Drupalgeddon2), CVE-2018-7600.
  'drupalgeddon2',
  // WordPress plugin WP File Manager, CVE-2020-25213.
  'wp-file-manager-upload',
];

const VERSION = '1';
/** The vendor ruleset's version it was taken from, and its date. */
const LAST_UPDATED = VENDOR_VERSIONS[VENDOR_VERSIONS.length - 1].last_updated;

function freeRule(ref: string): ManagedRule {
  const rule = VENDOR_RULES.find((r) => r.ref === ref);
  if (!rule) throw new Error(`free managed ruleset: no vendor rule with ref ${ref}`);
  return { ...rule, id: mintId(`free:${ref}`), version: VERSION, last_updated: LAST_UPDATED };
}

export const FREE_RULES: readonly ManagedRule[] = FREE_RULE_REFS.map(freeRule);

export const freeRuleset: ManagedRuleset = {
  id: FREE_RULESET_ID,
  name: 'Cloudflare Free Managed Ruleset',
  description:
    "Rulesmith's Free Managed Ruleset, under the hosted service's id: a small subset of the Cloudflare Managed Ruleset for high-impact, widely exploited vulnerabilities (Log4Shell, Shellshock, Spring4Shell, Apache Struts, Atlassian Confluence, Drupalgeddon2, WP File Manager), available on every plan.",
  kind: 'managed',
  phase: 'http_request_firewall_managed',
  versions: [{ version: VERSION, last_updated: LAST_UPDATED, rules: FREE_RULES }],
  plan: 'free',
};
