// An https upstream, over real sockets: the TLS name the proxy sends (SNI), which is also the
// name the upstream's certificate is checked against, is the upstream URL's host, never the
// client's Host header; for an upstream given by address, no name. A plain TCP server stands
// in for the upstream: it reads the ClientHello, in which the name travels in clear, and hangs up.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { handshake, proxyTestFile, raw, silentPeer, ZONE } from './proxyHarness';

const { withProxy } = proxyTestFile({ upstream: false, proxy: { upstreamTimeoutMs: 2_000 } });

let tlsPeer: Server;
let port: number;
/** An https upstream that accepts the connection and never answers the ClientHello (a hung app). */
let silent: Awaited<ReturnType<typeof silentPeer>>;
/** The first bytes (the ClientHello) of each connection, latin1. */
const hellos: string[] = [];

before(async () => {
  tlsPeer = createServer((s) => {
    s.on('error', () => undefined);
    s.once('data', (d: Buffer) => {
      hellos.push(d.toString('latin1'));
      s.destroy();
    });
  });
  await new Promise<void>((r) => tlsPeer.listen(0, '127.0.0.1', r));
  port = (tlsPeer.address() as { port: number }).port;
  silent = await silentPeer(true);
});
after(async () => {
  await new Promise((r) => tlsPeer.close(r));
  await silent.close();
});

/** The ClientHellos the proxy sent to `upstream` for an ordinary request and a WebSocket handshake. */
async function helloFor(upstream: string): Promise<string[]> {
  hellos.length = 0;
  await withProxy({ upstream }, async (p) => {
    const plain = await raw(p.url(), `GET / HTTP/1.1\r\nHost: ${ZONE}\r\nConnection: close\r\n\r\n`);
    assert.match(plain.data, /^HTTP\/1\.1 502 Bad Gateway\r\n/);
    const upgrade = await raw(p.url(), handshake('/ws', ZONE));
    assert.match(upgrade.data, /^HTTP\/1\.1 502 Bad Gateway\r\n/);
  });
  return [...hellos];
}

describe('an https upstream', () => {
  it("is sent its own host name, not the client's Host", async () => {
    const seen = await helloFor(`https://localhost:${port}`);
    assert.equal(seen.length, 2);
    for (const hello of seen) {
      assert.ok(hello.includes('localhost'), 'the upstream host is the TLS name');
      assert.ok(!hello.includes(ZONE), "the client's Host is not");
    }
  });

  it('that connects and never finishes the TLS handshake gets the upstream timeout (504), not a request that hangs', async () => {
    await withProxy({ upstream: `https://127.0.0.1:${silent.port}` }, async (p) => {
      const started = performance.now();
      const r = await raw(p.url(), `GET / HTTP/1.1\r\nHost: ${ZONE}\r\nConnection: close\r\n\r\n`);
      assert.match(r.data, /^HTTP\/1\.1 504 Gateway Timeout\r\n/);
      assert.ok(performance.now() - started >= 1_900, 'answered at the upstream timeout (2 s), not before');
    });
  });

  it('given by address is sent no name at all', async () => {
    const seen = await helloFor(`https://127.0.0.1:${port}`);
    assert.equal(seen.length, 2);
    for (const hello of seen) assert.ok(!hello.includes(ZONE), "the client's Host is not the TLS name");
  });
});
