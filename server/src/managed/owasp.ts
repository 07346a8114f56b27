/**
 * The slot for the OWASP-based core ruleset (id `4814384a…`, the hosted "Cloudflare OWASP
 * Core Ruleset"'s id). Its detection rules will come from CRS 3.3.4, converted at build time
 * into `generated/owasp-rules.json` (a later issue); `owaspRuleset(rules)` wraps whatever
 * rules it is given into the ruleset, ending with the anomaly-score rule 949110.
 *
 * Until the conversion lands, `OWASP_SAMPLE_RULES` stands in: six synthetic score rules in
 * the OWASP style (two per paranoia level 1–3), written in plain Rules language, so the
 * engine, the paranoia/threshold preview and the editor can be built and tested now. They
 * are NOT CRS rules: only their descriptions borrow CRS ids and messages.
 */
import { mintId, OWASP_ANOMALY_RULE_ID, OWASP_ANOMALY_RULE_REF, OWASP_RULESET_ID } from './ids';
import type { ManagedRule, ManagedRuleset } from './types';

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
  // No paranoia-level tag: choosing a paranoia level must never switch off the deciding rule.
  categories: [],
  last_updated: OWASP_LAST_UPDATED,
};

/** The OWASP-based ruleset with `rules` (score rules) followed by 949110. */
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
  };
}

interface SampleSpec {
  readonly crsId: string;
  readonly message: string;
  readonly level: 1 | 2 | 3 | 4;
  readonly attack: string;
  readonly languageTags?: readonly string[];
  readonly severity: keyof typeof OWASP_SEVERITY_SCORES;
  readonly expression: string;
}

const ARGS = 'lower(url_decode(raw.http.request.uri.query, "r"))';
const BODY = 'lower(url_decode(http.request.body.raw, "r"))';

// STAND-IN until the CRS 3.3.4 conversion lands: synthetic approximations, not CRS logic.
const SAMPLES: readonly SampleSpec[] = [
  {
    crsId: '942100',
    message: 'SQL Injection Attack Detected via libinjection',
    level: 1,
    attack: 'attack-sqli',
    severity: 'critical',
    // A quote or digit closing a value, then a boolean operator and a comparison.
    expression: String.raw`${ARGS} matches r"['\x22\d]\s*(?:or|and)\s+['\x22]?\w+['\x22]?\s*(?:=|<|>|like)" or ${BODY} matches r"['\x22\d]\s*(?:or|and)\s+['\x22]?\w+['\x22]?\s*(?:=|<|>|like)"`,
  },
  {
    crsId: '941100',
    message: 'XSS Attack Detected via libinjection',
    level: 1,
    attack: 'attack-xss',
    severity: 'critical',
    expression: String.raw`${ARGS} matches r"<(?:script|svg|img|iframe|body)[\s/>]" or ${BODY} matches r"<(?:script|svg|img|iframe|body)[\s/>]"`,
  },
  {
    crsId: '942430',
    message: 'Restricted SQL Character Anomaly Detection (args): # of special characters exceeded (12)',
    level: 2,
    attack: 'attack-sqli',
    severity: 'warning',
    expression: String.raw`any(raw.http.request.uri.args.values[*] matches r"(?:[~!@#$%^&*()\-+={}\[\]|:;\x22'\x60<>].*){12}")`,
  },
  {
    crsId: '941320',
    message: 'Possible XSS Attack Detected - HTML Tag Handler',
    level: 2,
    attack: 'attack-xss',
    severity: 'critical',
    expression: String.raw`${ARGS} matches r"<(?:a|abbr|b|div|form|input|link|meta|object|span|style|table|td|video)\b[^>]*>"`,
  },
  {
    crsId: '942490',
    message: 'Detects classic SQL injection probings 3/3',
    level: 3,
    attack: 'attack-sqli',
    severity: 'critical',
    expression: String.raw`${ARGS} matches r"['\x22\x60]\s*(?:--|#|/\*)|['\x22\x60]{2,}"`,
  },
  {
    crsId: '941380',
    message: 'AngularJS client side template injection detected',
    level: 3,
    attack: 'attack-xss',
    severity: 'critical',
    expression: String.raw`${ARGS} matches r"\{\{.*?\}\}"`,
  },
];

function sampleRule(s: SampleSpec): ManagedRule {
  return {
    id: mintId(`owasp:${s.crsId}`),
    ref: s.crsId,
    version: OWASP_VERSION,
    description: `${s.crsId}: ${s.message}`,
    expression: s.expression,
    action: 'score',
    action_parameters: { increment: OWASP_SEVERITY_SCORES[s.severity] },
    enabled: true,
    categories: [`paranoia-level-${s.level}`, s.attack, ...(s.languageTags ?? []), 'platform-multi', 'language-multi'],
    last_updated: OWASP_LAST_UPDATED,
  };
}

/**
 * Six synthetic OWASP-style score rules (942100, 941100 at PL1; 942430, 941320 at PL2;
 * 942490, 941380 at PL3): a documented stand-in for the CRS 3.3.4 conversion.
 */
export const OWASP_SAMPLE_RULES: readonly ManagedRule[] = SAMPLES.map(sampleRule);
