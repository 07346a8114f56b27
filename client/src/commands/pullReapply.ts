// rulesmith.pullAndReapply — "Pull and re-apply my edits", for a pulled `*.ruleset.json`
// whose zone changed since (a deploy then reports a conflict): the file's rules are merged
// three ways (server/src/rulesets/ruleMerge.ts) — the version pulled (read back from the
// service's entry point versions), the file now, the zone now. Without conflicts the file
// becomes the merge, on top of the zone's current version, ready to deploy. With
// conflicts the file gets Git's conflict markers and VS Code's merge editor opens on it
// (your edits ↔ the zone, over the version pulled); either way the file now counts as
// pulled at the zone's current version, so the deploy after it goes through.
import * as vscode from 'vscode';
import type { Ruleset } from '../../../server/src/rulesApi';
import { mergedText, mergeRules, type MergeConflict } from '../../../server/src/rulesets/ruleMerge';
import { unwrapRuleset } from '../../../server/src/rulesets/zoneFile';
import * as ui from '../ui';
import { runCommand, UserError, type Ctx } from './context';
import type { DeployCommands } from './deploy';

export const MERGE_SCHEME = 'rulesmith-merge';

export interface ReapplyResult {
  /** The zone had not changed since the pull: nothing to merge. */
  readonly upToDate?: boolean;
  /** The zone's version the file is now based on. */
  readonly version?: string;
  readonly conflicts: readonly string[];
  readonly reapplied: number;
  readonly fromZone: number;
  /** The merge editor opened (conflicts only). */
  readonly mergeEditor?: boolean;
}

export class PullReapply implements vscode.TextDocumentContentProvider {
  private readonly texts = new Map<string, string>();

  constructor(
    private readonly ctx: Ctx,
    private readonly deploy: DeployCommands,
  ) {}

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.texts.get(uri.toString()) ?? '{}\n';
  }

  register(): vscode.Disposable[] {
    return [
      vscode.workspace.registerTextDocumentContentProvider(MERGE_SCHEME, this),
      vscode.commands.registerCommand('rulesmith.pullAndReapply', (uri?: unknown) =>
        runCommand(this.ctx, 'Pull and re-apply my edits', () => this.run(uri instanceof vscode.Uri ? uri : typeof uri === 'string' ? vscode.Uri.parse(uri) : vscode.window.activeTextEditor?.document.uri)),
      ),
    ];
  }

  async run(uri: vscode.Uri | undefined): Promise<ReapplyResult | undefined> {
    if (!uri || !uri.path.endsWith('.json')) throw new UserError('Open the pulled *.ruleset.json whose edits should be re-applied on the zone\'s current version.');
    const name = uri.path.split('/').pop() ?? 'the file';
    const pulled = this.deploy.pulledOf(uri);
    if (!pulled || pulled.version === undefined) {
      throw new UserError(`${name} was not pulled from a zone's entry point (or the zone had none then): there is no version to merge from. Pull the entry point, then make your edits.`, [
        { title: 'Pull Entry Point', run: () => vscode.commands.executeCommand('rulesmith.pullEntryPoint') },
      ]);
    }
    const doc = await vscode.workspace.openTextDocument(uri);
    let mine: Ruleset;
    try {
      mine = unwrapRuleset(JSON.parse(doc.getText())) as Ruleset;
    } catch (e) {
      throw new UserError(`${name} is not valid JSON (${e instanceof Error ? e.message : String(e)}): fix it first, then pull and re-apply.`);
    }
    if (!mine || !Array.isArray(mine.rules)) throw new UserError(`${name} has no "rules" array: there are no edits to re-apply.`);
    const zone = await this.ctx.connection.zone(pulled.zoneId);
    const api = await this.ctx.connection.api();
    const { base, current } = await ui.progress(`Rulesmith: reading ${zone.name}'s ${pulled.phase} entry point (version ${pulled.version} and now)…`, async () => ({
      current: await api.getEntryPoint(zone.id, pulled.phase),
      base: await api.getEntryPointVersion(zone.id, pulled.phase, pulled.version!),
    }));
    if (!current) throw new UserError(`${zone.name}'s ${pulled.phase} entry point was deleted since ${name} was pulled: there is nothing to merge onto. Deploy the file to create it again.`);
    if (current.version === pulled.version) {
      void ui.info(`${zone.name}'s ${pulled.phase} entry point is still at version ${current.version}, as pulled: nothing to merge; deploy ${name} as it is.`);
      return { upToDate: true, version: current.version, conflicts: [], reapplied: 0, fromZone: 0 };
    }

    const merge = mergeRules(base.rules ?? [], mine.rules, current.rules ?? []);
    // The file's own fields stay; the version it is based on becomes the zone's.
    const { rules: _rules, ...header } = mine as Ruleset & Record<string, unknown>;
    for (const k of ['version', 'last_updated'] as const) if (current[k] !== undefined) header[k] = current[k];
    const zoneLabel = `${zone.name} version ${current.version}`;
    const text = merge.rules ? `${JSON.stringify({ ...header, rules: merge.rules }, null, 2)}\n` : mergedText(header, merge, { mine: `Your edits (${name})`, theirs: zoneLabel });
    const edit = new vscode.WorkspaceEdit();
    edit.replace(uri, new vscode.Range(doc.positionAt(0), doc.positionAt(doc.getText().length)), text);
    if (!(await vscode.workspace.applyEdit(edit))) throw new UserError(`The editor refused to change ${name} (is it read-only?).`);
    await doc.save();
    await this.deploy.rememberPulled(uri, { ...pulled, version: current.version });
    this.ctx.output.info(`Pull and re-apply ${name}: ${zone.name} ${pulled.phase} version ${pulled.version} → ${current.version}; ${merge.reapplied} edit(s) re-applied, ${merge.fromZone} change(s) from the zone, ${merge.conflicts.length} conflict(s)${merge.conflicts.length ? `: ${merge.conflicts.map((c) => `${c.label} (${c.kind})`).join('; ')}` : ''}`);
    const result = { version: current.version, conflicts: merge.conflicts.map(conflictLine), reapplied: merge.reapplied, fromZone: merge.fromZone };
    if (!merge.rules) {
      const opened = await this.openMergeEditor(uri, { ...header, rules: base.rules ?? [] }, { ...header, rules: mine.rules }, { ...header, rules: current.rules ?? [] }, name, zoneLabel, pulled.version);
      void ui.warn(`${merge.conflicts.length} rule${merge.conflicts.length === 1 ? '' : 's'} of ${name} changed both here and on ${zone.name}: ${merge.conflicts.map(conflictLine).join('; ')}. Resolve ${merge.conflicts.length === 1 ? 'it' : 'them'} in the merge editor, then deploy.`);
      return { ...result, mergeEditor: opened };
    }
    await vscode.window.showTextDocument(doc, { preview: false });
    void ui.info(`Re-applied ${merge.reapplied} edit${merge.reapplied === 1 ? '' : 's'} of ${name} on ${zoneLabel} (${merge.fromZone} change${merge.fromZone === 1 ? '' : 's'} made on the zone kept). Deploy it when ready.`, 'Deploy').then((c) => c && vscode.commands.executeCommand('rulesmith.deploy', uri));
    return result;
  }

  /** VS Code's merge editor: your edits (left) and the zone (right) over the version pulled, the file as the result. */
  private async openMergeEditor(output: vscode.Uri, base: object, mine: object, theirs: object, name: string, zoneLabel: string, baseVersion: string): Promise<boolean> {
    const stamp = Date.now();
    const side = (label: string, body: object) => {
      const u = vscode.Uri.from({ scheme: MERGE_SCHEME, path: `/${label}/${name}`, query: `t=${stamp}` });
      this.texts.set(u.toString(), `${JSON.stringify(body, null, 2)}\n`);
      return u;
    };
    try {
      await vscode.commands.executeCommand('_open.mergeEditor', {
        base: side('base', base),
        input1: { uri: side('mine', mine), title: 'Your edits', description: name },
        input2: { uri: side('zone', theirs), title: 'The zone now', description: zoneLabel },
        output,
      });
      this.ctx.output.info(`Merge editor opened on ${name} (base: version ${baseVersion} as pulled)`);
      return true;
    } catch (e) {
      // No merge editor (an older VS Code): the file with its conflict markers.
      this.ctx.output.warn(`The merge editor did not open (${e instanceof Error ? e.message : String(e)}); ${name} shows the conflicts with markers.`);
      await vscode.window.showTextDocument(output, { preview: false });
      return false;
    }
  }
}

function conflictLine(c: MergeConflict): string {
  const how = { 'both-changed': 'changed on both sides', 'changed-here-removed-on-zone': 'changed here, removed on the zone', 'removed-here-changed-on-zone': 'removed here, changed on the zone', 'both-added': 'added on both sides' }[c.kind];
  return `“${c.label}” (${how})`;
}
