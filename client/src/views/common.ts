// Pieces the tree views share: a message item (errors say what to do), the grouping of
// managed rules by paranoia level and by tag, and a base provider with refresh.
import * as vscode from 'vscode';
import { paranoiaLevelOf } from '../../../server/src/rulesets/catalog';
import type { EffectiveRule } from '../../../server/src/rulesets/engine';
import type { Rule } from '../../../server/src/rulesApi';
import { RulesApiError } from '../api/errors';
import { NotSignedInError } from '../api/connection';
import { isLoopback } from '../../../server/src/loopback';

export interface MessageNode {
  readonly kind: 'message';
  readonly id: string;
  readonly text: string;
  /** Shown after the text (e.g. what to do about an error). */
  readonly description?: string;
  readonly detail?: string;
  readonly icon?: string;
  readonly command?: vscode.Command;
}

export interface ManagedRuleNode {
  readonly kind: 'managedRule';
  readonly id: string;
  readonly rule: Rule;
  /** Absent in the Managed rulesets view (the rule's defaults are shown). */
  readonly effective?: EffectiveRule;
}

export interface GroupNode {
  readonly kind: 'group';
  readonly id: string;
  readonly label: string;
  readonly description?: string;
  readonly icon?: string;
  readonly children: readonly (GroupNode | ManagedRuleNode)[];
}

export function message(id: string, text: string, icon = 'info', command?: vscode.Command, detail?: string): MessageNode {
  return { kind: 'message', id, text, icon, ...(command ? { command } : {}), ...(detail ? { detail } : {}) };
}

/** A failure as a tree item that says what happened and what to do. */
/**
 * The nodes a view shows when its load failed: errorNode's one, or — when the service does
 * not answer — one that names the URL (click: retry) and one that starts the service.
 */
export function errorNodes(id: string, e: unknown, local: boolean): MessageNode[] {
  if (!(e instanceof RulesApiError) || !e.unreachable) return [errorNode(id, e)];
  const out: MessageNode[] = [
    { ...message(id, `Cannot reach the rules service at ${e.unreachable}`, 'debug-disconnect', { command: 'rulesmith.refreshViews', title: 'Retry' }, `${e.message}\n\n${e.advice}\n\nClick to retry.`), description: 'click to retry' },
  ];
  if (local || isLoopback(e.unreachable)) out.push(message(`${id}/start`, 'Start Local Service', 'play', { command: 'rulesmith.startLocalService', title: 'Start Local Service' }, `Starts the rules service at ${e.unreachable}, then the views reload.`));
  return out;
}

export function errorNode(id: string, e: unknown): MessageNode {
  if (e instanceof NotSignedInError) return message(id, 'Not signed in', 'account', { command: 'rulesmith.signIn', title: 'Sign In' }, e.message);
  // The label says what failed, the description what to do (the tooltip has both, and the call).
  if (e instanceof RulesApiError) return { ...message(id, e.message, 'error', { command: 'rulesmith.refreshViews', title: 'Refresh' }, `${e.operation}: ${e.display}\n\nClick to try again.`), description: e.advice };
  return message(id, e instanceof Error ? e.message : String(e), 'error', { command: 'rulesmith.showOutput', title: 'Show Output' });
}

export function messageItem(n: MessageNode): vscode.TreeItem {
  const item = new vscode.TreeItem(n.text, vscode.TreeItemCollapsibleState.None);
  item.id = n.id;
  if (n.icon) item.iconPath = new vscode.ThemeIcon(n.icon, n.icon === 'error' ? new vscode.ThemeColor('errorForeground') : undefined);
  if (n.command) item.command = n.command;
  if (n.description) item.description = n.description;
  if (n.detail) item.tooltip = n.detail;
  item.contextValue = 'message';
  return item;
}

function ruleState(eff: EffectiveRule | undefined, rule: Rule): string {
  const enabled = eff ? eff.enabled : rule.enabled !== false;
  const action = eff ? eff.action : rule.action;
  const inc = rule.action === 'score' ? (rule.action_parameters as { increment?: number } | undefined)?.increment : undefined;
  const parts = [enabled ? (action ?? '') : 'disabled'];
  if (enabled && inc !== undefined) parts[0] = `score +${inc}`;
  if (eff?.scoreThreshold !== undefined) parts.push(`threshold ${eff.scoreThreshold}`);
  if (eff && eff.overriddenBy.length > 0) parts.push(`by ${eff.overriddenBy.join(', ')}`);
  return parts.filter(Boolean).join(' · ');
}

export function managedRuleItem(n: ManagedRuleNode): vscode.TreeItem {
  const r = n.rule;
  const label = r.description?.trim() || r.ref || r.id || '(rule)';
  const item = new vscode.TreeItem(label, vscode.TreeItemCollapsibleState.None);
  item.id = n.id;
  const enabled = n.effective ? n.effective.enabled : r.enabled !== false;
  item.description = ruleState(n.effective, r);
  item.iconPath = new vscode.ThemeIcon(enabled ? 'pass-filled' : 'circle-slash', enabled ? new vscode.ThemeColor('testing.iconPassed') : undefined);
  const md = new vscode.MarkdownString();
  md.appendMarkdown(`**${escapeMd(label)}**\n\n`);
  if (r.id) md.appendMarkdown(`id \`${r.id}\`${r.ref && r.ref !== r.id ? ` · ref \`${r.ref}\`` : ''}\n\n`);
  md.appendMarkdown(`${enabled ? 'Enabled' : 'Disabled'} · ${ruleState(n.effective, r)}\n\n`);
  if (r.categories?.length) md.appendMarkdown(`Tags: ${r.categories.map((c) => `\`${c}\``).join(' ')}\n\n`);
  if (r.expression) md.appendCodeblock(r.expression.length > 1500 ? `${r.expression.slice(0, 1500)}…` : r.expression, 'rulesmith-expression');
  item.tooltip = md;
  item.contextValue = 'managedRule';
  return item;
}

export function groupItem(n: GroupNode, expanded = false): vscode.TreeItem {
  const item = new vscode.TreeItem(n.label, expanded ? vscode.TreeItemCollapsibleState.Expanded : vscode.TreeItemCollapsibleState.Collapsed);
  item.id = n.id;
  if (n.description) item.description = n.description;
  item.iconPath = new vscode.ThemeIcon(n.icon ?? 'list-tree');
  item.contextValue = 'group';
  return item;
}

function escapeMd(s: string): string {
  return s.replace(/[\\`*_{}[\]()#+\-.!|]/g, '\\$&');
}

const countLabel = (rules: readonly ManagedRuleNode[]) => {
  const on = rules.filter((r) => (r.effective ? r.effective.enabled : r.rule.enabled !== false)).length;
  return `${on} of ${rules.length} enabled`;
};

/**
 * Managed rules grouped by paranoia level (PL1–PL4, then "no paranoia level"), and by
 * tag (the `paranoia-level-N` tags aside), for one execute rule or one ruleset.
 */
export function groupManagedRules(prefix: string, rules: readonly { rule: Rule; effective?: EffectiveRule }[]): GroupNode[] {
  const nodes: ManagedRuleNode[] = rules.map((r, i) => ({ kind: 'managedRule', id: `${prefix}/r${i}:${r.rule.id ?? ''}`, rule: r.rule, ...(r.effective ? { effective: r.effective } : {}) }));
  const groups: GroupNode[] = [];
  const byLevel = new Map<number, ManagedRuleNode[]>();
  for (const n of nodes) {
    const l = paranoiaLevelOf({ categories: n.rule.categories ?? [] }) ?? 0;
    byLevel.set(l, [...(byLevel.get(l) ?? []), n]);
  }
  const hasLevels = [...byLevel.keys()].some((l) => l > 0);
  if (hasLevels) {
    for (const l of [1, 2, 3, 4, 0]) {
      const list = byLevel.get(l);
      if (!list) continue;
      const children = list.map((n) => ({ ...n, id: `${n.id}@pl` }));
      groups.push({ kind: 'group', id: `${prefix}/pl${l}`, label: l ? `Paranoia level ${l}` : 'No paranoia level', description: countLabel(list), icon: 'shield', children });
    }
  }
  const byTag = new Map<string, ManagedRuleNode[]>();
  for (const n of nodes) for (const t of n.rule.categories ?? []) if (!/^paranoia-level-[1-4]$/.test(t)) byTag.set(t, [...(byTag.get(t) ?? []), n]);
  const tagGroups: GroupNode[] = [...byTag]
    .sort((a, b) => a[0].localeCompare(b[0]))
    .map(([tag, list]) => ({ kind: 'group', id: `${prefix}/tag:${tag}`, label: tag, description: countLabel(list), icon: 'tag', children: list.map((n) => ({ ...n, id: `${n.id}@${tag}` })) }));
  if (tagGroups.length > 0) groups.push({ kind: 'group', id: `${prefix}/tags`, label: 'By tag', description: `${tagGroups.length} tags`, icon: 'tag', children: tagGroups });
  if (groups.length === 0) groups.push({ kind: 'group', id: `${prefix}/all`, label: 'Rules', description: countLabel(nodes), children: nodes });
  return groups;
}

/** Base of the views: a change event and refresh(). */
export abstract class BaseProvider<T> implements vscode.TreeDataProvider<T>, vscode.Disposable {
  protected readonly changed = new vscode.EventEmitter<T | undefined | void>();
  readonly onDidChangeTreeData = this.changed.event;

  refresh(): void {
    this.changed.fire();
  }

  abstract getTreeItem(node: T): vscode.TreeItem | Thenable<vscode.TreeItem>;
  abstract getChildren(node?: T): vscode.ProviderResult<T[]>;

  dispose(): void {
    this.changed.dispose();
  }
}
