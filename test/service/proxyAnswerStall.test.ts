// An app that stops sending its answer midway, over real sockets: once the answer has started,
// a pause of --upstream-timeout in it cuts both connections (the client's and the app's) instead
// of holding the client for ever. A client that reads slowly holds the answer back itself: that
// time is not the app's, and its answer arrives whole.
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { createProxy, type RunningProxy } from '../../server/src/proxy/proxy';
import { startService, type TestService } from './harness';
import { addProxiedZone, raw, startRawUpstream, startUpstream } from './proxyHarness';

const ZONE_ID = '0123456789abcdef0123456789abcdef';
const ZONE = 'app.test';
const UPSTREAM_TIMEOUT = 400;

let svc: TestService;

before(async () => {
  svc = await startService();
  addProxiedZone(svc.store, ZONE_ID, ZONE);
});
after(async () => {
  await svc.close();
});

async function withProxy(upstreamUrl: string, fn: (p: RunningProxy, logs: string[]) => Promise<void>): Promise<void> {
  const logs: string[] = [];
  const p = createProxy({ store: svc.store, routes: [{ zone: ZONE, upstream: upstreamUrl }], upstreamTimeoutMs: UPSTREAM_TIMEOUT, log: (l) => logs.push(l) });
  await new Promise<void>((r) => p.server.listen(0, '127.0.0.1', r));
  try {
    await fn(p, logs);
  } finally {
    await p.close();
  }
}

describe('an answer that stops midway', () => {
  it('cuts the client and the app after the upstream timeout', async () => {
    const app = await startRawUpstream((_head, s) => s.write('HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nhello'));
    try {
      await withProxy(app.url, async (p, logs) => {
        const r = await raw(p.url(), `GET /stall HTTP/1.1\r\nHost: ${ZONE}\r\n\r\n`, { waitMs: 5_000 });
        assert.match(r.data, /^HTTP\/1\.1 200 OK\r\n/);
        assert.ok(r.data.endsWith('\r\n\r\nhello'), r.data);
        assert.equal(r.closed, true);
        assert.ok(r.ms >= UPSTREAM_TIMEOUT - 50 && r.ms < UPSTREAM_TIMEOUT + 1_500, `${r.ms} ms`);
        await new Promise((res) => setTimeout(res, 100));
        assert.equal(app.sockets.size, 0);
        assert.ok(logs.some((l) => /GET \/stall: the answer from .* stalled for 0\.4 s; connection cut/.test(l)), logs.join('\n'));
      });
    } finally {
      app.close();
    }
  });

  it('does not count the time a slow client holds it back', async () => {
    const upstream = await startUpstream();
    try {
      await withProxy(upstream.url, async (p) => {
        const mb = 16;
        const s = connect(Number(new URL(p.url()).port), '127.0.0.1');
        s.on('error', () => undefined);
        s.write(`GET /big?mb=${mb} HTTP/1.1\r\nHost: ${ZONE}\r\nConnection: close\r\n\r\n`);
        // Read nothing for well over the upstream timeout: the proxy's buffers fill and the answer waits.
        s.pause();
        await new Promise((r) => setTimeout(r, 3 * UPSTREAM_TIMEOUT));
        let bytes = 0;
        let head = '';
        s.on('data', (d: Buffer) => {
          if (head === '') head = d.toString('latin1', 0, 20);
          bytes += d.length;
        });
        s.resume();
        await new Promise((r) => s.on('close', r));
        assert.match(head, /^HTTP\/1\.1 200 OK/);
        assert.ok(bytes > mb * 1024 * 1024, `${bytes} bytes`);
      });
    } finally {
      await upstream.close();
    }
  });
});
