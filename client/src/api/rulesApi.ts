// The rules API client: the official `cloudflare` SDK (tree-shakable entry, only the
// resources used here, rules-api §6.4) where it has the call, raw `cf.get/put/post` where
// it has none or types it wrongly (WAF migration, firewall rules, the previous WAF, the
// trace). The SDK gives timeouts and retries on 408/409/429/5xx and connection errors
// (with Retry-After); every failure comes out as a RulesApiError with the API's own
// message and code and what to do. Credentials are passed explicitly (never read from
// the environment) and are never logged.
import { createClient } from 'cloudflare/tree-shakable';
import { BaseAccounts } from 'cloudflare/resources/accounts/accounts';
import { BaseZones } from 'cloudflare/resources/zones/zones';
import { BaseTokens } from 'cloudflare/resources/user/tokens/tokens';
import { Rulesets } from 'cloudflare/resources/rulesets/rulesets';
import { BaseFilters } from 'cloudflare/resources/filters/filters';
import type { Rule, Ruleset } from '../../../server/src/rulesets/model';
import { fromEnvelope, toApiError, RulesApiError } from './errors';

export type Credentials = { readonly kind: 'token'; readonly token: string } | { readonly kind: 'key'; readonly email: string; readonly key: string };

export interface RulesApiOptions {
  /** Ends in `/client/v4`. */
  readonly baseUrl: string;
  readonly credentials: Credentials;
  /** Per attempt, ms. */
  readonly timeoutMs?: number;
  readonly maxRetries?: number;
  /** True for the service the extension started itself (changes the advice in errors). */
  readonly local?: boolean;
  /** The account of an account-owned token (verified at /accounts/{id}/tokens/verify). */
  readonly accountId?: string;
  /** One line per call (method, path, status, ms); never headers or bodies. */
  readonly log?: (line: string) => void;
}

export interface Account {
  readonly id: string;
  readonly name: string;
}

export interface Zone {
  readonly id: string;
  readonly name: string;
  readonly status?: string;
  readonly plan?: { readonly id?: string; readonly name?: string };
  readonly account?: { readonly id?: string; readonly name?: string };
}

export interface MigrationCheck {
  readonly compatible: boolean;
  readonly migration_state?: string;
  readonly reasons?: readonly { readonly code?: string | number; readonly message: string }[];
}

export interface NotMigrated {
  readonly kind?: string;
  readonly id?: string;
  readonly package_id?: string;
  readonly name?: string;
  readonly description?: string;
  /** The setting it had, e.g. "mode block (default disable)". */
  readonly was?: string;
  readonly reason?: string;
}

export interface MigrationConfig {
  readonly name?: string;
  readonly description?: string;
  readonly rules: readonly Rule[];
  readonly not_migrated?: readonly NotMigrated[];
}

export interface MigrationStatus {
  readonly migration_state?: string;
  readonly old_waf_status?: string;
  readonly new_waf_status?: string;
  readonly source?: string;
  readonly created?: string;
}

export interface Filter {
  readonly id: string;
  readonly expression: string;
  readonly paused?: boolean;
  readonly description?: string;
  readonly ref?: string;
}

export interface FirewallRule {
  readonly id: string;
  readonly filter: Filter | { readonly id: string; readonly deleted?: boolean };
  readonly action: string;
  readonly priority?: number | null;
  readonly paused?: boolean;
  readonly description?: string;
  readonly ref?: string;
  readonly products?: readonly string[];
}

export interface WafPackage {
  readonly id: string;
  readonly name: string;
  readonly description?: string;
  readonly detection_mode?: string;
  readonly sensitivity?: string;
  readonly action_mode?: string;
  readonly status?: string;
}

export interface RulesetHeader {
  readonly id: string;
  readonly name: string;
  readonly kind: string;
  readonly phase: string;
  readonly version?: string;
  readonly description?: string;
  readonly last_updated?: string;
}

export type MigrationMode = 'validation' | 'pending';

interface Envelope<T> {
  readonly result: T;
  readonly success?: boolean;
  readonly errors?: unknown;
  readonly result_info?: { readonly page?: number; readonly total_pages?: number; readonly count?: number };
}

const enc = encodeURIComponent;

function makeClient(o: RulesApiOptions) {
  const creds = o.credentials;
  return createClient({
    baseURL: o.baseUrl,
    apiToken: creds.kind === 'token' ? creds.token : null,
    apiEmail: creds.kind === 'key' ? creds.email : null,
    apiKey: creds.kind === 'key' ? creds.key : null,
    userServiceKey: null,
    timeout: o.timeoutMs ?? 30_000,
    maxRetries: o.maxRetries ?? 2,
    // The SDK logs request options (headers included) at debug level: keep it quiet.
    logLevel: 'off',
    resources: [BaseAccounts, BaseZones, BaseTokens, Rulesets, BaseFilters],
  });
}

export class RulesApi {
  private readonly cf: ReturnType<typeof makeClient>;

  constructor(readonly options: RulesApiOptions) {
    this.cf = makeClient(options);
  }

  get baseUrl(): string {
    return this.options.baseUrl;
  }

  /** Runs one call, logging it (no secrets) and turning failures into RulesApiError. */
  private async call<T>(operation: string, fn: () => Promise<T>): Promise<T> {
    const t0 = Date.now();
    try {
      const value = await fn();
      this.options.log?.(`${operation} ok (${Date.now() - t0} ms)`);
      return value;
    } catch (e) {
      const err = toApiError(e, operation, this.options.local === true);
      this.options.log?.(`${operation} failed (${Date.now() - t0} ms): HTTP ${err.status || '—'} ${err.message}`);
      throw err;
    }
  }

  /** A raw call's `result`; a `200` with `success: false` (which the SDK does not raise) is an error too. */
  private async raw<T>(method: 'get' | 'put' | 'post' | 'patch' | 'delete', path: string, opts: { query?: Record<string, unknown>; body?: unknown } = {}): Promise<T> {
    const env = await this.cf[method]<Envelope<T>>(path, opts as never);
    if (env && typeof env === 'object' && env.success === false) {
      throw fromEnvelope(`${method.toUpperCase()} ${path}`, 200, env.errors, this.options.local === true);
    }
    return env.result;
  }

  /** Every item of a page-paginated list (stops on an empty page or the last page). */
  private async allPages<T>(path: string, query: Record<string, unknown> = {}, perPage = 50, maxPages = 100): Promise<T[]> {
    const out: T[] = [];
    for (let page = 1; page <= maxPages; page++) {
      const env = await this.cf.get<Envelope<T[]>>(path, { query: { ...query, page, per_page: perPage } });
      const items = Array.isArray(env.result) ? env.result : [];
      out.push(...items);
      const total = env.result_info?.total_pages;
      if (items.length === 0 || (typeof total === 'number' && page >= total) || items.length < perPage) break;
    }
    return out;
  }

  // --- Identity -------------------------------------------------------------------------

  /** Verifies the credentials: a token with /user/tokens/verify; a key by listing accounts. */
  async verify(): Promise<{ status: string; accounts?: number }> {
    if (this.options.credentials.kind === 'token') {
      let r: { status: string };
      try {
        r = await this.call('GET /user/tokens/verify', () => this.cf.user.tokens.verify());
      } catch (e) {
        // An account-owned token verifies at the account's endpoint instead.
        const account = this.options.accountId;
        if (!account || !(e instanceof RulesApiError) || (e.status !== 401 && e.status !== 403)) throw e;
        const path = `/accounts/${enc(account)}/tokens/verify`;
        r = await this.call(`GET ${path}`, () => this.raw<{ status: string }>('get', path)).catch(() => Promise.reject(e));
      }
      if (r.status !== 'active') {
        throw new RulesApiError('GET /user/tokens/verify', 200, [{ message: `the token is ${r.status}` }], 'Create a new API token and run "Rulesmith: Sign In" with it.');
      }
      return { status: r.status };
    }
    const accounts = await this.listAccounts();
    return { status: 'active', accounts: accounts.length };
  }

  // --- Accounts and zones ---------------------------------------------------------------

  listAccounts(): Promise<Account[]> {
    return this.call('GET /accounts', async () => {
      const out: Account[] = [];
      for await (const a of this.cf.accounts.list({ per_page: 50 })) out.push({ id: a.id, name: a.name });
      return out;
    });
  }

  listZones(accountId?: string): Promise<Zone[]> {
    return this.call(`GET /zones${accountId ? `?account.id=${accountId}` : ''}`, async () => {
      const out: Zone[] = [];
      for await (const z of this.cf.zones.list({ per_page: 50, ...(accountId ? { account: { id: accountId } } : {}) })) out.push(z as Zone);
      return out;
    });
  }

  getZone(zoneId: string): Promise<Zone> {
    return this.call(`GET /zones/${zoneId}`, async () => (await this.cf.zones.get({ zone_id: zoneId })) as Zone);
  }

  // --- Rulesets -------------------------------------------------------------------------

  /** The zone's entry point of a phase, or undefined when it has none (404, code 10003). */
  getEntryPoint(zoneId: string, phase: string): Promise<Ruleset | undefined> {
    return this.call(`GET /zones/${zoneId}/rulesets/phases/${phase}/entrypoint`, async () => {
      try {
        return (await this.cf.rulesets.phases.get(phase as never, { zone_id: zoneId })) as unknown as Ruleset;
      } catch (e) {
        const err = toApiError(e, '', false);
        if (err.status === 404) return undefined;
        throw e;
      }
    });
  }

  /** PUT of the entry point (whole rules list); `waf_migration` starts or finishes the migration. */
  putEntryPoint(zoneId: string, phase: string, body: { name?: string; description?: string; rules: readonly Rule[] }, migration?: MigrationMode): Promise<Ruleset> {
    const q = migration ? `?waf_migration=${migration}&phase_two=1` : '';
    return this.call(`PUT /zones/${zoneId}/rulesets/phases/${phase}/entrypoint${q}`, async () => {
      const params = { zone_id: zoneId, ...body } as never;
      const options = migration ? { query: { waf_migration: migration, phase_two: 1 } } : undefined;
      return (await this.cf.rulesets.phases.update(phase as never, params, options)) as unknown as Ruleset;
    });
  }

  /** PATCH of one rule of a ruleset (replaces the rule); returns the whole ruleset. */
  editRule(zoneId: string, rulesetId: string, ruleId: string, rule: Rule): Promise<Ruleset> {
    return this.call(`PATCH /zones/${zoneId}/rulesets/${rulesetId}/rules/${ruleId}`, async () => {
      const { id: _id, version: _v, last_updated: _l, categories: _c, ...body } = rule;
      return (await this.cf.rulesets.rules.edit(ruleId, { ruleset_id: rulesetId, zone_id: zoneId, ...body } as never)) as unknown as Ruleset;
    });
  }

  listZoneRulesets(zoneId: string): Promise<RulesetHeader[]> {
    return this.call(`GET /zones/${zoneId}/rulesets`, async () => {
      const out: RulesetHeader[] = [];
      for await (const r of this.cf.rulesets.list({ zone_id: zoneId })) out.push(r as RulesetHeader);
      return out;
    });
  }

  listAccountRulesets(accountId: string): Promise<RulesetHeader[]> {
    return this.call(`GET /accounts/${accountId}/rulesets`, async () => {
      const out: RulesetHeader[] = [];
      for await (const r of this.cf.rulesets.list({ account_id: accountId })) out.push(r as RulesetHeader);
      return out;
    });
  }

  getAccountRuleset(accountId: string, rulesetId: string): Promise<Ruleset> {
    return this.call(`GET /accounts/${accountId}/rulesets/${rulesetId}`, async () => (await this.cf.rulesets.get(rulesetId, { account_id: accountId })) as unknown as Ruleset);
  }

  // --- WAF migration (not in the SDK) ---------------------------------------------------

  migrationCheck(zoneId: string): Promise<MigrationCheck> {
    const path = `/zones/${enc(zoneId)}/waf_migration/check`;
    return this.call(`GET ${path}`, () => this.raw<MigrationCheck>('get', path, { query: { phase_two: 1 } }));
  }

  migrationConfig(zoneId: string): Promise<MigrationConfig> {
    const path = `/zones/${enc(zoneId)}/waf_migration/config`;
    return this.call(`GET ${path}`, () => this.raw<MigrationConfig>('get', path, { query: { phase_two: 1 } }));
  }

  migrationStatus(zoneId: string): Promise<MigrationStatus> {
    const path = `/zones/${enc(zoneId)}/waf_migration/status`;
    return this.call(`GET ${path}`, () => this.raw<MigrationStatus>('get', path));
  }

  // --- Previous WAF, firewall rules and filters (raw: the SDK's types are wrong) ---------

  wafPackages(zoneId: string): Promise<WafPackage[]> {
    const path = `/zones/${enc(zoneId)}/firewall/waf/packages`;
    return this.call(`GET ${path}`, () => this.allPages<WafPackage>(path));
  }

  firewallRules(zoneId: string): Promise<FirewallRule[]> {
    const path = `/zones/${enc(zoneId)}/firewall/rules`;
    return this.call(`GET ${path}`, () => this.allPages<FirewallRule>(path, {}, 100));
  }

  filters(zoneId: string, query: { expression?: string } = {}): Promise<Filter[]> {
    const path = `/zones/${enc(zoneId)}/filters`;
    return this.call(`GET ${path}`, () => this.allPages<Filter>(path, query, 100));
  }

  /** Creates filters (SDK: the Filters API is modelled correctly). */
  createFilters(zoneId: string, filters: readonly { expression: string; description?: string; paused?: boolean }[]): Promise<Filter[]> {
    return this.call(`POST /zones/${zoneId}/filters`, async () => {
      const out: Filter[] = [];
      for await (const f of this.cf.filters.create({ zone_id: zoneId, body: filters as never })) out.push(f as Filter);
      return out;
    });
  }

  /** Creates firewall rules; each `filter` is `{id}` (two-call flow) or an inline filter (single call). */
  createFirewallRules(
    zoneId: string,
    rules: readonly { filter: { id: string } | { expression: string; description?: string }; action: string; description?: string; priority?: number; paused?: boolean; products?: string[] }[],
  ): Promise<FirewallRule[]> {
    const path = `/zones/${enc(zoneId)}/firewall/rules`;
    return this.call(`POST ${path}`, () => this.raw<FirewallRule[]>('post', path, { body: rules }));
  }

  // --- Trace ----------------------------------------------------------------------------

  trace(accountId: string, request: Record<string, unknown>): Promise<unknown> {
    const path = `/accounts/${enc(accountId)}/request-tracer/trace`;
    return this.call(`POST ${path}`, () => this.raw<unknown>('post', path, { body: request }));
  }
}
