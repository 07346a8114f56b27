// An app that stops sending its answer midway, over real sockets: once the answer has started,
// a pause of --upstream-timeout in it cuts both connections (the client's and the app's) instead
// of holding the client for ever. A client that reads slowly holds the answer back itself: that
// time is not the app's, and its answer arrives whole.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { proxyTestFile, raw, rawSocket, startRawUpstream, startUpstream, ZONE } from './proxyHarness';

const UPSTREAM_TIMEOUT = 400;

const { withProxy } = proxyTestFile({ upstream: false, proxy: { upstreamTimeoutMs: UPSTREAM_TIMEOUT } });

describe('an answer that stops midway', () => {
  it('cuts the client and the app after the upstream timeout', async () => {
    const app = await startRawUpstream((_head, s) => s.write('HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nhello'));
    try {
      await withProxy({ upstream: app.url }, async (p, logs) => {
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
      await withProxy({ upstream: upstream.url }, async (p) => {
        const mb = 16;
        const s = rawSocket(p.url());
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
