// A request body that is malformed (a bad chunk size) or cut short (the client half-closes
// mid-body), over real sockets: the proxy answers 400 at once, not a 408 after the header
// timeout; once the app's answer has started, the connection is cut instead; either way the
// upstream request goes, and the app never gets a whole request. And a body that stops coming
// after the app held it back for a while still gets its 408.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { proxyTestFile, raw, startRawUpstream, ZONE } from './proxyHarness';

/** Far longer than any answer below may take. */
const HEADER_TIMEOUT = 5_000;

const file = proxyTestFile({ proxy: { upstreamTimeoutMs: 4_000, headerTimeoutMs: HEADER_TIMEOUT } });
const { withProxy } = file;

describe('a malformed or cut-off request body', () => {
  it('with a bad chunk size, while the rules wait for it: 400 at once, and the connection closes', async () => {
    await withProxy({}, async (p, logs) => {
      const r = await raw(p.url(), `POST /x HTTP/1.1\r\nHost: ${ZONE}\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\nzz\r\n`, { waitMs: HEADER_TIMEOUT + 1_000 });
      assert.match(r.data, /^HTTP\/1\.1 400 Bad Request\r\n/);
      // The request's ray id, as on every answer to a proxied request.
      assert.match(r.data, /\r\ncf-ray: [0-9a-f]{16}-LCL\r\n/);
      assert.match(r.data, /the request body is malformed or cut short\n$/);
      assert.equal(r.closed, true);
      assert.ok(r.ms < 1_000, `${r.ms} ms`);
      assert.equal(file.upstream.seen.length, 0);
      assert.ok(logs.some((l) => /400 Bad Request \(HPE_INVALID_CHUNK_SIZE in the body of POST \/x\)/.test(l)), logs.join('\n'));
    });
  });

  it('with a bad chunk size past the part the rules read, the app waiting for the rest: 400, and the upstream request goes', async () => {
    await withProxy({ inspectBodyLimit: 1024 }, async (p) => {
      const r = await raw(p.url(), [`POST /x HTTP/1.1\r\nHost: ${ZONE}\r\nTransfer-Encoding: chunked\r\n\r\n7d0\r\n${'a'.repeat(2000)}\r\n`, 'zz\r\n'], { gapMs: 300, waitMs: HEADER_TIMEOUT + 1_000 });
      assert.match(r.data, /^HTTP\/1\.1 400 Bad Request\r\n/);
      assert.equal(r.closed, true);
      assert.ok(r.ms < 1_500, `${r.ms} ms`);
      await new Promise((res) => setTimeout(res, 100));
      assert.equal(file.upstream.seen.length, 0);
      assert.equal(await file.upstream.connections(), 0);
    });
  });

  it('cut short by a half-close: 400 at once', async () => {
    await withProxy({}, async (p) => {
      const r = await raw(p.url(), `POST /x HTTP/1.1\r\nHost: ${ZONE}\r\nContent-Length: 10\r\n\r\nabc`, { halfClose: true, waitMs: HEADER_TIMEOUT + 1_000 });
      assert.equal(r.closed, true);
      assert.match(r.data, /^HTTP\/1\.1 400 Bad Request\r\n/);
      assert.ok(r.ms < 1_000, `${r.ms} ms`);
      assert.equal(file.upstream.seen.length, 0);
    });
  });

  it("once the app's answer has started: the connection is cut, and the app's connection with it", async () => {
    const app = await startRawUpstream((_head, s) => s.write('HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nhello'));
    try {
      await withProxy({ upstream: app.url, inspectBodyLimit: 1024 }, async (p) => {
        const r = await raw(p.url(), [`POST /x HTTP/1.1\r\nHost: ${ZONE}\r\nTransfer-Encoding: chunked\r\n\r\n7d0\r\n${'a'.repeat(2000)}\r\n`, 'zz\r\n'], { gapMs: 300, waitMs: HEADER_TIMEOUT + 1_000 });
        assert.match(r.data, /^HTTP\/1\.1 200 OK\r\n/);
        assert.ok(r.data.endsWith('\r\n\r\nhello'), r.data);
        assert.doesNotMatch(r.data, /400 Bad Request/);
        assert.equal(r.closed, true);
        assert.ok(r.ms < 1_500, `${r.ms} ms`);
        await new Promise((res) => setTimeout(res, 100));
        assert.equal(app.sockets.size, 0);
      });
    } finally {
      app.close();
    }
  });
});

describe('a body that stops coming after the app held it back', () => {
  it('gets its 408 after the header timeout', async () => {
    // The app reads nothing for a second (the proxy's writes to it back up), then everything.
    const app = await startRawUpstream((_head, s) => {
      s.pause();
      setTimeout(() => s.resume(), 1_000);
    });
    try {
      await withProxy({ upstream: app.url, headerTimeoutMs: 300, inspectBodyLimit: 1024 }, async (p) => {
        const mb = 16;
        const r = await raw(p.url(), [`POST /up HTTP/1.1\r\nHost: ${ZONE}\r\nContent-Length: ${4 * mb * 1024 * 1024}\r\n\r\n`, 'a'.repeat(mb * 1024 * 1024)], { waitMs: 4_000 });
        assert.match(r.data, /^HTTP\/1\.1 408 Request Timeout\r\n/);
        assert.equal(r.closed, true);
      });
    } finally {
      app.close();
    }
  });
});
