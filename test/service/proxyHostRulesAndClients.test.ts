// The WAF proxy over real sockets, on what a client controls: the Host's spelling cannot
// pass a host rule (on the proxy's thread and in a worker), long characteristic values
// count exactly, and behind a trusted proxy the client is the address that proxy appended
// to X-Forwarded-For, however it is spelled.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { EvaluatedRequest } from '../../server/src/evaluatedRequest';
import type { RunningProxy } from '../../server/src/proxy/proxy';
import { proxyTestFile, raw, send } from './proxyHarness';

const ZONE = 'hosts.test';
const limit = { period: 10, requests_per_period: 2, mitigation_timeout: 10 };
const file = proxyTestFile({
  zoneId: '0123456789abcdef0123456789abcde1',
  zone: ZONE,
  needsWorker: true,
  custom: [{ action: 'block', expression: 'http.host eq "admin.hosts.test"', description: 'no admin host' }],
  ratelimit: [
    { action: 'block', expression: 'http.request.uri.path eq "/per-key"', description: 'per key', ratelimit: { ...limit, characteristics: ['http.request.headers["x-api-key"]', 'cf.colo.id'] } },
    { action: 'block', expression: 'http.request.uri.path eq "/per-ip"', description: 'per client', ratelimit: { ...limit, characteristics: ['ip.src', 'cf.colo.id'] } },
  ],
  proxy: { upstreamTimeoutMs: 2_000, headerTimeoutMs: 5_000 },
});
const { startProxy } = file;
let clock = 1_800_000_000_000;

for (const workers of [0, 1]) {
  describe(`a host rule, evaluated ${workers === 0 ? "on the proxy's thread" : 'in a worker'}`, () => {
    it('sees the host that chose the zone, however the client spells it', async () => {
      const proxy = await startProxy({ workers });
      try {
        const url = proxy.url();
        const port = new URL(url).port;
        const spellings = ['admin.hosts.test', 'ADMIN.Hosts.Test', 'admin.hosts.test.', `admin.hosts.test.localhost:${port}`, 'admin.hosts.test.localhost.', `admin.hosts.test.:${port}`];
        const statuses: number[] = [];
        for (const host of spellings) statuses.push((await send(url, host, '/')).status);
        assert.deepEqual(statuses, [403, 403, 403, 403, 403, 403]);
        // An absolute-form target naming the same host (proxy.ts evaluates it in origin form).
        const absolute = await raw(url, 'GET http://ADMIN.hosts.test./ HTTP/1.1\r\nHost: admin.hosts.test.\r\nConnection: close\r\n\r\n');
        assert.match(absolute.data, /^HTTP\/1\.1 403 /);
        // Other hosts of the zone pass, and the app gets the Host as the client sent it.
        file.upstream.seen.length = 0;
        assert.equal((await send(url, 'WWW.hosts.test.localhost.', '/')).status, 200);
        assert.equal(file.upstream.seen[0]!.headers.host, 'WWW.hosts.test.localhost.');
      } finally {
        await proxy.close();
      }
    });
  });
}

describe('rate limits on what the client sends', () => {
  let proxy: RunningProxy;
  let url: string;
  const events: EvaluatedRequest[] = [];
  before(async () => {
    proxy = await startProxy({ workers: 0, now: () => clock, trust: 'everyone', sink: { record: (e) => events.push(e) } });
    url = proxy.url();
  });
  after(() => proxy.close());

  it('count long header values exactly: each value apart, the same value together', async () => {
    const a = 'a'.repeat(12 * 1024);
    const b = `${'a'.repeat(12 * 1024 - 1)}b`;
    const statuses: number[] = [];
    for (const key of [a, a, b, a, b, b]) statuses.push((await send(url, ZONE, '/per-key', { headers: { 'x-api-key': key } })).status);
    assert.deepEqual(statuses, [200, 200, 200, 429, 200, 429]);
    clock += 20_000;
  });

  it('count per the address the trusted proxy appended, not the one the client wrote first', async () => {
    events.length = 0;
    const statuses: number[] = [];
    // nginx's $proxy_add_x_forwarded_for: the client's own header, then the peer nginx saw.
    for (const forged of ['1.1.1.1', '2.2.2.2', '3.3.3.3']) statuses.push((await send(url, ZONE, '/per-ip', { headers: { 'x-forwarded-for': `${forged}, 198.51.100.4` } })).status);
    assert.deepEqual(statuses, [200, 200, 429]);
    assert.deepEqual(events.map((e) => e.clientIp), ['198.51.100.4', '198.51.100.4', '198.51.100.4']);
    clock += 20_000;
  });

  it('count an IPv6 client as one however its address is spelled', async () => {
    events.length = 0;
    const statuses: number[] = [];
    for (const spelling of ['2001:db8::1', '2001:0db8:0:0:0:0:0:1', '2001:DB8::0:1']) statuses.push((await send(url, ZONE, '/per-ip', { headers: { 'x-forwarded-for': spelling } })).status);
    assert.deepEqual(statuses, [200, 200, 429]);
    assert.deepEqual(events.map((e) => e.clientIp), ['2001:db8::1', '2001:db8::1', '2001:db8::1']);
    clock += 20_000;
  });
});
