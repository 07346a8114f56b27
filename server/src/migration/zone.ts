/**
 * What the migration core needs to know about a zone, as plain values the HTTP layer
 * assembles from its store: the plan, the previous WAF's settings, the legacy firewall
 * rules, the page rules that touch the WAF, and the migration's own record.
 */
import type { Plan } from '../language/scheme/types';
import type { LegacyFirewallRule } from '../rulesets/legacy';
import type { ZoneWafSettings } from './previousWafSettings';

/**
 * Migration states (rules-api §3 `migration_state`): `default` — the zone has no previous
 * WAF (Free plan), nothing to migrate; `start` — the previous WAF runs, the migration has
 * not started; `validation` — Enterprise only, both versions run, the new one first;
 * `complete` — migrated, irreversible. (`default` vs `start` is our reading of the values
 * seen in scripts; the hosted service never documented the difference.)
 */
export const MIGRATION_STATES = ['default', 'start', 'validation', 'complete'] as const;
export type MigrationState = (typeof MIGRATION_STATES)[number];

/** The migration's stored record. Absent = never touched (`start`, or `default` on Free). */
export interface MigrationRecord {
  readonly state: 'start' | 'validation' | 'complete';
  /** When the migration was first started (validation or pending), RFC 3339. */
  readonly created?: string;
  /** When validation mode was entered. */
  readonly validationSince?: string;
  /** When the migration completed. */
  readonly completedAt?: string;
}

/**
 * A Page Rule as far as the migration cares (modelled minimally): its URL patterns
 * (`*` wildcards, scheme optional, e.g. `example.com/admin/*`) and its WAF setting —
 * "Web Application Firewall: Off|On" (`waf`) or "Disable Security" (`disable_security`).
 */
export interface PageRule {
  readonly id: string;
  readonly targets: readonly string[];
  readonly waf?: 'on' | 'off';
  /** "Disable Security": turns the WAF off (among other security features) for the URLs. */
  readonly disable_security?: boolean;
  /** Default active. */
  readonly status?: 'active' | 'disabled';
}

export interface MigrationZone {
  readonly plan: Plan;
  readonly waf: ZoneWafSettings;
  readonly firewallRules?: readonly LegacyFirewallRule[];
  /** In priority order, the first highest (only the first that matches a URL applies). */
  readonly pageRules?: readonly PageRule[];
  readonly migration?: MigrationRecord;
}

/** The zone's migration state. */
export function migrationState(zone: Pick<MigrationZone, 'plan' | 'migration'>): MigrationState {
  if (zone.migration) return zone.migration.state;
  return zone.plan === 'free' ? 'default' : 'start';
}
