// rulesmith.createFirewallRule: a firewall rule (the previous interface) on the chosen zone.
// The recommended two-call flow: find a filter with the same expression (reused) or
// create one (POST /filters; a duplicate answer, 10102, names the existing filter), then
// create the rule pointing at it (POST /firewall/rules with filter.id). The single-call
// form (the filter inline in the rule) is behind a warning: a filter created that way
// cannot be changed or deleted through the Filters API, and when the rule fails after
// the filter was made the service's error says how to finish with the two-call flow.
// The expression is checked with the language core before anything is sent.
//   executeCommand('rulesmith.createFirewallRule', { expression, action, description, mode: 'two-call' | 'single-call', zone })
import * as vscode from 'vscode';
import { checkExpression } from '../../../server/src/language/index';
import { planOf } from '../api/connection';
import { RulesApiError } from '../api/errors';
import type { Filter, FirewallRule } from '../api/rulesApi';
import * as ui from '../ui';
import { refreshViews, runCommand, targetZone, UserError, type Ctx } from './context';

const ACTIONS = ['block', 'managed_challenge', 'challenge', 'js_challenge', 'allow', 'log', 'bypass'];

interface Args {
  readonly expression?: string;
  readonly action?: string;
  readonly description?: string;
  readonly mode?: 'two-call' | 'single-call';
  readonly zone?: unknown;
  readonly products?: string[];
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

export function registerFirewallCommands(ctx: Ctx): vscode.Disposable[] {
  return [
    vscode.commands.registerCommand('rulesmith.createFirewallRule', (arg?: unknown) =>
      runCommand(ctx, 'Create firewall rule', async (): Promise<CreateFirewallRuleResult | undefined> => {
        const a: Args = arg && typeof arg === 'object' && !('kind' in arg) ? (arg as Args) : {};
        const zone = await targetZone(ctx, a.zone ?? arg);
        const plan = planOf(zone);
        const api = await ctx.connection.api();
        let expression = a.expression;
        if (expression === undefined) {
          const selected = vscode.window.activeTextEditor?.document.languageId === 'rulesmith-expression' ? vscode.window.activeTextEditor.document.getText().trim() : undefined;
          expression = await ui.input({
            title: `Firewall rule on ${zone.name}: expression`,
            value: selected,
            prompt: 'The filter expression (Rules language), e.g. http.request.uri.path contains "/wp-login.php"',
            validateInput: (v) => (v.trim() === '' ? 'Required' : firstError(v, plan)),
          });
          if (!expression) return undefined;
        }
        const problem = firstError(expression, plan);
        if (problem) throw new UserError(`The expression has an error: ${problem}. Fix it and try again.`);
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
        if (description === undefined && a.expression === undefined) {
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
