// The rules API client: the official `cloudflare` SDK (tree-shakable entry, only the
// resources used here, rules-api §6.4) where it has the call, raw `cf.get/put/post` where
// it has none or types it wrongly (WAF migration, firewall rules, the previous WAF, the
// trace). The SDK gives timeouts and retries on 408/409/429/5xx and connection errors
// (with Retry-After); every failure comes out as a RulesApiError with the API's own
// message and code and what to do. Credentials are passed explicitly (never read from
// the environment) and are never logged.
//
// What the hosted API does that a client must survive (rules-api §1), handled here:
//   - lists: page-based (zones, accounts, firewall rules, filters, WAF packages) read to
//     the last page by `total_pages` or an empty page, never trusting that the server
//     honoured `per_page`, and never looping on a server that ignores `page`; cursor-based
//     (ruleset lists) following `result_info.cursor` or `result_info.cursors.after`;
//   - `errors`/`messages` that are `null`, bodies that are not JSON (a proxy's HTML page,
//     a wrong base URL), a `success: true` without a `result`;
//   - 429 with Retry-After: waited for (and logged) up to MAX_RETRY_AFTER_S; a longer
//     wait fails at once with the time to wait, instead of a silent hang;
//   - creates (POST) are never retried after the request may have been applied (5xx,
//     time-outs): only a 429, which the API answers before doing anything, is retried —
//     a retried create could make a second filter or firewall rule.
import { createClient } from 'cloudflare/tree-shakable';
import { BaseZones } from 'cloudflare/resources/zones/zones';
import { BaseTokens } from 'cloudflare/resources/user/tokens/tokens';
import { Rulesets } from 'cloudflare/resources/rulesets/rulesets';
import { everyPage } from '../../../server/src/cursorPages';
import type { Account, Envelope, Filter, FirewallRule, MigrationCheck, MigrationConfig, MigrationStatus, Rule, Ruleset, RulesetHeader, TraceResult, WafPackage, Zone } from '../../../server/src/rulesApi';
import { adviceFor, connectionErrorCode, fromEnvelope, retryAfterOf, toApiError, RulesApiError, UNREACHABLE_HEADER, type ApiMessage } from './errors';
import { isLoopback } from '../../../server/src/loopback';

// The wire shapes are the service's (one module for both sides).
export type { Account, Filter, FirewallRule, MigrationCheck, MigrationConfig, MigrationStatus, NotMigrated, RulesetHeader, TraceResult, TraceStep, WafPackage, Zone } from '../../../server/src/rulesApi';

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

export type MigrationMode = 'validation' | 'pending';

const enc = encodeURIComponent;

/** The longest Retry-After (seconds) the client waits for before retrying. */
export const MAX_RETRY_AFTER_S = 60;
/** A header the guarded fetch sets on an answer that was not JSON (errors.ts words the advice). */
export const NOT_JSON_HEADER = 'x-rulesmith-not-json';

/** A short text for a body that is not JSON: its <title>, else its first words. */
function summarizeBody(text: string, type: string): string {
  const title = /<title[^>]*>([^<]*)<\/title>/i.exec(text)?.[1]?.trim();
  const plain = (title || text.replace(/<[^>]*>/g, ' ')).replace(/\s+/g, ' ').trim();
  const short = plain.length > 120 ? `${plain.slice(0, 119)}…` : plain;
  return `the answer was not JSON (${type || 'no content-type'})${short ? `: "${short}"` : ''}`;
}

/**
 * fetch for the SDK: logs each non-2xx answer (method, path, status, Retry-After — never
 * headers or bodies), refuses SDK retries after a Retry-After longer than
 * MAX_RETRY_AFTER_S, and turns a body that is not JSON into an error envelope that says so.
 */
function guardedFetch(log: ((line: string) => void) | undefined): (input: string | URL | Request, init?: RequestInit) => Promise<Response> {
  return async (input, init) => {
    const method = (init?.method ?? 'GET').toUpperCase();
    const url = new URL(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url);
    let res: Response;
    try {
      // Not followed: a redirect to another host would carry X-Auth-Key (fetch drops only
      // Authorization), and one from https to http would send it in the clear.
      res = await fetch(input, { ...init, redirect: 'manual' });
    } catch (e) {
      // Nothing listens on this machine's port: retrying (with the SDK's back-off, ~7 s)
      // would not change that. Answer at once, marked, so that the call fails in
      // milliseconds and errors.ts words it with the URL.
      const code = connectionErrorCode(e);
      if (!isLoopback(url.href) || (code !== 'ECONNREFUSED' && code !== 'ECONNRESET')) throw e;
      log?.(`${method} ${url.pathname} could not connect (${code}); not retried`);
      const headers = new Headers({ 'content-type': 'application/json', 'x-should-retry': 'false', [UNREACHABLE_HEADER]: code });
      return new Response(JSON.stringify({ result: null, success: false, errors: [{ message: 'could not connect' }], messages: [] }), { status: 503, headers });
    }
    const path = url.pathname.replace(/^.*?\/client\/v4/, '');
    if (res.status >= 300 && res.status < 400) {
      const to = res.headers.get('location') ?? 'nowhere';
      log?.(`${method} ${path} answered HTTP ${res.status} (a redirect); not followed`);
      const message = `the rules service answered HTTP ${res.status}, a redirect to ${to}: Rulesmith does not follow redirects with credentials; set rulesmith.api.baseUrl to the URL to use`;
      const body = JSON.stringify({ result: null, success: false, errors: [{ message }], messages: [] });
      return new Response(body, { status: 502, headers: { 'content-type': 'application/json', 'x-should-retry': 'false' } });
    }
    const headers = new Headers(res.headers);
    let changed = false;
    if (!res.ok) {
      const ra = retryAfterOf(res.headers);
      log?.(`${method} ${path} answered HTTP ${res.status}${ra !== undefined ? ` (Retry-After ${Math.ceil(ra)} s)` : ''}`);
      if (ra !== undefined && ra > MAX_RETRY_AFTER_S) {
        headers.set('x-should-retry', 'false');
        changed = true;
      }
    }
    const type = res.headers.get('content-type') ?? '';
    if (res.status !== 204 && !/[/+]json\b/i.test(type)) {
      const text = await res.text().catch(() => '');
      if (res.ok && text.trim() === '') return new Response(null, { status: 204, headers });
      // JSON under another content-type (some proxies relabel it): taken as JSON.
      try {
        JSON.parse(text);
        headers.set('content-type', 'application/json');
        return new Response(text, { status: res.status, statusText: res.statusText, headers });
      } catch {}
      headers.set('content-type', 'application/json');
      if (!res.ok && text.trim() === '') {
        // An empty error (a load balancer's 502/503): the status says enough.
        const body = JSON.stringify({ result: null, success: false, errors: [{ message: `HTTP ${res.status} with an empty answer` }], messages: [] });
        return new Response(body, { status: res.status, statusText: res.statusText, headers });
      }
      headers.set(NOT_JSON_HEADER, '1');
      if (res.ok) headers.set('x-should-retry', 'false');
      const body = JSON.stringify({ result: null, success: false, errors: [{ message: summarizeBody(text, type) }], messages: [] });
      return new Response(body, { status: res.ok ? 502 : res.status, statusText: res.statusText, headers });
    }
    return changed ? new Response(res.body, { status: res.status, statusText: res.statusText, headers }) : res;
  };
}

/** A result the call cannot do without: `null` or missing is an error that says so. */
function must<T>(value: T | null | undefined, operation: string, local: boolean): T {
  if (value === null || value === undefined || (typeof value !== 'object' && typeof value !== 'string')) {
    throw new RulesApiError(operation, 200, [{ message: 'the service answered success without a result' }], adviceFor(502, [], local));
  }
  return value;
}

function makeClient(o: RulesApiOptions) {
  const creds = o.credentials;
  return createClient({
    fetch: guardedFetch(o.log),
    baseURL: o.baseUrl,
    apiToken: creds.kind === 'token' ? creds.token : null,
    apiEmail: creds.kind === 'key' ? creds.email : null,
    apiKey: creds.kind === 'key' ? creds.key : null,
    userServiceKey: null,
    timeout: o.timeoutMs ?? 30_000,
    maxRetries: o.maxRetries ?? 2,
    // The SDK logs request options (headers included) at debug level: keep it quiet.
    logLevel: 'off',
    resources: [BaseZones, BaseTokens, Rulesets],
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

  /**
   * Runs one call, logging it (no secrets) and turning failures into RulesApiError.
   * `create`: the call is not idempotent — the SDK does not retry it (see raw()); a 429
   * (answered before anything is done) is retried here, after its Retry-After.
   */
  private async call<T>(operation: string, fn: () => Promise<T>, create = false): Promise<T> {
    const t0 = Date.now();
    const local = this.options.local === true;
    for (let attempt = 0; ; attempt++) {
      try {
        const value = await fn();
        this.options.log?.(`${operation} ok (${Date.now() - t0} ms)`);
        return value;
      } catch (e) {
        const err = toApiError(e, operation, local, this.options.baseUrl);
        const wait = err.retryAfter ?? 0.5 * 2 ** attempt;
        if (create && err.status === 429 && attempt < (this.options.maxRetries ?? 2) && wait <= MAX_RETRY_AFTER_S) {
          this.options.log?.(`${operation}: HTTP 429, retrying in ${wait} s`);
          await new Promise((r) => setTimeout(r, wait * 1000));
          continue;
        }
        this.options.log?.(`${operation} failed (${Date.now() - t0} ms): HTTP ${err.status || '—'} ${err.message}`);
        throw err;
      }
    }
  }

  /**
   * A raw call's `result`; a `200` with `success: false` (which the SDK does not raise) is
   * an error too. A create gets no SDK retries (call(…, true) retries its 429s).
   */
  private async raw<T>(method: 'get' | 'put' | 'post' | 'patch' | 'delete', path: string, opts: { query?: Record<string, unknown>; body?: unknown } = {}, create = false): Promise<T> {
    const env = await this.cf[method]<Envelope<T>>(path, { ...opts, ...(create ? { maxRetries: 0 } : {}) } as never);
    if (!env || typeof env !== 'object') throw new RulesApiError(`${method.toUpperCase()} ${path}`, 200, [{ message: 'the service answered without a body' }], adviceFor(502, [], this.options.local === true));
    if (env.success === false) {
      throw fromEnvelope(`${method.toUpperCase()} ${path}`, 200, env.errors, this.options.local === true, (env as { messages?: unknown }).messages);
    }
    return must(env.result, `${method.toUpperCase()} ${path}`, this.options.local === true);
  }

  /**
   * Every item of a page-based list: pages 1, 2, … until `total_pages` (when given) or an
   * empty page. A short page ends the list only when the server says it honoured our
   * `per_page`. A server that ignores `page` (the same first item again) or a list longer
   * than `maxPages` is an error, never a silently cut list.
   */
  private async allPages<T>(path: string, query: Record<string, unknown> = {}, perPage = 50, maxPages = 500): Promise<T[]> {
    const out: T[] = [];
    let firstOfLast: string | undefined;
    for (let page = 1; ; page++) {
      if (page > maxPages) throw new RulesApiError(`GET ${path}`, 200, [{ message: `the list is longer than ${maxPages} pages of ${perPage}` }], 'Narrow it down (e.g. choose an account) or raise the limit; nothing was cut silently.');
      const env = await this.cf.get<Envelope<T[]>>(path, { query: { ...query, page, per_page: perPage } });
      if (env && typeof env === 'object' && env.success === false) throw fromEnvelope(`GET ${path}`, 200, env.errors, this.options.local === true);
      const items = Array.isArray(env?.result) ? env.result : [];
      if (items.length === 0) break;
      const first = JSON.stringify((items[0] as { id?: unknown }).id ?? items[0]);
      if (page > 1 && first === firstOfLast) throw new RulesApiError(`GET ${path}`, 200, [{ message: `page ${page} repeats page ${page - 1} (the service ignores the page parameter)` }], 'Check rulesmith.api.baseUrl: it should be the rules API.');
      firstOfLast = first;
      out.push(...items);
      const info = env.result_info;
      if (typeof info?.total_pages === 'number') {
        if (page >= info.total_pages) break;
        continue;
      }
      const served = typeof info?.per_page === 'number' ? info.per_page : undefined;
      if (served !== undefined && items.length < served) break;
    }
    return out;
  }

  /**
   * Every item of a cursor-based list (ruleset lists): follows `result_info.cursor` (what
   * the SDK reads) or `result_info.cursors.after` (what the published schema says), until
   * neither is there; a cursor that comes back again is an error.
   */
  private allCursor<T>(path: string, perPage = 50, maxPages = 200): Promise<T[]> {
    return everyPage<T>(
      async (cursor) => {
        const env = await this.cf.get<Envelope<T[]>>(path, { query: { per_page: perPage, ...(cursor ? { cursor } : {}) } });
        if (env && typeof env === 'object' && env.success === false) throw fromEnvelope(`GET ${path}`, 200, env.errors, this.options.local === true);
        return { items: Array.isArray(env?.result) ? env.result : [], info: env?.result_info };
      },
      (why) =>
        'tooLong' in why
          ? new RulesApiError(`GET ${path}`, 200, [{ message: `the list is longer than ${why.tooLong} pages` }], 'Nothing was cut silently; report this.')
          : new RulesApiError(`GET ${path}`, 200, [{ message: `the service returned the cursor "${why.repeated.slice(0, 40)}" twice` }], 'The list could not be read to its end; try again.'),
      maxPages,
    );
  }

  // --- Identity -------------------------------------------------------------------------

  /** Verifies the credentials: a token with /user/tokens/verify; a key by listing accounts. */
  async verify(): Promise<{ status: string; accounts?: number }> {
    if (this.options.credentials.kind === 'token') {
      let r: { status: string };
      try {
        r = await this.call('GET /user/tokens/verify', async () => must(await this.cf.user.tokens.verify(), 'GET /user/tokens/verify', this.options.local === true));
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

  // Lists are read with allPages rather than the SDK's iterator, which asks for pages
  // until one comes back empty (never reading total_pages) and would loop forever on a
  // server that ignores `page`.
  listAccounts(): Promise<Account[]> {
    return this.call('GET /accounts', async () => (await this.allPages<Account>('/accounts', {}, 50)).map((a) => ({ id: a.id, name: a.name })));
  }

  /**
   * The accounts to show: those the credentials list; a token scoped to zones only (no
   * Account Read, common for a WAF token) lists none — or is refused (403) — so the
   * accounts of the zones it sees stand in.
   */
  async visibleAccounts(): Promise<Account[]> {
    let accounts: Account[] = [];
    try {
      accounts = await this.listAccounts();
    } catch (e) {
      if (!(e instanceof RulesApiError) || e.status !== 403) throw e;
    }
    if (accounts.length > 0) return accounts;
    const byId = new Map<string, Account>();
    for (const z of await this.listZones()) if (z.account?.id && !byId.has(z.account.id)) byId.set(z.account.id, { id: z.account.id, name: z.account.name || z.account.id });
    return [...byId.values()];
  }

  listZones(accountId?: string): Promise<Zone[]> {
    return this.call(`GET /zones${accountId ? `?account.id=${accountId}` : ''}`, () => this.allPages<Zone>('/zones', accountId ? { 'account.id': accountId } : {}, 50));
  }

  getZone(zoneId: string): Promise<Zone> {
    return this.call(`GET /zones/${zoneId}`, async () => must((await this.cf.zones.get({ zone_id: zoneId })) as Zone, `GET /zones/${zoneId}`, this.options.local === true));
  }

  // --- Rulesets -------------------------------------------------------------------------

  /** The zone's entry point of a phase, or undefined when it has none (404, code 10003). */
  getEntryPoint(zoneId: string, phase: string): Promise<Ruleset | undefined> {
    return this.call(`GET /zones/${zoneId}/rulesets/phases/${phase}/entrypoint`, async () => {
      try {
        return must((await this.cf.rulesets.phases.get(phase as never, { zone_id: zoneId })) as unknown as Ruleset, `GET entrypoint ${phase}`, this.options.local === true);
      } catch (e) {
        const err = toApiError(e, '', false);
        if (err.status === 404) return undefined;
        throw e;
      }
    });
  }

  /** One earlier version of the zone's entry point of a phase (what a file was pulled at). */
  getEntryPointVersion(zoneId: string, phase: string, version: string): Promise<Ruleset> {
    const path = `/zones/${enc(zoneId)}/rulesets/phases/${enc(phase)}/entrypoint/versions/${enc(version)}`;
    return this.call(`GET ${path}`, () => this.raw<Ruleset>('get', path));
  }

  /** PUT of the entry point (whole rules list); `waf_migration` starts or finishes the migration. */
  putEntryPoint(zoneId: string, phase: string, body: { name?: string; description?: string; rules: readonly Rule[] }, migration?: MigrationMode): Promise<Ruleset & { readonly warnings?: readonly ApiMessage[] }> {
    const path = `/zones/${enc(zoneId)}/rulesets/phases/${enc(phase)}/entrypoint`;
    const q = migration ? `?waf_migration=${migration}&phase_two=1` : '';
    // Raw (the SDK would drop `messages`): the API's warnings (20040, e.g. a deprecated
    // field) come back beside the result and are shown with it.
    return this.call(`PUT ${path}${q}`, async () => {
      const env = await this.cf.put<Envelope<Ruleset> & { messages?: unknown }>(path, { body, ...(migration ? { query: { waf_migration: migration, phase_two: 1 } } : {}) });
      if (env && typeof env === 'object' && env.success === false) throw fromEnvelope(`PUT ${path}`, 200, env.errors, this.options.local === true, env.messages);
      const result = must(env?.result, `PUT ${path}`, this.options.local === true);
      const warnings = Array.isArray(env.messages) ? (env.messages as ApiMessage[]).filter((m) => m && typeof m.message === 'string') : [];
      return warnings.length ? { ...result, warnings } : result;
    });
  }

  /** PATCH of one rule of a ruleset (replaces the rule); returns the whole ruleset. */
  editRule(zoneId: string, rulesetId: string, ruleId: string, rule: Rule): Promise<Ruleset> {
    return this.call(`PATCH /zones/${zoneId}/rulesets/${rulesetId}/rules/${ruleId}`, async () => {
      const { id: _id, version: _v, last_updated: _l, categories: _c, ...body } = rule;
      return must((await this.cf.rulesets.rules.edit(ruleId, { ruleset_id: rulesetId, zone_id: zoneId, ...body } as never)) as unknown as Ruleset, `PATCH rule ${ruleId}`, this.options.local === true);
    });
  }

  listZoneRulesets(zoneId: string): Promise<RulesetHeader[]> {
    const path = `/zones/${enc(zoneId)}/rulesets`;
    return this.call(`GET ${path}`, () => this.allCursor<RulesetHeader>(path));
  }

  listAccountRulesets(accountId: string): Promise<RulesetHeader[]> {
    const path = `/accounts/${enc(accountId)}/rulesets`;
    return this.call(`GET ${path}`, () => this.allCursor<RulesetHeader>(path));
  }

  /** One of the zone's rulesets, by id (an entry point, or a managed ruleset it has). */
  getZoneRuleset(zoneId: string, rulesetId: string): Promise<Ruleset> {
    return this.call(`GET /zones/${zoneId}/rulesets/${rulesetId}`, async () => must((await this.cf.rulesets.get(rulesetId, { zone_id: zoneId })) as unknown as Ruleset, `GET ruleset ${rulesetId}`, this.options.local === true));
  }

  getAccountRuleset(accountId: string, rulesetId: string): Promise<Ruleset> {
    return this.call(`GET /accounts/${accountId}/rulesets/${rulesetId}`, async () => must((await this.cf.rulesets.get(rulesetId, { account_id: accountId })) as unknown as Ruleset, `GET ruleset ${rulesetId}`, this.options.local === true));
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

  /** Creates filters (not retried but for a 429: a retried create could make a second one). */
  createFilters(zoneId: string, filters: readonly { expression: string; description?: string; paused?: boolean }[]): Promise<Filter[]> {
    const path = `/zones/${enc(zoneId)}/filters`;
    return this.call(`POST ${path}`, () => this.raw<Filter[]>('post', path, { body: filters }, true), true);
  }

  /** Creates firewall rules; each `filter` is `{id}` (two-call flow) or an inline filter (single call). */
  createFirewallRules(
    zoneId: string,
    rules: readonly { filter: { id: string } | { expression: string; description?: string }; action: string; description?: string; priority?: number; paused?: boolean; products?: string[] }[],
  ): Promise<FirewallRule[]> {
    const path = `/zones/${enc(zoneId)}/firewall/rules`;
    return this.call(`POST ${path}`, () => this.raw<FirewallRule[]>('post', path, { body: rules }, true), true);
  }

  /** One firewall rule as the zone has it now. */
  firewallRule(zoneId: string, ruleId: string): Promise<FirewallRule> {
    const path = `/zones/${enc(zoneId)}/firewall/rules/${enc(ruleId)}`;
    return this.call(`GET ${path}`, () => this.raw<FirewallRule>('get', path));
  }

  /**
   * PUT of one firewall rule: the whole rule (omitted fields are erased by the API, so
   * every field is sent), its filter by id.
   */
  updateFirewallRule(zoneId: string, rule: FirewallRule): Promise<FirewallRule> {
    const path = `/zones/${enc(zoneId)}/firewall/rules/${enc(rule.id)}`;
    const body = {
      id: rule.id,
      filter: { id: rule.filter.id },
      action: rule.action,
      priority: rule.priority ?? null,
      paused: rule.paused === true,
      ...(rule.description !== undefined ? { description: rule.description } : {}),
      ...(rule.ref !== undefined ? { ref: rule.ref } : {}),
      ...(rule.products?.length ? { products: rule.products } : {}),
    };
    return this.call(`PUT ${path}`, () => this.raw<FirewallRule>('put', path, { body }));
  }

  /** PATCH of one firewall rule's priority (null: none, the rule runs after those with one). */
  setFirewallRulePriority(zoneId: string, ruleId: string, priority: number | null): Promise<FirewallRule> {
    const path = `/zones/${enc(zoneId)}/firewall/rules/${enc(ruleId)}`;
    return this.call(`PATCH ${path}`, async () => {
      // The API answers an array with the one rule (the SDK types it as a page).
      const r = await this.raw<FirewallRule | FirewallRule[]>('patch', path, { body: { id: ruleId, priority } });
      return Array.isArray(r) ? r.find((x) => x.id === ruleId) ?? r[0] : r;
    });
  }

  // --- Trace ----------------------------------------------------------------------------

  trace(accountId: string, request: Record<string, unknown>): Promise<TraceResult> {
    const path = `/accounts/${enc(accountId)}/request-tracer/trace`;
    return this.call(`POST ${path}`, () => this.raw<TraceResult>('post', path, { body: request }));
  }

  // --- GraphQL Analytics (security events) ---------------------------------------------

  /** `POST /graphql`: the query's `data`; its first GraphQL error as a RulesApiError. */
  graphql<T>(query: string, variables: Record<string, unknown>): Promise<T> {
    return this.call('POST /graphql', async () => {
      const r = await this.cf.post<{ data?: T | null; errors?: { message: string }[] }>('/graphql', { body: { query, variables } });
      if (r?.errors?.length || !r?.data) {
        throw new RulesApiError('POST /graphql', 200, (r?.errors ?? [{ message: 'no data' }]).map((e) => ({ message: e.message })), 'Check the token has Zone Analytics Read (or Zone Read) on the zone.');
      }
      return r.data;
    });
  }
}
