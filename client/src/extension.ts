// The Rulesmith extension's entry point: a thin client over the language server (editing,
// evaluation) and over the rules API (zones, migration, deploy).
import * as vscode from 'vscode';
import { Connection } from './api/connection';
import { ConnectionStatus } from './connectionStatus';
import { RulesmithClient } from './client';
import { registerCommands } from './commands';
import { refreshViews, type Ctx } from './commands/context';
import { DeployCommands } from './commands/deploy';
import { registerTerraformCommands } from './commands/terraform';
import { PullReapply } from './commands/pullReapply';
import { registerFirewallCommands } from './commands/firewall';
import { ScratchRule } from './commands/scratchRule';
import { registerProxyCommands } from './commands/proxy';
import { MigrationCommands } from './commands/migration';
import { registerSessionCommands } from './commands/session';
import { registerServiceDown } from './commands/serviceDown';
import { registerTuningCommands } from './commands/tuning';
import { Evaluation } from './evaluation';
import { registerHttpLanguage } from './httpLanguage';
import { ParanoiaPreviewPanel } from './preview/panel';
import { ZoneTrace } from './zoneTrace';
import { TraceViewState } from './traceViewState';
import { ServerStatus, type ServerState } from './status';
import { enableTesting, testing } from './ui';
import { FirewallView } from './views/firewallView';
import { ManagedView } from './views/managedView';
import { MigrationView } from './views/migrationView';
import { ZonesView } from './views/zonesView';
import { SecurityEventsView } from './views/securityEventsView';

/**
 * What `extensions.getExtension('rulesmith.rulesmith').exports` gives: the language
 * server's state always; the rules-service side and the answer hook only to the in-host
 * tests (RULESMITH_TEST_HOOKS=1) — never to other extensions, which could otherwise reach
 * the credentials or answer a confirmation in the user's place.
 */
export interface RulesmithApi {
  readonly serverState: () => ServerState;
  readonly onDidChangeServerState: vscode.Event<ServerState>;
}

export interface RulesmithTestApi extends RulesmithApi {
  readonly connection: Connection;
  readonly views: Ctx['views'];
  readonly preview: ParanoiaPreviewPanel;
  readonly deploy: DeployCommands;
  readonly evaluation: Evaluation;
  readonly zoneTrace: ZoneTrace;
  readonly traceView: TraceViewState;
  /** Queue answers to the commands' questions; read what they asked and showed. */
  readonly testing: typeof testing;
}

let client: RulesmithClient | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<RulesmithApi | RulesmithTestApi> {
  const output = vscode.window.createOutputChannel('Rulesmith', { log: true });
  const status = new ServerStatus();
  client = new RulesmithClient(context, output, status);
  const traceView = new TraceViewState();
  const evaluation = new Evaluation(client, output, status, traceView);
  context.subscriptions.push(output, status, ...registerCommands(client, output), evaluation, traceView, ...traceView.register(), registerHttpLanguage());

  // The rules service: connection, views, commands.
  const connection = new Connection(context, output);
  const views = { zones: new ZonesView(connection), managed: new ManagedView(connection), firewall: new FirewallView(connection), migration: new MigrationView(connection) };
  const ctx: Ctx = { context, connection, output, views };
  const deploy = new DeployCommands(ctx);
  const pullReapply = new PullReapply(ctx, deploy);
  const migration = new MigrationCommands(ctx);
  const preview = new ParanoiaPreviewPanel(ctx);
  const zoneTrace = new ZoneTrace(ctx, client, status, traceView);
  const scratchRule = new ScratchRule(ctx);
  context.subscriptions.push(
    connection,
    new ConnectionStatus(connection),
    preview,
    ...Object.values(views),
    vscode.window.createTreeView('rulesmith.zones', { treeDataProvider: views.zones, showCollapseAll: true }),
    vscode.window.createTreeView('rulesmith.managedRulesets', { treeDataProvider: views.managed, showCollapseAll: true }),
    (views.firewall.treeView = vscode.window.createTreeView('rulesmith.firewallRules', { treeDataProvider: views.firewall })),
    vscode.window.createTreeView('rulesmith.migration', { treeDataProvider: views.migration }),
    ...registerSessionCommands(ctx),
    ...migration.register(),
    ...deploy.register(),
    ...pullReapply.register(),
    ...registerTuningCommands(ctx),
    ...registerServiceDown(ctx),
    ...registerFirewallCommands(ctx, scratchRule),
    ...scratchRule.register(),
    ...registerTerraformCommands(ctx),
    ...registerProxyCommands(ctx),
    ...preview.register(),
    ...zoneTrace.register(),
    ...new SecurityEventsView(ctx, deploy).register(),
    connection.onDidChange(() => refreshViews(ctx)),
  );
  await connection.refreshState();

  // Start failures are reported by the client (message, status bar), never thrown.
  await client.start();
  const api: RulesmithApi = { serverState: () => status.state, onDidChangeServerState: status.onDidChange };
  if (process.env.RULESMITH_TEST_HOOKS !== '1') return api;
  enableTesting();
  return { ...api, connection, views, preview, deploy, evaluation, zoneTrace, traceView, testing };
}

export async function deactivate(): Promise<void> {
  await client?.dispose();
  client = undefined;
}
