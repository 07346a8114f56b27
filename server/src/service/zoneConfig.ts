/**
 * A zone's deployed configuration as the evaluation engine takes it (rulesets/engine.ts
 * `ZoneConfig`), read from the store: what the trace runs a request through.
 *
 * - Entry points: the zone's rulesets of kind `zone`, one per phase, at their latest
 *   version (rulesetStore.ts `zoneRulesets`: the bodies of `ruleset_versions`, the whole
 *   ruleset objects as GET returns them). Account-level entry points (`kind: root`)
 *   are not part of a zone's evaluation here: the engine takes one entry point per phase.
 * - Custom rulesets: the account's rulesets of kind `custom`, latest versions, so that
 *   `execute` rules find them.
 * - Legacy firewall rules and their filters (a filter deleted under a rule is
 *   `{id, deleted: true}`); `migrated: false` — the service keeps them in their own
 *   tables and runs them before the custom phase, as the hosted service did before the
 *   firewall-rules sunset.
 * - The managed-rules migration (state from `waf_migration`, core `migrationState`):
 *   - `default` (Free, never had the previous WAF) and `complete`: the entry points as they
 *     are; no previous WAF.
 *   - `validation`: the new managed rules run first and only record; the previous WAF's
 *     verdict acts (`validationMode` + the core's stand-in `previousWafStandIn`).
 *   - `start` (the previous WAF is the zone's WAF; status says the new one is disabled):
 *     the managed entry point does not run (on Pro/Business it holds only disabled rules
 *     anyway; an Enterprise zone's enabled rules wait for the migration too, as status
 *     reports `new_waf_status: disabled`), and the previous WAF decides in its place. The
 *     engine runs the previous WAF only in validation mode, after the managed phase, so
 *     `start` is given to it as validation mode without a managed entry point: exactly
 *     "the previous WAF alone". With the zone-wide previous-WAF switch off, neither runs.
 * - Plan: the zone's; catalog: `defaultCatalog`.
 */
import { defaultCatalog } from '../managed/catalog';
import { migrationState, migrationStatus, previousWafStandIn, type MigrationState } from '../migration/index';
import type { PreviousWaf, ZoneConfig } from '../rulesets/engine';
import type { Ruleset } from '../rulesets/model';
import type { Phase } from '../language/scheme/types';
import { migrationZone } from './migrationFlow';
import { ZONE_SELECT, type ZoneRow } from './scope';
import { zoneRulesets } from './rulesetStore';
import type { Store } from './store';

export interface DeployedZone {
  readonly config: ZoneConfig;
  /** The previous WAF's verdict function, while the previous WAF runs (start with the WAF on, validation). */
  readonly previousWaf?: PreviousWaf;
  readonly migrationState: MigrationState;
  /** The zone's managed entry point exists but does not run (state `start`). */
  readonly managedEntryPointInactive: boolean;
}

export function zoneConfig(store: Store, zoneId: string): DeployedZone {
  const zone = store.get<ZoneRow>(`${ZONE_SELECT} WHERE z.id = ?`, [zoneId]);
  if (!zone) throw new Error(`no zone ${zoneId}`);
  const mz = migrationZone(store, zone);
  const state = migrationState(mz);
  const entryPoints: Partial<Record<Phase, Ruleset>> = {};
  const customRulesets: Ruleset[] = [];
  for (const rs of zoneRulesets(store, zone.id)) {
    if (rs.kind === 'zone') entryPoints[rs.phase] = rs as Ruleset;
    else if (rs.kind === 'custom') customRulesets.push(rs as Ruleset);
  }

  let previousWaf: PreviousWaf | undefined;
  let validationMode = false;
  let managedEntryPointInactive = false;
  if (state === 'start') {
    managedEntryPointInactive = entryPoints.http_request_firewall_managed !== undefined;
    delete entryPoints.http_request_firewall_managed;
    if (migrationStatus(mz).old_waf_status === 'enabled') {
      validationMode = true;
      previousWaf = previousWafStandIn(mz, defaultCatalog).previousWaf;
    }
  } else if (state === 'validation') {
    validationMode = true;
    previousWaf = previousWafStandIn(mz, defaultCatalog).previousWaf;
  }

  const config: ZoneConfig = {
    entryPoints,
    customRulesets,
    catalog: defaultCatalog,
    legacy: { firewallRules: mz.firewallRules ?? [], migrated: false, validationMode },
    plan: zone.plan,
  };
  return { config, ...(previousWaf ? { previousWaf } : {}), migrationState: state, managedEntryPointInactive };
}
