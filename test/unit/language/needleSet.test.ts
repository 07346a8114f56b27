// needleSet.ts: one pass over a value finds exactly the needles String.prototype.includes finds.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { needleSet } from '../../../server/src/language/needleSet';

const found = (needles: readonly string[], s: string): number => needles.reduce((bits, n, i) => (s.includes(n) ? bits | (1 << i) : bits), 0);

test('the bits of the needles found are those includes finds: overlapping needles, suffixes of others, bytes and beyond', () => {
  // A small alphabet makes shared prefixes, suffix links and overlaps common.
  const text = (min: number, max: number) => fc.array(fc.constantFrom('a', 'b', 'ab', '\x00', '\xff', 'é', 'ā'), { minLength: min, maxLength: max }).map((cs) => cs.join(''));
  fc.assert(
    fc.property(fc.uniqueArray(text(1, 5).filter((x) => !/[^\x00-\xff]/.test(x)), { minLength: 1, maxLength: 30 }), text(0, 60), (needles, s) => {
      assert.equal(needleSet(needles)(s), found(needles, s), `${JSON.stringify(needles)} in ${JSON.stringify(s)}`);
    }),
    { numRuns: 2000 },
  );
});

test('exact cases: a needle inside another, at the end, none, and the 30-needle limit', () => {
  const paths = needleSet(['/admin', '/wp-admin', 'admin', '.php']);
  assert.equal(paths('/wp-admin/setup.php'), 0b1110); // not "/admin": a dash before it
  assert.equal(paths('/administrator'), 0b101);
  assert.equal(paths('/index.html'), 0);
  assert.equal(needleSet(Array.from({ length: 30 }, (_, i) => `n${i}`))('n29 n0'), (1 << 29) | 1 | (1 << 2)); // "n29" holds "n2" too
  assert.throws(() => needleSet(Array.from({ length: 31 }, (_, i) => `n${i}`)), /1 to 30 needles/);
});
