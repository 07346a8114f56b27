// When the rules service does not answer (RulesApiError.unreachable): the buttons that
// go with the message — "Start Local Service" (when the service is, or could be, on this
// machine) and "Retry" — and the command behind the first, rulesmith.startLocalService:
// the extension's own service is restarted; a service configured at a loopback URL is
// started there with the token the extension signs in with (api/serviceAtUrl.ts).
import * as vscode from 'vscode';
import type { RulesApiError } from '../api/errors';
import { loopbackAddress, ServicesAtUrls } from '../api/serviceAtUrl';
import * as ui from '../ui';
import { refreshViews, runCommand, UserError, type Ctx } from './context';

export const START_LOCAL_SERVICE = 'Start Local Service';
export const RETRY = 'Retry';

/** Whether "Start Local Service" can help with this failure. */
export function canStartService(ctx: Ctx, e: RulesApiError): boolean {
  return ctx.connection.isLocal || (e.unreachable !== undefined && loopbackAddress(e.unreachable) !== undefined);
}

export function registerServiceDown(ctx: Ctx): vscode.Disposable[] {
  const services = new ServicesAtUrls(ctx.context, ctx.output);
  return [
    services,
    vscode.commands.registerCommand('rulesmith.startLocalService', () =>
      runCommand(ctx, 'Start the local rules service', async () => {
        const c = ctx.connection;
        let url: string;
        if (c.isLocal) {
          url = (await ui.progress('Rulesmith: starting the local rules service…', () => c.local.restart())).baseUrl;
        } else {
          const base = c.configuredBaseUrl;
          if (!loopbackAddress(base)) throw new UserError(`The rules service at ${base} is not on this machine: start it where it runs, or clear rulesmith.api.baseUrl to use the extension's own local service.`);
          const token = await c.configuredToken();
          if (!token) throw new UserError(`Sign in with an API token for ${base} first: the service is started with the token the extension uses.`, [{ title: 'Sign In', run: () => vscode.commands.executeCommand('rulesmith.signIn') }]);
          url = await ui.progress(`Rulesmith: starting the rules service at ${base}…`, () => services.start(base, token));
        }
        refreshViews(ctx);
        void ui.info(`The rules service runs at ${url}.`);
        return url;
      }),
    ),
  ];
}
