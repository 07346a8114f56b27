/**
 * Hover over ruleset JSON (not inside an expression), for what an `execute` rule deploys:
 *
 * - on the execute rule's `action_parameters.id`: the CodeLens line (executeLens.ts), the
 *   ruleset's description and versions;
 * - on an override's rule id (or a rule id in a skip rule's `rules`): the managed rule's
 *   description, tags, paranoia level, default action/score and, under this execute rule's
 *   overrides, its effective state;
 * - on an override's category: how many rules carry the tag, and which.
 */
import { findNodeAtOffset, getNodePath } from 'jsonc-parser';
import type { Hover, MarkupContent, Position } from 'vscode-languageserver/node';
import { findManagedRuleset, paranoiaLevelOf, rulesetVersion, tagsOf, type ManagedRule, type ManagedRuleset } from '../rulesets/catalog';
import { resolveOverrides } from '../rulesets/engine';
import type { Overrides, Rule } from '../rulesets/model';
import { parseRulesetTree, rulesPathOf } from '../rulesets/jsonTree';
import type { Analysed } from './documents';
import { executeRulesOf, executeSummary, thresholdLabel, type ExecuteRule } from './executeLens';
import { CATALOG } from './rulesetDiagnostics';

const md = (value: string): MarkupContent => ({ kind: 'markdown', value });

function actionText(r: Pick<ManagedRule, 'action' | 'action_parameters' | 'score_threshold'>, ruleset: ManagedRuleset, action = r.action, threshold?: number): string {
  if (action === 'score') {
    const inc = (r.action_parameters as { increment?: number } | undefined)?.increment;
    return `score ${inc !== undefined && inc >= 0 ? '+' : ''}${inc ?? '?'}`;
  }
  const t = threshold ?? r.score_threshold;
  return t !== undefined && ruleset.anomalyRuleId !== undefined ? `${action} at threshold ${thresholdLabel(t)}` : (action ?? '?');
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
