// The app's interim answers through the WAF proxy, over real sockets: a 103 Early Hints and a
// 102 Processing reach an HTTP/1.1 client ahead of the final answer, never an HTTP/1.0 one;
// a client's `Expect: 100-continue` is met by the proxy and not sent on to the app.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { proxyTestFile, raw, startRawUpstream, ZONE } from './proxyHarness';

const file = proxyTestFile({
  custom: [{ action: 'block', expression: 'http.request.uri.path eq "/blocked"', description: 'b' }],
  proxy: { upstreamTimeoutMs: 2_000, headerTimeoutMs: 5_000 },
});
const { withProxy } = file;

const get = (path: string, version = '1.1') => `GET ${path} HTTP/${version}\r\nHost: ${ZONE}\r\nConnection: close\r\n\r\n`;
const FINAL = 'HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok';

/** A proxy in front of an app that sends `interim` (raw 1xx heads) before its final answer. */
async function throughApp(interim: string, fn: Parameters<typeof withProxy>[1]): Promise<void> {
  const app = await startRawUpstream((_head, s) => {
    s.write(interim);
    setTimeout(() => s.end(FINAL), 20);
  });
  try {
    await withProxy({ upstream: app.url }, fn);
  } finally {
    app.close();
  }
}

describe("the app's interim answers", () => {
  it('pass a 103 Early Hints on to an HTTP/1.1 client before the final answer: its Link headers and its own, not the hop-by-hop ones', async () => {
    await throughApp('HTTP/1.1 103 Early Hints\r\nLink: </app.css>; rel=preload; as=style\r\nLink: </app.js>; rel=preload; as=script\r\nX-Hint: 1\r\nConnection: keep-alive\r\nKeep-Alive: timeout=5\r\n\r\n', async (p, logs) => {
      const r = await raw(p.url(), get('/'));
      assert.ok(r.data.startsWith('HTTP/1.1 103 Early Hints\r\nLink: </app.css>; rel=preload; as=style, </app.js>; rel=preload; as=script\r\nx-hint: 1\r\n\r\nHTTP/1.1 200 OK\r\n'), r.data);
      assert.ok(r.data.endsWith('\r\n\r\nok'), r.data);
      assert.deepEqual(logs, []);
    });
  });

  it('pass a 102 Processing on to an HTTP/1.1 client', async () => {
    await throughApp('HTTP/1.1 102 Processing\r\n\r\n', async (p) => {
      const r = await raw(p.url(), get('/'));
      assert.ok(r.data.startsWith('HTTP/1.1 102 Processing\r\n\r\nHTTP/1.1 200 OK\r\n'), r.data);
    });
  });

  it('send an HTTP/1.0 client only the final answer (RFC 9110 §15.2)', async () => {
    await throughApp('HTTP/1.1 103 Early Hints\r\nLink: </app.css>; rel=preload\r\n\r\nHTTP/1.1 102 Processing\r\n\r\n', async (p) => {
      const r = await raw(p.url(), get('/', '1.0'));
      assert.ok(r.data.startsWith('HTTP/1.1 200 OK\r\n'), r.data);
      assert.ok(r.data.endsWith('\r\n\r\nok'), r.data);
    });
  });

  it('drop a 103 whose Link header is malformed, and log it with the ray id; the final answer still comes', async () => {
    await throughApp('HTTP/1.1 103 Early Hints\r\nLink: not a link\r\n\r\n', async (p, logs) => {
      const r = await raw(p.url(), get('/'));
      assert.ok(r.data.startsWith('HTTP/1.1 200 OK\r\n'), r.data);
      assert.equal(logs.length, 1, logs.join('\n'));
      assert.match(logs[0]!, /^proxy: [0-9a-f]{16}-LCL app\.test GET \/: the app's 103 was not passed on: a Link header not of the form "<uri>; rel=preload" \("not a link"\)$/);
    });
  });

  it("pass on an app's unasked 100 Continue to no one, and no hints once the proxy answered itself", async () => {
    await throughApp('HTTP/1.1 100 Continue\r\n\r\n', async (p) => {
      const r = await raw(p.url(), get('/'));
      assert.ok(r.data.startsWith('HTTP/1.1 200 OK\r\n'), r.data);
      const blocked = await raw(p.url(), get('/blocked'));
      assert.ok(blocked.data.startsWith('HTTP/1.1 403 Forbidden\r\n'), blocked.data);
    });
  });
});

describe("a client's Expect: 100-continue", () => {
  it('is met by the proxy (one 100 Continue, then the final answer) and not sent on to the app, which gets the body', async () => {
    let head = '';
    const app = await startRawUpstream((h, s) => {
      head = h;
      s.end(FINAL);
    });
    try {
      await withProxy({ upstream: app.url }, async (p) => {
        const r = await raw(p.url(), [`POST /form HTTP/1.1\r\nHost: ${ZONE}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 5\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n`, 'a=b&c'], { gapMs: 50 });
        assert.ok(r.data.startsWith('HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\n'), r.data);
        assert.equal(r.data.split('100 Continue').length, 2, r.data);
        assert.match(head, /^POST \/form HTTP\/1\.1\r\n/);
        assert.doesNotMatch(head, /^expect:/im);
        assert.match(head, /^content-length: 5\r$/im);
      });
    } finally {
      app.close();
    }
  });
});
