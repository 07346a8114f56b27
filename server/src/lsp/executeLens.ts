/**
 * What an `execute` rule deploys, as the editor shows it:
 *
 * - a CodeLens above each execute rule of a catalog ruleset with its effective
 *   configuration, e.g. "Cloudflare OWASP Core Ruleset · PL2 · threshold 40 (Medium) ·
 *   block · 118 of 245 rules on" (paranoia level and threshold for a scored ruleset; the
 *   action is the anomaly rule's there, else the ruleset-wide override or "default
 *   actions"; the count is of the rules the overrides leave on);
 * - hover on the execute rule's `action_parameters.id`: the same line, the ruleset's
 *   description and versions;
 * - hover on an override's rule id (or a rule id in a skip rule's `rules`): the managed
 *   rule's description, tags, paranoia level, default action/score and, under this
 *   execute rule's overrides, its effective state;
 * - hover on an override's category: how many rules carry the tag, and which.
 *
 * The effective settings come from the engine (resolveOverrides) and the preview
 * (currentParanoiaLevel, currentThreshold), so the lens says what evaluation does.
 */
import { findNodeAtOffset, getNodePath, getNodeValue, type JSONPath, type Node } from 'jsonc-parser';
import type { CodeLens, Hover, MarkupContent, Position } from 'vscode-languageserver/node';
import { OWASP_THRESHOLDS } from '../managed/owasp';
import { currentParanoiaLevel, currentThreshold } from '../managed/preview';
import { findManagedRuleset, paranoiaLevelOf, rulesetVersion, tagsOf, type ManagedCatalog, type ManagedRule, type ManagedRuleset, type ManagedRulesetVersion } from '../rulesets/catalog';
import { effectiveRules, resolveOverrides } from '../rulesets/engine';
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
    const rule = cleanExecuteRule(getNodeValue(node));
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

export function thresholdLabel(t: number): string {
  if (t === OWASP_THRESHOLDS.high) return 'High';
  if (t === OWASP_THRESHOLDS.medium) return 'Medium';
  if (t === OWASP_THRESHOLDS.low) return 'Low';
  return 'custom';
}

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
    parts.push(`threshold ${t.threshold} (${thresholdLabel(t.threshold)})`);
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

// ---------------------------------------------------------------------------------------
// Hover

const md = (value: string): MarkupContent => ({ kind: 'markdown', value });

function actionText(r: Pick<ManagedRule, 'action' | 'action_parameters' | 'score_threshold'>, ruleset: ManagedRuleset, action = r.action, threshold?: number): string {
  if (action === 'score') {
    const inc = (r.action_parameters as { increment?: number } | undefined)?.increment;
    return `score ${inc !== undefined && inc >= 0 ? '+' : ''}${inc ?? '?'}`;
  }
  const t = threshold ?? r.score_threshold;
  return t !== undefined && ruleset.anomalyRuleId !== undefined ? `${action} when the anomaly score reaches ${t} (${thresholdLabel(t)})` : (action ?? '?');
}

/** Markdown about one managed rule, and its state under `rule`'s overrides when given. */
export function managedRuleHover(m: ManagedRule, ruleset: ManagedRuleset, execute?: Rule): string {
  const lines = [`**${m.description}**`, '', `\`${m.id}\` · rule of ${ruleset.name}${m.ref ? ` · ref \`${m.ref}\`` : ''}`];
  if (m.categories.length) lines.push('', `Tags: ${m.categories.map((c) => `\`${c}\``).join(', ')}`);
  const pl = paranoiaLevelOf(m);
  if (pl !== undefined) lines.push('', `Paranoia level ${pl}`);
  lines.push('', `Default: ${actionText(m, ruleset)} · ${m.enabled ? 'on' : 'off'}`);
  if (execute) {
    const overrides = (execute.action_parameters as { overrides?: Overrides }).overrides;
    const isAnomaly = m.id === ruleset.anomalyRuleId;
    const eff = resolveOverrides(m, overrides, isAnomaly);
    const by = eff.overriddenBy.length ? ` (overridden by ${eff.overriddenBy.join(', ')})` : '';
    lines.push('', `Here: ${actionText(m, ruleset, eff.action, eff.scoreThreshold)} · ${eff.enabled ? 'on' : 'off'}${by}`);
  }
  return lines.join('\n');
}

function executedRulesetHover(e: ExecuteRule): string {
  const latest = e.ruleset.versions[e.ruleset.versions.length - 1];
  const versions = e.ruleset.versions.map((v) => `${v.version}${v === latest ? ' (latest)' : ''}`).join(', ');
  return [
    `**${e.ruleset.name}** · managed ruleset \`${e.ruleset.id}\` · ${e.ruleset.phase}`,
    '',
    executeSummary(e),
    '',
    e.ruleset.description,
    '',
    `Versions: ${versions} · running ${e.version.version} (${e.version.last_updated.slice(0, 10)})`,
  ].join('\n');
}

function categoryHover(tag: string, e: ExecuteRule): string {
  const count = tagsOf(e.ruleset, e.version.version).find((t) => t.tag === tag);
  if (!count) return `\`${tag}\` is not a category of ${e.ruleset.name} (version ${e.version.version})`;
  const rules = e.version.rules.filter((r) => r.categories.includes(tag));
  const shown = rules.slice(0, 10).map((r) => `- ${r.description}`);
  if (rules.length > shown.length) shown.push(`- … and ${rules.length - shown.length} more`);
  return [`**${tag}** · ${count.count} rule${count.count === 1 ? '' : 's'} of ${e.ruleset.name} (${count.enabled} on by default)`, '', ...shown].join('\n');
}

/** Hover over the ruleset JSON itself (not inside an expression), or null. */
export function rulesetHoverAt(a: Analysed, position: Position): Hover | null {
  if (a.kind !== 'ruleset') return null;
  const offset = a.doc.offsetAt(position);
  const { root } = parseRulesetTree(a.doc.getText());
  const base = rulesPathOf(root);
  const node = root && findNodeAtOffset(root, offset, true);
  if (!root || !base || !node || node.type !== 'string') return null;
  // A property's key is not what we describe.
  if (node.parent?.type === 'property' && node.parent.children?.[0] === node) return null;
  const path = getNodePath(node);
  if (path.length < base.length + 3 || !base.every((s, i) => path[i] === s)) return null;
  const rest = path.slice(base.length);
  const index = rest[0] as number;
  const e = executeRulesOf(root, CATALOG).find((x) => x.index === index);
  const range = { start: a.doc.positionAt(node.offset), end: a.doc.positionAt(node.offset + node.length) };
  const hover = (value: string): Hover => ({ contents: md(value), range });
  const tail = rest.slice(1).join('/');
  if (e) {
    if (tail === 'action_parameters/id') return hover(executedRulesetHover(e));
    if (/^action_parameters\/overrides\/rules\/\d+\/id$/.test(tail)) {
      const m = e.version.rules.find((r) => r.id === node.value);
      return m ? hover(managedRuleHover(m, e.ruleset, e.rule)) : null;
    }
    if (/^action_parameters\/overrides\/categories\/\d+\/category$/.test(tail)) return hover(categoryHover(node.value as string, e));
    return null;
  }
  // A rule id in a skip rule: `"rules": { "<ruleset id>": ["<rule id>", …] }`.
  if (rest.length === 5 && rest[1] === 'action_parameters' && rest[2] === 'rules' && typeof rest[3] === 'string') {
    const ruleset = findManagedRuleset(CATALOG, rest[3]);
    const m = ruleset && rulesetVersion(ruleset)?.rules.find((r) => r.id === node.value);
    return ruleset && m ? hover(managedRuleHover(m, ruleset)) : null;
  }
  return null;
}
