// The Managed rulesets view: each managed ruleset of the chosen account, its rules by
// paranoia level and by tag, with descriptions and scores (as the ruleset defines them,
// before any deployment's overrides; the Zones view shows those).
import * as vscode from 'vscode';
import { rulesetVersion } from '../../../server/src/rulesets/catalog';
import type { ManagedRuleset } from '../../../server/src/rulesets/catalog';
import { serviceCatalog } from '../api/catalog';
import type { Connection } from '../api/connection';
import { BaseProvider, errorNodes, groupItem, groupManagedRules, managedRuleItem, message, messageItem, type GroupNode, type ManagedRuleNode, type MessageNode } from './common';

export type ManagedNode = { readonly kind: 'ruleset'; readonly id: string; readonly ruleset: ManagedRuleset } | GroupNode | ManagedRuleNode | MessageNode;

export class ManagedView extends BaseProvider<ManagedNode> {
  constructor(private readonly connection: Connection) {
    super();
  }

  getTreeItem(n: ManagedNode): vscode.TreeItem {
    if (n.kind === 'message') return messageItem(n);
    if (n.kind === 'group') return groupItem(n);
    if (n.kind === 'managedRule') return managedRuleItem(n);
    const v = rulesetVersion(n.ruleset);
    const item = new vscode.TreeItem(n.ruleset.name, vscode.TreeItemCollapsibleState.Collapsed);
    item.id = n.id;
    item.description = `version ${v?.version ?? '?'} · ${v?.rules.length ?? 0} rules${n.ruleset.anomalyRuleId ? ' · scored' : ''}`;
    item.tooltip = `${n.ruleset.name}\n${n.ruleset.description}\nid ${n.ruleset.id}`;
    item.iconPath = new vscode.ThemeIcon('shield');
    item.contextValue = 'managedRuleset';
    return item;
  }

  async getChildren(n?: ManagedNode): Promise<ManagedNode[]> {
    try {
      if (!n) {
        if (!this.connection.state().signedIn) return [];
        const api = await this.connection.api();
        let accountId = this.connection.accountId;
        if (!accountId) accountId = (await api.visibleAccounts())[0]?.id;
        const { catalog, fallback } = await serviceCatalog(api, accountId);
        const out: ManagedNode[] = catalog.rulesets.map((ruleset) => ({ kind: 'ruleset', id: `m:${ruleset.id}`, ruleset }));
        if (fallback) out.unshift(message('m/fallback', `Built-in managed rulesets shown (${fallback})`, 'warning'));
        return out;
      }
      if (n.kind === 'ruleset') return groupManagedRules(n.id, (rulesetVersion(n.ruleset)?.rules ?? []).map((rule) => ({ rule })));
      if (n.kind === 'group') return [...n.children];
      return [];
    } catch (e) {
      return errorNodes(`${n?.id ?? 'm'}/error`, e, this.connection.isLocal);
    }
  }
}
