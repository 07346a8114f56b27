// The Firewall rules view (the previous interface): the chosen zone's firewall rules in
// evaluation order (priority, then action precedence) with their pause state, and its
// filters (which rules use them). Empty with a welcome text when no zone is chosen.
import * as vscode from 'vscode';
import type { Connection } from '../api/connection';
import type { Filter, FirewallRule } from '../api/rulesApi';
import { BaseProvider, errorNodes, message, messageItem, type MessageNode } from './common';

export type FirewallNode =
  | { readonly kind: 'section'; readonly id: string; readonly label: string; readonly count: number; readonly children: FirewallNode[] }
  | { readonly kind: 'fwrule'; readonly id: string; readonly rule: FirewallRule; readonly position: number }
  | { readonly kind: 'filter'; readonly id: string; readonly filter: Filter; readonly usedBy: number }
  | MessageNode;

/** Precedence of actions at equal priority (rules-api §4.1). */
const ACTION_ORDER = ['log', 'bypass', 'allow', 'challenge', 'managed_challenge', 'js_challenge', 'block'];

export function firewallOrder(rules: readonly FirewallRule[]): FirewallRule[] {
  const pri = (r: FirewallRule) => (typeof r.priority === 'number' ? r.priority : Number.POSITIVE_INFINITY);
  const act = (r: FirewallRule) => {
    const i = ACTION_ORDER.indexOf(r.action);
    return i < 0 ? ACTION_ORDER.length : i;
  };
  return [...rules].sort((a, b) => pri(a) - pri(b) || act(a) - act(b));
}

export class FirewallView extends BaseProvider<FirewallNode> {
  /** The view showing this tree: its description names the zone. */
  treeView: vscode.TreeView<FirewallNode> | undefined;

  constructor(private readonly connection: Connection) {
    super();
  }

  getTreeItem(n: FirewallNode): vscode.TreeItem {
    if (n.kind === 'message') return messageItem(n);
    if (n.kind === 'section') {
      const item = new vscode.TreeItem(n.label, vscode.TreeItemCollapsibleState.Expanded);
      item.id = n.id;
      item.description = String(n.count);
      item.iconPath = new vscode.ThemeIcon(n.id.endsWith('filters') ? 'filter' : 'flame');
      item.contextValue = 'section';
      return item;
    }
    if (n.kind === 'fwrule') {
      const r = n.rule;
      const expr = 'expression' in r.filter ? r.filter.expression : '(filter deleted)';
      const item = new vscode.TreeItem(r.description?.trim() || expr, vscode.TreeItemCollapsibleState.None);
      item.id = n.id;
      item.description = `${r.paused ? 'paused · ' : ''}${r.action}${r.products?.length ? ` ${r.products.join(',')}` : ''} · priority ${r.priority ?? 'none'}`;
      item.accessibilityInformation = { label: `${n.position + 1}. ${typeof item.label === 'string' ? item.label : ''}, ${item.description}` };
      item.iconPath = new vscode.ThemeIcon(r.paused ? 'debug-pause' : 'flame');
      const md = new vscode.MarkdownString(`**${r.description || r.id}** — ${r.paused ? 'paused (does not act on requests)' : 'active'}, action \`${r.action}\`, priority ${r.priority ?? 'none'}, number ${n.position + 1} in evaluation order\n\nrule \`${r.id}\`, filter \`${r.filter.id}\`\n\n`);
      md.appendCodeblock(expr, 'rulesmith-expression');
      item.tooltip = md;
      item.contextValue = r.paused ? 'firewallRule.paused' : 'firewallRule';
      return item;
    }
    const f = n.filter;
    const item = new vscode.TreeItem(f.description?.trim() || f.expression, vscode.TreeItemCollapsibleState.None);
    item.id = n.id;
    item.description = `${f.paused ? 'paused · ' : ''}used by ${n.usedBy} rule${n.usedBy === 1 ? '' : 's'}`;
    item.iconPath = new vscode.ThemeIcon('filter');
    const md = new vscode.MarkdownString(`filter \`${f.id}\`\n\n`);
    md.appendCodeblock(f.expression, 'rulesmith-expression');
    item.tooltip = md;
    item.contextValue = 'filter';
    return item;
  }

  async getChildren(n?: FirewallNode): Promise<FirewallNode[]> {
    if (n) return n.kind === 'section' ? n.children : [];
    if (this.treeView) this.treeView.description = undefined;
    if (!this.connection.state().signedIn || !this.connection.zoneId) return [];
    const zoneId = this.connection.zoneId;
    try {
      const api = await this.connection.api();
      const zone = await this.connection.zone(zoneId);
      if (this.treeView) this.treeView.description = zone.name;
      const [rules, filters] = await Promise.all([api.firewallRules(zoneId), api.filters(zoneId)]);
      const used = new Map<string, number>();
      for (const r of rules) used.set(r.filter.id, (used.get(r.filter.id) ?? 0) + 1);
      const ruleNodes: FirewallNode[] = firewallOrder(rules).map((rule, i) => ({ kind: 'fwrule', id: `fw:${rule.id}`, rule, position: i }));
      const filterNodes: FirewallNode[] = filters.map((filter) => ({ kind: 'filter', id: `f:${filter.id}`, filter, usedBy: used.get(filter.id) ?? 0 }));
      return [
        { kind: 'section', id: 'fw/rules', label: 'Firewall rules', count: rules.length, children: ruleNodes.length ? ruleNodes : [message('fw/rules/none', 'No firewall rules', 'circle-slash')] },
        { kind: 'section', id: 'fw/filters', label: 'Filters', count: filters.length, children: filterNodes.length ? filterNodes : [message('fw/filters/none', 'No filters', 'circle-slash')] },
      ];
    } catch (e) {
      return errorNodes('fw/error', e, this.connection.isLocal);
    }
  }
}
