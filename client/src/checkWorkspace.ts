// rulesmith.checkWorkspace: every `.cfrule` and ruleset JSON of the workspace (the
// `*.ruleset.json` files and the globs of rulesmith.rulesetFiles) into the Problems panel,
// open or not; the language server checks them (rulesmith/checkFiles, protocol.ts) and
// says how many problems it found. Returns that count (for the in-host test).
import * as vscode from 'vscode';
import { CheckFilesRequest, type CheckFilesResult } from '../../server/src/protocol';
import { checkPatterns, checkSummary } from './checkPatterns';
import type { RulesmithClient } from './client';

/** Skipped when searching: dependencies and build output are not the user's rules. */
const EXCLUDE = '{**/node_modules/**,**/.git/**,**/out/**,**/dist/**}';
/** Files are sent in batches of this many (each is read first). */
const BATCH = 50;

export function registerCheckWorkspace(client: RulesmithClient): vscode.Disposable {
  return vscode.commands.registerCommand('rulesmith.checkWorkspace', async (): Promise<CheckFilesResult | undefined> => {
    const lc = client.languageClient;
    if (!lc?.isRunning()) {
      void vscode.window.showErrorMessage('Rulesmith: the language server is not running; run "Rulesmith: Restart Language Server" first.');
      return undefined;
    }
    const globs = vscode.workspace.getConfiguration('rulesmith').get<unknown[]>('rulesetFiles', []);
    return vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: 'Rulesmith: checking the workspace…', cancellable: true }, async (progress, token) => {
      const found = new Map<string, vscode.Uri>();
      for (const p of checkPatterns(Array.isArray(globs) ? globs : [])) {
        for (const uri of await vscode.workspace.findFiles(p, EXCLUDE, undefined, token)) found.set(uri.toString(), uri);
      }
      const total: { -readonly [K in keyof CheckFilesResult]: CheckFilesResult[K] } = { checked: 0, errors: 0, warnings: 0, withProblems: 0 };
      const uris = [...found.values()];
      for (let i = 0; i < uris.length && !token.isCancellationRequested; i += BATCH) {
        const files = await Promise.all(
          uris.slice(i, i + BATCH).map(async (uri) => ({ uri: uri.toString(), text: new TextDecoder().decode(await vscode.workspace.fs.readFile(uri)) })),
        );
        const r = await lc.sendRequest(CheckFilesRequest, { files }, token);
        total.checked += r.checked;
        total.errors += r.errors;
        total.warnings += r.warnings;
        total.withProblems += r.withProblems;
        progress.report({ message: `${Math.min(i + BATCH, uris.length)} of ${uris.length} files`, increment: (100 * BATCH) / uris.length });
      }
      const summary = checkSummary(total);
      if (total.errors + total.warnings > 0) {
        void vscode.window.showInformationMessage(summary, 'Show Problems').then((c) => c && vscode.commands.executeCommand('workbench.actions.view.problems'));
      } else void vscode.window.showInformationMessage(summary);
      return total;
    });
  });
}
