// "Trace on zone" for `.http` files: besides the local Evaluate (evaluation.ts, against
// ruleset files), a request can be traced against what the chosen zone really runs, with
// the rules service's Trace (POST /accounts/{account_id}/request-tracer/trace): a CodeLens
// "⇢ Trace on <zone>" above each request when signed in with a zone chosen, and the
// command rulesmith.traceOnZone. The request goes to the zone's host (a URL on another
// host is re-pointed at the zone, as if sent to it); the result — the decision, the
// steps phase → ruleset → rule with matched flags and outcomes — opens as Markdown beside.
import * as vscode from 'vscode';
import { parseHttpFile } from '../../server/src/requests/http';
import type { SampleRequest } from '../../server/src/requests/types';
import { runCommand, targetZone, UserError, type Ctx } from './commands/context';
import { HTTP_SELECTOR } from './evaluation';
import type { Zone } from './api/rulesApi';

export const ZONE_TRACE_SCHEME = 'rulesmith-zone-trace';

export interface TraceStep {
  readonly step_name: string;
  readonly type: 'phase' | 'ruleset' | 'rule';
  readonly matched: boolean;
  readonly name?: string;
  readonly description?: string;
  readonly action?: string;
  readonly expression?: string;
  readonly outcome?: string;
  readonly score_added?: number;
  readonly score?: number;
  readonly threshold?: number;
  readonly note?: string;
  readonly trace?: readonly TraceStep[];
}

export interface ZoneTraceResult {
  readonly status_code?: number;
  readonly trace: readonly TraceStep[];
  readonly decision: { action: string; phase?: string; rule_id?: string; ref?: string; description?: string; score?: number; threshold?: number };
  readonly zone?: { id: string; name: string };
  readonly migration_state?: string;
  readonly problems?: readonly string[];
}

/** The Trace request body for a sample request sent to `zone`. */
export function traceBody(req: SampleRequest, zone: Zone): Record<string, unknown> {
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
    ...(req.body !== undefined && req.body !== '' ? { body: { base64: Buffer.from(req.body, 'latin1').toString('base64') } } : {}),
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

export function traceMarkdown(title: string, body: Record<string, unknown>, r: ZoneTraceResult): string {
  const d = r.decision;
  const verdict = d.action === 'allow-through' ? 'Passed — no rule acted' : `${d.action}${d.description ? ` by “${d.description}”` : d.ref ? ` by ${d.ref}` : ''}${d.phase ? ` (${d.phase})` : ''}`;
  const lines = [
    `# ${title}`,
    '',
    `Traced on **${r.zone?.name ?? '?'}** (migration state ${r.migration_state ?? '?'}) by the rules service: \`${body.method} ${body.url}\``,
    '',
    `## Decision: ${verdict}${r.status_code ? ` — HTTP ${r.status_code}` : ''}`,
    '',
  ];
  if (d.score !== undefined) lines.push(`Anomaly score ${d.score}${d.threshold !== undefined ? ` (threshold ${d.threshold})` : ''}.`, '');
  lines.push('## Steps', '', '✔ matched, · not matched.', '');
  stepLines(r.trace, 0, lines);
  if (r.problems?.length) lines.push('', '## Problems', '', ...r.problems.map((p) => `- ${p}`));
  return `${lines.join('\n')}\n`;
}

export class ZoneTrace implements vscode.CodeLensProvider, vscode.TextDocumentContentProvider {
  private readonly docs = new Map<string, string>();
  private readonly lensesChanged = new vscode.EventEmitter<void>();
  readonly onDidChangeCodeLenses = this.lensesChanged.event;

  constructor(private readonly ctx: Ctx) {}

  register(): vscode.Disposable[] {
    return [
      this.lensesChanged,
      vscode.languages.registerCodeLensProvider(HTTP_SELECTOR, this),
      vscode.workspace.registerTextDocumentContentProvider(ZONE_TRACE_SCHEME, this),
      this.ctx.connection.onDidChange(() => this.lensesChanged.fire()),
      vscode.commands.registerCommand('rulesmith.traceOnZone', (uri?: unknown, index?: unknown) => runCommand(this.ctx, 'Trace on zone', () => this.trace(uri, typeof index === 'number' ? index : undefined))),
    ];
  }

  provideCodeLenses(doc: vscode.TextDocument): vscode.CodeLens[] {
    const c = this.ctx.connection;
    if (!c.state().signedIn || !c.zoneId) return [];
    const { requests } = parseHttpFile(doc.getText());
    return requests.map((r, index) => {
      const line = r.source?.line ?? 0;
      return new vscode.CodeLens(new vscode.Range(line, 0, line, 0), { title: '⇢ Trace on zone', command: 'rulesmith.traceOnZone', arguments: [doc.uri.toString(), index], tooltip: 'Trace this request against what the chosen zone runs (the rules service\'s Trace)' });
    });
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.docs.get(uri.toString()) ?? '# Trace\n\nThis trace is gone: trace the request again.\n';
  }

  async trace(arg: unknown, index: number | undefined): Promise<(ZoneTraceResult & { markdown: string; uri: vscode.Uri }) | undefined> {
    const uri = typeof arg === 'string' ? vscode.Uri.parse(arg) : arg instanceof vscode.Uri ? arg : vscode.window.activeTextEditor?.document.uri;
    if (!uri || !uri.path.endsWith('.http')) throw new UserError('Open a .http file and put the cursor in a request to trace it on the zone.');
    const doc = await vscode.workspace.openTextDocument(uri);
    const { requests } = parseHttpFile(doc.getText());
    if (requests.length === 0) throw new UserError(`${uri.path.split('/').pop()} has no request to trace.`);
    if (index === undefined) {
      const ed = vscode.window.activeTextEditor;
      const line = ed && ed.document.uri.toString() === uri.toString() ? ed.selection.active.line : 0;
      const above = requests.map((r, i) => ({ r, i })).filter(({ r }) => (r.source?.line ?? 0) <= line);
      index = above.length ? above[above.length - 1].i : 0;
    }
    const req = requests[index];
    if (!req) throw new UserError(`There is no request ${index + 1} in ${uri.path.split('/').pop()}.`);
    const zone = await targetZone(this.ctx, undefined);
    const accountId = zone.account?.id ?? this.ctx.connection.accountId;
    if (!accountId) throw new UserError(`The account of ${zone.name} is unknown: choose the zone again in the Zones view.`);
    const body = traceBody(req, zone);
    const api = await this.ctx.connection.api();
    const result = (await vscode.window.withProgress({ location: vscode.ProgressLocation.Window, title: `Tracing on ${zone.name}` }, () => api.trace(accountId, body))) as ZoneTraceResult;
    const title = `${req.name ?? `Request ${index + 1}`} — traced on ${zone.name}`;
    const markdown = traceMarkdown(title, body, result);
    const traceUri = vscode.Uri.from({ scheme: ZONE_TRACE_SCHEME, path: `/${zone.name} — ${uri.path.split('/').pop()} request ${index + 1}.md`, query: `t=${Date.now()}` });
    this.docs.set(traceUri.toString(), markdown);
    try {
      await vscode.commands.executeCommand('markdown.showPreviewToSide', traceUri);
    } catch {
      await vscode.window.showTextDocument(traceUri, { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true });
    }
    return { ...result, markdown, uri: traceUri };
  }
}
