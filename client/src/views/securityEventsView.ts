// The Security Events view: what the rules did to the chosen zone's traffic, read from the
// rules service's GraphQL Analytics API (events/queries.ts). Rules grouped with their event
// counts (most first), each opening to its latest events; refreshed every POLL_MS while
// the view is visible; a filter (time window, action, path, client IP, live traffic or
// traces: live by default, so the traces Open runs do not crowd the view); a chart of events
// over time by action (a webview, events/chart.ts).
//
// On an event: Open (its request, and the request traced again on the zone's current
// configuration, saying when the result differs: events/reEvaluate.ts), Add exception
// (events/exception.ts, then the usual pull → review → diff + confirmation deploy), Save
// as sample request (events/httpSample.ts, appended to a `.http` file). Add exception on a
// rule group works on the group's latest event.
import * as vscode from 'vscode';
import type { Zone } from '../api/rulesApi';
import { runCommand, UserError, type Ctx } from '../commands/context';
import type { DeployCommands } from '../commands/deploy';
import { chartHtml, seriesOf } from '../events/chart';
import { ExceptionError, planException, type ExceptionKind } from '../events/exception';
import { appendSample } from '../events/httpSample';
import { DEFAULT_FILTER, describeFilter, EVENTS_QUERY, graphqlFilter, parseWindow, RULE_GROUPS_QUERY, timelineQuery, type EventsFilter, type RuleGroup, type SecurityEvent, type TimelineGroup } from '../events/queries';
import { differenceNow, traceRequestOf } from '../events/reEvaluate';
import * as ui from '../ui';
import { traceMarkdown } from '../zoneTrace';
import { BaseProvider, errorNode, message, messageItem, type MessageNode } from './common';

export const EVENT_SCHEME = 'rulesmith-event';
const POLL_MS = 15_000;
const EVENTS_PER_RULE = 50;
/** The Traffic filter: live traffic by default, so the traces the view's Open runs do not crowd it. */
const ORIGINS: readonly ui.PickItem<'proxy' | 'trace' | 'both'>[] = [
  { label: 'Live traffic (the proxy)', value: 'proxy' },
  { label: 'Traces', value: 'trace' },
  { label: 'Both', value: 'both' },
];

interface GroupNode {
  readonly kind: 'ruleGroup';
  readonly zone: Zone;
  readonly group: RuleGroup;
}

interface EventNode {
  readonly kind: 'event';
  readonly zone: Zone;
  readonly event: SecurityEvent;
}

type Node = MessageNode | GroupNode | EventNode;

type Zones<T> = { viewer: { zones: T[] } };

export class SecurityEventsView extends BaseProvider<Node> implements vscode.TextDocumentContentProvider {
  filter: EventsFilter = DEFAULT_FILTER;
  treeView: vscode.TreeView<Node> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private readonly docs = new Map<string, string>();
  private readonly docChanged = new vscode.EventEmitter<vscode.Uri>();
  /** An event opened again shows its new trace, not VS Code's copy of the first one. */
  readonly onDidChange = this.docChanged.event;
  private chart: vscode.WebviewPanel | undefined;

  constructor(
    private readonly ctx: Ctx,
    private readonly deploy: DeployCommands,
  ) {
    super();
  }

  register(): vscode.Disposable[] {
    this.treeView = vscode.window.createTreeView('rulesmith.securityEvents', { treeDataProvider: this, showCollapseAll: true });
    const cmd = (id: string, name: string, fn: (arg?: unknown) => Promise<unknown>) => vscode.commands.registerCommand(id, (arg?: unknown) => runCommand(this.ctx, name, () => fn(arg)));
    return [
      this,
      this.treeView,
      vscode.workspace.registerTextDocumentContentProvider(EVENT_SCHEME, this),
      this.treeView.onDidChangeVisibility((e) => this.poll(e.visible)),
      this.ctx.connection.onDidChange(() => this.refresh()),
      cmd('rulesmith.events.refresh', 'Refresh security events', async () => this.refresh()),
      cmd('rulesmith.events.filter', 'Filter security events', () => this.editFilter()),
      cmd('rulesmith.events.chart', 'Security events chart', () => this.showChart()),
      cmd('rulesmith.events.open', 'Open security event', (n) => this.open(eventOf(n))),
      cmd('rulesmith.events.addException', 'Add exception', (n) => this.addException(n as Node | undefined)),
      cmd('rulesmith.events.saveSample', 'Save as sample request', (n) => this.saveSample(eventOf(n))),
      { dispose: () => this.poll(false) },
    ];
  }

  refresh(): void {
    if (this.treeView) this.treeView.description = describeFilter(this.filter);
    super.refresh();
  }

  private poll(on: boolean): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = on ? setInterval(() => this.refresh(), POLL_MS) : undefined;
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.docs.get(uri.toString()) ?? '';
  }

  getTreeItem(n: Node): vscode.TreeItem {
    if (n.kind === 'message') return messageItem(n);
    if (n.kind === 'ruleGroup') {
      const d = n.group.dimensions;
      const item = new vscode.TreeItem(d.description || d.ruleId, vscode.TreeItemCollapsibleState.Collapsed);
      item.id = `group:${d.source}:${d.rulesetId}:${d.ruleId}:${d.action}`;
      item.description = `${n.group.count} · ${d.action} · ${d.source}`;
      item.tooltip = `Rule ${d.ruleId}${d.rulesetId ? ` of ruleset ${d.rulesetId}` : ''}: ${n.group.count} ${d.action} events (${describeFilter(this.filter)})`;
      item.iconPath = new vscode.ThemeIcon(d.action === 'block' ? 'error' : d.action === 'log' || d.action === 'score' ? 'output' : d.action === 'skip' ? 'debug-step-over' : 'shield');
      item.contextValue = 'securityEventGroup';
      return item;
    }
    const e = n.event;
    const item = new vscode.TreeItem(`${e.clientRequestHTTPMethodName} ${e.clientRequestPath}${e.clientRequestQuery ? `?${e.clientRequestQuery}` : ''}`, vscode.TreeItemCollapsibleState.None);
    item.id = `event:${e.rayName}:${e.ruleId}:${e.action}`;
    item.description = `${e.datetime.replace('T', ' ').replace('Z', '')} · ${e.clientIP}`;
    if (e.origin === 'trace') item.description += ' · trace';
    item.tooltip = `${e.action} by ${e.ruleId}${e.origin === 'trace' ? ' (a trace)' : ''} · ray ${e.rayName} · ${e.clientIP}${e.clientCountryName ? ` (${e.clientCountryName})` : ''} · ${e.userAgent}`;
    item.contextValue = 'securityEvent';
    item.command = { command: 'rulesmith.events.open', title: 'Open', arguments: [n] };
    return item;
  }

  async getChildren(n?: Node): Promise<Node[]> {
    try {
      if (!n) {
        if (!this.ctx.connection.state().signedIn) return [];
        const zone = await this.ctx.connection.chosenZone();
        if (!zone) return [message('events:nozone', 'Choose a zone to see its security events', 'globe', { command: 'rulesmith.chooseZone', title: 'Choose Zone' })];
        const groups = await this.query<{ firewallEventsAdaptiveGroups: RuleGroup[] }>(RULE_GROUPS_QUERY, zone, graphqlFilter(this.filter, Date.now()));
        if (groups.firewallEventsAdaptiveGroups.length === 0) return [message('events:none', `No security events on ${zone.name} (${describeFilter(this.filter)})`, 'pass')];
        return groups.firewallEventsAdaptiveGroups.map((group) => ({ kind: 'ruleGroup', zone, group }));
      }
      if (n.kind === 'ruleGroup') return (await this.eventsOf(n)).map((event) => ({ kind: 'event', zone: n.zone, event }));
      return [];
    } catch (e) {
      return [errorNode('events:error', e)];
    }
  }

  private async query<T>(query: string, zone: Zone, filter: Record<string, unknown>, extra: Record<string, unknown> = {}): Promise<T> {
    const api = await this.ctx.connection.api();
    const r = await api.graphql<Zones<T>>(query, { zoneTag: zone.id, filter, ...extra });
    return r.viewer.zones[0]!;
  }

  private async eventsOf(n: GroupNode, limit = EVENTS_PER_RULE): Promise<SecurityEvent[]> {
    const d = n.group.dimensions;
    const filter = graphqlFilter(this.filter, Date.now(), { ruleId: d.ruleId, rulesetId: d.rulesetId, action: d.action, source: d.source });
    return (await this.query<{ firewallEventsAdaptive: SecurityEvent[] }>(EVENTS_QUERY, n.zone, filter, { limit })).firewallEventsAdaptive;
  }

  private async editFilter(): Promise<void> {
    const f = this.filter;
    const choice = await ui.pick(
      [
        { label: 'Time window', description: describeFilter({ sinceMinutes: f.sinceMinutes }), value: 'window' },
        { label: 'Action', description: f.action ?? 'any', value: 'action' },
        { label: 'Path', description: f.path ?? 'any (a path, or a pattern with %)', value: 'path' },
        { label: 'Client IP', description: f.ip ?? 'any', value: 'ip' },
        { label: 'Traffic', description: ORIGINS.find((o) => o.value === (f.origin ?? 'both'))!.label, value: 'origin' },
        { label: 'Clear the filter', value: 'clear' },
      ],
      { title: 'Filter security events' },
    );
    if (!choice) return;
    if (choice.value === 'clear') this.filter = DEFAULT_FILTER;
    else if (choice.value === 'window') {
      const text = await ui.input({ title: 'Events of the last …', value: '60m', prompt: 'e.g. 30m, 6h, 7d (at most 31d)', validateInput: (v) => (parseWindow(v) ? undefined : 'Write minutes, hours or days: 30m, 6h, 7d (at most 31d)') });
      if (!text) return;
      this.filter = { ...f, sinceMinutes: parseWindow(text)! };
    } else if (choice.value === 'action') {
      const a = await ui.pick(['any', 'block', 'managed_challenge', 'challenge', 'jschallenge', 'log', 'skip', 'score', 'allow', 'bypass', 'managed_challenge_bypassed', 'challenge_bypassed', 'jschallenge_bypassed', 'managed_challenge_non_interactive_solved', 'managed_challenge_interactive_solved', 'challenge_solved', 'jschallenge_solved', 'simulate'].map((x) => ({ label: x, value: x })), { title: 'Action' });
      if (!a) return;
      this.filter = { ...f, action: a.value === 'any' ? undefined : a.value };
    } else if (choice.value === 'origin') {
      const o = await ui.pick(ORIGINS, { title: 'Traffic' });
      if (!o) return;
      this.filter = { ...f, origin: o.value === 'both' ? undefined : o.value };
    } else {
      const text = await ui.input({ title: choice.value === 'path' ? 'Path (% matches any characters)' : 'Client IP', value: (choice.value === 'path' ? f.path : f.ip) ?? '', prompt: 'Empty for any' });
      if (text === undefined) return;
      this.filter = choice.value === 'path' ? { ...f, path: text || undefined } : { ...f, ip: text || undefined };
    }
    this.refresh();
  }

  private async showChart(): Promise<void> {
    const zone = await this.ctx.connection.chosenZone();
    if (!zone) throw new UserError('No zone chosen: choose one in the Zones view.', [{ title: 'Choose Zone', run: () => vscode.commands.executeCommand('rulesmith.chooseZone') }]);
    const { query, bucket } = timelineQuery(this.filter.sinceMinutes);
    const groups = (await this.query<{ firewallEventsAdaptiveGroups: TimelineGroup[] }>(query, zone, graphqlFilter(this.filter, Date.now()))).firewallEventsAdaptiveGroups;
    const { buckets, series } = seriesOf(groups, bucket);
    if (!this.chart) {
      this.chart = vscode.window.createWebviewPanel('rulesmith.securityEventsChart', 'Security Events', vscode.ViewColumn.Active, { enableScripts: false, localResourceRoots: [] });
      this.chart.onDidDispose(() => (this.chart = undefined));
    }
    this.chart.webview.html = chartHtml(`Security events on ${zone.name} (${describeFilter(this.filter)}) per ${bucket === 'datetimeMinute' ? 'minute' : 'hour'}`, buckets, series);
    this.chart.reveal();
  }

  /** The event's request, and the request traced again on the zone's configuration now. */
  async open(n: EventNode): Promise<string> {
    const e = n.event;
    const api = await this.ctx.connection.api();
    const accountId = n.zone.account?.id;
    const body = traceRequestOf(e);
    const lines = [
      `# Security event ${e.rayName}`,
      '',
      `**${e.action}** by rule \`${e.ruleId}\`${e.description ? ` “${e.description}”` : ''} (${e.source}${e.rulesetId ? `, ruleset \`${e.rulesetId}\`` : ''}) at ${e.datetime}; the client got HTTP ${e.edgeResponseStatus}.`,
      '',
      '```http',
      `${e.clientRequestHTTPMethodName} ${String(body.url)} ${e.clientRequestHTTPProtocol}`,
      `User-Agent: ${e.userAgent}`,
      '```',
      '',
      `Client ${e.clientIP}${e.clientCountryName ? `, ${e.clientCountryName}` : ''}${e.clientAsn ? `, AS${e.clientAsn}` : ''}.${e.anomalyScore ? ` Anomaly score ${e.anomalyScore}.` : ''}`,
      '',
    ];
    if (!accountId) lines.push('_The zone has no account: it cannot be traced again._');
    else {
      const result = await ui.progress(`Rulesmith: tracing the event's request on ${n.zone.name}…`, () => api.trace(accountId, body), 'window');
      const diff = differenceNow(e, result);
      lines.push(diff ? `> **Differs now:** ${diff}` : '> The zone’s current configuration still does what this event recorded.', '', traceMarkdown('Traced again with the zone’s current configuration', body, result).replace(/^# /, '## '));
    }
    const text = `${lines.join('\n')}\n`;
    const uri = vscode.Uri.from({ scheme: EVENT_SCHEME, path: `/${e.rayName}-${e.ruleId.slice(0, 8)}.md` });
    this.docs.set(uri.toString(), text);
    this.docChanged.fire(uri);
    const doc = await vscode.workspace.openTextDocument(uri);
    await vscode.languages.setTextDocumentLanguage(doc, 'markdown');
    await vscode.window.showTextDocument(doc, { preview: true, viewColumn: vscode.ViewColumn.Beside });
    return text;
  }

  /** Builds the exception, opens the pulled entry point with it for review, then deploys on request. */
  async addException(n: Node | undefined): Promise<{ uri: vscode.Uri; summary: string } | undefined> {
    let event: EventNode;
    if (n?.kind === 'ruleGroup') {
      const latest = (await this.eventsOf(n, 1))[0];
      if (!latest) throw new UserError('The rule has no events in the current window any more; refresh the view.');
      event = { kind: 'event', zone: n.zone, event: latest };
    } else event = eventOf(n);
    let kind: ExceptionKind = 'skip';
    if (event.event.source === 'firewallManaged') {
      const where = `${event.event.clientRequestHTTPHost}${event.event.clientRequestPath}`;
      const k = await ui.pick<ExceptionKind>(
        [
          { label: `Skip this rule for ${where}`, description: 'a skip rule in http_request_firewall_custom', value: 'skip' },
          { label: 'Disable this rule', description: 'an override in the managed entry point (every request)', value: 'disable' },
        ],
        { title: `Exception for managed rule ${event.event.ruleId}` },
      );
      if (!k) return undefined;
      kind = k.value;
    }
    let plan;
    try {
      plan = planException(event.event, kind);
    } catch (e) {
      if (e instanceof ExceptionError) throw new UserError(`No exception added: ${e.message}.`);
      throw e;
    }
    const pulled = await this.deploy.pull(event.zone, plan.phase);
    if (!pulled) return undefined;
    const doc = await vscode.workspace.openTextDocument(pulled.uri);
    let text: string;
    try {
      text = plan.apply(doc.getText());
    } catch (e) {
      if (e instanceof ExceptionError) throw new UserError(`No exception added: ${e.message}.`);
      throw e;
    }
    const edit = new vscode.WorkspaceEdit();
    edit.replace(pulled.uri, new vscode.Range(0, 0, doc.lineCount, 0), text);
    await vscode.workspace.applyEdit(edit);
    await doc.save();
    await vscode.window.showTextDocument(doc, { preview: false });
    const go = await ui.info(`The exception ${plan.summary}. Review it in ${pulled.uri.path.split('/').pop()}, then deploy (a diff and a confirmation come first).`, 'Deploy');
    if (go === 'Deploy') await this.deploy.deploy(pulled.uri);
    return { uri: pulled.uri, summary: plan.summary };
  }

  /** Appends the event's request to a `.http` file of the workspace (asks which). */
  async saveSample(n: EventNode): Promise<vscode.Uri | undefined> {
    const folder = vscode.workspace.workspaceFolders?.[0];
    if (!folder) throw new UserError('Open a folder first: samples are saved to a .http file in the workspace.');
    const existing = await vscode.workspace.findFiles('**/*.http', '**/node_modules/**', 50);
    const fresh = vscode.Uri.joinPath(folder.uri, 'samples', 'security-events.http');
    const choices: ui.PickItem<vscode.Uri>[] = existing.map((u) => ({ label: vscode.workspace.asRelativePath(u), value: u }));
    if (!existing.some((u) => u.toString() === fresh.toString())) choices.push({ label: vscode.workspace.asRelativePath(fresh), description: 'new file', value: fresh });
    const target = await ui.pick(choices, { title: 'Append the request to …' });
    if (!target) return undefined;
    let before = '';
    try {
      before = new TextDecoder().decode(await vscode.workspace.fs.readFile(target.value));
    } catch {
      // a new file
    }
    await vscode.workspace.fs.writeFile(target.value, new TextEncoder().encode(appendSample(before, n.event)));
    await vscode.window.showTextDocument(target.value, { preview: false });
    void ui.info(`Saved the request of event ${n.event.rayName} to ${target.label}; Evaluate and Trace on zone run it like the others.`);
    return target.value;
  }

  override dispose(): void {
    this.poll(false);
    this.chart?.dispose();
    this.docChanged.dispose();
    super.dispose();
  }
}

function eventOf(n: unknown): EventNode {
  if (n && typeof n === 'object' && (n as Node).kind === 'event') return n as EventNode;
  throw new UserError('Choose an event in the Security Events view (open a rule to see its events).');
}
