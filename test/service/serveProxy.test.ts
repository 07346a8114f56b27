// `rulesmith serve --proxy` as the built CLI runs it (npm run build first): the proxy's
// ready line and each zone's URL, a request through it, and a zone that does not exist.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { send, startUpstream } from './proxyHarness';

const dir = mkdtempSync(join(tmpdir(), 'rulesmith-serve-proxy-'));
after(() => rmSync(dir, { recursive: true, force: true }));

describe('rulesmith serve --proxy', () => {
  it('prints the proxy URL and each zone to open, and proxies requests', async () => {
    const upstream = await startUpstream();
    const child = spawn(process.execPath, ['server/out/cli.js', 'serve', '--port', '0', '--db', join(dir, 'a.db'), '--seed', 'demo', '--proxy', `migrated.example.com=${upstream.url}`, '--proxy-listen', '127.0.0.1:0'], { stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      let out = '';
      const ready = await new Promise<RegExpExecArray>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no proxy line:\n${out}`)), 20_000);
        child.stdout!.on('data', (d: Buffer) => {
          out += d.toString();
          const m = /rulesmith proxy: listening on (http:\/\/127\.0\.0\.1:(\d+))\n/.exec(out);
          if (m && out.includes('(open ')) {
            clearTimeout(timer);
            resolve(m);
          }
        });
      });
      assert.ok(out.includes(`rulesmith proxy: migrated.example.com → ${upstream.url}/ (open http://migrated.example.com.localhost:${ready[2]}/)`), out);
      const a = await send(ready[1]!, 'migrated.example.com', '/hello', { headers: { 'user-agent': 'Mozilla/5.0', accept: 'text/html' } });
      assert.deepEqual([a.status, a.body], [200, 'ok GET /hello']);
    } finally {
      child.kill('SIGTERM');
      await upstream.close();
    }
  });

  it('with --proxy-listen alone runs a proxy with no zone yet (the extension starts zones)', async () => {
    const child = spawn(process.execPath, ['server/out/cli.js', 'serve', '--port', '0', '--db', join(dir, 'c.db'), '--proxy-listen', '127.0.0.1:0'], { stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      let out = '';
      const m = await new Promise<RegExpExecArray>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no proxy line:\n${out}`)), 20_000);
        child.stdout!.on('data', (d: Buffer) => {
          out += d.toString();
          const found = /rulesmith proxy: listening on (http:\/\/127\.0\.0\.1:\d+)\n/.exec(out);
          if (found) {
            clearTimeout(timer);
            resolve(found);
          }
        });
      });
      const a = await send(m[1]!, 'migrated.example.com', '/');
      assert.equal(a.status, 530);
    } finally {
      child.kill('SIGTERM');
    }
  });

  it('refuses a zone that is not in the database, naming the zones there', () => {
    const r = spawnSync(process.execPath, ['server/out/cli.js', 'serve', '--port', '0', '--db', join(dir, 'b.db'), '--proxy', 'nope.example=http://127.0.0.1:3000'], { encoding: 'utf8', timeout: 20_000 });
    assert.equal(r.status, 2);
    assert.equal(r.stderr, 'rulesmith proxy: --proxy nope.example=…: no zone "nope.example" in the database (zones: none; create one first, or start with --seed demo)\n');
  });
});
