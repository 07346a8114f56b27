// contains.ts: the search made for a constant needle finds exactly what String.prototype.includes finds.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { containsSearch } from '../../../server/src/language/contains';

test('finds exactly what includes finds: needles of every length (written out up to 16 bytes, a loop past that), bytes and beyond, short and long values', () => {
  // A small alphabet makes near misses and overlapping matches common.
  const text = (max: number) => fc.array(fc.constantFrom('a', 'b', 'ab', '\x00', '\xff', 'é', 'ā', '\u{1F600}'), { maxLength: max }).map((cs) => cs.join(''));
  fc.assert(
    fc.property(fc.oneof(text(6), text(14)), fc.oneof(text(40), text(1200)), (needle, s) => {
      assert.equal(containsSearch(needle)(s), s.includes(needle), `${JSON.stringify(needle)} in ${JSON.stringify(s.slice(0, 80))}`);
    }),
    { numRuns: 3000 },
  );
});

test('exact cases: at the start, at the end, repeated last character, not found', () => {
  const admin = containsSearch('/admin');
  assert.equal(admin('/admin'), true);
  assert.equal(admin('/api/v1/admin/users'), true);
  assert.equal(admin('/x/admi'), false);
  assert.equal(admin('/adminn'.repeat(200) + '/'), true);
  assert.equal(containsSearch('aab')('aaaaab'), true);
  assert.equal(containsSearch('aab')('aaaaa'), false);
  assert.equal(containsSearch('')(''), true);
  const long = 'x-forwarded-for-header'; // 22 bytes: the loop, not the generated comparisons
  assert.equal(containsSearch(long)(`a ${long} b`), true);
  assert.equal(containsSearch(long)(`a ${long.slice(1)} b`), false);
});
