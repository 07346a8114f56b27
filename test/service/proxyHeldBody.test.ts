// A body the proxy read whole for the rules (it fit in the inspection limit) goes to the app at
// once; an app that accepts the connection and never reads it is the app's time, so the upstream
// timeout runs and the client gets 504, over real sockets. A plain TCP server that never reads
// stands in for the hung app; the body is larger than the loopback socket buffers.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { proxyTestFile, raw, silentPeer, ZONE } from './proxyHarness';

const BODY = 24 * 1024 * 1024;
const { withProxy } = proxyTestFile({ upstream: false, proxy: { upstreamTimeoutMs: 500, inspectBodyLimit: 32 * 1024 * 1024 } });

let deaf: Awaited<ReturnType<typeof silentPeer>>;

before(async () => {
  deaf = await silentPeer(false);
});
after(() => deaf.close());

describe('a body held whole, to an app that never reads it', () => {
  it('gets the upstream timeout (504), not a request that hangs', () =>
    withProxy({ upstream: `http://127.0.0.1:${deaf.port}` }, async (p) => {
      const head = `POST /upload HTTP/1.1\r\nHost: ${ZONE}\r\nContent-Type: application/octet-stream\r\nContent-Length: ${BODY}\r\nConnection: close\r\n\r\n`;
      const r = await raw(p.url(), [head, 'a'.repeat(BODY)], { waitMs: 10_000 });
      assert.match(r.data, /^HTTP\/1\.1 504 Gateway Timeout\r\n/);
      assert.ok(r.ms < 8_000, `answered after ${r.ms} ms`);
    }));
});
