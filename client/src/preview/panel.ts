// rulesmith.previewParanoia: a webview with the paranoia level × threshold matrix of the
// OWASP-based managed ruleset and a chart of requests acted on against the threshold, one
// line per level, for two sets of requests:
//   - attacks: the built-in corpus (the OWASP CRS 3.3.4 regression requests, generated at
//     build time into server/out/crs-attack-corpus.json), or the ftw YAML of the folder in
//     the setting rulesmith.preview.attackCorpus — there, more acted on is better;
//   - your requests: the workspace's `.http` files — there, anything acted on is a likely
//     false positive.
// The deployment previewed is the execute rule of the active `*.ruleset.json`, else the
// chosen zone's managed entry point, else the ruleset with no overrides; the page says
// which, links the other one ("Preview instead"), and a cell applies its level and
// threshold to it through rulesmith.setParanoiaLevel / setScoreThreshold (the file is
// edited and deployed as usual; the zone is changed after a confirmation). The numbers come
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
import { runCommand, UserError, type Ctx } from '../commands/context';
import type { TuningResult } from '../commands/tuning';
import type { Zone } from '../api/rulesApi';
import { computePreview, type CorpusChoice, type PreviewInput, type PreviewSet } from './compute';
import { APPLY_CELL_COMMAND, CHART_THRESHOLDS, PREVIEW_COMMAND, renderHtml, type PreviewTarget } from './html';
import { runPreviewWorker } from './run';

export type { PreviewSet } from './compute';

/** The preview command's argument: which target (the page's "Preview instead" links pass one). */
export interface TargetArg {
  readonly target?: 'file' | 'zone';
  readonly uri?: string;
}

function targetArg(arg: unknown): TargetArg {
  if (!arg || typeof arg !== 'object') return {};
  const a = arg as { target?: unknown; uri?: unknown };
  return { ...(a.target === 'file' || a.target === 'zone' ? { target: a.target } : {}), ...(typeof a.uri === 'string' ? { uri: a.uri } : {}) };
}

export interface PreviewResult {
  readonly target: string;
  readonly kind: PreviewTarget['kind'];
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
    return [
      vscode.commands.registerCommand(PREVIEW_COMMAND, (arg?: unknown) => runCommand(this.ctx, 'Paranoia preview', () => this.show(targetArg(arg)))),
      vscode.commands.registerCommand(APPLY_CELL_COMMAND, (arg?: unknown) => runCommand(this.ctx, 'Apply from the paranoia preview', () => this.applyCell(arg))),
    ];
  }

  /** The ruleset file the preview last looked at (to switch back to it from the zone). */
  private lastFile: vscode.Uri | undefined;
  /** What the page shows now (a cell applies to it). */
  private current: { kind: PreviewTarget['kind']; uri?: vscode.Uri; zone?: Zone; level?: number; threshold?: number } | undefined;

  /** A ruleset file's scored execute rule, or undefined when it has none. */
  private fileTarget(doc: vscode.TextDocument): { label: string; execute: Rule } | undefined {
    const r = managedExecuteRules(doc.getText(), defaultCatalog).rules.find((x) => x.scored);
    return r ? { label: `${doc.uri.path.split('/').pop()} (rule ${r.index + 1})`, execute: r.rule } : undefined;
  }

  /** The chosen zone's scored execute rule (or what the migration would write). */
  private async zoneTarget(): Promise<{ label: string; execute: Rule; zone: Zone } | undefined> {
    const catalog = defaultCatalog;
    const c = this.ctx.connection;
    if (!c.state().signedIn || !c.zoneId) return undefined;
    try {
      const zone = await c.zone(c.zoneId);
      const ep = await (await c.api()).getEntryPoint(zone.id, 'http_request_firewall_managed');
      const r = ep && managedExecuteRules(JSON.stringify(ep), catalog).rules.find((x) => x.scored);
      if (r) return { label: `${zone.name} (managed entry point version ${ep!.version})`, execute: r.rule, zone };
      if (!ep) {
        // Not migrated yet: the configuration the migration would write.
        const config = await (await c.api()).migrationConfig(zone.id).catch(() => undefined);
        const m = config && managedExecuteRules(JSON.stringify({ rules: config.rules }), catalog).rules.find((x) => x.scored);
        if (m) return { label: `${zone.name} as the migration would configure it`, execute: m.rule, zone };
      }
    } catch (e) {
      this.ctx.output.warn(`Paranoia preview: the zone's entry point could not be read: ${e instanceof Error ? e.message : String(e)}`);
    }
    return undefined;
  }

  /**
   * What to preview: the target asked for (`file` with its URI, `zone`), else the active
   * ruleset file's scored execute rule, else the chosen zone's, else the ruleset as it
   * comes; with the other targets there are, for the page's "Preview instead" links.
   */
  private async target(ask: TargetArg): Promise<{ label: string; execute: Rule; kind: PreviewTarget['kind']; uri?: vscode.Uri; zone?: Zone; others: { label: string; arg: TargetArg }[] }> {
    const ed = vscode.window.activeTextEditor;
    const activeFile = ed && ed.document.uri.path.endsWith('.json') && this.fileTarget(ed.document) ? ed.document.uri : undefined;
    if (activeFile) this.lastFile = activeFile;
    const fileUri = ask.target === 'file' && ask.uri ? vscode.Uri.parse(ask.uri) : (activeFile ?? this.lastFile);
    const fileDoc = fileUri ? await vscode.workspace.openTextDocument(fileUri).then(undefined, () => undefined) : undefined;
    const file = fileDoc ? this.fileTarget(fileDoc) : undefined;
    const zone = ask.target === 'file' && file ? undefined : await this.zoneTarget();
    const fileLink = file && fileUri ? { label: `the file ${fileUri.path.split('/').pop()}`, arg: { target: 'file', uri: fileUri.toString() } as TargetArg } : undefined;
    if (ask.target === 'file' && !file) throw new UserError(`${fileUri ? fileUri.path.split('/').pop() : 'The file'} has no execute rule of the OWASP-based managed ruleset to preview.`);
    if (file && fileUri && (ask.target === 'file' || (ask.target !== 'zone' && activeFile))) {
      const others = this.ctx.connection.state().signedIn && this.ctx.connection.zoneId ? [{ label: 'the chosen zone', arg: { target: 'zone' } as TargetArg }] : [];
      return { ...file, kind: 'file', uri: fileUri, others };
    }
    if (ask.target === 'zone' && !zone) throw new UserError('No zone to preview: sign in and choose a zone that deploys the OWASP-based managed ruleset (or run the migration first).');
    if (zone) return { ...zone, kind: 'zone', others: fileLink ? [fileLink] : [] };
    return { label: 'the OWASP-based ruleset with no overrides', execute: { action: 'execute', expression: 'true', action_parameters: { id: OWASP_RULESET_ID } }, kind: 'default', others: fileLink ? [fileLink] : [] };
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

  async show(ask: TargetArg = {}): Promise<PreviewResult | undefined> {
    const t0 = Date.now();
    const target = await this.target(ask);
    const result = await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: 'Rulesmith: paranoia preview', cancellable: true }, async (progress, token) => {
      const abort = new AbortController();
      token.onCancellationRequested(() => abort.abort());
      const input: PreviewInput = {
        execute: target.execute,
        thresholds: [...new Set([...PREVIEW_THRESHOLDS, ...CHART_THRESHOLDS])].sort((a, b) => a - b),
        corpus: this.corpus(),
        maxCorpusRequests: vscode.workspace.getConfiguration('rulesmith.preview').get<number>('maxCorpusRequests', 1000),
        httpTexts: await this.httpTexts(),
      };
      const sets = await this.compute(input, (message) => progress.report({ message }), abort.signal);
      return sets && { target: target.label, kind: target.kind, sets };
    });
    if (!result) {
      this.ctx.output.info('Paranoia preview cancelled');
      return undefined;
    }
    const ms = Date.now() - t0;
    const p = result.sets.find((x) => x.preview && !x.preview.error)?.preview;
    this.current = { kind: target.kind, ...(target.uri ? { uri: target.uri } : {}), ...(target.zone ? { zone: target.zone } : {}), ...(p ? { level: p.currentLevel, threshold: p.currentThreshold } : {}) };
    const html = renderHtml({ kind: target.kind, label: target.label, others: target.others, applicable: target.kind !== 'default' }, result.sets, ms);
    const attacks = result.sets.find((s) => s.name === 'Attacks');
    if (attacks?.error) this.ctx.output.warn(`Paranoia preview: ${attacks.error}`);
    if (!this.panel) {
      // Command links: only the corpus setting, another target, and applying a cell.
      this.panel = vscode.window.createWebviewPanel('rulesmith.paranoiaPreview', 'Paranoia Preview', vscode.ViewColumn.Active, { enableScripts: false, enableCommandUris: ['workbench.action.openSettings', PREVIEW_COMMAND, APPLY_CELL_COMMAND], localResourceRoots: [] });
      this.panel.onDidDispose(() => (this.panel = undefined));
    }
    this.panel.webview.html = html;
    this.panel.reveal();
    this.ctx.output.info(`Paranoia preview of ${result.target}: ${result.sets.map((s) => `${s.name} ${s.total}`).join(', ')} requests in ${ms} ms`);
    this.last = { ...result, html, ms };
    return this.last;
  }

  /**
   * A cell clicked: its level and threshold applied to what the page previews, through the
   * usual commands — in the file (edited; deploy it to apply), or on the zone (each change
   * confirmed first). Only what differs from the previewed deployment changes.
   */
  async applyCell(arg: unknown): Promise<TuningResult[] | undefined> {
    const a = (arg && typeof arg === 'object' ? arg : {}) as { level?: unknown; threshold?: unknown };
    const level = typeof a.level === 'number' ? a.level : undefined;
    const threshold = typeof a.threshold === 'number' ? a.threshold : undefined;
    const cur = this.current;
    if (!cur || level === undefined || threshold === undefined) throw new UserError('Run "Rulesmith: Preview Paranoia Levels" and click a cell of its matrix.');
    if (cur.kind === 'default') {
      throw new UserError('This preview is of the OWASP-based ruleset with no overrides: there is nothing to apply it to. Open a *.ruleset.json that deploys it, or choose a zone, and preview again.');
    }
    const results: TuningResult[] = [];
    const opts = cur.kind === 'file' ? { target: 'file' as const } : { target: 'zone' as const, zone: cur.zone };
    if (cur.kind === 'file' && cur.uri) await vscode.window.showTextDocument(cur.uri, { preview: false });
    if (level !== cur.level) {
      const r = await vscode.commands.executeCommand<TuningResult | undefined>('rulesmith.setParanoiaLevel', level, opts);
      if (!r) return undefined;
      results.push(r);
      this.current = { ...cur, level };
    }
    if (threshold !== cur.threshold) {
      const r = await vscode.commands.executeCommand<TuningResult | undefined>('rulesmith.setScoreThreshold', threshold, opts);
      if (!r) return results.length > 0 ? results : undefined;
      results.push(r);
      this.current = { ...this.current!, threshold };
    }
    return results;
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
