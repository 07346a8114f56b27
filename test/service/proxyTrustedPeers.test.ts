// --trust-proxy-from over real sockets: the forwarding headers are the edge's word only when
// the socket's peer is in one of the ranges. The client here is 127.0.0.1: in 127.0.0.0/8 its
// CF-Connecting-IP is ip.src (a rule on that address blocks it), its CF-IPCountry and
// X-Forwarded-Proto are the rules' country and ssl, and the edge's headers reach the app; with
// 10.0.0.0/8 only, the same request is taken exactly as without --trust-proxy: ip.src is
// 127.0.0.1, and the app gets the proxy's own forwarding headers, the edge-only ones dropped.
// An IPv4 client of a proxy listening on `::` (its peer ::ffff:127.0.0.1) is in 127.0.0.0/8.
import assert from 'node:assert/strict';
import type { IncomingHttpHeaders } from 'node:http';
import { describe, it } from 'node:test';
import { parseTrustedPeers, type TrustedPeers } from '../../server/src/proxy/edgeFields';
import { createProxy, type ProxyOptions } from '../../server/src/proxy/proxy';
import { handshake, proxyTestFile, rawSocket, send, ZONE } from './proxyHarness';

/** The address a rule blocks; a client names it in CF-Connecting-IP. */
const BLOCKED = '203.0.113.9';

const file = proxyTestFile({
  proxy: { upstreamTimeoutMs: 2_000 },
  events: true,
  custom: [
    { action: 'block', expression: `ip.src eq ${BLOCKED}`, description: 'a blocked client' },
    { action: 'block', expression: 'http.request.uri.path eq "/tls-jp" and ssl and ip.src.country eq "JP"', description: 'https from JP' },
  ],
});

function ranges(...values: string[]): TrustedPeers {
  const p = parseTrustedPeers(values);
  if ('error' in p) throw new Error(p.error);
  return p;
}

/** The client's own range, and one that leaves it out. */
const HOLDS_CLIENT = ranges('127.0.0.0/8');
const OTHERS = ranges('10.0.0.0/8', '2001:db8::/32');

/** What an edge (or a client passing for one) sends. */
const EDGE = {
  'cf-connecting-ip': '198.51.100.2',
  'x-forwarded-for': '203.0.113.5',
  'x-forwarded-proto': 'https',
  'cf-ipcountry': 'US',
  'true-client-ip': '198.51.100.2',
  'cf-visitor': '{"scheme":"https"}',
  'x-real-ip': '198.51.100.2',
  'x-forwarded-host': 'www.example.com',
  'x-forwarded-port': '443',
  forwarded: 'for=198.51.100.2;proto=https',
  'x-original-url': '/admin',
};

const NAMES = [...Object.keys(EDGE), 'cf-ray', 'host'];

/** The forwarding headers the app got (CF-Ray as its shape: each proxy makes its own). */
function pick(h: IncomingHttpHeaders): Record<string, unknown> {
  return Object.fromEntries(NAMES.filter((n) => h[n] !== undefined).map((n) => [n, n === 'cf-ray' ? /^[0-9a-f]{16}-LCL$/.test(String(h[n])) : h[n]]));
}

/** One request with `headers` through a proxy with `extra`: its status, what the app got (if it got it), ip.src and the proxy's port. */
async function through(extra: Partial<ProxyOptions>, headers: Record<string, string>, path = '/'): Promise<{ status: number; app?: Record<string, unknown>; clientIp?: string; country?: string; port: string }> {
  let status = 0;
  let port = '';
  await file.withProxy(extra, async (p) => {
    port = new URL(p.url()).port;
    status = (await send(p.url(), ZONE, path, { headers })).status;
  });
  assert.equal(file.events.length, 1);
  const seen = file.upstream.seen.splice(0);
  const e = file.events.splice(0)[0]!;
  return { status, ...(seen[0] ? { app: pick(seen[0].headers) } : {}), clientIp: e.clientIp, ...(e.country !== undefined ? { country: e.country } : {}), port };
}

/** What the app gets from the proxy alone: the same whatever the client claimed. */
const PROXY_OWN = (port: string) => ({
  host: ZONE,
  'cf-connecting-ip': '127.0.0.1',
  'x-forwarded-for': '203.0.113.5, 127.0.0.1',
  'x-forwarded-proto': 'http',
  'x-real-ip': '127.0.0.1',
  'x-forwarded-host': ZONE,
  'x-forwarded-port': port,
  forwarded: 'for=127.0.0.1;host=app.test;proto=http',
  'cf-ray': true,
});

describe('--trust-proxy-from, the peer in a range (127.0.0.1 in 127.0.0.0/8)', () => {
  it("the rules see the client the edge names: a rule on that address blocks it, and the app never gets it", async () => {
    const r = await through({ trust: HOLDS_CLIENT }, { 'cf-connecting-ip': BLOCKED });
    assert.deepEqual(r, { status: 403, clientIp: BLOCKED, port: r.port });
  });

  it("the rules see the edge's country and scheme", async () => {
    const r = await through({ trust: HOLDS_CLIENT }, { 'x-forwarded-for': '198.51.100.4', 'cf-ipcountry': 'jp', 'x-forwarded-proto': 'https' }, '/tls-jp');
    assert.deepEqual(r, { status: 403, clientIp: '198.51.100.4', country: 'JP', port: r.port });
  });

  it("the app gets the edge's headers, this hop appended, as with --trust-proxy", async () => {
    const r = await through({ trust: HOLDS_CLIENT }, EDGE);
    assert.deepEqual(r, {
      status: 200,
      clientIp: '198.51.100.2',
      country: 'US',
      port: r.port,
      app: {
        ...EDGE,
        host: ZONE,
        'x-forwarded-for': '203.0.113.5, 127.0.0.1',
        forwarded: 'for=198.51.100.2;proto=https, for=127.0.0.1;host=app.test;proto=http',
        'cf-ray': true,
      },
    });
    // --trust-proxy alone: the same.
    const alone = await through({ trust: 'everyone' }, EDGE);
    assert.deepEqual(alone, { ...r, port: alone.port });
  });
});

describe('--trust-proxy-from, the peer in no range (127.0.0.1, ranges 10.0.0.0/8 and 2001:db8::/32)', () => {
  it('ip.src is the peer: the address the client names is not blocked, and the app is told the peer', async () => {
    const r = await through({ trust: OTHERS }, { 'cf-connecting-ip': BLOCKED });
    assert.deepEqual(r, { status: 200, clientIp: '127.0.0.1', port: r.port, app: { host: ZONE, 'cf-connecting-ip': '127.0.0.1', 'x-forwarded-for': '127.0.0.1', 'x-forwarded-proto': 'http', 'x-real-ip': '127.0.0.1', 'x-forwarded-host': ZONE, 'x-forwarded-port': r.port, forwarded: 'for=127.0.0.1;host=app.test;proto=http', 'cf-ray': true } });
  });

  it("the rules see neither the client's country nor its scheme", async () => {
    const r = await through({ trust: OTHERS }, { 'x-forwarded-for': '198.51.100.4', 'cf-ipcountry': 'jp', 'x-forwarded-proto': 'https' }, '/tls-jp');
    assert.deepEqual([r.status, r.clientIp, r.country], [200, '127.0.0.1', undefined]);
  });

  it("the app gets the proxy's own forwarding headers and none of the edge-only ones: exactly as without --trust-proxy", async () => {
    const r = await through({ trust: OTHERS }, EDGE);
    assert.deepEqual(r, { status: 200, clientIp: '127.0.0.1', port: r.port, app: PROXY_OWN(r.port) });
    const untrusted = await through({}, EDGE);
    assert.deepEqual(untrusted, { ...r, port: untrusted.port, app: PROXY_OWN(untrusted.port) });
  });

  it('a WebSocket handshake is taken the same way', async () => {
    for (const [trust, expected] of [
      [OTHERS, '127.0.0.1'],
      [HOLDS_CLIENT, '198.51.100.2'],
    ] as const) {
      await file.withProxy({ trust }, async (p) => {
        const edge = Object.entries(EDGE).map(([k, v]) => `${k}: ${v}\r\n`).join('');
        const answer = await new Promise<string>((resolve) => {
          const socket = rawSocket(p.url(), () => socket.write(handshake('/ws', ZONE).replace('\r\n\r\n', `\r\n${edge}\r\n`)));
          socket.once('data', (d: Buffer) => {
            socket.destroy();
            resolve(d.toString('latin1'));
          });
        });
        assert.match(answer, /^HTTP\/1\.1 101 /);
        const app = pick(file.upstream.seen.splice(0)[0]!.headers);
        const port = new URL(p.url()).port;
        assert.deepEqual(app, expected === '127.0.0.1' ? PROXY_OWN(port) : { ...EDGE, host: ZONE, 'x-forwarded-for': '203.0.113.5, 127.0.0.1', forwarded: 'for=198.51.100.2;proto=https, for=127.0.0.1;host=app.test;proto=http', 'cf-ray': true });
      });
      assert.deepEqual(file.events.splice(0).map((e) => e.clientIp), [expected]);
    }
  });
});

describe('--trust-proxy-from, an IPv4 client of a proxy on an IPv6 socket', () => {
  // Bound to the IPv4-mapped loopback address: an IPv6 socket whose IPv4 peers show as
  // ::ffff:a.b.c.d, as on a proxy listening on `::`, without listening beyond loopback.
  it('is its IPv4 address (the peer is ::ffff:127.0.0.1): in 127.0.0.0/8, not in 10.0.0.0/8', async () => {
    for (const [trust, status, clientIp] of [
      [HOLDS_CLIENT, 403, BLOCKED],
      [OTHERS, 200, '127.0.0.1'],
    ] as const) {
      const p = createProxy({ store: file.svc.store, routes: [{ zone: file.zone, upstream: file.upstream.url }], upstreamTimeoutMs: 2_000, sink: { record: (e) => file.events.push(e) }, trust });
      await new Promise<void>((r) => p.server.listen(0, '::ffff:127.0.0.1', r));
      let peer = '';
      p.server.once('connection', (s) => (peer = s.remoteAddress ?? ''));
      try {
        const a = await send(`http://127.0.0.1:${new URL(p.url()).port}`, ZONE, '/', { headers: { 'cf-connecting-ip': BLOCKED } });
        assert.deepEqual([peer, a.status, file.events.splice(0).map((e) => e.clientIp)], ['::ffff:127.0.0.1', status, [clientIp]]);
      } finally {
        await p.close();
      }
    }
  });
});
