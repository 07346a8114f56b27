// What the app is told about the client, over real sockets. X-Forwarded-For gets the proxy's
// own peer appended (with --trust-proxy too: the hop it saw, not the client the edge names);
// X-Forwarded-Proto keeps a trusted edge's protocol; and without --trust-proxy the headers only
// an edge may set (CF-IPCountry, True-Client-IP, CF-Visitor, CF-Connecting-IP, CF-Ray) never
// reach the app as the client sent them.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseFieldsFile, type FieldsMapping } from '../../server/src/proxy/edgeFields';
import type { ProxyOptions } from '../../server/src/proxy/proxy';
import { challengeForm, proxyTestFile, raw, send, startRawUpstream, ZONE } from './proxyHarness';

const file = proxyTestFile({ proxy: { upstreamTimeoutMs: 2_000 }, custom: [{ action: 'managed_challenge', expression: 'http.request.uri.path eq "/mc"' }] });

const SPOOFED = {
  'x-forwarded-for': '203.0.113.9',
  'x-forwarded-proto': 'https',
  'cf-ipcountry': 'US',
  'true-client-ip': '198.51.100.1',
  'cf-visitor': '{"scheme":"https"}',
  'cf-connecting-ip': '198.51.100.2',
  'cf-ray': '0000000000000000-SPF',
};

/** The headers the app got for one request with `headers`, through a proxy with `extra`. */
async function appHeaders(extra: Partial<ProxyOptions>, headers: Record<string, string>) {
  await file.withProxy(extra, async (p) => {
    const a = await send(p.url(), ZONE, '/', { headers });
    assert.equal(a.status, 200);
  });
  assert.equal(file.upstream.seen.length, 1);
  return file.upstream.seen[0]!.headers;
}

describe('without --trust-proxy', () => {
  it("the edge's headers the client sent do not reach the app as sent", async () => {
    const h = await appHeaders({}, SPOOFED);
    assert.equal(h['cf-ipcountry'], undefined);
    assert.equal(h['true-client-ip'], undefined);
    assert.equal(h['cf-visitor'], undefined);
    assert.equal(h['cf-connecting-ip'], '127.0.0.1');
    assert.match(String(h['cf-ray']), /^[0-9a-f]{16}-LCL$/);
    assert.equal(h['x-forwarded-proto'], 'http');
    assert.equal(h['x-forwarded-for'], '203.0.113.9, 127.0.0.1');
  });

  it("CF-IPCountry is the country the rules saw (the fields file's), not the client's", async () => {
    const fieldsMapping = parseFieldsFile(JSON.stringify([{ cidr: '127.0.0.0/8', country: 'DE' }]), 'fields.json') as FieldsMapping;
    const h = await appHeaders({ fieldsMapping }, SPOOFED);
    assert.equal(h['cf-ipcountry'], 'DE');
  });
});

describe('with --trust-proxy', () => {
  it('X-Forwarded-For gets the peer appended, not the client the edge names', async () => {
    const h = await appHeaders({ trust: 'everyone' }, { 'x-forwarded-for': '203.0.113.9' });
    assert.equal(h['x-forwarded-for'], '203.0.113.9, 127.0.0.1');
    assert.equal(h['cf-connecting-ip'], '203.0.113.9');
  });

  it('X-Real-IP is the client the rules saw, not one the client set behind an edge that does not', async () => {
    const h = await appHeaders({ trust: 'everyone' }, { 'x-forwarded-for': '203.0.113.9', 'x-real-ip': '1.2.3.4' });
    assert.equal(h['x-real-ip'], '203.0.113.9');
  });

  it("X-Forwarded-Proto keeps the edge's protocol (http when it names none)", async () => {
    assert.equal((await appHeaders({ trust: 'everyone' }, { 'x-forwarded-proto': 'https' }))['x-forwarded-proto'], 'https');
    file.upstream.seen.length = 0;
    assert.equal((await appHeaders({ trust: 'everyone' }, {}))['x-forwarded-proto'], 'http');
  });

  it("the edge's headers pass", async () => {
    const h = await appHeaders({ trust: 'everyone' }, SPOOFED);
    assert.equal(h['cf-ipcountry'], 'US');
    assert.equal(h['true-client-ip'], '198.51.100.1');
    assert.equal(h['cf-visitor'], '{"scheme":"https"}');
    assert.equal(h['cf-connecting-ip'], '198.51.100.2');
  });
});

describe('a header the client repeats', () => {
  it('reaches the app line by line, as the rules saw it (node would keep only the first User-Agent or Authorization); Content-Type once, the first', async () => {
    let head = '';
    const app = await startRawUpstream((h, s) => {
      head = h;
      s.end('HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok');
    });
    try {
      await file.withProxy({ upstream: app.url }, async (p) => {
        const r = await raw(p.url(), `GET / HTTP/1.1\r\nHost: ${ZONE}\r\nUser-Agent: first/1\r\nUser-Agent: second/2\r\nAuthorization: Basic YTpi\r\nAuthorization: Bearer t\r\nAccept: text/html\r\nContent-Type: text/plain\r\nContent-Type: application/x-www-form-urlencoded\r\nConnection: close\r\n\r\n`);
        assert.match(r.data, /^HTTP\/1\.1 200 OK\r\n/);
      });
      const lines = head.split('\r\n').map((l) => l.toLowerCase());
      assert.deepEqual(lines.filter((l) => l.startsWith('user-agent:')), ['user-agent: first/1', 'user-agent: second/2']);
      assert.deepEqual(lines.filter((l) => l.startsWith('authorization:')), ['authorization: basic ytpi', 'authorization: bearer t']);
      assert.deepEqual(lines.filter((l) => l.startsWith('host:')), [`host: ${ZONE}`]);
      assert.deepEqual(lines.filter((l) => l.startsWith('accept:')), ['accept: text/html']);
      // Content-Type once, the first: the one the rules parsed the body by.
      assert.deepEqual(lines.filter((l) => l.startsWith('content-type:')), ['content-type: text/plain']);
    } finally {
      app.close();
    }
  });
});

describe("the challenge's clearance cookie", () => {
  /** The Set-Cookie of a press of the challenge button, through a proxy with `extra`. */
  async function clearanceCookie(extra: Partial<ProxyOptions>, headers: Record<string, string>): Promise<string> {
    let cookie = '';
    await file.withProxy(extra, async (p) => {
      const served = await send(p.url(), ZONE, '/mc', { headers });
      const r = await send(p.url(), ZONE, '/.rulesmith/challenge', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, body: challengeForm(served) });
      assert.equal(r.status, 303);
      cookie = String(r.headers['set-cookie']);
    });
    return cookie;
  }

  it('is Secure when a trusted edge says the browser came over https, and only then', async () => {
    assert.match(await clearanceCookie({ trust: 'everyone' }, { 'x-forwarded-proto': 'https' }), /; HttpOnly; SameSite=Lax; Secure$/);
    assert.doesNotMatch(await clearanceCookie({ trust: 'everyone' }, {}), /Secure/);
    // A client's own claim is not the edge's.
    assert.doesNotMatch(await clearanceCookie({}, { 'x-forwarded-proto': 'https' }), /Secure/);
  });
});
