// The extension's commands (declared in package.json `contributes.commands`).
import * as vscode from 'vscode';
import { registerCheckWorkspace } from './checkWorkspace';
import type { RulesmithClient } from './client';

export function registerCommands(client: RulesmithClient, output: vscode.LogOutputChannel): vscode.Disposable[] {
  return [
    vscode.commands.registerCommand('rulesmith.restartServer', () => client.restart()),
    vscode.commands.registerCommand('rulesmith.showOutput', () => output.show(true)),
    registerCheckWorkspace(client),
  ];
}
