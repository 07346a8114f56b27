/**
 * `--seed demo`: a fresh database gets one account with zones on each paid plan, each
 * zone in a different place on the road from the previous managed-rules version to the
 * new one, and API tokens for each. Ids are derived from names, so they are the same in
 * every demo database (tests and the demo workspace refer to them); tokens and the
 * global key are random and printed once, at seeding.
 */
import { randomBytes } from 'node:crypto';
import { sha256 } from './sha256';
import type { Plan } from '../language/scheme/types';
import { timestamp } from './api';
import { hashSecret, type PermissionGroup, type Policy } from './auth';
import { toJson, type Store } from './store';

export function seedId(name: string): string {
  return sha256(`rulesmith-demo:${name}`, 'hex').slice(0, 32);
}

export const DEMO_ACCOUNT = { id: seedId('account'), name: 'Rulesmith Demo' } as const;
export const DEMO_USER = { id: seedId('user'), email: 'demo@rulesmith.localhost' } as const;

export interface DemoZone {
  readonly name: string;
  readonly plan: Plan;
  /** What the zone shows in the demo. */
  readonly role: string;
}

export const DEMO_ZONES: readonly DemoZone[] = [
  { name: 'pro.example.com', plan: 'pro', role: 'previous managed rules at high sensitivity, challenge; eligible' },
  { name: 'business.example.com', plan: 'business', role: 'previous managed rules at medium sensitivity, simulate; eligible' },
  { name: 'enterprise.example.com', plan: 'enterprise', role: 'previous managed rules at low sensitivity, block; validation mode allowed' },
  { name: 'overrides.example.com', plan: 'business', role: 'URI-based WAF overrides: not eligible' },
  { name: 'firewall.example.com', plan: 'enterprise', role: '201 firewall rules: migration needs support' },
  { name: 'migrated.example.com', plan: 'business', role: 'already migrated to the managed rulesets' },
];

export function demoZoneId(name: string): string {
  return seedId(`zone:${name}`);
}

export interface SeededCredential {
  readonly name: string;
  readonly scope: string;
  readonly value: string;
}

export interface SeedResult {
  readonly credentials: readonly SeededCredential[];
}

const ALL_GROUPS: readonly PermissionGroup[] = ['Zone', 'Zone WAF', 'Firewall Services', 'Account WAF', 'Account Rulesets', 'Account Settings'];

export function policy(resources: readonly string[], groups: readonly PermissionGroup[], access: 'Read' | 'Write'): Policy {
  return {
    effect: 'allow',
    resources: Object.fromEntries(resources.map((r) => [r, '*'])),
    permission_groups: groups.map((g) => ({ name: `${g} ${access}` })),
  };
}

/** A random API token in the shape of the real ones (40 URL-safe characters). */
export function newToken(): string {
  return randomBytes(30).toString('base64url');
}

export function addToken(store: Store, name: string, token: string, policies: readonly Policy[], id = seedId(`token:${name}`)): void {
  store.run(
    'INSERT INTO tokens (id, name, token_hash, status, policies, issued_on) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET token_hash = excluded.token_hash, policies = excluded.policies, status = excluded.status',
    [id, name, hashSecret(token), 'active', toJson(policies), timestamp()],
  );
}

/**
 * The token the extension passes in RULESMITH_SERVICE_TOKEN when it starts the service
 * itself: full access to every account and zone, re-registered on every start.
 */
export function registerServiceToken(store: Store, token: string): void {
  store.write(() => addToken(store, 'Rulesmith extension (local)', token, [policy(['com.cloudflare.api.account.*'], ALL_GROUPS, 'Write')]));
}

/** Extra demo content added by the route families (previous WAF, rulesets, migration). */
export type SeedStep = (store: Store, zones: ReadonlyMap<string, string>) => void;

/** Seeds a fresh database; does nothing (and returns undefined) when it was seeded before. */
export function seedDemo(store: Store, steps: readonly SeedStep[] = []): SeedResult | undefined {
  if (store.meta('seed') !== undefined) return undefined;
  return store.write(() => {
    const now = timestamp();
    store.run('INSERT INTO accounts (id, name, created_on) VALUES (?, ?, ?)', [DEMO_ACCOUNT.id, DEMO_ACCOUNT.name, now]);
    const key = randomBytes(19).toString('hex').slice(0, 37);
    store.run('INSERT INTO users (id, email, api_key_hash) VALUES (?, ?, ?)', [DEMO_USER.id, DEMO_USER.email, hashSecret(key)]);
    store.run('INSERT INTO account_members (account_id, user_id) VALUES (?, ?)', [DEMO_ACCOUNT.id, DEMO_USER.id]);
    const zones = new Map<string, string>();
    for (const z of DEMO_ZONES) {
      const id = demoZoneId(z.name);
      zones.set(z.name, id);
      store.run('INSERT INTO zones (id, account_id, name, plan, status, created_on) VALUES (?, ?, ?, ?, ?, ?)', [id, DEMO_ACCOUNT.id, z.name, z.plan, 'active', now]);
    }
    const credentials: SeededCredential[] = [{ name: 'global API key', scope: `X-Auth-Email: ${DEMO_USER.email}`, value: key }];
    const account = `com.cloudflare.api.account.${DEMO_ACCOUNT.id}`;
    const token = (name: string, scope: string, policies: Policy[]) => {
      const value = newToken();
      addToken(store, name, value, policies);
      credentials.push({ name, scope, value });
    };
    token('demo admin', 'every zone, read and write', [policy([account], ALL_GROUPS, 'Write')]);
    token('demo read-only', 'every zone, read only', [policy([account], ALL_GROUPS, 'Read')]);
    for (const z of DEMO_ZONES) {
      token(`${z.name} WAF`, `${z.name} only, read and write`, [policy([`com.cloudflare.api.account.zone.${zones.get(z.name)}`], ['Zone', 'Zone WAF', 'Firewall Services'], 'Write')]);
    }
    seedFirewallRules(store, zones.get('firewall.example.com')!, 201, now);
    seedFirewallRules(store, zones.get('enterprise.example.com')!, 3, now);
    for (const step of steps) step(store, zones);
    store.setMeta('seed', `demo ${now}`);
    return { credentials };
  });
}

/** `count` firewall rules with their filters; the first bypasses the WAF for an admin path. */
function seedFirewallRules(store: Store, zoneId: string, count: number, now: string): void {
  for (let i = 0; i < count; i++) {
    const filterId = seedId(`filter:${zoneId}:${i}`);
    const ruleId = seedId(`firewall-rule:${zoneId}:${i}`);
    const [expression, action, description, products] =
      i === 0
        ? ['(http.request.uri.path eq "/admin/health" and ip.src in {192.0.2.0/24})', 'bypass', 'Health checks skip the WAF', ['waf']]
        : i === 1
          ? ['(ip.geoip.country in {"T1"})', 'managed_challenge', 'Challenge Tor exit nodes', []]
          : [`(http.request.uri.path eq "/legacy/${i}")`, 'block', `Block retired endpoint ${i}`, []];
    store.run('INSERT INTO filters (id, zone_id, expression, description, created_on, modified_on) VALUES (?, ?, ?, ?, ?, ?)', [filterId, zoneId, expression, description, now, now]);
    store.run(
      'INSERT INTO firewall_rules (id, zone_id, filter_id, action, priority, description, products, seq, created_on, modified_on) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
      [ruleId, zoneId, filterId, action, i < 2 ? i + 1 : null, description, toJson(products), i, now, now],
    );
  }
}
