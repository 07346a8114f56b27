// The WAF proxy fails closed once the rules store has failed an fsync (service/store.ts
// StoreUnavailable), over real sockets: the API then answers every request 503, and the
// configuration the proxy holds may include a deployment the restart takes back, so the
// proxy forwards nothing either. Every request (a WebSocket handshake, a host it does not
// serve, a challenge form) gets its 503 page saying the store failed and `serve` must be
// restarted; the control API the API's 503; the store's own error (it names files) goes to
// the log once, never to a client. The failure is made as durability's tests make it: the
// write-ahead log replaced by a folder, so the sync after the next commit fails (EISDIR).
import assert from 'node:assert/strict';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { RunningProxy } from '../../server/src/proxy/proxy';
import { entrypoint, handshake, proxyTestFile, raw, send } from './proxyHarness';

const ZONE_ID = '0123456789abcdef0123456789abcd02';
const ZONE = 'storefailed.test';
const CUSTOM = entrypoint(ZONE_ID, 'http_request_firewall_custom');

const file = proxyTestFile({ zoneId: ZONE_ID, zone: ZONE, needsWorker: true, custom: [{ action: 'block', expression: 'http.request.uri.path eq "/admin"', description: 'admin blocked' }] });

const PAGE = '<p>The rules service could not save a change to its store (a failed fsync), so the WAF proxy cannot vouch for the rules it would enforce: a deployment it holds may be gone when the store is opened again. No request is forwarded until <code>rulesmith serve</code> is restarted.</p>';

describe('after the rules store failed an fsync', () => {
  it('the proxy answers every request 503 with a page saying so, and forwards none, on its thread and with a worker', async () => {
    const logs: string[][] = [[], []];
    const proxies: RunningProxy[] = [await file.startProxy({ workers: 0, log: (l) => logs[0]!.push(l) }), await file.startProxy({ workers: 1, log: (l) => logs[1]!.push(l) })];
    try {
      for (const p of proxies) assert.deepEqual([(await send(p.url(), ZONE, '/')).status, (await send(p.url(), ZONE, '/admin')).status], [200, 403]);
      assert.equal(file.upstream.seen.length, 2);
      file.upstream.seen.length = 0;

      // A deploy that lets /admin through: committed, but its fsync fails, so it is answered
      // 503 and may be gone after the restart.
      rmSync(join(file.svc.dir, 'service.db-wal'));
      mkdirSync(join(file.svc.dir, 'service.db-wal'));
      const put = await file.svc.call('PUT', CUSTOM, { body: { rules: [{ action: 'log', expression: 'http.request.uri.path eq "/admin"', description: 'admin logged' }] } });
      assert.equal(put.status, 503);
      assert.equal(put.body.errors[0].code, 10029);

      for (const [i, p] of proxies.entries()) {
        for (const path of ['/', '/admin']) {
          const a = await send(p.url(), ZONE, path);
          assert.equal(a.status, 503, `${path}: ${a.body}`);
          assert.equal(a.headers['retry-after'], undefined, 'a retry does not help until the restart');
          assert.ok(a.body.includes('<title>Error 503: the rules store failed</title>'), a.body);
          assert.ok(a.body.includes(PAGE), a.body);
          assert.ok(!a.body.includes('service.db'), 'no file name on the page');
        }
        // A host it does not serve, and the challenge form (it would set a clearance cookie): the same.
        assert.equal((await send(p.url(), 'other.test', '/')).status, 503);
        assert.equal((await send(p.url(), ZONE, '/.rulesmith/challenge', { method: 'POST', body: 'return=/' })).status, 503);
        const ws = await raw(p.url(), handshake('/ws', ZONE));
        assert.match(ws.data, /^HTTP\/1\.1 503 Service Unavailable\r\n/);
        assert.ok(ws.data.includes(PAGE));

        const control = await fetch(`${p.url()}/.rulesmith/proxy`, { headers: { authorization: `Bearer ${file.svc.adminToken}` } });
        assert.equal(control.status, 503);
        const body = (await control.json()) as { success: boolean; errors: { code: number; message: string }[]; result: null };
        assert.deepEqual([body.success, body.errors.length, body.errors[0]!.code, body.result], [false, 1, 10029, null]);
        // No credential is checked on a failed store, so its message (it names files) is not given.
        assert.equal(body.errors[0]!.message, 'the rules store failed; restart rulesmith serve (the reason is in its log)');

        const c = p.counters()[0]!;
        assert.deepEqual({ requests: c.requests, forwarded: c.forwarded, blocked: c.blocked, unavailable: c.unavailable }, { requests: 6, forwarded: 1, blocked: 1, unavailable: 4 });
        const failed = logs[i]!.filter((l) => l.includes(' 503 (') || l.includes(' restarted: '));
        assert.equal(failed.length, 6, failed.join('\n'));
        assert.match(failed[0]!, /^proxy: every request is answered 503 until rulesmith serve is restarted: the store takes no more writes: .*EISDIR/);
        assert.deepEqual(
          failed.slice(1).map((l) => l.replace(/^proxy: \S+ /, 'proxy: RAY ')),
          [
            `proxy: RAY ${ZONE} GET / 503 (the rules store failed; restart rulesmith serve)`,
            `proxy: RAY ${ZONE} GET /admin 503 (the rules store failed; restart rulesmith serve)`,
            'proxy: RAY (no zone) GET / 503 (the rules store failed; restart rulesmith serve)',
            `proxy: RAY ${ZONE} POST /.rulesmith/challenge 503 (the rules store failed; restart rulesmith serve)`,
            `proxy: RAY ${ZONE} GET /ws 503 (the rules store failed; restart rulesmith serve)`,
          ],
        );
      }
      assert.deepEqual(file.upstream.seen, [], 'nothing reached the app');
    } finally {
      for (const p of proxies) await p.close();
    }
  });
});
