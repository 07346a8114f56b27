// rulesmith.previewParanoia: a webview with the paranoia level × threshold matrix of the
// OWASP-based managed ruleset and a chart of requests acted on against the threshold, one
// line per level, for two sets of requests:
//   - attacks: the built-in corpus (the OWASP CRS 3.3.4 regression requests, generated at
//     build time into server/out/crs-attack-corpus.json), or the ftw YAML of the folder in
//     the setting rulesmith.preview.attackCorpus — there, more acted on is better;
//   - your requests: the workspace's `.http` files — there, anything acted on is a likely
//     false positive.
// The deployment previewed is the execute rule of the active `*.ruleset.json`, else the
// chosen zone's managed entry point, else the ruleset with no overrides. The numbers come
// from the core's previewParanoia (the real engine), computed in a worker thread
// (worker.ts); the page is html.ts.
import { existsSync } from 'node:fs';
import { isAbsolute, join, relative } from 'node:path';
import * as vscode from 'vscode';
import { BUILT_IN_CORPUS_FILE } from '../../../server/src/corpusFiles';
import { defaultCatalog } from '../../../server/src/managed/catalog';
import { OWASP_RULESET_ID } from '../../../server/src/rulesets/managedIds';
import { PREVIEW_THRESHOLDS } from '../../../server/src/managed/preview';
import { managedExecuteRules } from '../../../server/src/managed/editOverrides';
import type { Rule } from '../../../server/src/rulesets/model';
import { runCommand, type Ctx } from '../commands/context';
import { computePreview, type CorpusChoice, type PreviewInput, type PreviewSet } from './compute';
import { CHART_THRESHOLDS, renderHtml } from './html';
import { runPreviewWorker } from './run';

export type { PreviewSet } from './compute';

export interface PreviewResult {
  readonly target: string;
  readonly sets: readonly PreviewSet[];
  readonly html: string;
  readonly ms: number;
}

export class ParanoiaPreviewPanel implements vscode.Disposable {
  private panel: vscode.WebviewPanel | undefined;
  /** The last result (tests read it through the API). */
  last: PreviewResult | undefined;

  constructor(private readonly ctx: Ctx) {}

  register(): vscode.Disposable[] {
    return [vscode.commands.registerCommand('rulesmith.previewParanoia', () => runCommand(this.ctx, 'Paranoia preview', () => this.show()))];
  }

  /** What to preview: the active file's scored execute rule, the chosen zone's, or the ruleset as it comes. */
  private async target(): Promise<{ label: string; execute: Rule }> {
    const catalog = defaultCatalog;
    const ed = vscode.window.activeTextEditor;
    if (ed && ed.document.uri.path.endsWith('.json')) {
      const r = managedExecuteRules(ed.document.getText(), catalog).rules.find((x) => x.scored);
      if (r) return { label: `${ed.document.uri.path.split('/').pop()} (rule ${r.index + 1})`, execute: r.rule };
    }
    const c = this.ctx.connection;
    if (c.state().signedIn && c.zoneId) {
      try {
        const zone = await c.zone(c.zoneId);
        const ep = await (await c.api()).getEntryPoint(zone.id, 'http_request_firewall_managed');
        const r = ep && managedExecuteRules(JSON.stringify(ep), catalog).rules.find((x) => x.scored);
        if (r) return { label: `${zone.name} (managed entry point version ${ep!.version})`, execute: r.rule };
        if (!ep) {
          // Not migrated yet: the configuration the migration would write.
          const config = await (await c.api()).migrationConfig(zone.id).catch(() => undefined);
          const m = config && managedExecuteRules(JSON.stringify({ rules: config.rules }), catalog).rules.find((x) => x.scored);
          if (m) return { label: `${zone.name} as the migration would configure it`, execute: m.rule };
        }
      } catch (e) {
        this.ctx.output.warn(`Paranoia preview: the zone's entry point could not be read: ${e instanceof Error ? e.message : String(e)}`);
      }
    }
    return { label: 'the OWASP-based ruleset with no overrides', execute: { action: 'execute', expression: 'true', action_parameters: { id: OWASP_RULESET_ID } } };
  }

  private async httpTexts(): Promise<string[]> {
    const uris = await vscode.workspace.findFiles('**/*.http', '**/node_modules/**', 200);
    const out: string[] = [];
    for (const uri of uris) {
      const open = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
      out.push(open ? open.getText() : new TextDecoder().decode(await vscode.workspace.fs.readFile(uri)));
    }
    return out;
  }

  /** Runs the computation in the worker thread (in-process when the worker is not built); undefined when cancelled. */
  private compute(input: PreviewInput, progress: (message: string) => void, signal: AbortSignal): Promise<PreviewSet[] | undefined> {
    const file = this.ctx.context.asAbsolutePath(join('client', 'out', 'previewWorker.js'));
    if (!existsSync(file)) return Promise.resolve(computePreview(input, progress));
    return runPreviewWorker(file, input, progress, signal);
  }

  /** The setting's folder (relative to the workspace folder), else the built-in corpus the build put in server/out. */
  private corpus(): CorpusChoice {
    const raw = vscode.workspace.getConfiguration('rulesmith.preview').get<string>('attackCorpus', '').trim();
    if (!raw) return { builtIn: this.ctx.context.asAbsolutePath(join('server', 'out', BUILT_IN_CORPUS_FILE)) };
    const ws = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    const folder = isAbsolute(raw) || !ws ? raw : join(ws, raw);
    return { folder, label: displayPath(folder) };
  }

  async show(): Promise<PreviewResult | undefined> {
    const t0 = Date.now();
    const result = await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: 'Rulesmith: paranoia preview', cancellable: true }, async (progress, token) => {
      const abort = new AbortController();
      token.onCancellationRequested(() => abort.abort());
      const target = await this.target();
      const input: PreviewInput = {
        execute: target.execute,
        thresholds: [...new Set([...PREVIEW_THRESHOLDS, ...CHART_THRESHOLDS])].sort((a, b) => a - b),
        corpus: this.corpus(),
        maxCorpusRequests: vscode.workspace.getConfiguration('rulesmith.preview').get<number>('maxCorpusRequests', 1000),
        httpTexts: await this.httpTexts(),
      };
      const sets = await this.compute(input, (message) => progress.report({ message }), abort.signal);
      return sets && { target: target.label, sets };
    });
    if (!result) {
      this.ctx.output.info('Paranoia preview cancelled');
      return undefined;
    }
    const ms = Date.now() - t0;
    const html = renderHtml(result.target, result.sets, ms);
    const attacks = result.sets.find((s) => s.name === 'Attacks');
    if (attacks?.error) this.ctx.output.warn(`Paranoia preview: ${attacks.error}`);
    if (!this.panel) {
      // Command links: only the one that opens the corpus setting.
      this.panel = vscode.window.createWebviewPanel('rulesmith.paranoiaPreview', 'Paranoia Preview', vscode.ViewColumn.Active, { enableScripts: false, enableCommandUris: ['workbench.action.openSettings'], localResourceRoots: [] });
      this.panel.onDidDispose(() => (this.panel = undefined));
    }
    this.panel.webview.html = html;
    this.panel.reveal();
    this.ctx.output.info(`Paranoia preview of ${result.target}: ${result.sets.map((s) => `${s.name} ${s.total}`).join(', ')} requests in ${ms} ms`);
    this.last = { ...result, html, ms };
    return this.last;
  }

  dispose(): void {
    this.panel?.dispose();
  }
}

function displayPath(p: string): string {
  const ws = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
  const r = ws ? relative(ws, p) : p;
  return r.startsWith('..') ? p : r || '.';
}
