// The WAF proxy and upgrades, over real sockets: h2c (and any upgrade but a WebSocket
// handshake) goes through as an ordinary request, body evaluated and forwarded; a WebSocket
// handshake the app declines gets the app's answer framed for the client; the upstream URL's
// path comes before the handshake's; a client that leaves before the app switches protocols
// takes its upstream connection with it; the heads the proxy writes itself on this path carry
// no header a ruleset could smuggle in.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { describe, it } from 'node:test';
import { headerLines } from '../../server/src/proxy/forwarding';
import { handshake as handshakeTo, proxyTestFile, raw, rawSocket, send, ZONE } from './proxyHarness';

const file = proxyTestFile({
  custom: [{ action: 'block', expression: 'http.request.body.raw contains "attack=1"', description: 'attack in the body' }],
  proxy: { upstreamTimeoutMs: 2_000 },
});
const { withProxy } = file;

const h2c = (method: string, path: string, body = '') =>
  `${method} ${path} HTTP/1.1\r\nHost: ${ZONE}\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQCAAAAAAIAAAAA\r\n` +
  (body ? `Content-Type: application/x-www-form-urlencoded\r\nContent-Length: ${body.length}\r\n` : '') +
  `\r\n${body}`;
const handshake = (path: string) => handshakeTo(path, ZONE);

describe('an upgrade other than WebSocket (h2c)', () => {
  it('goes through as an ordinary request: its body forwarded, the answer framed, the connection kept', async () => {
    await withProxy({}, async (p) => {
      // The zone compiled first: on a loaded machine that alone took longer than the wait below.
      await send(p.url(), ZONE, '/warm');
      file.upstream.seen.length = 0;
      const r = await raw(p.url(), [h2c('POST', '/form', 'hello=1'), h2c('GET', '/page')], { gapMs: 200, waitMs: 2_000 });
      assert.match(r.data, /^HTTP\/1\.1 200 OK\r\n/);
      // Both answers on the one connection, each chunked as node frames it.
      assert.match(r.data, /\r\n\r\nd\r\nok POST \/form\r\n0\r\n\r\nHTTP\/1\.1 200 OK\r\n/);
      assert.ok(r.data.endsWith('\r\n\r\nc\r\nok GET /page\r\n0\r\n\r\n'), r.data);
      assert.deepEqual(
        file.upstream.seen.map((s) => [s.method, s.url, s.body, s.headers.upgrade, s.headers['http2-settings']]),
        [
          ['POST', '/form', 'hello=1', undefined, undefined],
          ['GET', '/page', '', undefined, undefined],
        ],
      );
    });
  });

  it('keeps one error listener on a connection however many h2c requests it sends', async () => {
    await withProxy({}, async (p) => {
      let serverSide: import('node:net').Socket | undefined;
      p.server.on('connection', (s: import('node:net').Socket) => (serverSide ??= s));
      const warnings: string[] = [];
      const onWarning = (w: Error) => warnings.push(w.name);
      process.on('warning', onWarning);
      try {
        await raw(p.url(), h2c('GET', '/warm')); // the zone compiled before the timed requests
        serverSide = undefined;
        const r = await raw(p.url(), Array.from({ length: 12 }, (_, i) => h2c('GET', `/h${i}`)), { gapMs: 150, waitMs: 2_500 });
        assert.equal(r.data.match(/HTTP\/1\.1 200 OK/g)?.length, 12, r.data);
        assert.ok(serverSide!.listenerCount('error') <= 2, `${serverSide!.listenerCount('error')} error listeners`);
        assert.deepEqual(warnings, []);
      } finally {
        process.off('warning', onWarning);
      }
    });
  });

  it('pipelined behind one still being answered: that answer arrives, then the connection closes', async () => {
    await withProxy({}, async (p) => {
      const r = await raw(p.url(), h2c('GET', '/one') + h2c('GET', '/two'), { waitMs: 2_000 });
      assert.equal(r.data.match(/HTTP\/1\.1 200 OK/g)?.length, 1, r.data);
      assert.ok(r.data.includes('ok GET /one'), r.data);
      assert.equal(r.closed, true);
    });
  });

  it('has its body evaluated', async () => {
    await withProxy({}, async (p) => {
      const r = await raw(p.url(), h2c('POST', '/form', 'attack=1'), { waitMs: 800 });
      assert.match(r.data, /^HTTP\/1\.1 403 Forbidden\r\n/);
      assert.equal(file.upstream.seen.length, 0);
    });
  });
});

describe('a WebSocket handshake', () => {
  it('the app declines gets its answer framed for the client, and the connection closes', async () => {
    // An app without WebSocket support answers the handshake as any GET, chunked.
    const app = createServer((_req, res) => {
      // A byte past ASCII in a header value (node writes the string as Latin-1): the client gets that byte, not its UTF-8.
      res.setHeader('x-name', 'caf\u00e9');
      res.write('hello ');
      res.end('world');
    });
    await new Promise<void>((r) => app.listen(0, '127.0.0.1', r));
    try {
      await withProxy({ upstream: `http://127.0.0.1:${(app.address() as { port: number }).port}` }, async (p) => {
        const r = await raw(p.url(), handshake('/ws'), { waitMs: 2_000 });
        assert.match(r.data, /^HTTP\/1\.1 200 OK\r\n/);
        assert.doesNotMatch(r.data, /^transfer-encoding:/im);
        assert.doesNotMatch(r.data, /^connection: keep-alive/im);
        assert.match(r.data, /\r\nconnection: close\r\n\r\nhello world$/);
        assert.match(r.data, /\r\nx-name: caf\xe9\r\n/);
        assert.equal(r.closed, true);
      });
    } finally {
      await new Promise<void>((r) => {
        app.close(() => r());
        app.closeAllConnections();
      });
    }
  });

  it("goes to the upstream URL's path", async () => {
    await withProxy({ upstream: `${file.upstream.url}/app/` }, async (p) => {
      const r = await raw(p.url(), [handshake('/ws?x=1'), 'ping'], { gapMs: 100, waitMs: 600 });
      assert.match(r.data, /^HTTP\/1\.1 101 Switching Protocols\r\n/);
      assert.ok(r.data.endsWith('echo:ping'), r.data);
      assert.equal(file.upstream.seen[0]!.url, '/app/ws?x=1');
    });
  });

  it('whose client leaves before the app switches protocols leaves no upstream connection open', async () => {
    await withProxy({}, async (p) => {
      for (let i = 0; i < 3; i++) {
        const s = rawSocket(p.url(), () => s.write(handshake('/ws-slow')));
        setTimeout(() => s.destroy(), 100);
      }
      await new Promise((r) => setTimeout(r, 800));
      assert.equal(file.upstream.seen.length, 3);
      assert.equal(file.upstream.openUpgrades(), 0);
    });
  });
});

describe("the proxy's own heads (writeRawPage, the upgrade path)", () => {
  it('drop a header whose name or value holds CR, LF or NUL (a custom response content type comes from the ruleset)', () => {
    const lines = headerLines([
      ['content-type', 'text/plain\r\nx-injected: 1'],
      ['x-a\nb', '1'],
      ['x-nul', 'a\0b'],
      ['cache-control', 'no-store'],
    ]);
    assert.equal(lines, 'cache-control: no-store\r\n');
  });
});
