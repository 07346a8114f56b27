import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, createHmac } from 'node:crypto';
import type { Value } from '../../../server/src/language/ir';
import { JWT_VALID_FIELD, RUNTIME_FUNCTIONS, base64Decode, base64Encode, hmacSha256, sha256, urlDecodeOnce } from '../../../server/src/language/runtime/functions';
import type { CallEnv } from '../../../server/src/language/runtime/runtimeFunction';
import { utf8ToBinary } from '../../../server/src/language/bytes';
import { FUNCTIONS, MAGIC_FIREWALL_FUNCTIONS } from '../../../server/src/language/scheme/index';
import { BYTES, arrayOf, type Type } from '../../../server/src/language/types';
import { map, v4, v6 } from './irBuilders';

type Args = readonly (Value | undefined)[];

/** Calls a function with every argument as a literal (prepared) and as a runtime value. */
function callBoth(name: string, args: Args, type?: Type, env?: CallEnv): [Value | undefined, Value | undefined] {
  const f = RUNTIME_FUNCTIONS.get(name);
  if (!f) assert.fail(`no runtime function ${name}`);
  const asLiterals = f.prepare(args, { type })(args, env);
  const asValues = f.prepare(args.map(() => undefined), { type })(args, env);
  return [asLiterals, asValues];
}

type Case = [fn: string, args: Args, expected: Value | undefined, type?: Type];

function run(cases: readonly Case[]): void {
  for (const [fn, args, expected, type] of cases) {
    test(`${fn}(${args.map(show).join(', ')}) = ${show(expected)}`, () => {
      const [a, b] = callBoth(fn, args, type);
      assert.deepEqual(a, expected);
      assert.deepEqual(b, expected);
    });
  }
}

function show(v: Value | undefined): string {
  if (v === undefined) return 'missing';
  if (typeof v === 'bigint') return `${v}n`;
  if (v instanceof Map) return `Map(${[...v.keys()].join(',')})`;
  if (typeof v === 'object' && 'family' in v) return `ip:${v.n}`;
  return JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? `${x}n` : x));
}

describe('registry', () => {
  test('every scheme function has a runtime implementation', () => {
    for (const f of [...FUNCTIONS, ...MAGIC_FIREWALL_FUNCTIONS]) assert.ok(RUNTIME_FUNCTIONS.has(f.name), f.name);
  });
});

describe('concat and coalesce', () => {
  run([
    ['concat', ['a', 'b', 'c'], 'abc'],
    ['concat', ['a', undefined, 'c'], 'ac'],
    ['concat', [undefined, undefined], ''],
    ['concat', ['\x80', '\x81'], '\x80\x81'],
    ['concat', [['a'], ['b', 'c']], ['a', 'b', 'c'], arrayOf(BYTES)],
    ['concat', [['a'], undefined], ['a'], arrayOf(BYTES)],
    ['concat', [undefined, undefined], [], arrayOf(BYTES)],
    ['coalesce', [undefined, 'x', 'y'], 'x'],
    ['coalesce', ['', 'x'], ''],
    ['coalesce', [undefined, undefined], undefined],
    ['coalesce', [undefined, 7], 7],
  ]);
});

describe('cidr and cidr6', () => {
  run([
    ['cidr', [v4('192.0.2.77'), 24, 64], v4('192.0.2.0')],
    ['cidr', [v4('192.0.2.77'), 32, 64], v4('192.0.2.77')],
    ['cidr', [v4('192.0.2.77'), 1, 64], v4('128.0.0.0')],
    ['cidr', [v4('255.255.255.255'), 31, 64], v4('255.255.255.254')],
    ['cidr', [v6(0x2001_0db8_1234_5678_9abc_def0_1234_5678n), 24, 64], v6(0x2001_0db8_1234_5678_0000_0000_0000_0000n)],
    ['cidr', [v6(0xffffn), 24, 128], v6(0xffffn)],
    ['cidr', [v6(0xffffn), 24, 120], v6(0xff00n)],
    ['cidr', [undefined, 24, 64], undefined],
    ['cidr6', [v4('192.0.2.77'), 64], v4('192.0.2.77')],
    ['cidr6', [v6(0x2001_0db8_1234_5678_9abc_def0_1234_5678n), 48], v6(0x2001_0db8_1234_0000_0000_0000_0000_0000n)],
    ['cidr6', [undefined, 64], undefined],
  ]);
});

describe('Base64', () => {
  run([
    ['decode_base64', ['aGVsbG8='], 'hello'],
    ['decode_base64', ['aGVsbG8'], 'hello'],
    ['decode_base64', [''], ''],
    ['decode_base64', ['gA=='], '\x80'],
    ['decode_base64', ['+/8='], '\xfb\xff'],
    ['decode_base64', ['!!!!'], undefined],
    ['decode_base64', ['aGVsbG8=x'], undefined],
    ['decode_base64', ['a'], undefined],
    ['decode_base64', [undefined], undefined],
    ['encode_base64', ['hello'], 'aGVsbG8'],
    ['encode_base64', ['hello', 'p'], 'aGVsbG8='],
    ['encode_base64', ['\xfb\xff'], '+/8'],
    ['encode_base64', ['\xfb\xff', 'u'], '-_8'],
    ['encode_base64', ['\xfb\xff', 'up'], '-_8='],
    ['encode_base64', ['\xfb\xff', 'pu'], '-_8='],
    ['encode_base64', [''], ''],
    ['encode_base64', ['abc', 'p'], 'YWJj'],
    ['encode_base64', [undefined], undefined],
  ]);
  test('round trip over every byte', () => {
    let all = '';
    for (let i = 0; i < 256; i++) all += String.fromCharCode(i);
    for (const [u, p] of [
      [false, false],
      [false, true],
      [true, false],
      [true, true],
    ]) {
      const enc = base64Encode(all, u, p);
      let expected = Buffer.from(all, 'latin1').toString('base64');
      if (u) expected = expected.replace(/\+/g, '-').replace(/\//g, '_');
      if (!p) expected = expected.replace(/=+$/, '');
      assert.equal(enc, expected);
      assert.equal(base64Decode(enc, u), all);
    }
  });
});

describe('starts_with, ends_with, has_key, has_value', () => {
  run([
    ['starts_with', ['/api/x', '/api'], true],
    ['starts_with', ['/API/x', '/api'], false],
    ['starts_with', ['x', ''], true],
    ['starts_with', [undefined, '/api'], undefined],
    ['ends_with', ['a.php', '.php'], true],
    ['ends_with', ['a.PHP', '.php'], false],
    ['ends_with', ['\x80\x81', '\x81'], true],
    ['has_key', [map({ a: ['1'] }), 'a'], true],
    ['has_key', [map({ a: ['1'] }), 'A'], false],
    ['has_key', [undefined, 'a'], undefined],
    ['has_value', [['a', 'b'], 'b'], true],
    ['has_value', [['a', 'b'], 'c'], false],
    ['has_value', [[1, 2], 2], true],
    ['has_value', [[1, 2n ** 60n], 2n ** 60n], true],
    ['has_value', [[v4('1.2.3.4')], v4('1.2.3.4')], true],
    ['has_value', [[v4('0.0.0.1')], v6(1n)], false],
    ['has_value', [map({ k: 'v' }), 'v'], true],
    ['has_value', [map({ k: ['x', 'y'] }), ['x', 'y']], true],
    ['has_value', [map({ k: ['x', 'y'] }), ['x']], false],
    ['has_value', [[], 'a'], false],
    ['has_value', [undefined, 'a'], undefined],
  ]);
});

describe('join, split, len', () => {
  run([
    ['join', [['a', 'b', 'c'], ', '], 'a, b, c'],
    ['join', [['only'], ','], 'only'],
    ['join', [[], ','], ''],
    ['join', [undefined, ','], undefined],
    ['split', ['a,b,c', ',', 2], ['a', 'b,c']],
    ['split', ['a,b,c', ',', 128], ['a', 'b', 'c']],
    ['split', ['a,b,c', ',', 1], ['a,b,c']],
    ['split', ['a,b,c', ','], ['a', 'b', 'c']],
    ['split', ['', ',', 5], ['']],
    ['split', [',a,', ',', 10], ['', 'a', '']],
    ['split', ['a::b::c', '::', 10], ['a', 'b', 'c']],
    ['split', ['a\x80b', '\x80', 10], ['a', 'b']],
    ['split', [undefined, ',', 5], undefined],
    ['len', ['abc'], 3],
    ['len', ['\xc3\xa9'], 2],
    ['len', [''], 0],
    ['len', [['a', 'b']], 2],
    ['len', [undefined], undefined],
  ]);
});

describe('lookup_json_integer and lookup_json_string', () => {
  const doc = '{"a":{"b":[1,2,42]},"n":-5,"f":42.0,"e":1e2,"s":"x","big":9007199254740993,"huge":9223372036854775808,"min":-9223372036854775808}';
  run([
    ['lookup_json_integer', [doc, 'a', 'b', 2], 42],
    ['lookup_json_integer', [doc, 'n'], -5],
    ['lookup_json_integer', [doc, 'f'], undefined],
    ['lookup_json_integer', [doc, 'e'], undefined],
    ['lookup_json_integer', [doc, 's'], undefined],
    ['lookup_json_integer', [doc, 'big'], 9007199254740993n],
    ['lookup_json_integer', [doc, 'huge'], undefined],
    ['lookup_json_integer', [doc, 'min'], -(2n ** 63n)],
    ['lookup_json_integer', [doc, 'a', 'b', 3], undefined],
    ['lookup_json_integer', [doc, 'a', 0], undefined],
    ['lookup_json_integer', [doc, 'absent'], undefined],
    ['lookup_json_integer', ['[10, [20, 30]]', 1, 0], 20],
    ['lookup_json_integer', ['{"a":1', 'a'], undefined],
    ['lookup_json_integer', ['{"a":1} x', 'a'], undefined],
    ['lookup_json_integer', ['{"a":1,"a":2}', 'a'], 2],
    ['lookup_json_integer', [' { "a" : 7 } ', 'a'], 7],
    ['lookup_json_integer', [undefined, 'a'], undefined],
    ['lookup_json_string', ['{"a":"x"}', 'a'], 'x'],
    ['lookup_json_string', ['{"a":"caf\\u00e9"}', 'a'], 'caf\xc3\xa9'],
    ['lookup_json_string', ['{"a":"caf\xc3\xa9"}', 'a'], 'caf\xc3\xa9'],
    ['lookup_json_string', ['{"a":"\\ud83d\\ude00"}', 'a'], '\xf0\x9f\x98\x80'],
    ['lookup_json_string', ['{"a":"q\\"\\\\\\/\\n"}', 'a'], 'q"\\/\n'],
    ['lookup_json_string', ['{"a":1}', 'a'], undefined],
    ['lookup_json_string', ['{"a":{"b":["x","y"]}}', 'a', 'b', 1], 'y'],
    ['lookup_json_string', ['{"caf\xc3\xa9":"yes"}', 'caf\xc3\xa9'], 'yes'],
    ['lookup_json_string', ['not json', 'a'], undefined],
  ]);
});

describe('lower, upper: ASCII only', () => {
  run([
    ['lower', ['AbC-\xc3\x89'], 'abc-\xc3\x89'],
    ['upper', ['aBc-\xc3\xa9'], 'ABC-\xc3\xa9'],
    ['lower', [''], ''],
    ['lower', [undefined], undefined],
  ]);
});

describe('regex_replace', () => {
  run([
    ['regex_replace', ['aaa-bbb', '(a+)-(b+)', '${2}-${1}'], 'bbb-aaa'],
    ['regex_replace', ['a.b.c', '\\.', '/'], 'a/b.c'],
    ['regex_replace', ['abc', 'x', 'y'], 'abc'],
    ['regex_replace', ['abc', 'b', '$$'], 'a$c'],
    ['regex_replace', ['abc', 'b', '${9}'], 'ac'],
    ['regex_replace', ['abc', '(x)?b', '[${1}]'], 'a[]c'],
    ['regex_replace', ['ABC', '(?i)b', 'x'], 'AxC'],
    ['regex_replace', ['/old/path', '^/old/(.*)$', '/new/${1}'], '/new/path'],
    ['regex_replace', ['abc', '', '-'], '-abc'],
    ['regex_replace', ['caf\xc3\xa9', utf8ToBinary('(?u)é'), 'e'], 'cafe'],
    ['regex_replace', ['\x80\x81', '\\x81', 'x'], '\x80x'],
    ['regex_replace', ['abc', '(', 'x'], undefined],
    ['regex_replace', [undefined, 'a', 'b'], undefined],
  ]);
});

describe('remove_bytes, remove_query_args', () => {
  run([
    ['remove_bytes', ['www.example.com', '.w'], 'examplecom'],
    ['remove_bytes', ['a\x80b\x81', '\x80\x81'], 'ab'],
    ['remove_bytes', ['abc', ''], 'abc'],
    ['remove_bytes', [undefined, 'a'], undefined],
    ['remove_query_args', ['a=1&b=2&a=3&c', 'a'], 'b=2&c'],
    ['remove_query_args', ['a=1&b=2', 'a', 'b'], ''],
    ['remove_query_args', ['a&b=2', 'a'], 'b=2'],
    ['remove_query_args', ['a=1&b=2', 'c'], 'a=1&b=2'],
    ['remove_query_args', ['A=1&a=2', 'a'], 'A=1'],
    ['remove_query_args', ['', 'a'], ''],
    ['remove_query_args', [undefined, 'a'], undefined],
  ]);
});

describe('sha256 and HMAC', () => {
  run([
    ['sha256', [''], Buffer.from('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855', 'hex').toString('latin1')],
    ['sha256', ['abc'], Buffer.from('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad', 'hex').toString('latin1')],
    ['sha256', [undefined], undefined],
  ]);
  test('matches node:crypto for many lengths and bytes', () => {
    for (let len = 0; len < 300; len += 7) {
      let s = '';
      for (let i = 0; i < len; i++) s += String.fromCharCode((i * 131 + len) & 0xff);
      assert.equal(sha256(s), createHash('sha256').update(Buffer.from(s, 'latin1')).digest().toString('latin1'), `length ${len}`);
      const key = s.slice(0, len % 100);
      assert.equal(hmacSha256(key, s), createHmac('sha256', Buffer.from(key, 'latin1')).update(Buffer.from(s, 'latin1')).digest().toString('latin1'));
    }
    const longKey = 'k'.repeat(100);
    assert.equal(hmacSha256(longKey, 'm'), createHmac('sha256', longKey).update('m').digest().toString('latin1'));
  });
});

describe('substring, to_string', () => {
  run([
    ['substring', ['asdfghjk', 2, 5], 'dfg'],
    ['substring', ['asdfghjk', -2], 'jk'],
    ['substring', ['asdfghjk', 0, -2], 'asdfgh'],
    ['substring', ['asdfghjk', 2], 'dfghjk'],
    ['substring', ['asdfghjk', 5, 2], ''],
    ['substring', ['asdfghjk', 100], ''],
    ['substring', ['asdfghjk', -100, 2], 'as'],
    ['substring', ['\xc3\xa9x', 1], '\xa9x'],
    ['substring', [undefined, 1], undefined],
    ['to_string', [42], '42'],
    ['to_string', [-1], '-1'],
    ['to_string', [2n ** 62n], '4611686018427387904'],
    ['to_string', [true], 'true'],
    ['to_string', [false], 'false'],
    ['to_string', [v4('192.0.2.1')], '192.0.2.1'],
    ['to_string', [v6(0x2001_0db8_0000_0000_0000_0000_0000_0001n)], '2001:db8::1'],
    ['to_string', [undefined], undefined],
  ]);
});

describe('url_decode', () => {
  run([
    ['url_decode', ['a%20b+c'], 'a b c'],
    ['url_decode', ['%C3%A9'], '\xc3\xa9'],
    ['url_decode', ['%c3%a9'], '\xc3\xa9'],
    ['url_decode', ['%2541'], '%41'],
    ['url_decode', ['%2541', 'r'], 'A'],
    ['url_decode', ['%252541', 'r'], 'A'],
    ['url_decode', ['%2B', 'r'], ' '],
    ['url_decode', ['%zz%4'], '%zz%4'],
    ['url_decode', ['%u00e9'], '%u00e9'],
    ['url_decode', ['%u00e9', 'u'], '\xc3\xa9'],
    ['url_decode', ['%uD83D%uDE00', 'u'], '\xf0\x9f\x98\x80'],
    ['url_decode', ['%25u0041', 'ur'], 'A'],
    ['url_decode', ['%FF'], '\xff'],
    ['url_decode', [''], ''],
    ['url_decode', [undefined], undefined],
    // Escapes made by decoding, before and after: %%341 is %41 after one pass, A after two.
    ['url_decode', ['%%341', 'r'], 'A'],
    ['url_decode', ['%2%341', 'r'], '$1'],
    ['url_decode', ['%25%32%35%34%31+', 'r'], 'A '],
    ['url_decode', ['%u0025%u0034%u0031', 'ur'], 'A'],
    // A surrogate pair whose escapes were themselves escaped is one character; a lone half is U+FFFD.
    ['url_decode', ['%25uD83D%25uDE00', 'ur'], '\xf0\x9f\x98\x80'],
    ['url_decode', ['%25uD83Dx', 'ur'], '\xef\xbf\xbdx'],
  ]);

  test('"r" decodes until nothing changes, as pass after pass would, in one pass (a body of %2525…41 took 20 s)', () => {
    const passes = (s: string, u: boolean) => {
      let cur = urlDecodeOnce(s, u);
      for (let next = urlDecodeOnce(cur, u); next !== cur; next = urlDecodeOnce(cur, u)) cur = next;
      return cur;
    };
    const parts = ['%', '2', '5', '4', '1', '+', 'u', 'U', '0', 'B', 'f', 'x', '%25', '%2B', '%u00', '%u0025', 'D83D', 'DE00', '%uD83D', '%uDE00'];
    let seed = 7;
    const random = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
    for (let t = 0; t < 20_000; t++) {
      const s = Array.from({ length: 1 + random(12) }, () => parts[random(parts.length)]).join('');
      for (const flags of ['r', 'ur']) assert.equal(callBoth('url_decode', [s, flags])[0], passes(s, flags === 'ur'), `${JSON.stringify(s)} ${flags}`);
    }
    assert.equal(callBoth('url_decode', [`%${'25'.repeat(65_000)}41`, 'r'])[0], 'A');
  });
});

describe('uuidv4', () => {
  let seed = '';
  for (let i = 0; i < 32; i++) seed += String.fromCharCode(i);
  run([
    ['uuidv4', [seed], '00010203-0405-4607-8809-0a0b0c0d0e0f'],
    ['uuidv4', ['\xff'.repeat(16)], 'ffffffff-ffff-4fff-bfff-ffffffffffff'],
    ['uuidv4', [undefined], undefined],
  ]);
  test('a short seed still gives a version 4 UUID, deterministically', () => {
    const [a] = callBoth('uuidv4', ['x']);
    const [b] = callBoth('uuidv4', ['x']);
    assert.match(String(a), /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    assert.equal(a, b);
  });
});

describe('wildcard_replace', () => {
  run([
    ['wildcard_replace', ['https://example.com/a/b', 'https://*/*', 'x/${2}/${1}'], 'x/a/b/example.com'],
    ['wildcard_replace', ['HTTP://A/b', 'http://*/*', '${1}'], 'A'],
    ['wildcard_replace', ['HTTP://A/b', 'http://*/*', '${1}', 's'], 'HTTP://A/b'],
    ['wildcard_replace', ['http://A/b', 'http://*/*', '${1}', 's'], 'A'],
    ['wildcard_replace', ['/a', '/b*', 'x'], '/a'],
    ['wildcard_replace', ['/a', '/*', '$$${1}$'], '$a$'],
    ['wildcard_replace', ['/a', '/*', '[${5}]'], '[]'],
    ['wildcard_replace', ['/a*b', '/a\\*b', 'star'], 'star'],
    ['wildcard_replace', ['/aXb', '/a\\*b', 'star'], '/aXb'],
    ['wildcard_replace', [undefined, '*', 'x'], undefined],
  ]);
});

describe('is_timed_hmac_valid_v0', () => {
  const key = 'mysecretkey';
  const message = '/download/cat.jpg';
  const ts = 1484063787;
  const mac = createHmac('sha256', key).update(`${message}${ts}`).digest('base64');
  const token = `${message}?verify=${ts}-${encodeURIComponent(mac)}`;
  const urlSafe = createHmac('sha256', key).update(`${message}${ts}`).digest('base64url');
  run([
    ['is_timed_hmac_valid_v0', [key, token, 100, ts + 10, 8], true],
    ['is_timed_hmac_valid_v0', [key, `${message}?verify=${ts}-${mac}`, 100, ts + 10, 8], true],
    ['is_timed_hmac_valid_v0', [key, token, 100, ts + 100, 8], true],
    ['is_timed_hmac_valid_v0', [key, token, 100, ts + 101, 8], false],
    ['is_timed_hmac_valid_v0', [key, token, 100, ts - 1, 8], false],
    ['is_timed_hmac_valid_v0', ['otherkey', token, 100, ts + 10, 8], false],
    ['is_timed_hmac_valid_v0', [key, token.replace('cat', 'dog'), 100, ts + 10, 8], false],
    ['is_timed_hmac_valid_v0', [key, token, 100, ts + 10, 7], false],
    ['is_timed_hmac_valid_v0', [key, `${message}${ts}-${mac}`, 100, ts + 10], true],
    ['is_timed_hmac_valid_v0', [key, `${message}?v=${ts}-${urlSafe}`, 100, ts + 10, 3, 's'], true],
    ['is_timed_hmac_valid_v0', [key, `${message}?v=${ts}-${urlSafe}`, 100, ts + 10, 3], false],
    ['is_timed_hmac_valid_v0', [key, 'garbage', 100, ts, 0], false],
    ['is_timed_hmac_valid_v0', [key, undefined, 100, ts, 8], undefined],
  ]);
});

describe('is_jwt_valid reads the edge context from the field values', () => {
  const f = RUNTIME_FUNCTIONS.get('is_jwt_valid')!.prepare(['cfg-1']);
  const env = (m: Value | undefined): CallEnv => ({ fields: new Map(m === undefined ? [] : [[JWT_VALID_FIELD, m]]) });
  test('valid', () => assert.equal(f(['cfg-1'], env(map({ 'cfg-1': true }))), true));
  test('invalid', () => assert.equal(f(['cfg-1'], env(map({ 'cfg-1': false }))), false));
  test('other configuration', () => assert.equal(f(['cfg-1'], env(map({ 'cfg-2': true }))), false));
  test('no context: missing', () => assert.equal(f(['cfg-1'], env(undefined)), undefined));
  test('no env at all: missing', () => assert.equal(f(['cfg-1']), undefined));
});

describe('bit_slice', () => {
  const ipHeader = '\x45\x00\x00\x54';
  run([
    ['bit_slice', [ipHeader, 0, 4], 4],
    ['bit_slice', [ipHeader, 4, 8], 5],
    ['bit_slice', [ipHeader, 0, 16], 0x4500],
    ['bit_slice', [ipHeader, 0, 32], 0x45000054],
    ['bit_slice', ['\xff\xff\xff\xff\xff', 4, 36], 0xffffffff],
    ['bit_slice', [ipHeader, 3, 3], 0],
    ['bit_slice', [ipHeader, 0, 33], undefined],
    ['bit_slice', [ipHeader, 24, 40], undefined],
    ['bit_slice', [ipHeader, 8, 4], undefined],
    ['bit_slice', [undefined, 0, 4], undefined],
  ]);
});
