// The forwarding headers a client could send to pass for an edge, over real sockets. Without
// --trust-proxy the app gets the proxy's own word: X-Real-IP the peer, X-Forwarded-Host the
// Host the request came with, X-Forwarded-Port the proxy's port, Forwarded this hop's RFC 7239
// element; and the client's X-Forwarded-Server, X-Client-IP, X-Cluster-Client-IP (and the
// like, and X-Original-URL, X-Rewrite-URL, X-Forwarded-Prefix, CF-Connecting-IPv6,
// CF-Pseudo-IPv4) are dropped. With --trust-proxy the edge's values are kept (Forwarded gets
// this hop appended, as X-Forwarded-For does). X-Forwarded-For keeps the client's own list
// with the peer appended, trusted or not (as behind Cloudflare). Headers whose name holds an
// underscore (`X_Real_IP`) never reach the app, trusted or not; the rules still see them.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { IncomingHttpHeaders } from 'node:http';
import type { ProxyOptions } from '../../server/src/proxy/proxy';
import { handshake, proxyTestFile, rawSocket, send } from './proxyHarness';

/** The value of `X_Real_IP` a rule blocks on: the rules see underscore headers the app never gets. */
const BLOCKED_UNDERSCORE = '203.0.113.66';

const file = proxyTestFile({
  proxy: { upstreamTimeoutMs: 2_000 },
  custom: [{ action: 'block', expression: `any(http.request.headers["x_real_ip"][*] eq "${BLOCKED_UNDERSCORE}")`, description: 'an underscore header' }],
});

/** The Host the client sends: a zone's host with a port (routed to app.test, forwarded as it is). */
const HOST = 'www.app.test:8443';

const SPOOFED = {
  'x-real-ip': '203.0.113.7',
  forwarded: 'for=203.0.113.7;proto=https;host=evil.example',
  'x-forwarded-host': 'evil.example',
  'x-forwarded-port': '443',
  'x-forwarded-server': 'edge.evil.example',
  'x-client-ip': '203.0.113.8',
  'x-cluster-client-ip': '203.0.113.9',
  'client-ip': '203.0.113.10',
  'fastly-client-ip': '203.0.113.11',
  'x-forwarded-ssl': 'on',
  'x-forwarded-scheme': 'https',
  'cf-connecting-ipv6': '2001:db8::7',
  'cf-pseudo-ipv4': '240.0.0.7',
  'x-original-url': '/admin',
  'x-rewrite-url': '/admin',
  'x-forwarded-prefix': '/admin',
};

/** Look-alikes of the forwarding headers that CGI and WSGI servers map to the same variables as the hyphenated ones. */
const UNDERSCORED = {
  X_Real_IP: '203.0.113.7',
  CF_Connecting_IP: '203.0.113.7',
  X_Forwarded_For: '203.0.113.7',
  X_Forwarded_Proto: 'https',
  'X-App_Token': 'spoofed',
  'X-App-Token': 'kept',
};

/** The forwarding headers the app got, for one request with `headers` through a proxy with `extra`. */
async function appHeaders(extra: Partial<ProxyOptions>, headers: Record<string, string>): Promise<{ got: Record<string, unknown>; port: string }> {
  let port = '';
  await file.withProxy(extra, async (p) => {
    port = new URL(p.url()).port;
    const a = await send(p.url(), HOST, '/', { headers });
    assert.equal(a.status, 200);
  });
  assert.equal(file.upstream.seen.length, 1);
  return { got: pick(file.upstream.seen[0]!.headers), port };
}

const NAMES = [...Object.keys(SPOOFED), 'host', 'x-forwarded-for', 'cf-connecting-ip'];

function pick(h: IncomingHttpHeaders): Record<string, unknown> {
  return Object.fromEntries(NAMES.filter((n) => h[n] !== undefined).map((n) => [n, h[n]]));
}

/** What the app gets from the proxy alone, on its port: the same whatever the client claimed. */
const PROXY_OWN = (port: unknown) => ({
  host: HOST,
  'x-real-ip': '127.0.0.1',
  forwarded: 'for=127.0.0.1;host="www.app.test:8443";proto=http',
  'x-forwarded-host': HOST,
  'x-forwarded-port': port,
  'x-forwarded-for': '127.0.0.1',
  'cf-connecting-ip': '127.0.0.1',
});

describe('without --trust-proxy, the forwarding headers a client sends', () => {
  it('are replaced by what the proxy saw, or dropped', async () => {
    const { got, port } = await appHeaders({}, SPOOFED);
    assert.deepEqual(got, PROXY_OWN(port));
  });

  it("X-Forwarded-For keeps the client's list in front of the peer: its leftmost entry is the client's claim", async () => {
    const { got, port } = await appHeaders({}, { 'x-forwarded-for': '203.0.113.5' });
    assert.deepEqual(got, { ...PROXY_OWN(port), 'x-forwarded-for': '203.0.113.5, 127.0.0.1' });
  });

  it('are set by the proxy when the client sent none', async () => {
    const { got, port } = await appHeaders({}, {});
    assert.deepEqual(got, PROXY_OWN(port));
  });

  it('are replaced on a WebSocket handshake too', async () => {
    await file.withProxy({}, async (p) => {
      const spoofed = Object.entries(SPOOFED).map(([k, v]) => `${k}: ${v}\r\n`).join('');
      const answer = await new Promise<string>((resolve) => {
        const socket = rawSocket(p.url(), () => socket.write(handshake('/ws', HOST).replace('\r\n\r\n', `\r\n${spoofed}\r\n`)));
        socket.once('data', (d: Buffer) => {
          socket.destroy();
          resolve(d.toString('latin1'));
        });
      });
      assert.match(answer, /^HTTP\/1\.1 101 /);
      assert.deepEqual(pick(file.upstream.seen[0]!.headers), {
        host: HOST,
        'x-real-ip': '127.0.0.1',
        forwarded: 'for=127.0.0.1;host="www.app.test:8443";proto=http',
        'x-forwarded-host': HOST,
        'x-forwarded-port': new URL(p.url()).port,
        'x-forwarded-for': '127.0.0.1',
        'cf-connecting-ip': '127.0.0.1',
      });
    });
  });
});

describe('with --trust-proxy', () => {
  it("the edge's forwarding headers are kept, but X-Real-IP is the client the rules saw; Forwarded gets this hop appended", async () => {
    const { got } = await appHeaders({ trust: 'everyone' }, SPOOFED);
    assert.deepEqual(got, {
      ...SPOOFED,
      host: HOST,
      // The edge named no client (no CF-Connecting-IP, no X-Forwarded-For): ip.src is the peer, whatever X-Real-IP it sent.
      'x-real-ip': '127.0.0.1',
      forwarded: 'for=203.0.113.7;proto=https;host=evil.example, for=127.0.0.1;host="www.app.test:8443";proto=http',
      'x-forwarded-for': '127.0.0.1',
      'cf-connecting-ip': '127.0.0.1',
    });
  });

  it('those the edge did not send are the proxy\'s own, X-Real-IP the client the edge names', async () => {
    const { got, port } = await appHeaders({ trust: 'everyone' }, { 'x-forwarded-for': '198.51.100.4' });
    assert.deepEqual(got, {
      host: HOST,
      'x-real-ip': '198.51.100.4',
      forwarded: 'for=127.0.0.1;host="www.app.test:8443";proto=http',
      'x-forwarded-host': HOST,
      'x-forwarded-port': port,
      'x-forwarded-for': '198.51.100.4, 127.0.0.1',
      'cf-connecting-ip': '198.51.100.4',
    });
  });
});

describe('headers whose name holds an underscore', () => {
  for (const trust of ['nobody', 'everyone'] as const) {
    it(`are not forwarded to the app${trust === 'everyone' ? ' with --trust-proxy either' : ''}`, async () => {
      let port = '';
      await file.withProxy({ trust }, async (p) => {
        port = new URL(p.url()).port;
        assert.equal((await send(p.url(), HOST, '/', { headers: UNDERSCORED })).status, 200);
      });
      assert.equal(file.upstream.seen.length, 1);
      const h = file.upstream.seen[0]!.headers;
      assert.deepEqual(Object.keys(h).filter((k) => k.includes('_')), []);
      assert.deepEqual(
        { ...pick(h), 'x-forwarded-proto': h['x-forwarded-proto'], 'x-app-token': h['x-app-token'] },
        { ...PROXY_OWN(port), 'x-forwarded-proto': 'http', 'x-app-token': 'kept' },
      );
    });
  }

  it('are still seen by the rules', async () => {
    await file.withProxy({}, async (p) => {
      const a = await send(p.url(), HOST, '/', { headers: { X_Real_IP: BLOCKED_UNDERSCORE } });
      assert.equal(a.status, 403);
      assert.ok(a.body.includes('stopped this request (rule: <code>an underscore header</code>)'), a.body);
    });
    assert.deepEqual(file.upstream.seen, []);
  });
});
