// What every command of the rules-service side needs: the connection, the views to
// refresh, the log, and one way to run a command so that every failure says what to do.
import * as vscode from 'vscode';
import { forgetCatalogs } from '../api/catalog';
import { NotSignedInError, type Connection } from '../api/connection';
import { isLoopback } from '../../../server/src/loopback';
import { formatApiMessage, RulesApiError, type ApiMessage } from '../api/errors';
import type { Zone } from '../api/rulesApi';
import * as ui from '../ui';
import type { FirewallView } from '../views/firewallView';
import type { ManagedView } from '../views/managedView';
import type { MigrationView } from '../views/migrationView';
import type { ZonesView } from '../views/zonesView';

export interface Views {
  readonly zones: ZonesView;
  readonly managed: ManagedView;
  readonly firewall: FirewallView;
  readonly migration: MigrationView;
}

export interface Ctx {
  readonly context: vscode.ExtensionContext;
  readonly connection: Connection;
  readonly output: vscode.LogOutputChannel;
  readonly views: Views;
}

/**
 * Says that a write succeeded; with the service's warnings (code 20040) as a warning that
 * lists the first three after `lead(count)` and logs them all. Returns them as text.
 */
export function reportWritten(ctx: Ctx, done: string, what: string, warnings: readonly ApiMessage[] | undefined, lead: (count: number) => string): string[] {
  const list = (warnings ?? []).map(formatApiMessage);
  if (list.length === 0) {
    void ui.info(done);
    return list;
  }
  ctx.output.warn(`${what}: the service warned: ${list.join('; ')}`);
  const more = list.length > 3 ? ` (and ${list.length - 3} more in the output)` : '';
  void ui.warn(`${done} ${lead(list.length)} ${list.slice(0, 3).join('; ')}${more}.`, 'Show Output').then((c) => c && ctx.output.show(true));
  return list;
}

export function refreshViews(ctx: Ctx): void {
  forgetCatalogs();
  ctx.views.zones.refresh();
  ctx.views.managed.refresh();
  ctx.views.firewall.refresh();
  ctx.views.migration.refresh();
}

/** A user-facing failure that is not an API error: a message that already says what to do. */
export class UserError extends Error {
  constructor(
    message: string,
    readonly actions: readonly { title: string; run: () => unknown }[] = [],
  ) {
    super(message);
  }
}

/**
 * Runs a command body: failures are logged and shown with what to do (and a button for
 * it); the body's value is returned (undefined on failure) so tests can read results.
 */
export async function runCommand<T>(ctx: Ctx, name: string, body: () => Promise<T>): Promise<T | undefined> {
  try {
    return await body();
  } catch (e) {
    if (e instanceof NotSignedInError) {
      void ui.error(e.message, 'Sign In').then((c) => c && vscode.commands.executeCommand('rulesmith.signIn'));
    } else if (e instanceof RulesApiError && e.unreachable) {
      // The service is down: say where, and offer to start it and to try again.
      ctx.output.error(`${name}: ${e.operation}: ${e.message}`);
      const local = ctx.connection.isLocal || isLoopback(e.unreachable);
      void ui.error(`${name} failed: ${e.display}`, ...(local ? ['Start Local Service'] : []), 'Retry', 'Show Output').then(async (c) => {
        if (c === 'Show Output') ctx.output.show(true);
        if (c === 'Start Local Service' && (await vscode.commands.executeCommand('rulesmith.startLocalService')) === undefined) return;
        if (c === 'Retry' || c === 'Start Local Service') await runCommand(ctx, name, body);
      });
    } else if (e instanceof RulesApiError) {
      ctx.output.error(`${name}: ${e.operation}: HTTP ${e.status || '—'}: ${e.message}`);
      void ui.error(`${name} failed: ${e.display}`, 'Show Output').then((c) => c && ctx.output.show(true));
    } else if (e instanceof UserError) {
      ctx.output.warn(`${name}: ${e.message}`);
      void ui.error(e.message, ...e.actions.map((a) => a.title)).then((c) => e.actions.find((a) => a.title === c)?.run());
    } else {
      const msg = e instanceof Error ? e.message : String(e);
      ctx.output.error(`${name}: ${e instanceof Error && e.stack ? e.stack : msg}`);
      void ui.error(`${name} failed: ${msg}. See "Rulesmith: Show Output" for details.`, 'Show Output').then((c) => c && ctx.output.show(true));
    }
    return undefined;
  }
}

/** A zone argument from a tree item or a command call: a Zone, a tree node holding one, or an id. */
export function zoneArg(arg: unknown): Zone | string | undefined {
  if (typeof arg === 'string' && /^[0-9a-f]{32}$/.test(arg)) return arg;
  if (arg && typeof arg === 'object') {
    const o = arg as { zone?: Zone; id?: unknown; name?: unknown; zoneId?: unknown };
    if (o.zone && typeof o.zone.id === 'string') return o.zone;
    if (typeof o.zoneId === 'string') return o.zoneId;
    if (typeof o.id === 'string' && typeof o.name === 'string' && /^[0-9a-f]{32}$/.test(o.id)) return o as Zone;
  }
  return undefined;
}

/** The zone a command acts on: the argument, else the chosen one, else asks. */
export async function targetZone(ctx: Ctx, arg: unknown): Promise<Zone> {
  const a = zoneArg(arg);
  if (a && typeof a !== 'string') return a;
  if (typeof a === 'string') return ctx.connection.zone(a);
  const chosen = await ctx.connection.chosenZone();
  if (chosen) return chosen;
  const picked = await pickZone(ctx);
  if (!picked) throw new UserError('No zone chosen: choose one in the Zones view or with "Rulesmith: Choose Zone".', [{ title: 'Choose Zone', run: () => vscode.commands.executeCommand('rulesmith.chooseZone') }]);
  await ctx.connection.chooseZone(picked);
  return picked;
}

export async function pickZone(ctx: Ctx): Promise<Zone | undefined> {
  const api = await ctx.connection.api();
  const zones = await api.listZones(ctx.connection.accountId);
  if (zones.length === 0) throw new UserError('These credentials see no zone. Sign in with a token that has access to a zone.');
  const p = await ui.pick(
    zones.map((z) => ({ label: z.name, description: z.plan?.name ?? '', detail: `${z.account?.name ?? ''} · ${z.id}`, value: z })),
    { title: 'Choose the zone for Rulesmith', placeHolder: 'Zone' },
  );
  return p?.value;
}
