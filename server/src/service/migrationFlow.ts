/**
 * The WAF migration as the service stores it: a zone's migration inputs assembled from
 * the store (plan, previous-WAF settings, firewall rules, page rules, migration record)
 * for the pure core in server/src/migration/, and the hook the Rulesets API calls inside
 * the write transaction of every zone-level PUT of the http_request_firewall_managed
 * entry point (`managedEntryPointWrite`).
 *
 * Storage:
 * - `previous_waf.settings`: the core's `ZoneWafSettings` as JSON. No row = the defaults
 *   (`defaultWafSettings`: WAF on, every package/group/rule at its default) on a paid plan.
 * - `waf_migration.state`: `StoredMigration` below — the core's `MigrationRecord` in the
 *   API's words (`migration_state`, `created`, `validation_since`, `completed_on`) plus a
 *   snapshot of the status written at the transition (`old_waf_status`,
 *   `new_waf_status`, `source`). Only the record fields are read back; the status is
 *   recomputed by the core's `migrationStatus`. No row = the zone never started (`start`,
 *   or `default` on Free).
 * - `zones.page_rules`: the core's `PageRule[]` (zone.ts) as JSON.
 */
import { ApiError, CODES, timestamp } from './api';
import {
  defaultWafSettings,
  migrationPut,
  migrationStatus,
  type MigrationRecord,
  type MigrationZone,
  type PageRule,
  type ZoneWafSettings,
} from '../migration/index';
import { migrationApiError } from './migrationErrors';
import type { LegacyAction, LegacyFirewallRule, SkipProduct } from '../rulesets/legacy';
import type { ZoneRow } from './scope';
import { fromJson, toJson, type Store } from './store';

/** The JSON kept in `waf_migration.state`. */
export interface StoredMigration {
  readonly migration_state: MigrationRecord['state'];
  readonly created?: string;
  readonly validation_since?: string;
  readonly completed_on?: string;
  readonly old_waf_status?: 'enabled' | 'disabled';
  readonly new_waf_status?: 'enabled' | 'disabled';
  readonly source?: 'defaults' | 'zone';
}

export function loadMigrationRecord(store: Store, zoneId: string): MigrationRecord | undefined {
  const row = store.get<{ state: string }>('SELECT state FROM waf_migration WHERE zone_id = ?', [zoneId]);
  if (!row) return undefined;
  const s = fromJson<StoredMigration>(row.state);
  return {
    state: s.migration_state,
    ...(s.created ? { created: s.created } : {}),
    ...(s.validation_since ? { validationSince: s.validation_since } : {}),
    ...(s.completed_on ? { completedAt: s.completed_on } : {}),
  };
}

/** Writes the record, with the status it gives the zone. */
export function saveMigrationRecord(store: Store, zone: MigrationZone, record: MigrationRecord): void {
  const status = migrationStatus({ ...zone, migration: record });
  const stored: StoredMigration = {
    migration_state: record.state,
    ...(record.created ? { created: record.created } : {}),
    ...(record.validationSince ? { validation_since: record.validationSince } : {}),
    ...(record.completedAt ? { completed_on: record.completedAt } : {}),
    old_waf_status: status.old_waf_status,
    new_waf_status: status.new_waf_status,
    source: status.source,
  };
  store.run('INSERT INTO waf_migration (zone_id, state) VALUES (?, ?) ON CONFLICT (zone_id) DO UPDATE SET state = excluded.state', [zone.waf.zoneId, toJson(stored)]);
}

/**
 * A zone's previous-WAF settings. The API writes them whole; a row written otherwise (a
 * hand edit, a fixture) is read with the API's defaults for what it lacks: the zone-wide
 * switch on, an override's URL list empty (it crashed the migration check and config).
 */
export function loadWafSettings(store: Store, zoneId: string): ZoneWafSettings {
  const row = store.get<{ settings: string }>('SELECT settings FROM previous_waf WHERE zone_id = ?', [zoneId]);
  if (!row) return defaultWafSettings(zoneId);
  const s = fromJson<Partial<ZoneWafSettings>>(row.settings);
  const overrides = Array.isArray(s.overrides) ? { overrides: s.overrides.map((o) => ({ ...o, urls: Array.isArray(o.urls) ? (o.urls as unknown[]).filter((u): u is string => typeof u === 'string') : [] })) } : {};
  return { ...s, ...overrides, zoneId, enabled: s.enabled !== false };
}

export function saveWafSettings(store: Store, settings: ZoneWafSettings): void {
  store.run('INSERT INTO previous_waf (zone_id, settings) VALUES (?, ?) ON CONFLICT (zone_id) DO UPDATE SET settings = excluded.settings', [settings.zoneId, toJson(settings)]);
}

interface FirewallRow {
  id: string;
  filter_id: string;
  action: string;
  priority: number | null;
  paused: number;
  description: string;
  ref: string;
  products: string;
  created_on: string;
  modified_on: string;
  f_id: string | null;
  f_expression: string | null;
  f_paused: number | null;
  f_description: string | null;
  f_ref: string | null;
}

/**
 * The zone's legacy firewall rules with their filters, in stored order (`seq`); a filter
 * deleted under its rule is `{id, deleted: true}` (rules-api §4.1).
 */
export function loadFirewallRules(store: Store, zoneId: string): LegacyFirewallRule[] {
  const rows = store.all<FirewallRow>(
    `SELECT r.id, r.filter_id, r.action, r.priority, r.paused, r.description, r.ref, r.products, r.created_on, r.modified_on,
            f.id AS f_id, f.expression AS f_expression, f.paused AS f_paused, f.description AS f_description, f.ref AS f_ref
       FROM firewall_rules r LEFT JOIN filters f ON f.id = r.filter_id
      WHERE r.zone_id = ? ORDER BY r.seq`,
    [zoneId],
  );
  return rows.map((r) => ({
    id: r.id,
    filter:
      r.f_id === null
        ? { id: r.filter_id, deleted: true }
        : { id: r.f_id, expression: r.f_expression ?? '', paused: r.f_paused === 1, description: r.f_description ?? '', ref: r.f_ref ?? '' },
    action: r.action as LegacyAction,
    priority: r.priority,
    paused: r.paused === 1,
    description: r.description,
    ref: r.ref,
    products: fromJson<SkipProduct[]>(r.products),
    created_on: r.created_on,
    modified_on: r.modified_on,
  }));
}

export function loadPageRules(zone: Pick<ZoneRow, 'page_rules'>): PageRule[] {
  try {
    const v = JSON.parse(zone.page_rules || '[]') as unknown;
    return Array.isArray(v) ? (v as PageRule[]) : [];
  } catch {
    return [];
  }
}

/** Everything the migration core needs about the zone, from the store. */
export function migrationZone(store: Store, zone: ZoneRow): MigrationZone {
  const migration = loadMigrationRecord(store, zone.id);
  return {
    plan: zone.plan,
    waf: loadWafSettings(store, zone.id),
    firewallRules: loadFirewallRules(store, zone.id),
    pageRules: loadPageRules(zone),
    ...(migration ? { migration } : {}),
  };
}

/**
 * `phase_two`: the hosted helper's switch for the second phase of the migration (the one
 * that also converts firewall-rule bypasses and page rules). Rulesmith always does the
 * second phase, so `1` (or `true`) and absence mean the same; anything else is refused.
 */
export function checkPhaseTwo(query: URLSearchParams): void {
  const v = query.get('phase_two');
  if (v === null || v === '' || v === '1' || v === 'true') return;
  throw ApiError.of(
    400,
    CODES.invalidValue,
    `'${v}' is not a valid value for phase_two: use phase_two=1 (Rulesmith always runs the second phase of the migration, which also converts firewall-rule bypasses and page rules)`,
  );
}

/**
 * Called by the Rulesets API inside the write transaction of every zone-level PUT of
 * `phases/http_request_firewall_managed/entrypoint`, before the ruleset is saved: applies
 * the migration state machine (the core's `migrationPut`) to `waf_migration` (and
 * `phase_two`) of the query and the body's rules. Throws an ApiError to refuse the PUT
 * (nothing is saved: the transaction rolls back); otherwise records the new state.
 */
export function managedEntryPointWrite(store: Store, zone: ZoneRow, rules: readonly unknown[], query: URLSearchParams, rulePointer?: (index: number) => string): void {
  checkPhaseTwo(query);
  const mz = migrationZone(store, zone);
  const outcome = migrationPut(mz, query.get('waf_migration'), rules, timestamp(), rulePointer);
  if (!outcome.ok) throw migrationApiError(outcome.error);
  if (outcome.effect !== 'saved' && outcome.migration) saveMigrationRecord(store, mz, outcome.migration);
}
