// Sign in / out, choose the zone, refresh, restart the local service.
//   rulesmith.signIn   — local service (rulesmith.api.baseUrl empty): starts it and signs in
//                        with its own token; otherwise asks for an API token (or email +
//                        Global API key), verifies it (/user/tokens/verify) and only then
//                        keeps it in SecretStorage. Tests may pass {token} or {email, key}.
//   rulesmith.signOut  — forgets the credentials (the local service: stops signing in).
import * as vscode from 'vscode';
import type { Credentials, Zone } from '../api/rulesApi';
import { RulesApiError } from '../api/errors';
import * as ui from '../ui';
import { pickZone, refreshViews, runCommand, UserError, zoneArg, type Ctx } from './context';

async function askCredentials(baseUrl: string, otherUrl: string | undefined): Promise<Credentials | undefined> {
  const kind = await ui.pick(
    [
      { label: 'API token', description: 'recommended', detail: 'A token scoped to the accounts and zones it may change (Zone WAF, Firewall Services…)', value: 'token' as const },
      { label: 'Email and Global API key', description: 'legacy', detail: 'Full access to everything the user can do', value: 'key' as const },
    ],
    {
      title: `Sign in to ${baseUrl} with…`,
      ...(otherUrl ? { placeHolder: `Your stored credentials are for ${otherUrl}; they are not sent to another URL.` } : {}),
    },
  );
  if (!kind) return undefined;
  const notEmpty = (v: string) => (v.trim() === '' ? 'Required' : /\s/.test(v.trim()) ? 'No spaces, please' : undefined);
  if (kind.value === 'token') {
    const token = await ui.input({ title: `API token for ${baseUrl}`, prompt: 'Paste the API token (kept in VS Code secret storage for this URL only, never logged)', password: true, validateInput: notEmpty });
    return token ? { kind: 'token', token: token.trim() } : undefined;
  }
  const email = await ui.input({ title: 'Account email', prompt: 'The email of the user the key belongs to', validateInput: (v) => (/^\S+@\S+$/.test(v.trim()) ? undefined : 'An email address, e.g. user@example.com') });
  if (!email) return undefined;
  const key = await ui.input({ title: `Global API key for ${baseUrl}`, prompt: 'Paste the Global API key (kept in VS Code secret storage for this URL only, never logged)', password: true, validateInput: notEmpty });
  return key ? { kind: 'key', email: email.trim(), key: key.trim() } : undefined;
}

function credentialsArg(arg: unknown): Credentials | undefined {
  if (!arg || typeof arg !== 'object') return undefined;
  const o = arg as { token?: unknown; email?: unknown; key?: unknown };
  if (typeof o.token === 'string') return { kind: 'token', token: o.token };
  if (typeof o.email === 'string' && typeof o.key === 'string') return { kind: 'key', email: o.email, key: o.key };
  return undefined;
}

export function registerSessionCommands(ctx: Ctx): vscode.Disposable[] {
  const c = ctx.connection;
  return [
    vscode.commands.registerCommand('rulesmith.signIn', (arg?: unknown) =>
      runCommand(ctx, 'Sign in', async () => {
        let creds = credentialsArg(arg);
        if (!c.isLocal && !creds) creds = await askCredentials(c.configuredBaseUrl, c.credentialsFor);
        if (!c.isLocal && !creds) return undefined;
        try {
          const r = await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: c.isLocal ? 'Rulesmith: starting the local rules service…' : 'Rulesmith: verifying the credentials…' }, () =>
            c.signIn(c.isLocal ? undefined : creds),
          );
          const where = c.state().baseUrl ?? 'the rules service';
          void ui.info(r.local ? `Signed in to the local rules service (${where}).` : `Signed in to ${where} (token ${r.status}).`);
          refreshViews(ctx);
          return { ...r, baseUrl: where };
        } catch (e) {
          if (e instanceof RulesApiError) {
            // Say it here (the credentials were not kept), with a way to try again.
            throw new UserError(`Sign-in refused: ${e.display}`, [{ title: 'Try Again', run: () => vscode.commands.executeCommand('rulesmith.signIn') }]);
          }
          if (c.isLocal) throw new UserError(`The local rules service could not start: ${e instanceof Error ? e.message : String(e)}. See "Rulesmith: Show Output".`, [{ title: 'Show Output', run: () => ctx.output.show(true) }]);
          throw e;
        }
      }),
    ),
    vscode.commands.registerCommand('rulesmith.signOut', () =>
      runCommand(ctx, 'Sign out', async () => {
        await c.signOut();
        refreshViews(ctx);
        void ui.info(c.isLocal ? 'Signed out of the local rules service.' : 'Signed out; the credentials were removed from secret storage.');
        return true;
      }),
    ),
    vscode.commands.registerCommand('rulesmith.chooseZone', (arg?: unknown) =>
      runCommand(ctx, 'Choose zone', async () => {
        const a = zoneArg(arg);
        let zone: Zone | undefined = typeof a === 'string' ? await c.zone(a) : a;
        zone ??= await pickZone(ctx);
        if (!zone) return undefined;
        await c.chooseZone(zone);
        await c.zone(zone.id, true);
        refreshViews(ctx);
        return zone;
      }),
    ),
    vscode.commands.registerCommand('rulesmith.refreshViews', () => {
      refreshViews(ctx);
    }),
    vscode.commands.registerCommand('rulesmith.restartLocalService', () =>
      runCommand(ctx, 'Restart the local rules service', async () => {
        if (!c.isLocal) throw new UserError('The local rules service is used only when rulesmith.api.baseUrl is empty.');
        const info = await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: 'Rulesmith: restarting the local rules service…' }, () => c.local.restart());
        refreshViews(ctx);
        void ui.info(`The local rules service runs at ${info.baseUrl}.`);
        return info.baseUrl;
      }),
    ),
  ];
}
