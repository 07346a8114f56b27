// What "Rulesmith: Check Workspace" looks for and how it reports (no vscode import, so
// that unit tests run it in plain Node).
import type { CheckFilesResult } from '../../server/src/protocol';

/** The glob patterns of the files to check: `.cfrule`, `*.ruleset.json` and the setting's globs. */
export function checkPatterns(extraRulesetGlobs: readonly unknown[]): string[] {
  const extra = extraRulesetGlobs.filter((g): g is string => typeof g === 'string' && g.trim() !== '').map((g) => (g.includes('/') ? g : `**/${g}`));
  return [...new Set(['**/*.cfrule', '**/*.ruleset.json', ...extra])];
}

/** The notification's text for a result. */
export function checkSummary(r: CheckFilesResult): string {
  if (r.checked === 0) return 'Rulesmith: no .cfrule or ruleset JSON file in the workspace.';
  const files = `${r.checked} file${r.checked === 1 ? '' : 's'}`;
  if (r.errors + r.warnings === 0) return `Rulesmith: checked ${files}: no problems.`;
  const parts = [r.errors ? `${r.errors} error${r.errors === 1 ? '' : 's'}` : '', r.warnings ? `${r.warnings} warning${r.warnings === 1 ? '' : 's'}` : ''].filter(Boolean);
  return `Rulesmith: checked ${files}: ${parts.join(' and ')} in ${r.withProblems} file${r.withProblems === 1 ? '' : 's'} (see Problems).`;
}
