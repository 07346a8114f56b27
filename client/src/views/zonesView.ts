// The Zones view: account → zones (plan) → phases → entry point ruleset → rules (enabled,
// action, expression in the tooltip). An `execute` rule opens onto the managed ruleset it
// deploys, with the effective state of every rule after its overrides (the core's
// effectiveRules), grouped by paranoia level and by tag. Clicking a zone chooses it for
// the commands and the other views.
import * as vscode from 'vscode';
import { defaultCatalog } from '../../../server/src/managed/catalog';
import { findManagedRuleset } from '../../../server/src/rulesets/catalog';
import { effectiveRules, WAF_PHASES } from '../../../server/src/rulesets/engine';
import type { ExecuteParameters, Rule, Ruleset } from '../../../server/src/rulesApi';
import { describeRule } from '../../../server/src/rulesets/ruleNames';
import { serviceCatalog } from '../api/catalog';
import type { Connection } from '../api/connection';
import { ProxyControl, type ProxiedZone } from '../api/proxyControl';
import { proxyDescription, proxyTooltip } from './proxyItem';
import type { Account, Zone } from '../api/rulesApi';
import { BaseProvider, errorNodes, groupItem, groupManagedRules, managedRuleItem, message, messageItem, type GroupNode, type ManagedRuleNode, type MessageNode } from './common';

export type ZonesNode =
  | { readonly kind: 'account'; readonly id: string; readonly account: Account }
  | { readonly kind: 'zone'; readonly id: string; readonly zone: Zone }
  | { readonly kind: 'phase'; readonly id: string; readonly zone: Zone; readonly phase: string }
  | { readonly kind: 'proxy'; readonly id: string; readonly zone: Zone; readonly live: { proxied?: ProxiedZone; problem?: string } }
  | { readonly kind: 'entrypoint'; readonly id: string; readonly zone: Zone; readonly phase: string; readonly ruleset: Ruleset }
  | { readonly kind: 'rule'; readonly id: string; readonly zone: Zone; readonly phase: string; readonly ruleset: Ruleset; readonly rule: Rule; readonly index: number }
  | GroupNode
  | ManagedRuleNode
  | MessageNode;

export const PHASE_LABELS: Readonly<Record<string, string>> = {
  http_request_firewall_custom: 'Custom rules',
  http_ratelimit: 'Rate limiting rules',
  http_request_firewall_managed: 'Managed rules',
};

/** A rule's name in the tree: its description, else what it runs or matches. */
function ruleLabel(r: Rule, index: number): string {
  const executed = r.action === 'execute' ? ((r.action_parameters as ExecuteParameters | undefined)?.id ?? '') : undefined;
  const executes = executed === undefined ? undefined : (findManagedRuleset(defaultCatalog, executed)?.name ?? executed);
  return describeRule({ ruleId: r.id, ref: r.ref, description: r.description, expression: r.expression, index, executes }, 'title')!;
}

export class ZonesView extends BaseProvider<ZonesNode> {
  readonly proxy: ProxyControl;
  /**
   * Shown Proxy items, all read again every few seconds with one call (live counters; one
   * that failed, as when the service restarts, recovers on a later tick).
   */
  private readonly proxyNodes = new Map<string, ZonesNode & { kind: 'proxy' }>();
  private polling = false;
  private readonly ticker = setInterval(() => void this.pollProxies(), 3_000);

  constructor(private readonly connection: Connection) {
    super();
    this.proxy = new ProxyControl(connection);
  }

  override dispose(): void {
    clearInterval(this.ticker);
    super.dispose();
  }

  getTreeItem(n: ZonesNode): vscode.TreeItem {
    const C = vscode.TreeItemCollapsibleState;
    switch (n.kind) {
      case 'message':
        return messageItem(n);
      case 'group':
        return groupItem(n);
      case 'managedRule':
        return managedRuleItem(n);
      case 'account': {
        const item = new vscode.TreeItem(n.account.name, C.Expanded);
        item.id = n.id;
        item.description = n.account.id === this.connection.accountId ? 'account (chosen)' : 'account';
        item.iconPath = new vscode.ThemeIcon('organization');
        item.contextValue = 'account';
        item.tooltip = `Account ${n.account.name}\nid ${n.account.id}`;
        return item;
      }
      case 'zone': {
        const chosen = n.zone.id === this.connection.zoneId;
        const item = new vscode.TreeItem(n.zone.name, C.Collapsed);
        item.id = n.id;
        item.description = `${n.zone.plan?.name ?? 'unknown plan'}${chosen ? ' · chosen' : ''}`;
        item.iconPath = new vscode.ThemeIcon(chosen ? 'globe' : 'circle-outline');
        item.contextValue = chosen ? 'zone.chosen' : 'zone';
        item.tooltip = `${n.zone.name}\n${n.zone.plan?.name ?? ''} · ${n.zone.status ?? ''}\nid ${n.zone.id}${chosen ? '\n\nThe commands act on this zone.' : '\n\nClick to choose this zone for the commands.'}`;
        if (!chosen) item.command = { command: 'rulesmith.chooseZone', title: 'Choose Zone', arguments: [n.zone] };
        item.accessibilityInformation = { label: `${n.zone.name}, ${item.description}` };
        return item;
      }
      case 'proxy': {
        // The WAF proxy for this zone (docs/proxy.md): start/stop, the URL to open, live counters.
        const p = n.live.proxied;
        const problem = n.live.problem;
        const item = new vscode.TreeItem('Proxy', C.None);
        item.id = n.id;
        item.iconPath = new vscode.ThemeIcon(p ? 'shield' : 'debug-disconnect');
        item.description = problem ?? (p ? proxyDescription(p) : 'stopped');
        item.tooltip = p ? proxyTooltip(n.zone.name, p) : (problem ?? `Start a WAF proxy in front of your app: requests to it run through ${n.zone.name}'s rules.`);
        item.contextValue = p ? 'proxy.running' : problem ? 'proxy.unavailable' : 'proxy.stopped';
        if (p) item.command = { command: 'rulesmith.proxy.open', title: 'Open', arguments: [n] };
        return item;
      }
      case 'phase': {
        const item = new vscode.TreeItem(PHASE_LABELS[n.phase] ?? n.phase, C.Collapsed);
        item.id = n.id;
        item.description = n.phase;
        item.iconPath = new vscode.ThemeIcon('layers');
        item.contextValue = 'phase';
        return item;
      }
      case 'entrypoint': {
        const rs = n.ruleset;
        const item = new vscode.TreeItem(rs.name ?? 'entry point', C.Expanded);
        item.id = n.id;
        item.description = `entry point · version ${rs.version ?? '?'} · ${rs.rules?.length ?? 0} rules`;
        item.iconPath = new vscode.ThemeIcon('symbol-namespace');
        item.tooltip = `Entry point ruleset of ${n.phase} on ${n.zone.name}\nid ${rs.id ?? ''}\nversion ${rs.version ?? ''}, updated ${rs.last_updated ?? ''}`;
        item.contextValue = 'entrypoint';
        return item;
      }
      case 'rule': {
        const r = n.rule;
        const exec = r.action === 'execute';
        const item = new vscode.TreeItem(ruleLabel(r, n.index), exec ? C.Collapsed : C.None);
        item.id = n.id;
        const enabled = r.enabled !== false;
        item.description = `${enabled ? '' : 'disabled · '}${r.action ?? ''}`;
        item.iconPath = new vscode.ThemeIcon(enabled ? (exec ? 'run-all' : 'filter') : 'circle-slash');
        const md = new vscode.MarkdownString();
        md.appendMarkdown(`**${ruleLabel(r, n.index)}** — rule ${n.index + 1}, ${enabled ? 'enabled' : 'disabled'}, action \`${r.action ?? ''}\`${r.ref ? `, ref \`${r.ref}\`` : ''}\n\n`);
        md.appendCodeblock(r.expression ?? '', 'rulesmith-expression');
        if (r.action_parameters) md.appendCodeblock(JSON.stringify(r.action_parameters, null, 2).slice(0, 2000), 'json');
        item.tooltip = md;
        // A deployment of a scored ruleset (the OWASP-based one) offers paranoia level and threshold.
        const scored = exec && findManagedRuleset(defaultCatalog, (r.action_parameters as ExecuteParameters | undefined)?.id ?? '')?.anomalyRuleId !== undefined;
        item.contextValue = exec ? (scored ? 'rule.execute.scored' : 'rule.execute') : 'rule';
        item.accessibilityInformation = { label: `${typeof item.label === 'string' ? item.label : ''}, ${item.description}` };
        return item;
      }
    }
  }

  async getChildren(n?: ZonesNode): Promise<ZonesNode[]> {
    try {
      return await this.children(n);
    } catch (e) {
      return errorNodes(`${n?.id ?? 'root'}/error`, e, this.connection.isLocal);
    }
  }

  private async children(n?: ZonesNode): Promise<ZonesNode[]> {
    if (!n) {
      // Empty when signed out: the welcome view says how to sign in.
      if (!this.connection.state().signedIn) return [];
      const api = await this.connection.api();
      const accounts = await api.visibleAccounts();
      if (accounts.length === 0) return [message('no-accounts', 'These credentials see no account and no zone', 'warning', undefined, 'Sign in with a token that can read the zones to manage (Zone Read, Zone WAF, Firewall Services).')];
      return accounts.map((account) => ({ kind: 'account', id: `a:${account.id}`, account }));
    }
    switch (n.kind) {
      case 'account': {
        const zones = await (await this.connection.api()).listZones(n.account.id);
        if (zones.length === 0) return [message(`${n.id}/none`, 'No zones in this account', 'info')];
        return zones.map((zone) => ({ kind: 'zone', id: `z:${zone.id}`, zone }));
      }
      case 'zone':
        return [await this.proxyNode(n.zone), ...WAF_PHASES.map((phase): ZonesNode => ({ kind: 'phase', id: `${n.id}/${phase}`, zone: n.zone, phase }))];
      case 'phase': {
        const ruleset = await (await this.connection.api()).getEntryPoint(n.zone.id, n.phase);
        if (!ruleset) return [message(`${n.id}/none`, 'No entry point ruleset in this phase', 'circle-slash')];
        return [{ kind: 'entrypoint', id: `${n.id}/ep`, zone: n.zone, phase: n.phase, ruleset }];
      }
      case 'entrypoint': {
        const rules = n.ruleset.rules ?? [];
        if (rules.length === 0) return [message(`${n.id}/empty`, 'No rules', 'circle-slash')];
        return rules.map((rule, index) => ({ kind: 'rule', id: `${n.id}/${index}:${rule.id ?? rule.ref ?? ''}`, zone: n.zone, phase: n.phase, ruleset: n.ruleset, rule, index }));
      }
      case 'rule': {
        if (n.rule.action !== 'execute') return [];
        const api = await this.connection.api();
        const { catalog, fallback } = await serviceCatalog(api, n.zone.account?.id ?? this.connection.accountId);
        const eff = effectiveRules(n.rule, catalog);
        const target = (n.rule.action_parameters as ExecuteParameters | undefined)?.id;
        if (eff.length === 0) return [message(`${n.id}/unknown`, `Runs ruleset ${target ?? '?'}, which is not a managed ruleset of this account`, 'question')];
        const groups: ZonesNode[] = groupManagedRules(n.id, eff);
        if (fallback) groups.unshift(message(`${n.id}/fallback`, `Built-in managed rules shown (${fallback})`, 'warning'));
        return groups;
      }
      case 'group':
        return [...n.children];
      default:
        return [];
    }
  }

  private async proxyNode(zone: Zone): Promise<ZonesNode> {
    const node: ZonesNode & { kind: 'proxy' } = { kind: 'proxy', id: `z:${zone.id}/proxy`, zone, live: {} };
    await this.updateProxies([node], false);
    this.proxyNodes.set(node.id, node);
    return node;
  }

  /** Re-reads a Proxy item's state and counters; redraws it when they changed. */
  updateProxy(n: ZonesNode & { kind: 'proxy' }): Promise<void> {
    return this.updateProxies([n]);
  }

  private async pollProxies(): Promise<void> {
    // A tick while the last is still waiting (a slow proxy) is skipped, not queued.
    if (this.polling || this.proxyNodes.size === 0 || !this.connection.state().signedIn) return;
    // A local service that is not running is not started by a poll (one that cannot start
    // would be started again every tick): the next call the user makes starts it.
    if (this.connection.isLocal && !this.connection.local.running) {
      for (const n of this.proxyNodes.values()) {
        const before = JSON.stringify(n.live);
        n.live.proxied = undefined;
        n.live.problem = 'the local rules service is not running; Refresh to start it';
        if (JSON.stringify(n.live) !== before) this.changed.fire(n);
      }
      return;
    }
    this.polling = true;
    try {
      await this.updateProxies([...this.proxyNodes.values()]);
    } finally {
      this.polling = false;
    }
  }

  private async updateProxies(nodes: readonly (ZonesNode & { kind: 'proxy' })[], redraw = true): Promise<void> {
    let zones: ProxiedZone[] | undefined;
    let problem: string | undefined;
    // A remote service's proxy is only known from the setting; the local service runs one (its call starts the service if it is down).
    if (!this.connection.isLocal && !this.proxy.url) problem = 'no proxy (set rulesmith.proxy.url)';
    else {
      try {
        zones = await this.proxy.zones();
      } catch (e) {
        problem = e instanceof Error ? e.message : String(e);
      }
    }
    for (const n of nodes) {
      const before = JSON.stringify(n.live);
      n.live.proxied = zones?.find((z) => z.zoneId === n.zone.id);
      n.live.problem = problem;
      if (redraw && JSON.stringify(n.live) !== before) this.changed.fire(n);
    }
  }
}
