// `rulesmith serve --proxy` as the built CLI runs it (npm run build first): the proxy's
// ready line and each zone's URL, a request through it, and a zone that does not exist;
// `--trust-proxy-from`'s ranges reach the proxy (a client in them is the one
// CF-Connecting-IP names, one outside them is its socket's address), and a bad entry stops
// serve at once, exit status 2.
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { send, startUpstream } from './proxyHarness';

const dir = mkdtempSync(join(tmpdir(), 'rulesmith-serve-proxy-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** Starts the built CLI's `serve` with `args`; resolves once `ready` matches its output so far. */
function startServe(args: readonly string[], ready: (out: string) => boolean, env: NodeJS.ProcessEnv = process.env): Promise<{ child: ChildProcess; out: string }> {
  const child = spawn(process.execPath, ['server/out/cli.js', 'serve', '--port', '0', ...args], { stdio: ['ignore', 'pipe', 'pipe'], env });
  let out = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGTERM');
      reject(new Error(`not ready in 20 s:\n${out}`));
    }, 20_000);
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (ready(out)) {
        clearTimeout(timer);
        resolve({ child, out });
      }
    });
  });
}

const PROXY_LINE = /rulesmith proxy: listening on (http:\/\/127\.0\.0\.1:(\d+))\n/;

describe('rulesmith serve --proxy', () => {
  it('prints the proxy URL and each zone to open, and proxies requests', async () => {
    const upstream = await startUpstream();
    const { child, out } = await startServe(['--db', join(dir, 'a.db'), '--seed', 'demo', '--proxy', `migrated.example.com=${upstream.url}`, '--proxy-listen', '127.0.0.1:0'], (o) => PROXY_LINE.test(o) && o.includes('(open '));
    try {
      const ready = PROXY_LINE.exec(out)!;
      assert.ok(out.includes(`rulesmith proxy: migrated.example.com → ${upstream.url}/ (open http://migrated.example.com.localhost:${ready[2]}/)`), out);
      const a = await send(ready[1]!, 'migrated.example.com', '/hello', { headers: { 'user-agent': 'Mozilla/5.0', accept: 'text/html' } });
      assert.deepEqual([a.status, a.body], [200, 'ok GET /hello']);
    } finally {
      child.kill('SIGTERM');
      await upstream.close();
    }
  });

  it('with --proxy-listen alone runs a proxy with no zone yet (the extension starts zones)', async () => {
    const { child, out } = await startServe(['--db', join(dir, 'c.db'), '--proxy-listen', '127.0.0.1:0'], (o) => PROXY_LINE.test(o));
    try {
      const m = PROXY_LINE.exec(out)!;
      const a = await send(m[1]!, 'migrated.example.com', '/');
      assert.equal(a.status, 530);
    } finally {
      child.kill('SIGTERM');
    }
  });

  it('a request the rules block becomes a security event that GraphQL returns (the proxy feeds the events store)', async () => {
    const upstream = await startUpstream();
    const token = 'serve-proxy-events-token';
    const apiLine = /rulesmith serve: listening on (\S+)\n/;
    const { child, out } = await startServe(['--db', join(dir, 'd.db'), '--seed', 'demo', '--proxy', `pro.example.com=${upstream.url}`, '--proxy-listen', '127.0.0.1:0'], (o) => apiLine.test(o) && PROXY_LINE.test(o) && o.includes('(open '), { ...process.env, RULESMITH_SERVICE_TOKEN: token });
    try {
      const api = new URL(apiLine.exec(out)![1]!).origin;
      const proxy = PROXY_LINE.exec(out)![1]!;
      const blocked = await send(proxy, 'pro.example.com', '/?q=<script>alert(1)</script>');
      assert.equal(blocked.status, 403);
      const auth = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
      const zones = (await (await fetch(`${api}/client/v4/zones?name=pro.example.com`, { headers: auth })).json()) as { result: { id: string }[] };
      assert.ok(zones.result, JSON.stringify(zones));
      const since = new Date(Date.now() - 3_600_000).toISOString(); // the API allows at most 31 days back
      const query = `query E($z: String!) { viewer { zones(filter: {zoneTag: $z}) { firewallEventsAdaptive(limit: 5, filter: {datetime_geq: "${since}"}) { action source clientRequestPath clientRequestQuery edgeResponseStatus } } } }`;
      // The writer flushes within 200 ms; poll a little longer than that.
      let events: unknown[] = [];
      for (let i = 0; i < 20 && events.length === 0; i++) {
        await new Promise((r) => setTimeout(r, 100));
        const r = (await (await fetch(`${api}/client/v4/graphql`, { method: 'POST', headers: auth, body: JSON.stringify({ query, variables: { z: zones.result[0]!.id } }) })).json()) as { data: { viewer: { zones: { firewallEventsAdaptive: unknown[] }[] } } };
        events = r.data.viewer.zones[0]!.firewallEventsAdaptive;
      }
      assert.deepEqual(events, [{ action: 'block', source: 'waf', clientRequestPath: '/', clientRequestQuery: 'q=<script>alert(1)</script>', edgeResponseStatus: 403 }]);
    } finally {
      child.kill('SIGTERM');
      await upstream.close();
    }
  });

  it('stops, exit code 1, when the proxy cannot listen (the API does not go on without it, and never says it is listening)', async () => {
    const taken = createServer();
    await new Promise<void>((r) => taken.listen(0, '127.0.0.1', r));
    const port = (taken.address() as AddressInfo).port;
    try {
      const child = spawn(process.execPath, ['server/out/cli.js', 'serve', '--port', '0', '--db', join(dir, 'c.db'), '--seed', 'demo', '--proxy-listen', `127.0.0.1:${port}`], { stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      let err = '';
      child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
      const code = await new Promise<number | null>((r) => child.once('exit', r));
      assert.deepEqual([code, err], [1, `rulesmith proxy: cannot listen on 127.0.0.1:${port}: listen EADDRINUSE: address already in use 127.0.0.1:${port}\n`]);
      assert.match(out, /rulesmith serve: stopped \(the proxy cannot listen\)\n$/);
      // No "listening" line first: a script waiting for one must not take the service for started.
      assert.doesNotMatch(out, /listening/);
    } finally {
      taken.close();
    }
  });

  it('refuses a zone that is not in the database, naming the zones there', () => {
    const r = spawnSync(process.execPath, ['server/out/cli.js', 'serve', '--port', '0', '--db', join(dir, 'b.db'), '--proxy', 'nope.example=http://127.0.0.1:3000'], { encoding: 'utf8', timeout: 20_000 });
    assert.equal(r.status, 2);
    assert.equal(r.stderr, 'rulesmith proxy: --proxy nope.example=…: no zone "nope.example" in the database (zones: none; create one first, or start with --seed demo)\n');
  });

  it('refuses an upstream URL with credentials (without printing them) or a query', () => {
    const run = (upstream: string, db: string) => spawnSync(process.execPath, ['server/out/cli.js', 'serve', '--port', '0', '--db', join(dir, db), '--seed', 'demo', '--proxy', `pro.example.com=${upstream}`], { encoding: 'utf8', timeout: 20_000 });
    const secret = run('http://user:s3cret@127.0.0.1:3000/', 'c.db');
    assert.deepEqual([secret.status, secret.stderr.split('\n').filter((l) => l.startsWith('rulesmith proxy:'))], [2, ["rulesmith proxy: --proxy pro.example.com=…: the upstream URL holds a user name or password; give the app's address alone (the proxy sends the client's Authorization on)"]]);
    assert.ok(!secret.stdout.includes('s3cret') && !secret.stderr.includes('s3cret'));
    const query = run('http://127.0.0.1:3000/base?x=1', 'd.db');
    assert.deepEqual([query.status, query.stderr.split('\n').filter((l) => l.startsWith('rulesmith proxy:'))], [2, ['rulesmith proxy: --proxy pro.example.com=http://127.0.0.1:3000/base?x=1: the upstream is a base URL (scheme, host, port and an optional path); a query or fragment would be dropped, so it is refused']]);
  });
});

describe('rulesmith serve --trust-proxy-from', () => {
  for (const [ranges, client] of [
    ['127.0.0.0/8,2001:db8::/32', '198.51.100.2'],
    ['10.0.0.0/8,2001:db8::/32', '127.0.0.1'],
  ] as const) {
    it(`with ${ranges}, a request from 127.0.0.1 naming 198.51.100.2 reaches the app as from ${client}`, async () => {
      const upstream = await startUpstream();
      const { child, out } = await startServe(['--db', join(dir, `trust-${client}.db`), '--seed', 'demo', '--proxy', `migrated.example.com=${upstream.url}`, '--proxy-listen', '127.0.0.1:0', '--trust-proxy-from', ranges], (o) => PROXY_LINE.test(o) && o.includes('(open '));
      try {
        const a = await send(PROXY_LINE.exec(out)![1]!, 'migrated.example.com', '/', { headers: { 'user-agent': 'Mozilla/5.0', accept: 'text/html', 'cf-connecting-ip': '198.51.100.2', 'true-client-ip': '198.51.100.2' } });
        assert.equal(a.status, 200);
        const h = upstream.seen[0]!.headers;
        assert.deepEqual([h['cf-connecting-ip'], h['x-real-ip'], h['true-client-ip']], client === '127.0.0.1' ? ['127.0.0.1', '127.0.0.1', undefined] : ['198.51.100.2', '198.51.100.2', '198.51.100.2']);
      } finally {
        child.kill('SIGTERM');
        await upstream.close();
      }
    });
  }

  it('stops at once, exit status 2, naming a bad entry and what is expected', () => {
    const r = spawnSync(process.execPath, ['server/out/cli.js', 'serve', '--port', '0', '--db', join(dir, 'trust-bad.db'), '--proxy', 'migrated.example.com=http://127.0.0.1:3000', '--trust-proxy-from', '10.0.0.0/8', '--trust-proxy-from', '10.0.0.0/33'], { encoding: 'utf8', timeout: 20_000 });
    assert.equal(r.status, 2);
    assert.equal(r.stderr.split('\n')[0], 'rulesmith: --trust-proxy-from: "10.0.0.0/33" is not an IP address or CIDR range (like 10.0.0.0/8 or 2001:db8::/32)');
    assert.equal(r.stdout, '');
  });
});
