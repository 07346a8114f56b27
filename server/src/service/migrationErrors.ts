/**
 * The migration core's errors (server/src/migration/errors.ts) as the API answers them: one
 * table from the core's code to the HTTP status and the API error code.
 *
 * The hosted service's codes for the WAF migration and the previous-version WAF APIs were
 * never captured (rules-api §1.5: "pick a stable placeholder and document it"). An unknown
 * object id is the observed 7003 with its observed wording; a bad value is the service's
 * 20021 (as on every other route), an unknown body field 20601 and a missing one 20602;
 * the refusals of the migration itself are Rulesmith placeholders in 20610–20618, which no
 * known code uses. They are stable: clients and tests may depend on them. HTTP statuses
 * are ours too: 400 for a bad request or a migration the zone cannot make, 403 for what
 * the zone's plan lacks, 404 for an unknown id.
 */
import type { MigrationError, MigrationErrorCode, ReasonCode } from '../migration/index';
import { ApiError, CODES } from './api';

export const MIGRATION_CODES = {
  unknownField: 20601,
  missingField: 20602,
  uriOverrides: 20610,
  tooManyFirewallRules: 20611,
  expressionTooLong: 20612,
  noPreviousWaf: 20613,
  alreadyMigrated: 20614,
  validationNeedsEnterprise: 20615,
  enabledRulesNeedMigration: 20616,
  invalidMigrationParameter: 20617,
  previousWafMigrated: 20618,
} as const;

/** A migration that the eligibility check's reason refuses: its code (status 400). */
export const REASON_CODES: Readonly<Record<ReasonCode, number>> = {
  'uri-overrides': MIGRATION_CODES.uriOverrides,
  'too-many-firewall-rules': MIGRATION_CODES.tooManyFirewallRules,
  'expression-too-long': MIGRATION_CODES.expressionTooLong,
  'no-previous-waf': MIGRATION_CODES.noPreviousWaf,
  'already-migrated': MIGRATION_CODES.alreadyMigrated,
};

const ANSWERS: Readonly<Record<Exclude<MigrationErrorCode, 'not-eligible'>, { readonly status: number; readonly code: number }>> = {
  'not-found': { status: 404, code: CODES.badObjectId },
  'invalid-value': { status: 400, code: CODES.invalidValue },
  'unknown-field': { status: 400, code: MIGRATION_CODES.unknownField },
  'missing-field': { status: 400, code: MIGRATION_CODES.missingField },
  'no-previous-waf': { status: 403, code: MIGRATION_CODES.noPreviousWaf },
  'overrides-need-enterprise': { status: 403, code: CODES.planFeature },
  'validation-needs-enterprise': { status: 403, code: MIGRATION_CODES.validationNeedsEnterprise },
  'enabled-rules-need-migration': { status: 400, code: MIGRATION_CODES.enabledRulesNeedMigration },
  'invalid-migration-parameter': { status: 400, code: MIGRATION_CODES.invalidMigrationParameter },
  'previous-waf-migrated': { status: 400, code: MIGRATION_CODES.previousWafMigrated },
};

/**
 * The API's error for a core error. `path` is the request's path (after `/client/v4`): an
 * unknown id is answered in the service's routing words for it.
 */
export function migrationApiError(e: MigrationError, path?: string): ApiError {
  const pointer = e.pointer === '' ? undefined : e.pointer;
  if (e.code === 'not-eligible') return ApiError.of(400, e.reason ? REASON_CODES[e.reason] : CODES.invalidValue, e.message, pointer);
  const { status, code } = ANSWERS[e.code];
  const message = e.code === 'not-found' && path !== undefined ? `Could not route to ${path}, perhaps your object identifier is invalid?` : e.message;
  return ApiError.of(status, code, message, pointer);
}
