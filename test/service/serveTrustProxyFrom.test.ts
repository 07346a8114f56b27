// `rulesmith serve --proxy … --trust-proxy-from …` as the built CLI runs it (npm run build
// first): the ranges reach the proxy (a client in them is the one CF-Connecting-IP names, one
// outside them is its socket's address), and a bad entry stops serve at once, exit status 2.
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { send, startUpstream } from './proxyHarness';

const dir = mkdtempSync(join(tmpdir(), 'rulesmith-trust-proxy-from-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const PROXY_LINE = /rulesmith proxy: listening on (http:\/\/127\.0\.0\.1:\d+)\n/;

/** The built CLI's `serve` with `args`, once its proxy and zones are up; its proxy's URL. */
function startServe(args: readonly string[]): Promise<{ child: ChildProcess; proxy: string }> {
  const child = spawn(process.execPath, ['server/out/cli.js', 'serve', '--port', '0', '--seed', 'demo', '--proxy-listen', '127.0.0.1:0', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGTERM');
      reject(new Error(`not ready in 20 s:\n${out}`));
    }, 20_000);
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = PROXY_LINE.exec(out);
      if (m && out.includes('(open ')) {
        clearTimeout(timer);
        resolve({ child, proxy: m[1]! });
      }
    });
  });
}

describe('rulesmith serve --trust-proxy-from', () => {
  for (const [ranges, client] of [
    ['127.0.0.0/8,2001:db8::/32', '198.51.100.2'],
    ['10.0.0.0/8,2001:db8::/32', '127.0.0.1'],
  ] as const) {
    it(`with ${ranges}, a request from 127.0.0.1 naming 198.51.100.2 reaches the app as from ${client}`, async () => {
      const upstream = await startUpstream();
      const { child, proxy } = await startServe(['--db', join(dir, `${client}.db`), '--proxy', `migrated.example.com=${upstream.url}`, '--trust-proxy-from', ranges]);
      try {
        const a = await send(proxy, 'migrated.example.com', '/', { headers: { 'user-agent': 'Mozilla/5.0', accept: 'text/html', 'cf-connecting-ip': '198.51.100.2', 'true-client-ip': '198.51.100.2' } });
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
    const r = spawnSync(process.execPath, ['server/out/cli.js', 'serve', '--port', '0', '--db', join(dir, 'bad.db'), '--proxy', 'migrated.example.com=http://127.0.0.1:3000', '--trust-proxy-from', '10.0.0.0/8', '--trust-proxy-from', '10.0.0.0/33'], { encoding: 'utf8', timeout: 20_000 });
    assert.equal(r.status, 2);
    assert.equal(r.stderr.split('\n')[0], 'rulesmith: --trust-proxy-from: "10.0.0.0/33" is not an IP address or CIDR range (like 10.0.0.0/8 or 2001:db8::/32)');
    assert.equal(r.stdout, '');
  });
});
