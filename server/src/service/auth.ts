/**
 * Credentials and permissions (rules-api.md §7): API tokens (`Authorization: Bearer`)
 * with policies scoped to accounts and zones, and the global API key
 * (`X-Auth-Email` + `X-Auth-Key`) with the user's full access to their accounts.
 * Tokens and keys are stored as SHA-256 hashes and never logged.
 */
import { sha256 } from './sha256';
import type { IncomingHttpHeaders } from 'node:http';
import { ApiError, CODES } from './api';
import type { Store } from './store';
import { fromJson } from './store';

export type Access = 'Read' | 'Write';

/** Permission groups the service checks (names as the API spells them, without Read/Write). */
export type PermissionGroup =
  | 'Zone'
  | 'Zone Analytics'
  | 'Zone WAF'
  | 'Firewall Services'
  | 'Account WAF'
  | 'Account Rulesets'
  | 'Account Settings';

/** The groups that reach a zone's WAF: its rulesets (routes/rulesets.ts) and its proxy (proxy/proxy.ts). */
export const ZONE_WAF_GROUPS: readonly PermissionGroup[] = ['Zone WAF', 'Account WAF', 'Account Rulesets'];

export interface Policy {
  readonly id?: string;
  readonly effect: 'allow' | 'deny';
  /** `com.cloudflare.api.account.<id>`, `com.cloudflare.api.account.zone.<id>`, or `….*` for all. */
  readonly resources: Readonly<Record<string, string>>;
  readonly permission_groups: readonly { readonly id?: string; readonly name: string }[];
}

export type Principal =
  | { readonly kind: 'token'; readonly tokenId: string; readonly policies: readonly Policy[] }
  | { readonly kind: 'key'; readonly userId: string; readonly accounts: ReadonlySet<string> };

export interface Target {
  readonly accountId: string;
  readonly zoneId?: string;
}

export function hashSecret(secret: string): string {
  return sha256(secret, 'hex');
}

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}

function invalidHeaders(code: number, message: string): ApiError {
  return new ApiError(400, [{ code: CODES.invalidRequestHeaders, message: 'Invalid request headers', error_chain: [{ code, message }] }]);
}

interface TokenRow {
  id: string;
  status: string;
  policies: string;
  not_before: string | null;
  expires_on: string | null;
}

/** The token's row when the bearer value is a known token (any status). */
export function findToken(store: Store, token: string): TokenRow | undefined {
  return store.get<TokenRow>('SELECT id, status, policies, not_before, expires_on FROM tokens WHERE token_hash = ?', [hashSecret(token)]);
}

/**
 * Known tokens by bearer value, their policies parsed: every request authenticates, and
 * a hash, a query and a JSON parse were a twentieth of a PATCH's time. Valid while the
 * tokens table is unchanged (Store.tableVersion). Unknown bearers are not kept.
 */
const TOKEN_CACHE_SIZE = 256;
interface KnownTokens {
  version: number;
  readonly tokens: Map<string, { row: TokenRow; policies: Policy[] }>;
}
const tokenCaches = new WeakMap<Store, KnownTokens>();

function knownToken(store: Store, bearer: string): { row: TokenRow; policies: Policy[] } | undefined {
  const version = store.tableVersion('tokens');
  let cache = tokenCaches.get(store);
  if (!cache) tokenCaches.set(store, (cache = { version, tokens: new Map() }));
  if (cache.version !== version) {
    cache.tokens.clear();
    cache.version = version;
  }
  const hit = cache.tokens.get(bearer);
  if (hit) return hit;
  const row = findToken(store, bearer);
  if (!row) return undefined;
  const known = { row, policies: fromJson<Policy[]>(row.policies) };
  if (cache.tokens.size >= TOKEN_CACHE_SIZE) cache.tokens.delete(cache.tokens.keys().next().value!);
  cache.tokens.set(bearer, known);
  return known;
}

/** The token's effective status now: `active`, `disabled` or `expired`. */
export function tokenStatus(row: Pick<TokenRow, 'status' | 'not_before' | 'expires_on'>, now = new Date()): string {
  if (row.status !== 'active') return row.status;
  if (row.expires_on && Date.parse(row.expires_on) <= now.getTime()) return 'expired';
  if (row.not_before && Date.parse(row.not_before) > now.getTime()) return 'disabled';
  return 'active';
}

/** The bearer value of a well-formed Authorization header; the real errors otherwise. */
export function bearerOf(headers: IncomingHttpHeaders): string | undefined {
  const auth = header(headers, 'authorization');
  if (auth === undefined) return undefined;
  const m = /^Bearer ([A-Za-z0-9_\-.~+/]+=*)$/.exec(auth.trim());
  if (!m) throw invalidHeaders(CODES.invalidAuthorizationFormat, 'Invalid format for Authorization header');
  return m[1]!;
}

/** Who is calling, from the request headers; throws the API's own errors for bad credentials. */
export function authenticate(store: Store, headers: IncomingHttpHeaders): Principal {
  const bearer = bearerOf(headers);
  if (bearer !== undefined) {
    const known = knownToken(store, bearer);
    if (!known) {
      // A global API key sent as a token is a known mistake with its own answer.
      if (store.get('SELECT 1 FROM users WHERE api_key_hash = ?', [hashSecret(bearer)])) {
        throw ApiError.of(403, CODES.authenticationError, 'Authentication error');
      }
      throw ApiError.of(403, CODES.invalidAccessToken, 'Invalid access token');
    }
    // Judged now: expiry and not-before move with the clock.
    if (tokenStatus(known.row) !== 'active') throw ApiError.of(403, CODES.invalidAccessToken, 'Invalid access token');
    return { kind: 'token', tokenId: known.row.id, policies: known.policies };
  }
  const email = header(headers, 'x-auth-email');
  const key = header(headers, 'x-auth-key');
  if (email === undefined && key === undefined) {
    throw ApiError.of(400, CODES.missingCredentials, 'Missing X-Auth-Key, X-Auth-Email or Authorization headers');
  }
  if (email === undefined || key === undefined) {
    throw ApiError.of(400, CODES.missingCredentials, `Missing ${email === undefined ? 'X-Auth-Email' : 'X-Auth-Key'} header`);
  }
  if (!/^[^\s@]+@[^\s@]+$/.test(email)) throw invalidHeaders(CODES.invalidEmailFormat, 'Invalid format for X-Auth-Email header');
  if (!/^(?:[0-9a-f]{37}|cfk_[A-Za-z0-9]{50})$/.test(key)) throw invalidHeaders(CODES.invalidKeyFormat, 'Invalid format for X-Auth-Key header');
  const user = store.get<{ id: string }>('SELECT id FROM users WHERE email = ? AND api_key_hash = ?', [email, hashSecret(key)]);
  if (!user) throw ApiError.of(400, CODES.unknownKeyOrEmail, 'Unknown X-Auth-Key or X-Auth-Email');
  const accounts = store.all<{ account_id: string }>('SELECT account_id FROM account_members WHERE user_id = ?', [user.id]);
  return { kind: 'key', userId: user.id, accounts: new Set(accounts.map((a) => a.account_id)) };
}

function covers(policy: Policy, target: Target): boolean {
  return Object.keys(policy.resources).some((r) => {
    if (r === 'com.cloudflare.api.account.*') return true;
    if (r === `com.cloudflare.api.account.${target.accountId}`) return true;
    if (target.zoneId === undefined) return false;
    return r === 'com.cloudflare.api.account.zone.*' || r === `com.cloudflare.api.account.zone.${target.zoneId}`;
  });
}

function grants(policy: Policy, groups: readonly PermissionGroup[], access: Access): boolean {
  return policy.permission_groups.some((g) =>
    groups.some((name) => g.name === `${name} Write` || (access === 'Read' && g.name === `${name} Read`)),
  );
}

/** Whether the principal may act on the target with one of the groups. Deny policies win. */
export function allowed(p: Principal, target: Target, groups: readonly PermissionGroup[], access: Access): boolean {
  if (p.kind === 'key') return p.accounts.has(target.accountId);
  const matching = p.policies.filter((pol) => covers(pol, target) && grants(pol, groups, access));
  return matching.length > 0 && !matching.some((pol) => pol.effect === 'deny');
}

/**
 * Whether the principal's credentials reach every resource of `kind` there could be (a
 * token with an allow policy on all of them, and no deny policy that could hide one): only
 * then may a missing one be told apart from one it cannot see. Every zone is reached by a
 * policy on all accounts (`com.cloudflare.api.account.*`) or on all zones
 * (`com.cloudflare.api.account.zone.*`); every account only by the first: a policy on all
 * zones reaches no account as such (covers()), so a missing account must look to it like
 * one it cannot reach, or its 404s would tell which account ids exist.
 */
export function seesEverything(p: Principal, kind: 'zone' | 'account'): boolean {
  if (p.kind === 'key') return false;
  if (p.policies.some((pol) => pol.effect === 'deny')) return false;
  const everything = (r: string) => r === 'com.cloudflare.api.account.*' || (kind === 'zone' && r === 'com.cloudflare.api.account.zone.*');
  return p.policies.some((pol) => pol.effect === 'allow' && Object.keys(pol.resources).some(everything));
}

/** Whether the principal may see the target at all (any permission on it). */
export function visible(p: Principal, target: Target): boolean {
  if (p.kind === 'key') return p.accounts.has(target.accountId);
  const matching = p.policies.filter((pol) => covers(pol, target));
  return matching.some((pol) => pol.effect === 'allow') && !matching.some((pol) => pol.effect === 'deny' && pol.permission_groups.length === 0);
}

export function authorize(p: Principal, target: Target, groups: readonly PermissionGroup[], access: Access): void {
  if (!allowed(p, target, groups, access)) throw ApiError.of(403, CODES.authenticationError, 'Authentication error');
}
