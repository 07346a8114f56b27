/**
 * The WAF migration helper (rules-api §3): `GET /zones/{id}/waf_migration/check`,
 * `…/config` and `…/status`. The migration itself is the entry-point PUT of the
 * http_request_firewall_managed phase with `waf_migration=…` (routes/rulesets.ts calls
 * migrationFlow.ts). Everything here is the core's (server/src/migration/); this file
 * only reads the zone's inputs from the store and shapes the answers.
 *
 * Our extensions, beside the hosted shapes (documented in the README):
 * - check: `reasons: [{code, message}]` when `compatible` is false (`code` is the core's
 *   reason code: `uri-overrides`, `too-many-firewall-rules`, `expression-too-long`,
 *   `no-previous-waf`, `already-migrated`);
 * - config: `not_migrated: [{kind, id, package_id?, name, was, reason}]` — the group and
 *   rule overrides (and anything else) the new configuration does not carry over.
 * A zone with no previous WAF (Free) or already migrated has no config to propose: the
 * config call answers the check's reason as an error.
 *
 * Permissions: Zone WAF Read (the PUT needs Zone WAF Write, checked by the Rulesets API).
 */
import { checkMigration, migrationConfig, migrationStatus, type NotMigrated } from '../../migration/index';
import { defaultCatalog } from '../../managed/catalog';
import type { MigrationCheck, MigrationConfig, MigrationStatus, NotMigrated as NotMigratedObject } from '../../rulesApi';
import { migrationApiError } from '../migrationErrors';
import { checkPhaseTwo, migrationZone } from '../migrationFlow';
import type { Router } from '../router';
import { requireZone } from '../scopeAccess';

export function notMigratedObject(n: NotMigrated): NotMigratedObject {
  return { kind: n.kind, id: n.id, ...(n.packageId ? { package_id: n.packageId } : {}), name: n.name, was: n.was, reason: n.reason };
}

export function migrationRoutes(r: Router): void {
  r.get('/zones/:zone_id/waf_migration/check', (ctx) => {
    const zone = requireZone(ctx, ['Zone WAF'], 'Read');
    checkPhaseTwo(ctx.query);
    const check = checkMigration(migrationZone(ctx.service.store, zone));
    const result: MigrationCheck = {
      ...check.result,
      ...(check.result.compatible ? {} : { reasons: check.reasons.map((x) => ({ code: x.code, message: x.message })) }),
    };
    return { result };
  });

  r.get('/zones/:zone_id/waf_migration/config', (ctx) => {
    const zone = requireZone(ctx, ['Zone WAF'], 'Read');
    checkPhaseTwo(ctx.query);
    const mz = migrationZone(ctx.service.store, zone);
    const blocking = checkMigration(mz).reasons.find((x) => x.code === 'no-previous-waf' || x.code === 'already-migrated');
    if (blocking) throw migrationApiError({ code: 'not-eligible', reason: blocking.code, message: blocking.message });
    const { config, notMigrated } = migrationConfig(mz, defaultCatalog);
    const result: MigrationConfig = { name: config.name, rules: config.rules, not_migrated: notMigrated.map(notMigratedObject) };
    return { result };
  });

  r.get('/zones/:zone_id/waf_migration/status', (ctx) => {
    const zone = requireZone(ctx, ['Zone WAF'], 'Read');
    const result: MigrationStatus = migrationStatus(migrationZone(ctx.service.store, zone));
    return { result };
  });
}
