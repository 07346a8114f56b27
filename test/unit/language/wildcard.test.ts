import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { utf8ToBinary } from '../../../server/src/language/bytes';
import { decodeQuoted, decodeRaw } from '../../../server/src/language/literals';
import { matchWildcard, parseWildcard, wildcardCaptures, type WildcardPattern } from '../../../server/src/language/wildcard';
import { GROWTH_BOUND, minCpuTime } from '../../cpuTime';

function pattern(p: string): WildcardPattern {
  const r = parseWildcard(p);
  if (!r.ok) assert.fail(`${p}: ${r.message}`);
  return r.value;
}

const SYNTAX = 'invalid wildcard: wildcard syntax error at position';

describe('parseWildcard', () => {
  const valid: [string, string[]][] = [
    ['', ['']],
    ['*', ['', '']],
    ['abc', ['abc']],
    ['*foo*bar*', ['', 'foo', 'bar', '']],
    ['\\*', ['*']],
    ['\\\\', ['\\']],
    ['\\**', ['*', '']],
    ['*\\**', ['', '*', '']],
    ['a\\\\*', ['a\\', '']],
    ['what?', ['what?']],
  ];
  for (const [p, parts] of valid) {
    test(`${JSON.stringify(p)} splits into ${JSON.stringify(parts)}`, () => assert.deepEqual(pattern(p).parts, parts));
  }

  const errors: [string, string][] = [
    ['\\foo', `${SYNTAX} 0: invalid escape sequence \\f`],
    ['f\\oo', `${SYNTAX} 1: invalid escape sequence \\o`],
    ['foo\\', `${SYNTAX} 3: incomplete escape sequence at the end of the wildcard`],
    ['\\', `${SYNTAX} 0: incomplete escape sequence at the end of the wildcard`],
    ['\\?', `${SYNTAX} 0: invalid escape sequence \\?`],
    ['*foo\\bar*', `${SYNTAX} 4: invalid escape sequence \\b`],
    // Escape errors come before the double-star check, wherever they are.
    ['**\\x', `${SYNTAX} 2: invalid escape sequence \\x`],
    // Positions count decoded bytes: é is two bytes.
    [utf8ToBinary('é\\d'), `${SYNTAX} 2: invalid escape sequence \\d`],
    // A non-ASCII byte after the backslash is shown as that byte's Latin-1 character.
    ['\\\xe9', `${SYNTAX} 0: invalid escape sequence \\\xe9`],
    ['*foo**bar*', 'wildcard contains a double star'],
    ['**', 'wildcard contains a double star'],
    ['a***', 'wildcard contains a double star'],
  ];
  for (const [p, message] of errors) {
    test(`${JSON.stringify(p)} -> ${message}`, () => {
      const r = parseWildcard(p, { literalLength: p.length + 2 });
      if (r.ok) assert.fail('expected an error');
      assert.deepEqual({ message: r.message, start: r.start, end: r.end, code: r.code }, { message, start: 0, end: p.length + 2, code: 'invalid-wildcard' });
    });
  }

  test('a literal star is "\\\\*" in a quoted string and r"\\*" in a raw string', () => {
    for (const decoded of [decodeQuoted('"\\\\*"'), decodeRaw('r"\\*"')]) {
      if (!decoded.ok) assert.fail(decoded.message);
      assert.deepEqual(pattern(decoded.value).parts, ['*']);
    }
  });

  test('escape errors explain the two layers of escaping', () => {
    const r = parseWildcard('\\d');
    assert.ok(!r.ok && /raw string/.test(r.hint ?? ''));
  });

  test('star limit', () => {
    assert.ok(parseWildcard('*_*_*', { starLimit: 3 }).ok);
    const r = parseWildcard('*_*_*_*', { starLimit: 3 });
    assert.ok(!r.ok && r.message === 'wildcard has 4 star metacharacters, but the limit is 3');
    // The limit is checked before the double star.
    const both = parseWildcard('****', { starLimit: 3 });
    assert.ok(!both.ok && both.message === 'wildcard has 4 star metacharacters, but the limit is 3');
  });
});

describe('matchWildcard', () => {
  // [pattern, value, case-sensitive?, expected]
  const cases: [string, string, boolean, boolean][] = [
    ['*', '', true, true],
    ['*', 'abc', true, true],
    ['', '', true, true],
    ['', 'a', true, false],
    ['abc', 'abc', true, true],
    ['abc', 'abcd', true, false],
    ['abc', 'ABC', false, true],
    ['abc', 'ABC', true, false],
    ['ABC', 'abc', false, true],
    ['*.example.com', 'www.example.com', false, true],
    ['*.example.com', 'example.com', false, false],
    ['*.example.com', 'WWW.EXAMPLE.COM', false, true],
    ['*.example.com', 'WWW.EXAMPLE.COM', true, false],
    ['/images/*', '/images/a.png', true, true],
    ['/images/*', '/img/a.png', true, false],
    ['*/admin/*', '/x/admin/y', true, true],
    ['a*b*c', 'abc', true, true],
    ['a*b*c', 'axxbyyc', true, true],
    ['a*b*c', 'acb', true, false],
    ['a*a', 'a', true, false],
    ['a*a', 'aa', true, true],
    ['*a*', 'bab', true, true],
    ['*a*', 'bbb', true, false],
    ['ab*ba', 'aba', true, false],
    ['ab*ba', 'abba', true, true],
    ['\\*', '*', true, true],
    ['\\*', 'a', true, false],
    ['\\\\', '\\', true, true],
    ['*\\**', 'a*b', true, true],
    ['*\\**', 'ab', true, false],
    ['*foo?*bar', 'xfoo?ybar', true, true],
    ['*foo?*bar', 'xfooaybar', true, false],
    // ASCII-only case folding: É and é differ in their second byte.
    [utf8ToBinary('É*'), utf8ToBinary('éa'), false, false],
    [utf8ToBinary('É*'), utf8ToBinary('Éa'), false, true],
    // Bytes outside UTF-8 match as bytes.
    ['\x80*\xff', '\x80abc\xff', true, true],
  ];
  for (const [p, value, cs, expected] of cases) {
    test(`${JSON.stringify(p)} ${cs ? 'strict ' : ''}vs ${JSON.stringify(value)} = ${expected}`, () =>
      assert.equal(matchWildcard(pattern(p), value, cs), expected));
  }

  test('no backtracking blow-up: time grows linearly with the value length', () => {
    // Ten stars before a piece the value lacks (c), and before the one it ends with (b):
    // backtracking would try every placement of the a's.
    const miss = pattern('*a*a*a*a*a*a*a*a*a*a*c*b');
    const hit = pattern('*a*a*a*a*a*a*a*a*a*a*b');
    const both = (n: number) => {
      const value = 'a'.repeat(n) + 'b';
      return () => {
        for (const cs of [true, false]) {
          assert.equal(matchWildcard(miss, value, cs), false);
          assert.equal(matchWildcard(hit, value, cs), true);
        }
      };
    };
    const t1 = minCpuTime(both(50_000));
    const t8 = minCpuTime(both(400_000));
    assert.ok(t8 / t1 < GROWTH_BOUND, `50k: ${t1} us, 400k: ${t8} us`);
  });
});

describe('wildcardCaptures', () => {
  const cases: [string, string, boolean, string[] | undefined][] = [
    ['* is a * style?', 'Lambic is a beer style?', true, ['Lambic', 'beer']],
    ['* is part of *', 'Lisboa is part of Portugal', true, ['Lisboa', 'Portugal']],
    ['*/*', 'a/b/c', true, ['a', 'b/c']],
    ['*-*-*', 'a-b-c-d', true, ['a', 'b', 'c-d']],
    ['*', 'abc', true, ['abc']],
    ['abc', 'abc', true, []],
    ['a*', 'a', true, ['']],
    ['*.EXAMPLE.com/*', 'www.example.COM/path/x', false, ['www', 'path/x']],
    ['https://*.example.com/*', 'https://a.b.example.com/', true, ['a.b', '']],
    ['*x', 'abc', true, undefined],
  ];
  for (const [p, value, cs, expected] of cases) {
    test(`${JSON.stringify(p)} on ${JSON.stringify(value)}`, () => assert.deepEqual(wildcardCaptures(pattern(p), value, cs), expected));
  }

  // Cross-check against a backtracking regex with lazy stars (the engine's own test oracle).
  test('agrees with ^(.*?)…$ on random patterns and values', () => {
    let seed = 12345;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed % n;
    };
    const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    for (let iter = 0; iter < 3000; iter++) {
      let p = '';
      let prevStar = false;
      const len = rand(7);
      for (let k = 0; k < len; k++) {
        const pick = rand(6);
        if (pick === 0 && !prevStar) {
          p += '*';
          prevStar = true;
        } else {
          p += pick === 1 ? '\\*' : 'aAb'[rand(3)];
          prevStar = false;
        }
      }
      let value = '';
      for (let k = rand(9); k > 0; k--) value += 'aAb*'[rand(4)];
      const parsed = pattern(p);
      const source = parsed.parts.map(escapeRe).join('(.*?)');
      for (const cs of [true, false]) {
        const m = new RegExp(`^${source}$`, cs ? 's' : 'si').exec(value);
        const expected = m ? m.slice(1) : undefined;
        assert.deepEqual(wildcardCaptures(parsed, value, cs), expected, `${p} on ${value} (${cs ? 'strict' : 'folded'})`);
        assert.equal(matchWildcard(parsed, value, cs), m !== null);
      }
    }
  });
});
