// Request smuggling past the WAF proxy, over real sockets: a body the client framed (chunked,
// or Content-Length) must reach the app framed, whatever the method and whatever the client's
// Connection header lists, so that the app sees exactly the one request the rules evaluated and
// the body as a body; and a head of more than 2000 headers is seen whole (by the rules, and by
// the h2c re-parse, which rebuilds the head from them).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { proxyTestFile, raw, ZONE } from './proxyHarness';

const file = proxyTestFile({
  custom: [
    { action: 'block', expression: 'starts_with(http.request.uri.path, "/admin")', description: 'no admin' },
    { action: 'block', expression: 'any(http.request.headers["x-attack"][*] eq "1")', description: 'attack header' },
  ],
  proxy: { upstreamTimeoutMs: 2_000, headerTimeoutMs: 5_000 },
  fileProxy: true,
});

/** A request the rules block, hidden in a body: it must reach the app as body bytes only. */
const SMUGGLED = `GET /admin HTTP/1.1\r\nHost: ${ZONE}\r\n\r\n`;
const chunked = (body: string) => `${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`;
const settle = () => new Promise((r) => setTimeout(r, 300));

describe('a body on a method node sends unframed by default', () => {
  for (const method of ['GET', 'HEAD', 'DELETE', 'OPTIONS']) {
    it(`${method} with a chunked body reaches the app as one request, its body a body`, async () => {
      const r = await raw(file.proxy.url(), `${method} /ok HTTP/1.1\r\nHost: ${ZONE}\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n${chunked(SMUGGLED)}`);
      assert.match(r.data, /^HTTP\/1\.1 200 OK\r\n/);
      await settle();
      assert.deepEqual(
        file.upstream.seen.map((s) => [s.method, s.url, s.body]),
        [[method, '/ok', SMUGGLED]],
      );
      assert.equal(file.upstream.seen[0]!.headers['transfer-encoding'], 'chunked');
    });
  }

  it('two chunked GETs on one connection are two requests at the app, never three', async () => {
    const one = `GET /one HTTP/1.1\r\nHost: ${ZONE}\r\nTransfer-Encoding: chunked\r\n\r\n${chunked(SMUGGLED)}`;
    const two = `GET /two HTTP/1.1\r\nHost: ${ZONE}\r\nConnection: close\r\n\r\n`;
    const r = await raw(file.proxy.url(), [one, two], { gapMs: 200 });
    assert.equal(r.data.match(/^HTTP\/1\.1 200 OK\r\n/gm)?.length, 2, r.data);
    // The answers are the client's own: the smuggled request's answer is given to no one.
    assert.match(r.data, /ok GET \/one[\s\S]*ok GET \/two/);
    await settle();
    assert.deepEqual(
      file.upstream.seen.map((s) => [s.method, s.url, s.body]),
      [
        ['GET', '/one', SMUGGLED],
        ['GET', '/two', ''],
      ],
    );
  });
});

describe("the client's Connection header", () => {
  it('does not remove Content-Length: a GET body stays a body', async () => {
    const r = await raw(file.proxy.url(), `GET /ok HTTP/1.1\r\nHost: ${ZONE}\r\nContent-Length: ${SMUGGLED.length}\r\nConnection: keep-alive, Content-Length\r\n\r\n${SMUGGLED}`, { waitMs: 1_000 });
    assert.match(r.data, /^HTTP\/1\.1 200 OK\r\n/);
    await settle();
    assert.deepEqual(
      file.upstream.seen.map((s) => [s.method, s.url, s.body]),
      [['GET', '/ok', SMUGGLED]],
    );
    assert.equal(file.upstream.seen[0]!.headers['content-length'], String(SMUGGLED.length));
  });

  it('does not remove Host or Transfer-Encoding', async () => {
    const r = await raw(file.proxy.url(), `GET /ok HTTP/1.1\r\nHost: ${ZONE}\r\nTransfer-Encoding: chunked\r\nConnection: close, Host, Transfer-Encoding\r\n\r\n${chunked(SMUGGLED)}`);
    assert.match(r.data, /^HTTP\/1\.1 200 OK\r\n/);
    await settle();
    assert.deepEqual(
      file.upstream.seen.map((s) => [s.url, s.headers.host, s.body]),
      [['/ok', ZONE, SMUGGLED]],
    );
  });
});

describe('a head of more than 2000 headers', () => {
  const filler = (n: number) => 'A: b\r\n'.repeat(n);

  it('is evaluated whole: a header after the 2000th is seen by the rules', async () => {
    const r = await raw(file.proxy.url(), `GET /ok HTTP/1.1\r\nHost: ${ZONE}\r\nConnection: close\r\n${filler(2000)}X-Attack: 1\r\n\r\n`);
    assert.match(r.data, /^HTTP\/1\.1 403 Forbidden\r\n/);
    assert.equal(file.upstream.seen.length, 0);
  });

  it('keeps a Content-Length after the 2000th header through the h2c re-parse', async () => {
    const head = `POST /h2c HTTP/1.1\r\nHost: ${ZONE}\r\nConnection: Upgrade\r\nUpgrade: h2c\r\n${filler(1998)}Content-Length: ${SMUGGLED.length}\r\n\r\n`;
    const r = await raw(file.proxy.url(), head + SMUGGLED, { waitMs: 1_000 });
    assert.match(r.data, /^HTTP\/1\.1 200 OK\r\n/);
    await settle();
    assert.deepEqual(
      file.upstream.seen.map((s) => [s.method, s.url, s.body]),
      [['POST', '/h2c', SMUGGLED]],
    );
  });
});
