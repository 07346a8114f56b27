// Tuning the OWASP-based managed ruleset: rulesmith.setParanoiaLevel and
// rulesmith.setScoreThreshold (threshold and action). In the open `*.ruleset.json` they
// edit the execute rule's overrides as text (server/src/managed/editOverrides.ts; the
// file is then deployed as usual); otherwise they change the chosen zone's managed entry
// point directly — after a confirmation — by PATCHing that one rule with the overrides
// the core computes (setParanoiaLevel / setScoreThreshold).
//   executeCommand('rulesmith.setParanoiaLevel', 2, { target: 'file' | 'zone', zone })
//   executeCommand('rulesmith.setScoreThreshold', 25, { action: 'block', target, zone })
import * as vscode from 'vscode';
import { defaultCatalog } from '../../../server/src/managed/catalog';
import { setParanoiaLevel, setScoreThreshold, type ParanoiaLevel } from '../../../server/src/managed/preview';
import { levelItems, thresholdItems, keepActionLabel } from '../../../server/src/managed/tuningChoices';
import type { ManagedCatalog } from '../../../server/src/rulesets/catalog';
import { managedExecuteRules, setParanoiaLevelInText, setScoreThresholdInText, type ExecuteRuleAt, type OverrideEditResult } from '../../../server/src/managed/editOverrides';
import type { Rule, Ruleset, Zone } from '../../../server/src/rulesApi';
import type { RulesApi } from '../api/rulesApi';
import { serviceCatalog } from '../api/catalog';
import * as ui from '../ui';
import { refreshViews, runCommand, targetZone, UserError, type Ctx } from './context';

const PHASE = 'http_request_firewall_managed';

const ACTIONS = ['block', 'managed_challenge', 'challenge', 'js_challenge', 'log'];

interface ZoneTarget {
  readonly zone: Zone;
  readonly api: RulesApi;
  readonly catalog: ManagedCatalog;
  readonly ep: Ruleset;
  readonly found: ExecuteRuleAt;
}

interface Options {
  readonly target?: 'file' | 'zone';
  readonly zone?: unknown;
  readonly action?: string;
  /** Which rule of the entry point (a Zones view `execute` rule item gives its index). */
  readonly index?: number;
}

export interface TuningResult {
  readonly target: 'file' | 'zone';
  readonly where: string;
  readonly level?: number;
  readonly threshold?: number;
  readonly action?: string;
  readonly version?: string;
}

function options(arg: unknown): Options {
  return arg && typeof arg === 'object' && !(arg instanceof vscode.Uri) ? (arg as Options) : {};
}

/** The active editor's ruleset file, when it has an execute rule of a scored ruleset. */
function activeRulesetFile(catalog: ManagedCatalog): vscode.TextEditor | undefined {
  const ed = vscode.window.activeTextEditor;
  if (!ed || !ed.document.uri.path.endsWith('.json')) return undefined;
  const found = managedExecuteRules(ed.document.getText(), catalog);
  return found.rules.some((r) => r.scored) ? ed : undefined;
}

/**
 * The scored execute rule to tune: the only one, or — when the OWASP-based ruleset is
 * deployed more than once (e.g. PL3 with a challenge and PL4 with log, a documented way to
 * watch a higher level) — the one the user picks. undefined: none; null: cancelled.
 */
async function chooseScored(text: string, catalog: ManagedCatalog, where: string, index?: number): Promise<ExecuteRuleAt | undefined | null> {
  const scored = managedExecuteRules(text, catalog).rules.filter((r) => r.scored);
  if (index !== undefined) return scored.find((r) => r.index === index);
  if (scored.length <= 1) return scored[0];
  const p = await ui.pick(
    scored.map((r) => ({
      label: `Rule ${r.index + 1}: ${r.rule.description?.trim() || r.rule.ref || r.rulesetName}`,
      description: `PL${r.level || '?'} · threshold ${r.threshold ?? '?'}${r.action ? ` (${r.action})` : ''}${r.rule.enabled === false ? ' · disabled' : ''}`,
      value: r,
    })),
    { title: `${where} deploys the OWASP-based ruleset ${scored.length} times: which deployment?` },
  );
  return p ? p.value : null;
}

export function registerTuningCommands(ctx: Ctx): vscode.Disposable[] {
  async function catalogNow(): Promise<ManagedCatalog> {
    if (!ctx.connection.state().signedIn) return defaultCatalog;
    try {
      return (await serviceCatalog(await ctx.connection.api(), ctx.connection.accountId)).catalog;
    } catch {
      return defaultCatalog;
    }
  }

  async function applyToFile(editor: vscode.TextEditor, result: OverrideEditResult): Promise<void> {
    if (result.error) throw new UserError(`${editor.document.uri.path.split('/').pop()}: ${result.error}.`);
    const edit = new vscode.WorkspaceEdit();
    const doc = editor.document;
    for (const e of result.edits) edit.replace(doc.uri, new vscode.Range(doc.positionAt(e.offset), doc.positionAt(e.offset + e.length)), e.content);
    if (!(await vscode.workspace.applyEdit(edit))) throw new UserError('The editor refused the edit (is the file read-only?).');
  }

  /**
   * Changes the zone's scored execute rule with `change` (after a confirmation that says
   * what it is now and what it becomes) by PATCHing it — unless the entry point changed
   * while the question was open (re-read first: the PATCH replaces the whole rule).
   */
  /** The zone's scored execute rule as it is now (read before a picker, so that it can mark the current value); null: cancelled. */
  async function readZone(zoneArg: unknown, index: number | undefined): Promise<ZoneTarget | null> {
    const zone = await targetZone(ctx, zoneArg);
    const api = await ctx.connection.api();
    const { catalog, ep } = await ui.progress(`Rulesmith: reading ${zone.name}'s managed rules…`, async () => {
      const { catalog: c } = await serviceCatalog(api, zone.account?.id ?? ctx.connection.accountId);
      return { catalog: c, ep: await api.getEntryPoint(zone.id, PHASE) };
    }, 'window');
    const found = ep ? await chooseScored(JSON.stringify(ep), catalog, zone.name, index) : undefined;
    if (found === null) return null;
    if (!ep || !found || !found.rule.id || !ep.id) {
      throw new UserError(`${zone.name} does not deploy the OWASP-based managed ruleset in ${PHASE}; add an execute rule for it (pull the entry point, edit, deploy) first.`, [
        { title: 'Pull Entry Point', run: () => vscode.commands.executeCommand('rulesmith.pullEntryPoint', zone, PHASE) },
      ]);
    }
    return { zone, api, catalog, ep, found };
  }

  async function applyToZone(
    target: ZoneTarget | null,
    what: string,
    change: (rule: Rule, catalog: ManagedCatalog) => Rule,
    fromTo: (now: ExecuteRuleAt) => string,
  ): Promise<{ where: string; version?: string } | undefined> {
    if (!target) return undefined;
    const { zone, api, catalog, ep, found } = target;
    const next = change(found.rule, catalog);
    const answer = await ui.confirm(
      `${what} on ${zone.name}?`,
      `${fromTo(found)}.\n\nThis changes the rule "${found.rule.description || found.rule.ref || found.rule.id}" of the ${PHASE} entry point (version ${ep.version}) right away, for all traffic of the zone.`,
      'Apply',
    );
    if (answer !== 'Apply') return undefined;
    const result = await ui.progress(`Rulesmith: updating ${zone.name}…`, async () => {
      const now = await api.getEntryPoint(zone.id, PHASE);
      if (now?.version !== ep.version) {
        throw new UserError(`Conflict: ${zone.name}'s ${PHASE} entry point changed while the change was being confirmed (version ${ep.version} → ${now?.version ?? 'none'}). Nothing was changed: run the command again to start from the zone's new state.`);
      }
      return api.editRule(zone.id, ep.id!, found.rule.id!, next);
    });
    refreshViews(ctx);
    return { where: zone.name, version: result.version };
  }

  return [
    vscode.commands.registerCommand('rulesmith.setParanoiaLevel', (levelArg?: unknown, optArg?: unknown) =>
      runCommand(ctx, 'Set paranoia level', async (): Promise<TuningResult | undefined> => {
        const o = options(optArg ?? (typeof levelArg === 'object' ? levelArg : undefined));
        const catalog = await catalogNow();
        const editor = o.target === 'zone' || o.zone ? undefined : activeRulesetFile(catalog);
        if (o.target === 'file' && !editor) throw new UserError('Open a *.ruleset.json with an execute rule of the OWASP-based managed ruleset to set its paranoia level.');
        const inFile = editor ? await chooseScored(editor.document.getText(), catalog, editor.document.uri.path.split('/').pop() ?? 'The file') : undefined;
        if (inFile === null) return undefined;
        let level = typeof levelArg === 'number' ? levelArg : undefined;
        // On the zone, read it first: the picker marks the level in effect.
        const onZone = editor ? undefined : await readZone(o.zone, o.index);
        if (onZone === null) return undefined;
        if (level === undefined) {
          const current = inFile?.level ?? onZone?.found.level;
          const p = await ui.pick(levelItems(current), { title: `Paranoia level ${editor ? `in ${editor.document.uri.path.split('/').pop()}` : `of ${onZone?.zone.name ?? 'the zone'}`}` });
          level = p?.value;
        }
        if (level === undefined) return undefined;
        if (![1, 2, 3, 4].includes(level)) throw new UserError(`The paranoia level is 1, 2, 3 or 4 (got ${level}).`);
        const pl = level as ParanoiaLevel;
        if (editor) {
          await applyToFile(editor, setParanoiaLevelInText(editor.document.getText(), pl, { catalog, ...(inFile ? { ruleIndex: inFile.index } : {}) }));
          void ui.info(`Paranoia level ${pl} set in ${editor.document.uri.path.split('/').pop()}; deploy the file to apply it.`);
          return { target: 'file', where: editor.document.uri.toString(), level: pl };
        }
        const r = await applyToZone(onZone ?? null, `Set paranoia level ${pl}`, (rule) => setParanoiaLevel(rule, pl), (now) => `Paranoia level ${now.level || '?'} → ${pl}`);
        if (!r) return undefined;
        void ui.info(`Paranoia level ${pl} is now in effect on ${r.where} (entry point version ${r.version}).`);
        return { target: 'zone', where: r.where, level: pl, version: r.version };
      }),
    ),
    vscode.commands.registerCommand('rulesmith.setScoreThreshold', (thresholdArg?: unknown, optArg?: unknown) =>
      runCommand(ctx, 'Set score threshold', async (): Promise<TuningResult | undefined> => {
        const o = options(optArg ?? (typeof thresholdArg === 'object' ? thresholdArg : undefined));
        const catalog = await catalogNow();
        const editor = o.target === 'zone' || o.zone ? undefined : activeRulesetFile(catalog);
        if (o.target === 'file' && !editor) throw new UserError('Open a *.ruleset.json with an execute rule of the OWASP-based managed ruleset to set its score threshold.');
        const inFile = editor ? await chooseScored(editor.document.getText(), catalog, editor.document.uri.path.split('/').pop() ?? 'The file') : undefined;
        if (inFile === null) return undefined;
        let threshold = typeof thresholdArg === 'number' ? thresholdArg : undefined;
        let action = o.action;
        const onZone = editor ? undefined : await readZone(o.zone, o.index);
        if (onZone === null) return undefined;
        const now = inFile ?? onZone?.found;
        if (threshold === undefined) {
          const p = await ui.pick(thresholdItems(now?.threshold), { title: 'Anomaly score threshold (requests scoring at least this are acted on)' });
          if (!p) return undefined;
          threshold = p.value;
          if (threshold < 0) {
            const v = await ui.input({ title: 'Anomaly score threshold', prompt: 'A whole number ≥ 1', validateInput: (s) => (/^[1-9]\d*$/.test(s.trim()) ? undefined : 'A whole number ≥ 1') });
            if (!v) return undefined;
            threshold = Number(v);
          }
          const a = await ui.pick([{ label: keepActionLabel(now?.action), value: '' }, ...ACTIONS.map((x) => ({ label: x, value: x }))], { title: 'Action when the threshold is reached' });
          if (!a) return undefined;
          action = a.value || undefined;
        }
        if (!Number.isInteger(threshold) || threshold < 1) throw new UserError(`The threshold is a whole number ≥ 1 (got ${threshold}).`);
        if (action !== undefined && !ACTIONS.includes(action)) throw new UserError(`The action is one of ${ACTIONS.join(', ')} (got ${action}).`);
        const t = threshold;
        if (editor) {
          await applyToFile(editor, setScoreThresholdInText(editor.document.getText(), t, action, { catalog, ...(inFile ? { ruleIndex: inFile.index } : {}) }));
          void ui.info(`Threshold ${t}${action ? ` (${action})` : ''} set in ${editor.document.uri.path.split('/').pop()}; deploy the file to apply it.`);
          return { target: 'file', where: editor.document.uri.toString(), threshold: t, ...(action ? { action } : {}) };
        }
        const r = await applyToZone(
          onZone ?? null,
          `Set the anomaly score threshold to ${t}${action ? ` with action ${action}` : ''}`,
          (rule, cat) => setScoreThreshold(rule, t, action, { catalog: cat }),
          (now) => `Threshold ${now.threshold ?? '?'}${now.action ? ` (${now.action})` : ''} → ${t}${action ? ` (${action})` : now.action ? ` (${now.action})` : ''}`,
        );
        if (!r) return undefined;
        void ui.info(`Threshold ${t}${action ? ` (${action})` : ''} is now in effect on ${r.where} (entry point version ${r.version}).`);
        return { target: 'zone', where: r.where, threshold: t, ...(action ? { action } : {}), version: r.version };
      }),
    ),
  ];
}
