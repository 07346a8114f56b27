/**
 * Where each diagnostic code is documented: the Cloudflare documentation page about its
 * subject (fields, functions, operators, values of the Rules language; the Rulesets API
 * and managed-ruleset overrides for a ruleset's own problems). The editor links it from a
 * diagnostic's code, `rulesmith check --format sarif` gives it as each rule's help URI.
 */
const LANGUAGE_DOCS = 'https://developers.cloudflare.com/ruleset-engine/rules-language/';
const RULESETS_DOCS = 'https://developers.cloudflare.com/ruleset-engine/';

const PAGES = new Map<string, string>();
function pages(base: string, table: Record<string, readonly string[]>): void {
  for (const [page, codes] of Object.entries(table)) for (const c of codes) PAGES.set(c, base + page);
}
pages(LANGUAGE_DOCS, {
  'fields/': ['unknown-identifier', 'unknown-field', 'deprecated-field', 'managed-only', 'not-in-phase', 'plan-required', 'invalid-index', 'invalid-index-access', 'invalid-map-each', 'header-key-not-lowercase', 'method-not-uppercase', 'path-without-slash', 'never-matches'],
  'functions/': ['unknown-function', 'argument-count', 'argument-kind', 'argument-type', 'argument-value', 'replace-function-limit'],
  'operators/': ['operator-type-mismatch', 'expected-comparison-op', 'unknown-operator', 'ip-ordering', 'dynamic-comparison-disabled'],
  'values/': ['unterminated-string', 'invalid-escape', 'invalid-raw-string', 'invalid-integer', 'invalid-ip', 'invalid-hex-bytes', 'cidr-outside-set', 'incompatible-range-bounds', 'invalid-regex', 'invalid-wildcard', 'unknown-list', 'invalid-list-name'],
});
pages(RULESETS_DOCS, {
  'managed-rulesets/override-managed-ruleset/': [
    'unknown-managed-ruleset',
    'unknown-ruleset-version',
    'execute-phase-mismatch',
    'unknown-category',
    'unknown-rule-id',
    'misplaced-score-threshold',
    'misplaced-override-action',
    'invalid-override-action',
    'duplicate-override',
    'owasp-all-paranoia-levels',
  ],
  'rules-language/actions/': ['unknown-action', 'action-not-in-phase', 'invalid-action-parameters', 'action-parameters-required', 'logging-not-allowed'],
  'about/phases/': ['ratelimit-not-in-phase'],
});

const RULESET_CODES = new Set(['invalid-json', 'duplicate-key', 'wrong-type', 'missing-field', 'invalid-value', 'duplicate-id', 'duplicate-ref', 'duplicate-execute', 'missing-ref', 'missing-expression', 'execute-self', 'execute-target-unknown', 'execute-target-phase', 'no-expressions']);
/** Codes of problems in Terraform files (server/src/terraform/). */
const TERRAFORM_CODES = new Set(['invalid-hcl', 'interpolated-expression']);

/** The documentation page of a diagnostic code (a language code, a ruleset code, or any other). */
export function docsFor(code: string): string {
  if (TERRAFORM_CODES.has(code)) return 'https://developers.cloudflare.com/terraform/';
  return PAGES.get(code) ?? (RULESET_CODES.has(code) ? `${RULESETS_DOCS}rulesets-api/` : `${LANGUAGE_DOCS}expressions/`);
}
