// A token whose policies name every zone (`com.cloudflare.api.account.zone.*`) reaches every
// zone, but no account as such: to it, an account id that does not exist must read exactly
// as an existing account it cannot reach (403 10000), or it could tell which account ids
// exist. Only a policy on every account (`com.cloudflare.api.account.*`) is told that an
// account is missing (404 7003); a missing zone is still told to both (scopeAccess.ts).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { addToken, DEMO_ACCOUNT, policy } from '../../server/src/service/seed';
import { startService, type TestService } from './harness';

const OTHER = 'f'.repeat(32);
const MISSING = 'e'.repeat(32);
const ALL_ZONES = 'all-zones-token-0123456789abcdefghijklmnopqr';
const ALL_ACCOUNTS = 'all-accounts-token-0123456789abcdefghijklmnopq';
const DENIED = { status: 403, body: { result: null, success: false, errors: [{ code: 10000, message: 'Authentication error' }], messages: [] } };

describe('a token on every zone (account.zone.*)', () => {
  let svc: TestService;
  before(async () => {
    svc = await startService();
    svc.store.write(() => {
      svc.store.run("INSERT INTO accounts (id, name, created_on) VALUES (?, 'Other, no zones', '2024-01-01T00:00:00Z')", [OTHER]);
      addToken(svc.store, 'all zones', ALL_ZONES, [policy(['com.cloudflare.api.account.zone.*'], ['Zone WAF', 'Account WAF', 'Account Rulesets', 'Account Settings'], 'Write')]);
      addToken(svc.store, 'all accounts', ALL_ACCOUNTS, [policy(['com.cloudflare.api.account.*'], ['Zone WAF', 'Account WAF', 'Account Rulesets', 'Account Settings'], 'Write')]);
    });
  });
  after(async () => {
    await svc.close();
  });

  const answer = async (method: string, path: string, token: string, body?: unknown) => {
    const r = await svc.call(method, path, { token, ...(body !== undefined ? { body } : {}) });
    return { status: r.status, body: r.body };
  };

  const accountRoutes: readonly [string, (id: string) => string, unknown?][] = [
    ['GET', (id) => `/accounts/${id}/rulesets`],
    ['GET', (id) => `/accounts/${id}`],
    ['GET', (id) => `/accounts/${id}/rulesets/phases/http_request_firewall_custom/entrypoint`],
    ['POST', (id) => `/accounts/${id}/request-tracer/trace`, { url: 'https://x.example/', method: 'GET' }],
  ];

  it('gets the identical answer (status and body) for a missing account id and an existing one it cannot reach', async () => {
    for (const [method, path, body] of accountRoutes) {
      const missing = await answer(method, path(MISSING), ALL_ZONES, body);
      const existing = await answer(method, path(OTHER), ALL_ZONES, body);
      assert.deepEqual(existing, DENIED, `${method} ${path(OTHER)}`);
      assert.deepEqual(missing, existing, `${method} ${path(MISSING)} reads as ${path(OTHER)}`);
    }
    // Its own rulesets list of the demo account (whose zones it reaches) is no different.
    assert.deepEqual(await answer('GET', `/accounts/${DEMO_ACCOUNT.id}/rulesets`, ALL_ZONES), DENIED);
  });

  it('is still told that a zone is missing, as is a token on every account that an account is', async () => {
    const zone = await answer('GET', `/zones/${MISSING}`, ALL_ZONES);
    assert.deepEqual([zone.status, zone.body.errors], [404, [{ code: 7003, message: `Could not route to /zones/${MISSING}, perhaps your object identifier is invalid?` }]]);
    const account = await answer('GET', `/accounts/${MISSING}/rulesets`, ALL_ACCOUNTS);
    assert.deepEqual([account.status, account.body.errors], [404, [{ code: 7003, message: `Could not route to /accounts/${MISSING}, perhaps your object identifier is invalid?` }]]);
    const reached = await answer('GET', `/accounts/${OTHER}/rulesets`, ALL_ACCOUNTS);
    assert.equal(reached.status, 200, JSON.stringify(reached.body));
  });
});
