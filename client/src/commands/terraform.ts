// rulesmith.exportTerraform — a zone's entry points (each WAF phase) and the custom rulesets
// they execute, as Terraform `cloudflare_ruleset` resources with `import` blocks, in a new
// editor (provider v5, or v4 when chosen). The same as `rulesmith terraform export`.
import * as vscode from 'vscode';
import type { Ruleset } from '../../../server/src/rulesApi';
import { WAF_PHASES } from '../../../server/src/rulesets/engine';
import { exportTerraform, type ExportedRuleset, type ProviderVersion } from '../../../server/src/terraform/export';
import * as ui from '../ui';
import { runCommand, targetZone, type Ctx } from './context';

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
  const rulesets = await ui.progress(
    `Rulesmith: reading the rulesets of ${zone.name}…`,
    async () => {
      const out: ExportedRuleset[] = [];
      for (const phase of WAF_PHASES) {
        const r = await api.getEntryPoint(zone.id, phase);
        if (r) out.push({ ruleset: r as unknown as Record<string, unknown>, scope: { zoneId: zone.id } });
      }
      const accountId = zone.account?.id;
      const executed = new Set(out.flatMap((r) => ((r.ruleset as unknown as Ruleset).rules ?? []).flatMap((rule) => (rule.action === 'execute' && typeof (rule.action_parameters as { id?: unknown })?.id === 'string' ? [(rule.action_parameters as { id: string }).id] : []))));
      if (accountId) {
        for (const id of executed) {
          const custom = await api.getAccountRuleset(accountId, id).catch(() => undefined);
          if (custom?.kind === 'custom') out.push({ ruleset: custom as unknown as Record<string, unknown>, scope: { accountId } });
        }
      }
      return out;
    },
    'window',
  );
  const doc = await vscode.workspace.openTextDocument({ language: 'terraform', content: exportTerraform(rulesets, choice.value) });
  await vscode.window.showTextDocument(doc);
  return doc;
}
