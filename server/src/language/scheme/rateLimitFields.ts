/**
 * The fields a rate limiting rule's expressions may read on each plan (reference
 * traffic-events-terraform.md §2.3, "Expression fields"): Free reads the path and whether
 * the client is a verified bot; Pro adds the host, URI, full URI and query; Business the
 * method, client address and user agent. Enterprise reads every request field (Advanced Rate
 * Limiting, which adds the body fields, is assumed, as rateLimitParams.ts assumes it).
 * A field's `raw.` form counts as the field.
 */
import type { Plan } from './types';

// `true` is a field to the engine, and reads nothing.
const FREE = ['true', 'http.request.uri.path', 'cf.client.bot', 'cf.bot_management.verified_bot'];
const PRO = [...FREE, 'http.host', 'http.request.uri', 'http.request.full_uri', 'http.request.uri.query'];
const BUSINESS = [...PRO, 'http.request.method', 'ip.src', 'http.user_agent'];

/** Per plan, the fields a rate limiting rule may read (undefined: every field). */
export const RATELIMIT_EXPRESSION_FIELDS: Readonly<Record<Plan, ReadonlySet<string> | undefined>> = {
  free: new Set(FREE),
  pro: new Set(PRO),
  business: new Set(BUSINESS),
  enterprise: undefined,
};

const PLAN_ORDER: readonly Plan[] = ['free', 'pro', 'business', 'enterprise'];

/** Whether a rate limiting rule on `plan` may read `field` (its `raw.` form as the field). */
export function rateLimitFieldAllowed(plan: Plan, field: string): boolean {
  const allowed = RATELIMIT_EXPRESSION_FIELDS[plan];
  return allowed === undefined || allowed.has(field.startsWith('raw.') ? field.slice(4) : field);
}

/** The lowest plan whose rate limiting rules may read `field`. */
export function rateLimitFieldPlan(field: string): Plan {
  return PLAN_ORDER.find((p) => rateLimitFieldAllowed(p, field))!;
}

/** What a plan's rate limiting rules may read, for messages. */
export const RATELIMIT_FIELDS_WORDS: Readonly<Record<Plan, string>> = {
  free: 'the path and whether the client is a verified bot',
  pro: 'the host, URI, path, full URI, query and whether the client is a verified bot',
  business: 'the host, URI, path, full URI, query, method, client address, user agent and whether the client is a verified bot',
  enterprise: 'any request field',
};
