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
    const { server, url } = await scripted((_req, res) => {
      setTimeout(() => json(res, 200, { result: [], success: true, errors: [], messages: [] }), 1_000);
    });
    try {
      const api = new RulesApi({ baseUrl: url, credentials: token, timeoutMs: 100, maxRetries: 1 });
      const t0 = Date.now();
      const e = await api.listAccounts().then(() => undefined, (x: unknown) => x);
      assert.ok(e instanceof RulesApiError);
      assert.equal(e.status, 0);
      assert.match(e.display, /timed out.*Check the setting rulesmith\.api\.baseUrl/);
      assert.ok(Date.now() - t0 < 3_000);
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
    assert.match(e.display, /Restart Local Rules Service/);
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
