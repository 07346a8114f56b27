// What the WAF proxy refuses in a request's head before it picks a zone (requestHead.ts), as
// nginx does, over real sockets: two Host headers, a Host that is not host[:port], no Host in
// HTTP/1.1, a transfer coding it cannot forward, an HTTP/2 request line, an unmet Expect.
// Each is answered by the proxy, logged, and never reaches the app. Also: the size a chunked
// body's rules see past the limit, and the deprecated ip.geoip.* names on live traffic.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseFieldsFile, type FieldsMapping } from '../../server/src/proxy/edgeFields';
import { FLOOD_BURST } from '../../server/src/proxy/proxy';
import { proxyTestFile, raw, send, ZONE, ZONE_ID } from './proxyHarness';

const file = proxyTestFile({
  custom: [
    { action: 'block', expression: 'http.request.uri.path eq "/admin"', description: 'no admin' },
    { action: 'block', expression: 'http.request.uri.path eq "/geo" and ip.geoip.country eq "DE"', description: 'old-style country rule' },
    { action: 'log', expression: 'http.request.body.size eq 65', description: 'limit + 1' },
    { action: 'log', expression: 'http.request.body.size gt 65', description: 'more' },
  ],
  proxy: { upstreamTimeoutMs: 2_000, headerTimeoutMs: 5_000, inspectBodyLimit: 64 },
  events: true,
});

const settle = () => new Promise((r) => setTimeout(r, 200));

/** The status line and the body of a raw answer. */
function answer(data: string): [string, string] {
  const [head, body = ''] = data.split('\r\n\r\n');
  return [head!.split('\r\n')[0]!, body];
}

describe('a request head the proxy refuses', () => {
  const cases: [string, string, string, RegExp][] = [
    ['two Host headers', `GET /admin HTTP/1.1\r\nHost: other.test\r\nHost: ${ZONE}\r\n\r\n`, 'HTTP/1.1 400 Bad Request', /^400 Bad Request: 2 Host headers; a request has one/],
    ['a Host with a path', `GET / HTTP/1.1\r\nHost: ${ZONE}/admin\r\n\r\n`, 'HTTP/1.1 400 Bad Request', new RegExp(`^400 Bad Request: Host "${ZONE}/admin" is not a host name`)],
    ['a Host with user info', `GET / HTTP/1.1\r\nHost: user@${ZONE}\r\n\r\n`, 'HTTP/1.1 400 Bad Request', /is not a host name or \[IPv6\] address with an optional port/],
    ['an empty label', `GET / HTTP/1.1\r\nHost: admin..${ZONE}\r\n\r\n`, 'HTTP/1.1 400 Bad Request', /is not a host name/],
    ['two ports', `GET / HTTP/1.1\r\nHost: ${ZONE}:80:80\r\n\r\n`, 'HTTP/1.1 400 Bad Request', /is not a host name/],
    ['a port past 65535', `GET / HTTP/1.1\r\nHost: ${ZONE}:99999\r\n\r\n`, 'HTTP/1.1 400 Bad Request', /is not a host name/],
    ['a name in brackets', `GET / HTTP/1.1\r\nHost: [${ZONE}]\r\n\r\n`, 'HTTP/1.1 400 Bad Request', /is not a host name/],
    ['no Host in HTTP/1.1', 'GET / HTTP/1.1\r\nX-A: 1\r\n\r\n', 'HTTP/1.1 400 Bad Request', /^400 Bad Request: no Host header; HTTP\/1\.1 requires one/],
    ['a transfer coding other than chunked', `POST / HTTP/1.1\r\nHost: ${ZONE}\r\nTransfer-Encoding: gzip, chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n`, 'HTTP/1.1 501 Not Implemented', /^501 Not Implemented: Transfer-Encoding "gzip, chunked": only chunked is forwarded/],
    ['an HTTP/2.0 request line', `GET / HTTP/2.0\r\nHost: ${ZONE}\r\n\r\n`, 'HTTP/1.1 505 HTTP Version Not Supported', /^505 HTTP Version Not Supported: HTTP\/2\.0 on an HTTP\/1\.x listener/],
    ['an expectation other than 100-continue', `GET / HTTP/1.1\r\nHost: ${ZONE}\r\nExpect: foo\r\n\r\n`, 'HTTP/1.1 417 Expectation Failed', /^417 Expectation Failed: Expect "foo": only 100-continue is met/],
    ['the same in HTTP/1.0 (node lets it through)', `GET / HTTP/1.0\r\nHost: ${ZONE}\r\nExpect: foo\r\n\r\n`, 'HTTP/1.1 417 Expectation Failed', /^417 Expectation Failed: Expect "foo": only 100-continue is met/],
  ];
  for (const [what, request, status, body] of cases) {
    it(`${what}: answered by the proxy, logged, never forwarded`, async () => {
      await file.withProxy({}, async (p, logs) => {
        const r = await raw(p.url(), request);
        const [line, text] = answer(r.data);
        assert.equal(line, status);
        assert.match(text, body);
        assert.match(r.data, /\r\ncf-ray: [0-9a-f]{16}-LCL\r\n/);
        await settle();
        assert.equal(file.upstream.seen.length, 0);
        assert.equal(logs.length, 1, logs.join('\n'));
        assert.match(logs[0]!, new RegExp(`^proxy: [0-9a-f]{16}-LCL \\w+ /\\S* ${status.split(' ')[1]} \\(`));
      });
    });
  }

  it("HTTP/2's connection preface (prior knowledge): 505, logged", async () => {
    await file.withProxy({}, async (p, logs) => {
      const r = await raw(p.url(), 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n');
      assert.deepEqual(answer(r.data), ['HTTP/1.1 505 HTTP Version Not Supported', '505 HTTP Version Not Supported: HTTP/2 on an HTTP/1.x listener\n']);
      assert.deepEqual(logs, ['proxy: 505 HTTP Version Not Supported (HPE_PAUSED_H2_UPGRADE)']);
    });
  });

  it('a WebSocket handshake with two Host headers is refused the same way', async () => {
    await file.withProxy({}, async (p, logs) => {
      const r = await raw(p.url(), `GET /ws HTTP/1.1\r\nHost: other.test\r\nHost: ${ZONE}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n`);
      assert.equal(answer(r.data)[0], 'HTTP/1.1 400 Bad Request');
      assert.equal(logs.length, 1, logs.join('\n'));
    });
  });

  it('lets through the Host spellings that name the zone: a port, upper case, a trailing dot, HTTP/1.0 without Host reaches no zone', async () => {
    await file.withProxy({}, async (p, logs) => {
      for (const host of [`${ZONE}:8081`, ZONE.toUpperCase(), `${ZONE}.`, `${ZONE}:`]) {
        const r = await raw(p.url(), `GET /ok HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
        assert.equal(answer(r.data)[0], 'HTTP/1.1 200 OK', host);
      }
      const old = await raw(p.url(), 'GET /ok HTTP/1.0\r\n\r\n');
      assert.match(answer(old.data)[0], /^HTTP\/1\.1 530 /);
      assert.deepEqual(
        logs.map((l) => l.replace(/[0-9a-f]{16}-LCL/, 'RAY')),
        ['proxy: RAY GET /ok 530 (Host "" is under no proxied zone)'],
      );
    });
  });
});

describe('a flood of refused heads or of unknown hosts', () => {
  // Each kind logs its first FLOOD_BURST lines of a window whole, then one line with the count of the rest (logThrottle.ts).
  const ray = (l: string) => l.replace(/[0-9a-f]{16}-LCL/, 'RAY');

  it('logs the first lines of each kind whole, then one line per kind with the count of the rest, by status', async () => {
    const logs: string[] = [];
    const p = await file.startProxy({ log: (l) => logs.push(l) });
    try {
      const refused = [
        ...Array.from({ length: 20 }, () => `GET / HTTP/1.1\r\nHost: ${ZONE}\r\nHost: other.test\r\n\r\n`),
        ...Array.from({ length: 5 }, () => `GET / HTTP/1.1\r\nHost: ${ZONE}\r\nExpect: foo\r\n\r\n`),
        ...Array.from({ length: 2 }, () => 'NOT A REQUEST\r\n\r\n'),
      ];
      for (const request of refused) assert.match(answer((await raw(p.url(), request)).data)[0], /^HTTP\/1\.1 (400|417) /);
      for (let i = 0; i < 15; i++) assert.match(answer((await raw(p.url(), `GET /x${i} HTTP/1.1\r\nHost: nowhere.test\r\nConnection: close\r\n\r\n`)).data)[0], /^HTTP\/1\.1 530 /);
      await settle();
      assert.equal(file.upstream.seen.length, 0);
      assert.deepEqual(
        logs.map(ray),
        [
          ...Array.from({ length: FLOOD_BURST }, () => 'proxy: RAY GET / 400 (2 Host headers; a request has one (RFC 7230 §5.4))'),
          ...Array.from({ length: FLOOD_BURST }, (_, i) => `proxy: RAY GET /x${i} 530 (Host "nowhere.test" is under no proxied zone)`),
        ],
      );
    } finally {
      await p.close();
    }
    // The counts of what was left out, when the window ends or (here) the proxy closes.
    assert.deepEqual(
      logs.slice(2 * FLOOD_BURST).map((l) => l.replace(/in the last \d+ s/, 'in the last S s')),
      ['proxy: 17 more refused request heads in the last S s (400: 12, 417: 5)', 'proxy: 5 more requests for hosts under no proxied zone (530) in the last S s'],
    );
  });
});

describe('a chunked body past the inspection limit', () => {
  it('has the size limit + 1 for the rules however its pieces arrive, and is forwarded whole', async () => {
    await file.withProxy({}, async (p) => {
      const body = 'x'.repeat(1000);
      const whole = `${(1000).toString(16)}\r\n${body}\r\n0\r\n\r\n`;
      const pieces = Array.from({ length: 20 }, (_, i) => `32\r\n${body.slice(i * 50, i * 50 + 50)}\r\n`).concat(['0\r\n\r\n']);
      const head = `POST /upload HTTP/1.1\r\nHost: ${ZONE}\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n`;
      for (const sent of [[head + whole], [head, ...pieces]]) {
        const r = await raw(p.url(), sent, { gapMs: 5 });
        assert.equal(answer(r.data)[0], 'HTTP/1.1 200 OK');
      }
      await settle();
      assert.deepEqual(
        file.upstream.seen.map((s) => s.bodyBytes),
        [1000, 1000],
      );
      assert.deepEqual(
        file.events.map((e) => [e.bodyTruncated, e.evaluation.decision.action, e.evaluation.logs.map((l) => l.description)]),
        [
          [true, 'allow-through', ['limit + 1']],
          [true, 'allow-through', ['limit + 1']],
        ],
      );
    });
  });
});

describe("the zone's own body inspection limit", () => {
  it('wins over --inspect-body-limit, as it does for the trace, from the next request on', async () => {
    const setting = `/zones/${ZONE_ID}/settings/request_body_inspection_limit`;
    await file.withProxy({}, async (p) => {
      const post = () => raw(p.url(), `POST /upload HTTP/1.1\r\nHost: ${ZONE}\r\nContent-Type: text/plain\r\nContent-Length: 1000\r\nConnection: close\r\n\r\n${'x'.repeat(1000)}`);
      assert.equal(answer((await post()).data)[0], 'HTTP/1.1 200 OK');
      assert.equal((await file.svc.call('PATCH', setting, { body: { value: 2048 } })).status, 200);
      try {
        assert.equal(answer((await post()).data)[0], 'HTTP/1.1 200 OK');
      } finally {
        await file.svc.call('PATCH', setting, { body: { value: 64 } });
      }
      await settle();
      // The proxy's limit is 64 bytes: the first body was cut; under the zone's 2 KiB, the second was seen whole.
      assert.deepEqual(
        file.events.map((e) => e.bodyTruncated),
        [true, false],
      );
    });
  });
});

describe('the deprecated ip.geoip.* names on live traffic', () => {
  it('ip.geoip.country is the country the fields file gives, as ip.src.country is', async () => {
    const mapping = parseFieldsFile(JSON.stringify([{ cidr: '127.0.0.0/8', country: 'DE' }]), 'fields.json') as FieldsMapping;
    await file.withProxy({ fieldsMapping: mapping }, async (p) => {
      assert.equal((await send(p.url(), ZONE, '/geo')).status, 403);
    });
    await file.withProxy({}, async (p) => {
      assert.equal((await send(p.url(), ZONE, '/geo')).status, 200);
    });
  });
});
