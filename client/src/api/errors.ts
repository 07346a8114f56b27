// Errors of the rules API as a person should read them: the API's own message and code
// (rules-api §1.3), then what to do about it. Never includes a credential: SDK errors
// carry the response body and headers, not the request's.
import { APIConnectionError, APIConnectionTimeoutError, APIError } from 'cloudflare/core/error';

import type { ApiMessage } from '../../../server/src/rulesApi';
import { isLoopback } from '../../../server/src/loopback';

/** Set by the guarded fetch (rulesApi.ts) on the answer it makes up when a loopback service refused the connection: its error code. */
export const UNREACHABLE_HEADER = 'x-rulesmith-unreachable';

export type { ApiMessage };

/** A failed call: the HTTP status (0 when no answer), the API's errors, and advice. */
export class RulesApiError extends Error {
  constructor(
    /** e.g. "GET /zones/…/waf_migration/check". */
    readonly operation: string,
    readonly status: number,
    readonly errors: readonly ApiMessage[],
    readonly advice: string,
    /** Seconds the service asked to wait (Retry-After), when it said. */
    readonly retryAfter?: number,
    /** The base URL when nothing answered there (connection refused, no such host, …). */
    readonly unreachable?: string,
  ) {
    super(`${errors.length > 0 ? errors.map(formatApiMessage).join('; ') : `HTTP ${status}`}`);
    this.name = 'RulesApiError';
  }

  /** The first error code, if the API gave one. */
  get code(): number | undefined {
    return this.errors.find((e) => e.code !== undefined)?.code;
  }

  /** One line for a notification: message (code N). What to do. */
  get display(): string {
    return `${this.message}. ${this.advice}`;
  }
}

export function formatApiMessage(e: ApiMessage): string {
  const text = e.message.replace(/\s*\n\s*/g, ' ').trim();
  return e.code !== undefined ? `${text} (code ${e.code})` : text;
}

/** What to do, by status and code (and the Retry-After, or an answer that was not JSON). */
export function adviceFor(status: number, codes: readonly (number | undefined)[], local: boolean, extra: { retryAfter?: number; notJson?: boolean } = {}): string {
  const has = (c: number) => codes.includes(c);
  if (extra.notJson) {
    return local
      ? 'The local rules service gave an answer that is not the rules API: restart it ("Rulesmith: Restart Local Rules Service").'
      : 'That is not the rules API answering: check the setting rulesmith.api.baseUrl (e.g. https://api.cloudflare.com/client/v4) and any proxy in between.';
  }
  if (status === 0) {
    return local
      ? 'The local rules service did not answer: run "Rulesmith: Restart Local Rules Service" and see "Rulesmith: Show Output".'
      : 'Check the setting rulesmith.api.baseUrl and your network connection, then try again.';
  }
  if (status === 401 || has(1000) || has(9103) || has(9106) || has(9109) || has(6003)) {
    return 'The credentials were refused: run "Rulesmith: Sign In" again with a valid API token (or email and Global API key).';
  }
  if (status === 403 || has(10000)) return 'The credentials lack access to this account or zone: use a token with the needed permission (e.g. Zone WAF Write, Firewall Services Write) or choose another zone.';
  if (status === 404) return 'It does not exist (any more): refresh the view (it may have been deleted or the zone id is wrong).';
  if (status === 409) return 'Someone changed it at the same time: refresh and try again.';
  if (status === 410) return 'This API has been retired on this service; use the Rulesets API (WAF custom rules) instead.';
  if (status === 429 || has(971)) {
    return extra.retryAfter !== undefined && extra.retryAfter >= 1 ? `Too many requests: the service asks to wait ${waitText(extra.retryAfter)}; try again after that.` : 'Too many requests: wait a minute and try again.';
  }
  if (status >= 500) return local ? 'The local rules service failed: see "Rulesmith: Show Output" for its log, then try again.' : 'The service failed: try again in a moment.';
  if (has(7000) || has(7003)) return local ? 'The local rules service does not have this call: rebuild the extension (npm run build) and restart the service.' : 'The service does not have this call: check rulesmith.api.baseUrl (it should end in /client/v4).';
  if (status === 400) return 'Fix what the message names and try again.';
  return 'See "Rulesmith: Show Output" for details.';
}

function waitText(seconds: number): string {
  const s = Math.ceil(seconds);
  return s >= 120 ? `${Math.ceil(s / 60)} minutes` : `${s} s`;
}

/** The API's messages; `null` (some legacy endpoints), a string code, or a bare string are taken too. */
function apiMessages(value: unknown): ApiMessage[] {
  if (typeof value === 'string' && value.trim() !== '') return [{ message: value.trim() }];
  if (!Array.isArray(value)) return [];
  return value
    .filter((e): e is { code?: unknown; message?: unknown; meta?: unknown } => typeof e === 'object' && e !== null)
    .map((e) => ({
      ...(typeof e.code === 'number' ? { code: e.code } : typeof e.code === 'string' && /^\d+$/.test(e.code) ? { code: Number(e.code) } : {}),
      message: typeof e.message === 'string' ? e.message : JSON.stringify(e),
      ...(typeof e.meta === 'object' && e.meta !== null ? { meta: e.meta as Record<string, unknown> } : {}),
    }));
}

/** An error envelope (e.g. a `200` with `success: false`, which the SDK does not raise). */
export function fromEnvelope(operation: string, status: number, errors: unknown, local: boolean, messages?: unknown): RulesApiError {
  let msgs = apiMessages(errors);
  if (msgs.length === 0) msgs = apiMessages(messages);
  const list = msgs.length > 0 ? msgs : [{ message: 'the service answered success: false' }];
  return new RulesApiError(operation, status, list, adviceFor(status === 200 ? 400 : status, list.map((e) => e.code), local));
}

/** The innermost system error code of a failed fetch (`ECONNREFUSED`, `ENOTFOUND`, …), if any. */
export function connectionErrorCode(error: unknown): string | undefined {
  for (let e: unknown = error, depth = 0; e && typeof e === 'object' && depth < 6; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && /^E[A-Z_]+$/.test(code)) return code;
    const errors = (e as { errors?: unknown }).errors;
    // AggregateError (localhost tried on ::1 and 127.0.0.1): the first one's code.
    if (Array.isArray(errors) && errors.length > 0) return connectionErrorCode(errors[0]);
  }
  return undefined;
}

const CODE_TEXT: Readonly<Record<string, string>> = {
  ECONNREFUSED: 'connection refused: nothing listens there',
  ENOTFOUND: 'no such host',
  EAI_AGAIN: 'the host name could not be resolved',
  ECONNRESET: 'the connection was reset',
  EHOSTUNREACH: 'the host is unreachable',
  ENETUNREACH: 'the network is unreachable',
  ETIMEDOUT: 'the connection timed out',
};

/** `could not connect to http://127.0.0.1:8787/client/v4 (ECONNREFUSED: connection refused: nothing listens there)`. */
export function unreachableMessage(baseUrl: string, code: string | undefined): string {
  return `could not connect to ${baseUrl}${code ? ` (${code}${CODE_TEXT[code] ? `: ${CODE_TEXT[code]}` : ''})` : ''}`;
}

/** What to do when nothing answers at the base URL: the buttons (Start Local Service, Retry) come with it. */
export function unreachableAdvice(baseUrl: string, local: boolean): string {
  if (local) return 'The local rules service is not running: start it again (Start Local Service), then Retry.';
  if (isLoopback(baseUrl)) return `Start the rules service at that address (Start Local Service runs \`rulesmith serve\` there), or clear the setting rulesmith.api.baseUrl to use the extension's own; then Retry.`;
  return 'Check the setting rulesmith.api.baseUrl and your network connection, then Retry.';
}

/** Any failure of a call (SDK error, fetch error, our own) as a RulesApiError; `baseUrl` names where nothing answered. */
export function toApiError(error: unknown, operation: string, local: boolean, baseUrl?: string): RulesApiError {
  if (error instanceof RulesApiError) return error;
  if (error instanceof APIConnectionTimeoutError) {
    return new RulesApiError(operation, 0, [{ message: baseUrl ? `the request to ${baseUrl} timed out` : 'the request timed out' }], adviceFor(0, [], local));
  }
  const refused = error instanceof APIError ? (error as { headers?: Headers }).headers?.get?.(UNREACHABLE_HEADER) : undefined;
  if (refused || error instanceof APIConnectionError) {
    const code = refused || connectionErrorCode(error);
    if (baseUrl) return new RulesApiError(operation, 0, [{ message: unreachableMessage(baseUrl, code) }], unreachableAdvice(baseUrl, local), undefined, baseUrl);
    const why = code ? `${(error as Error).message} (${code})` : (error as Error).message;
    return new RulesApiError(operation, 0, [{ message: why }], adviceFor(0, [], local));
  }
  if (error instanceof APIError) {
    const status = typeof error.status === 'number' ? error.status : 0;
    const body = error.error as { errors?: unknown; messages?: unknown; message?: unknown; error?: unknown } | undefined;
    let errors = apiMessages((error as { errors?: unknown }).errors);
    // `"errors": null` (legacy endpoints): the messages, or whatever the body says.
    if (errors.length === 0) errors = apiMessages(body?.errors);
    if (errors.length === 0) errors = apiMessages(body?.messages);
    if (errors.length === 0) errors = apiMessages(body?.message ?? body?.error);
    if (errors.length === 0) errors = [{ message: status ? `HTTP ${status} with no error message` : error.message }];
    const headers = (error as { headers?: Headers }).headers;
    const retryAfter = status === 429 || status === 503 ? retryAfterOf(headers) : undefined;
    const notJson = headers?.get?.('x-rulesmith-not-json') === '1';
    return new RulesApiError(operation, status, errors, adviceFor(status, errors.map((e) => e.code), local, { ...(retryAfter !== undefined ? { retryAfter } : {}), notJson }), retryAfter);
  }
  const message = error instanceof Error ? error.message : String(error);
  return new RulesApiError(operation, 0, [{ message }], adviceFor(0, [], local));
}

/** Retry-After in seconds (a number, or an HTTP date), if the answer has one. */
export function retryAfterOf(headers: Headers | undefined): number | undefined {
  const ms = headers?.get?.('retry-after-ms');
  if (ms && Number.isFinite(Number(ms))) return Number(ms) / 1000;
  const ra = headers?.get?.('retry-after');
  if (!ra) return undefined;
  if (/^\s*\d+(\.\d+)?\s*$/.test(ra)) return Number(ra);
  const at = Date.parse(ra);
  return Number.isNaN(at) ? undefined : Math.max(0, (at - Date.now()) / 1000);
}
