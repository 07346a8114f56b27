// --trust-proxy-from: the peers whose forwarding headers are trusted. Its ranges as parsed at
// startup (and each bad entry's error), the per-request decision on the socket peer in
// canonical form (an IPv4-mapped IPv6 peer is its IPv4 address), and the edge fields of a
// request from a peer outside every range: exactly those without --trust-proxy.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { forwardedHeaders } from '../../../server/src/proxy/forwarding';
import { canonicalIp, edgeFields, MAX_TRUSTED_RANGES, parseTrustedPeers, peerAddress, peerIp, trustsPeer, type TrustedPeers } from '../../../server/src/proxy/edgeFields';

const peers = (...values: string[]): TrustedPeers => {
  const p = parseTrustedPeers(values);
  if ('error' in p) throw new Error(p.error);
  return p;
};
const error = (...values: string[]) => {
  const p = parseTrustedPeers(values);
  return 'error' in p ? p.error : 'no error';
};
/** Whether `peer` (the socket's remoteAddress, as Node gives it) is trusted by `ranges`. */
const trusts = (ranges: TrustedPeers, peer: string) => trustsPeer(ranges, peerIp(peer));

const HEADERS = { 'cf-connecting-ip': '203.0.113.9', 'x-forwarded-for': '198.51.100.4', 'cf-ipcountry': 'jp', 'x-forwarded-proto': 'https' };
const base = { headers: HEADERS, now: 1_700_000_123_456, rayId: '0011223344556677-LCL' };

describe('--trust-proxy-from ranges', () => {
  it('takes comma-separated lists, repeated, of addresses and CIDR ranges of both families', () => {
    const p = peers('10.0.0.0/8, 192.0.2.7', '2001:db8::/32,2001:db8:1::5/128');
    assert.deepEqual(p.cidrs, ['10.0.0.0/8', '192.0.2.7', '2001:db8::/32', '2001:db8:1::5/128']);
    assert.deepEqual([p.v4.length, p.v6.length], [2, 2]);
    assert.deepEqual(
      ['10.0.0.1', '10.255.255.255', '11.0.0.0', '9.255.255.255', '192.0.2.7', '192.0.2.8', '2001:db8:ffff::1', '2001:db9::', '2001:db8:1::5', '::1'].map((a) => trusts(p, a)),
      [true, true, false, false, true, false, true, false, true, false],
    );
  });

  it('holds an IPv4-mapped IPv6 peer (as Node reports IPv4 clients of a `::` listener) when it holds its IPv4 address', () => {
    const p = peers('10.0.0.0/8');
    assert.deepEqual(canonicalIp('::ffff:10.0.0.1'), { family: 4, n: 0x0a000001 });
    assert.deepEqual(['::ffff:10.0.0.1', '::FFFF:10.1.2.3', '::ffff:a00:1', '::ffff:11.0.0.1', '::10.0.0.1'].map((a) => trusts(p, a)), [true, true, true, false, false]);
  });

  it('takes an IPv4-mapped range as the IPv4 one, and an IPv6 range holding all of ::ffff:0:0/96 as holding every IPv4 peer', () => {
    const mapped = peers('::ffff:10.0.0.0/104');
    assert.deepEqual(['10.0.0.1', '::ffff:10.0.0.1', '11.0.0.1'].map((a) => trusts(mapped, a)), [true, true, false]);
    const all6 = peers('::/0');
    assert.deepEqual(['2001:db8::1', '203.0.113.9', '::ffff:203.0.113.9'].map((a) => trusts(all6, a)), [true, true, true]);
    // A range beside the mapped block holds no IPv4 peer.
    assert.deepEqual(['2001:db8::1', '10.0.0.1'].map((a) => trusts(peers('2001:db8::/32'), a)), [true, false]);
  });

  it('never holds a peer that is not an address', () => {
    const p = peers('::/0', '0.0.0.0/0');
    assert.deepEqual(['', 'unknown', '1::2::3'].map((a) => trusts(p, a)), [false, false, false]);
  });

  it('names the socket peer as ip.src and X-Forwarded-For do: canonical, without a zone id, or as given when not an address', () => {
    assert.deepEqual(['fe80::1%eth0', '::ffff:10.0.0.1', '2001:DB8::0:1', 'unknown'].map(peerAddress), ['fe80::1', '10.0.0.1', '2001:db8::1', 'unknown']);
    const sent = forwardedHeaders({ host: 'app.test', 'x-forwarded-for': '203.0.113.5' }, { clientIp: 'fe80::1', peer: 'fe80::1%eth0', country: undefined, rayId: 'r', proto: 'http', port: 8081, trusted: false }, {});
    assert.equal(sent['x-forwarded-for'], '203.0.113.5, fe80::1');
  });

  it('holds a link-local peer by its address, whatever its zone id (Node reports fe80::1%eth0)', () => {
    const p = peers('fe80::/10');
    assert.deepEqual(['fe80::1%eth0', 'fe80::1', 'fe80::1%2', '2001:db8::1%eth0'].map((a) => trusts(p, a)), [true, true, true, false]);
  });

  it('refuses each bad entry, naming it and what is expected', () => {
    const like = '(like 10.0.0.0/8 or 2001:db8::/32)';
    assert.equal(error('10.0.0.0/33'), `--trust-proxy-from: "10.0.0.0/33" is not an IP address or CIDR range ${like}`);
    assert.equal(error('2001:db8::/129'), `--trust-proxy-from: "2001:db8::/129" is not an IP address or CIDR range ${like}`);
    assert.equal(error('10.0.0.0/8,edge.example.com'), `--trust-proxy-from: "edge.example.com" is not an IP address or CIDR range ${like}`);
    assert.equal(error('10.0.0.0/8', '256.0.0.1'), `--trust-proxy-from: "256.0.0.1" is not an IP address or CIDR range ${like}`);
    // Forms the rules' `ip.src in {…}` also reads, not taken here: short IPv4, A..B, a signed length.
    assert.equal(error('10/8'), `--trust-proxy-from: "10/8" is not an IP address or CIDR range ${like}`);
    assert.equal(error('10.0.0.1..10.0.0.9'), `--trust-proxy-from: "10.0.0.1..10.0.0.9" is not an IP address or CIDR range ${like}`);
    assert.equal(error('10.0.0.0/+8'), `--trust-proxy-from: "10.0.0.0/+8" is not an IP address or CIDR range ${like}`);
    assert.equal(error('10.0.0.0/'), `--trust-proxy-from: "10.0.0.0/" is not an IP address or CIDR range ${like}`);
    assert.equal(error('10.0.0.0/08'), `--trust-proxy-from: "10.0.0.0/08" is not an IP address or CIDR range ${like}`);
    assert.equal(error('fe80::1%eth0'), `--trust-proxy-from: "fe80::1%eth0" is not an IP address or CIDR range ${like}`);
    assert.equal(error('10.0.0.1/8'), '--trust-proxy-from: "10.0.0.1/8" has bits set past its /8 prefix; write the range with its first address (10.0.0.0/8), or 10.0.0.1 alone for that one address');
    assert.equal(error('2001:db8::1/32'), '--trust-proxy-from: "2001:db8::1/32" has bits set past its /32 prefix; write the range with its first address (2001:db8::/32), or 2001:db8::1 alone for that one address');
  });

  it('refuses an empty list and an empty entry', () => {
    assert.equal(error(), '--trust-proxy-from needs at least one IP address or CIDR range (like 10.0.0.0/8 or 2001:db8::/32)');
    assert.equal(error(''), '--trust-proxy-from needs at least one IP address or CIDR range (like 10.0.0.0/8 or 2001:db8::/32), got ""');
    assert.equal(error('10.0.0.0/8', ' '), '--trust-proxy-from needs at least one IP address or CIDR range (like 10.0.0.0/8 or 2001:db8::/32), got " "');
    assert.equal(error('10.0.0.0/8,'), '--trust-proxy-from: empty entry in "10.0.0.0/8,"; separate IP addresses or CIDR ranges with single commas (like 10.0.0.0/8,2001:db8::/32)');
    assert.equal(error('10.0.0.0/8,,192.0.2.1'), '--trust-proxy-from: empty entry in "10.0.0.0/8,,192.0.2.1"; separate IP addresses or CIDR ranges with single commas (like 10.0.0.0/8,2001:db8::/32)');
  });

  it(`takes at most ${MAX_TRUSTED_RANGES} ranges, counted across repeated flags`, () => {
    assert.equal(MAX_TRUSTED_RANGES, 1000);
    const addresses = Array.from({ length: 1001 }, (_, i) => `10.${Math.floor(i / 256)}.${i % 256}.0/24`);
    const most = peers(addresses.slice(0, 600).join(','), addresses.slice(600, 1000).join(','));
    assert.equal(most.v4.length, 1000);
    assert.deepEqual(['10.3.231.9', '10.3.232.9'].map((a) => trusts(most, a)), [true, false]);
    assert.equal(error(addresses.slice(0, 600).join(','), addresses.slice(600).join(',')), '--trust-proxy-from takes at most 1000 ranges, got 1001');
  });
});

describe('the edge fields with --trust-proxy-from', () => {
  it('from a peer in a range: taken from the forwarding headers, as with --trust-proxy', () => {
    const e = edgeFields({ ...base, remoteAddress: '::ffff:10.0.0.2', trust: peers('10.0.0.0/8') });
    assert.deepEqual([e.trusted, e.clientIp, e.country, e.edge.ssl], [true, '203.0.113.9', 'JP', 'true']);
    assert.deepEqual(e, edgeFields({ ...base, remoteAddress: '10.0.0.2', trust: 'everyone' }));
  });

  it('from a peer outside every range: exactly as without --trust-proxy', () => {
    const e = edgeFields({ ...base, remoteAddress: '::ffff:192.0.2.1', trust: peers('10.0.0.0/8', '2001:db8::/32') });
    assert.deepEqual([e.trusted, e.clientIp, e.country, e.edge.ssl], [false, '192.0.2.1', undefined, undefined]);
    assert.deepEqual(e, edgeFields({ ...base, remoteAddress: '192.0.2.1', trust: 'nobody' }));
  });

  it('without --trust-proxy, and with --trust-proxy alone, as before', () => {
    const none = edgeFields({ ...base, remoteAddress: '10.0.0.2', trust: 'nobody' });
    assert.deepEqual([none.trusted, none.clientIp], [false, '10.0.0.2']);
    const alone = edgeFields({ ...base, remoteAddress: '192.0.2.1', trust: 'everyone' });
    assert.deepEqual([alone.trusted, alone.clientIp], [true, '203.0.113.9']);
  });
});
