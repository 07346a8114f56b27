/**
 * Accounts and zones as the routes see them: loaded from the store, checked against the
 * caller's permissions, and rendered as the API's zone/account objects.
 */
import type { Plan } from '../language/scheme/types';
import type { Zone } from '../rulesApi';
import { ApiError, CODES } from './api';
import { authorize, seesEverything, visible, type Access, type PermissionGroup } from './auth';
import type { Ctx } from './router';
import type { Store } from './store';

export interface ZoneRow {
  readonly id: string;
  readonly account_id: string;
  readonly account_name: string;
  readonly name: string;
  readonly plan: Plan;
  readonly status: string;
  readonly created_on: string;
  readonly page_rules: string;
}

export interface AccountRow {
  readonly id: string;
  readonly name: string;
  readonly created_on: string;
}

export const PLAN_NAMES: Readonly<Record<Plan, string>> = {
  free: 'Free Website',
  pro: 'Pro Website',
  business: 'Business Website',
  enterprise: 'Enterprise Website',
};

const PLAN_PRICES: Readonly<Record<Plan, number>> = { free: 0, pro: 20, business: 200, enterprise: 0 };

export const ZONE_SELECT =
  'SELECT z.id, z.account_id, a.name AS account_name, z.name, z.plan, z.status, z.created_on, z.page_rules FROM zones z JOIN accounts a ON a.id = z.account_id';

/**
 * The store's name for one zone's or account's rows: what a write of only those rows names
 * (store.ts write(fn, scope)) and what a read of only those rows waits for (durable(scope)).
 */
export function storeScope(kind: 'zone' | 'account', id: string): string {
  return `${kind}:${id}`;
}

/**
 * The zone of `:zone_id`, after checking the caller may use `groups` with `access` on it.
 * A missing zone is 404 only for credentials that reach every zone; for others it is the
 * same 403 as a zone they may not see, so another account's token cannot learn which
 * ids exist.
 */
export function requireZone(ctx: Ctx, groups: readonly PermissionGroup[], access: Access): ZoneRow {
  const id = ctx.params.zone_id!;
  const zone = zoneRow(ctx.service.store, id);
  if (!zone && !seesEverything(ctx.principal, 'zone')) notYours();
  if (!zone) {
    throw new ApiError(404, [{ code: CODES.badObjectId, message: `Could not route to /zones/${id}, perhaps your object identifier is invalid?` }]);
  }
  authorize(ctx.principal, { accountId: zone.account_id, zoneId: zone.id }, groups, access);
  return zone;
}

/**
 * Zone and account rows by id, read on every zone or account request: valid while the
 * zones and accounts tables are unchanged (Store.tableVersion), whoever changed them.
 */
const ROW_CACHE_SIZE = 1024;
interface RowCache {
  readonly version: string;
  readonly zones: Map<string, ZoneRow>;
  readonly accounts: Map<string, AccountRow>;
}
const rowCaches = new WeakMap<Store, RowCache>();

function rowCache(store: Store): RowCache {
  const version = `${store.tableVersion('zones')}/${store.tableVersion('accounts')}`;
  let cache = rowCaches.get(store);
  if (!cache || cache.version !== version) rowCaches.set(store, (cache = { version, zones: new Map(), accounts: new Map() }));
  return cache;
}

function cached<T>(rows: Map<string, T>, id: string, read: () => T | undefined): T | undefined {
  const hit = rows.get(id);
  if (hit) return hit;
  const row = read();
  if (row) {
    if (rows.size >= ROW_CACHE_SIZE) rows.delete(rows.keys().next().value!);
    rows.set(id, row);
  }
  return row;
}

export function zoneRow(store: Store, id: string): ZoneRow | undefined {
  return cached(rowCache(store).zones, id, () => store.get<ZoneRow>(`${ZONE_SELECT} WHERE z.id = ?`, [id]));
}

export function accountRow(store: Store, id: string): AccountRow | undefined {
  return cached(rowCache(store).accounts, id, () => store.get<AccountRow>('SELECT id, name, created_on FROM accounts WHERE id = ?', [id]));
}

/**
 * The account `id`, or the answer for one that does not exist: to credentials that do not
 * reach every account, the same 403 as an account they may not see (as for zones), so ids
 * of other accounts do not leak; to the others, 404. Whether the caller may see it is the
 * caller's check.
 */
export function existingAccount(ctx: Ctx, id: string): AccountRow {
  const account = accountRow(ctx.service.store, id);
  if (!account && !seesEverything(ctx.principal, 'account')) notYours();
  if (!account) {
    throw new ApiError(404, [{ code: CODES.badObjectId, message: `Could not route to /accounts/${id}, perhaps your object identifier is invalid?` }]);
  }
  return account;
}

/** The account of `:account_id`, after the permission check (a missing one as for zones). */
export function requireAccount(ctx: Ctx, groups: readonly PermissionGroup[], access: Access): AccountRow {
  const account = existingAccount(ctx, ctx.params.account_id!);
  authorize(ctx.principal, { accountId: account.id }, groups, access);
  return account;
}

/** The answer to credentials that do not reach a zone or account, whether it exists or not. */
function notYours(): never {
  throw ApiError.of(403, CODES.authenticationError, 'Authentication error');
}

export function zoneVisible(ctx: Ctx, zone: Pick<ZoneRow, 'id' | 'account_id'>): boolean {
  return visible(ctx.principal, { accountId: zone.account_id, zoneId: zone.id });
}

/** The zone object of `GET /zones` (the fields clients read; the rest as the API has them). */
export function zoneObject(z: ZoneRow): Zone {
  const zone = {
    id: z.id,
    name: z.name,
    status: z.status,
    paused: false,
    type: 'full',
    development_mode: 0,
    name_servers: ['ns1.rulesmith.localhost', 'ns2.rulesmith.localhost'],
    original_name_servers: null,
    created_on: z.created_on,
    modified_on: z.created_on,
    activated_on: z.created_on,
    account: { id: z.account_id, name: z.account_name },
    plan: {
      id: z.plan,
      name: PLAN_NAMES[z.plan],
      price: PLAN_PRICES[z.plan],
      currency: 'USD',
      frequency: z.plan === 'free' ? '' : 'monthly',
      is_subscribed: true,
      can_subscribe: false,
      legacy_id: z.plan,
      legacy_discount: false,
      externally_managed: false,
    },
    meta: { phishing_detected: false },
  };
  return zone;
}
