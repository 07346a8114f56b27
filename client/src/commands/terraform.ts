// rulesmith.exportTerraform — a zone's entry points and the custom rulesets they execute, as
// Terraform `cloudflare_ruleset` resources with `import` blocks, in a new editor (provider
// v5, or v4 when chosen). The same reads as `rulesmith terraform export`
// (server/src/terraform/collect.ts, through api/terraformReader.ts): when the token may not
// read one of the zone's entry points or a custom ruleset the zone executes, the export
// stops with the CLI's message (the refused request, what needs it, the permission to add)
// rather than leaving the ruleset out; so it does when the zone does not say its account.
import * as vscode from 'vscode';
import { ZoneExportStopped, ZoneReadRefused } from '../../../server/src/terraform/collect';
import { exportTerraform, type ProviderVersion } from '../../../server/src/terraform/export';
import { readZoneForExport } from '../api/terraformReader';
import * as ui from '../ui';
import { runCommand, targetZone, UserError, type Ctx } from './context';

export function registerTerraformCommands(ctx: Ctx): vscode.Disposable[] {
  return [vscode.commands.registerCommand('rulesmith.exportTerraform', (zone?: unknown) => runCommand(ctx, 'Export to Terraform', () => exportZone(ctx, zone)))];
}

async function exportZone(ctx: Ctx, zoneArg: unknown): Promise<vscode.TextDocument | undefined> {
  const zone = await targetZone(ctx, zoneArg);
  const choice = await ui.pick(
    [
      { label: 'Provider v5', description: 'rules = [ { … } ]', value: 5 as ProviderVersion },
      { label: 'Provider v4', description: 'rules { … } blocks', value: 4 as ProviderVersion },
    ],
    { title: `Export ${zone.name} to Terraform` },
  );
  if (!choice) return undefined;
  const api = await ctx.connection.api();
  const rulesets = await ui.progress(`Rulesmith: reading the rulesets of ${zone.name}…`, () => readZoneForExport(api, zone), 'window').catch((e: unknown) => {
    // A refusal the export cannot do without: the CLI's message, and a way to use another token.
    if (e instanceof ZoneReadRefused) throw new UserError(`Export to Terraform failed: ${e.message}`, [{ title: 'Sign In', run: () => vscode.commands.executeCommand('rulesmith.signIn') }]);
    // The export could not be made whole for another reason (the zone does not say its account): the CLI's message.
    if (e instanceof ZoneExportStopped) throw new UserError(`Export to Terraform failed: ${e.message}`);
    throw e;
  });
  const doc = await vscode.workspace.openTextDocument({ language: 'terraform', content: exportTerraform(rulesets, choice.value) });
  await vscode.window.showTextDocument(doc);
  return doc;
}
