// The generated code (codegen.ts) against the closure compiler it stands in for: same
// result for every expression on every set of values, including values of the wrong type
// (field values that did not come through prepareFields) and missing ones.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compile, compileClosures } from '../../../server/src/language/evaluate';
import { FieldMap } from '../../../server/src/language/fieldSlots';
import type { IrBool, Value } from '../../../server/src/language/ir';
import { BOOL, INT, IP, and, arrayOf, at, bitAnd, bool, call, cmp, contains, dyn, eq, field, fields, ge, gt, inBytes, inInt, inIp, key, lit, lt, mapOf, matches, ne, not, or, v4, v6, val, wildcard, xor, BYTES } from './irBuilders';

const b = field('b');
const n = field('n', INT);
const ip = field('ip', IP);
const ok = field('ok', BOOL);
const arr = field('arr', arrayOf(BYTES));
const m = field('m', mapOf(arrayOf(BYTES)));

const EXPRESSIONS: readonly [string, IrBool][] = [
  ['bytes eq / ne / lt', or(cmp(b, eq('a')), cmp(b, ne('x')), cmp(b, lt('b')))],
  ['contains, and the empty needle', and(cmp(b, contains('dmi')), cmp(b, contains('')))],
  ['matches', cmp(b, matches('^(?i)ADM'))],
  ['wildcard', cmp(b, wildcard('*min'))],
  ['small and large byte sets', or(cmp(b, inBytes('a', 'admin')), cmp(b, inBytes(...Array.from({ length: 40 }, (_, i) => `v${i}`))))],
  ['int compare, bigint literal, bitwise and', xor(cmp(n, ge(3)), cmp(n, lt(2n ** 60n)), cmp(n, bitAnd(4)))],
  ['int set with a bigint range', cmp(n, inInt([1, 5], [2n ** 60n, 2n ** 61n]))],
  ['int set of numbers', cmp(n, inInt([1, 5], [9, 9]))],
  ['ip set, both families', cmp(ip, inIp([v4('10.0.0.0'), v4('10.255.255.255')], [v6(1n), v6(0xffffn)]))],
  ['ip eq', cmp(ip, eq(v4('10.0.0.1')))],
  ['not, bare bool', and(not(cmp(b, eq('x'))), bool(ok))],
  ['map key and array index', or(cmp(at(key(m, 'k'), 0), eq('v')), cmp(at(arr, 1), eq('y')))],
  ['function call', cmp(call('len', [val(b)], INT), gt(2))],
  ['function call with a literal', bool(call('starts_with', [val(b), lit('ad')], BOOL))],
  ['dynamic comparison', cmp(b, dyn('ne', field('c')))],
  // The same comparison in several branches is computed once (a memo local).
  ['repeated comparisons', or(and(cmp(b, contains('dmi')), cmp(n, eq(1))), and(cmp(b, contains('dmi')), cmp(n, eq(5))), and(not(cmp(b, contains('dmi'))), bool(ok)))],
  // Four or more needles on one field: one pass over the value finds them all (needleSet.ts).
  ['many contains on one field', or(...['dmi', 'adm', 'min', 'x', '\x80', 'zz', 'a'].map((x) => cmp(b, contains(x))), and(cmp(b, contains('dmi')), not(cmp(b, contains('zz')))))],
  ['more needles than one automaton holds (35)', or(...Array.from({ length: 35 }, (_, i) => cmp(b, contains(i === 33 ? 'min' : `n${i}`))))],
  ['repeated comparisons, missing side', or(and(cmp(b, ne('a')), cmp(n, eq(1))), and(cmp(b, ne('a')), cmp(n, ne(5))))],
];

/** The same values as a FieldMap (prepareFields' map, read by slot), with a field set and deleted on the way. */
function slotted(values: Record<string, Value>): FieldMap {
  const out = new FieldMap();
  out.set('b', 'stale');
  for (const [k, v] of Object.entries(values)) out.set(k, v);
  if (!('b' in values)) out.delete('b');
  return out;
}

const VALUES: readonly Record<string, Value>[] = [
  {},
  { b: 'admin', n: 5, ip: v4('10.0.0.1'), ok: true, arr: ['x', 'y'], m: new Map([['k', ['v']]]), c: 'admin' },
  { b: 'a', n: 2n ** 60n + 1n, ip: v6(2n), ok: false, arr: [], m: new Map(), c: 'b' },
  { b: '\x80\xff', n: -1, ip: v6(0x1_0000n), arr: ['x'] },
  // Wrong types: a number for Bytes, a string for Int and Ip, an array for a map.
  { b: 7, n: 'five', ip: '10.0.0.1', ok: 'yes', arr: 'xy', m: ['v'] as Value },
  { b: new Map() as Value, n: true, ip: [1, 2] as Value, m: 'k' },
];

for (const nilNotEqual of [false, true]) {
  test(`generated code and closures agree (nilNotEqual: ${nilNotEqual})`, () => {
    for (const [name, ir] of EXPRESSIONS) {
      const generated = compile(ir, { nilNotEqual });
      const closures = compileClosures(ir, { nilNotEqual });
      VALUES.forEach((values, i) => {
        const f = fields(values);
        const expected = closures.matches(f);
        assert.equal(generated.matches(f), expected, `${name}, values #${i}`);
        assert.equal(generated.matches(slotted(values)), expected, `${name}, values #${i} in a FieldMap`);
      });
    }
  });
}

test('compile generates one function per filter', () => {
  const a = compile(cmp(b, eq('a'))).matches;
  const c = compile(cmp(b, eq('a'))).matches;
  assert.equal(a.name, 'filter');
  assert.notEqual(a, c);
});

test('a FieldMap keeps its slots in step with the map through set, delete and clear', () => {
  const f = new FieldMap();
  const ir = cmp(b, eq('x'));
  const filter = compile(ir).matches;
  f.set('b', 'x');
  assert.equal(filter(f), true);
  f.set('b', 'y');
  assert.equal(filter(f), false);
  f.set('b', 'x');
  f.delete('b');
  assert.equal(filter(f), false);
  f.set('b', 'x');
  f.clear();
  assert.equal(filter(f), false);
  // A field first seen after the map was made (its slot is past the array's end).
  const late = compile(cmp(field('late.field.' + Date.now()), eq('x'))).matches;
  assert.equal(late(new FieldMap()), false);
});
