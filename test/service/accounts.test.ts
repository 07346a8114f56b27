// Accounts, zones and the auth matrix over real HTTP: what each credential may see and
// the API's own error for every bad credential.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DEMO_ACCOUNT, DEMO_USER, demoZoneId } from '../../server/src/service/seed';
import { startService, type TestService } from './harness';

let svc: TestService;
before(async () => {
  svc = await startService();
});
after(() => svc.close());

const PRO = demoZoneId('pro.example.com');
const BUSINESS = demoZoneId('business.example.com');

describe('accounts and zones', () => {
  it('lists the account and its six zones with plans, for the admin token', async () => {
    const accounts = await svc.call('GET', '/accounts');
    assert.equal(accounts.status, 200);
    assert.deepEqual(accounts.body.result.map((a: { id: string; name: string }) => [a.id, a.name]), [[DEMO_ACCOUNT.id, 'Rulesmith Demo']]);
    const zones = await svc.call('GET', '/zones?per_page=50');
    assert.deepEqual(
      zones.body.result.map((z: { name: string; plan: { name: string } }) => `${z.name} ${z.plan.name}`),
      [
        'business.example.com Business Website',
        'enterprise.example.com Enterprise Website',
        'firewall.example.com Enterprise Website',
        'migrated.example.com Business Website',
        'overrides.example.com Business Website',
        'pro.example.com Pro Website',
      ],
    );
    assert.deepEqual(zones.body.result_info, { page: 1, per_page: 50, count: 6, total_count: 6, total_pages: 1 });
    assert.deepEqual(zones.body.result[5].account, { id: DEMO_ACCOUNT.id, name: 'Rulesmith Demo' });
  });

  it('filters zones by name and account, and pages them until an empty page', async () => {
    const byName = await svc.call('GET', '/zones?name=pro.example.com');
    assert.deepEqual(byName.body.result.map((z: { id: string }) => z.id), [PRO]);
    const otherAccount = await svc.call('GET', `/zones?account.id=${'0'.repeat(32)}`);
    assert.deepEqual(otherAccount.body.result, []);
    const page2 = await svc.call('GET', '/zones?per_page=5&page=2');
    assert.deepEqual(page2.body.result.map((z: { name: string }) => z.name), ['pro.example.com']);
    const page3 = await svc.call('GET', '/zones?per_page=5&page=3');
    assert.deepEqual([page3.status, page3.body.result], [200, []]);
  });

  it('the SDK iterates every zone and reads one zone', async () => {
    const cf = svc.sdk();
    const names: string[] = [];
    for await (const z of cf.zones.list({ per_page: 5 })) names.push(z.name);
    assert.equal(names.length, 6);
    const zone = await cf.zones.get({ zone_id: BUSINESS });
    assert.equal(zone.name, 'business.example.com');
    assert.equal(zone.plan?.name, 'Business Website');
  });

  it('a zone-scoped token sees only its zone, and gets 10000 for another', async () => {
    const token = svc.credentials.get('pro.example.com WAF');
    const zones = await svc.call('GET', '/zones', { token });
    assert.deepEqual(zones.body.result.map((z: { name: string }) => z.name), ['pro.example.com']);
    const accounts = await svc.call('GET', '/accounts', { token });
    assert.equal(accounts.body.result.length, 1);
    const other = await svc.call('GET', `/zones/${BUSINESS}`, { token });
    assert.equal(other.status, 403);
    assert.deepEqual(other.body.errors, [{ code: 10000, message: 'Authentication error' }]);
  });

  it('an unknown zone id gets the answer of a zone the token cannot see; a malformed one the routing errors', async () => {
    // The demo admin's token reaches one account: a missing zone must not read otherwise
    // than another account's (limits.test.ts has a token that reaches all, which gets 7003).
    const unknown = await svc.call('GET', `/zones/${'a'.repeat(32)}`);
    assert.deepEqual([unknown.status, unknown.body.errors], [403, [{ code: 10000, message: 'Authentication error' }]]);
    const bad = await svc.call('GET', '/zones/not-an-id');
    assert.equal(bad.status, 400);
    assert.deepEqual(bad.body.errors.map((e: { code: number }) => e.code), [7003, 7000]);
    const noRoute = await svc.call('GET', '/nothing/here');
    assert.deepEqual([noRoute.status, noRoute.body.errors], [400, [{ code: 7000, message: 'No route for that URI' }]]);
  });
});

describe('credentials', () => {
  it('verifies a token with the hosted message, and rejects an unknown one with 1000', async () => {
    const ok = await svc.call('GET', '/user/tokens/verify');
    assert.equal(ok.status, 200);
    assert.equal(ok.body.result.status, 'active');
    assert.match(ok.body.result.id, /^[0-9a-f]{32}$/);
    assert.deepEqual(ok.body.messages, [{ code: 10000, message: 'This API Token is valid and active', type: null }]);
    const bad = await svc.call('GET', '/user/tokens/verify', { token: 'x'.repeat(40) });
    assert.deepEqual([bad.status, bad.body.errors], [401, [{ code: 1000, message: 'Invalid API Token' }]]);
    const sdk = await svc.sdk().user.tokens.verify();
    assert.equal(sdk.status, 'active');
    const account = await svc.call('GET', `/accounts/${DEMO_ACCOUNT.id}/tokens/verify`);
    assert.deepEqual([account.status, account.body.result.id], [200, ok.body.result.id]);
  });

  const cases: [string, Record<string, string>, number, unknown][] = [
    ['no credentials', {}, 400, [{ code: 9106, message: 'Missing X-Auth-Key, X-Auth-Email or Authorization headers' }]],
    [
      'a malformed Authorization header',
      { authorization: 'Token abc' },
      400,
      [{ code: 6003, message: 'Invalid request headers', error_chain: [{ code: 6111, message: 'Invalid format for Authorization header' }] }],
    ],
    ['an unknown token', { authorization: `Bearer ${'y'.repeat(40)}` }, 403, [{ code: 9109, message: 'Invalid access token' }]],
    ['an email without a key', { 'x-auth-email': DEMO_USER.email }, 400, [{ code: 9106, message: 'Missing X-Auth-Key header' }]],
    [
      'a malformed key',
      { 'x-auth-email': DEMO_USER.email, 'x-auth-key': 'short' },
      400,
      [{ code: 6003, message: 'Invalid request headers', error_chain: [{ code: 6103, message: 'Invalid format for X-Auth-Key header' }] }],
    ],
    ['a wrong key', { 'x-auth-email': DEMO_USER.email, 'x-auth-key': 'f'.repeat(37) }, 400, [{ code: 9103, message: 'Unknown X-Auth-Key or X-Auth-Email' }]],
  ];
  for (const [name, headers, status, errors] of cases) {
    it(`answers ${name} with the API's error`, async () => {
      const res = await svc.call('GET', '/zones', { token: null, headers });
      assert.deepEqual([res.status, res.body.success, res.body.errors], [status, false, errors]);
    });
  }

  it('accepts the global API key and rejects it as a bearer token', async () => {
    const key = svc.credentials.get('global API key')!;
    const ok = await svc.call('GET', '/zones', { token: null, headers: { 'x-auth-email': DEMO_USER.email, 'x-auth-key': key } });
    assert.deepEqual([ok.status, ok.body.result.length], [200, 6]);
    const asToken = await svc.call('GET', '/zones', { token: key });
    assert.deepEqual([asToken.status, asToken.body.errors], [403, [{ code: 10000, message: 'Authentication error' }]]);
  });

  it('never writes a credential into the request log', async () => {
    await svc.call('GET', '/zones');
    const text = svc.log.join('\n');
    assert.ok(svc.log.some((l) => /^GET \/client\/v4\/zones 200 /.test(l)), text);
    for (const secret of svc.credentials.values()) assert.ok(!text.includes(secret));
  });

  it('answers JSON with the envelope and a cf-ray header', async () => {
    const res = await svc.call('GET', '/zones');
    assert.equal(res.headers.get('content-type'), 'application/json; charset=utf-8');
    assert.match(res.headers.get('cf-ray') ?? '', /^[0-9a-f]{16}-LCL$/);
    assert.deepEqual(Object.keys(res.body), ['result', 'success', 'errors', 'messages', 'result_info']);
  });
});
