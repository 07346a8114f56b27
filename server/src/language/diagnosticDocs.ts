/**
 * Where each code of the Rules language is documented: the Cloudflare documentation page
 * about its subject (fields, functions, operators, values; the expressions page for the
 * rest). The editor links it from an expression diagnostic's code, `rulesmith check
 * --format sarif` gives it as the help URI of an expression's code.
 *
 * Only the language's codes: the pages of a ruleset's or a Terraform file's own problems
 * are in rulesets/problemDescriptions.ts (`PROBLEM_DOCS`), and an adapter that links a code
 * of either kind asks that table first for a problem the ruleset or Terraform checks found
 * (`problemDocsFor`). `unknown-field` and `plan-required` are codes of both: here they are
 * the language's (a name that is not a field, a field or function above the plan).
 */
import type { DiagnosticCode } from './diagnostics';

const LANGUAGE_DOCS = 'https://developers.cloudflare.com/ruleset-engine/rules-language/';

const PAGES = new Map<string, string>();
function pages(table: Record<string, readonly DiagnosticCode[]>): void {
  for (const [page, codes] of Object.entries(table)) for (const c of codes) PAGES.set(c, LANGUAGE_DOCS + page);
}
pages({
  'fields/': ['unknown-identifier', 'unknown-field', 'deprecated-field', 'managed-only', 'not-in-phase', 'plan-required', 'ratelimit-restriction', 'invalid-index', 'invalid-index-access', 'invalid-map-each', 'header-key-not-lowercase', 'method-not-uppercase', 'path-without-slash', 'never-matches'],
  'functions/': ['unknown-function', 'argument-count', 'argument-kind', 'argument-type', 'argument-value', 'replace-function-limit'],
  'operators/': ['operator-type-mismatch', 'expected-comparison-op', 'unknown-operator', 'ip-ordering', 'dynamic-comparison-disabled'],
  'values/': ['unterminated-string', 'invalid-escape', 'invalid-raw-string', 'invalid-integer', 'invalid-ip', 'invalid-hex-bytes', 'cidr-outside-set', 'incompatible-range-bounds', 'invalid-regex', 'invalid-wildcard', 'unknown-list', 'invalid-list-name'],
});

/** The documentation page of a language code (the expressions page for any other code). */
export function languageDocsFor(code: string): string {
  return PAGES.get(code) ?? `${LANGUAGE_DOCS}expressions/`;
}
