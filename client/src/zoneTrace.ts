// "Trace on zone" for `.http` files: besides the local Evaluate (evaluation.ts, against
// ruleset files), a request can be traced against what the chosen zone really runs, with
// the rules service's Trace (POST /accounts/{account_id}/request-tracer/trace): a CodeLens
// "⇢ Trace on <zone>" above each request when signed in with a zone chosen, and the
// command rulesmith.traceOnZone. The request goes to the zone's host (a URL on another
// host is re-pointed at the zone, as if sent to it); the result — the decision, the
// steps phase → ruleset → rule with matched flags and outcomes — opens as Markdown beside.
//
// The requests are the language server's (rulesmith/httpRequests, rulesmith/httpRequest):
// numbered as Evaluate numbers them, malformed ones included, so "request 3" is the same
// request in both lenses.
import * as vscode from 'vscode';
import { HttpRequestRequest, HttpRequestsRequest, type HttpRequestContent, type HttpRequestInfo } from '../../server/src/protocol';
import type { RulesmithClient } from './client';
import { runCommand, targetZone, UserError, type Ctx } from './commands/context';
import { HTTP_SELECTOR } from './evaluation';
import type { TraceResult, TraceStep, Zone } from './api/rulesApi';
import { inlineCode } from './markdownText';
import type { ServerStatus } from './status';
import type { TraceViewState } from './traceViewState';
import { describeRule } from '../../server/src/rulesets/ruleNames';
import { visibleSteps, type TraceViewOptions } from '../../server/src/rulesets/traceView';
import { actedTitle, passedTitle, type VerdictFacts } from '../../server/src/rulesets/verdictWords';

export const ZONE_TRACE_SCHEME = 'rulesmith-zone-trace';

/** The Trace request body for a request of a `.http` file sent to `zone`. */
export function traceBody(req: HttpRequestContent, zone: Zone): Record<string, unknown> {
  const url = new URL(req.url, `https://${zone.name}`);
  const host = url.hostname.toLowerCase();
  if (host !== zone.name && !host.endsWith(`.${zone.name}`)) url.hostname = zone.name;
  const headers: Record<string, string> = {};
  for (const [k, v] of req.headers) if (k.toLowerCase() !== 'host') headers[k] = headers[k] !== undefined ? `${headers[k]}, ${v}` : v;
  const context: Record<string, unknown> = {};
  const ip = req.meta['ip.src'];
  if (ip) context.ip = ip;
  const country = req.meta['ip.src.country'] ?? req.meta['ip.geoip.country'];
  if (country) context.country = country;
  const bot = req.meta['cf.bot_management.score'];
  if (bot && /^\d+$/.test(bot)) context.bot_score = Number(bot);
  return {
    url: url.toString(),
    method: req.method,
    ...(req.httpVersion ? { protocol: req.httpVersion } : {}),
    ...(Object.keys(headers).length ? { headers } : {}),
    ...(req.bodyBase64 ? { body: { base64: req.bodyBase64 } } : {}),
    ...(Object.keys(context).length ? { context } : {}),
  };
}

const mark = (s: TraceStep) => (s.matched ? '✔' : '·');

function stepLines(steps: readonly TraceStep[], depth: number, out: string[]): void {
  for (const s of steps) {
    const pad = '  '.repeat(depth);
    const what = s.type === 'rule' ? `\`${s.step_name}\` ${s.description ?? s.name ?? ''}` : `**${s.name ?? s.step_name}**${s.type === 'phase' ? '' : ' (ruleset)'}`;
    const extra = [s.action, s.outcome, s.score_added ? `+${s.score_added}` : '', s.score !== undefined && s.threshold !== undefined ? `score ${s.score}/${s.threshold}` : '', s.note ?? ''].filter(Boolean).join(' · ');
    out.push(`${pad}- ${mark(s)} ${what}${extra ? ` — ${extra}` : ''}`);
    if (s.trace && s.trace.length) stepLines(s.trace, depth + 1, out);
  }
}

const stepName = (s: TraceStep): string => describeRule({ ref: s.name ?? s.step_name, description: s.description }, 'short') ?? s.step_name;
const LOGGED = new Set(['logged', 'validation-only', 'counted']);

/** What happened besides the decision, from the service's steps: rules that logged, skipped or scored. */
export function zoneVerdictFacts(r: TraceResult): VerdictFacts {
  const logged: string[] = [];
  const skipped: { by: string; what: string }[] = [];
  const by: string[] = [];
  let below: { total: number; threshold?: number } | undefined;
  const walk = (steps: readonly TraceStep[]) => {
    for (const s of steps) {
      if (s.type === 'rule' && s.outcome) {
        if (LOGGED.has(s.outcome)) logged.push(stepName(s));
        else if (s.outcome === 'skip' || s.outcome === 'bypassed') skipped.push({ by: stepName(s), what: s.note ?? 'skips' });
        else if (s.outcome === 'scored' && (s.score_added ?? 0) > 0) by.push(stepName(s));
        else if (s.outcome === 'below-threshold' && s.score !== undefined && (!below || s.score >= below.total)) below = { total: s.score, ...(s.threshold !== undefined ? { threshold: s.threshold } : {}) };
      }
      if (s.trace) walk(s.trace);
    }
  };
  walk(r.trace);
  const d = r.decision;
  const score = d.score !== undefined ? { total: d.score, ...(d.threshold !== undefined ? { threshold: d.threshold } : {}), reached: true, by } : below ? { ...below, reached: false, by } : undefined;
  return { logged, skipped, ...(score ? { score } : {}) };
}

/** The verdict line of a zone trace. */
export function zoneVerdict(r: TraceResult): string {
  const d = r.decision;
  const facts = zoneVerdictFacts(r);
  if (d.action === 'allow-through') return passedTitle(facts);
  const rule = d.description ? `“${d.description}”` : (d.ref ?? (d.rule_id ? describeRule({ ruleId: d.rule_id }, 'short') : undefined));
  return actedTitle(`${d.action}${rule ? ` by ${rule}` : ''}${d.phase ? ` (${d.phase})` : ''}`, facts);
}

export function traceMarkdown(title: string, body: Record<string, unknown>, r: TraceResult, view: TraceViewOptions = {}): string {
  const d = r.decision;
  const verdict = zoneVerdict(r);
  const steps = visibleSteps(r.trace, view);
  const lines = [
    `# ${title}`,
    '',
    `Traced on **${r.zone?.name ?? '?'}** (migration state ${r.migration_state ?? '?'}) by the rules service: ${inlineCode(`${String(body.method)} ${String(body.url)}`)}`,
    '',
    `## Decision: ${verdict}${r.status_code ? ` — HTTP ${r.status_code}` : ''}`,
    '',
  ];
  if (d.score !== undefined) lines.push(`Anomaly score ${d.score}${d.threshold !== undefined ? ` (threshold ${d.threshold})` : ''}.`, '');
  const shown = view.allRules ? 'all rules' : `matched rules only${steps.hidden > 0 ? ` (${steps.hidden} not matched hidden)` : ''}`;
  lines.push('## Steps', '', `✔ matched, · not matched. _Showing ${shown}: switch with the buttons in this view's title bar, or "Rulesmith: Trace — Show All Rules"._`, '');
  stepLines(steps.shown, 0, lines);
  if (r.problems?.length) lines.push('', '## Problems', '', ...r.problems.map((p) => `- ${p}`));
  return `${lines.join('\n')}\n`;
}

export class ZoneTrace implements vscode.CodeLensProvider, vscode.TextDocumentContentProvider {
  private readonly docs = new Map<string, string>();
  /** What each open zone trace was made from, to render it again when the view's switches change. */
  private readonly results = new Map<string, { title: string; body: Record<string, unknown>; result: TraceResult }>();
  private readonly lensesChanged = new vscode.EventEmitter<void>();
  readonly onDidChangeCodeLenses = this.lensesChanged.event;

  constructor(
    private readonly ctx: Ctx,
    private readonly client: RulesmithClient,
    private readonly status: ServerStatus,
    private readonly traceView?: TraceViewState,
  ) {
    traceView?.onDidChange(async (view) => {
      for (const [key, t] of this.results) {
        this.docs.set(key, traceMarkdown(t.title, t.body, t.result, view));
        this.docChanged.fire(vscode.Uri.parse(key));
      }
    });
  }

  private readonly docChanged = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.docChanged.event;

  /** The current text of a zone trace view (tests read it). */
  traceText(uri: string): string | undefined {
    return this.docs.get(uri);
  }

  register(): vscode.Disposable[] {
    return [
      this.lensesChanged,
      this.docChanged,
      vscode.languages.registerCodeLensProvider(HTTP_SELECTOR, this),
      vscode.workspace.registerTextDocumentContentProvider(ZONE_TRACE_SCHEME, this),
      this.ctx.connection.onDidChange(() => this.lensesChanged.fire()),
      // Lenses asked for before the server ran came back empty: ask again.
      this.status.onDidChange((s) => {
        if (s === 'running') this.lensesChanged.fire();
      }),
      vscode.commands.registerCommand('rulesmith.traceOnZone', (uri?: unknown, index?: unknown) => runCommand(this.ctx, 'Trace on zone', () => this.trace(uri, typeof index === 'number' ? index : undefined))),
    ];
  }

  private running() {
    const lc = this.client.languageClient;
    return lc && lc.isRunning() ? lc : undefined;
  }

  /** A lens above each request Evaluate would evaluate (a malformed one has Evaluate's warning instead). */
  async provideCodeLenses(doc: vscode.TextDocument, token: vscode.CancellationToken): Promise<vscode.CodeLens[]> {
    const c = this.ctx.connection;
    const lc = this.running();
    if (!c.state().signedIn || !c.zoneId || !lc) return [];
    let requests: readonly HttpRequestInfo[];
    try {
      ({ requests } = await lc.sendRequest(HttpRequestsRequest, { httpUri: doc.uri.toString(), httpText: doc.getText() }, token));
    } catch (e) {
      if (!token.isCancellationRequested) this.ctx.output.warn(`Listing the requests of ${doc.uri.fsPath}: ${e instanceof Error ? e.message : String(e)}`);
      return [];
    }
    return requests
      .filter((r) => r.problems.length === 0)
      .map((r) => new vscode.CodeLens(new vscode.Range(r.line, 0, r.line, 0), { title: '⇢ Trace on zone', command: 'rulesmith.traceOnZone', arguments: [doc.uri.toString(), r.index], tooltip: 'Trace this request against what the chosen zone runs (the rules service\'s Trace)' }));
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.docs.get(uri.toString()) ?? '# Trace\n\nThis trace is gone: trace the request again.\n';
  }

  /** Traces request `index` (0-based, Evaluate's numbering), or the one under the cursor. */
  async trace(arg: unknown, index: number | undefined): Promise<(TraceResult & { markdown: string; uri: vscode.Uri }) | undefined> {
    const uri = typeof arg === 'string' ? vscode.Uri.parse(arg) : arg instanceof vscode.Uri ? arg : vscode.window.activeTextEditor?.document.uri;
    if (!uri || !uri.path.endsWith('.http')) throw new UserError('Open a .http file and put the cursor in a request to trace it on the zone.');
    const file = uri.path.split('/').pop();
    const doc = await vscode.workspace.openTextDocument(uri);
    const lc = this.running();
    if (!lc) throw new UserError('The Rulesmith language server is not running, and it reads the requests: see "Rulesmith: Show Output", or reload the window.');
    const ed = vscode.window.activeTextEditor;
    const where = index !== undefined ? { index } : { line: ed && ed.document.uri.toString() === uri.toString() ? ed.selection.active.line : 0 };
    const found = await lc.sendRequest(HttpRequestRequest, { httpUri: uri.toString(), httpText: doc.getText(), ...where });
    if (found.count === 0) throw new UserError(`${file} has no request to trace.`);
    const info = found.request;
    if (!info) throw new UserError(`There is no request ${(index ?? 0) + 1} in ${file}: it has ${found.count}.`);
    const named = `Request ${info.index + 1}${info.name ? ` "${info.name}"` : ''}`;
    if (!found.content) throw new UserError(`${named} of ${file} cannot be traced: ${info.problems[0] ?? 'it is malformed'}.`);
    const zone = await targetZone(this.ctx, undefined);
    const accountId = zone.account?.id ?? this.ctx.connection.accountId;
    if (!accountId) throw new UserError(`The account of ${zone.name} is unknown: choose the zone again in the Zones view.`);
    const body = traceBody(found.content, zone);
    const api = await this.ctx.connection.api();
    const result = await vscode.window.withProgress({ location: vscode.ProgressLocation.Window, title: `Tracing on ${zone.name}` }, () => api.trace(accountId, body));
    const title = `${info.name ?? `Request ${info.index + 1}`} — traced on ${zone.name}`;
    const markdown = traceMarkdown(title, body, result, this.traceView?.view);
    const traceUri = vscode.Uri.from({ scheme: ZONE_TRACE_SCHEME, path: `/${zone.name} — ${file} request ${info.index + 1}.md`, query: `t=${Date.now()}` });
    this.docs.set(traceUri.toString(), markdown);
    this.results.set(traceUri.toString(), { title, body, result });
    this.traceView?.opened();
    try {
      await vscode.commands.executeCommand('markdown.showPreviewToSide', traceUri);
    } catch {
      await vscode.window.showTextDocument(traceUri, { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true });
    }
    return { ...result, markdown, uri: traceUri };
  }
}
