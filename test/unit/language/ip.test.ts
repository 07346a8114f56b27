import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { IpAddr, IpRange } from '../../../server/src/language/ir';
import { compareIp, formatIp, ipEquals, ipInRanges, parseIpAddr, parseIpSetItem } from '../../../server/src/language/ip';
import type { LitResult } from '../../../server/src/language/literals';

type Err = { message: string; start: number; end: number; code: string; hint?: RegExp };

const show = (v: unknown) => JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? `${x}n` : x));

function ip(text: string): IpAddr {
  const r = parseIpAddr(text);
  if (!r.ok) assert.fail(`${text}: ${r.message}`);
  return r.value;
}

function expectErr<T>(r: LitResult<T>, e: Err, label: string): void {
  if (r.ok) assert.fail(`${label}: expected an error, got ${show(r)}`);
  assert.deepEqual({ message: r.message, start: r.start, end: r.end, code: r.code }, { message: e.message, start: e.start, end: e.end, code: e.code }, label);
  if (e.hint) assert.match(r.hint ?? '', e.hint, `${label}: hint`);
}

const ADDR = "couldn't parse address in network: invalid IP address syntax";

describe('parseIpAddr (Rust std syntax)', () => {
  const ok: [string, IpAddr][] = [
    ['192.0.2.1', { family: 4, n: 0xc0000201 }],
    ['0.0.0.0', { family: 4, n: 0 }],
    ['255.255.255.255', { family: 4, n: 0xffffffff }],
    ['12.34.56.78', { family: 4, n: 0x0c22384e }],
    ['::', { family: 6, n: 0n }],
    ['::1', { family: 6, n: 1n }],
    ['1::', { family: 6, n: 1n << 112n }],
    ['2001:db8::1', { family: 6, n: 0x20010db8000000000000000000000001n }],
    ['2001:DB8::1', { family: 6, n: 0x20010db8000000000000000000000001n }],
    ['1234::5678', { family: 6, n: 0x12340000000000000000000000005678n }],
    ['::ffff:1.2.3.4', { family: 6, n: 0xffff01020304n }],
    ['::ffff:12.34.56.78', { family: 6, n: 0xffff0c22384en }],
    ['::1.2.3.4', { family: 6, n: 0x01020304n }],
    ['64:ff9b::192.0.2.33', { family: 6, n: 0x0064ff9b0000000000000000c0000221n }],
    ['1:2:3:4:5:6:7:8', { family: 6, n: 0x00010002000300040005000600070008n }],
    ['1:2:3:4:5:6:7::', { family: 6, n: 0x00010002000300040005000600070000n }],
    ['::2:3:4:5:6:7:8', { family: 6, n: 0x00000002000300040005000600070008n }],
    ['1:2:3:4:5:6:1.2.3.4', { family: 6, n: 0x00010002000300040005000601020304n }],
    ['0000:0000::0001', { family: 6, n: 1n }],
    ['fe80::1', { family: 6, n: 0xfe800000000000000000000000000001n }],
  ];
  for (const [text, value] of ok) {
    test(text, () => {
      const r = parseIpAddr(text);
      if (!r.ok) assert.fail(`${text}: ${r.message}`);
      assert.deepEqual(r.value, value);
    });
  }

  const bad = [
    '1.1.1.01',
    '01.2.3.4',
    '1.2.3.04',
    '256.0.0.1',
    '1.2.3',
    '1.2.3.4.5',
    '1.2.3.4.',
    '1..2.3',
    '0000.0.0.0',
    '12345::',
    ':::',
    ':1::',
    '1:',
    '1::2::3',
    '1:2:3:4:5:6:7:8:9',
    '1:2:3:4:5:6:7:8::',
    '1:2:3:4:5:6:7',
    '::1.2.3.4:5',
    '::1.2.3.4.5',
    '1.2.3.4::',
    '1.2.3.4:1',
    '::ffff:1.2.3',
    '1:2:3:4:5:6::1.2.3.4',
    '::ffff:1.2.3.256',
  ];
  for (const text of bad) {
    test(`${text} is rejected`, () => expectErr(parseIpAddr(text), { message: ADDR, start: 0, end: text.length, code: 'invalid-ip' }, text));
  }

  test('a CIDR outside a set', () =>
    expectErr(
      parseIpAddr('192.0.2.0/24'),
      { message: ADDR, start: 0, end: 12, code: 'cidr-outside-set', hint: /a network is only allowed in a set: write `in \{192\.0\.2\.0\/24\}` instead of `eq` \(e\.g\. `ip\.src in \{192\.0\.2\.0\/24\}`\)/ },
      'cidr',
    ));
  test('an IPv6 CIDR outside a set', () =>
    expectErr(parseIpAddr('2001:db8::/32'), { message: ADDR, start: 0, end: 13, code: 'cidr-outside-set' }, 'cidr6'));
  test('a range outside a set', () =>
    expectErr(parseIpAddr('10.0.0.0..10.0.0.5'), { message: ADDR, start: 0, end: 18, code: 'invalid-ip', hint: /range is only allowed in a set/ }, 'range'));
  test('trailing characters that are not IP characters', () =>
    expectErr(parseIpAddr('1.2.3.4-5'), { message: 'unrecognised input', start: 7, end: 9, code: 'unrecognised-input' }, 'dash'));
  test('no IP character at all', () =>
    expectErr(parseIpAddr('-1'), { message: 'expected IP address character', start: 0, end: 2, code: 'invalid-ip' }, 'minus'));
});

describe('parseIpSetItem (cidr crate and ranges)', () => {
  const range = (a: string, b: string): IpRange => [ip(a), ip(b)];
  const ok: [string, IpRange][] = [
    ['12.34.56.78', range('12.34.56.78', '12.34.56.78')],
    ['12.34.56.0/24', range('12.34.56.0', '12.34.56.255')],
    ['12.34.56.0/32', range('12.34.56.0', '12.34.56.0')],
    ['0.0.0.0/0', range('0.0.0.0', '255.255.255.255')],
    ['::/10', range('::', '3f:ffff:ffff:ffff:ffff:ffff:ffff:ffff')],
    ['::/0', range('::', 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff')],
    ['::ffff:12.34.56.78/127', range('::ffff:12.34.56.78', '::ffff:12.34.56.79')],
    ['2001:db8::/32', range('2001:db8::', '2001:db8:ffff:ffff:ffff:ffff:ffff:ffff')],
    ['1234::5678', range('1234::5678', '1234::5678')],
    ['10.0.0.0..127.0.0.1', range('10.0.0.0', '127.0.0.1')],
    ['::1..::2', range('::1', '::2')],
    ['1.2.3.4..1.2.3.4', range('1.2.3.4', '1.2.3.4')],
    // The cidr crate's lenient IPv4 reader: leading zeros and short forms.
    ['1.1.1.01', range('1.1.1.1', '1.1.1.1')],
    ['010.0.0.1', range('10.0.0.1', '10.0.0.1')],
    ['10', range('10.0.0.0', '10.0.0.0')],
    ['10/8', range('10.0.0.0', '10.255.255.255')],
    ['192.168/16', range('192.168.0.0', '192.168.255.255')],
    ['10.0.0.0/08', range('10.0.0.0', '10.255.255.255')],
  ];
  for (const [text, value] of ok) {
    test(text, () => {
      const r = parseIpSetItem(text);
      if (!r.ok) assert.fail(`${text}: ${r.message}`);
      assert.deepEqual(r.value, value);
    });
  }

  const errors: [string, Err][] = [
    ['10.0.0.1/8', { message: 'host part of address was not zero', start: 0, end: 8, code: 'invalid-ip', hint: /10\.0\.0\.0\/8/ }],
    ['2001:db8::1/32', { message: 'host part of address was not zero', start: 0, end: 11, code: 'invalid-ip', hint: /2001:db8::\/32/ }],
    ['10.0.0.0/33', { message: 'invalid length for network: Network length 33 is too long for Ipv4 (maximum: 32)', start: 0, end: 11, code: 'invalid-ip' }],
    ['10.0.0.0/100', { message: 'invalid length for network: Network length 100 is too long for Ipv4 (maximum: 32)', start: 0, end: 12, code: 'invalid-ip' }],
    ['::/129', { message: 'invalid length for network: Network length 129 is too long for Ipv6 (maximum: 128)', start: 0, end: 6, code: 'invalid-ip' }],
    ['::1/560', { message: "couldn't parse length in network: number too large to fit in target type", start: 4, end: 7, code: 'invalid-ip' }],
    ['::/.1', { message: "couldn't parse length in network: invalid digit found in string", start: 3, end: 5, code: 'invalid-ip' }],
    ['10.0.0.0/8a', { message: "couldn't parse length in network: invalid digit found in string", start: 9, end: 11, code: 'invalid-ip' }],
    ['10.0.0.0/', { message: "couldn't parse length in network: cannot parse integer from empty string", start: 9, end: 9, code: 'invalid-ip' }],
    ['10.0.0.0.0/10', { message: ADDR, start: 0, end: 10, code: 'invalid-ip' }],
    ['1.2.3.4/8/8', { message: ADDR, start: 0, end: 7, code: 'invalid-ip' }],
    ['256.0.0.0', { message: ADDR, start: 0, end: 9, code: 'invalid-ip' }],
    ['1.2.3.4.5', { message: ADDR, start: 0, end: 9, code: 'invalid-ip' }],
    ['10.0.0.0..::1', { message: 'incompatible range bounds', start: 0, end: 13, code: 'incompatible-range-bounds', hint: /IPv4, or both IPv6/ }],
    ['::1..10.0.0.0', { message: 'incompatible range bounds', start: 0, end: 13, code: 'incompatible-range-bounds' }],
    ['127.0.0.1..10.0.0.0', { message: 'incompatible range bounds', start: 0, end: 19, code: 'incompatible-range-bounds', hint: /lower address first/ }],
    ['::2..::1', { message: 'incompatible range bounds', start: 0, end: 8, code: 'incompatible-range-bounds' }],
    ['1.1.1.01..1.1.1.2', { message: ADDR, start: 0, end: 8, code: 'invalid-ip' }],
    ['1.2.3.4..1.2.3', { message: ADDR, start: 9, end: 14, code: 'invalid-ip' }],
    ['1.2.3.4..', { message: ADDR, start: 9, end: 9, code: 'invalid-ip' }],
    ['1.2.3.4-5', { message: 'expected IP address character', start: 7, end: 9, code: 'invalid-ip' }],
    [',', { message: 'expected IP address character', start: 0, end: 1, code: 'invalid-ip' }],
  ];
  for (const [text, e] of errors) test(`${text} -> ${e.message}`, () => expectErr(parseIpSetItem(text), e, text));
});

describe('IP values', () => {
  const formats: [string, string][] = [
    ['192.0.2.1', '192.0.2.1'],
    ['0.0.0.0', '0.0.0.0'],
    ['::', '::'],
    ['::1', '::1'],
    ['1::', '1::'],
    ['2001:0db8:0000:0000:0000:0000:0002:0001', '2001:db8::2:1'],
    ['2001:db8:0:0:1:0:0:1', '2001:db8::1:0:0:1'],
    ['2001:db8:0:1:1:1:1:1', '2001:db8:0:1:1:1:1:1'],
    ['1:0:0:2:0:0:0:3', '1:0:0:2::3'],
    ['1:0:0:0:2:0:0:3', '1::2:0:0:3'],
    ['FE80::ABCD', 'fe80::abcd'],
    ['::ffff:1.2.3.4', '::ffff:1.2.3.4'],
    ['::1.2.3.4', '::102:304'],
    ['1:2:3:4:5:6:7:8', '1:2:3:4:5:6:7:8'],
  ];
  for (const [text, canonical] of formats) test(`formatIp(${text}) = ${canonical}`, () => assert.equal(formatIp(ip(text)), canonical));

  test('compareIp orders within a family only', () => {
    assert.equal(compareIp(ip('10.0.0.0'), ip('127.0.0.1')), -1);
    assert.equal(compareIp(ip('127.0.0.1'), ip('10.0.0.0')), 1);
    assert.equal(compareIp(ip('::1'), ip('::1')), 0);
    assert.equal(compareIp(ip('::2'), ip('::1')), 1);
    assert.equal(compareIp(ip('10.0.0.0'), ip('::1')), undefined);
    assert.equal(compareIp(ip('0.0.0.1'), ip('::1')), undefined);
  });

  test('ipEquals never equates IPv4 with IPv6 (no mapped equivalence)', () => {
    assert.equal(ipEquals(ip('1.2.3.4'), ip('1.2.3.4')), true);
    assert.equal(ipEquals(ip('1.2.3.4'), ip('::ffff:1.2.3.4')), false);
  });

  test('ipInRanges checks each family against its own ranges', () => {
    const set = ['10.0.0.0/8', '192.0.2.1', '2001:db8::/32', '172.16.0.1..172.16.0.9'].map((t) => {
      const r = parseIpSetItem(t);
      if (!r.ok) assert.fail(r.message);
      return r.value;
    });
    assert.equal(ipInRanges(ip('10.1.2.3'), set), true);
    assert.equal(ipInRanges(ip('11.0.0.0'), set), false);
    assert.equal(ipInRanges(ip('192.0.2.1'), set), true);
    assert.equal(ipInRanges(ip('192.0.2.2'), set), false);
    assert.equal(ipInRanges(ip('172.16.0.9'), set), true);
    assert.equal(ipInRanges(ip('172.16.0.10'), set), false);
    assert.equal(ipInRanges(ip('2001:db8:1::5'), set), true);
    assert.equal(ipInRanges(ip('::ffff:10.0.0.1'), set), false);
    assert.equal(ipInRanges(ip('::a00:1'), set), false);
    assert.equal(ipInRanges(ip('10.0.0.1'), []), false);
  });
});
