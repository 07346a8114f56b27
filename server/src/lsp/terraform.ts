/**
 * Terraform files in the language server: the rule expressions of `cloudflare_ruleset`,
 * `cloudflare_filter` and `cloudflare_firewall_rule` resources as expression slices (so
 * hover, completion, signature help and quick fixes work inside them, positions mapped
 * through HCL escapes and heredoc indentation), and their diagnostics with the ruleset-level
 * validation (server/src/terraform/check.ts).
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
import { lastAtOrBefore } from '../rulesets/expressions';
import { problemDocsFor, terraformProblemOrigin } from '../rulesets/problemDescriptions';
import { checkTerraform, expressionProblems, type TfCheckOptions, type TfProblem } from '../terraform/check';
import { parseHcl } from '../terraform/hcl';
import { locate } from '../terraform/locate';
import type { Analysed, DocumentStore, ExpressionSlice } from './documents';

/** Text inside an HCL quoted string: `\`, `"`, controls escaped, `${`/`%{` doubled. */
export function hclEscape(text: string): string {
  return JSON.stringify(text)
    .slice(1, -1)
    .replace(/([$%])\{/g, '$1$1{');
}

class TerraformSlice implements ExpressionSlice {
  readonly inJson: boolean;
  constructor(
    readonly text: string,
    private readonly offsets: readonly number[],
    private readonly heredoc: boolean,
    readonly rule: number | undefined,
    readonly ruleName: string | undefined,
    readonly phase: string | undefined,
  ) {
    // A quoted string escapes what is inserted (as a JSON string does); a heredoc takes it as is.
    this.inJson = !heredoc;
  }
  get contentStart(): number {
    return this.offsets[0];
  }
  get contentEnd(): number {
    return this.offsets[this.offsets.length - 1];
  }
  toDocument(offset: number): number {
    return this.offsets[Math.max(0, Math.min(offset, this.offsets.length - 1))];
  }
  fromDocument(docOffset: number): number {
    return lastAtOrBefore(this.offsets, docOffset);
  }
  encode(text: string): string {
    return this.heredoc ? text.replace(/([$%])\{/g, '$1$1{') : hclEscape(text);
  }
}

/** The checkable expressions of a `.tf` text, in document order. */
export function terraformSlices(text: string): ExpressionSlice[] {
  return locate(text)
    .expressions.flatMap((s) =>
      s.literal && s.checkText !== undefined ? [new TerraformSlice(s.checkText, s.literal.offsets, s.literal.heredoc, s.rule ?? undefined, s.ruleName, s.phase)] : [],
    )
    .sort((a, b) => a.contentStart - b.contentStart);
}

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
