// The Rulesmith extension's entry point: a thin client over the language server.
import * as vscode from 'vscode';
import { RulesmithClient } from './client';
import { registerCommands } from './commands';
import { Evaluation } from './evaluation';
import { ServerStatus, type ServerState } from './status';

/** What `extensions.getExtension('rulesmith.rulesmith').exports` gives (used by tests). */
export interface RulesmithApi {
  readonly serverState: () => ServerState;
  readonly onDidChangeServerState: vscode.Event<ServerState>;
}

let client: RulesmithClient | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<RulesmithApi> {
  const output = vscode.window.createOutputChannel('Rulesmith', { log: true });
  const status = new ServerStatus();
  client = new RulesmithClient(context, output, status);
  context.subscriptions.push(output, status, ...registerCommands(client, output), new Evaluation(client, output, status));
  // Start failures are reported by the client (message, status bar), never thrown.
  await client.start();
  return { serverState: () => status.state, onDidChangeServerState: status.onDidChange };
}

export async function deactivate(): Promise<void> {
  await client?.dispose();
  client = undefined;
}
