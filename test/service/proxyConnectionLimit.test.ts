// The proxy keeps at most `--proxy-max-connections` client connections open: each may hold
// up to the body inspection limit while its body is read, before `--proxy-queue` counts it,
// so this is what bounds that memory. One more is closed as it comes (logged), and once a
// connection ends, a new one is served.
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { describe, it } from 'node:test';
import { UsageError } from '../../server/src/cli/input';
import { serveArgs, serveOptions } from '../../server/src/cli/serve';
import { LINGER_IDLE_MS } from '../../server/src/proxy/forwarding';
import { DEFAULT_MAX_CONNECTIONS } from '../../server/src/proxy/proxy';
import { proxyTestFile, send } from './proxyHarness';

const ZONE_ID = '0123456789abcdef0123456789abcd02';
const ZONE = 'connections.test';
const file = proxyTestFile({ zoneId: ZONE_ID, zone: ZONE, custom: [] });

/** A connection to the proxy that has sent half a request head, so it stays open. */
function halfOpen(url: string): Promise<Socket> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const s = connect(Number(port), hostname, () => {
      s.write(`GET / HTTP/1.1\r\nHost: ${ZONE}\r\n`);
      resolve(s);
    });
    s.on('error', reject);
  });
}

/** What a connection gets before the proxy closes it ('' when it is closed unanswered). */
function closedWith(s: Socket): Promise<string> {
  return new Promise((resolve) => {
    let data = '';
    s.on('data', (d: Buffer) => (data += d.toString('latin1')));
    s.on('close', () => resolve(data));
    s.on('error', () => undefined);
  });
}

/** Sends `head` on a connection that never ends its own side (half-open allowed), and resolves with what came back once the proxy has answered and ended its side. */
function answeredHalfOpen(url: string, head: string): Promise<{ socket: Socket; data: string }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect({ port: Number(port), host: hostname, allowHalfOpen: true }, () => socket.write(head));
    let data = '';
    socket.on('data', (d: Buffer) => (data += d.toString('latin1')));
    socket.once('end', () => resolve({ socket, data }));
    socket.on('error', reject);
  });
}

describe('--proxy-max-connections', () => {
  it('closes a connection past the limit unanswered and logs it; a slot that frees serves the next', { timeout: 20_000 }, async () => {
    await file.withProxy({ workers: 0, maxConnections: 2 }, async (p, logs) => {
      const open = [await halfOpen(p.url()), await halfOpen(p.url())];
      const third = await halfOpen(p.url());
      // Closed as it is accepted; a generous wait, so that a proxy without the limit fails here, not by the test's timeout.
      const verdict = await Promise.race([closedWith(third), new Promise<string>((r) => setTimeout(() => r('still open after 5 s'), 5_000).unref())]);
      assert.equal(verdict, '', 'closed without an answer');
      assert.deepEqual(
        logs.filter((l) => l.includes('--proxy-max-connections')),
        ['proxy: 1 connection(s) closed: 2 are open already (--proxy-max-connections)'],
      );
      const freed = closedWith(open[0]!);
      open[0]!.destroy();
      await freed;
      // Node counts a connection until its close has run: wait for that, then a request goes through.
      let status = 0;
      for (let i = 0; i < 50 && status !== 200; i++) {
        status = await send(p.url(), ZONE, '/').then(
          (a) => a.status,
          () => 0,
        );
        if (status !== 200) await new Promise((r) => setTimeout(r, 20));
      }
      assert.equal(status, 200);
      open[1]!.destroy();
    });
  });

  it('frees the slot of a client that never ends its side after a raw answer (CONNECT), within the linger bound', { timeout: 20_000 }, async () => {
    await file.withProxy({ workers: 0, maxConnections: 1 }, async (p) => {
      const started = Date.now();
      const { socket, data } = await answeredHalfOpen(p.url(), `CONNECT ${ZONE}:443 HTTP/1.1\r\nHost: ${ZONE}:443\r\n\r\n`);
      assert.match(data, /^HTTP\/1\.1 405 /);
      try {
        // The client's side stays open; the proxy closes the socket once LINGER_IDLE_MS pass without a byte, and the one slot serves again.
        let status = 0;
        while (status !== 200 && Date.now() - started < LINGER_IDLE_MS + 3_000) {
          status = await send(p.url(), ZONE, '/').then(
            (a) => a.status,
            () => 0,
          );
          if (status !== 200) await new Promise((r) => setTimeout(r, 200));
        }
        assert.equal(status, 200);
        assert.ok(Date.now() - started >= LINGER_IDLE_MS - 100, 'not before the linger bound');
      } finally {
        socket.destroy();
      }
    });
  });

  it('is 1024 by default, and --proxy-max-connections N sets it (1 to 1000000)', () => {
    const flags = (...a: string[]) => serveOptions(serveArgs(['--proxy', `${ZONE}=http://127.0.0.1:3000`, ...a])).proxy!;
    assert.equal(DEFAULT_MAX_CONNECTIONS, 1024);
    assert.equal(flags().maxConnections, undefined);
    assert.equal(flags('--proxy-max-connections', '64').maxConnections, 64);
    for (const bad of ['0', '2.5', 'lots', '1000001']) {
      assert.throws(
        () => flags('--proxy-max-connections', bad),
        (e: Error) => e instanceof UsageError && e.message === `--proxy-max-connections takes the number of client connections the proxy keeps open at once, from 1 to 1000000 (default 1024), got "${bad}"`,
      );
    }
  });
});
