// The WAF proxy end to end over real sockets: an upstream app, the proxy in front of it
// (serving a zone of the real service's store), and a real HTTP client. Each action, the
// forwarding headers, bodies over the inspection limit, rate limits on a fake clock, a
// deploy mid-traffic, a 50 MiB response streamed with bounded memory, upstream faults,
// malformed and slow clients, WebSocket upgrades.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DEMO_ACCOUNT } from '../../server/src/service/seed';
import { challengeForm, entrypoint, handshake as handshakeTo, listenProxy, proxyTestFile, raw, rawSocket, send, ZONE, ZONE_ID } from './proxyHarness';

const CUSTOM = entrypoint(ZONE_ID, 'http_request_firewall_custom');

let clock = 1_800_000_000_000;
let url: string;

const RULES = [
  { action: 'block', expression: 'http.request.uri.path eq "/teapot"', description: 'custom response', action_parameters: { response: { status_code: 418, content_type: 'application/json', content: '{"blocked":"teapot"}' } } },
  { action: 'block', expression: 'http.request.uri.query contains "attack=1" or http.request.body.raw contains "attack=1"', description: 'attack parameter' },
  { action: 'managed_challenge', expression: 'http.request.uri.path eq "/challenge"', description: 'challenge the path' },
  { action: 'log', expression: 'http.request.uri.path eq "/logged"', description: 'log the path' },
  { action: 'block', expression: 'http.request.uri.path eq "/ws-blocked"', description: 'no sockets here' },
  // Reads a field only an edge gives, which the proxy has no source for: every event lists it as defaulted.
  { action: 'block', expression: 'ip.src.continent eq "T1"', description: 'no Tor exits' },
];

// Migrated to the managed rulesets long ago (addProxiedZone): no previous WAF, nothing deployed but what the tests deploy.
const file = proxyTestFile({
  custom: RULES,
  ratelimit: [
    {
      action: 'block',
      expression: 'http.request.uri.path eq "/limited"',
      description: 'two per 10 s',
      ratelimit: { characteristics: ['ip.src', 'cf.colo.id'], period: 10, requests_per_period: 2, mitigation_timeout: 10 },
    },
  ],
  proxy: { now: () => clock, inspectBodyLimit: 1024, upstreamTimeoutMs: 400, headerTimeoutMs: 5_000 },
  events: true,
  fileProxy: true,
  setup: (f) => {
    url = f.proxy.url();
  },
});
const { deploy, events, startProxy } = file;

describe('the proxy forwards what the rules let through', () => {
  it('streams the request to the upstream with the forwarding headers and returns its answer', async () => {
    const a = await send(url, `${ZONE}.localhost:8081`, '/created?x=1', { method: 'POST', headers: { 'content-type': 'text/plain', 'x-forwarded-for': '198.51.100.7' }, body: 'hello' });
    assert.equal(a.status, 201);
    assert.equal(a.body, 'ok POST /created?x=1');
    assert.equal(a.headers['x-upstream'], 'yes');
    const seen = file.upstream.seen[0]!;
    assert.equal(seen.body, 'hello');
    assert.equal(seen.headers.host, `${ZONE}.localhost:8081`);
    assert.equal(seen.headers['x-forwarded-for'], '198.51.100.7, 127.0.0.1');
    assert.equal(seen.headers['x-forwarded-proto'], 'http');
    assert.equal(seen.headers['cf-connecting-ip'], '127.0.0.1');
    assert.match(String(seen.headers['cf-ray']), /^[0-9a-f]{16}-LCL$/);
    // The client gets the same ray id on the app's answer, as on the edge's.
    assert.equal(a.headers['cf-ray'], seen.headers['cf-ray']);
    assert.equal(events.length, 1);
    const e = events[0]!;
    assert.deepEqual(
      { rayId: e.rayId, zone: e.zoneName, ip: e.clientIp, method: e.method, host: e.host, path: e.path, query: e.query, status: e.responseStatus, action: e.evaluation.decision.action, truncated: e.bodyTruncated, time: e.time },
      { rayId: seen.headers['cf-ray'], zone: ZONE, ip: '127.0.0.1', method: 'POST', host: ZONE, path: '/created', query: 'x=1', status: 201, action: 'allow-through', truncated: false, time: clock },
    );
    assert.deepEqual(e.defaultedFields, ['ip.src.country', 'ip.src.asnum', 'cf.bot_management.score', 'cf.threat_score', 'cf.tls_version', 'cf.tls_cipher', 'ip.src.continent']);
  });

  it("keeps the app's answer's trailers; drops a chunked request's, which the rules never see", async () => {
    const a = await send(url, ZONE, '/trailers');
    assert.equal(a.body, 'part one;part two');
    assert.equal(a.trailers['x-checksum'], 'abc123');
    const r = await raw(url, `POST /sum HTTP/1.1\r\nHost: ${ZONE}\r\nTransfer-Encoding: chunked\r\nTrailer: X-Sum\r\nConnection: close\r\n\r\n5\r\nhello\r\n0\r\nX-Sum: 42\r\n\r\n`);
    assert.match(r.data, /^HTTP\/1\.1 200 OK\r\n/);
    assert.deepEqual([file.upstream.seen[1]!.body, file.upstream.seen[1]!.trailers], ['hello', {}]);
    // Past the inspection limit (1 KiB here) the rest streams, without the trailers either.
    const long = 'y'.repeat(3000);
    const s = await raw(url, `POST /sum HTTP/1.1\r\nHost: ${ZONE}\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n${long.length.toString(16)}\r\n${long}\r\n0\r\nX-Sum: 3000\r\n\r\n`);
    assert.match(s.data, /^HTTP\/1\.1 200 OK\r\n/);
    assert.deepEqual([file.upstream.seen[2]!.bodyBytes, file.upstream.seen[2]!.trailers], [3000, {}]);
  });

  it('answers a host of no proxied zone with the unknown-zone page', async () => {
    const a = await send(url, 'other.example', '/');
    assert.equal(a.status, 530);
    assert.match(a.body, /no zone for the host <code>other\.example<\/code>/);
    assert.equal(file.upstream.seen.length, 0);
  });

  it('logs a log rule and forwards', async () => {
    const a = await send(url, `www.${ZONE}`, '/logged');
    assert.equal(a.status, 200);
    assert.deepEqual(
      events[0]!.evaluation.logs.map((l) => `${l.description} ${l.action} ${l.outcome}`),
      ['log the path log logged'],
    );
  });
});

describe('the proxy acts on the verdict', () => {
  it('blocks with the default page naming the ray id, and never reaches the upstream', async () => {
    const a = await send(url, ZONE, '/search?attack=1');
    assert.equal(a.status, 403);
    assert.match(String(a.headers['cf-ray']), /^[0-9a-f]{16}-LCL$/);
    assert.ok(a.body.includes(`Ray ID: <code>${a.headers['cf-ray']}</code>`));
    assert.ok(a.body.includes('rule: <code>attack parameter</code>'));
    assert.equal(file.upstream.seen.length, 0);
    assert.deepEqual([events[0]!.responseStatus, events[0]!.evaluation.decision.description], [403, 'attack parameter']);
  });

  it("answers with the rule's custom response", async () => {
    const a = await send(url, ZONE, '/teapot');
    assert.deepEqual([a.status, a.headers['content-type'], a.body], [418, 'application/json', '{"blocked":"teapot"}']);
  });

  it('challenges with an interstitial; its button sets a clearance cookie that passes the challenge', async () => {
    const a = await send(url, ZONE, '/challenge?next=1');
    assert.equal(a.status, 403);
    assert.equal(a.headers['cf-mitigated'], 'challenge');
    assert.match(a.body, /<form method="post" action="\/\.rulesmith\/challenge"><input type="hidden" name="ray" value="[0-9a-f]{16}-LCL"><input type="hidden" name="pass" value="\d+\.[A-Za-z0-9_-]{43}"><input type="hidden" name="return" value="\/challenge\?next=1">/);
    const pass = await send(url, ZONE, '/.rulesmith/challenge', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: challengeForm(a) });
    assert.equal(pass.status, 303);
    assert.equal(pass.headers.location, '/challenge?next=1');
    const cookie = String(pass.headers['set-cookie']).split(';')[0]!;
    assert.match(cookie, /^rulesmith_clearance=\d+\.[A-Za-z0-9_-]{43}$/);
    const again = await send(url, ZONE, '/challenge?next=1', { headers: { cookie } });
    assert.equal(again.status, 200);
    assert.deepEqual(events.at(-1)!.evaluation.logs.map((l) => `${l.description} ${l.action}`), ['challenge the path managed_challenge']);
    // A forged or expired cookie does not pass.
    assert.equal((await send(url, ZONE, '/challenge', { headers: { cookie: `${cookie.slice(0, -2)}xx` } })).status, 403);
    // Nor does it on another client: a clearance is the visitor's (its address and User-Agent), as the hosted cf_clearance is.
    assert.equal((await send(url, ZONE, '/challenge', { headers: { cookie, 'user-agent': 'python-requests/2.31' } })).status, 403);
    clock += 31 * 60 * 1000;
    assert.equal((await send(url, ZONE, '/challenge', { headers: { cookie } })).status, 403);
    // A cleared challenge does not lift a block.
    clock -= 31 * 60 * 1000;
    assert.equal((await send(url, ZONE, '/challenge?attack=1', { headers: { cookie } })).status, 403);
  });

  it("sends the button's press back to a return path with characters a header cannot hold, percent-encoded (not a 500)", async () => {
    const served = await send(url, ZONE, '/challenge');
    const form = new URLSearchParams(challengeForm(served));
    form.set('return', '/\u3000');
    const pass = await send(url, ZONE, '/.rulesmith/challenge', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: form.toString() });
    assert.deepEqual([pass.status, pass.headers.location], [303, '/%E3%80%80']);
  });

  it('--challenge pass and --challenge block script the challenge', async () => {
    const passing = await startProxy({ challenge: 'pass' });
    const blocking = await startProxy({ challenge: 'block' });
    try {
      assert.equal((await send(passing.url(), ZONE, '/challenge')).status, 200);
      const b = await send(blocking.url(), ZONE, '/challenge');
      assert.deepEqual([b.status, b.headers['cf-mitigated'], /Sorry, you have been blocked/.test(b.body)], [403, undefined, true]);
    } finally {
      await passing.close();
      await blocking.close();
    }
  });

  it('evaluates a body over the inspection limit on its first bytes and forwards it whole', async () => {
    const late = `${'a'.repeat(2000)}attack=1`;
    const a = await send(url, ZONE, '/upload', { method: 'POST', body: late });
    assert.equal(a.status, 200);
    assert.equal(file.upstream.seen[0]!.bodyBytes, 2008);
    assert.equal(events[0]!.bodyTruncated, true);
    const early = `attack=1${'a'.repeat(2000)}`;
    assert.equal((await send(url, ZONE, '/upload', { method: 'POST', body: early })).status, 403);
  });
});

describe('rate limiting', () => {
  it('counts per client over the period, mitigates for the timeout with 429, then counts again', async () => {
    // Each answer's status and Retry-After (whole seconds until the mitigation ends).
    const statuses = async (n: number) => {
      const out: [number, string | undefined][] = [];
      for (let i = 0; i < n; i++) {
        const a = await send(url, ZONE, '/limited');
        out.push([a.status, a.headers['retry-after'] as string | undefined]);
      }
      return out;
    };
    assert.deepEqual(await statuses(3), [
      [200, undefined],
      [200, undefined],
      [429, '10'],
    ]);
    assert.equal(events[2]!.evaluation.decision.description, 'two per 10 s');
    clock += 8_500;
    assert.deepEqual(await statuses(1), [[429, '2']]);
    clock += 1_499;
    assert.deepEqual(await statuses(1), [[429, '1']]);
    clock += 1;
    assert.deepEqual(await statuses(3), [
      [200, undefined],
      [200, undefined],
      [429, '10'],
    ]);
    // Other paths do not count.
    assert.equal((await send(url, ZONE, '/other')).status, 200);
    clock += 10_000;
  });

  it("counts the rules of an account's rate limiting ruleset that the entry point executes", async () => {
    const created = await file.svc.call('POST', `/accounts/${DEMO_ACCOUNT.id}/rulesets`, {
      body: { name: 'account limits', kind: 'custom', phase: 'http_ratelimit', rules: [{ action: 'block', expression: 'http.request.uri.path eq "/account-limited"', description: 'one per 10 s', ratelimit: { characteristics: ['ip.src', 'cf.colo.id'], period: 10, requests_per_period: 1, mitigation_timeout: 10 } }] },
    });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const RATELIMIT = entrypoint(ZONE_ID, 'http_ratelimit');
    const before = (await file.svc.call('GET', RATELIMIT)).body.result.rules.map(({ id: _id, version: _v, last_updated: _l, ...r }: Record<string, unknown>) => r);
    await deploy(RATELIMIT, [...before, { action: 'execute', expression: 'true', action_parameters: { id: created.body.result.id } }]);
    try {
      const statuses = [];
      for (let i = 0; i < 3; i++) statuses.push((await send(url, ZONE, '/account-limited')).status);
      assert.deepEqual(statuses, [200, 429, 429]);
      assert.equal(events.at(-1)!.evaluation.decision.description, 'one per 10 s');
    } finally {
      await deploy(RATELIMIT, before);
      clock += 10_000;
    }
  });
});

describe('deploys', () => {
  it('take effect on the next request, and requests in flight see one configuration or the other', async () => {
    assert.equal((await send(url, ZONE, '/soon-blocked')).status, 200);
    const inFlight = Array.from({ length: 40 }, () => send(url, ZONE, '/soon-blocked'));
    await deploy(CUSTOM, [...RULES, { action: 'block', expression: 'http.request.uri.path eq "/soon-blocked"', description: 'new rule' }].slice(1));
    const during = await Promise.all(inFlight);
    assert.ok(during.every((a) => a.status === 200 || a.status === 403), JSON.stringify(during.map((a) => [a.status, a.body.slice(0, 300)])));
    assert.equal((await send(url, ZONE, '/soon-blocked')).status, 403);
    await deploy(CUSTOM, RULES);
    assert.equal((await send(url, ZONE, '/soon-blocked')).status, 200);
  });
});

describe('streaming', () => {
  it('streams a 50 MiB response without buffering it: a client that stops reading stops the upstream', async () => {
    const u = new URL(url);
    const { get } = await import('node:http');
    let heldBack = -1;
    const received = await new Promise<number>((resolve, reject) => {
      get({ host: u.hostname, port: u.port, path: '/big?mb=50', headers: { host: ZONE }, agent: false }, (res) => {
        let n = 0;
        let paused = false;
        res.on('data', (c: Buffer) => {
          n += c.length;
          if (!paused && n >= 1024 * 1024) {
            // Stop reading for a while: the proxy must stop reading the upstream too.
            paused = true;
            res.pause();
            setTimeout(() => {
              heldBack = file.upstream.big.sent;
              res.resume();
            }, 1_000);
          }
        });
        res.on('end', () => resolve(n));
        res.on('error', reject);
      }).on('error', reject);
    });
    assert.equal(received, 50 * 1024 * 1024);
    // What the kernel's socket buffers of two connections hold (loopback TCP buffers grow to
    // a few MiB each), not the 50 MiB a buffering proxy would have read in that second.
    assert.ok(heldBack > 0 && heldBack < 25 * 1024 * 1024, `the upstream had sent ${(heldBack / 1048576).toFixed(1)} MiB while the client read 1 MiB`);
  });
});

describe('faults', () => {
  it('answers 502 naming the upstream when it is down', async () => {
    const down = await listenProxy({ store: file.svc.store, routes: [{ zone: ZONE, upstream: 'http://127.0.0.1:9' }] });
    try {
      const a = await send(down.url(), ZONE, '/');
      assert.equal(a.status, 502);
      assert.match(a.body, /The upstream <code>http:\/\/127\.0\.0\.1:9\/<\/code> could not be reached: ECONNREFUSED/);
    } finally {
      await down.close();
    }
  });

  it('answers 504 when the upstream does not answer within the timeout', async () => {
    const started = Date.now();
    const a = await send(url, ZONE, '/slow');
    assert.equal(a.status, 504);
    assert.ok(Date.now() - started >= 390);
    assert.match(a.body, /did not answer within 0\.4 s/);
    assert.equal(events[0]!.responseStatus, 504);
  });

  it("cuts the client's connection when the app's drops mid-answer, and logs it", async () => {
    await file.withProxy({}, async (p, logs) => {
      const r = await raw(p.url(), `GET /cut HTTP/1.1\r\nHost: ${ZONE}\r\n\r\n`, { waitMs: 3_000 });
      assert.equal(r.closed, true);
      assert.match(r.data, /^HTTP\/1\.1 200 OK\r\n[^]*content-length: 100\r\n[^]*\r\n\r\nx{50}$/);
      assert.deepEqual(
        logs.map((l) => l.replace(/[0-9a-f]{16}-LCL/, 'RAY')),
        [`proxy: RAY ${ZONE} GET /cut: the answer from ${file.upstream.url}/ was cut off before its end; connection cut`],
      );
    });
  });

  it('logs no app fault when the client leaves mid-answer', async () => {
    await file.withProxy({}, async (p, logs) => {
      await new Promise<void>((resolve) => {
        let got = 0;
        const socket = rawSocket(p.url(), () => socket.write(`GET /big?mb=50 HTTP/1.1\r\nHost: ${ZONE}\r\n\r\n`));
        socket.on('data', (d: Buffer) => {
          got += d.length;
          if (got > 200_000) socket.destroy();
        });
        socket.on('close', () => resolve());
      });
      await new Promise((r) => setTimeout(r, 300));
      assert.deepEqual(logs, []);
    });
  });

  it('answers a malformed request with 400 and keeps serving', async () => {
    const r = await raw(url, 'GET /\x01 HTTP/1.1\r\nHost: app.test\r\n\r\n');
    assert.match(r.data, /^HTTP\/1\.1 400 Bad Request\r\n/);
    const bad = await raw(url, 'NOT A REQUEST\r\n\r\n');
    assert.match(bad.data, /^HTTP\/1\.1 400 Bad Request\r\n/);
    assert.equal((await send(url, ZONE, '/')).status, 200);
  });

  it('cuts off a client that sends its headers too slowly', async () => {
    const strict = await startProxy({ headerTimeoutMs: 300 });
    try {
      const r = await raw(strict.url(), ['GET / HTTP/1.1\r\n', 'Host: app.test\r\n', 'X-Slow: 1\r\n', 'X-Slow: 2\r\n', '\r\n'], { gapMs: 250, waitMs: 3_000 });
      assert.equal(r.closed, true);
      assert.match(r.data, /^HTTP\/1\.1 408 Request Timeout\r\n/);
      assert.match(r.data, /the request headers did not arrive within 0\.3 s/);
      assert.equal(file.upstream.seen.length, 0);
    } finally {
      await strict.close();
    }
  });
});

describe('WebSocket upgrades', () => {
  const handshake = (path: string) => handshakeTo(path, ZONE);

  it('pass through after the request phase', async () => {
    const r = await raw(url, [handshake('/ws'), 'ping'], { gapMs: 100, waitMs: 600 });
    assert.match(r.data, /^HTTP\/1\.1 101 Switching Protocols\r\n/);
    assert.ok(r.data.endsWith('\r\n\r\necho:ping'), r.data);
    assert.equal(file.upstream.seen[0]!.headers['cf-connecting-ip'], '127.0.0.1');
  });

  it('are blocked like any request', async () => {
    const r = await raw(url, handshake('/ws-blocked'), { waitMs: 2_000 });
    assert.match(r.data, /^HTTP\/1\.1 403 Forbidden\r\n/);
    assert.equal(file.upstream.seen.length, 0);
  });
});

describe('the control API (for the extension)', () => {
  const control = async (method: string, path: string, token: string | undefined, body?: unknown) => {
    const res = await fetch(`${url}/.rulesmith/proxy${path}`, { method, headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body ? { 'content-type': 'application/json' } : {}) }, ...(body ? { body: JSON.stringify(body) } : {}) });
    return { status: res.status, body: (await res.json()) as any };
  };

  it('needs a token the service accepts', async () => {
    const none = await control('GET', '', undefined);
    const bad = await control('GET', '', 'not-a-token');
    assert.deepEqual([none.status, none.body.errors[0].code, bad.status, bad.body.errors[0].code], [400, 9106, 403, 9109]);
  });

  it('lists the zones with live counters, starts and stops one', async () => {
    await send(url, ZONE, '/counted');
    const list = await control('GET', '', file.svc.adminToken);
    const ours = list.body.result.zones.find((z: any) => z.zone === ZONE);
    assert.equal(ours.url, `http://${ZONE}.localhost:${new URL(url).port}/`);
    assert.ok(ours.requests >= 1 && ours.blocked >= 1 && ours.forwarded >= 1, JSON.stringify(ours));
    assert.equal((await send(url, 'pro.example.com', '/')).status, 530);
    const started = await control('PUT', '/zones/pro.example.com', file.svc.adminToken, { upstream: file.upstream.url });
    assert.deepEqual([started.status, started.body.result.zone, started.body.result.upstream], [200, 'pro.example.com', `${file.upstream.url}/`]);
    assert.equal((await send(url, 'pro.example.com', '/', { headers: { 'user-agent': 'Mozilla/5.0', accept: 'text/html' } })).status, 200);
    assert.equal((await control('DELETE', '/zones/pro.example.com', file.svc.adminToken)).status, 200);
    assert.equal((await send(url, 'pro.example.com', '/')).status, 530);
    // A zone that does not exist is answered as one the token may not use (next test).
    const bad = await control('PUT', '/zones/nope.example', file.svc.adminToken, { upstream: file.upstream.url });
    assert.deepEqual([bad.status, bad.body.errors[0].message], [403, 'Authentication error']);
  });

  it("shows and changes only the zones the token may: another zone's and a missing zone's answers are the same", async () => {
    const pro = file.svc.credentials.get('pro.example.com WAF')!;
    const readOnly = file.svc.credentials.get('demo read-only')!;
    await control('PUT', '/zones/business.example.com', file.svc.adminToken, { upstream: file.upstream.url });
    try {
      const listed = (await control('GET', '', pro)).body.result.zones.map((z: any) => z.zone);
      assert.deepEqual(listed, []);
      const answers = [
        await control('PUT', '/zones/business.example.com', pro, { upstream: 'http://127.0.0.1:9/' }),
        await control('PUT', '/zones/nope.example', pro, { upstream: 'http://127.0.0.1:9/' }),
        await control('DELETE', '/zones/business.example.com', pro),
        await control('DELETE', '/zones/nope.example', pro),
        await control('PUT', '/zones/pro.example.com', readOnly, { upstream: 'http://127.0.0.1:9/' }),
      ];
      assert.deepEqual(answers.map((a) => [a.status, a.body.errors[0]]), Array(5).fill([403, { code: 10000, message: 'Authentication error' }]));
      // Still proxied, to the same upstream.
      const business = (await control('GET', '', file.svc.adminToken)).body.result.zones.find((z: any) => z.zone === 'business.example.com');
      assert.equal(business.upstream, `${file.upstream.url}/`);
      // Its own zone: started, listed, stopped.
      assert.equal((await control('PUT', '/zones/pro.example.com', pro, { upstream: file.upstream.url })).status, 200);
      assert.deepEqual((await control('GET', '', pro)).body.result.zones.map((z: any) => z.zone), ['pro.example.com']);
      assert.equal((await control('DELETE', '/zones/pro.example.com', pro)).status, 200);
    } finally {
      await control('DELETE', '/zones/business.example.com', file.svc.adminToken);
    }
  });

  it("keeps a zone's counters and timings while it runs, and starts them from zero when it starts again", async () => {
    const zoneOf = async () => (await control('GET', '', file.svc.adminToken)).body.result.zones.find((z: any) => z.zone === 'pro.example.com');
    await control('PUT', '/zones/pro.example.com', file.svc.adminToken, { upstream: file.upstream.url });
    await send(url, 'pro.example.com', '/', { headers: { 'user-agent': 'Mozilla/5.0', accept: 'text/html' } });
    const first = await zoneOf();
    assert.equal(first.requests, 1);
    assert.ok(first.evaluation.p50 > 0, JSON.stringify(first.evaluation));
    // The same zone started again (a new upstream, say) keeps what it counted.
    await control('PUT', '/zones/pro.example.com', file.svc.adminToken, { upstream: file.upstream.url });
    assert.deepEqual([(await zoneOf()).requests, (await zoneOf()).evaluation], [1, first.evaluation]);
    await control('DELETE', '/zones/pro.example.com', file.svc.adminToken);
    const again = (await control('PUT', '/zones/pro.example.com', file.svc.adminToken, { upstream: file.upstream.url })).body.result;
    assert.deepEqual([again.requests, again.evaluation], [0, { p50: 0, p99: 0, evaluating: { p50: 0, p99: 0 } }]);
    await control('DELETE', '/zones/pro.example.com', file.svc.adminToken);
  });

  it("reports how long the proxy's thread held requests (event-loop delay) since the last reset", async () => {
    await control('GET', '?reset=timings', file.svc.adminToken);
    // Node's delay monitor measures from its previous tick, and a reset forgets that tick:
    // a turn held before the monitor's first tick after the reset is not seen. Let it tick.
    await new Promise((resolve) => setTimeout(resolve, 20));
    // The proxy runs on this thread: holding it 250 ms is a turn that long (long enough
    // that a loaded machine's own pauses do not reach it).
    const until = performance.now() + 250;
    while (performance.now() < until);
    await new Promise((resolve) => setTimeout(resolve, 5));
    const held = (await control('GET', '?reset=timings', file.svc.adminToken)).body.result.process.eventLoopDelay;
    assert.deepEqual(Object.keys(held), ['p50', 'p99', 'max']);
    assert.ok(held.max >= 240, JSON.stringify(held));
    const after = (await control('GET', '', file.svc.adminToken)).body.result.process.eventLoopDelay;
    assert.ok(after.max < 240, `the reset did not forget the 250 ms turn: ${JSON.stringify(after)}`);
  });

  it("reports an idle event loop's delay without the 1 ms between the monitor's samples", async () => {
    await control('GET', '?reset=timings', file.svc.adminToken);
    // About a hundred samples of a loop with nothing to do: each tick comes 1 ms after the
    // last and a little more; the delay is only that little more.
    await new Promise((resolve) => setTimeout(resolve, 120));
    const idle = (await control('GET', '', file.svc.adminToken)).body.result.process.eventLoopDelay;
    assert.ok(idle.p50 < 0.9, `an idle loop's median delay counts the sampling interval: ${JSON.stringify(idle)}`);
  });

  it('reports how long the WAF took per request (evaluation time), and the part spent evaluating, since the last reset', async () => {
    await control('GET', '?reset=timings', file.svc.adminToken);
    for (const path of ['/a', '/b?q=<script>alert(1)</script>', '/c']) await send(url, ZONE, path);
    const listed = (await control('GET', '?reset=timings', file.svc.adminToken)).body.result;
    const timed = listed.process.evaluation;
    const zone = listed.zones.find((z: any) => z.zone === ZONE).evaluation;
    assert.deepEqual(Object.keys(zone), ['p50', 'p99', 'evaluating']);
    assert.ok(zone.p50 > 0 && zone.p50 <= zone.p99, JSON.stringify(zone));
    assert.ok(zone.evaluating.p50 <= zone.p50 && zone.evaluating.p99 <= zone.p99, JSON.stringify(zone));
    assert.deepEqual(Object.keys(timed), ['requests', 'p50', 'p99', 'max', 'evaluating']);
    assert.equal(timed.requests, 3);
    assert.ok(timed.p50 > 0 && timed.p50 <= timed.p99 && timed.p99 <= timed.max, JSON.stringify(timed));
    // The part spent evaluating: some of each request's time in the WAF, never more.
    const work = timed.evaluating;
    assert.deepEqual(Object.keys(work), ['p50', 'p99', 'max']);
    assert.ok(work.max > 0 && work.p50 <= work.p99 && work.p99 <= work.max && work.max <= timed.max, JSON.stringify(timed));
    const after = (await control('GET', '', file.svc.adminToken)).body.result;
    assert.equal(after.process.evaluation.requests, 0);
    assert.deepEqual(after.process.evaluation.evaluating, { p50: 0, p99: 0, max: 0 });
    assert.deepEqual(after.zones.find((z: any) => z.zone === ZONE).evaluation, { p50: 0, p99: 0, evaluating: { p50: 0, p99: 0 } });
  });
});
