// A compressed request body over real sockets: the rules read it decoded (a payload inside a
// gzip is blocked as it is in the clear), the app gets the bytes as sent, and a body the
// proxy cannot decode is refused before it reaches the app.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { gzipSync } from 'node:zlib';
import { proxyTestFile, send, ZONE } from './proxyHarness';

const file = proxyTestFile({
  custom: [
    { action: 'block', expression: 'http.request.body.raw contains "evil"', description: 'evil body' },
    { action: 'block', expression: 'http.request.body.size gt 1000000', description: 'upload too large' },
  ],
});

const post = (url: string, body: Buffer, coding?: string) =>
  send(url, ZONE, '/form', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', ...(coding ? { 'content-encoding': coding } : {}) }, body });

describe('a request body with a Content-Encoding', () => {
  it('is read by the rules decoded: a gzip of a blocked body is blocked', () =>
    file.withProxy({}, async (p) => {
      assert.equal((await post(p.url(), Buffer.from('q=evil'))).status, 403);
      assert.equal((await post(p.url(), gzipSync('q=evil'), 'gzip')).status, 403);
      assert.deepEqual(file.upstream.seen, []);
    }));

  it('is no smaller to a size rule than what came: a 2 MB gzip that decodes past the limit is blocked as the plain upload is', () =>
    file.withProxy({}, async (p) => {
      const upload = Buffer.alloc(2_000_000, 'a');
      assert.equal((await post(p.url(), upload)).status, 403);
      assert.equal((await post(p.url(), gzipSync(upload, { level: 0 }), 'gzip')).status, 403);
    }));

  it('reaches the app as sent when the rules let it through', () =>
    file.withProxy({}, async (p) => {
      const gz = gzipSync('q=fine');
      assert.equal((await post(p.url(), gz, 'gzip')).status, 200);
      const seen = file.upstream.seen[0]!;
      assert.deepEqual([seen.headers['content-encoding'], seen.bodyBytes, Buffer.from(seen.body, 'latin1').equals(gz)], ['gzip', gz.length, true]);
    }));

  it('is refused when the proxy cannot decode it: 415 for an unknown coding, 400 for bytes that are not their coding', () =>
    file.withProxy({}, async (p, logs) => {
      const zstd = await post(p.url(), Buffer.from('q=evil'), 'zstd');
      assert.deepEqual([zstd.status, zstd.body], [415, '415 Unsupported Media Type: Content-Encoding "zstd": the rules could not read the body (the proxy decodes gzip, deflate and br)\n']);
      const bad = await post(p.url(), Buffer.from('q=evil'), 'gzip');
      assert.deepEqual([bad.status, bad.body], [400, '400 Bad Request: the body is not valid gzip (no gzip header)\n']);
      assert.deepEqual(file.upstream.seen, []);
      assert.equal(logs.filter((l) => / POST \/form (415|400) \(/.test(l)).length, 2, logs.join('\n'));
    }));
});
