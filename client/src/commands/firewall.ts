// rulesmith.createFirewallRule: a firewall rule (the previous interface) on the chosen zone.
// Without an expression it opens a scratch `.cfrule` editor (scratchRule.ts) whose CodeLens
// "Create firewall rule from this expression" comes back here with the editor's text.
// The recommended two-call flow: find a filter with the same expression (reused) or
// create one (POST /filters; a duplicate answer, 10102, names the existing filter), then
// create the rule pointing at it (POST /firewall/rules with filter.id). The single-call
// form (the filter inline in the rule) is behind a warning: a filter created that way
// cannot be changed or deleted through the Filters API, and when the rule fails after
// the filter was made the service's error says how to finish with the two-call flow.
// The expression is checked with the language core before anything is sent.
//   executeCommand('rulesmith.createFirewallRule', { expression, action, description, mode: 'two-call' | 'single-call', zone })
// And, on the Firewall Rules view's items (or a rule picked from the chosen zone's list):
//   rulesmith.pauseFirewallRule / rulesmith.resumeFirewallRule — PUT of the whole rule as
//     the zone has it now (read again first: the PUT erases what it leaves out, so a copy
//     from the tree could undo someone else's change), with `paused` flipped;
//   rulesmith.setFirewallRulePriority — PATCH of the rule's priority (empty: none).
//   executeCommand('rulesmith.setFirewallRulePriority', { rule | ruleId, zone?, priority })
import * as vscode from 'vscode';
import { checkExpression } from '../../../server/src/language/index';
import { planOf } from '../api/connection';
import { RulesApiError } from '../api/errors';
import type { Filter, FirewallRule, Zone } from '../api/rulesApi';
import { firewallOrder } from '../views/firewallView';
import * as ui from '../ui';
import { refreshViews, runCommand, targetZone, UserError, type Ctx } from './context';
import type { ScratchRule } from './scratchRule';

const ACTIONS = ['block', 'managed_challenge', 'challenge', 'js_challenge', 'allow', 'log', 'bypass'];

interface Args {
  readonly expression?: string;
  readonly action?: string;
  readonly description?: string;
  readonly mode?: 'two-call' | 'single-call';
  readonly zone?: unknown;
  readonly products?: string[];
  /** Ask the description even though the expression is given (it came from an editor). */
  readonly askDescription?: boolean;
  /** The editor the expression came from. */
  readonly source?: string;
}

export interface CreateFirewallRuleResult {
  readonly mode: 'two-call' | 'single-call';
  readonly rule: FirewallRule;
  readonly filter: Filter | { id: string };
  readonly filterReused: boolean;
}

function firstError(expression: string, plan: ReturnType<typeof planOf>): string | undefined {
  const r = checkExpression(expression, { phase: 'http_request_firewall_custom', ...(plan ? { plan } : {}) });
  const e = r.diagnostics.find((d) => d.severity === 'error');
  if (!e) return undefined;
  const before = expression.slice(0, e.range.start);
  const line = before.split('\n').length;
  const col = before.length - before.lastIndexOf('\n');
  return `${e.message} (at ${line}:${col})`;
}

const MAX_PRIORITY = 2147483647;

interface RuleArgs {
  readonly rule?: FirewallRule;
  readonly ruleId?: string;
  readonly zone?: unknown;
  readonly priority?: number | null;
}

function ruleName(r: FirewallRule): string {
  const expr = 'expression' in r.filter ? r.filter.expression : '';
  const name = r.description?.trim() || expr || r.id;
  return `“${name.length > 60 ? `${name.slice(0, 59)}…` : name}”`;
}

export interface FirewallRuleChange {
  readonly rule: FirewallRule;
  readonly changed: boolean;
}

/** The zone and the rule a firewall-rule command acts on: the tree item's, the argument's, or one picked. */
async function targetRule(ctx: Ctx, arg: unknown, verb: string): Promise<{ zone: Zone; ruleId: string } | undefined> {
  const a = (arg && typeof arg === 'object' ? arg : {}) as RuleArgs & { kind?: string };
  const zone = await targetZone(ctx, a.zone);
  const id = a.rule?.id ?? a.ruleId;
  if (id) return { zone, ruleId: id };
  const api = await ctx.connection.api();
  const rules = firewallOrder(await api.firewallRules(zone.id));
  if (rules.length === 0) throw new UserError(`${zone.name} has no firewall rules.`);
  const p = await ui.pick(
    rules.map((r) => ({ label: r.description?.trim() || ('expression' in r.filter ? r.filter.expression : r.id), description: `${r.paused ? 'paused · ' : ''}${r.action} · priority ${r.priority ?? 'none'}`, value: r.id })),
    { title: `Which firewall rule of ${zone.name} to ${verb}?` },
  );
  return p ? { zone, ruleId: p.value } : undefined;
}

export function registerFirewallCommands(ctx: Ctx, scratch?: ScratchRule): vscode.Disposable[] {
  /** The rule as the zone has it now; `changed: false` (and a message) when it already is as asked. */
  async function readRule(t: { zone: Zone; ruleId: string }, paused: boolean): Promise<FirewallRuleChange> {
    const api = await ctx.connection.api();
    return ui.progress(`Rulesmith: reading the firewall rule on ${t.zone.name}…`, async () => {
      const now = await api.firewallRule(t.zone.id, t.ruleId);
      if ((now.paused === true) === paused) {
        ctx.views.firewall.refresh();
        void ui.info(`The firewall rule ${ruleName(now)} on ${t.zone.name} is already ${paused ? 'paused' : 'active'}.`);
        return { rule: now, changed: false };
      }
      return { rule: now, changed: true };
    }, 'window');
  }

  async function setPaused(arg: unknown, paused: boolean): Promise<FirewallRuleChange | undefined> {
    const t = await targetRule(ctx, arg, paused ? 'pause' : 'resume');
    if (!t) return undefined;
    const api = await ctx.connection.api();
    const read = await readRule(t, paused);
    if (!read.changed) return read;
    // Pausing a live rule changes the zone's traffic at once: asked first, as the paranoia change is.
    if (paused) {
      const what = read.rule.action === 'log' ? 'logs' : read.rule.action === 'bypass' || read.rule.action === 'allow' ? `lets requests through (${read.rule.action})` : `acts on requests (${read.rule.action})`;
      const answer = await ui.confirm(
        `Pause the firewall rule ${ruleName(read.rule)} on ${t.zone.name}?`,
        `The rule ${what} now; paused, it stops right away, for all traffic of the zone, until resumed.`,
        'Pause',
      );
      if (answer !== 'Pause') return undefined;
    }
    return ui.progress(`Rulesmith: ${paused ? 'pausing' : 'resuming'} the firewall rule on ${t.zone.name}…`, async () => {
      // Read again: the PUT replaces the whole rule, and the question may have been open a while.
      const now = await api.firewallRule(t.zone.id, t.ruleId);
      const rule = await api.updateFirewallRule(t.zone.id, { ...now, paused });
      ctx.views.firewall.refresh();
      void ui.info(
        paused
          ? `Paused the firewall rule ${ruleName(rule)} on ${t.zone.name}: it no longer ${rule.action === 'log' ? 'logs' : 'acts on'} requests until resumed.`
          : `Resumed the firewall rule ${ruleName(rule)} on ${t.zone.name}: it ${rule.action === 'log' ? 'logs' : 'acts on'} requests again (${rule.action}).`,
      );
      return { rule, changed: true };
    });
  }

  return [
    vscode.commands.registerCommand('rulesmith.pauseFirewallRule', (arg?: unknown) => runCommand(ctx, 'Pause firewall rule', () => setPaused(arg, true))),
    vscode.commands.registerCommand('rulesmith.resumeFirewallRule', (arg?: unknown) => runCommand(ctx, 'Resume firewall rule', () => setPaused(arg, false))),
    vscode.commands.registerCommand('rulesmith.setFirewallRulePriority', (arg?: unknown) =>
      runCommand(ctx, 'Set firewall rule priority', async (): Promise<FirewallRuleChange | undefined> => {
        const t = await targetRule(ctx, arg, 'reprioritise');
        if (!t) return undefined;
        const api = await ctx.connection.api();
        const now = await api.firewallRule(t.zone.id, t.ruleId);
        const given = arg && typeof arg === 'object' && 'priority' in arg ? (arg as RuleArgs).priority : undefined;
        let priority: number | null;
        if (given !== undefined) priority = given;
        else {
          const v = await ui.input({
            title: `Priority of the firewall rule ${ruleName(now)}`,
            value: now.priority === null || now.priority === undefined ? '' : String(now.priority),
            prompt: 'A whole number from 0 to 2147483647 (lower runs first); empty: no priority (runs after the rules that have one)',
            validateInput: (s) => (s.trim() === '' || (/^\d+$/.test(s.trim()) && Number(s.trim()) <= MAX_PRIORITY) ? undefined : 'A whole number from 0 to 2147483647, or empty for none'),
          });
          if (v === undefined) return undefined;
          priority = v.trim() === '' ? null : Number(v.trim());
        }
        if (priority !== null && (!Number.isInteger(priority) || priority < 0 || priority > MAX_PRIORITY)) throw new UserError(`A priority is a whole number from 0 to ${MAX_PRIORITY}, or none (got ${priority}).`);
        if ((now.priority ?? null) === priority) {
          void ui.info(`The firewall rule ${ruleName(now)} already has priority ${priority ?? 'none'}.`);
          return { rule: now, changed: false };
        }
        const rule = await ui.progress(`Rulesmith: changing the priority on ${t.zone.name}…`, () => api.setFirewallRulePriority(t.zone.id, t.ruleId, priority));
        ctx.views.firewall.refresh();
        const order = firewallOrder(await api.firewallRules(t.zone.id));
        const pos = order.findIndex((r) => r.id === rule.id);
        void ui.info(`The firewall rule ${ruleName(rule)} on ${t.zone.name} has priority ${rule.priority ?? 'none'} (was ${now.priority ?? 'none'}); it is now number ${pos + 1} of ${order.length} in evaluation order.`);
        return { rule, changed: true };
      }),
    ),
    vscode.commands.registerCommand('rulesmith.createFirewallRule', (arg?: unknown) =>
      runCommand(ctx, 'Create firewall rule', async (): Promise<CreateFirewallRuleResult | { scratch: vscode.Uri } | undefined> => {
        const a: Args = arg && typeof arg === 'object' && !('kind' in arg) ? (arg as Args) : {};
        const zone = await targetZone(ctx, a.zone ?? arg);
        const plan = planOf(zone);
        const api = await ctx.connection.api();
        let expression = a.expression;
        if (expression === undefined && scratch) {
          // The expression is written in a scratch .cfrule editor (completion, hovers,
          // diagnostics); its CodeLens runs the rest. A selection, or the active .cfrule's
          // text, starts it.
          const ed = vscode.window.activeTextEditor;
          const start = ed?.document.languageId === 'rulesmith-expression' ? (ed.selection.isEmpty ? ed.document.getText() : ed.document.getText(ed.selection)).trim() : undefined;
          return { scratch: await scratch.open(zone, start || undefined) };
        }
        if (expression === undefined) {
          expression = await ui.input({
            title: `Firewall rule on ${zone.name}: expression`,
            prompt: 'The filter expression (Rules language), e.g. http.request.uri.path contains "/wp-login.php"',
            validateInput: (v) => (v.trim() === '' ? 'Required' : firstError(v, plan)),
          });
          if (!expression) return undefined;
        }
        const problem = firstError(expression, plan);
        if (problem) {
          throw new UserError(`The expression has an error: ${problem}. Fix it and try again.`, a.source ? [{ title: 'Show Problems', run: () => vscode.commands.executeCommand('workbench.actions.view.problems') }] : []);
        }
        let action = a.action;
        if (action === undefined) {
          const p = await ui.pick(ACTIONS.map((x) => ({ label: x, value: x })), { title: 'Action' });
          if (!p) return undefined;
          action = p.value;
        }
        if (!ACTIONS.includes(action)) throw new UserError(`The action is one of ${ACTIONS.join(', ')} (got ${action}).`);
        let products = a.products;
        if (action === 'bypass' && !products) {
          // A bypass names the products it skips.
          const p = await ui.pick(
            [
              { label: 'WAF managed rules', description: 'waf', value: ['waf'] },
              { label: 'Rate limiting', description: 'rateLimit', value: ['rateLimit'] },
              { label: 'Security level, browser integrity check and hotlink protection', description: 'securityLevel, bic, hot', value: ['securityLevel', 'bic', 'hot'] },
              { label: 'Everything', description: 'zoneLockdown, uaBlock, bic, hot, securityLevel, rateLimit, waf', value: ['zoneLockdown', 'uaBlock', 'bic', 'hot', 'securityLevel', 'rateLimit', 'waf'] },
            ],
            { title: 'What should the bypass skip?' },
          );
          if (!p) return undefined;
          products = p.value;
        }
        let description = a.description;
        if (description === undefined && (a.expression === undefined || a.askDescription)) {
          description = await ui.input({ title: 'Description (optional)', prompt: 'What the rule is for' });
          if (description === undefined) return undefined;
        }
        let mode = a.mode;
        if (mode === undefined) {
          const p = await ui.pick(
            [
              { label: 'Recommended: filter first, then the rule', detail: 'Reuses a filter with the same expression; each part can be changed later', value: 'two-call' as const },
              { label: 'Emergency: both in one call', detail: 'Faster to type; the filter cannot be changed or deleted through the Filters API afterwards', value: 'single-call' as const },
            ],
            { title: 'How to create it' },
          );
          if (!p) return undefined;
          mode = p.value;
        }
        const rule = { action, ...(description ? { description } : {}), ...(products ? { products } : {}) };

        if (mode === 'single-call') {
          const ok = await ui.confirm(
            'Create the filter and the rule in one call?',
            'This is the emergency form. The filter it creates cannot be changed or deleted through PUT/DELETE of the Filters API, and if the rule is refused after the filter was made, you finish with the two-call flow. Prefer the recommended flow when you have a minute.',
            'Create Anyway',
          );
          if (ok !== 'Create Anyway') return undefined;
          const created = await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: `Rulesmith: creating the firewall rule on ${zone.name}…` }, () =>
            api.createFirewallRules(zone.id, [{ ...rule, filter: { expression, ...(description ? { description } : {}) } }]),
          );
          refreshViews(ctx);
          void ui.info(`Firewall rule created on ${zone.name} (${action}) with a new filter, in one call.`);
          return { mode, rule: created[0], filter: created[0].filter, filterReused: false };
        }

        // Two calls: a filter with exactly this expression is reused.
        return vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: `Rulesmith: creating the firewall rule on ${zone.name}…` }, async (progress) => {
          progress.report({ message: 'looking for a filter with this expression…' });
          const expr = expression!;
          let filter: Filter | { id: string } | undefined = (await api.filters(zone.id, { expression: expr })).find((f) => f.expression === expr);
          const reused = filter !== undefined;
          if (!filter) {
            progress.report({ message: 'creating the filter…' });
            try {
              filter = (await api.createFilters(zone.id, [{ expression: expr, ...(description ? { description } : {}) }]))[0];
            } catch (e) {
              // 10102: the same expression exists already; its id is in meta.id.
              const id = e instanceof RulesApiError && e.code === 10102 ? duplicateId(e) : undefined;
              if (!id) throw e;
              filter = { id };
            }
          }
          progress.report({ message: 'creating the rule…' });
          const created = await api.createFirewallRules(zone.id, [{ ...rule, filter: { id: filter.id } }]);
          refreshViews(ctx);
          void ui.info(`Firewall rule created on ${zone.name} (${action}), ${reused ? 'reusing' : 'with'} filter ${filter.id}.`);
          return { mode: 'two-call' as const, rule: created[0], filter, filterReused: reused };
        });
      }),
    ),
  ];
}

function duplicateId(e: RulesApiError): string | undefined {
  const meta = e.errors.find((x) => x.code === 10102)?.meta?.id;
  if (typeof meta === 'string') return meta;
  const m = /[0-9a-f]{32}/.exec(e.errors.map((x) => x.message).join(' '));
  return m?.[0];
}
