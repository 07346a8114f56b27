import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { prepareFields } from '../../../server/src/language/fieldValues';
import type { Value } from '../../../server/src/language/ir';
import { JWT_VALID_FIELD } from '../../../server/src/language/runtime/functions';
import { httpScheme } from '../../../server/src/language/scheme/index';
import { v4, v6 } from './irBuilders';

function values(input: Record<string, unknown>): Record<string, Value> {
  const r = prepareFields(input, httpScheme);
  assert.deepEqual(r.errors, []);
  return Object.fromEntries(r.values);
}

function errors(input: Record<string, unknown>): string[] {
  return prepareFields(input, httpScheme).errors.map((e) => e.message);
}

describe('prepareFields: conversions', () => {
  const cases: [name: string, input: Record<string, unknown>, expected: Record<string, Value>][] = [
    ['Bytes as UTF-8', { 'http.host': 'a.example' }, { 'http.host': 'a.example' }],
    ['non-ASCII Bytes become UTF-8 bytes', { 'http.request.uri.path': '/café' }, { 'http.request.uri.path': '/caf\xc3\xa9' }],
    ['Bytes from hex', { 'http.request.body.raw': { hex: '00ff80' } }, { 'http.request.body.raw': '\x00\xff\x80' }],
    ['Bytes from hex with separators', { 'http.request.body.raw': { hex: '00:ff-80' } }, { 'http.request.body.raw': '\x00\xff\x80' }],
    ['Bytes from base64', { 'http.request.body.raw': { base64: 'gP8=' } }, { 'http.request.body.raw': '\x80\xff' }],
    ['Int', { 'cf.threat_score': 5 }, { 'cf.threat_score': 5 }],
    ['negative Int', { 'cf.threat_score': -5 }, { 'cf.threat_score': -5 }],
    ['bigint Int', { 'cf.threat_score': 2n ** 60n }, { 'cf.threat_score': 2n ** 60n }],
    ['small bigint becomes a number', { 'cf.threat_score': 7n }, { 'cf.threat_score': 7 }],
    ['Bool', { ssl: true }, { ssl: true }],
    ['IPv4', { 'ip.src': '192.0.2.1' }, { 'ip.src': v4('192.0.2.1') }],
    ['IPv6', { 'ip.src': '2001:db8::1' }, { 'ip.src': v6(0x2001_0db8_0000_0000_0000_0000_0000_0001n) }],
    ['Array<Bytes>', { 'http.request.uri.args.names': ['a', 'é'] }, { 'http.request.uri.args.names': ['a', '\xc3\xa9'] }],
    ['empty array', { 'http.request.uri.args.names': [] }, { 'http.request.uri.args.names': [] }],
    [
      'Map<Array<Bytes>>',
      { 'http.request.headers': { 'x-a': ['1'], 'x-é': ['2', '3'] } },
      { 'http.request.headers': new Map([['x-a', ['1']], ['x-\xc3\xa9', ['2', '3']]]) },
    ],
    ['null means not set', { 'http.host': null }, {}],
    ['the JWT edge context', { [JWT_VALID_FIELD]: { 'cfg-1': true } }, { [JWT_VALID_FIELD]: new Map([['cfg-1', true]]) }],
  ];
  for (const [name, input, expected] of cases) {
    test(name, () => assert.deepEqual(values(input), expected));
  }

  test('a JS Map is accepted for a Map field', () => {
    assert.deepEqual(values({ 'http.request.headers': new Map([['x', ['1']]]) }), { 'http.request.headers': new Map([['x', ['1']]]) });
  });

  test('ASCII text arrays are used as they are (every request has several); others are encoded into a copy', () => {
    const names = ['a', 'b'];
    const header = ['1', '2'];
    const mixed = ['1', 'é'];
    const v = values({ 'http.request.uri.args.names': names, 'http.request.headers': { 'x-a': header, 'x-b': mixed } });
    assert.equal(v['http.request.uri.args.names'], names);
    const headers = v['http.request.headers'] as Map<string, string[]>;
    assert.equal(headers.get('x-a'), header);
    assert.deepEqual(headers.get('x-b'), ['1', '\xc3\xa9']);
    assert.deepEqual(mixed, ['1', 'é'], 'the input is left as it was');
  });
});

describe('prepareFields: errors', () => {
  const cases: [name: string, input: Record<string, unknown>, expected: string[]][] = [
    ['unknown field with a suggestion', { 'http.hots': 'x' }, ['unknown field "http.hots" (did you mean http.host?)']],
    ['unknown field without a suggestion', { 'zzz.qqq.www': 'x' }, ['unknown field "zzz.qqq.www"']],
    ['bad IP', { 'ip.src': '300.1.1.1' }, ['ip.src: expected an IP address (Ip), got "300.1.1.1"']],
    ['CIDR is not an address', { 'ip.src': '10.0.0.0/8' }, ['ip.src: expected an IP address (Ip), got "10.0.0.0/8"']],
    ['IP as a number', { 'ip.src': 1 }, ['ip.src: expected an IP address (Ip), got 1']],
    ['fractional Int', { 'cf.threat_score': 1.5 }, ['cf.threat_score: expected an integer (Int), got 1.5']],
    ['Int as a string', { 'cf.threat_score': '5' }, ['cf.threat_score: expected an integer (Int), got "5"']],
    ['Int out of i64 range', { 'cf.threat_score': 2n ** 63n }, ['cf.threat_score: expected an integer (Int), got 9223372036854775808']],
    ['Bool as a string', { ssl: 'true' }, ['ssl: expected true or false (Bool), got "true"']],
    ['Bytes as a number', { 'http.host': 5 }, ['http.host: expected a string (Bytes), got 5']],
    ['bad hex', { 'http.request.body.raw': { hex: 'abc' } }, ['http.request.body.raw: expected a string (Bytes), got {"hex":"abc"}']],
    ['array expected', { 'http.request.uri.args.names': 'a' }, ['http.request.uri.args.names: expected an array (Array<Bytes>), got "a"']],
    ['array element', { 'http.request.uri.args.names': ['a', 1] }, ['http.request.uri.args.names[1]: expected a string (Bytes), got 1']],
    ['map expected', { 'http.request.headers': ['x'] }, ['http.request.headers: expected an object (Map<Array<Bytes>>), got ["x"]']],
    [
      'map value',
      { 'http.request.headers': { 'x-a': '1' } },
      ['http.request.headers["x-a"]: expected an array (Array<Bytes>), got "1"'],
    ],
    [
      'nested element',
      { 'http.request.headers': { 'x-a': ['1', false] } },
      ['http.request.headers["x-a"][1]: expected a string (Bytes), got false'],
    ],
    ['long values are shortened', { 'http.host': { a: 'x'.repeat(100) } }, [`http.host: expected a string (Bytes), got {"a":"${'x'.repeat(51)}...`]],
  ];
  for (const [name, input, expected] of cases) {
    test(name, () => assert.deepEqual(errors(input), expected));
  }

  test('good fields are kept next to bad ones', () => {
    const r = prepareFields({ 'http.host': 'a', 'ip.src': 'nope' }, httpScheme);
    assert.deepEqual([...r.values.keys()], ['http.host']);
    assert.deepEqual(
      r.errors.map((e) => e.field),
      ['ip.src'],
    );
  });

  test('never throws on odd input', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    assert.doesNotThrow(() => prepareFields({ 'http.host': cyclic, ssl: Symbol('x'), 'cf.threat_score': () => 1 }, httpScheme));
    assert.equal(prepareFields(null as unknown as Record<string, unknown>, httpScheme).errors.length, 1);
  });
});
