// rulesmith.previewParanoia: a webview with the paranoia level × threshold matrix of the
// OWASP-based managed ruleset and a chart of requests acted on against the threshold, one
// line per level, for two sets of requests:
//   - attacks: the CRS regression requests (ftw YAML) of the folder in the setting
//     rulesmith.preview.attackCorpus — there, more acted on is better;
//   - your requests: the workspace's `.http` files — there, anything acted on is a likely
//     false positive.
// The deployment previewed is the execute rule of the active `*.ruleset.json`, else the
// chosen zone's managed entry point, else the ruleset with no overrides. The numbers come
// from the core's previewParanoia (the real engine), computed in a worker thread
// (previewWorker.ts); the page is static HTML and SVG (no script; a strict
// Content-Security-Policy).
import { existsSync } from 'node:fs';
import { isAbsolute, join, relative } from 'node:path';
import * as vscode from 'vscode';
import { defaultCatalog } from '../../server/src/managed/catalog';
import { OWASP_RULESET_ID } from '../../server/src/managed/ids';
import { PREVIEW_THRESHOLDS } from '../../server/src/managed/preview';
import { managedExecuteRules } from '../../server/src/managed/editOverrides';
import type { Rule } from '../../server/src/rulesets/model';
import { runCommand, type Ctx } from './commands/context';
import { computePreview, type PreviewInput, type PreviewSet } from './previewCompute';
import { runPreviewWorker } from './previewRun';

export type { PreviewSet } from './previewCompute';

const CHART_THRESHOLDS = [5, 10, 15, 20, 25, 30, 35, 40, 45, 50, 60, 70, 80, 90, 100];
const COLORS = ['#3b82f6', '#10b981', '#f59e0b', '#ef4444'];

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

  private corpusFolder(): string | undefined {
    const raw = vscode.workspace.getConfiguration('rulesmith.preview').get<string>('attackCorpus', '').trim();
    if (!raw) return undefined;
    if (isAbsolute(raw)) return raw;
    const ws = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    return ws ? join(ws, raw) : raw;
  }

  async show(): Promise<PreviewResult | undefined> {
    const t0 = Date.now();
    const result = await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: 'Rulesmith: paranoia preview', cancellable: true }, async (progress, token) => {
      const abort = new AbortController();
      token.onCancellationRequested(() => abort.abort());
      const target = await this.target();
      const dir = this.corpusFolder();
      const input: PreviewInput = {
        execute: target.execute,
        thresholds: [...new Set([...PREVIEW_THRESHOLDS, ...CHART_THRESHOLDS])].sort((a, b) => a - b),
        ...(dir ? { corpusDir: dir, corpusLabel: displayPath(dir) } : {}),
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
    const html = renderHtml(result.target, result.sets, ms, this.corpusFolder() === undefined);
    if (!this.panel) {
      this.panel = vscode.window.createWebviewPanel('rulesmith.paranoiaPreview', 'Paranoia Preview', vscode.ViewColumn.Active, { enableScripts: false, enableCommandUris: false, localResourceRoots: [] });
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

const esc = (s: string) => s.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);

function matrix(set: PreviewSet): string {
  const p = set.preview;
  if (!p) return `<p class="muted">${set.total === 0 ? 'No requests.' : esc(set.source)}</p>`;
  if (p.error) return `<p class="error">${esc(p.error)}</p>`;
  const ths = PREVIEW_THRESHOLDS.filter((t) => p.thresholds.includes(t));
  if (!ths.includes(p.currentThreshold)) ths.push(p.currentThreshold);
  ths.sort((a, b) => a - b);
  const head = ths.map((t) => `<th>threshold ${t}${t === p.currentThreshold ? ' (current)' : ''}</th>`).join('');
  const rows = p.levels
    .map((l) => {
      const cells = ths
        .map((t) => {
          const c = l.cells.find((x) => x.threshold === t)!;
          const pct = set.total ? Math.round((100 * c.actedOn) / set.total) : 0;
          const current = l.level === p.currentLevel && t === p.currentThreshold;
          const tip = c.deciders.map((d) => `${d.description ?? d.ref ?? d.ruleId} (${d.count})`).join('\n');
          return `<td class="${current ? 'current' : ''}" title="${esc(tip)}"><b>${c.actedOn}</b> <span class="muted">(${pct}%)</span></td>`;
        })
        .join('');
      return `<tr><th>PL${l.level}${l.level === p.currentLevel ? ' (current)' : ''}<div class="muted">${l.enabledRules} rules on</div></th>${cells}</tr>`;
    })
    .join('');
  return `<table class="matrix"><thead><tr><th>${esc(set.name)}: acted on</th>${head}</tr></thead><tbody>${rows}</tbody></table>`;
}

function chart(set: PreviewSet): string {
  const p = set.preview;
  if (!p || p.error || set.total === 0) return '';
  const W = 560;
  const H = 260;
  const L = 48;
  const B = 36;
  const xs = CHART_THRESHOLDS;
  const x = (t: number) => L + ((t - xs[0]) / (xs[xs.length - 1] - xs[0])) * (W - L - 16);
  const y = (n: number) => H - B - (n / set.total) * (H - B - 16);
  const lines = p.levels
    .map((l, i) => {
      const pts = xs.map((t) => `${x(t).toFixed(1)},${y(l.cells.find((c) => c.threshold === t)?.actedOn ?? 0).toFixed(1)}`).join(' ');
      return `<polyline points="${pts}" fill="none" stroke="${COLORS[i]}" stroke-width="2"><title>PL${l.level}</title></polyline>`;
    })
    .join('');
  const xTicks = xs.filter((t) => t % 10 === 0 || t === 25).map((t) => `<text x="${x(t)}" y="${H - B + 16}" text-anchor="middle">${t}</text>`).join('');
  const yTicks = [0, 0.25, 0.5, 0.75, 1].map((f) => `<text x="${L - 6}" y="${y(f * set.total) + 4}" text-anchor="end">${Math.round(f * set.total)}</text><line x1="${L}" x2="${W - 16}" y1="${y(f * set.total)}" y2="${y(f * set.total)}" class="grid"/>`).join('');
  const current = `<line x1="${x(p.currentThreshold)}" x2="${x(p.currentThreshold)}" y1="16" y2="${H - B}" class="cur"><title>current threshold ${p.currentThreshold}</title></line>`;
  const legend = p.levels.map((l, i) => `<span class="key" style="border-color:${COLORS[i]}">PL${l.level}</span>`).join(' ');
  return `<figure><svg viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" role="img" aria-label="${esc(set.name)}: requests acted on against threshold">${yTicks}${current}${lines}${xTicks}<text x="${(W + L) / 2}" y="${H - 4}" text-anchor="middle">anomaly score threshold</text></svg><figcaption>${esc(set.name)}: requests acted on by threshold, per paranoia level. ${legend}</figcaption></figure>`;
}

function renderHtml(target: string, sets: readonly PreviewSet[], ms: number, noCorpus: boolean): string {
  const sections = sets
    .map(
      (s) => `<section><h2>${esc(s.name)} <span class="muted">— ${s.total}${s.available > s.total ? ` of ${s.available} (sampled; raise rulesmith.preview.maxCorpusRequests)` : ''} requests from ${esc(s.source)}</span></h2>
<p class="muted">${s.name === 'Attacks' ? 'More acted on is better: these are attacks.' : 'Anything acted on here is a likely false positive: these are your own requests.'}</p>
${matrix(s)}${chart(s)}</section>`,
    )
    .join('\n');
  const hint = noCorpus ? '<p class="muted">No attack corpus: set <code>rulesmith.preview.attackCorpus</code> to a folder of CRS regression tests (ftw YAML) to see what each level catches.</p>' : '';
  return `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:;">
<title>Paranoia Preview</title>
<style>
body{font-family:var(--vscode-font-family);color:var(--vscode-foreground);background:var(--vscode-editor-background);padding:0 16px}
h1{font-size:1.3em}h2{font-size:1.1em;margin-top:1.5em}
.muted{opacity:.7;font-weight:normal}.error{color:var(--vscode-errorForeground)}
table.matrix{border-collapse:collapse;margin:8px 0}
.matrix th,.matrix td{border:1px solid var(--vscode-panel-border,#8884);padding:4px 10px;text-align:right}
.matrix thead th{text-align:center}.matrix td.current{outline:2px solid var(--vscode-focusBorder);}
svg text{fill:var(--vscode-foreground);font-size:11px}.grid{stroke:var(--vscode-panel-border,#8884)}.cur{stroke:var(--vscode-focusBorder);stroke-dasharray:4 3}
.key{border-left:12px solid;padding-left:4px;margin-right:8px}
</style></head><body>
<h1>Paranoia preview</h1>
<p>Deployment: <b>${esc(target)}</b>. Each cell counts the requests the OWASP-based ruleset would act on at that paranoia level and anomaly score threshold (hover for the rules that decide). Computed in ${ms} ms.</p>
${hint}
${sections}
</body></html>`;
}
