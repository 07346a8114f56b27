// Fields a live request has no local source for: trusted headers, the mapping file, defaults.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { edgeFields, MAX_FIELDS_ENTRIES, parseFieldsFile, type FieldsMapping } from '../../../server/src/proxy/edgeFields';
import { hostName, routeFor } from '../../../server/src/proxy/zones';
import { liveSampleRequest } from '../../../server/src/requests/live';
import { compileExpression } from '../../../server/src/language/index';
import { requestFields, requestValues } from '../../../server/src/requests/fields';

const MAPPING = parseFieldsFile(JSON.stringify([{ cidr: '203.0.113.0/24', country: 'DE', asn: 64500, bot_score: 12 }, { cidr: '2001:db8::/32', country: 'FR' }, { cidr: '0.0.0.0/0', asn: 1 }]), 'fields.json') as FieldsMapping;
const base = { headers: {}, trust: 'nobody' as const, now: 1_700_000_123_456, rayId: '0011223344556677-LCL' };

describe('edge fields', () => {
  it('takes the client from the socket, and the rest from the first mapping entry that holds it', () => {
    const e = edgeFields({ ...base, remoteAddress: '::ffff:203.0.113.9', mapping: MAPPING });
    assert.deepEqual(e.edge, {
      'ip.src': '203.0.113.9',
      'http.request.timestamp.sec': '1700000123',
      'http.request.timestamp.msec': '456',
      'cf.ray_id': '0011223344556677-LCL',
      'ip.src.country': 'DE',
      'ip.src.asnum': '64500',
      'cf.bot_management.score': '12',
    });
    assert.deepEqual(e.defaulted, ['cf.threat_score', 'cf.tls_version', 'cf.tls_cipher']);
    assert.equal(edgeFields({ ...base, remoteAddress: '2001:db8::1', mapping: MAPPING }).country, 'FR');
  });

  it('ignores forwarding headers unless the proxy is trusted', () => {
    const headers = { 'x-forwarded-for': '198.51.100.4, 10.0.0.1', 'cf-ipcountry': 'jp', 'x-forwarded-proto': 'https' };
    const untrusted = edgeFields({ ...base, headers, remoteAddress: '127.0.0.1' });
    assert.deepEqual([untrusted.clientIp, untrusted.country, untrusted.edge.ssl], ['127.0.0.1', undefined, undefined]);
    const trusted = edgeFields({ ...base, headers, trust: 'everyone', remoteAddress: '127.0.0.1', mapping: MAPPING });
    // The header's country wins over the file's; the file still gives the AS number. The
    // client is the last X-Forwarded-For entry (the one the proxy in front appended).
    assert.deepEqual([trusted.clientIp, trusted.country, trusted.asn, trusted.edge.ssl], ['10.0.0.1', 'JP', 1, 'true']);
    const cf = edgeFields({ ...base, headers: { ...headers, 'cf-connecting-ip': '192.0.2.77' }, trust: 'everyone', remoteAddress: '127.0.0.1' });
    assert.equal(cf.clientIp, '192.0.2.77');
  });

  it('refuses a mapping file with a clear error', () => {
    const bad = (v: unknown) => (parseFieldsFile(JSON.stringify(v), 'f.json') as { error: string }).error;
    assert.equal(bad({}), 'f.json: expected a JSON array of {"cidr": …, "country": …, "asn": …, "bot_score": …} entries');
    assert.equal(bad([{ cidr: '203.0.113.0/33' }]), 'f.json: entry 1 of 1: "cidr" must be an address range such as "203.0.113.0/24" or "2001:db8::/32", got "203.0.113.0/33"');
    assert.equal(bad([{ country: 'DE' }]), 'f.json: entry 1 of 1: "cidr" is required: the address range the entry is for, such as "203.0.113.0/24" or "2001:db8::/32"');
    assert.equal(bad([{ cidr: '10.0.0.1/8' }]), 'f.json: entry 1 of 1: "cidr" "10.0.0.1/8" has bits set past its /8 prefix; write the range with its first address (10.0.0.0/8)');
    assert.equal(bad([{ cidr: '10.0.0.0/8', country: 'de' }]), 'f.json: entry 1 of 1: "country" must be an upper-case ISO 3166-1 alpha-2 code such as "DE", got "de"');
    assert.equal(bad([{ cidr: '10.0.0.0/8', bot_score: 100 }]), 'f.json: entry 1 of 1: "bot_score" must be a whole number from 0 to 99, got 100');
    assert.equal(bad([{ cidr: '10.0.0.0/8', city: 'x' }]), 'f.json: entry 1 of 1: unknown key "city" (keys: cidr, country, asn, bot_score, threat_score)');
    assert.match((parseFieldsFile('[\n  {"cidr": "10.0.0.0/8",}\n]', 'f.json') as { error: string }).error, /^f\.json \(line 2, column 25\): not JSON \(/);
    assert.match(bad(Array.from({ length: MAX_FIELDS_ENTRIES + 1 }, () => 0)), /^f\.json: 1000001 entries; at most 1000000 \(merge adjacent ranges/);
    // A byte-order mark (an editor's UTF-8 with BOM) is not an error.
    assert.equal((parseFieldsFile('\uFEFF[{"cidr": "10.0.0.0/8", "asn": 7}]', 'f.json') as FieldsMapping).entries.length, 1);
  });

  it('looks an address up in the file\'s order among nested ranges, without scanning every entry', () => {
    const nested = parseFieldsFile(JSON.stringify([{ cidr: '10.1.2.0/24', asn: 3 }, { cidr: '10.0.0.0/8', asn: 1 }, { cidr: '10.1.0.0/16', asn: 2 }, { cidr: '::ffff:192.0.2.0/120', asn: 4 }, { cidr: '2001:db8::/32', asn: 5 }, { cidr: '2001:db8:1::1', asn: 6 }]), 'f.json') as FieldsMapping;
    const asn = (ip: string) => edgeFields({ ...base, remoteAddress: ip, mapping: nested }).asn;
    // The /16 comes after the /8 that holds it: never the first match; the /24 comes first.
    assert.deepEqual(['10.1.2.3', '10.1.3.4', '10.200.0.1', '11.0.0.1', '192.0.2.9', '::ffff:192.0.2.9', '2001:db8:1::1', '2001:db8::2', '2001:db9::1'].map(asn), [3, 1, 1, undefined, 4, 4, 5, 5, undefined]);
    // As many entries as a country table: each lookup stays a handful of Map gets.
    const many = parseFieldsFile(JSON.stringify(Array.from({ length: 200_000 }, (_, i) => ({ cidr: `${10 + (i >> 16)}.${(i >> 8) & 255}.${i & 255}.0/24`, asn: i }))), 'f.json') as FieldsMapping;
    assert.deepEqual(['10.0.5.1', '12.13.37.200', '2001:db8::1'].map((ip) => edgeFields({ ...base, remoteAddress: ip, mapping: many }).asn), [5, 2 * 65536 + 13 * 256 + 37, undefined]);
  });
});

describe('a live request as a sample', () => {
  it('gives the same fields as the request written in a sample, with the edge fields as metadata', () => {
    const sample = liveSampleRequest({
      method: 'POST',
      target: '/caf\xc3\xa9?q=1',
      httpVersion: '1.1',
      rawHeaders: ['Host', 'app.test', 'X-Name', 'J\xc3\xbcrgen', 'Content-Type', 'text/plain'],
      body: 'abc',
      bodySize: 10,
      edge: { 'ip.src': '203.0.113.9', 'ip.src.country': 'DE' },
    });
    // Header values stay the bytes that came (headerBytes); the fields read them as UTF-8 text.
    assert.deepEqual([sample.url, sample.headers[1], sample.headerBytes, sample.httpVersion, sample.bodySize], ['/café?q=1', ['X-Name', 'J\xc3\xbcrgen'], true, 'HTTP/1.1', 10]);
    const { fields, problems } = requestFields(sample);
    assert.deepEqual(problems, []);
    assert.deepEqual({ ...(fields['http.request.headers'] as object) }, { host: ['app.test'], 'x-name': ['Jürgen'], 'content-type': ['text/plain'] });
    assert.deepEqual(
      [fields['http.host'], fields['raw.http.request.uri.path'], fields['ip.src'], fields['ip.src.country'], fields['http.request.body.size'], fields['http.request.body.truncated']],
      ['app.test', '/café', '203.0.113.9', 'DE', 10, true],
    );
  });
});

describe('a live header that is not UTF-8', () => {
  it('reaches the rules as the bytes that came, in the header, cookie and user agent fields and ModSecurity\'s collections', () => {
    const sample = liveSampleRequest({ method: 'GET', target: '/', httpVersion: '1.1', rawHeaders: ['Host', 'app.test', 'X-T', 'caf\xe9', 'Cookie', 'a=\xe9', 'User-Agent', 'ua\xff'], body: '', bodySize: 0, edge: {} });
    const { values } = requestValues(sample);
    const matches = (expression: string) => {
      const { filter, diagnostics } = compileExpression(expression);
      assert.ok(filter, JSON.stringify(diagnostics));
      return filter.matches(values);
    };
    assert.equal(matches('http.request.headers["x-t"][0] eq "caf\\xe9"'), true);
    assert.equal(matches('http.request.headers["x-t"][0] eq "café"'), false);
    assert.equal(matches('http.request.cookies["a"][0] eq "\\xe9"'), true);
    assert.equal(matches('http.user_agent eq "ua\\xff"'), true);
    assert.equal(matches('len(http.cookie) == 3'), true);
  });
});

describe('host to zone', () => {
  const routes = [{ zoneId: '1', zoneName: 'example.com', upstream: new URL('http://u') }, { zoneId: '2', zoneName: 'api.example.com', upstream: new URL('http://u') }];
  it('strips the port, a trailing dot and .localhost; the longest zone name wins', () => {
    assert.deepEqual(['Example.COM:8081', 'www.example.com.', 'api.example.com.localhost:8081', 'v1.api.example.com', 'example.org', '[::1]:80', 'notexample.com'].map((h) => routeFor(routes, hostName(h))?.zoneId), ['1', '1', '2', '2', undefined, undefined, undefined]);
  });
});
