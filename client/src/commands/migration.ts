// The migration from the previous managed rules to the new ones (rules-api §3):
//   rulesmith.checkMigration      — is the zone eligible, and why not;
//   rulesmith.reviewMigration     — the new configuration the service proposes, opened as a
//                                   `*.ruleset.json` (a file in the extension's storage, so
//                                   the language server checks it), with what will not be
//                                   migrated listed beside it;
//   rulesmith.startValidationMode — Enterprise only: both versions run side by side;
//   rulesmith.migrate             — a modal confirmation that says it is irreversible (its
//                                   default button is "Review First", never Migrate), then
//                                   the PUT with waf_migration=pending, then the new state.
// Migrate sends the reviewed file when it is there (edits included, after local
// validation; which file, per service and zone, is kept across restarts), else the
// configuration the service proposes; the confirmation says which, and how the file
// differs from the proposal. Reviewing again asks before replacing edits.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { diffRulesets, diffSummary, entryPointBody } from '../../../server/src/rulesets/diff';
import type { Rule, Ruleset } from '../../../server/src/rulesApi';
import { validateRulesetJson } from '../../../server/src/rulesets/validate';
import { serviceCatalog } from '../api/catalog';
import { isEnterprise, planOf } from '../api/connection';
import type { MigrationCheck, MigrationConfig, MigrationMode, MigrationStatus, NotMigrated, Zone } from '../api/rulesApi';
import * as ui from '../ui';
import { refreshViews, reportWritten, runCommand, targetZone, UserError, type Ctx } from './context';

export const MIGRATION_SCHEME = 'rulesmith-migration';
const REVIEWED_KEY = 'rulesmith.migration.reviewed';
const PHASE = 'http_request_firewall_managed';

export interface ReviewResult {
  readonly uri: vscode.Uri;
  /** The Markdown list of what will not be migrated. */
  readonly notes: vscode.Uri;
  readonly notMigrated: readonly NotMigrated[];
  readonly rules: number;
  /** The earlier review's edited file was kept (not replaced by the proposal). */
  readonly kept?: boolean;
}

function reasonsText(check: MigrationCheck): string {
  const r = check.reasons?.map((x) => x.message).filter(Boolean) ?? [];
  return r.length > 0 ? r.join('; ') : 'the service gave no reason';
}

function notMigratedMarkdown(zone: Zone, config: MigrationConfig): string {
  const items = config.not_migrated ?? [];
  const lines = [`# Migration of ${zone.name}: what will not be migrated`, ''];
  if (items.length === 0) lines.push('Everything in the previous configuration has an equivalent in the new one.');
  else {
    lines.push(`${items.length} setting${items.length === 1 ? '' : 's'} of the previous managed rules ${items.length === 1 ? 'has' : 'have'} no equivalent and will be dropped:`, '');
    lines.push('| kind | id | what | setting | why |', '| --- | --- | --- | --- | --- |');
    const cell = (s: string | undefined) => (s ?? '').replace(/\|/g, '\\|').replace(/\n/g, ' ');
    for (const n of items) lines.push(`| ${cell(n.kind)} | ${cell(n.id)} | ${cell(n.name ?? n.description)} | ${cell(n.was)} | ${cell(n.reason)} |`);
    lines.push('', 'Recreate what you need as overrides of the new managed rulesets (in the ruleset file) after reviewing it.');
  }
  lines.push('', `The new configuration has ${config.rules.length} rule${config.rules.length === 1 ? '' : 's'}. Run **Rulesmith: Migrate Zone** to apply it; it cannot be undone.`);
  return `${lines.join('\n')}\n`;
}

/** The migration config as a ruleset file: the entry point the PUT will write. */
export function configAsRuleset(zone: Zone, config: MigrationConfig): Ruleset {
  const body = entryPointBody({ name: config.name ?? 'default', rules: config.rules });
  return {
    name: body.name ?? 'default',
    description: config.description ?? `Managed rules of ${zone.name} after the migration from the previous version`,
    kind: 'zone',
    phase: PHASE,
    rules: body.rules,
  };
}

export class MigrationCommands implements vscode.TextDocumentContentProvider {
  /** Markdown of the not-migrated lists, by URI. */
  private readonly notes = new Map<string, string>();
  constructor(private readonly ctx: Ctx) {}

  private reviewedKey(zoneId: string): string {
    const c = this.ctx.connection;
    return `${c.isLocal ? 'local' : c.configuredBaseUrl} ${zoneId}`;
  }

  /** The reviewed file of a zone (on this service), if it is still there. */
  private reviewedUri(zoneId: string): vscode.Uri | undefined {
    const p = this.ctx.context.globalState.get<Record<string, string>>(REVIEWED_KEY)?.[this.reviewedKey(zoneId)];
    return p && existsSync(p) ? vscode.Uri.file(p) : undefined;
  }

  private async setReviewed(zoneId: string, uri: vscode.Uri | undefined): Promise<void> {
    const m = { ...(this.ctx.context.globalState.get<Record<string, string>>(REVIEWED_KEY) ?? {}) };
    if (uri) m[this.reviewedKey(zoneId)] = uri.fsPath;
    else delete m[this.reviewedKey(zoneId)];
    await this.ctx.context.globalState.update(REVIEWED_KEY, m);
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.notes.get(uri.toString()) ?? '# Not available\n\nRun "Rulesmith: Review Migration" again.\n';
  }

  register(): vscode.Disposable[] {
    return [
      vscode.workspace.registerTextDocumentContentProvider(MIGRATION_SCHEME, this),
      vscode.commands.registerCommand('rulesmith.checkMigration', (arg?: unknown) => runCommand(this.ctx, 'Check migration', () => this.check(arg))),
      vscode.commands.registerCommand('rulesmith.reviewMigration', (arg?: unknown) => runCommand(this.ctx, 'Review migration', () => this.review(arg))),
      vscode.commands.registerCommand('rulesmith.startValidationMode', (arg?: unknown) => runCommand(this.ctx, 'Start validation mode', () => this.apply(arg, 'validation'))),
      vscode.commands.registerCommand('rulesmith.migrate', (arg?: unknown) => runCommand(this.ctx, 'Migrate', () => this.apply(arg, 'pending'))),
    ];
  }

  private async check(arg: unknown): Promise<MigrationCheck & { zone: string }> {
    const zone = await targetZone(this.ctx, arg);
    const api = await this.ctx.connection.api();
    const check = await vscode.window.withProgress({ location: vscode.ProgressLocation.Window, title: `Checking ${zone.name}` }, () => api.migrationCheck(zone.id));
    await this.ctx.connection.setMigrationState(zone.id, check.migration_state);
    this.ctx.views.migration.refresh();
    if (check.migration_state === 'complete') void ui.info(`${zone.name} is already migrated to the new managed rules.`);
    else if (check.compatible) {
      void ui.info(`${zone.name} can migrate to the new managed rules (state: ${check.migration_state ?? 'unknown'}). Review the new configuration next.`, 'Review Migration').then((c) => c && vscode.commands.executeCommand('rulesmith.reviewMigration', zone));
    } else {
      void ui.warn(`${zone.name} cannot migrate yet: ${reasonsText(check)}.`);
    }
    return { ...check, zone: zone.name };
  }

  private async review(arg: unknown): Promise<ReviewResult> {
    const zone = await targetZone(this.ctx, arg);
    const api = await this.ctx.connection.api();
    const config = await ui.progress(`Rulesmith: fetching the new configuration of ${zone.name}…`, () => api.migrationConfig(zone.id));
    const dir = join(this.ctx.context.globalStorageUri.fsPath, 'migration');
    mkdirSync(dir, { recursive: true });
    const file = join(dir, `${zone.name.replace(/[^\w.-]+/g, '_')}.migration.ruleset.json`);
    const uri = vscode.Uri.file(file);
    const proposed = `${JSON.stringify(configAsRuleset(zone, config), null, 2)}\n`;
    // An earlier review's file may hold the user's edits (saved or not): replace them only when asked.
    const open = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
    const existing = open ? open.getText() : existsSync(file) ? readFileSync(file, 'utf8') : undefined;
    let replace = true;
    if (existing !== undefined && existing !== proposed && this.reviewedUri(zone.id)) {
      const a = await ui.confirm(
        `${uri.path.split('/').pop()} has edits${open?.isDirty ? ' (some unsaved)' : ''}: it differs from the configuration the service proposes.`,
        'Replace it with the proposal (your edits are lost), or keep it as it is (Migrate sends it, after checking it).',
        'Replace',
        'Keep My Edits',
      );
      if (a === undefined) return { uri, notes: vscode.Uri.from({ scheme: MIGRATION_SCHEME, path: `/${zone.name} — not migrated.md` }), notMigrated: config.not_migrated ?? [], rules: config.rules.length, kept: true };
      replace = a === 'Replace';
    }
    if (replace) writeFileSync(file, proposed);
    await this.setReviewed(zone.id, uri);
    const doc = await vscode.workspace.openTextDocument(uri);
    // A copy that was open (an earlier review) shows the file as it is now.
    if (replace && doc.isDirty) await vscode.commands.executeCommand('workbench.action.files.revert', uri);
    await vscode.window.showTextDocument(doc, { preview: false });
    const notes = vscode.Uri.from({ scheme: MIGRATION_SCHEME, path: `/${zone.name} — not migrated.md` });
    this.notes.set(notes.toString(), notMigratedMarkdown(zone, config));
    try {
      await vscode.commands.executeCommand('markdown.showPreviewToSide', notes);
    } catch {
      await vscode.window.showTextDocument(notes, { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true });
    }
    const n = config.not_migrated?.length ?? 0;
    void ui.info(`New configuration of ${zone.name}: ${config.rules.length} rule${config.rules.length === 1 ? '' : 's'}; ${n === 0 ? 'everything is migrated' : `${n} setting${n === 1 ? '' : 's'} will not be migrated (listed beside)`}.`);
    return { uri, notes, notMigrated: config.not_migrated ?? [], rules: config.rules.length, kept: !replace };
  }

  /** The rules to send: the reviewed file (validated) when there is one, else the service's config. */
  private async rulesFor(zone: Zone): Promise<{ rules: readonly Rule[]; from: string; notMigrated: readonly NotMigrated[] }> {
    const api = await this.ctx.connection.api();
    const config = await api.migrationConfig(zone.id);
    const uri = this.reviewedUri(zone.id);
    if (!uri) return { rules: entryPointBody({ rules: config.rules }).rules, from: 'the configuration the service proposes', notMigrated: config.not_migrated ?? [] };
    const doc = await vscode.workspace.openTextDocument(uri);
    const text = doc.getText();
    const { catalog } = await serviceCatalog(api, zone.account?.id ?? this.ctx.connection.accountId);
    const errors = validateRulesetJson(text, { catalog, plan: planOf(zone), phase: PHASE }).filter((p) => p.severity === 'error');
    if (errors.length > 0) {
      throw new UserError(`The reviewed configuration has ${errors.length} error${errors.length === 1 ? '' : 's'} (first: ${errors[0].message}); fix them in ${doc.uri.path.split('/').pop()} or review again.`, [
        { title: 'Open File', run: () => vscode.window.showTextDocument(doc) },
      ]);
    }
    const parsed = JSON.parse(text) as Ruleset;
    const d = diffRulesets(configAsRuleset(zone, config), { ...parsed, rules: entryPointBody(parsed).rules });
    const how = d.identical ? 'as proposed' : `edited: ${diffSummary(d)}, compared with the proposal`;
    return { rules: entryPointBody(parsed).rules, from: `the reviewed file ${uri.path.split('/').pop()}, ${how}`, notMigrated: config.not_migrated ?? [] };
  }

  private async apply(arg: unknown, mode: MigrationMode): Promise<(MigrationStatus & { warnings?: string[] }) | undefined> {
    const zone = await targetZone(this.ctx, arg);
    const api = await this.ctx.connection.api();
    if (mode === 'validation' && !isEnterprise(zone)) {
      throw new UserError(`Validation mode is for Enterprise zones; ${zone.name} is on ${zone.plan?.name ?? 'another plan'}. Use "Rulesmith: Migrate Zone" instead.`);
    }
    const check = await ui.progress(`Rulesmith: checking ${zone.name} before ${mode === 'pending' ? 'migrating' : 'validation mode'}…`, () => api.migrationCheck(zone.id), 'window');
    if (check.migration_state === 'complete') {
      void ui.info(`${zone.name} is already migrated; there is nothing to do.`);
      return api.migrationStatus(zone.id);
    }
    if (!check.compatible) throw new UserError(`${zone.name} cannot migrate: ${reasonsText(check)}. Resolve that first, then check again.`, [{ title: 'Check Again', run: () => vscode.commands.executeCommand('rulesmith.checkMigration', zone) }]);
    if (mode === 'validation' && check.migration_state === 'validation') {
      void ui.info(`${zone.name} is already in validation mode. Run "Rulesmith: Migrate Zone" to finish.`);
      return api.migrationStatus(zone.id);
    }
    const { rules, from, notMigrated } = await ui.progress(`Rulesmith: preparing the new configuration of ${zone.name}…`, () => this.rulesFor(zone), 'window');
    const lost = notMigrated.length > 0 ? `\n\n${notMigrated.length} setting${notMigrated.length === 1 ? '' : 's'} will not be migrated: ${notMigrated.slice(0, 5).map((n) => n.name ?? n.description ?? n.id ?? n.kind).join('; ')}${notMigrated.length > 5 ? '; …' : ''}.` : '';
    const question =
      mode === 'pending'
        ? {
            message: `Migrate ${zone.name} to the new managed rules? This is irreversible.`,
            detail: `The new managed rules are turned on with ${rules.length} rule${rules.length === 1 ? '' : 's'} (from ${from}); the previous managed rules are turned off for good and their API stops working for this zone. There is no way back.${lost}`,
            button: 'Migrate',
          }
        : {
            message: `Start validation mode on ${zone.name}?`,
            detail: `The new managed rules run alongside the previous ones (evaluated first), with ${rules.length} rule${rules.length === 1 ? '' : 's'} (from ${from}). Finish later with "Migrate Zone"; the zone cannot go back to the previous version alone.${lost}`,
            button: 'Start Validation Mode',
          };
    // The first button is the dialog's default (Enter): for the irreversible migration it is
    // the harmless "Review First", never "Migrate".
    const review = mode === 'pending' ? ['Review First'] : [];
    const answer = await ui.confirm(question.message, question.detail, ...review, question.button);
    if (answer === 'Review First') {
      await vscode.commands.executeCommand('rulesmith.reviewMigration', zone);
      return undefined;
    }
    if (answer !== question.button) return undefined;
    const { status, warnings } = await ui.progress(`Rulesmith: ${mode === 'pending' ? 'migrating' : 'starting validation mode on'} ${zone.name}`, async (report) => {
      report('writing the new configuration…');
      const written = await api.putEntryPoint(zone.id, PHASE, { rules }, mode);
      report('reading the new state…');
      return { status: await api.migrationStatus(zone.id), warnings: written.warnings };
    });
    if (status.migration_state === 'complete') await this.setReviewed(zone.id, undefined);
    this.ctx.output.info(`${mode === 'pending' ? 'Migrated' : 'Validation mode on'} ${zone.name}: state ${status.migration_state}, previous ${status.old_waf_status}, new ${status.new_waf_status}`);
    await this.ctx.connection.setMigrationState(zone.id, status.migration_state);
    refreshViews(this.ctx);
    const state = `${zone.name}: migration state ${status.migration_state ?? 'unknown'} — previous managed rules ${status.old_waf_status ?? '?'}, new managed rules ${status.new_waf_status ?? '?'}.`;
    const shown = reportWritten(this.ctx, state, `${mode === 'pending' ? 'Migration' : 'Validation mode'} of ${zone.name}`, warnings, () => 'The service warned:');
    return shown.length > 0 ? { ...status, warnings: shown } : status;
  }
}
