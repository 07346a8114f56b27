/**
 * The migration's state machine (rules-api §3, upgrade guide), as pure functions over a
 * zone's values; the HTTP layer stores what they return.
 *
 *   default ── (Free plan: nothing to migrate; every waf_migration value is refused)
 *   start ──waf_migration=validation|2 (Enterprise)──▶ validation
 *   start ──waf_migration=pending|1──▶ complete
 *   validation ──waf_migration=pending|1──▶ complete
 *   validation ──waf_migration=validation|2──▶ validation (the config is saved again)
 *   complete ──any waf_migration──▶ error (irreversible)
 *
 * A transition to validation or complete also requires the zone to be eligible
 * (`checkMigration`); the error carries the first reason's code and every reason's text.
 * Without `waf_migration` the PUT is an ordinary entry-point update, except before the
 * migration completes on Pro/Business, where every rule must be `"enabled": false`
 * (Enterprise may save enabled rules without migrating).
 *
 * Errors are the core's `MigrationError` values (errors.ts); the service gives them their
 * HTTP statuses and API codes.
 */
import { checkMigration } from './eligibility';
import { fail, isRecord, migrationError, type MigrationError, type Result } from './errors';
import { migrationState, type MigrationRecord, type MigrationState, type MigrationZone } from './zone';

export type WafMigrationValue = 'pending' | 'validation';

/** `waf_migration` query values and what they mean (`1` and `2` are aliases). */
export const WAF_MIGRATION_VALUES: Readonly<Record<string, WafMigrationValue>> = { pending: 'pending', '1': 'pending', validation: 'validation', '2': 'validation' };

/** Parses the `waf_migration` query parameter; absent or empty = no migration. */
export function parseWafMigration(raw: string | undefined | null): Result<{ value?: WafMigrationValue }> {
  if (raw === undefined || raw === null || raw === '') return { ok: true };
  const value = WAF_MIGRATION_VALUES[raw];
  if (value) return { ok: true, value };
  return fail(
    migrationError(
      'invalid-migration-parameter',
      `'${raw}' is not a valid value for waf_migration: use pending (or 1) to migrate, or validation (or 2, Enterprise only) to run both versions side by side`,
    ),
  );
}

export type PutEffect =
  /** An ordinary entry-point update; the migration state does not change. */
  | 'saved'
  /** Validation mode entered (or the config saved again in it). */
  | 'validation'
  /** Migrated: the previous WAF is now off for good. */
  | 'complete';

export interface PutOutcome {
  /** The record to store (unchanged when `effect` is `saved`). */
  readonly migration: MigrationRecord | undefined;
  readonly effect: PutEffect;
  /** One line saying what happened, for logs and the extension. */
  readonly message: string;
}

/** The error for a migration attempt on a zone that is not eligible. */
function notEligible(zone: MigrationZone): MigrationError | undefined {
  const reasons = checkMigration(zone).reasons.filter((r) => r.code !== 'already-migrated');
  if (reasons.length === 0) return undefined;
  return { code: 'not-eligible', reason: reasons[0].code, message: `Migration refused: ${reasons.map((r) => r.message).join(' ')}` };
}

function enabledRuleIndex(rules: unknown): number {
  if (!Array.isArray(rules)) return -1;
  return rules.findIndex((r) => isRecord(r) && r.enabled !== false);
}

/**
 * `PUT /zones/{id}/rulesets/phases/http_request_firewall_managed/entrypoint` with its
 * `waf_migration` parameter (raw, as in the URL) and the body's `rules`: whether it is
 * allowed, and the migration record after it. `now` is the RFC 3339 time of the request.
 * The caller saves the entry point only when this succeeds.
 */
export function migrationPut(zone: MigrationZone, wafMigration: string | undefined | null, rules: unknown, now: string, rulePointer: (index: number) => string = (i) => `/rules/${i}`): Result<PutOutcome> {
  const param = parseWafMigration(wafMigration);
  if (!param.ok) return param;
  const state = migrationState(zone);
  const record = zone.migration;

  if (param.value === undefined) {
    if (state === 'start' && zone.plan !== 'enterprise') {
      const i = enabledRuleIndex(rules);
      if (i >= 0) {
        return fail(
          migrationError(
            'enabled-rules-need-migration',
            `Before the WAF migration, a ${zone.plan === 'pro' ? 'Pro' : 'Business'} zone can save the http_request_firewall_managed entry point only with every rule disabled ("enabled": false), and rule ${i + 1} is enabled. Add waf_migration=pending&phase_two=1 to save these rules and migrate, or disable every rule; only Enterprise zones may save enabled rules without migrating.`,
            `${rulePointer(i)}/enabled`,
          ),
        );
      }
    }
    return { ok: true, migration: record, effect: 'saved', message: 'entry point saved; the migration state is unchanged' };
  }

  const asked = `waf_migration=${wafMigration}`;
  if (state === 'complete') return fail(alreadyMigratedError(zone, asked));
  const blocked = notEligible(zone);
  if (blocked) return fail(blocked);

  if (param.value === 'validation') {
    if (zone.plan !== 'enterprise') {
      return fail(
        migrationError(
          'validation-needs-enterprise',
          `Validation mode (${asked}) needs the Enterprise plan, and this zone is on the ${zone.plan} plan. Use waf_migration=pending to migrate directly: the new WAF Managed Rules are enabled, then the previous version is disabled.`,
        ),
      );
    }
    const next: MigrationRecord = { state: 'validation', created: record?.created ?? now, validationSince: record?.validationSince ?? now };
    const again = state === 'validation';
    return {
      ok: true,
      migration: next,
      effect: 'validation',
      message: again
        ? 'configuration saved; still in validation mode (finish with waf_migration=pending)'
        : 'validation mode: both versions are enabled, the new WAF Managed Rules run first; finish with waf_migration=pending',
    };
  }

  const next: MigrationRecord = {
    state: 'complete',
    created: record?.created ?? now,
    ...(record?.validationSince ? { validationSince: record.validationSince } : {}),
    completedAt: now,
  };
  return { ok: true, migration: next, effect: 'complete', message: 'migrated: the new WAF Managed Rules are enabled and the previous version is disabled (irreversible)' };
}

function alreadyMigratedError(zone: MigrationZone, asked: string): MigrationError {
  const when = zone.migration?.completedAt ? ` on ${zone.migration.completedAt}` : '';
  return {
    code: 'not-eligible',
    reason: 'already-migrated',
    message: `This zone was already migrated to the new WAF Managed Rules${when}, and the migration is irreversible: ${asked} cannot be used again. Send the PUT without waf_migration to change the managed rules.`,
  };
}

// --- Status ------------------------------------------------------------------------------------

export interface MigrationStatus {
  readonly migration_state: MigrationState;
  readonly old_waf_status: 'enabled' | 'disabled';
  readonly new_waf_status: 'enabled' | 'disabled';
  /** `zone` once the zone has a migration record of its own, `defaults` before. */
  readonly source: 'defaults' | 'zone';
  /** When the migration started (RFC 3339), or null. */
  readonly created: string | null;
}

/**
 * `GET /zones/{id}/waf_migration/status`. The previous WAF is enabled when the zone has it
 * (not Free), has not completed the migration and its zone-wide switch is on; the new WAF
 * is enabled in validation and after completion, and on Free zones (which only ever had
 * the new one).
 */
export function migrationStatus(zone: MigrationZone): MigrationStatus {
  const state = migrationState(zone);
  const oldOn = zone.plan !== 'free' && state !== 'complete' && zone.waf.enabled;
  const newOn = state === 'validation' || state === 'complete' || state === 'default';
  return {
    migration_state: state,
    old_waf_status: oldOn ? 'enabled' : 'disabled',
    new_waf_status: newOn ? 'enabled' : 'disabled',
    source: zone.migration ? 'zone' : 'defaults',
    created: zone.migration?.created ?? null,
  };
}

/** Whether the engine should run the zone in validation mode (`LegacyConfig.validationMode`). */
export function inValidationMode(zone: Pick<MigrationZone, 'plan' | 'migration'>): boolean {
  return migrationState(zone) === 'validation';
}

// --- Access to the previous-version APIs ----------------------------------------------------

/** The error the previous-version WAF APIs answer once the zone has migrated. */
export function previousWafMigratedError(zoneId: string, completedAt?: string): MigrationError {
  return migrationError(
    'previous-waf-migrated',
    `The previous version of WAF managed rules is no longer available for this zone: it was migrated to the new WAF Managed Rules${completedAt ? ` on ${completedAt}` : ''}. Use the managed rulesets instead: the Rulesets API's http_request_firewall_managed entry point (/zones/${zoneId}/rulesets/phases/http_request_firewall_managed/entrypoint).`,
  );
}

export type PreviousWafOperation = 'read' | 'write' | 'override-write';

/**
 * Whether a previous-version WAF API call may proceed (undefined) or the error to answer:
 * migrated zones → `previousWafMigratedError`; Free zones never had it; creating or
 * replacing URI-based overrides needs Enterprise (reading and deleting them stays open,
 * so that any zone can clear the overrides that block its migration).
 */
export function previousWafAccess(zone: MigrationZone, op: PreviousWafOperation): MigrationError | undefined {
  const state = migrationState(zone);
  if (state === 'complete') return previousWafMigratedError(zone.waf.zoneId, zone.migration?.completedAt);
  if (zone.plan === 'free') {
    return migrationError('no-previous-waf', 'The previous version of WAF managed rules is available on the Pro, Business and Enterprise plans only; this zone is on the Free plan. Use the managed rulesets (the Cloudflare Free Managed Ruleset) instead.');
  }
  if (op === 'override-write' && zone.plan !== 'enterprise') {
    return migrationError('overrides-need-enterprise', `URI-based WAF overrides are available on the Enterprise plan only; this zone is on the ${zone.plan} plan.`);
  }
  return undefined;
}
