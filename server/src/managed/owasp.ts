/**
 * The OWASP-based core ruleset (id `4814384a…`, the hosted "Cloudflare OWASP Core Ruleset"'s
 * id): the request-phase detection rules of CRS 3.3.4, converted at build time by
 * `scripts/crs/convert.ts` into `generated/owasp-rules.json` (one `score` rule per CRS rule,
 * described `"942100: SQL Injection Attack Detected via libinjection"`, tagged
 * `paranoia-level-N` and with the CRS tags, incremented by severity), followed by the
 * anomaly-score rule 949110. The generated files are loaded by `owaspCrs.ts` (with
 * `generated/owasp-unconverted.json`, the CRS detection rules left out and why); this module
 * holds no generated data, since the converter itself imports its constants.
 */
import { OWASP_ANOMALY_RULE_ID, OWASP_ANOMALY_RULE_REF, OWASP_RULESET_ID } from '../rulesets/managedIds';
import type { ManagedRule, ManagedRuleset } from '../rulesets/catalog';

/** The hosted ruleset's default threshold: "Medium", 40 and higher. */
export const OWASP_DEFAULT_THRESHOLD = 40;
/** Named thresholds (reference §4.2): High ≥ 25, Medium ≥ 40, Low ≥ 60. */
export const OWASP_THRESHOLDS = { high: 25, medium: 40, low: 60 } as const;
/** CRS severities as anomaly-score increments. */
export const OWASP_SEVERITY_SCORES = { critical: 5, error: 4, warning: 3, notice: 2 } as const;

export const OWASP_RULESET_NAME = 'Cloudflare OWASP Core Ruleset';
export const OWASP_VERSION = '1';
export const OWASP_LAST_UPDATED = '2024-07-15T10:00:00.000000Z';

/** `949110: Inbound Anomaly Score Exceeded`: acts when the request's total score reaches `score_threshold`. */
export const OWASP_ANOMALY_RULE: ManagedRule = {
  id: OWASP_ANOMALY_RULE_ID,
  ref: OWASP_ANOMALY_RULE_REF,
  version: OWASP_VERSION,
  description: '949110: Inbound Anomaly Score Exceeded',
  // Always "matches": the engine compares the accumulated score with the threshold.
  expression: 'true',
  action: 'block',
  enabled: true,
  score_threshold: OWASP_DEFAULT_THRESHOLD,
  // CRS 3.3.4's tags of 949110, as the converter makes categories of every other rule's tags
  // (the API shows at least one). No paranoia-level tag: choosing a paranoia level must
  // never switch off the deciding rule.
  categories: ['application-multi', 'language-multi', 'platform-multi', 'attack-generic'],
  last_updated: OWASP_LAST_UPDATED,
};

/**
 * The OWASP-based ruleset with `rules` (score rules) followed by 949110. The catalog passes
 * the converted CRS rules (`OWASP_CRS_RULES` of owaspCrs.ts); tests may pass others.
 */
export function owaspRuleset(rules: readonly ManagedRule[] = []): ManagedRuleset {
  return {
    id: OWASP_RULESET_ID,
    name: OWASP_RULESET_NAME,
    description:
      'The OWASP ModSecurity Core Rule Set 3.3.4, converted to the Rules language by Rulesmith: score rules tagged by paranoia level (paranoia-level-1 … paranoia-level-4) and attack class, and the anomaly-score rule 949110 that acts when the total reaches its score_threshold.',
    kind: 'managed',
    phase: 'http_request_firewall_managed',
    versions: [{ version: OWASP_VERSION, last_updated: OWASP_LAST_UPDATED, rules: [...rules.filter((r) => r.id !== OWASP_ANOMALY_RULE_ID), OWASP_ANOMALY_RULE] }],
    anomalyRuleId: OWASP_ANOMALY_RULE_ID,
    // The hosted service's entitlement: from Pro up.
    plan: 'pro',
  };
}

