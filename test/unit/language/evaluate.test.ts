import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { compile, compileValue, type EvalContext } from '../../../server/src/language/evaluate';
import type { IrBool, Value } from '../../../server/src/language/ir';
import {
  BOOL,
  BYTES,
  INT,
  IP,
  all,
  and,
  any,
  arrayOf,
  at,
  bitAnd,
  bool,
  call,
  cmp,
  contains,
  dyn,
  each,
  eq,
  field,
  fields,
  ge,
  gt,
  inBytes,
  inInt,
  inIp,
  inList,
  key,
  le,
  lit,
  lt,
  map,
  mapOf,
  matches,
  ne,
  not,
  or,
  v4,
  v6,
  val,
  wildcard,
  xor,
} from './irBuilders';

// Field names used below and their types.
const b = field('b');
const c = field('c');
const n = field('n', INT);
const n2 = field('n2', INT);
const ok = field('ok', BOOL);
const ip = field('ip', IP);
const ip2 = field('ip2', IP);
const arr = field('arr', arrayOf(BYTES));
const arr2 = field('arr2', arrayOf(BYTES));
const nested = field('nested', arrayOf(arrayOf(BYTES)));
const m = field('m', mapOf(arrayOf(BYTES)));
const bools = field('bools', arrayOf(BOOL));
const mb = field('mb', mapOf(arrayOf(BOOL)));

const T: IrBool = bool(field('true', BOOL));
const F: IrBool = not(T);

type Case = [name: string, ir: IrBool, values: Record<string, Value>, expected: boolean];

function run(cases: readonly Case[], options: { nilNotEqual?: boolean } = {}, ctx?: EvalContext): void {
  for (const [name, ir, values, expected] of cases) {
    test(`${name} -> ${expected}`, () => {
      assert.equal(compile(ir, options).matches(fields(values), ctx), expected);
    });
  }
}

describe('Bytes comparisons are byte-exact', () => {
  run([
    ['eq exact', cmp(b, eq('abc')), { b: 'abc' }, true],
    ['eq is case-sensitive', cmp(b, eq('abc')), { b: 'ABC' }, false],
    ['eq \\x80 byte', cmp(b, eq('\x80')), { b: '\x80' }, true],
    ['eq: U+0080 as UTF-8 is two bytes, not \\x80', cmp(b, eq('\x80')), { b: '\xc2\x80' }, false],
    ['ne', cmp(b, ne('abc')), { b: 'abd' }, true],
    ['lt', cmp(b, lt('b')), { b: 'a' }, true],
    ['lt is unsigned byte order: \\x7f < \\x80', cmp(b, lt('\x80')), { b: '\x7f' }, true],
    ['lt: \\x80 is not below "a"', cmp(b, lt('a')), { b: '\x80' }, false],
    ['lt: prefix sorts first', cmp(b, lt('abc')), { b: 'ab' }, true],
    ['le equal', cmp(b, le('abc')), { b: 'abc' }, true],
    ['gt', cmp(b, gt('abc')), { b: 'abd' }, true],
    ['gt equal', cmp(b, gt('abc')), { b: 'abc' }, false],
    ['ge equal', cmp(b, ge('abc')), { b: 'abc' }, true],
    ['uppercase sorts before lowercase', cmp(b, lt('a')), { b: 'Z' }, true],
    ['contains', cmp(b, contains('ell')), { b: 'hello' }, true],
    ['contains is case-sensitive', cmp(b, contains('ELL')), { b: 'hello' }, false],
    ['contains empty needle', cmp(b, contains('')), { b: 'x' }, true],
    ['empty contains empty', cmp(b, contains('')), { b: '' }, true],
    ['contains a high byte', cmp(b, contains('\x81')), { b: '\x80\x81' }, true],
    ['in set', cmp(b, inBytes('a', 'b')), { b: 'b' }, true],
    ['in set, case-sensitive', cmp(b, inBytes('a', 'b')), { b: 'B' }, false],
    ['in empty set', cmp(b, inBytes()), { b: 'a' }, false],
  ]);
});

describe('matches: regex on bytes', () => {
  run([
    ['unanchored search', cmp(b, matches('b+')), { b: 'abbc' }, true],
    ['anchored', cmp(b, matches('^b')), { b: 'abc' }, false],
    ['case-sensitive by default', cmp(b, matches('ABC')), { b: 'abc' }, false],
    ['(?i) ASCII', cmp(b, matches('(?i)ABC')), { b: 'abc' }, true],
    ['(?i) does not fold high bytes', cmp(b, matches('(?i)\\xc0')), { b: '\xe0' }, false],
    ['. matches any byte but \\n', cmp(b, matches('^.$')), { b: '\x80' }, true],
    ['. does not match \\n', cmp(b, matches('^.$')), { b: '\n' }, false],
    ['. is one byte: é is two', cmp(b, matches('^.$')), { b: '\xc3\xa9' }, false],
    ['(?u). is one character', cmp(b, matches('(?u)^.$')), { b: '\xc3\xa9' }, true],
    ['\\w is ASCII', cmp(b, matches('\\w')), { b: '\xc3\xa9' }, false],
    ['\\xff is the byte 0xFF', cmp(b, matches('\\xff')), { b: 'a\xff' }, true],
    ['(?u) literal matches its UTF-8 bytes', cmp(b, matches('(?u)café')), { b: 'caf\xc3\xa9' }, true],
    ['(?u)\\p{Greek}', cmp(b, matches('(?u)^\\p{Greek}+$')), { b: '\xce\xb1\xce\xb2' }, true],
  ]);
});

describe('wildcard', () => {
  run([
    ['case-insensitive by default', cmp(b, wildcard('*.example.com')), { b: 'WWW.Example.COM' }, true],
    ['strict is case-sensitive', cmp(b, wildcard('*.example.com', true)), { b: 'WWW.Example.COM' }, false],
    ['strict exact', cmp(b, wildcard('*.example.com', true)), { b: 'www.example.com' }, true],
    ['whole value', cmp(b, wildcard('example')), { b: 'an example' }, false],
    ['star matches empty', cmp(b, wildcard('*')), { b: '' }, true],
    ['ASCII folding only: É vs é', cmp(b, wildcard('\xc3\xa9')), { b: '\xc3\x89' }, false],
    ['escaped star is literal', cmp(b, wildcard('a\\*b')), { b: 'axb' }, false],
    ['escaped star matches a star', cmp(b, wildcard('a\\*b')), { b: 'a*b' }, true],
  ]);
});

describe('Int comparisons', () => {
  const big = 2n ** 60n;
  run([
    ['eq', cmp(n, eq(5)), { n: 5 }, true],
    ['ne', cmp(n, ne(5)), { n: 6 }, true],
    ['lt negative', cmp(n, lt(0)), { n: -1 }, true],
    ['le', cmp(n, le(5)), { n: 5 }, true],
    ['gt', cmp(n, gt(5)), { n: 5 }, false],
    ['ge', cmp(n, ge(5)), { n: 5 }, true],
    ['bigint eq', cmp(n, eq(big)), { n: big }, true],
    ['number lt bigint', cmp(n, lt(big)), { n: 5 }, true],
    ['bigint gt number', cmp(n, gt(5)), { n: big }, true],
    ['bigint value equal to a number literal', cmp(n, eq(5)), { n: 5n }, true],
    ['& true', cmp(n, bitAnd(2)), { n: 6 }, true],
    ['& false', cmp(n, bitAnd(1)), { n: 6 }, false],
    ['& zero', cmp(n, bitAnd(0)), { n: -1 }, false],
    ['& beyond 32 bits', cmp(n, bitAnd(2 ** 40)), { n: 2 ** 40 + 1 }, true],
    ['& beyond 32 bits, no common bit', cmp(n, bitAnd(2 ** 40)), { n: 2 ** 41 }, false],
    ['& negative with a high bit', cmp(n, bitAnd(2n ** 62n)), { n: -1 }, true],
    ['& two negatives', cmp(n, bitAnd(-2147483648)), { n: -2147483648 }, true],
    ['in range (inclusive)', cmp(n, inInt([1, 5], [10, 10])), { n: 5 }, true],
    ['in single value', cmp(n, inInt([1, 5], [10, 10])), { n: 10 }, true],
    ['not in', cmp(n, inInt([1, 5], [10, 10])), { n: 6 }, false],
    ['in bigint range', cmp(n, inInt([big, big + 10n])), { n: big + 3n }, true],
    ['in negative range', cmp(n, inInt([-20, -10])), { n: -15 }, true],
  ]);
});

describe('Ip comparisons', () => {
  const mapped = v6(0xffff_c000_0201n); // ::ffff:192.0.2.1
  run([
    ['eq', cmp(ip, eq(v4('192.0.2.1'))), { ip: v4('192.0.2.1') }, true],
    ['ne', cmp(ip, ne(v4('192.0.2.1'))), { ip: v4('192.0.2.2') }, true],
    ['lt within v4', cmp(ip, lt(v4('10.0.0.2'))), { ip: v4('10.0.0.1') }, true],
    ['v4 never equals v6 (even mapped)', cmp(ip, eq(mapped)), { ip: v4('192.0.2.1') }, false],
    ['v4 vs v6: ne is true', cmp(ip, ne(mapped)), { ip: v4('192.0.2.1') }, true],
    ['v4 vs v6: lt is false', cmp(ip, lt(v6(1n))), { ip: v4('0.0.0.0') }, false],
    ['v4 vs v6: gt is false', cmp(ip, gt(v6(1n))), { ip: v4('0.0.0.0') }, false],
    ['v4 vs v6: ge is false', cmp(ip, ge(v6(0n))), { ip: v4('0.0.0.0') }, false],
    ['v6 lt v6', cmp(ip, lt(v6(2n))), { ip: v6(1n) }, true],
    ['in v4 CIDR', cmp(ip, inIp([v4('192.0.2.0'), v4('192.0.2.255')])), { ip: v4('192.0.2.7') }, true],
    ['not in v4 CIDR', cmp(ip, inIp([v4('192.0.2.0'), v4('192.0.2.255')])), { ip: v4('192.0.3.7') }, false],
    ['v4 not in a v6 range', cmp(ip, inIp([v6(0n), v6(2n ** 128n - 1n)])), { ip: v4('192.0.2.1') }, false],
    ['v6 in v6 range', cmp(ip, inIp([v6(0n), v6(2n ** 64n)])), { ip: v6(5n) }, true],
  ]);
});

describe('Bool operands and the pseudo-field true', () => {
  run([
    ['bare Bool true', bool(ok), { ok: true }, true],
    ['bare Bool false', bool(ok), { ok: false }, false],
    ['missing bare Bool is false', bool(ok), {}, false],
    ['not missing bare Bool is true', not(bool(ok)), {}, true],
    ['true without a value', T, {}, true],
    ['true even if given false', T, { true: false }, true],
  ]);
});

describe('missing values (Cloudflare: every comparison false)', () => {
  run([
    ['eq', cmp(b, eq('x')), {}, false],
    ['ne', cmp(b, ne('x')), {}, false],
    ['not eq', not(cmp(b, eq('x'))), {}, true],
    ['lt', cmp(b, lt('x')), {}, false],
    ['contains empty', cmp(b, contains('')), {}, false],
    ['matches', cmp(b, matches('')), {}, false],
    ['wildcard *', cmp(b, wildcard('*')), {}, false],
    ['in', cmp(b, inBytes('x')), {}, false],
    ['int ne', cmp(n, ne(1)), {}, false],
    ['&', cmp(n, bitAnd(1)), {}, false],
    ['ip ne', cmp(ip, ne(v4('1.2.3.4'))), {}, false],
    ['index out of range', cmp(at(arr, 5), eq('x')), { arr: ['x'] }, false],
    ['index out of range, ne', cmp(at(arr, 5), ne('x')), { arr: ['x'] }, false],
    ['index of a missing field', cmp(at(arr, 0), eq('x')), {}, false],
    ['absent map key', cmp(at(key(m, 'absent'), 0), eq('x')), { m: map({ a: ['x'] }) }, false],
    ['present map key', cmp(at(key(m, 'a'), 0), eq('x')), { m: map({ a: ['x'] }) }, true],
    ['map keys are exact bytes', cmp(at(key(m, 'A'), 0), eq('x')), { m: map({ a: ['x'] }) }, false],
    ['dynamic with a missing right side', cmp(b, dyn('eq', c)), { b: 'x' }, false],
    ['dynamic ne with a missing right side', cmp(b, dyn('ne', c)), { b: 'x' }, false],
    ['function of a missing argument', cmp(call('lower', [val(b)], BYTES), eq('')), {}, false],
  ]);
});

describe('missing values with nilNotEqual (wirefilter default: ne is true)', () => {
  run(
    [
      ['ne', cmp(b, ne('x')), {}, true],
      ['eq', cmp(b, eq('x')), {}, false],
      ['lt', cmp(b, lt('x')), {}, false],
      ['int ne', cmp(n, ne(1)), {}, true],
      ['index out of range, ne', cmp(at(arr, 5), ne('x')), { arr: [] }, true],
      ['not ne', not(cmp(b, ne('x'))), {}, false],
      ['dynamic ne, missing right side', cmp(b, dyn('ne', c)), { b: 'x' }, true],
      ['dynamic ne, missing left side', cmp(b, dyn('ne', c)), { c: 'x' }, true],
      ['present values are unaffected', cmp(b, ne('x')), { b: 'x' }, false],
    ],
    { nilNotEqual: true },
  );
});

describe('dynamic comparisons', () => {
  run([
    ['bytes eq', cmp(b, dyn('eq', c)), { b: 'x', c: 'x' }, true],
    ['bytes ne', cmp(b, dyn('ne', c)), { b: 'x', c: 'y' }, true],
    ['bytes lt', cmp(b, dyn('lt', c)), { b: '\x7f', c: '\x80' }, true],
    ['int gt', cmp(n, dyn('gt', n2)), { n: 3, n2: 2 }, true],
    ['int le mixed number/bigint', cmp(n, dyn('le', n2)), { n: 3, n2: 2n ** 60n }, true],
    ['ip eq', cmp(ip, dyn('eq', ip2)), { ip: v4('1.2.3.4'), ip2: v4('1.2.3.4') }, true],
    ['ip across families: ne', cmp(ip, dyn('ne', ip2)), { ip: v4('0.0.0.1'), ip2: v6(1n) }, true],
    ['ip across families: lt', cmp(ip, dyn('lt', ip2)), { ip: v4('0.0.0.1'), ip2: v6(2n) }, false],
    ['len vs len', cmp(call('len', [val(b)], INT), dyn('gt', call('len', [val(c)], INT))), { b: 'abc', c: 'ab' }, true],
  ]);
});

describe('lists', () => {
  const seen: [string, Value][] = [];
  const ctx: EvalContext = {
    lists: (name, value) => {
      seen.push([name, value]);
      return name === 'office' && typeof value === 'object' && 'family' in value && value.n === v4('10.0.0.1').n;
    },
  };
  run([['in $office', cmp(ip, inList('office')), { ip: v4('10.0.0.1') }, true]], {}, ctx);
  run([['not in $office', cmp(ip, inList('office')), { ip: v4('10.0.0.2') }, false]], {}, ctx);
  run([['other list', cmp(ip, inList('other')), { ip: v4('10.0.0.1') }, false]], {}, ctx);
  run([['no resolver: false', cmp(ip, inList('office')), { ip: v4('10.0.0.1') }, false]]);
  test('the resolver gets the list name and the value', () => {
    assert.deepEqual(seen[0], ['office', v4('10.0.0.1')]);
  });
  test('missing value: the resolver is not asked', () => {
    const before = seen.length;
    assert.equal(compile(cmp(ip, inList('office'))).matches(fields({}), ctx), false);
    assert.equal(seen.length, before);
  });
});

describe('logical operators', () => {
  run([
    ['and', and(T, T), {}, true],
    ['and false', and(T, F), {}, false],
    ['or', or(F, T), {}, true],
    ['or false', or(F, F), {}, false],
    ['three-way and', and(T, T, F), {}, false],
    ['three-way or', or(F, F, T), {}, true],
    ['xor T T', xor(T, T), {}, false],
    ['xor T F', xor(T, F), {}, true],
    ['xor folds left to right: T T T', xor(T, T, T), {}, true],
    ['xor T F F', xor(T, F, F), {}, true],
    ['xor T T F F', xor(T, T, F, F), {}, false],
    ['not not', not(not(T)), {}, true],
  ]);

  test('and / or short-circuit', () => {
    let calls = 0;
    const ctx: EvalContext = { lists: () => (calls++, true) };
    const probe = cmp(ip, inList('x'));
    const values = fields({ ip: v4('1.1.1.1') });
    assert.equal(compile(or(T, probe)).matches(values, ctx), true);
    assert.equal(compile(and(F, probe)).matches(values, ctx), false);
    assert.equal(compile(or(F, F, T, probe)).matches(values, ctx), true);
    assert.equal(compile(and(T, F, probe)).matches(values, ctx), false);
    assert.equal(calls, 0);
    assert.equal(compile(and(T, probe)).matches(values, ctx), true);
    assert.equal(calls, 1);
  });
});

describe('[*] streams, any and all', () => {
  const ab = { arr: ['a', 'b'] };
  run([
    ['any eq', any(cmp(each(arr), eq('b'))), ab, true],
    ['all eq', all(cmp(each(arr), eq('b'))), ab, false],
    ['all ne', all(cmp(each(arr), ne('z'))), ab, true],
    ['any of an empty array is false', any(cmp(each(arr), eq('a'))), { arr: [] }, false],
    ['all of an empty array is true', all(cmp(each(arr), eq('a'))), { arr: [] }, true],
    ['[*] over a missing field: any false', any(cmp(each(arr), eq('a'))), {}, false],
    ['[*] over a missing field: all true', all(cmp(each(arr), eq('a'))), {}, true],
    ['[*] over a missing map entry: any false', any(cmp(each(key(m, 'x')), eq('a'))), { m: map({}) }, false],
    ['[*] over a missing map entry: all true', all(cmp(each(key(m, 'x')), eq('a'))), { m: map({}) }, true],
    ['any of a missing Array<Bool> is false', any(bool(key(mb, 'x'))), { mb: map({}) }, false],
    ['all of a missing Array<Bool> is false', all(bool(key(mb, 'x'))), { mb: map({}) }, false],
    ['any of an Array<Bool> field', any(bool(bools)), { bools: [false, true] }, true],
    ['all of an Array<Bool> field', all(bool(bools)), { bools: [false, true] }, false],
    ['all of an empty Array<Bool>', all(bool(bools)), { bools: [] }, true],
    ['any of an Array<Bool> stream', any(bool(each(bools))), { bools: [false, true] }, true],
    ['map each over values', any(cmp(at(each(m), 1), eq('3'))), { m: map({ x: ['1'], y: ['2', '3'] }) }, true],
    ['map each, index after [*] drops missing elements', all(cmp(at(each(m), 1), eq('3'))), { m: map({ x: ['1'], y: ['2', '3'] }) }, true],
    ['nested [*][*]: any', any(cmp(each(each(nested)), eq('c'))), { nested: [['a', 'b'], ['c']] }, true],
    ['nested [*][*]: all', all(cmp(each(each(nested)), ne('z'))), { nested: [['a', 'b'], ['c']] }, true],
    ['nested [*][*]: all false', all(cmp(each(each(nested)), ne('b'))), { nested: [['a', 'b'], ['c']] }, false],
    ['nested [*][*] over empty inner arrays', any(cmp(each(each(nested)), eq('a'))), { nested: [[], []] }, false],
    ['map [*][*]', any(cmp(each(each(m)), eq('3'))), { m: map({ x: ['1'], y: ['2', '3'] }) }, true],
    ['not over a stream', all(not(cmp(each(arr), eq('z')))), ab, true],
    ['not over a stream, false', any(not(cmp(each(arr), inBytes('a', 'b')))), ab, false],
  ]);
});

describe('functions over [*]', () => {
  const lowered = call('lower', [val(each(arr))], BYTES);
  const ints = call('lookup_json_integer', [val(each(arr)), lit('a')], INT);
  run([
    ['lower(x[*])[*]', any(cmp(each(lowered), eq('b'))), { arr: ['A', 'B'] }, true],
    ['lower(x[*])[*] all', all(cmp(each(lowered), inBytes('a', 'b'))), { arr: ['A', 'B'] }, true],
    ['lower(x[*])[1]', cmp(at(lowered, 1), eq('b')), { arr: ['A', 'B'] }, true],
    ['missing results are dropped', cmp(call('len', [val(ints)], INT), eq(2)), { arr: ['{"a":1}', 'bad', '{"a":2}'] }, true],
    ['values survive', any(cmp(each(ints), eq(2))), { arr: ['{"a":1}', 'bad', '{"a":2}'] }, true],
    ['lifted over an empty array', cmp(call('len', [val(lowered)], INT), eq(0)), { arr: [] }, true],
    ['lifted over a missing array', cmp(call('len', [val(lowered)], INT), eq(0)), {}, true],
    [
      'lifted with a further argument',
      any(cmp(each(call('concat', [val(each(arr)), lit('!')], BYTES)), eq('b!'))),
      { arr: ['a', 'b'] },
      true,
    ],
    [
      'lifted over [*][*]',
      all(cmp(each(call('upper', [val(each(each(nested)))], BYTES)), inBytes('A', 'B', 'C'))),
      { nested: [['a', 'b'], ['c']] },
      true,
    ],
    ['Bool results lifted: any(starts_with(x[*], "a")[*])', any(bool(each(call('starts_with', [val(each(arr)), lit('a')], BOOL)))), { arr: ['xa', 'ab'] }, true],
  ]);
});

describe('Array<Bool> logic is element-wise over the shortest operand', () => {
  const x = cmp(each(arr), eq('x'));
  const y = cmp(each(arr2), eq('y'));
  run([
    ['and: lengths 3 and 2', all(and(x, y)), { arr: ['x', 'x', 'n'], arr2: ['y', 'y'] }, true],
    ['and: element false', all(and(x, y)), { arr: ['x', 'n'], arr2: ['y', 'y'] }, false],
    ['or', all(or(x, y)), { arr: ['n', 'x'], arr2: ['y', 'n'] }, true],
    ['or: an element with neither', any(not(or(x, y))), { arr: ['n', 'x'], arr2: ['n', 'n'] }, true],
    ['xor', any(xor(x, y)), { arr: ['x', 'x'], arr2: ['y', 'n'] }, true],
    ['xor all', all(xor(x, y)), { arr: ['x', 'x'], arr2: ['y', 'n'] }, false],
    ['an empty operand gives an empty result: all', all(and(x, y)), { arr: [], arr2: ['n'] }, true],
    ['an empty operand gives an empty result: any', any(or(x, y)), { arr: [], arr2: ['y'] }, false],
    ['a missing operand counts as empty', any(or(x, y)), { arr2: ['y'] }, false],
    ['not of a combination', all(not(and(x, y))), { arr: ['x', 'n'], arr2: ['n', 'y'] }, true],
  ]);
});

describe('compileValue', () => {
  test('a value expression', () => {
    const f = compileValue(call('concat', [val(b), lit('-'), val(c)], BYTES));
    assert.equal(f(fields({ b: 'a', c: 'z' })), 'a-z');
    assert.equal(f(fields({ b: 'a' })), 'a-');
  });
  test('a missing value', () => {
    assert.equal(compileValue(at(arr, 3))(fields({ arr: [] })), undefined);
  });
  test('a lifted call gives an array', () => {
    assert.deepEqual(compileValue(call('upper', [val(each(arr))], BYTES))(fields({ arr: ['a', 'b'] })), ['A', 'B']);
  });
});

describe('compiled filters are reusable', () => {
  test('one compile, many evaluations', () => {
    const f = compile(and(cmp(b, matches('^a')), any(cmp(each(arr), eq('x')))));
    assert.equal(f.matches(fields({ b: 'ab', arr: ['x'] })), true);
    assert.equal(f.matches(fields({ b: 'ba', arr: ['x'] })), false);
    assert.equal(f.matches(fields({ b: 'ab', arr: ['y'] })), false);
    assert.equal(f.matches(fields({ b: 'ab', arr: ['y', 'x'] })), true);
  });
});
