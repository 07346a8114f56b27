/**
 * A zone's deployed configuration as the evaluation engine takes it (rulesets/engine.ts
 * `ZoneConfig`), built from plain data (`ZoneSource`, read by zoneConfig.ts) with no I/O,
 * so the trace worker thread can build it from a copy. See zoneConfig.ts for what goes in.
 */
import type { Phase } from '../language/scheme/types';
import { defaultCatalog } from '../managed/catalog';
import { migrationState, migrationStatus, previousWafStandIn, type MigrationState, type MigrationZone } from '../migration/index';
import type { PreviousWaf, ZoneConfig } from '../rulesets/engine';
import type { Ruleset } from '../rulesets/model';
import type { StoredRuleset } from './rulesetStore';
import type { ZoneRow } from './scope';

/** What a zone's deployed configuration is built from: plain data, so a worker thread can take a copy. */
export interface ZoneSource {
  readonly plan: ZoneRow['plan'];
  readonly migration: MigrationZone;
  readonly rulesets: readonly StoredRuleset[];
}

export interface DeployedZone {
  readonly config: ZoneConfig;
  /** The previous WAF's verdict function, while the previous WAF runs (start with the WAF on, validation). */
  readonly previousWaf?: PreviousWaf;
  readonly migrationState: MigrationState;
  /** The zone's managed entry point exists but does not run (state `start`). */
  readonly managedEntryPointInactive: boolean;
}

/** The deployed configuration of a zone from its source (no I/O). */
export function zoneConfigOf(source: ZoneSource): DeployedZone {
  const mz = source.migration;
  const state = migrationState(mz);
  const entryPoints: Partial<Record<Phase, Ruleset>> = {};
  const customRulesets: Ruleset[] = [];
  for (const rs of source.rulesets) {
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
    plan: source.plan,
  };
  return { config, ...(previousWaf ? { previousWaf } : {}), migrationState: state, managedEntryPointInactive };
}

