// Pull and deploy an entry point ruleset:
//   rulesmith.pullEntryPoint — the zone's entry point of a phase, as served (id, version,
//     last_updated included), to `rulesets/<zone>/<phase>.ruleset.json` in the workspace.
//     What was pulled (zone, phase, version) is remembered per file in the workspace state;
//     the file's own `version` field carries it too.
//   rulesmith.deploy — local validation first (no deploy with errors), then the zone's
//     current version: if it is not the version pulled, a conflict is reported (with "Pull
//     and Re-apply My Edits", pullReapply.ts) and nothing is written; then the diff first
//     (vscode.diff, both sides canonical JSON, the summary in its title, a hover giving each
//     rule's id) and the question in a non-modal notification (Deploy / Cancel) that names
//     rules by description or ref; then the PUT; then the file's `version` and
//     `last_updated` follow the zone, and the views refresh.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { applyEdits, getLocation, modify } from 'jsonc-parser';
import * as vscode from 'vscode';
import type { Phase, Rule, Ruleset } from '../../../server/src/rulesApi';
import { canonicalJson, diffDetails, diffRulesets, diffSummary, entryPointBody, type RulesetDiff } from '../../../server/src/rulesets/diff';
import { WAF_PHASES } from '../../../server/src/rulesets/engine';
import { validateRulesetJson } from '../../../server/src/rulesets/validate';
import { unwrapRuleset } from '../../../server/src/rulesets/zoneFile';
import { serviceCatalog } from '../api/catalog';
import { planOf } from '../api/connection';
import type { Zone } from '../api/rulesApi';
import * as ui from '../ui';
import { PHASE_LABELS } from '../views/zonesView';
import { refreshViews, reportWritten, runCommand, targetZone, UserError, type Ctx } from './context';

export const ZONE_SCHEME = 'rulesmith-zone';
const PULLED_KEY = 'rulesmith.pulled';

export interface Pulled {
  readonly zoneId: string;
  readonly zoneName: string;
  readonly accountId?: string;
  readonly phase: string;
  /** The entry point version pulled (undefined: the zone had none). */
  readonly version?: string;
  readonly baseUrl?: string;
  /** Which service: "local" (its port changes on restart) or the base URL. */
  readonly service?: string;
}

export interface DeployResult {
  readonly deployed: boolean;
  readonly zone: string;
  readonly phase: string;
  readonly version?: string;
  readonly previousVersion?: string;
  readonly summary: string;
  readonly diff?: RulesetDiff;
  /** The service's warnings about what was deployed. */
  readonly warnings?: readonly string[];
  /** The title of the diff shown before the question. */
  readonly diffTitle?: string;
}

function phaseArg(arg: unknown): string | undefined {
  if (typeof arg === 'string' && (WAF_PHASES as readonly string[]).includes(arg)) return arg;
  if (arg && typeof arg === 'object' && typeof (arg as { phase?: unknown }).phase === 'string') return (arg as { phase: string }).phase;
  return undefined;
}

function docArg(arg: unknown): vscode.Uri | undefined {
  if (arg instanceof vscode.Uri) return arg;
  if (typeof arg === 'string') return vscode.Uri.parse(arg);
  return vscode.window.activeTextEditor?.document.uri;
}

export class DeployCommands implements vscode.TextDocumentContentProvider, vscode.HoverProvider {
  private readonly contents = new Map<string, string>();
  /** The rules of each side of a deploy diff, for the hover that shows their ids. */
  private readonly rulesOf = new Map<string, readonly Rule[]>();
  private readonly contentChanged = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.contentChanged.event;

  constructor(private readonly ctx: Ctx) {}

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.contents.get(uri.toString()) ?? '{}\n';
  }

  register(): vscode.Disposable[] {
    return [
      this.contentChanged,
      vscode.workspace.registerTextDocumentContentProvider(ZONE_SCHEME, this),
      vscode.languages.registerHoverProvider({ scheme: ZONE_SCHEME }, this),
      vscode.commands.registerCommand('rulesmith.pullEntryPoint', (zone?: unknown, phase?: unknown) => runCommand(this.ctx, 'Pull entry point', () => this.pull(zone, phaseArg(phase) ?? phaseArg(zone)))),
      vscode.commands.registerCommand('rulesmith.deploy', (uri?: unknown) => runCommand(this.ctx, 'Deploy', () => this.deploy(docArg(uri)))),
    ];
  }

  private service(): string {
    const c = this.ctx.connection;
    return c.isLocal ? 'local' : c.configuredBaseUrl;
  }

  private pulledMap(): Record<string, Pulled> {
    return this.ctx.context.workspaceState.get<Record<string, Pulled>>(PULLED_KEY) ?? {};
  }

  pulledOf(uri: vscode.Uri): Pulled | undefined {
    return this.pulledMap()[uri.toString()];
  }

  /** Records what `uri` counts as pulled from (Pull and re-apply moves it to the zone's current version). */
  rememberPulled(uri: vscode.Uri, p: Pulled): Promise<void> {
    return this.remember(uri, p);
  }

  private async remember(uri: vscode.Uri, p: Pulled): Promise<void> {
    await this.ctx.context.workspaceState.update(PULLED_KEY, { ...this.pulledMap(), [uri.toString()]: p });
  }

  private async pickPhase(): Promise<string | undefined> {
    const p = await ui.pick(
      WAF_PHASES.map((ph) => ({ label: PHASE_LABELS[ph] ?? ph, description: ph, value: ph as string })),
      { title: 'Which phase?' },
    );
    return p?.value;
  }

  private fileFor(zone: Zone, phase: string): vscode.Uri {
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? join(this.ctx.context.globalStorageUri.fsPath, 'pulled');
    return vscode.Uri.file(join(folder, 'rulesets', zone.name.replace(/[^\w.-]+/g, '_'), `${phase}.ruleset.json`));
  }

  async pull(zoneArg: unknown, phaseIn: string | undefined): Promise<{ uri: vscode.Uri; version?: string } | undefined> {
    const zone = await targetZone(this.ctx, zoneArg);
    const phase = phaseIn ?? (await this.pickPhase());
    if (!phase) return undefined;
    const api = await this.ctx.connection.api();
    const ruleset = await ui.progress(`Rulesmith: pulling ${phase} of ${zone.name}…`, () => api.getEntryPoint(zone.id, phase), 'window');
    const uri = this.fileFor(zone, phase);
    const name = uri.path.split('/').pop();
    const open = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
    const body: Ruleset = ruleset ?? { name: 'default', kind: 'zone', phase: phase as Phase, rules: [] };
    const text = `${JSON.stringify(body, null, 2)}\n`;
    // The file may hold edits not deployed yet (saved or not): replace them only when asked.
    const existing = open ? open.getText() : existsSync(uri.fsPath) ? readFileSync(uri.fsPath, 'utf8') : undefined;
    if (existing !== undefined && !sameContent(existing, body)) {
      const a = await ui.confirm(
        `${name} differs from ${zone.name}'s ${phase} entry point${open?.isDirty ? ' and has unsaved changes' : ''}.`,
        `Pulling replaces the file with ${ruleset ? `version ${ruleset.version}` : 'an empty entry point'}; the changes in the file that are not deployed are lost. To keep them, deploy the file instead (a changed zone is reported as a conflict), or copy it first.`,
        'Replace',
      );
      if (a !== 'Replace') return undefined;
    }
    mkdirSync(dirname(uri.fsPath), { recursive: true });
    if (open) {
      const edit = new vscode.WorkspaceEdit();
      edit.replace(uri, new vscode.Range(0, 0, open.lineCount, 0), text);
      await vscode.workspace.applyEdit(edit);
      await open.save();
    } else writeFileSync(uri.fsPath, text);
    await this.remember(uri, { zoneId: zone.id, zoneName: zone.name, accountId: zone.account?.id, phase, version: ruleset?.version, baseUrl: this.ctx.connection.state().baseUrl, service: this.service() });
    await vscode.window.showTextDocument(uri, { preview: false });
    if (!ruleset) void ui.info(`${zone.name} has no entry point in ${phase} yet: ${uri.path.split('/').pop()} starts empty; deploying creates it.`);
    else void ui.info(`Pulled ${phase} of ${zone.name} (version ${ruleset.version}, ${ruleset.rules?.length ?? 0} rules).`);
    return { uri, version: ruleset?.version };
  }

  /** The zone's version beside the file's, canonical JSON; `summary` leads the title (the question is asked beside, not over it). */
  private async showDiff(zone: Zone, phase: string, current: Ruleset | undefined, mine: Ruleset, label: string, summary?: string): Promise<string> {
    const stamp = Date.now();
    const left = vscode.Uri.from({ scheme: ZONE_SCHEME, path: `/${zone.name}/${phase}.zone.json`, query: `v=${current?.version ?? 'none'}&t=${stamp}` });
    const right = vscode.Uri.from({ scheme: ZONE_SCHEME, path: `/${zone.name}/${phase}.local.json`, query: `t=${stamp}` });
    this.contents.set(left.toString(), canonicalJson(current));
    this.contents.set(right.toString(), canonicalJson(mine));
    this.rulesOf.set(left.toString(), current?.rules ?? []);
    this.rulesOf.set(right.toString(), mine.rules ?? []);
    const title = `${summary ? `${summary} — ` : ''}${zone.name} ${phase}: zone ${current ? `version ${current.version}` : '(none)'} ↔ ${label}`;
    await vscode.commands.executeCommand('vscode.diff', left, right, title, { preview: true, preserveFocus: true });
    return title;
  }

  /** Hover on a rule in the deploy diff: its id and ref (messages name rules by description). */
  provideHover(doc: vscode.TextDocument, pos: vscode.Position): vscode.Hover | undefined {
    const rules = this.rulesOf.get(doc.uri.toString());
    if (!rules) return undefined;
    const path = getLocation(doc.getText(), doc.offsetAt(pos)).path;
    if (path[0] !== 'rules' || typeof path[1] !== 'number') return undefined;
    // The canonical text drops ids of rules that have a ref: find the rule by ref, else by position.
    let index = path[1];
    try {
      const shown = (JSON.parse(doc.getText()) as { rules?: Rule[] }).rules?.[index];
      if (shown?.ref) index = rules.findIndex((r) => r.ref === shown.ref);
    } catch {
      // The text is ours and valid; the position holds.
    }
    const rule = rules[index];
    if (!rule) return undefined;
    const lines = [`**${rule.description?.trim() || rule.ref || `Rule ${index + 1}`}**`, '', `- id: \`${rule.id ?? '(new: the service assigns one)'}\``];
    if (rule.ref) lines.push(`- ref: \`${rule.ref}\``);
    return new vscode.Hover(new vscode.MarkdownString(lines.join('\n')));
  }

  /** The confirmation's diff shows the zone as it was: once deployed it is stale, so it closes. */
  private async closeDiffs(zone: Zone, phase: string): Promise<void> {
    const prefix = `/${zone.name}/${phase}.`;
    const stale = vscode.window.tabGroups.all
      .flatMap((g) => g.tabs)
      .filter((t) => t.input instanceof vscode.TabInputTextDiff && t.input.original.scheme === ZONE_SCHEME && t.input.original.path.startsWith(prefix));
    if (stale.length > 0) await vscode.window.tabGroups.close(stale, true);
    for (const key of [...this.contents.keys()]) {
      if (!vscode.Uri.parse(key).path.startsWith(prefix)) continue;
      this.contents.delete(key);
      this.rulesOf.delete(key);
    }
  }

  async deploy(uri: vscode.Uri | undefined): Promise<DeployResult | undefined> {
    if (!uri || !uri.path.endsWith('.json')) throw new UserError('Open the *.ruleset.json file to deploy (or pull one with "Rulesmith: Pull Entry Point").');
    const doc = await vscode.workspace.openTextDocument(uri);
    const name = uri.path.split('/').pop() ?? 'the file';
    const text = doc.getText();
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch (e) {
      throw new UserError(`Not deployed: ${name} is not valid JSON (${e instanceof Error ? e.message : String(e)}); fix it (see the Problems panel) and deploy again.`);
    }
    const parsed = unwrapRuleset(raw) as Ruleset;
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed) || !Array.isArray(parsed.rules)) {
      throw new UserError(`Not deployed: ${name} is not a ruleset (it has no "rules" array). Deploy a *.ruleset.json, e.g. one made with "Rulesmith: Pull Entry Point".`, [
        { title: 'Pull Entry Point', run: () => vscode.commands.executeCommand('rulesmith.pullEntryPoint') },
      ]);
    }
    // Only an entry point goes to a phase's entry point: a custom or managed ruleset's
    // rules would replace everything the zone runs in that phase.
    const kind = (parsed as { kind?: unknown }).kind;
    if (kind !== undefined && kind !== 'zone') {
      throw new UserError(`Not deployed: ${name} is a ruleset of kind "${String(kind)}", not a zone entry point; deploying it would replace every rule of the zone's ${parsed.phase ?? 'phase'} entry point. Deploy the entry point that executes it (pull it, add an execute rule, deploy).`);
    }
    const pulled = this.pulledOf(uri);
    if (pulled?.service && pulled.service !== this.service()) {
      throw new UserError(
        `Not deployed: ${name} was pulled from ${pulled.zoneName} on ${pulled.service === 'local' ? 'the local rules service' : pulled.service}, but Rulesmith is now connected to ${this.service() === 'local' ? 'the local rules service' : this.service()}. Set rulesmith.api.baseUrl back, or pull the entry point from this service.`,
      );
    }
    const zone = pulled ? await this.ctx.connection.zone(pulled.zoneId) : await targetZone(this.ctx, undefined);
    const phase = parsed.phase ?? pulled?.phase ?? (await this.pickPhase());
    if (!phase) return undefined;
    if (!(WAF_PHASES as readonly string[]).includes(phase)) throw new UserError(`${name} is for phase ${phase}; Rulesmith deploys ${WAF_PHASES.join(', ')}.`);
    if (pulled && parsed.phase && pulled.phase !== parsed.phase) throw new UserError(`${name} was pulled from ${pulled.phase} but now says phase ${parsed.phase}; put the phase back or pull the other phase.`);
    const api = await this.ctx.connection.api();

    // 1. Local validation: errors stop here. 2. The zone's current version.
    const { problems, current } = await ui.progress(`Rulesmith: checking ${name} and reading ${zone.name}'s ${phase} entry point…`, async () => {
      const { catalog } = await serviceCatalog(api, zone.account?.id ?? this.ctx.connection.accountId);
      return { problems: validateRulesetJson(text, { catalog, plan: planOf(zone), phase: phase as Phase }), current: await api.getEntryPoint(zone.id, phase) };
    });
    const errors = problems.filter((p) => p.severity === 'error');
    if (errors.length > 0) {
      const first = errors[0];
      const at = doc.positionAt(first.start);
      const where = text.slice(first.start, first.end);
      const quoted = where.length > 0 && where.length <= 60 && !first.message.includes(where) ? ` ${JSON.stringify(where)}` : '';
      throw new UserError(`Not deployed: ${name} has ${errors.length} error${errors.length === 1 ? '' : 's'} (line ${at.line + 1}: ${first.message}${quoted}). Fix them (see the Problems panel) and deploy again.`, [
        { title: 'Show Problems', run: () => vscode.commands.executeCommand('workbench.actions.view.problems') },
      ]);
    }

    // The conflict check.
    const base = pulled ? pulled.version : parsed.version;
    if (current && base !== undefined && current.version !== base) {
      throw new UserError(
        `Conflict: ${zone.name}'s ${phase} entry point changed since ${name} was pulled (pulled version ${base}, now version ${current.version}). Nothing was deployed. "Pull and Re-apply My Edits" merges your edits onto version ${current.version} (a rule changed on both sides opens in the merge editor); then deploy again.`,
        [
          ...(pulled?.version !== undefined ? [{ title: 'Pull and Re-apply My Edits', run: () => vscode.commands.executeCommand('rulesmith.pullAndReapply', uri) }] : []),
          { title: 'Compare with Zone', run: () => this.showDiff(zone, phase, current, parsed, name) },
        ],
      );
    }
    if (!current && base !== undefined) {
      throw new UserError(`Conflict: ${zone.name}'s ${phase} entry point was deleted since ${name} was pulled (version ${base}). Nothing was deployed; pull again to start from the zone's state.`);
    }

    // 3. The diff and the confirmation.
    const diff = diffRulesets(current, parsed);
    const summary = diffSummary(diff);
    if (diff.identical) {
      void ui.info(`${name} is what ${zone.name} already runs in ${phase} (version ${current?.version ?? 'none'}); nothing to deploy.`);
      return { deployed: false, zone: zone.name, phase, version: current?.version, summary };
    }
    // The diff first, its title leading with the summary; the question in a notification
    // (non-modal: the diff stays readable and scrollable while it is open).
    const diffTitle = await this.showDiff(zone, phase, current, parsed, name, summary);
    const notPulled = current && base === undefined ? ` ${name} was not pulled from this zone: deploying replaces version ${current.version} as the diff shows.` : '';
    const details = diffDetails(diff, 6);
    this.ctx.output.info(`Deploy ${name} to ${zone.name} (${phase}) asked: ${summary}; ${[...diff.added, ...diff.removed, ...diff.changed, ...diff.moved].map((c) => `${c.label}${c.id ? ` (id ${c.id})` : ''}`).join('; ')}`);
    const answer = await ui.ask(`Deploy ${name} to ${zone.name} (${phase})? ${summary}: ${details.join('; ')}. The zone runs ${current ? `version ${current.version}` : 'no entry point'} now; the diff is open (hover a rule for its id).${notPulled}`, 'Deploy', 'Cancel');
    if (answer !== 'Deploy') return { deployed: false, zone: zone.name, phase, version: current?.version, summary, diff, diffTitle };

    // 4. PUT — unless the zone changed while the question was open (the API has no
    // conditional write: this re-read narrows the window to one round trip) —, then the
    // file follows the zone.
    const result = await ui.progress(`Rulesmith: deploying ${name} to ${zone.name}…`, async (report) => {
      report('checking that the zone did not change…');
      const now = await api.getEntryPoint(zone.id, phase);
      if (now?.version !== current?.version) {
        throw new UserError(
          `Conflict: ${zone.name}'s ${phase} entry point changed while the deploy was being confirmed (version ${current?.version ?? 'none'} → ${now?.version ?? 'none'}). Nothing was deployed: compare with the zone, then deploy again.`,
          [{ title: 'Compare with Zone', run: () => this.showDiff(zone, phase, now, parsed, name) }],
        );
      }
      report('writing…');
      return api.putEntryPoint(zone.id, phase, entryPointBody(parsed));
    });
    await this.closeDiffs(zone, phase);
    await this.followVersion(doc, result);
    await this.remember(uri, { zoneId: zone.id, zoneName: zone.name, accountId: zone.account?.id, phase, version: result.version, baseUrl: this.ctx.connection.state().baseUrl, service: this.service() });
    refreshViews(this.ctx);
    this.ctx.output.info(`Deployed ${name} to ${zone.name} ${phase}: version ${current?.version ?? 'none'} → ${result.version} (${summary})`);
    const warnings = reportWritten(this.ctx, `Deployed to ${zone.name} (${phase}): version ${result.version}. ${summary}.`, `Deploy of ${name} to ${zone.name}`, result.warnings, (n) => `It is deployed, with ${n} warning${n === 1 ? '' : 's'} from the service:`);
    return { deployed: true, zone: zone.name, phase, version: result.version, previousVersion: current?.version, summary, diff, diffTitle, ...(warnings.length ? { warnings } : {}) };
  }

  /** Sets the file's `version` and `last_updated` to the deployed ones (minimal edits) and saves it. */
  private async followVersion(doc: vscode.TextDocument, result: Ruleset): Promise<void> {
    let text = doc.getText();
    // Only a plain ruleset object (not an API response wrapped in "result") is edited.
    if (!/^\s*\{[\s\S]*"rules"\s*:/.test(text) || /^\s*\{\s*"result"/.test(text)) return;
    const opts = { formattingOptions: { tabSize: 2, insertSpaces: true } };
    for (const [k, v] of [
      ['version', result.version],
      ['last_updated', result.last_updated],
      ['id', result.id],
    ] as const) {
      if (v === undefined) continue;
      text = applyEdits(text, modify(text, [k], v, opts));
    }
    if (text === doc.getText()) return;
    const edit = new vscode.WorkspaceEdit();
    edit.replace(doc.uri, new vscode.Range(doc.positionAt(0), doc.positionAt(doc.getText().length)), text);
    await vscode.workspace.applyEdit(edit);
    if (doc.uri.scheme === 'file' || existsSync(doc.uri.fsPath)) await doc.save();
  }
}

/** Whether a file's text holds what `ruleset` deploys, at its version (formatting aside). */
function sameContent(text: string, ruleset: Ruleset): boolean {
  try {
    const mine = unwrapRuleset(JSON.parse(text)) as Ruleset;
    return typeof mine === 'object' && mine !== null && Array.isArray(mine.rules) && mine.version === ruleset.version && canonicalJson(mine) === canonicalJson(ruleset);
  } catch {
    return false;
  }
}
