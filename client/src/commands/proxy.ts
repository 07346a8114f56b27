// The Zones view's Proxy item: start a WAF proxy for a zone in front of an app, open the
// URL to browse it through the zone's rules, stop it (docs/proxy.md).
import * as vscode from 'vscode';
import type { ZonesNode } from '../views/zonesView';
import { runCommand, type Ctx } from './context';

type ProxyNode = ZonesNode & { kind: 'proxy' };

export function registerProxyCommands(ctx: Ctx): vscode.Disposable[] {
  const view = ctx.views.zones;
  return [
    vscode.commands.registerCommand('rulesmith.proxy.start', async (n: ProxyNode) => {
      const upstream = await vscode.window.showInputBox({
        title: `WAF proxy for ${n.zone.name}`,
        prompt: "Your app's URL: requests to the proxy run through this zone's rules and then go there",
        value: n.live.proxied?.upstream ?? 'http://127.0.0.1:3000',
        validateInput: (v) => (/^https?:\/\/[^/\s]+/.test(v.trim()) ? undefined : 'An http:// or https:// URL, e.g. http://127.0.0.1:3000'),
      });
      if (!upstream) return;
      await runCommand(ctx, `Start the WAF proxy for ${n.zone.name}`, async () => {
        const started = await view.proxy.start(n.zone.name, upstream.trim());
        await view.updateProxy(n);
        const open = await vscode.window.showInformationMessage(`The WAF proxy for ${n.zone.name} runs at ${started.url}`, 'Open');
        if (open) await vscode.env.openExternal(vscode.Uri.parse(started.url));
      });
    }),
    vscode.commands.registerCommand('rulesmith.proxy.stop', (n: ProxyNode) =>
      runCommand(ctx, `Stop the WAF proxy for ${n.zone.name}`, async () => {
        await view.proxy.stop(n.zone.name);
        await view.updateProxy(n);
      }),
    ),
    vscode.commands.registerCommand('rulesmith.proxy.open', async (n: ProxyNode) => {
      if (n.live.proxied) await vscode.env.openExternal(vscode.Uri.parse(n.live.proxied.url));
    }),
  ];
}
