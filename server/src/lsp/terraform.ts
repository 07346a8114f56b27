/**
 * Terraform files in the language server: the rule expressions of `cloudflare_ruleset`,
 * `cloudflare_filter` and `cloudflare_firewall_rule` resources are expression slices
 * (expressionSlices.ts: hover, completion, signature help and quick fixes work inside
 * them), and this file gives their diagnostics with the ruleset-level validation
 * (server/src/terraform/check.ts).
 *
 * The rest of a `.tf` file belongs to HashiCorp's Terraform extension: we report nothing
 * outside these attributes (HCL syntax errors included: while the file does not parse, the
 * expressions are still checked, from the scanner alone), and offer no formatting, folding
 * or semantic tokens there, which would compete with its own.
 */
import type { Diagnostic as LspDiagnostic } from 'vscode-languageserver/node';
import { DiagnosticSeverity } from 'vscode-languageserver/node';
import { httpScheme } from '../language/scheme/index';
import { defaultCatalog } from '../managed/catalog';
import { problemDocsFor, terraformProblemOrigin } from '../rulesets/problemDescriptions';
import { checkTerraform, expressionProblems, type TfCheckOptions, type TfProblem } from '../terraform/check';
import { parseHcl } from '../terraform/hcl';
import { locate } from '../terraform/locate';
import type { Analysed, DocumentStore } from './documents';

const SEVERITY: Record<TfProblem['severity'], DiagnosticSeverity> = {
  error: DiagnosticSeverity.Error,
  warning: DiagnosticSeverity.Warning,
  information: DiagnosticSeverity.Information,
  hint: DiagnosticSeverity.Hint,
};

/** The diagnostics of a `.tf` document: its rule expressions' and its rulesets'. */
export async function terraformDiagnostics(store: DocumentStore, a: Analysed): Promise<LspDiagnostic[]> {
  const text = a.doc.getText();
  const options: TfCheckOptions = {
    scheme: httpScheme,
    plan: a.settings.plan,
    phase: a.settings.phase,
    dynamicComparisons: a.settings.dynamicComparisons,
    catalog: defaultCatalog,
    check: (t, o) => store.checks.check(t, o),
  };
  const parsed = await parseHcl(text);
  const problems = parsed.ok ? checkTerraform(text, parsed, options) : locate(text).expressions.flatMap((s) => expressionProblems(text, s, undefined, options));
  return problems.map((p) => {
    const d: LspDiagnostic = {
      range: { start: a.doc.positionAt(p.start), end: a.doc.positionAt(p.end) },
      severity: SEVERITY[p.severity],
      code: p.code,
      codeDescription: { href: problemDocsFor(p.code, terraformProblemOrigin(p)) },
      source: 'rulesmith',
      message: p.hint ? `${p.message}\n${p.hint}` : p.message,
    };
    if (p.data) d.data = p.data;
    return d;
  });
}
