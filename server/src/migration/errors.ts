/**
 * The migration core's errors: values, never thrown, and never HTTP. Each names what went
 * wrong with a stable `code`, says it in words (what is wrong and what is allowed), and for
 * a problem in the input it was given, points at the value (a JSON pointer into it). The
 * HTTP service turns a code into a status and an API error code in one place
 * (server/src/service/migrationErrors.ts).
 */

/**
 * Why a zone cannot migrate (eligibility.ts says when each applies). It is kept with the
 * error codes because a `not-eligible` error carries one, which the service maps to its API
 * code; and so this file imports no other, and every file of the migration may import it.
 */
export type ReasonCode = 'no-previous-waf' | 'already-migrated' | 'uri-overrides' | 'too-many-firewall-rules' | 'expression-too-long';

export type MigrationErrorCode =
  /** An object id the zone does not have (package, group, rule, override). */
  | 'not-found'
  /** A value that is not allowed (body or list option: wrong type, not in the allowed set, out of range). */
  | 'invalid-value'
  /** A body field the operation does not know. */
  | 'unknown-field'
  /** A required body field is missing. */
  | 'missing-field'
  /** A migration the zone cannot make now: a reason of the eligibility check (`reason`). */
  | 'not-eligible'
  /** The previous-WAF APIs on a Free zone, which never had the previous WAF. */
  | 'no-previous-waf'
  /** Creating or replacing URI-based overrides below Enterprise. */
  | 'overrides-need-enterprise'
  /** `waf_migration=validation` on a plan other than Enterprise. */
  | 'validation-needs-enterprise'
  /** Pro/Business entry-point PUT without `waf_migration` carrying enabled rules. */
  | 'enabled-rules-need-migration'
  /** `waf_migration` has a value other than pending|1|validation|2. */
  | 'invalid-migration-parameter'
  /** A previous-version WAF API called for a zone that has migrated. */
  | 'previous-waf-migrated';

export interface MigrationError {
  readonly code: MigrationErrorCode;
  readonly message: string;
  /** JSON pointer to the input value at fault (`/mode`, `/urls/0`; `''` = the whole body). */
  readonly pointer?: string;
  /** `not-eligible`: the eligibility check's reason (its first one). */
  readonly reason?: ReasonCode;
}

/** Either a value or an error. */
export type Result<T> = ({ readonly ok: true } & T) | { readonly ok: false; readonly error: MigrationError };

export function migrationError(code: MigrationErrorCode, message: string, pointer?: string): MigrationError {
  return pointer === undefined ? { code, message } : { code, message, pointer };
}

export function fail(error: MigrationError): { readonly ok: false; readonly error: MigrationError } {
  return { ok: false, error };
}

export function notFound(what: string): MigrationError {
  return migrationError('not-found', `${what} does not exist`);
}

/** `'<value>' is not a valid value for <field> because <why>`, the Rulesets API's wording. */
export function invalidValue(field: string, value: unknown, why: string, pointer?: string): MigrationError {
  return migrationError('invalid-value', `${show(value)} is not a valid value for ${field} because ${why}`, pointer ?? `/${field}`);
}

/** A list option (not a body value) that is not allowed: no pointer. */
export function invalidOption(message: string): MigrationError {
  return migrationError('invalid-value', message);
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
export function unknownFieldError(body: Record<string, unknown>, known: readonly string[], hint: string): MigrationError | undefined {
  const extra = Object.keys(body).find((k) => !known.includes(k));
  if (extra === undefined) return undefined;
  return migrationError('unknown-field', `invalid JSON: unknown field "${extra}" (${hint})`, `/${extra}`);
}
