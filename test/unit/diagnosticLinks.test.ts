// The documentation link of every ruleset and Terraform code, and of some language codes, as
// the user sees it: the help URI of its rule in `check --format sarif`, and the link of a
// diagnostic's code in the editor (ruleset JSON, `.tf` files, expressions), the same for a
// code everywhere. A code the language and the ruleset validator share (`unknown-field`,
// `plan-required`) links by what found it: the language's page for an expression's
// problem, the ruleset's for the ruleset's own.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { TextDocument } from 'vscode-languageserver-textdocument';
import type { Finding } from '../../server/src/cli/finding';
import { sarifLog } from '../../server/src/cli/sarif';
import type { Diagnostic } from '../../server/src/language/diagnostics';
import { toLspDiagnostic } from '../../server/src/lsp/diagnostics';
import { DocumentStore, type Analysed } from '../../server/src/lsp/documents';
import { toRulesetDiagnostic } from '../../server/src/lsp/rulesetDiagnostics';
import { DEFAULT_SETTINGS } from '../../server/src/lsp/settings';
import { terraformDiagnostics } from '../../server/src/lsp/terraform';
import { languageDocsFor } from '../../server/src/language/diagnosticDocs';
import { PROBLEM_CODES, PROBLEM_DOCS, problemDocsFor } from '../../server/src/rulesets/problemDescriptions';
import type { RulesetProblem } from '../../server/src/rulesets/validate';

const CF = 'https://developers.cloudflare.com/';
const LANGUAGE = `${CF}ruleset-engine/rules-language/`;

/**
 * Each ruleset and Terraform code's link, found by the ruleset or Terraform checks, in
 * PROBLEM_CODES' order: the same in the editor (ruleset JSON, `.tf`) and in SARIF, from one
 * table (rulesets/problemDescriptions.ts).
 */
const RULESET_LINKS: Readonly<Record<string, string>> = {
  'invalid-json': `${CF}ruleset-engine/rulesets-api/`,
  'duplicate-key': `${CF}ruleset-engine/rulesets-api/`,
  'wrong-type': `${CF}ruleset-engine/rulesets-api/json-object/`,
  'unknown-field': `${CF}ruleset-engine/rulesets-api/json-object/`,
  'missing-field': `${CF}ruleset-engine/rulesets-api/json-object/`,
  'invalid-value': `${CF}ruleset-engine/rulesets-api/json-object/`,
  'unknown-action': `${LANGUAGE}actions/`,
  'action-not-in-phase': `${LANGUAGE}actions/`,
  'plan-required': `${CF}ruleset-engine/rulesets-api/json-object/`,
  'invalid-action-parameters': `${LANGUAGE}actions/`,
  'logging-not-allowed': `${CF}waf/custom-rules/skip/options/`,
  'ratelimit-not-in-phase': `${CF}waf/rate-limiting-rules/`,
  'unknown-managed-ruleset': `${CF}waf/managed-rules/`,
  'unknown-ruleset-version': `${CF}ruleset-engine/managed-rulesets/deploy-managed-ruleset/`,
  'execute-phase-mismatch': `${CF}ruleset-engine/managed-rulesets/deploy-managed-ruleset/`,
  'unknown-category': `${CF}ruleset-engine/managed-rulesets/override-managed-ruleset/`,
  'unknown-rule-id': `${CF}ruleset-engine/managed-rulesets/override-managed-ruleset/`,
  'misplaced-score-threshold': `${CF}waf/managed-rules/reference/owasp-core-ruleset/`,
  'misplaced-override-action': `${CF}waf/managed-rules/reference/owasp-core-ruleset/`,
  'invalid-override-action': `${CF}ruleset-engine/managed-rulesets/override-managed-ruleset/`,
  'duplicate-override': `${CF}ruleset-engine/managed-rulesets/override-managed-ruleset/`,
  'duplicate-id': `${CF}ruleset-engine/rulesets-api/json-object/`,
  'duplicate-ref': `${CF}ruleset-engine/rulesets-api/json-object/`,
  'duplicate-execute': `${CF}ruleset-engine/managed-rulesets/deploy-managed-ruleset/`,
  'owasp-all-paranoia-levels': `${CF}waf/managed-rules/reference/owasp-core-ruleset/concepts/`,
  'missing-ref': `${CF}ruleset-engine/rulesets-api/json-object/`,
  'missing-expression': `${CF}ruleset-engine/rulesets-api/json-object/`,
  'action-parameters-required': `${LANGUAGE}actions/`,
  'execute-self': `${CF}ruleset-engine/rulesets-api/`,
  'execute-target-unknown': `${CF}ruleset-engine/rulesets-api/`,
  'execute-target-phase': `${CF}ruleset-engine/rulesets-api/`,
  'invalid-hcl': `${CF}terraform/`,
  'interpolated-expression': `${CF}terraform/`,
  'no-expressions': `${CF}ruleset-engine/rulesets-api/`,
};

/** Some language codes' links, found in an expression. */
const LANGUAGE_LINKS: Readonly<Record<string, string>> = {
  'unknown-identifier': `${LANGUAGE}fields/`,
  'unknown-field': `${LANGUAGE}fields/`,
  'plan-required': `${LANGUAGE}fields/`,
  'argument-count': `${LANGUAGE}functions/`,
  'ip-ordering': `${LANGUAGE}operators/`,
  'invalid-ip': `${LANGUAGE}values/`,
  'syntax-error': `${LANGUAGE}expressions/`,
  'expression-too-long': `${LANGUAGE}expressions/`,
};

const at = (line: number, character: number) => ({ line, character });
function finding(file: string, code: string, origin: Finding['origin']): Finding {
  return { file, rule: null, range: { start: at(0, 0), end: at(0, 1) }, severity: 'error', code, origin, message: code };
}

/** The help URI of each rule of a SARIF log made of `findings`, by code (a `ruleset/` rule id by its code). */
function helpUris(findings: readonly Finding[]): Record<string, string> {
  const log = sarifLog(findings, '1.0.0', '/repo') as { runs: { tool: { driver: { rules: { id: string; helpUri: string }[] } } }[] };
  return Object.fromEntries(log.runs[0].tool.driver.rules.map((r) => [r.id.replace(/^ruleset\//, ''), r.helpUri]));
}

const TERRAFORM_OWN = new Set(['invalid-hcl', 'interpolated-expression']);

test('the pinned table covers every ruleset and Terraform code, in the table order, and is the table', () => {
  assert.deepEqual(Object.keys(RULESET_LINKS), [...PROBLEM_CODES]);
  assert.deepEqual(PROBLEM_DOCS, RULESET_LINKS);
});

test('a code of both the language and the ruleset checks links by what found it', () => {
  for (const code of ['unknown-field', 'plan-required']) {
    assert.equal(problemDocsFor(code, 'ruleset'), RULESET_LINKS[code], code);
    assert.equal(problemDocsFor(code, 'expression'), LANGUAGE_LINKS[code], code);
    assert.equal(languageDocsFor(code), LANGUAGE_LINKS[code], code);
  }
  // The language's table has none of the ruleset's own codes (they fall to its expressions page).
  assert.equal(languageDocsFor('duplicate-ref'), `${LANGUAGE}expressions/`);
  // A code of neither table: the language's expressions page, whatever found it.
  assert.equal(problemDocsFor('made-up-code', 'ruleset'), `${LANGUAGE}expressions/`);
});

test('sarif: each ruleset and Terraform code found in a ruleset JSON or .tf file links to its page', () => {
  const inJson = PROBLEM_CODES.filter((c) => !TERRAFORM_OWN.has(c)).map((c) => finding('rules/waf.ruleset.json', c, 'ruleset'));
  const inTf = [...TERRAFORM_OWN].map((c) => finding('main.tf', c, 'terraform'));
  assert.deepEqual(helpUris([...inJson, ...inTf]), RULESET_LINKS);
  // Found in a .tf file by the ruleset checks, the same page.
  assert.deepEqual(helpUris(PROBLEM_CODES.map((c) => finding('main.tf', c, TERRAFORM_OWN.has(c) ? 'terraform' : 'ruleset'))), RULESET_LINKS);
});

test('sarif: a language code found in an expression links to the language page', () => {
  assert.deepEqual(helpUris(Object.keys(LANGUAGE_LINKS).map((c) => finding('a.cfrule', c, 'expression'))), LANGUAGE_LINKS);
});

test('editor: a ruleset JSON document’s own problem links to its page', () => {
  const doc = TextDocument.create('file:///w/waf.ruleset.json', 'json', 1, '{"rules": []}\n');
  const problem = (code: string) => ({ start: 0, end: 1, severity: 'error', code, message: code }) as RulesetProblem;
  assert.deepEqual(Object.fromEntries(PROBLEM_CODES.map((c) => [c, toRulesetDiagnostic(doc, problem(c)).codeDescription?.href])), RULESET_LINKS);
});

test('editor: an expression’s diagnostic links to the language page', () => {
  const store = new DocumentStore();
  store.open('file:///w/a.cfrule', 'cfrule', 1, 'ssl');
  const doc = store.get('file:///w/a.cfrule')!;
  const [slice] = store.slicesOf(doc, 'expression');
  const diagnostic = (code: string) => ({ range: { start: 0, end: 1 }, severity: 'error', code, message: code }) as Diagnostic;
  assert.deepEqual(Object.fromEntries(Object.keys(LANGUAGE_LINKS).map((c) => [c, toLspDiagnostic(doc, slice, diagnostic(c)).codeDescription?.href])), LANGUAGE_LINKS);
});

test('editor: a .tf file’s problems link by what found them (Terraform, the ruleset checks, an expression)', async () => {
  const text = readFileSync(new URL('../fixtures/terraform/problem-origins.tf', import.meta.url), 'utf8');
  const store = new DocumentStore();
  store.open('file:///w/main.tf', 'terraform', 1, text);
  const doc = store.get('file:///w/main.tf')!;
  const a: Analysed = { doc, kind: 'terraform', slices: store.slicesOf(doc, 'terraform'), settings: { ...DEFAULT_SETTINGS, plan: 'pro' } };
  const links = (await terraformDiagnostics(store, a)).map((d) => [d.code, text.slice(doc.offsetAt(d.range.start), doc.offsetAt(d.range.end)), d.codeDescription?.href]);
  assert.deepEqual(links, [
    ['interpolated-expression', '${var.blocked}', RULESET_LINKS['interpolated-expression']],
    ['plan-required', '"log"', RULESET_LINKS['plan-required']],
    ['plan-required', 'cf.bot_management.score', LANGUAGE_LINKS['plan-required']],
    ['unknown-action', '"blok"', RULESET_LINKS['unknown-action']],
  ]);
});
