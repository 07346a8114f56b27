/**
 * Ruleset problems (rulesets/validate.ts) as LSP diagnostics, published together with
 * the expression diagnostics by diagnostics.ts. Expressions are not re-checked here
 * (the document store checks them, from its cache) and JSON syntax errors are VS Code's
 * JSON service's to report, so both are left out; so are, in `*.ruleset.json` files, the
 * problems the contributed JSON schema reports too (see schemaCovers).
 *
 * The validation of a document is cached per (version, plan, phase, known custom
 * rulesets): diagnostics, code actions, CodeLens and hover of one version share it.
 * Custom ruleset ids come from the open ruleset documents of kind `custom` with an `id`,
 * so that an `execute` of one of them is not reported as unknown.
 */
import { DiagnosticSeverity, type Diagnostic as LspDiagnostic } from 'vscode-languageserver/node';
import type { TextDocument } from 'vscode-languageserver-textdocument';
import { defaultCatalog } from '../managed/catalog';
import type { ManagedCatalog } from '../rulesets/catalog';
import { parseRulesetTree, propsOf, rulesetNodeOf } from '../rulesets/jsonTree';
import { problemDocsFor } from '../rulesets/problemDescriptions';
import { validateRulesetJson, type RulesetProblem } from '../rulesets/validate';
import { documentKind, type Analysed, type DocumentStore } from './documents';

/** The catalog the editor validates against (the shipped managed rulesets). */
export const CATALOG: ManagedCatalog = defaultCatalog;

/** As diagnostics.ts's SOURCE (not imported: diagnostics.ts imports this file). */
const SOURCE = 'rulesmith';

const SEVERITY: Record<RulesetProblem['severity'], DiagnosticSeverity> = {
  error: DiagnosticSeverity.Error,
  warning: DiagnosticSeverity.Warning,
  information: DiagnosticSeverity.Information,
  hint: DiagnosticSeverity.Hint,
};

interface Cached {
  readonly version: number;
  readonly key: string;
  readonly problems: readonly RulesetProblem[];
}

const cache = new Map<string, Cached>();
const customIdCache = new Map<string, { version: number; id?: string }>();

/** Ids of the custom rulesets among the open ruleset documents. */
function customRulesetIds(store: DocumentStore, a: Analysed): string[] {
  const ids: string[] = [];
  for (const doc of store.all()) {
    if (!documentKind(doc.uri, doc.languageId, a.settings)) continue;
    let hit = customIdCache.get(doc.uri);
    if (!hit || hit.version !== doc.version) {
      const ruleset = rulesetNodeOf(parseRulesetTree(doc.getText()).root);
      const p = propsOf(ruleset);
      const id = p.get('kind')?.value?.value === 'custom' ? p.get('id')?.value?.value : undefined;
      hit = { version: doc.version, id: typeof id === 'string' ? id : undefined };
      customIdCache.set(doc.uri, hit);
    }
    if (hit.id) ids.push(hit.id);
  }
  return ids;
}

/**
 * True for the files VS Code validates against the schema the extension contributes
 * (package.json `jsonValidation`, `*.ruleset.json`): there the schema-level problems
 * (types, required and unknown properties, patterns) are the JSON service's to report,
 * not repeated here. Other ruleset JSON (matched by `rulesmith.rulesetFiles`) gets them
 * from us.
 */
export function schemaCovers(uri: string): boolean {
  return /\.ruleset\.json(?:[?#]|$)/.test(uri);
}

/** The ruleset problems of an analysed ruleset document (none for a `.cfrule`), cached per version. */
export function rulesetProblems(store: DocumentStore, a: Analysed): readonly RulesetProblem[] {
  if (a.kind !== 'ruleset') return [];
  const customIds = customRulesetIds(store, a);
  const key = `${a.settings.plan ?? ''}|${a.settings.phase ?? ''}|${customIds.join(',')}`;
  const hit = cache.get(a.doc.uri);
  if (hit && hit.version === a.doc.version && hit.key === key) return hit.problems;
  // VS Code's JSON support reports syntax errors and duplicate keys itself.
  const problems = validateRulesetJson(a.doc.getText(), {
    catalog: CATALOG,
    plan: a.settings.plan,
    phase: a.settings.phase,
    customRulesetIds: customIds,
    expressions: false,
  }).filter((p) => p.code !== 'invalid-json' && p.code !== 'duplicate-key' && !(p.schema && schemaCovers(a.doc.uri)));
  cache.set(a.doc.uri, { version: a.doc.version, key, problems });
  return problems;
}

/** Forgets a closed document. */
export function forgetRulesetDocument(uri: string): void {
  cache.delete(uri);
  customIdCache.delete(uri);
}

/** A ruleset problem as an LSP diagnostic, its code linked to its page (rulesets/problemDescriptions.ts). */
export function toRulesetDiagnostic(doc: TextDocument, p: RulesetProblem): LspDiagnostic {
  const d: LspDiagnostic = {
    range: { start: doc.positionAt(p.start), end: doc.positionAt(p.end) },
    severity: SEVERITY[p.severity],
    code: p.code,
    codeDescription: { href: problemDocsFor(p.code, p.expression ? 'expression' : 'ruleset') },
    source: SOURCE,
    message: p.hint ? `${p.message}\n${p.hint}` : p.message,
  };
  if (p.data) d.data = p.data;
  return d;
}

/** The ruleset diagnostics of a document (empty for a `.cfrule`). */
export function rulesetDiagnostics(store: DocumentStore, a: Analysed): LspDiagnostic[] {
  return rulesetProblems(store, a).map((p) => toRulesetDiagnostic(a.doc, p));
}
