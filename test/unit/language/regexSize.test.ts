// The engine's compiled-size limit (regexSize.ts): our estimate accepts and refuses the
// same patterns as the engine, on both sides of the boundary (measured boundaries in
// test/diff/regexSizeBoundaries.ts; test/diff/regexSizeLimit.test.ts re-measures them).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { checkRegex } from '../../../server/src/language/regex';
import { checkExpression } from '../../../server/src/language/index';
import { SIZE_BOUNDARIES } from '../../diff/regexSizeBoundaries';

const SIZE_MESSAGE = 'Compiled regex exceeds size limit of 10485760 bytes.';
const at = (pattern: string, n: number) => pattern.replaceAll('N', String(n));

describe('the size limit at the engine’s boundary', () => {
  for (const b of SIZE_BOUNDARIES) {
    const max = b.ours?.max ?? b.engine;
    test(`${b.pattern}: N = ${max} is accepted, N = ${max + 1} refused${b.ours ? ` (the engine: ${b.engine}; ${b.ours.why})` : ''}`, () => {
      assert.equal(checkRegex(at(b.pattern, max)).ok, true);
      const over = checkRegex(at(b.pattern, max + 1));
      assert.equal(over.ok, false);
      if (!over.ok) assert.equal(over.message, SIZE_MESSAGE);
    });
  }

  test('where our Unicode classes differ, we refuse first (never accept what the engine refuses)', () => {
    for (const b of SIZE_BOUNDARIES.filter((x) => x.ours)) assert.ok(b.ours!.max < b.engine, b.pattern);
  });
});

describe('the estimate never builds the program', () => {
  test('nested counts far past the limit are refused, not expanded', () => {
    for (const p of ['((a{1000}){1000}){1000}', '(((a{4294967295}){4294967295}){4294967295}){4294967295}', '(?u)\\w{4294967295}']) {
      const r = checkRegex(p);
      assert.equal(r.ok, false, p);
      if (!r.ok) assert.equal(r.message, SIZE_MESSAGE);
    }
  });

  test('a count of zero costs nothing, whatever it repeats', () => {
    assert.equal(checkRegex('(a{4294967295}){0}b').ok, true);
  });
});

describe('the checker’s diagnostic', () => {
  test('the engine’s message, with a hint on how to shrink the pattern', () => {
    const r = checkExpression('http.user_agent matches "a{327680}"');
    const d = r.diagnostics.find((x) => x.code === 'invalid-regex');
    assert.ok(d);
    assert.equal(d.message, SIZE_MESSAGE);
    assert.match(d.hint ?? '', /^The engine compiles a counted repetition by copying its body/);
    assert.deepEqual([d.range.start, d.range.end], [24, 35]);
  });

  test('within the limit: no diagnostic', () => {
    assert.deepEqual(checkExpression('http.user_agent matches "a{327679}"').diagnostics, []);
  });
});
