// With --trust-proxy the client is the address the proxy in front appended (the last
// X-Forwarded-For entry), not one the client wrote itself; and an address is one client
// however it is spelled.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { canonicalAddress, edgeFields, type EdgeTrust } from '../../../server/src/proxy/edgeFields';

const base = { trust: 'everyone' as EdgeTrust, remoteAddress: '10.0.0.2', now: 1_700_000_000_000, rayId: '0011223344556677-LCL' };
const client = (headers: Record<string, string | string[]>, o: { trust?: EdgeTrust; remoteAddress?: string } = {}) => edgeFields({ ...base, ...o, headers }).clientIp;

describe('the client address behind a trusted proxy', () => {
  it('is the last X-Forwarded-For entry: the one the proxy in front appended', () => {
    // nginx's $proxy_add_x_forwarded_for: what the client sent, then the peer nginx saw.
    assert.equal(client({ 'x-forwarded-for': '1.2.3.4, 198.51.100.4' }), '198.51.100.4');
    assert.equal(client({ 'x-forwarded-for': '198.51.100.4' }), '198.51.100.4');
    // A client changing its own entry is still the same client.
    assert.deepEqual(['9.9.9.9, 198.51.100.4', '8.8.8.8,198.51.100.4', 'junk, 198.51.100.4'].map((x) => client({ 'x-forwarded-for': x })), ['198.51.100.4', '198.51.100.4', '198.51.100.4']);
    // Repeated headers in order (Node joins them with ", "; an array is the same).
    assert.equal(client({ 'x-forwarded-for': ['1.2.3.4', '203.0.113.5, 198.51.100.4'] }), '198.51.100.4');
  });

  it('is the socket peer when the last entry is not an address (never an earlier entry)', () => {
    assert.deepEqual(['198.51.100.4, ', '198.51.100.4, unknown', '198.51.100.4, 203.0.113.5:443', '198.51.100.4, 203.0.113.0/24'].map((x) => client({ 'x-forwarded-for': x })), ['10.0.0.2', '10.0.0.2', '10.0.0.2', '10.0.0.2']);
  });

  it('prefers CF-Connecting-IP, and ignores both headers without --trust-proxy', () => {
    assert.equal(client({ 'cf-connecting-ip': '192.0.2.77', 'x-forwarded-for': '198.51.100.4' }), '192.0.2.77');
    assert.equal(client({ 'cf-connecting-ip': '192.0.2.77', 'x-forwarded-for': '198.51.100.4' }, { trust: 'nobody' }), '10.0.0.2');
  });

  it('is in canonical text however it is spelled', () => {
    const spellings = ['2001:db8::1', '2001:0db8:0:0:0:0:0:1', '2001:DB8:0000::0001', '2001:db8:0:0::1'];
    assert.deepEqual(spellings.map((a) => client({ 'x-forwarded-for': `203.0.113.1, ${a}` })), ['2001:db8::1', '2001:db8::1', '2001:db8::1', '2001:db8::1']);
    assert.deepEqual(spellings.map((a) => client({}, { remoteAddress: a })), ['2001:db8::1', '2001:db8::1', '2001:db8::1', '2001:db8::1']);
    // IPv4-mapped IPv6 (a dual-stack socket, or a proxy that writes it so) is the IPv4 client.
    assert.deepEqual(['::ffff:198.51.100.4', '::FFFF:c633:6404', '0:0:0:0:0:ffff:198.51.100.4'].map((a) => client({ 'cf-connecting-ip': a })), ['198.51.100.4', '198.51.100.4', '198.51.100.4']);
    assert.equal(client({}, { remoteAddress: '::ffff:203.0.113.9' }), '203.0.113.9');
  });

  it('normalises an address, or says it is none', () => {
    assert.deepEqual(['2001:0DB8::0:1', ' 198.51.100.4 ', '::ffff:1:2:3', '::', '198.51.100.04', '1.2.3.4:80', 'fe80::1%eth0', ''].map(canonicalAddress), [
      '2001:db8::1',
      '198.51.100.4',
      '::ffff:1:2:3',
      '::',
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
  });
});
