// The extension's rules API client (client/src/api/rulesApi.ts, no `vscode` import) in
// plain Node: retries on 429/5xx, the time limit, and errors that carry the API's own
// message and code plus what to do — against a small scripted HTTP server; then the real
// local rules service (a temporary database, the demo seed) through the same client:
// sign-in verification, accounts, zones, a missing entry point, the migration calls.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { RulesApi, type Credentials } from '../../client/src/api/rulesApi';
import { RulesApiError } from '../../client/src/api/errors';
import { envTokenAllowed, insecureBaseUrl, proxyTokenRefusal } from '../../client/src/api/urls';

const ROOT = resolve(__dirname, '../..');

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

async function scripted(handler: Handler): Promise<{ server: Server; url: string }> {
  const server = createServer(handler);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as { port: number }).port;
  return { server, url: `http://127.0.0.1:${port}/client/v4` };
}

const token: Credentials = { kind: 'token', token: 'scripted-token' };

describe('RulesApi against a scripted server', () => {
  it('retries a 503 and a 429 (Retry-After) and then succeeds', async () => {
    let calls = 0;
    const { server, url } = await scripted((req, res) => {
      calls++;
      assert.equal(req.headers.authorization, 'Bearer scripted-token');
      assert.equal(req.headers['x-auth-key'], undefined, 'no other credential is sent');
      if (calls === 1) return json(res, 503, { result: null, success: false, errors: [{ code: 10001, message: 'busy' }], messages: [] });
      if (calls === 2) return json(res, 429, { result: null, success: false, errors: [{ code: 971, message: 'Please wait and consider throttling your request speed' }], messages: [] }, { 'retry-after': '0' });
      json(res, 200, { result: { id: 'x', status: 'active' }, success: true, errors: [], messages: [] });
    });
    try {
      const api = new RulesApi({ baseUrl: url, credentials: token, maxRetries: 2 });
      assert.deepEqual(await api.verify(), { status: 'active' });
      assert.equal(calls, 3);
    } finally {
      server.close();
    }
  });

  it('gives up after the retries with the API message, the code and what to do', async () => {
    let calls = 0;
    const { server, url } = await scripted((_req, res) => {
      calls++;
      json(res, 429, { result: null, success: false, errors: [{ code: 971, message: 'Please wait and consider throttling your request speed' }], messages: [] }, { 'retry-after': '0' });
    });
    try {
      const api = new RulesApi({ baseUrl: url, credentials: token, maxRetries: 1 });
      const e = await api.listZones().then(() => undefined, (x: unknown) => x);
      assert.ok(e instanceof RulesApiError);
      assert.equal(calls, 2);
      assert.equal(e.status, 429);
      assert.equal(e.code, 971);
      assert.equal(e.display, 'Please wait and consider throttling your request speed (code 971). Too many requests: wait a minute and try again.');
    } finally {
      server.close();
    }
  });

  it('a 400 is not retried; a 200 with success:false is an error too', async () => {
    let calls = 0;
    const { server, url } = await scripted((req, res) => {
      calls++;
      if (req.url?.includes('waf_migration/check')) return json(res, 200, { result: null, success: false, errors: [{ code: 1234, message: 'odd' }], messages: [] });
      json(res, 400, { result: null, success: false, errors: [{ code: 7003, message: 'Could not route to /zones/nope, perhaps your object identifier is invalid?' }, { code: 7000, message: 'No route for that URI' }], messages: [] });
    });
    try {
      const api = new RulesApi({ baseUrl: url, credentials: token, maxRetries: 3 });
      const e = await api.getZone('nope').then(() => undefined, (x: unknown) => x);
      assert.ok(e instanceof RulesApiError);
      assert.equal(calls, 1);
      assert.match(e.message, /^Could not route to \/zones\/nope, perhaps your object identifier is invalid\? \(code 7003\); No route for that URI \(code 7000\)$/);
      const e2 = await api.migrationCheck('z').then(() => undefined, (x: unknown) => x);
      assert.ok(e2 instanceof RulesApiError);
      assert.equal(e2.message, 'odd (code 1234)');
    } finally {
      server.close();
    }
  });

  it('a call that takes too long times out (per attempt) and says what to check', async () => {
    // Per attempt: whether the client gave up before the answer (its connection closed
    // with the answer unsent). Every attempt's connection closes, answered or not.
    const unanswered: Promise<boolean>[] = [];
    const { server, url } = await scripted((_req, res) => {
      const answer = setTimeout(() => json(res, 200, { result: [], success: true, errors: [], messages: [] }), 1_000);
      unanswered.push(new Promise((r) => res.on('close', () => {
        clearTimeout(answer);
        r(!res.writableFinished);
      })));
    });
    try {
      const api = new RulesApi({ baseUrl: url, credentials: token, timeoutMs: 100, maxRetries: 1 });
      const e = await api.listAccounts().then(() => undefined, (x: unknown) => x);
      assert.ok(e instanceof RulesApiError);
      assert.equal(e.status, 0);
      assert.match(e.display, /timed out.*Check the setting rulesmith\.api\.baseUrl/);
      // The first attempt and its one retry, each abandoned before the 1 s answer.
      assert.deepEqual(await Promise.all(unanswered), [true, true]);
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });

  it('an account-owned token is verified at the account when the user endpoint refuses it', async () => {
    const seen: string[] = [];
    const { server, url } = await scripted((req, res) => {
      seen.push(req.url ?? '');
      if (req.url?.startsWith('/client/v4/user/tokens/verify')) return json(res, 401, { result: null, success: false, errors: [{ code: 1000, message: 'Invalid API Token' }], messages: [] });
      json(res, 200, { result: { id: 't', status: 'active' }, success: true, errors: [], messages: [{ code: 10000, message: 'This API Token is valid and active', type: null }] });
    });
    try {
      const api = new RulesApi({ baseUrl: url, credentials: token, accountId: 'abc', maxRetries: 0 });
      assert.deepEqual(await api.verify(), { status: 'active' });
      assert.deepEqual(seen, ['/client/v4/user/tokens/verify', '/client/v4/accounts/abc/tokens/verify']);
      const noAccount = new RulesApi({ baseUrl: url, credentials: token, maxRetries: 0 });
      const e = await noAccount.verify().then(() => undefined, (x: unknown) => x);
      assert.ok(e instanceof RulesApiError && e.code === 1000);
    } finally {
      server.close();
    }
  });

  it('no server: a connection error with advice for the local service', async () => {
    const api = new RulesApi({ baseUrl: 'http://127.0.0.1:9/client/v4', credentials: token, maxRetries: 0, local: true });
    const e = await api.listAccounts().then(() => undefined, (x: unknown) => x);
    assert.ok(e instanceof RulesApiError);
    assert.equal(e.status, 0);
    assert.equal(e.display, 'could not connect to http://127.0.0.1:9/client/v4. The local rules service is not running: start it again (Start Local Service), then Retry.');
  });
});

/** A scripted server; `handler` gets the parsed URL and the JSON body (if any). */
async function fake(handler: (req: IncomingMessage, url: URL, body: unknown, res: ServerResponse) => void): Promise<{ server: Server; url: string; seen: string[] }> {
  const seen: string[] = [];
  const s = await scripted((req, res) => {
    let raw = '';
    req.on('data', (b: Buffer) => (raw += b.toString()));
    req.on('end', () => {
      const u = new URL(req.url ?? '/', 'http://x');
      seen.push(`${req.method} ${u.pathname.replace('/client/v4', '')}${u.search}`);
      handler(req, u, raw ? JSON.parse(raw) : undefined, res);
    });
  });
  return { ...s, seen };
}

const ok = (res: ServerResponse, result: unknown, result_info?: unknown, headers: Record<string, string> = {}) =>
  json(res, 200, { result, success: true, errors: [], messages: [], ...(result_info ? { result_info } : {}) }, headers);

const zone = (i: number) => ({ id: i.toString(16).padStart(32, '0'), name: `z${i}.example.com`, plan: { name: 'Free Website' } });

async function failure(p: Promise<unknown>): Promise<RulesApiError> {
  const e = await p.then(() => undefined, (x: unknown) => x);
  assert.ok(e instanceof RulesApiError, `expected a RulesApiError, got ${String(e)}`);
  return e;
}

describe('RulesApi and the hosted API shape (pagination, odd envelopes, rate limits)', () => {
  it('reads every page of zones: by total_pages, and to an empty page when the server gives no total', async () => {
    const all = Array.from({ length: 120 }, (_, i) => zone(i));
    for (const withTotal of [true, false]) {
      const { server, url, seen } = await fake((_req, u, _b, res) => {
        const page = Number(u.searchParams.get('page') ?? 1);
        const per = Number(u.searchParams.get('per_page'));
        assert.equal(u.searchParams.get('account.id'), 'acc');
        const items = all.slice((page - 1) * per, page * per);
        ok(res, items, withTotal ? { page, per_page: per, count: items.length, total_count: all.length, total_pages: Math.ceil(all.length / per) } : { page, per_page: per, count: items.length });
      });
      try {
        const zones = await new RulesApi({ baseUrl: url, credentials: token, maxRetries: 0 }).listZones('acc');
        assert.deepEqual(zones.map((z) => z.name), all.map((z) => z.name));
        // 50 per page: 3 pages; without a total, the short third page ends it (per_page echoed).
        assert.equal(seen.length, 3, seen.join('\n'));
      } finally {
        server.close();
      }
    }
  });

  it('a server that serves fewer than per_page (and no total) is read on until an empty page; one that ignores `page` is an error, not a loop', async () => {
    const all = Array.from({ length: 45 }, (_, i) => zone(i));
    {
      const { server, url, seen } = await fake((_req, u, _b, res) => {
        const page = Number(u.searchParams.get('page') ?? 1);
        ok(res, all.slice((page - 1) * 20, page * 20));
      });
      try {
        assert.equal((await new RulesApi({ baseUrl: url, credentials: token, maxRetries: 0 }).listAccounts()).length, 45);
        assert.equal(seen.length, 4, 'pages 1–3, then the empty page 4');
      } finally {
        server.close();
      }
    }
    {
      const { server, url } = await fake((_req, _u, _b, res) => ok(res, all.slice(0, 20)));
      try {
        const e = await failure(new RulesApi({ baseUrl: url, credentials: token, maxRetries: 0 }).listZones());
        assert.match(e.message, /page 2 repeats page 1/);
      } finally {
        server.close();
      }
    }
  });

  it('follows cursors of ruleset lists: result_info.cursor and result_info.cursors.after; a repeated cursor is an error', async () => {
    const rs = (i: number) => ({ id: `r${i}`, name: `rs${i}`, kind: 'managed', phase: 'http_request_firewall_managed' });
    for (const style of ['cursor', 'cursors.after'] as const) {
      const { server, url, seen } = await fake((_req, u, _b, res) => {
        const c = u.searchParams.get('cursor');
        const page = c ? Number(c.slice(1)) : 0;
        const next = page < 2 ? `c${page + 1}` : undefined;
        const info = next ? (style === 'cursor' ? { cursor: next, per_page: 2 } : { cursors: { after: next } }) : { per_page: 2 };
        ok(res, [rs(page * 2), rs(page * 2 + 1)], info);
      });
      try {
        const list = await new RulesApi({ baseUrl: url, credentials: token, maxRetries: 0 }).listAccountRulesets('acc');
        assert.deepEqual(list.map((r) => r.id), ['r0', 'r1', 'r2', 'r3', 'r4', 'r5'], style);
        assert.deepEqual(seen, ['GET /accounts/acc/rulesets?per_page=50', 'GET /accounts/acc/rulesets?per_page=50&cursor=c1', 'GET /accounts/acc/rulesets?per_page=50&cursor=c2']);
      } finally {
        server.close();
      }
    }
    const { server, url } = await fake((_req, _u, _b, res) => ok(res, [rs(0)], { cursor: 'same' }));
    try {
      const e = await failure(new RulesApi({ baseUrl: url, credentials: token, maxRetries: 0 }).listZoneRulesets('z'));
      assert.match(e.message, /returned the cursor "same" twice/);
    } finally {
      server.close();
    }
  });

  it('`errors: null`: the messages are shown instead, else the status with what to do; a success without a result is an error, not a crash', async () => {
    const { server, url } = await fake((_req, u, _b, res) => {
      if (u.pathname.endsWith('/check')) return json(res, 400, { result: null, success: false, errors: null, messages: [{ code: 1004, message: 'DNS Validation Error' }] });
      if (u.pathname.endsWith('/config')) return json(res, 403, { result: null, success: false, errors: null, messages: null });
      if (u.pathname.endsWith('/status')) return json(res, 200, { result: null, success: false, errors: null, messages: [{ message: 'zone is locked' }] });
      ok(res, null);
    });
    try {
      const api = new RulesApi({ baseUrl: url, credentials: token, maxRetries: 0 });
      const e1 = await failure(api.migrationCheck('z'));
      assert.equal(e1.display, 'DNS Validation Error (code 1004). Fix what the message names and try again.');
      const e2 = await failure(api.migrationConfig('z'));
      assert.equal(e2.message, 'HTTP 403 with no error message');
      assert.match(e2.advice, /lack access/);
      const e3 = await failure(api.migrationStatus('z'));
      assert.equal(e3.message, 'zone is locked');
      const e4 = await failure(api.trace('a', { url: 'https://x/' }));
      assert.equal(e4.message, 'the service answered success without a result');
      const e5 = await failure(api.getZone('z'.repeat(32)));
      assert.equal(e5.message, 'the service answered success without a result');
    } finally {
      server.close();
    }
  });

  it('an answer that is not JSON (a web page at the base URL, a proxy error page) says so and where to look', async () => {
    let calls = 0;
    const { server, url } = await fake((_req, u, _b, res) => {
      calls++;
      if (u.pathname.includes('/accounts')) {
        res.writeHead(502, { 'content-type': 'text/html' });
        return res.end('<html><head><title>502 Bad Gateway</title></head><body><h1>nginx</h1></body></html>');
      }
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end('<!doctype html><html><head><title>Example Domain</title></head><body>hello</body></html>');
    });
    try {
      const api = new RulesApi({ baseUrl: url, credentials: token, maxRetries: 1, timeoutMs: 2_000 });
      const e = await failure(api.verify());
      assert.equal(calls, 1, 'a 200 page is not retried');
      assert.equal(e.message, 'the answer was not JSON (text/html; charset=utf-8): "Example Domain"');
      assert.match(e.advice, /not the rules API answering: check the setting rulesmith\.api\.baseUrl/);
      calls = 0;
      const e2 = await failure(api.listAccounts());
      assert.equal(calls, 2, 'a 502 is retried');
      assert.equal(e2.status, 502);
      assert.equal(e2.message, 'the answer was not JSON (text/html): "502 Bad Gateway"');
      // An empty 503 (a load balancer): the status, and the advice for a failing service.
      const { server: empty, url: url3 } = await fake((_req, _u, _b, res) => {
        res.writeHead(503);
        res.end();
      });
      try {
        const e3 = await failure(new RulesApi({ baseUrl: url3, credentials: token, maxRetries: 0 }).listZones());
        assert.equal(e3.display, 'HTTP 503 with an empty answer. The service failed: try again in a moment.');
      } finally {
        empty.close();
      }
      // JSON relabelled by a proxy (text/plain) is still read as JSON.
      const { server: relabel, url: url2 } = await fake((_req, _u, _b, res) => {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end(JSON.stringify({ result: { compatible: true }, success: true, errors: null, messages: null }));
      });
      try {
        assert.deepEqual(await new RulesApi({ baseUrl: url2, credentials: token, maxRetries: 0 }).migrationCheck('z'), { compatible: true });
      } finally {
        relabel.close();
      }
    } finally {
      server.close();
    }
  });

  it('429: a short Retry-After is waited for, then retried; a long one fails at once, saying how long to wait (no silent hang)', async () => {
    let calls = 0;
    let wait = '1';
    const { server, url } = await fake((_req, _u, _b, res) => {
      calls++;
      if (calls === 1 || wait === '3600') return json(res, 429, { result: null, success: false, errors: [{ code: 971, message: 'Please wait and consider throttling your request speed' }], messages: null }, { 'retry-after': wait });
      ok(res, [zone(1)], { page: 1, per_page: 50, total_pages: 1 });
    });
    try {
      const lines: string[] = [];
      const api = new RulesApi({ baseUrl: url, credentials: token, maxRetries: 2, log: (l) => lines.push(l) });
      const t0 = Date.now();
      assert.equal((await api.listZones()).length, 1);
      const took = Date.now() - t0;
      assert.ok(took >= 950, `waited ${took} ms for Retry-After 1`);
      assert.equal(calls, 2);
      assert.ok(lines.some((l) => /GET \/zones answered HTTP 429 \(Retry-After 1 s\)/.test(l)), lines.join('\n'));
      assert.ok(!lines.some((l) => /scripted-token|authorization/i.test(l)), 'no credential in the log');
      calls = 0;
      wait = '3600';
      const t1 = Date.now();
      const e = await failure(api.listZones());
      assert.ok(Date.now() - t1 < 2_000);
      assert.equal(calls, 1, 'not retried');
      assert.equal(e.retryAfter, 3600);
      assert.equal(e.display, 'Please wait and consider throttling your request speed (code 971). Too many requests: the service asks to wait 60 minutes; try again after that.');
    } finally {
      server.close();
    }
  });

  it('creates are not retried after a 5xx (a retry could create twice); a 429 is retried', async () => {
    let calls = 0;
    let status = 500;
    const { server, url } = await fake((_req, _u, body, res) => {
      calls++;
      assert.deepEqual(body, [{ expression: 'http.host eq "a"' }]);
      if (calls === 1) return json(res, status, { result: null, success: false, errors: [{ code: 10000, message: 'internal' }], messages: [] }, status === 429 ? { 'retry-after': '0' } : {});
      ok(res, [{ id: 'f'.repeat(32), expression: 'http.host eq "a"' }]);
    });
    try {
      const api = new RulesApi({ baseUrl: url, credentials: token, maxRetries: 2 });
      const e = await failure(api.createFilters('z', [{ expression: 'http.host eq "a"' }]));
      assert.equal(e.status, 500);
      assert.equal(calls, 1);
      calls = 0;
      status = 429;
      const made = await api.createFilters('z', [{ expression: 'http.host eq "a"' }]);
      assert.equal(made.length, 1);
      assert.equal(calls, 2);
    } finally {
      server.close();
    }
  });

  it('a token scoped to zones (no Account Read): the accounts of its zones stand in, whether /accounts is empty or refused', async () => {
    for (const accounts of ['empty', 'refused'] as const) {
      const { server, url } = await fake((_req, u, _b, res) => {
        if (u.pathname.endsWith('/accounts')) {
          if (accounts === 'refused') return json(res, 403, { result: null, success: false, errors: [{ code: 10000, message: 'Authentication error' }], messages: [] });
          return ok(res, [], { page: 1, per_page: 50, total_pages: 0 });
        }
        ok(res, [{ ...zone(1), account: { id: 'acc1', name: 'Shop' } }, { ...zone(2), account: { id: 'acc1', name: 'Shop' } }], { page: 1, per_page: 50, total_pages: 1 });
      });
      try {
        assert.deepEqual(await new RulesApi({ baseUrl: url, credentials: token, maxRetries: 0 }).visibleAccounts(), [{ id: 'acc1', name: 'Shop' }], accounts);
      } finally {
        server.close();
      }
    }
  });

  it('firewall rules: PUT sends the whole rule (the API erases what is left out), PATCH sends the priority and reads the one-rule array', async () => {
    const bodies: unknown[] = [];
    const rule = { id: 'a'.repeat(32), filter: { id: 'b'.repeat(32), expression: 'true', paused: false }, action: 'bypass', products: ['waf'], priority: 5, paused: false, description: 'd', ref: 'r', created_on: 'x', modified_on: 'y' };
    const { server, url, seen } = await fake((req, _u, body, res) => {
      bodies.push(body);
      if (req.method === 'PATCH') return ok(res, [{ ...rule, priority: (body as { priority: number }).priority }]);
      ok(res, { ...rule, ...(body as object), filter: rule.filter });
    });
    try {
      const api = new RulesApi({ baseUrl: url, credentials: token, maxRetries: 0 });
      const paused = await api.updateFirewallRule('z', { ...rule, paused: true });
      assert.equal(paused.paused, true);
      assert.deepEqual(bodies[0], { id: rule.id, filter: { id: rule.filter.id }, action: 'bypass', priority: 5, paused: true, description: 'd', ref: 'r', products: ['waf'] });
      const moved = await api.setFirewallRulePriority('z', rule.id, 1);
      assert.equal(moved.priority, 1);
      assert.deepEqual(bodies[1], { id: rule.id, priority: 1 });
      assert.deepEqual(seen, [`PUT /zones/z/firewall/rules/${rule.id}`, `PATCH /zones/z/firewall/rules/${rule.id}`]);
    } finally {
      server.close();
    }
  });
});

describe('where credentials may go (client/src/api/urls.ts)', () => {
  it('https anywhere; plain http only to this machine', () => {
    for (const ok of ['https://api.cloudflare.com/client/v4', 'http://127.0.0.1:8787/client/v4', 'http://localhost:1/client/v4', 'http://[::1]:9/client/v4']) assert.equal(insecureBaseUrl(ok), undefined, ok);
    assert.equal(insecureBaseUrl('http://rules.example.com/client/v4'), 'rulesmith.api.baseUrl (http://rules.example.com) is not https: the API token would travel unencrypted');
    assert.equal(insecureBaseUrl('http://127.0.0.1.evil.example/client/v4')?.includes('not https'), true);
    assert.match(insecureBaseUrl('not a url') ?? '', /is not a URL/);
  });
  it("the WAF proxy's control API gets the service's token only on the service's host, over https or on this machine", () => {
    assert.equal(proxyTokenRefusal('http://127.0.0.1:8081', 'http://127.0.0.1:8787/client/v4'), undefined, 'the local serve');
    assert.equal(proxyTokenRefusal('https://rules.example.com:8443', 'https://rules.example.com/client/v4'), undefined);
    assert.equal(
      proxyTokenRefusal('http://evil.example:8081', 'http://127.0.0.1:8787/client/v4'),
      "the WAF proxy at http://evil.example:8081 is not on the rules service's host (127.0.0.1): Rulesmith sends the service's token only there; set rulesmith.proxy.url to the proxy `rulesmith serve` runs beside the service",
    );
    assert.equal(proxyTokenRefusal('http://rules.example.com:8081', 'https://rules.example.com/client/v4'), "the WAF proxy at http://rules.example.com:8081 is not https: the service's token would travel unencrypted");
    assert.equal(proxyTokenRefusal('nonsense', 'http://127.0.0.1:8787/client/v4'), 'rulesmith.proxy.url is not a URL (nonsense)');
  });
  it('a redirect is not followed with credentials (a Global API key would go to the other host)', async () => {
    let leaked: string | undefined;
    const other = await scripted((req, res) => {
      leaked = String(req.headers['x-auth-key']);
      json(res, 200, { result: { id: 'x', status: 'active' }, success: true, errors: [], messages: [] });
    });
    const { server, url } = await scripted((_req, res) => {
      res.writeHead(302, { location: `${other.url}/user` });
      res.end();
    });
    try {
      const api = new RulesApi({ baseUrl: url, credentials: { kind: 'key', email: 'me@example.com', key: 'global-key' }, maxRetries: 1, timeoutMs: 2_000 });
      const e = await failure(api.verify());
      assert.equal(e.message, `the rules service answered HTTP 302, a redirect to ${other.url}/user: Rulesmith does not follow redirects with credentials; set rulesmith.api.baseUrl to the URL to use`);
      assert.equal(leaked, undefined);
    } finally {
      server.close();
      other.server.close();
    }
  });
  it('a token from the environment goes to the URL RULESMITH_API_URL names, else only to a loopback service (not to a URL a workspace set)', () => {
    assert.equal(envTokenAllowed('http://127.0.0.1:8787/client/v4', undefined), true, 'the npm start demo');
    assert.equal(envTokenAllowed('https://evil.example/client/v4', undefined), false);
    assert.equal(envTokenAllowed('https://api.cloudflare.com/client/v4', 'https://api.cloudflare.com/client/v4/'), true);
    assert.equal(envTokenAllowed('https://api.cloudflare.com/client/v4', 'https://api.cloudflare.com'), true);
    assert.equal(envTokenAllowed('https://evil.example/client/v4', 'https://api.cloudflare.com/client/v4'), false);
    assert.equal(envTokenAllowed('http://127.0.0.1:8787/client/v4', 'https://api.cloudflare.com/client/v4'), false, 'named: only that URL');
  });
});

describe('RulesApi against the real local rules service', () => {
  let child: ChildProcess;
  let dir: string;
  let url: string;
  const serviceToken = 'rules-api-test-token-0123456789';

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'rulesmith-api-'));
    child = spawn(process.execPath, [join(ROOT, 'server/out/cli.js'), 'serve', '--host', '127.0.0.1', '--port', '0', '--db', join(dir, 'rules.db'), '--seed', 'demo'], {
      env: { ...process.env, RULESMITH_SERVICE_TOKEN: serviceToken },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    url = await new Promise<string>((res, rej) => {
      const timer = setTimeout(() => rej(new Error(`no listening line:\n${out}`)), 30_000);
      const on = (b: Buffer) => {
        out += b.toString();
        const m = /listening on (http:\/\/\S+\/client\/v4)/.exec(out);
        if (m) {
          clearTimeout(timer);
          res(m[1]);
        }
      };
      child.stdout!.on('data', on);
      child.stderr!.on('data', on);
      child.on('exit', (c) => rej(new Error(`service exited ${c}:\n${out}`)));
    });
  });

  after(async () => {
    if (child && child.exitCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it('verifies the service token, refuses another, lists the demo account and zones, answers undefined for a missing entry point', async () => {
    const api = new RulesApi({ baseUrl: url, credentials: { kind: 'token', token: serviceToken } });
    assert.deepEqual(await api.verify(), { status: 'active' });
    const bad = await new RulesApi({ baseUrl: url, credentials: { kind: 'token', token: 'nope' } }).verify().then(() => undefined, (x: unknown) => x);
    assert.ok(bad instanceof RulesApiError);
    assert.equal(bad.status, 401);
    assert.match(bad.display, /\(code 1000\)\. The credentials were refused: run "Rulesmith: Sign In" again/);
    const accounts = await api.listAccounts();
    assert.deepEqual(accounts.map((a) => a.name), ['Rulesmith Demo']);
    const zones = await api.listZones(accounts[0].id);
    assert.equal(zones.length, 6);
    const pro = zones.find((z) => z.name === 'pro.example.com')!;
    assert.equal(pro.plan?.name, 'Pro Website');
    assert.equal(await api.getEntryPoint(pro.id, 'http_ratelimit'), undefined);
    const check = await api.migrationCheck(pro.id);
    assert.equal(check.compatible, true);
    const config = await api.migrationConfig(pro.id);
    assert.ok(config.rules.some((r) => r.action === 'execute'));
    const status = await api.migrationStatus(pro.id);
    assert.equal(status.old_waf_status, 'enabled');
  });
});
