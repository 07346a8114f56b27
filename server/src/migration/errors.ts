/**
 * Errors the migration core hands to the HTTP layer: data, never thrown. Each carries the
 * API error code, the message (what went wrong and what is allowed), the HTTP status the
 * service should answer with, and for body problems a JSON pointer into the request body.
 *
 * Codes. The hosted service's codes for the WAF migration and the previous-version WAF
 * APIs were never captured (rules-api §1.5: "pick a stable placeholder and document it").
 * Every code in `MIGRATION_CODES` except `notFound` (7003, observed for unknown object ids
 * with the wording of `couldNotRoute`) is a Rulesmith placeholder in the 20600–20699
 * range, which no known code uses. They are stable: clients and tests may depend on them.
 */

export interface ApiError {
  readonly code: number;
  readonly message: string;
  /** The HTTP status to answer with. */
  readonly status: number;
  /** JSON pointer into the request body (`/mode`, `/urls/0`), when the body is at fault. */
  readonly pointer?: string;
}

/** Either a value or an error. */
export type Result<T> = ({ readonly ok: true } & T) | { readonly ok: false; readonly error: ApiError };

export const MIGRATION_CODES = {
  /** Observed (rules-api §1.5): unknown object identifier. */
  notFound: 7003,
  // --- placeholders (see the header) ---
  /** A request body value is not allowed (wrong type, not in the allowed set, out of range). */
  invalidValue: 20600,
  /** A request body field that the endpoint does not know. */
  unknownField: 20601,
  /** A required body field is missing. */
  missingField: 20602,
  /** A query parameter (page, per_page, order, direction, match, mode filter) is not allowed. */
  invalidQuery: 20603,
  /** The zone has URI-based WAF overrides: not eligible. */
  uriOverrides: 20610,
  /** More than 200 firewall rules to migrate: support needed. */
  tooManyFirewallRules: 20611,
  /** A firewall rule expression over 4 KB: support needed. */
  expressionTooLong: 20612,
  /** Free plan: there is no previous WAF to migrate. */
  noPreviousWaf: 20613,
  /** The migration is complete: irreversible, no further migration transition. */
  alreadyMigrated: 20614,
  /** `waf_migration=validation` on a plan other than Enterprise. */
  validationNeedsEnterprise: 20615,
  /** Pro/Business entry-point PUT without `waf_migration` carrying enabled rules. */
  enabledRulesNeedMigration: 20616,
  /** `waf_migration` has a value other than pending|1|validation|2. */
  invalidMigrationParameter: 20617,
  /** A previous-version WAF API called for a zone that has migrated. */
  previousWafMigrated: 20618,
} as const;

export function apiError(code: number, message: string, status = 400, pointer?: string): ApiError {
  return pointer === undefined ? { code, message, status } : { code, message, status, pointer };
}

export function fail(error: ApiError): { readonly ok: false; readonly error: ApiError } {
  return { ok: false, error };
}

/** The service's wording for an unknown object id (observed, code 7003, status 404). */
export function couldNotRoute(path: string): ApiError {
  return apiError(MIGRATION_CODES.notFound, `Could not route to ${path}, perhaps your object identifier is invalid?`, 404);
}

/** `'<value>' is not a valid value for <field> because <why>`, the Rulesets API's wording. */
export function invalidValue(field: string, value: unknown, why: string, pointer?: string): ApiError {
  return apiError(MIGRATION_CODES.invalidValue, `${show(value)} is not a valid value for ${field} because ${why}`, 400, pointer ?? `/${field}`);
}

export function show(value: unknown): string {
  if (typeof value === 'string') return `'${value}'`;
  if (value === undefined) return 'undefined';
  return `'${JSON.stringify(value)}'`;
}

export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** `invalid JSON: unknown field "<name>"` (the Rulesets API's strict decoding) for the first field not in `known`. */
export function unknownFieldError(body: Record<string, unknown>, known: readonly string[], hint: string): ApiError | undefined {
  const extra = Object.keys(body).find((k) => !known.includes(k));
  if (extra === undefined) return undefined;
  return apiError(MIGRATION_CODES.unknownField, `invalid JSON: unknown field "${extra}" (${hint})`, 400, `/${extra}`);
}
