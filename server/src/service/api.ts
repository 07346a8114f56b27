/**
 * The v4 API's envelope, errors, ids, timestamps and pagination (rules-api.md §1, §8).
 * Route handlers return a Reply or throw an ApiError; the server writes the envelope.
 */
import { randomBytes } from 'node:crypto';
import { isFixed, jsonBytes } from './jsonText';
import type { ApiMessage as WireMessage, PageInfo } from '../rulesApi';

export type { PageInfo };

/** The wire's message (rulesApi.ts), always with a code here. */
export type ApiMessage = WireMessage & { readonly code: number; readonly error_chain?: readonly ApiMessage[] };

/**
 * Error codes. The real service's codes where the reference captured them; where it did
 * not (marked PLACEHOLDER), a stable code of our own in the same family, so clients can
 * key on it, documented here and in the README.
 */
export const CODES = {
  invalidApiToken: 1000,
  invalidRequestHeaders: 6003,
  invalidAuthorizationFormat: 6111,
  invalidEmailFormat: 6102,
  invalidKeyFormat: 6103,
  noRoute: 7000,
  badObjectId: 7003,
  /** A method the route does not have: `Method PUT not available for that URI.` (real code and text; status 405 is ours). */
  methodNotAllowed: 7001,
  /** Inside 6003's error_chain: a body sent with a Content-Type other than JSON (real code and text). */
  invalidContentType: 6105,
  rateLimited: 971,
  unknownKeyOrEmail: 9103,
  missingCredentials: 9106,
  invalidAccessToken: 9109,
  authenticationError: 10000,
  entryPointNotFound: 10003,
  duplicateFilter: 10102,
  loggingOnlyWithSkip: 20018,
  actionParametersRequired: 20113,
  blankExpression: 20125,
  tooManyEntryPoints: 20217,
  /** PLACEHOLDER: malformed JSON, wrong types, unknown fields in a body (the real service's code was not captured). */
  invalidJson: 10026,
  /** PLACEHOLDER: a body over the size limit. */
  bodyTooLarge: 10027,
  /** PLACEHOLDER: a request the HTTP layer cannot read (headers or URL too large, malformed request line). */
  badRequest: 10028,
  /** OURS: the store takes no more writes after a failed fsync of its log (503; restart the service). */
  storeUnavailable: 10029,
  /** OURS: the rule checker gave no answer by its deadline and was restarted (503; nothing written, send again). */
  ruleCheckTimeout: 10030,
  /** PLACEHOLDER: a single-valued query parameter given several times with different values. */
  repeatedParameter: 20022,
  /** PLACEHOLDER: an invalid value in a body or query (expression, action, position …). */
  invalidValue: 20021,
  /** PLACEHOLDER: a ruleset, version, rule, filter or firewall rule that does not exist. */
  notFound: 10007,
  /** PLACEHOLDER: a ruleset (or version) still deployed by an execute rule cannot be deleted. */
  rulesetInUse: 20030,
  /** PLACEHOLDER: a managed ruleset cannot be changed or deleted. */
  managedReadOnly: 20031,
  /** PLACEHOLDER: a legacy API family switched off (`--legacy sunset`). */
  gone: 10410,
  /** Firewall-rule create whose inline filter duplicates an existing one (real code; its text was not captured). */
  duplicateInlineFilter: 10202,
  /** PLACEHOLDER: deleting a filter that a firewall rule still uses. */
  filterInUse: 10205,
  /** PLACEHOLDER: changing or deleting, through the Filters API, a filter created by a single-call firewall-rule create. */
  filterOwnedByRule: 10206,
  /** PLACEHOLDER: more firewall rules, or rules in the zone's http_request_firewall_custom entry point, than the zone's plan allows (Free 5, Pro 20, Business 100, Enterprise 1000). */
  firewallRuleQuota: 10207,
  /** PLACEHOLDER: a feature the zone's plan lacks (the `log` action below Enterprise, a field or function of a higher plan). */
  planFeature: 10208,
  /**
   * PLACEHOLDER: a warning of the language or ruleset core (a deprecated field, a literal
   * that can never match, a plan finding the API accepts …) in `messages` of a successful
   * Rulesets write; the write is not refused.
   */
  rulesetWarning: 20040,
  /** PLACEHOLDER: a ruleset write with more rules than a ruleset may have (MAX_RULES in routes/rulesets.ts). */
  tooManyRules: 20041,
} as const;

/** The hosted API's text for a 429 (code 971), word for word (reference §1.5). */
export const RATE_LIMITED_TEXT = 'Please wait and consider throttling your request speed';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly errors: readonly ApiMessage[],
    /** `null` where the hosted API answers `"messages": null` (legacy validate-expr). */
    readonly messages: readonly ApiMessage[] | null = [],
    /** Headers the answer carries (a 429's Retry-After). */
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(errors.map((e) => `${e.code}: ${e.message}`).join('; '));
  }

  /** A 429: the hosted API's words in `errors` (scripts match them); why, and when to come back, in `messages`. */
  static rateLimited(why: string, retryAfterSeconds: number): ApiError {
    const retry = `Retry after ${retryAfterSeconds} s (the Retry-After header).`;
    return new ApiError(429, [{ code: CODES.rateLimited, message: RATE_LIMITED_TEXT }], [{ code: CODES.rateLimited, message: `${why} ${retry}` }], { 'retry-after': String(retryAfterSeconds) });
  }

  static of(status: number, code: number, message: string, pointer?: string): ApiError {
    return new ApiError(status, [{ code, message, ...(pointer !== undefined ? { source: { pointer } } : {}) }]);
  }
}

export interface Reply {
  /** Default 200. 204 sends no body. */
  readonly status?: number;
  readonly result?: unknown;
  readonly result_info?: unknown;
  readonly messages?: readonly ApiMessage[];
  /** Sent as the body instead of the v4 envelope (GraphQL answers `{data, errors}`). */
  readonly raw?: unknown;
}

/**
 * The v4 envelope of `reply` (`{result, success, errors, messages, result_info?}`) as the
 * chunks of a body. A stored ruleset's bytes are made once (jsonText.ts) and sent as they
 * are between the envelope's two ends: a 500-rule entry point is ~150 KB that every
 * answer would otherwise copy.
 */
export function envelopeChunks(reply: Reply): (string | Buffer)[] {
  const info = reply.result_info !== undefined ? `,"result_info":${JSON.stringify(reply.result_info)}` : '';
  const tail = `,"success":true,"errors":[],"messages":${JSON.stringify(reply.messages ?? [])}${info}}`;
  if (isFixed(reply.result)) return ['{"result":', jsonBytes(reply.result), tail];
  return [`{"result":${JSON.stringify(reply.result ?? null)}${tail}`];
}

export function errorEnvelope(errors: readonly ApiMessage[], messages: readonly ApiMessage[] | null = []): Record<string, unknown> {
  return { result: null, success: false, errors, messages };
}

/** A new object id: 32 lowercase hex, like a dash-less uuid4. */
export function newId(): string {
  return randomHex(16);
}

/**
 * `bytes` random bytes as hex, drawn from a pool filled 4 KB at a time: a draw cost about
 * as much whatever its size (18 µs here: Node's crypto call, not a system call — OpenSSL's
 * generator draws from the kernel only to seed), a fiftieth of a POST of a rule. At most
 * 4,096 bytes a call.
 * For ids and ray ids, not for secrets (tokens draw their own).
 */
export function randomHex(bytes: number): string {
  if (poolAt + bytes > pool.length) {
    pool = randomBytes(4096);
    poolAt = 0;
  }
  poolAt += bytes;
  return pool.toString('hex', poolAt - bytes, poolAt);
}
let pool = Buffer.alloc(0);
let poolAt = 0;

export const ID = /^[0-9a-f]{32}$/;

/** `2026-11-22T04:40:12.123456Z`: RFC 3339 UTC with microseconds, as the service writes them. */
export function timestamp(now: Date = new Date()): string {
  return `${now.toISOString().slice(0, 23)}${String(microTick()).padStart(3, '0')}Z`;
}

// Successive writes within one millisecond still get increasing `last_updated` values.
let lastMs = 0;
let tick = 0;
function microTick(): number {
  const ms = Date.now();
  tick = ms === lastMs ? Math.min(tick + 1, 999) : 0;
  lastMs = ms;
  return tick;
}

/**
 * Page-based pagination (firewall rules, filters, previous WAF). Out-of-range pages give
 * `[]` — the SDK iterates until an empty page and never reads `total_pages`.
 */
export function paginate<T>(
  items: readonly T[],
  query: URLSearchParams,
  limits: { readonly defaultPerPage: number; readonly min?: number; readonly max?: number },
): { result: T[]; result_info: PageInfo } {
  const page = intParam(query, 'page', 1, 1, Number.MAX_SAFE_INTEGER);
  const perPage = intParam(query, 'per_page', limits.defaultPerPage, limits.min ?? 5, limits.max ?? 100);
  const result = items.slice((page - 1) * perPage, page * perPage);
  return {
    result,
    result_info: {
      page,
      per_page: perPage,
      count: result.length,
      total_count: items.length,
      total_pages: Math.max(1, Math.ceil(items.length / perPage)),
    },
  };
}

/** An integer query parameter within [min, max]; a clear 400 otherwise. */
export function intParam(query: URLSearchParams, name: string, dflt: number, min: number, max: number): number {
  const raw = query.get(name);
  if (raw === null || raw === '') return dflt;
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw ApiError.of(400, CODES.invalidValue, `'${raw}' is not a valid value for ${name}: expected an integer from ${min} to ${max}`);
  }
  return Number(raw);
}

/** A boolean query parameter: `true`/`false` only, as the Rulesets API's `dry_run`. */
export function boolParam(query: URLSearchParams, name: string): boolean | undefined {
  const raw = query.get(name);
  if (raw === null) return undefined;
  if (raw === 'true') return true;
  if (raw === 'false') return false;
  throw ApiError.of(400, CODES.invalidValue, `'${raw}' is not a valid value for ${name}: expected true or false`);
}

export function notFound(what: string): ApiError {
  return ApiError.of(404, CODES.notFound, `${what} not found`);
}
