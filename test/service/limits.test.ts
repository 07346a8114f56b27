// Limits of the service at team scale: updates to one ruleset throttled past
// --ruleset-write-rate (429, Retry-After, RateLimit headers) and the extension's client
// retrying through it; a trace whose client disconnects is cancelled; another account's
// token cannot tell a hidden zone from a missing one.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { RulesApi } from '../../client/src/api/rulesApi';
import { RulesetWriteLimiter } from '../../server/src/service/rateLimit';
import { createService, type RunningService } from '../../server/src/service/service';
import { Store } from '../../server/src/service/store';
import { addToken, DEMO_ACCOUNT, demoZoneId, policy, seedDemo } from '../../server/src/service/seed';
import { demoSeedSteps } from '../../server/src/service/routes/index';
import { startService, type TestService } from './harness';

const ENT = demoZoneId('enterprise.example.com');
const CUSTOM = 'http_request_firewall_custom';

describe('updates to one ruleset past --ruleset-write-rate', () => {
  let dir: string;
  let store: Store;
  let running: RunningService;
  let url: string;
  let token: string;
  let frozenAt: number | undefined = performance.now();
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'rulesmith-limits-'));
    store = new Store(join(dir, 'limits.db'));
    token = seedDemo(store, demoSeedSteps)!.credentials.find((c) => c.name === 'demo admin')!.value;
    // The limiter's clock stands still for the first test (a loaded machine must not refill it mid-burst).
    running = createService({ store, writeLimiter: new RulesetWriteLimiter(2, () => frozenAt ?? performance.now()) });
    await new Promise<void>((resolve) => running.server.listen(0, '127.0.0.1', resolve));
    url = running.url();
  });
  after(async () => {
    await running.close();
    store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const put = (rules: unknown[], zone = ENT) =>
    fetch(`${url}/zones/${zone}/rulesets/phases/${CUSTOM}/entrypoint`, { method: 'PUT', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ rules }) });

  it('answers 429 with Retry-After past the rate, writes nothing then, and says the limit on every answer', async () => {
    const answers = await Promise.all([0, 1, 2, 3].map((i) => put([{ action: 'block', expression: `http.host eq "t${i}.example.com"` }])));
    const statuses = answers.map((a) => a.status).sort();
    assert.deepEqual(statuses, [200, 200, 429, 429]);
    const throttled = answers.find((a) => a.status === 429)!;
    assert.equal(throttled.headers.get('retry-after'), '1');
    assert.equal(throttled.headers.get('ratelimit-policy'), '"ruleset-writes";q=2;w=1');
    assert.match(throttled.headers.get('ratelimit') ?? '', /^"ruleset-writes";r=0;t=1$/);
    assert.deepEqual(((await throttled.json()) as { errors: unknown }).errors, [
      { code: 971, message: 'Too many updates to this ruleset: at most 2 per second. Retry after 1 s (the Retry-After header).' },
    ]);
    const ok = answers.find((a) => a.status === 200)!;
    assert.match(ok.headers.get('ratelimit') ?? '', /^"ruleset-writes";r=[01];t=1$/);
    // Two writes went through: two versions, not four.
    const versions = await fetch(`${url}/zones/${ENT}/rulesets/phases/${CUSTOM}/entrypoint/versions`, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(((await versions.json()) as { result: unknown[] }).result.length, 2);
    // Reads are not throttled, and say the policy too.
    assert.equal(versions.headers.get('ratelimit-policy'), '"ruleset-writes";q=2;w=1');
    assert.equal(versions.headers.get('ratelimit'), null);
    // Another ruleset has its own allowance.
    assert.equal((await put([], demoZoneId('pro.example.com'))).status, 200);
  });

  it("the extension's client waits out the Retry-After and its write then goes through", async () => {
    const api = new RulesApi({ baseUrl: url, credentials: { kind: 'token', token }, maxRetries: 2 });
    // The bucket is empty (the clock has not moved since the first test): every first try is
    // a 429. The limiter's second passes every half second of the test's, so retries get in.
    const tick = setInterval(() => (frozenAt = frozenAt! + 1000), 500);
    try {
      const rules = [{ action: 'block', expression: 'http.host eq "client.example.com"' }] as never[];
      const t0 = Date.now();
      const [a, b, c] = await Promise.all([api.putEntryPoint(ENT, CUSTOM, { rules }), api.putEntryPoint(ENT, CUSTOM, { rules }), api.putEntryPoint(ENT, CUSTOM, { rules })]);
      assert.deepEqual([a, b, c].map((r) => r.rules?.length), [1, 1, 1]);
      assert.ok(Date.now() - t0 >= 900, 'each waited out the Retry-After of its first answer');
    } finally {
      clearInterval(tick);
    }
  });
});

describe('a trace whose client disconnects', () => {
  let svc: TestService;
  before(async () => {
    svc = await startService();
  });
  after(async () => {
    await svc.close();
  });

  it('is cancelled: the trace worker stops it and the service logs the request as aborted', async () => {
    // Compiling the zone, then a query the OWASP-based ruleset takes seconds on (trace.test.ts).
    const body = JSON.stringify({ url: `https://migrated.example.com/?q=${"'".repeat(16_000)}x`, method: 'GET' });
    const u = new URL(`${svc.url}/accounts/${DEMO_ACCOUNT.id}/request-tracer/trace`);
    await new Promise<void>((resolve) => {
      const req = request(u, { method: 'POST', headers: { authorization: `Bearer ${svc.adminToken}`, 'content-type': 'application/json' } });
      req.on('error', () => resolve());
      req.end(body);
      setTimeout(() => {
        req.destroy();
        resolve();
      }, 300);
    });
    const line = await svc.logLine((l) => l.startsWith('POST /client/v4/accounts/') && l.includes('request-tracer'), 20_000);
    assert.match(line, /aborted by the client/);
    assert.equal(svc.running.service.traces.stats.cancelled, 1);
  });
});

describe('another account', () => {
  let svc: TestService;
  let other: string;
  before(async () => {
    svc = await startService();
    other = 'other-account-token-0123456789abcdefghijklmn';
    svc.store.write(() => {
      svc.store.run("INSERT INTO accounts (id, name, created_on) VALUES (?, 'Other', '2024-01-01T00:00:00Z')", ['f'.repeat(32)]);
      addToken(svc.store, 'other account', other, [policy([`com.cloudflare.api.account.${'f'.repeat(32)}`], ['Zone WAF', 'Account WAF'], 'Write')]);
    });
  });
  after(async () => {
    await svc.close();
  });

  it('gets the same answer for a zone it may not see and for one that does not exist', async () => {
    for (const path of [`/zones/${ENT}`, `/zones/${ENT}/rulesets/phases/${CUSTOM}/entrypoint`, `/accounts/${DEMO_ACCOUNT.id}/rulesets`]) {
      const hidden = await svc.call('GET', path, { token: other });
      const missing = await svc.call('GET', path.replace(ENT, 'e'.repeat(32)).replace(DEMO_ACCOUNT.id, 'e'.repeat(32)), { token: other });
      assert.deepEqual([hidden.status, hidden.body.errors], [403, [{ code: 10000, message: 'Authentication error' }]], path);
      assert.deepEqual([missing.status, missing.body.errors], [hidden.status, hidden.body.errors], path);
    }
    // Credentials that reach every account still learn a zone is missing.
    const all = 'all-accounts-token-0123456789abcdefghijklmnopq';
    svc.store.write(() => addToken(svc.store, 'all accounts', all, [policy(['com.cloudflare.api.account.*'], ['Zone WAF'], 'Read')]));
    const missing = await svc.call('GET', `/zones/${'e'.repeat(32)}`, { token: all });
    assert.deepEqual([missing.status, missing.body.errors[0].code], [404, 7003]);
  });
});
