/**
 * A zone's deployed configuration as the evaluation engine takes it (rulesets/engine.ts
 * `ZoneConfig`), read from the store: what the trace runs a request through.
 *
 * - Entry points: the zone's rulesets of kind `zone`, one per phase, at their latest
 *   version (rulesetStore.ts `zoneRulesets`: the bodies of `ruleset_versions`, the whole
 *   ruleset objects as GET returns them). Account-level entry points (`kind: root`)
 *   are not part of a zone's evaluation here: the engine takes one entry point per phase.
 * - Custom rulesets: the account's rulesets of kind `custom`, latest versions, so that
 *   `execute` rules find them; and before a ruleset's latest, each version of it an execute
 *   rule of the zone's entry points pins (`action_parameters.version`), which the engine runs
 *   for that rule. A version's body never changes, and which one is pinned is the entry
 *   point's (whose version the deployment key has), so the key below covers them.
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
 *
 * `deploymentKey` digests everything the configuration is built from (the trace keeps zones
 * compiled under it, traceEval.ts `compiledFor`), read with a few aggregate queries:
 * the (id, latest stored version) of the zone's rulesets and the account's (a version's
 * body never changes, and a number is given out again only after a group-commit batch
 * was lost whole, which Store.batchesLost counts into the key); each firewall rule's id,
 * order and modified_on with its filter's id and modified_on (every write of a rule or
 * filter sets modified_on; a deleted filter drops out of the join); the zone's plan and
 * page rules; the previous-WAF settings and the migration record as stored. Any change
 * gives another key, so a trace never runs a stale configuration; the catalog is a
 * constant of the process.
 */
import { sha256 } from './sha256';
import type { ZoneSource } from './deployment';
import { migrationZone } from './migrationFlow';
import { zoneRulesets } from './rulesetStore';
import { ZONE_SELECT, type ZoneRow } from './scope';
import type { Store } from './store';

/** What the zone's deployed configuration is built from (deployment.ts builds it). */
export function zoneSource(store: Store, zoneId: string): ZoneSource {
  const zone = store.get<ZoneRow>(`${ZONE_SELECT} WHERE z.id = ?`, [zoneId]);
  if (!zone) throw new Error(`no zone ${zoneId}`);
  return { plan: zone.plan, migration: migrationZone(store, zone), rulesets: zoneRulesets(store, zone.id) };
}

/** What a zone's deployed configuration is built from, as one digest (see the header). */
export function deploymentKey(store: Store, zoneId: string): string {
  const zone = store.get<{ account_id: string; plan: string; page_rules: string }>('SELECT account_id, plan, page_rules FROM zones WHERE id = ?', [zoneId]);
  if (!zone) throw new Error(`no zone ${zoneId}`);
  const rulesets = store.get<{ k: string | null }>(
    // The newest version of each ruleset by its own index lookup: a join grouped by ruleset read
    // every version row (37–63 ms at 100,000 versions), on the proxy's thread after each write.
    `SELECT group_concat(id || '@' || v, ',') AS k FROM (
       SELECT r.id AS id, (SELECT MAX(v.version) FROM ruleset_versions v WHERE v.ruleset_id = r.id) AS v FROM rulesets r
        WHERE (r.scope = 'zone' AND r.scope_id = ?) OR (r.scope = 'account' AND r.scope_id = ?)
        ORDER BY r.id)`,
    [zoneId, zone.account_id],
  );
  const firewall = store.get<{ n: number; k: string | null }>(
    `SELECT COUNT(*) AS n, group_concat(k, ',') AS k FROM (
       SELECT r.id || ':' || r.seq || ':' || r.modified_on || ':' || coalesce(f.id || ':' || f.modified_on, '-') AS k
         FROM firewall_rules r LEFT JOIN filters f ON f.id = r.filter_id
        WHERE r.zone_id = ? ORDER BY r.seq, r.id)`,
    [zoneId],
  );
  const waf = store.get<{ settings: string }>('SELECT settings FROM previous_waf WHERE zone_id = ?', [zoneId]);
  const migration = store.get<{ state: string }>('SELECT state FROM waf_migration WHERE zone_id = ?', [zoneId]);
  const parts = [String(store.batchesLost), zone.plan, zone.page_rules, rulesets?.k ?? '', String(firewall?.n ?? 0), firewall?.k ?? '', waf?.settings ?? '-', migration?.state ?? '-'];
  return sha256(parts.join('\u0000'), 'hex');
}
