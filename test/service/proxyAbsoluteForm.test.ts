// Absolute-form request targets (`GET http://host/path`) through the WAF proxy, over real
// sockets: the zone is chosen by Host and the app gets origin-form with that Host, so the rules
// must evaluate that same host, path and scheme. A target naming another host than Host is
// refused (400), for a WebSocket handshake too; one naming Host's host is evaluated and
// forwarded as origin-form; its scheme does not make the rules see `ssl`.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { handshake, proxyTestFile, raw, ZONE } from './proxyHarness';

const file = proxyTestFile({
  custom: [
    { action: 'block', expression: `http.host eq "${ZONE}" and starts_with(http.request.uri.path, "/secret")`, description: 'secret on this host' },
    { action: 'block', expression: 'not ssl and http.request.uri.path eq "/tls-only"', description: 'tls only' },
  ],
  proxy: { upstreamTimeoutMs: 2_000 },
  events: true,
  fileProxy: true,
});
const { events } = file;

const get = (target: string, host = ZONE, extra = '') => `GET ${target} HTTP/1.1\r\nHost: ${host}\r\n${extra}Connection: close\r\n\r\n`;

describe('an origin-form target with a #fragment', () => {
  it('reaches the app without it, as the rules saw it: what follows # is no query argument the app could read', async () => {
    const r = await raw(file.proxy.url(), get("/page?a=1#&q=1'%20UNION%20SELECT%20password%20FROM%20users--"));
    assert.match(r.data, /^HTTP\/1\.1 200 OK\r\n/);
    assert.match(r.data, /\r\nok GET \/page\?a=1\r\n/);
    const blocked = await raw(file.proxy.url(), get('/secret/x#anything'));
    assert.match(blocked.data, /^HTTP\/1\.1 403 Forbidden\r\n/);
  });
});

describe('an absolute-form target', () => {
  it('naming a host other than Host is refused with 400, and nothing reaches the app', async () => {
    for (const target of ['http://evil.test/secret/x', 'http://app.test.evil.test/secret/x', 'http://app.test:8080/secret/x', 'http://user@app.test/secret/x', 'ftp://app.test/secret/x']) {
      const r = await raw(file.proxy.url(), get(target));
      assert.match(r.data, /^HTTP\/1\.1 400 Bad Request\r\n/, target);
      assert.match(r.data, /absolute-form targets must name the Host/, target);
    }
    assert.equal(file.upstream.seen.length, 0);
  });

  it("naming Host's host is evaluated as the origin-form request the app gets", async () => {
    const blocked = await raw(file.proxy.url(), get('http://app.test/secret/x'));
    assert.match(blocked.data, /^HTTP\/1\.1 403 Forbidden\r\n/);
    // Case and the scheme's default port make no difference.
    const passed = await raw(file.proxy.url(), get('http://APP.test:80/page?q=1'));
    assert.match(passed.data, /^HTTP\/1\.1 200 OK\r\n/);
    assert.match(passed.data, /\r\nok GET \/page\?q=1\r\n/);
    assert.deepEqual(
      file.upstream.seen.map((s) => [s.url, s.headers.host]),
      [['/page?q=1', ZONE]],
    );
    // The event records the path that was evaluated and forwarded.
    assert.deepEqual(
      events.map((e) => [e.path, e.query, e.responseStatus]),
      [
        ['/secret/x', '', 403],
        ['/page', 'q=1', 200],
      ],
    );
  });

  it('with the https scheme does not make the rules see ssl: the app is told http', async () => {
    const r = await raw(file.proxy.url(), get('https://app.test/tls-only'));
    assert.match(r.data, /^HTTP\/1\.1 403 Forbidden\r\n/);
    assert.equal(file.upstream.seen.length, 0);
  });

  it('on a WebSocket handshake naming another host is refused with 400', async () => {
    const r = await raw(file.proxy.url(), handshake('http://evil.test/secret/ws', ZONE));
    assert.match(r.data, /^HTTP\/1\.1 400 Bad Request\r\n/);
    assert.equal(r.closed, true);
    const same = await raw(file.proxy.url(), handshake('http://app.test/secret/ws', ZONE));
    assert.match(same.data, /^HTTP\/1\.1 403 Forbidden\r\n/);
    assert.equal(file.upstream.seen.length, 0);
  });
});
