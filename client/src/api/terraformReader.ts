// The reads of Export to Terraform over the extension's API client: what is read and what a
// refusal says is server/src/terraform/collect.ts's, as for `rulesmith terraform export`, so
// the extension and the CLI export the same rulesets and stop with the same message when
// the token may not read one. Plain Node (no vscode): tested against the local service.
import { collectZoneRulesets, type RulesetBody, type ZoneRulesetReader } from '../../../server/src/terraform/collect';
import type { ExportedRuleset } from '../../../server/src/terraform/export';
import { RulesApiError } from './errors';
import type { RulesApi, Zone } from './rulesApi';

/**
 * A reader over `api`. The zone's account comes from `zone` when it says (the zone lists
 * carry it), else from `GET /zones/Z`.
 */
export function rulesApiReader(api: RulesApi, zone?: Pick<Zone, 'id' | 'account'>): ZoneRulesetReader {
  return {
    listZoneRulesets: (zoneId) => api.listZoneRulesets(zoneId),
    getZoneRuleset: async (zoneId, id) => (await api.getZoneRuleset(zoneId, id)) as unknown as RulesetBody,
    zoneAccountId: async (zoneId) => (zoneId === zone?.id && zone.account?.id) || (await api.getZone(zoneId)).account?.id,
    getAccountRuleset: async (accountId, id) => (await api.getAccountRuleset(accountId, id)) as unknown as RulesetBody,
    // What a status means is collect.ts's (classify), as for the CLI.
    status: (e) => (e instanceof RulesApiError ? e.status : undefined),
    // As the CLI words it: `GET /accounts/A/rulesets/R: 403 Authentication error (10000)`.
    describe: (e) => {
      if (!(e instanceof RulesApiError)) return e instanceof Error ? e.message : String(e);
      const why = e.errors.map((m) => `${m.message}${m.code ? ` (${m.code})` : ''}`).join('; ') || `HTTP ${e.status}`;
      return `${e.operation}: ${e.status} ${why}`;
    },
  };
}

/** The zone's entry points and the custom rulesets they execute, to export. */
export function readZoneForExport(api: RulesApi, zone: Pick<Zone, 'id' | 'account'>): Promise<ExportedRuleset[]> {
  return collectZoneRulesets(rulesApiReader(api, zone), zone.id);
}
