/**
 * What an `execute` rule deploys, as the editor shows it: a CodeLens above each execute
 * rule of a catalog ruleset with its effective configuration, e.g. "Cloudflare OWASP Core
 * Ruleset · PL2 · threshold 40 (Medium) · block · 118 of 245 rules on" (paranoia level and
 * threshold for a scored ruleset; the action is the anomaly rule's there, else the
 * ruleset-wide override or "default actions"; the count is of the rules the overrides
 * leave on). The hover over the same JSON is in rulesetHover.ts.
 *
 * The effective settings come from the engine (resolveOverrides) and the preview
 * (currentParanoiaLevel, currentThreshold), so the lens says what evaluation does.
 */
import { getNodeValue, type JSONPath, type Node } from 'jsonc-parser';
import type { CodeLens } from 'vscode-languageserver/node';
import { thresholdText } from '../managed/thresholds';
import { currentParanoiaLevel, currentThreshold } from '../managed/preview';
import { findManagedRuleset, paranoiaLevelOf, rulesetVersion, type ManagedCatalog, type ManagedRuleset, type ManagedRulesetVersion } from '../rulesets/catalog';
import { effectiveRules } from '../rulesets/engine';
import type { CategoryOverride, Overrides, Rule, RuleOverride } from '../rulesets/model';
import { parseRulesetTree, propsOf, rulesPathOf } from '../rulesets/jsonTree';
import type { Analysed } from './documents';
import { CATALOG } from './rulesetDiagnostics';

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown) => (typeof v === 'string' ? v : undefined);
const bool = (v: unknown) => (typeof v === 'boolean' ? v : undefined);
const int = (v: unknown) => (typeof v === 'number' && Number.isInteger(v) ? v : undefined);

function defined<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}

/** An execute rule as the engine expects it, from JSON that may be malformed (wrong types dropped). */
export function cleanExecuteRule(value: unknown): Rule | undefined {
  if (!isObject(value) || value.action !== 'execute' || !isObject(value.action_parameters)) return undefined;
  const p = value.action_parameters;
  const id = str(p.id);
  if (id === undefined) return undefined;
  let overrides: Overrides | undefined;
  if (isObject(p.overrides)) {
    const o = p.overrides;
    const categories: CategoryOverride[] = (Array.isArray(o.categories) ? o.categories : []).filter(isObject).flatMap((c) => {
      const category = str(c.category);
      return category === undefined ? [] : [defined({ category, action: str(c.action), enabled: bool(c.enabled) })];
    });
    const rules: RuleOverride[] = (Array.isArray(o.rules) ? o.rules : []).filter(isObject).flatMap((r) => {
      const rid = str(r.id);
      return rid === undefined ? [] : [defined({ id: rid, action: str(r.action), enabled: bool(r.enabled), score_threshold: int(r.score_threshold) })];
    });
    overrides = defined({ action: str(o.action), enabled: bool(o.enabled), categories: categories.length ? categories : undefined, rules: rules.length ? rules : undefined });
  }
  return defined({
    action: 'execute',
    enabled: bool(value.enabled),
    expression: str(value.expression),
    action_parameters: defined({ id, version: str(p.version), overrides }),
  }) as Rule;
}

/** An execute rule of the document deploying a catalog ruleset. */
export interface ExecuteRule {
  readonly index: number;
  readonly node: Node;
  readonly idNode?: Node;
  readonly rule: Rule;
  readonly ruleset: ManagedRuleset;
  readonly version: ManagedRulesetVersion;
}

/** The execute rules of a ruleset document that deploy a ruleset of the catalog. */
export function executeRulesOf(root: Node | undefined, catalog: ManagedCatalog): ExecuteRule[] {
  const path = rulesPathOf(root);
  if (!root || !path) return [];
  const rules = path.length === 0 ? root : findAt(root, path);
  if (rules?.type !== 'array') return [];
  const out: ExecuteRule[] = [];
  (rules.children ?? []).forEach((node, index) => {
    // Only execute rules are read whole: another rule may be nested too deep for getNodeValue's recursion.
    if (propsOf(node).get('action')?.value?.value !== 'execute') return;
    let value: unknown;
    try {
      value = getNodeValue(node);
    } catch (e) {
      if (e instanceof RangeError) return;
      throw e;
    }
    const rule = cleanExecuteRule(value);
    if (!rule) return;
    const p = rule.action_parameters as { id: string; version?: string };
    const ruleset = findManagedRuleset(catalog, p.id);
    const version = ruleset && rulesetVersion(ruleset, p.version);
    if (!ruleset || !version) return;
    const idNode = propsOf(propsOf(node).get('action_parameters')?.value).get('id')?.value;
    out.push({ index, node, idNode, rule, ruleset, version });
  });
  return out;
}

function findAt(root: Node, path: JSONPath): Node | undefined {
  let n: Node | undefined = root;
  for (const seg of path) {
    if (!n) return undefined;
    n = typeof seg === 'number' ? n.children?.[seg] : propsOf(n).get(seg)?.value;
  }
  return n;
}

/** The threshold in the dashboard's words (managed/thresholds.ts). */
export const thresholdLabel = thresholdText;

/** The one-line effective configuration of an execute rule. */
export function executeSummary(e: Pick<ExecuteRule, 'rule' | 'ruleset' | 'version'>, catalog: ManagedCatalog = CATALOG): string {
  const { rule, ruleset, version } = e;
  const parts: string[] = [ruleset.name];
  const pinned = (rule.action_parameters as { version?: string }).version;
  if (pinned !== undefined && pinned !== 'latest') parts.push(`version ${version.version}`);
  if (rule.enabled === false) {
    parts.push('rule disabled: nothing runs');
    return parts.join(' · ');
  }
  if (version.rules.some((r) => paranoiaLevelOf(r) !== undefined)) {
    const pl = currentParanoiaLevel(rule);
    parts.push(pl === 0 ? 'no paranoia level' : `PL${pl}`);
  }
  const overrides = (rule.action_parameters as { overrides?: Overrides }).overrides;
  if (ruleset.anomalyRuleId !== undefined) {
    const t = currentThreshold(rule, catalog);
    parts.push(`threshold ${thresholdText(t.threshold)}`);
    if (t.action) parts.push(t.action);
  } else {
    parts.push(overrides?.action ? `all rules ${overrides.action}` : 'default actions');
  }
  const effective = effectiveRules(rule, catalog);
  const on = effective.filter((r) => r.effective.enabled).length;
  parts.push(`${on} of ${effective.length} rules on`);
  return parts.join(' · ');
}

export function codeLenses(a: Analysed): CodeLens[] {
  if (a.kind !== 'ruleset') return [];
  const { root } = parseRulesetTree(a.doc.getText());
  return executeRulesOf(root, CATALOG).map((e) => {
    const at = a.doc.positionAt(e.node.offset);
    return { range: { start: at, end: at }, command: { title: executeSummary(e), command: '' } };
  });
}
