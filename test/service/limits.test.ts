// Limits of the service at team scale: updates to one ruleset throttled past
// --ruleset-write-rate (429, Retry-After, RateLimit headers) and the extension's client
// retrying through it; a trace whose client disconnects is cancelled; another account's
// token cannot tell a hidden zone from a missing one.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { RulesApi } from '../../client/src/api/rulesApi';
import { RulesetWriteLimiter } from '../../server/src/service/rateLimit';
import { createService, type RunningService } from '../../server/src/service/service';
import { Store, StoreUnavailable } from '../../server/src/service/store';
import { serveArgs, serveOptions } from '../../server/src/cli/serve';
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
    const body = (await throttled.json()) as { errors: unknown; messages: unknown };
    // The hosted API's words in errors; the limit in messages.
    assert.deepEqual([body.errors, body.messages], [
      [{ code: 971, message: 'Please wait and consider throttling your request speed' }],
      [{ code: 971, message: 'Too many updates to this ruleset: at most 2 per second. Retry after 1 s (the Retry-After header).' }],
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

/** A service limited by `limiter` (the test moves its clock), with a second account whose token may write only there. */
async function limitedService(limiter: RulesetWriteLimiter) {
  const dir = mkdtempSync(join(tmpdir(), 'rulesmith-limits-'));
  const store = new Store(join(dir, 'limits.db'));
  const token = seedDemo(store, demoSeedSteps)!.credentials.find((c) => c.name === 'demo admin')!.value;
  const outsider = 'other-account-token-0123456789abcdefghijklmn';
  store.write(() => {
    store.run("INSERT INTO accounts (id, name, created_on) VALUES (?, 'Other', '2024-01-01T00:00:00Z')", ['f'.repeat(32)]);
    addToken(store, 'other account', outsider, [policy([`com.cloudflare.api.account.${'f'.repeat(32)}`], ['Zone WAF', 'Account WAF', 'Account Rulesets'], 'Write')]);
  });
  const running = createService({ store, writeLimiter: limiter });
  await new Promise<void>((resolve) => running.server.listen(0, '127.0.0.1', resolve));
  const url = running.url();
  const call = async (method: string, path: string, body?: unknown, as = token) => {
    const res = await fetch(`${url}${path}`, { method, headers: { authorization: `Bearer ${as}`, 'content-type': 'application/json' }, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
    return { status: res.status, body: (await res.json()) as any, headers: res.headers };
  };
  const close = async () => {
    await running.close();
    store.close();
    rmSync(dir, { recursive: true, force: true });
  };
  return { url, store, outsider, call, close };
}

/** The rate limit's headers of an answer (the rest, cf-ray and date, differ between any two answers). */
function limitHeaders(h: Headers): Record<string, string | null> {
  return { policy: h.get('ratelimit-policy'), ratelimit: h.get('ratelimit'), retryAfter: h.get('retry-after') };
}

const ENTRY = `/zones/${ENT}/rulesets/phases/${CUSTOM}/entrypoint`;
const oneRule = (host: string) => ({ rules: [{ action: 'block', expression: `http.host eq "${host}"` }] });

describe('the ruleset write rate and authorization', () => {
  let svc: Awaited<ReturnType<typeof limitedService>>;
  before(async () => {
    svc = await limitedService(new RulesetWriteLimiter(2, () => 0));
  });
  after(async () => {
    await svc.close();
  });

  it("another account's refused writes use none of the owner's allowance and answer as for a zone that does not exist", async () => {
    const missingZone = ENTRY.replace(ENT, 'e'.repeat(32));
    const expected = { status: 403, errors: [{ code: 10000, message: 'Authentication error' }], headers: { policy: '"ruleset-writes";q=2;w=1', ratelimit: null, retryAfter: null } };
    for (let i = 0; i < 3; i++) {
      for (const path of [ENTRY, missingZone]) {
        const r = await svc.call('PUT', path, oneRule('outsider.example.com'), svc.outsider);
        assert.deepEqual({ status: r.status, errors: r.body.errors, headers: limitHeaders(r.headers) }, expected, `${path} #${i}`);
      }
    }
    // The clock stands still: the owner still has both writes of its allowance.
    const first = await svc.call('PUT', ENTRY, oneRule('a.example.com'));
    assert.deepEqual([first.status, first.headers.get('ratelimit')], [200, '"ruleset-writes";r=1;t=1']);
    const second = await svc.call('PUT', ENTRY, oneRule('b.example.com'));
    assert.deepEqual([second.status, second.headers.get('ratelimit')], [200, '"ruleset-writes";r=0;t=1']);
    // The owner's bucket is empty now; the outsider still gets the answer a missing zone gets.
    for (const path of [ENTRY, missingZone]) {
      const r = await svc.call('PUT', path, oneRule('outsider.example.com'), svc.outsider);
      assert.deepEqual({ status: r.status, errors: r.body.errors, headers: limitHeaders(r.headers) }, expected, path);
    }
  });

  it('a write refused 404 (a ruleset that does not exist) uses no allowance', async () => {
    const missing = `/accounts/${DEMO_ACCOUNT.id}/rulesets/${'e'.repeat(32)}`;
    for (let i = 0; i < 3; i++) {
      const r = await svc.call('PUT', missing, { rules: [] });
      assert.deepEqual([r.status, r.body.errors, r.headers.get('ratelimit')], [404, [{ code: 10007, message: `could not find ruleset '${'e'.repeat(32)}'` }], null]);
    }
    const made = await svc.call('POST', `/accounts/${DEMO_ACCOUNT.id}/rulesets`, { name: 'mine', kind: 'custom', phase: CUSTOM, rules: [] });
    assert.deepEqual([made.status, made.headers.get('ratelimit')], [200, '"ruleset-writes";r=1;t=1']);
  });
});

describe('the ruleset write rate and a rule that does not exist', () => {
  let svc: Awaited<ReturnType<typeof limitedService>>;
  before(async () => {
    // One write per second, on a clock that stands still: one write passes, the next is a 429.
    svc = await limitedService(new RulesetWriteLimiter(1, () => 0));
  });
  after(async () => {
    await svc.close();
  });

  it('a PATCH or DELETE of a rule the ruleset lacks is a 404 that uses none of the allowance, as a version it lacks is', async () => {
    // docs/service.md: a write is charged once its ruleset is found; a 403 or 404 uses
    // nothing and carries no Ratelimit. The rule is looked for before the charge.
    const made = await svc.call('POST', `/accounts/${DEMO_ACCOUNT.id}/rulesets`, { name: 'throttled', kind: 'custom', phase: CUSTOM, rules: [{ action: 'block', expression: 'true' }] });
    assert.equal(made.status, 200, JSON.stringify(made.body));
    const path = `/accounts/${DEMO_ACCOUNT.id}/rulesets/${made.body.result.id}`;
    const missing = 'ab'.repeat(16);
    const seen = [];
    for (const [method, p, body] of [
      ['DELETE', '/versions/7', undefined],
      ['PATCH', `/rules/${missing}`, { action: 'block', expression: 'true' }],
      ['PATCH', `/rules/${missing}`, { position: { index: 1 } }],
      ['DELETE', `/rules/${missing}`, undefined],
    ] as const) {
      const r = await svc.call(method, `${path}${p}`, body);
      seen.push({ call: `${method} ${p}`, status: r.status, code: r.body.errors[0].code, ratelimit: r.headers.get('ratelimit') });
    }
    // The ruleset's one write of this second is still there, and it is used up then.
    for (const call of ['PUT', 'PUT again']) {
      const r = await svc.call('PUT', path, { rules: [] });
      seen.push({ call, status: r.status, code: r.body.errors[0]?.code, ratelimit: r.headers.get('ratelimit') });
    }
    assert.deepEqual(seen, [
      { call: 'DELETE /versions/7', status: 404, code: 10007, ratelimit: null },
      { call: `PATCH /rules/${missing}`, status: 404, code: 10007, ratelimit: null },
      { call: `PATCH /rules/${missing}`, status: 404, code: 10007, ratelimit: null },
      { call: `DELETE /rules/${missing}`, status: 404, code: 10007, ratelimit: null },
      { call: 'PUT', status: 200, code: undefined, ratelimit: '"ruleset-writes";r=0;t=1' },
      { call: 'PUT again', status: 429, code: 971, ratelimit: '"ruleset-writes";r=0;t=1' },
    ]);
  });
});

describe('the ruleset write rate of an entry point', () => {
  let now = 0;
  let svc: Awaited<ReturnType<typeof limitedService>>;
  before(async () => {
    svc = await limitedService(new RulesetWriteLimiter(1, () => now));
  });
  after(async () => {
    await svc.close();
  });

  it('is one allowance whichever path writes it: by phase, by id, or the write that creates it', async () => {
    const created = await svc.call('PUT', ENTRY, oneRule('a.example.com'));
    assert.equal(created.status, 200);
    const id: string = created.body.result.id;
    const byId = await svc.call('PUT', `/zones/${ENT}/rulesets/${id}`, oneRule('b.example.com'));
    assert.deepEqual([byId.status, byId.body.messages, limitHeaders(byId.headers)], [
      429,
      [{ code: 971, message: 'Too many updates to this ruleset: at most 1 per second. Retry after 1 s (the Retry-After header).' }],
      { policy: '"ruleset-writes";q=1;w=1', ratelimit: '"ruleset-writes";r=0;t=1', retryAfter: '1' },
    ]);
    now += 1000;
    assert.equal((await svc.call('PUT', `/zones/${ENT}/rulesets/${id}`, oneRule('c.example.com'))).status, 200);
    for (const [method, path, body] of [
      ['PUT', ENTRY, oneRule('d.example.com')],
      ['POST', `/zones/${ENT}/rulesets/${id}/rules`, oneRule('e.example.com').rules[0]],
    ] as const) {
      const r = await svc.call(method, path, body);
      assert.deepEqual([r.status, r.headers.get('retry-after')], [429, '1'], `${method} ${path}`);
    }
    // Two writes went through: versions 1 and 2.
    const versions = await svc.call('GET', `${ENTRY}/versions`);
    assert.deepEqual(versions.body.result.map((v: { version: string }) => v.version), ['1', '2']);
  });
});

describe('the ruleset write rate below 1 per second', () => {
  let now = 0;
  let svc: Awaited<ReturnType<typeof limitedService>>;
  before(async () => {
    svc = await limitedService(new RulesetWriteLimiter(0.5, () => now));
  });
  after(async () => {
    await svc.close();
  });

  it('passes one write every 1/rate seconds, and its headers and Retry-After say so', async () => {
    const first = await svc.call('PUT', ENTRY, oneRule('a.example.com'));
    assert.deepEqual([first.status, limitHeaders(first.headers)], [200, { policy: '"ruleset-writes";q=1;w=2', ratelimit: '"ruleset-writes";r=0;t=2', retryAfter: null }]);
    const early = await svc.call('PUT', ENTRY, oneRule('b.example.com'));
    assert.deepEqual([early.status, early.body.messages, limitHeaders(early.headers)], [
      429,
      [{ code: 971, message: 'Too many updates to this ruleset: at most 1 every 2 s. Retry after 2 s (the Retry-After header).' }],
      { policy: '"ruleset-writes";q=1;w=2', ratelimit: '"ruleset-writes";r=0;t=2', retryAfter: '2' },
    ]);
    now += 1000;
    const later = await svc.call('PUT', ENTRY, oneRule('c.example.com'));
    assert.deepEqual([later.status, limitHeaders(later.headers)], [429, { policy: '"ruleset-writes";q=1;w=2', ratelimit: '"ruleset-writes";r=0;t=1', retryAfter: '1' }]);
    now += 1000;
    const again = await svc.call('PUT', ENTRY, oneRule('d.example.com'));
    assert.deepEqual([again.status, again.headers.get('ratelimit')], [200, '"ruleset-writes";r=0;t=2']);
  });

  it('says a whole quota in Ratelimit-Policy for any rate: the writes the bucket holds and the seconds to refill them', () => {
    const policyOf = (rate: number) => new RulesetWriteLimiter(rate).policyHeader()['ratelimit-policy'];
    assert.deepEqual([0.5, 0.3, 1, 2, 2.5].map(policyOf), ['"ruleset-writes";q=1;w=2', '"ruleset-writes";q=1;w=4', '"ruleset-writes";q=1;w=1', '"ruleset-writes";q=2;w=1', '"ruleset-writes";q=2;w=1']);
  });

  it('gives back a write the service failed (10030) as of now: the headers say what the next write meets', () => {
    let now = 0;
    const limiter = new RulesetWriteLimiter(5, () => now);
    for (let i = 0; i < 3; i++) limiter.take('rs');
    assert.deepEqual(limiter.take('rs').headers, { ratelimit: '"ruleset-writes";r=1;t=1' });
    assert.deepEqual(limiter.giveBack('rs'), { ratelimit: '"ruleset-writes";r=2;t=1' });
    // The check hung for 30 s meanwhile: the bucket refilled, and the given-back write does not overfill it.
    limiter.take('rs');
    now += 30_000;
    assert.deepEqual(limiter.giveBack('rs'), { ratelimit: '"ruleset-writes";r=5;t=0' });
    assert.deepEqual(limiter.take('rs').headers, { ratelimit: '"ruleset-writes";r=4;t=1' });
  });

  it('rulesmith serve takes 0.5, and refuses 0, a negative rate and what is not a number', () => {
    assert.equal(serveOptions(serveArgs(['--ruleset-write-rate', '0.5'])).rulesetWriteRate, 0.5);
    for (const bad of ['0', '-1', 'NaN', 'abc', '', '1e7']) {
      assert.throws(() => serveOptions(serveArgs([`--ruleset-write-rate=${bad}`])), {
        message: `--ruleset-write-rate takes writes per second to one ruleset, a number above 0 and at most 1000000 (0.5: one write every 2 s), got "${bad}"`,
      });
    }
  });
});

describe('Ratelimit-Policy with the limit on', () => {
  let svc: Awaited<ReturnType<typeof limitedService>>;
  before(async () => {
    svc = await limitedService(new RulesetWriteLimiter(3));
  });
  after(async () => {
    await svc.close();
  });

  it('is on the 431 of request headers over 16 KB', async () => {
    const u = new URL(svc.url);
    const raw = await new Promise<string>((resolve, reject) => {
      const s = connect(Number(u.port), u.hostname, () => s.write(`GET /client/v4/zones HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`));
      let out = '';
      s.on('data', (d: Buffer) => (out += d.toString()));
      s.on('close', () => resolve(out));
      s.on('error', reject);
    });
    const head = raw.split('\r\n\r\n')[0]!.split('\r\n');
    assert.equal(head[0], 'HTTP/1.1 431 Request Header Fields Too Large');
    assert.ok(head.includes('ratelimit-policy: "ruleset-writes";q=3;w=1'), head.join('\n'));
  });

  it('is on the 503 of a store that takes no more writes and on the 500 of a bug', async () => {
    const durable = svc.store.durable;
    try {
      for (const [fault, status] of [[new StoreUnavailable('the store takes no more writes: test'), 503], [new Error('a bug'), 500]] as const) {
        svc.store.durable = () => {
          throw fault;
        };
        const r = await svc.call('GET', '/zones');
        assert.deepEqual([r.status, limitHeaders(r.headers)], [status, { policy: '"ruleset-writes";q=3;w=1', ratelimit: null, retryAfter: null }]);
      }
    } finally {
      svc.store.durable = durable;
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
    // Unless a deny policy hides some: then a missing zone reads as a denied one.
    const allButDemo = 'all-but-demo-token-0123456789abcdefghijklmnop';
    svc.store.write(() => addToken(svc.store, 'all but demo', allButDemo, [policy(['com.cloudflare.api.account.*'], ['Zone WAF'], 'Read'), { ...policy([`com.cloudflare.api.account.${DEMO_ACCOUNT.id}`], ['Zone WAF'], 'Read'), effect: 'deny' }]));
    const denied = await svc.call('GET', `/zones/${ENT}/rulesets`, { token: allButDemo });
    const absent = await svc.call('GET', `/zones/${'e'.repeat(32)}/rulesets`, { token: allButDemo });
    assert.deepEqual([denied.status, denied.body.errors, absent.status, absent.body.errors], [403, [{ code: 10000, message: 'Authentication error' }], 403, [{ code: 10000, message: 'Authentication error' }]]);
  });
});
