/**
 * Accounts and zones as the store holds them: their rows, read through a cache, and
 * rendered as the API's zone objects. The caller's permissions on them are checked in
 * scopeAccess.ts, for the routes; what runs under the routes (deployment, migration,
 * events, the proxy) reads the rows here.
 */
import type { Plan } from '../language/scheme/types';
import type { Zone } from '../rulesApi';
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
