import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { checkRegex, compileRegex, formatRegexError, lazyRegex, regexCacheBytes, resetRegexCache, type CompiledRegex } from '../../../server/src/language/regex';

function re(pattern: string): CompiledRegex {
  const r = compileRegex(pattern);
  if (!r.ok) assert.fail(`${pattern}: ${r.message}`);
  return r.regex;
}

/** [pattern, input (binary string), expected search result] */
type Case = [pattern: string, input: string, expected: boolean];

function run(cases: readonly Case[]): void {
  for (const [pattern, input, expected] of cases) {
    test(`${JSON.stringify(pattern)} on ${JSON.stringify(input)} -> ${expected}`, () => assert.equal(re(pattern).test(input), expected));
  }
}

describe('byte semantics (Unicode mode off)', () => {
  run([
    ['abc', 'xabcx', true],
    ['^abc$', 'abc', true],
    ['^.$', '\x80', true],
    ['^.$', '\xff', true],
    ['^.$', '\n', false],
    ['^.$', '\xc3\xa9', false],
    ['^..$', '\xc3\xa9', true],
    ['(?s)^.$', '\n', true],
    ['\\w', '\xc3\xa9', false],
    ['\\W', '\xe9', true],
    ['\\d', '\xd9\xa3', false],
    ['\\s', '\xa0', false],
    ['\\s', '\x0b', true],
    ['\\bfoo\\b', 'a foo b', true],
    ['\\bfoo\\b', 'afoo', false],
    ['\\bfoo', '\xe9foo', true],
    ['\\Bfoo', 'afoo', true],
    ['\\xff', 'a\xff', true],
    ['\\xFF', '\xff', true],
    ['\\xc3\\xa9', 'caf\xc3\xa9', true],
    ['[^a]', '\x80', true],
    ['[\\x80-\\xff]', '\x7f', false],
    ['[\\x80-\\xff]', '\x90', true],
    ['(?i)ABC', 'abc', true],
    ['(?i)k', 'K', true],
    ['(?i)\\xc0', '\xe0', false],
    ['(?i)\\xc0', '\xc0', true],
    ['(?i)\\x41', 'a', true],
    ['(?i)[a-c]+$', 'xABC', true],
    ['(?i)[^a]', 'A', false],
    ['(?i)[\\xc0-\\xc1]', '\xe0', false],
    ['\\u0041', 'A', true],
    ['a$', 'a\n', false],
    ['(?m)a$', 'a\nb', true],
    ['^b', 'a\nb', false],
    ['(?m)^b', 'a\nb', true],
    ['\\Ab', 'ab', false],
    ['a\\z', 'ba', true],
    ['(?R).', '\r', false],
    ['\\a\\f\\t\\n\\r\\v', '\x07\x0c\t\n\r\x0b', true],
    ['\\.\\+\\*\\?\\(\\)\\|\\[\\]\\{\\}\\^\\$\\#\\&\\-\\~', '.+*?()|[]{}^$#&-~', true],
    ['\\%\\ ', '% ', true],
  ]);
});

describe('Unicode mode (?u)', () => {
  run([
    ['(?u)é', 'caf\xc3\xa9', true],
    ['(?u)^.$', '\xc3\xa9', true],
    ['(?u)^.$', '\xf0\x9f\x98\x80', true],
    ['(?u)^.$', '\x80', false],
    ['(?u)[^a]', '\xff', false],
    ['(?u)\\x{ff}', '\xc3\xbf', true],
    ['(?u)\\xff', '\xc3\xbf', true],
    ['(?u)^\\p{Greek}+$', '\xce\xb1\xce\xb2', true],
    ['(?u)\\p{Greek}', 'abc', false],
    ['(?u)\\pL', '\xc3\xa9', true],
    ['(?u)\\p{L}', '1', false],
    ['(?u)\\p{Letter}', 'x', true],
    ['(?u)\\p{greek}', '\xce\xb1', true],
    ['(?u)\\p{sc=Greek}', '\xce\xb1', true],
    ['(?u)\\P{Greek}', '\xce\xb1', false],
    ['(?u)\\p{^Greek}', 'a', true],
    ['(?u)\\p{Hangul}+', '\xed\x95\x9c', true],
    ['(?u)\\w', '\xc3\xa9', true],
    ['(?u)\\d', '\xd9\xa3', true],
    ['(?u)\\s', '\xc2\xa0', true],
    ['(?iu)é', '\xc3\x89', true],
    ['(?iu)σ', '\xcf\x82', true],
    ['(?iu)k', '\xe2\x84\xaa', true],
    ['(?u)[à-é]', '\xc3\xa8', true],
    ['(?u)[à-é]', '\xc3\xaa', false],
    ['(?u)é(?-u)\\xff', '\xc3\xa9\xff', true],
  ]);
});

describe('classes', () => {
  run([
    ['^[a-c]+$', 'abcab', true],
    ['[]a]', ']', true],
    ['[^]a]', ']', false],
    ['[a-]', '-', true],
    ['[-a]', '-', true],
    ['[\\]]', ']', true],
    ['[\\-]', '-', true],
    ['[[:alpha:]]+', '!a', true],
    ['[[:^alpha:]]', 'a', false],
    ['[[:digit:][:upper:]]', 'X', true],
    ['^[a-z&&[^aeiou]]+$', 'bcd', true],
    ['^[a-z&&[^aeiou]]+$', 'bad', false],
    ['^[a-z--[aeiou]]+$', 'bcd', true],
    ['^[a-c~~b-d]+$', 'ad', true],
    ['^[a-c~~b-d]+$', 'b', false],
    ['[a[xy]]', 'y', true],
    ['[\\d]', '5', true],
    ['[\\D]', '\x80', true],
    ['[\\x00-\\xff]', '\xff', true],
    ['[^\\x00-\\xff]', 'a', false],
  ]);
});

describe('repetition and flags', () => {
  run([
    ['^a{3}$', 'aaa', true],
    ['^a{3}$', 'aa', false],
    ['^a{2,}$', 'aaaa', true],
    ['^a{ 1 ,\t2 }$', 'aa', true],
    ['^a{1,2}$', 'aaa', false],
    ['^a{1001}$', 'a'.repeat(1001), true],
    ['^a{1001}$', 'a'.repeat(1000), false],
    ['^(?:a{600}){2}$', 'a'.repeat(1200), true],
    ['^a{0,1500}$', 'a'.repeat(1500), true],
    ['^a{0,1500}$', 'a'.repeat(1501), false],
    ['^x{2}{3}$', 'xxxxxx', true],
    ['a**', 'b', true],
    ['(?i:a)b', 'AB', false],
    ['(?i:a)b', 'Ab', true],
    ['a(?i)b|c', 'C', true],
    ['(?i)a(?-i)b', 'Ab', true],
    ['(?i)a(?-i)b', 'AB', false],
    ['(?x) a b # comment', 'ab', true],
    ['(?x) a\\ b', 'a b', true],
    ['(?x)[ a ]', ' ', false],
  ]);
});

describe('replaceFirst and captures', () => {
  const cases: [pattern: string, input: string, replacement: string, expected: string][] = [
    ['(a+)(b)?', 'xaab aab', '[${1}|$2|${2}|$$|$x|${9}]', 'x[aa|b|b|$|$x|] aab'],
    ['(?:x)(y)', 'xy', '${1}', 'y'],
    ['(?P<first>a)(?<second>b)', 'ab', '${2}${1}', 'ba'],
    ['a+?', 'aaa', '-', '-aa'],
    ['(?U)a+', 'aaa', '-', '-aa'],
    ['(?U)a+?', 'aaa', '-', '-'],
    ['^(a){3}$', 'aaa', '${1}', 'a'],
    ['(a){1500}', 'a'.repeat(1500), '[${1}]', '[a]'],
    ['\\xc3', 'caf\xc3\xa9', '-', 'caf-\xa9'],
    ['nope', 'abc', 'x', 'abc'],
    ['', 'abc', '-', '-abc'],
    ['b', 'abc', '${0}${0}', 'abbc'],
    ['b', 'abc', '$', 'a$c'],
  ];
  for (const [pattern, input, replacement, expected] of cases) {
    test(`${JSON.stringify(pattern)} in ${JSON.stringify(input)} by ${JSON.stringify(replacement)}`, () => {
      assert.equal(re(pattern).replaceFirst(input, replacement), expected);
    });
  }
  test('group count', () => {
    assert.equal(re('(a)(?:b)(?P<n>c)').groups, 2);
    assert.equal(re('(a){1500}').groups, 1);
  });
});

describe('errors (regex-syntax wording)', () => {
  const cases: [pattern: string, message: string][] = [
    ['é', 'Unicode not allowed here'],
    ['[é]', 'Unicode not allowed here'],
    ['\\x{ff}', 'Unicode not allowed here'],
    ['\\u00e9', 'Unicode not allowed here'],
    ['\\p{Greek}', 'Unicode not allowed here'],
    ['\\pL', 'Unicode not allowed here'],
    ['(?u)\\p{NoSuchThing}', 'Unicode property not found'],
    ['(?=a)', 'look-around, including look-ahead and look-behind, is not supported'],
    ['(?!a)', 'look-around, including look-ahead and look-behind, is not supported'],
    ['(?<=a)', 'look-around, including look-ahead and look-behind, is not supported'],
    ['(?<!a)', 'look-around, including look-ahead and look-behind, is not supported'],
    ['(a)\\1', 'backreferences are not supported'],
    ['\\0', 'backreferences are not supported'],
    ['*a', 'repetition operator missing expression'],
    ['(?i)*', 'repetition operator missing expression'],
    ['a|*', 'repetition operator missing expression'],
    ['a{', 'unclosed counted repetition'],
    ['a{2', 'unclosed counted repetition'],
    ['a{x}', 'repetition quantifier expects a valid decimal'],
    ['a{,}', 'repetition quantifier expects a valid decimal'],
    ['^a{,2}$', 'repetition quantifier expects a valid decimal'],
    ['(?)a', 'repetition operator missing expression'],
    ['a{2,1}', 'invalid repetition count range, the start must be <= the end'],
    ['(', 'unclosed group'],
    ['(a', 'unclosed group'],
    [')', 'unopened group'],
    ['a)', 'unopened group'],
    ['[a', 'unclosed character class'],
    ['[]', 'unclosed character class'],
    ['[z-a]', 'invalid character class range, the start must be <= the end'],
    ['[\\d-z]', 'invalid range boundary, must be a literal'],
    ['[a-\\d]', 'invalid range boundary, must be a literal'],
    ['[\\b]', 'invalid escape sequence found in character class'],
    ['[[:foo:]]', 'invalid ASCII character class'],
    ['\\q', 'unrecognized escape sequence'],
    ['\\', 'incomplete escape sequence, reached end of pattern prematurely'],
    ['\\x4', 'incomplete escape sequence, reached end of pattern prematurely'],
    ['\\x4g', 'invalid hexadecimal digit'],
    ['\\x{}', 'hexadecimal literal empty'],
    ['(?u)\\x{110000}', 'hexadecimal literal is not a Unicode scalar value'],
    ['(?z)', 'unrecognized flag'],
    ['(?ii)', 'duplicate flag'],
    ['(?i-s-m)', 'flag negation operator repeated'],
    ['(?-)', 'dangling flag negation operator'],
    ['(?i-)', 'dangling flag negation operator'],
    ['(?i', 'expected flag but got end of regex'],
    ['(?P<>a)', 'empty capture group name'],
    ['(?P<1a>a)', 'invalid capture group character'],
    ['(?P<a', 'unclosed capture group name'],
    ['(?P<a>x)(?P<a>y)', 'duplicate capture group name'],
    ['\\<', 'this word boundary assertion is not supported by Rulesmith (use \\b)'],
    ['\\b{start}', 'this word boundary assertion is not supported by Rulesmith (use \\b)'],
    ['a{1000000}', 'Compiled regex exceeds size limit of 10485760 bytes.'],
    ['(?:a{1000}){1000}', 'Compiled regex exceeds size limit of 10485760 bytes.'],
  ];
  for (const [pattern, message] of cases) {
    test(`${JSON.stringify(pattern)}: ${message}`, () => {
      const r = compileRegex(pattern);
      assert.equal(r.ok, false);
      if (!r.ok) assert.equal(r.message, message);
    });
  }

  test('the error carries its position in the pattern', () => {
    const r = compileRegex('ab[é]');
    assert.ok(!r.ok);
    if (!r.ok) assert.deepEqual([r.start, r.end], [3, 4]);
  });

  test('formatted like regex-syntax', () => {
    assert.equal(formatRegexError('é', { message: 'Unicode not allowed here', start: 0 }), 'regex parse error:\n    é\n    ^\nerror: Unicode not allowed here');
  });

  test('large but within the limit', () => {
    assert.equal(checkRegex('.{4079,65535}').ok, true);
    assert.equal(checkRegex('a{100000}').ok, true);
    assert.equal(compileRegex('a{5000}').ok, true);
  });
});

describe('the compiled-program cache is bounded by bytes', () => {
  test('checking a pattern builds and keeps no program', () => {
    resetRegexCache();
    assert.equal(checkRegex('a{300000}').ok, true);
    assert.equal(regexCacheBytes(), 0);
  });

  test('past its budget the least recently used programs go; the ones in use stay', () => {
    const budget = 1024 * 1024;
    resetRegexCache(budget);
    const kept = compileRegex('kept{1000}');
    const first = compileRegex('x0y{1000}');
    let most = 0;
    for (let i = 1; i < 200; i++) {
      compileRegex(`x${i}y{1000}`);
      assert.equal(compileRegex('kept{1000}'), kept, `evicted after ${i} others`);
      most = Math.max(most, regexCacheBytes());
    }
    assert.ok(most <= budget, `${most} > ${budget}`);
    assert.ok(most > budget / 2, `the cache stayed small: ${most}`);
    // The first of the others went long ago: asking again compiles a new program.
    assert.notEqual(compileRegex('x0y{1000}'), first);
    resetRegexCache();
  });

  test('a program larger than the whole budget is compiled but not kept', () => {
    resetRegexCache(1000);
    const a = compileRegex('a{1000}');
    assert.equal(a.ok, true);
    assert.equal(regexCacheBytes(), 0);
    assert.notEqual(compileRegex('a{1000}'), a);
    resetRegexCache();
  });
});

describe('the evaluator’s regexes (lazyRegex)', () => {
  test('compiled at first use, not before', () => {
    resetRegexCache();
    const re = lazyRegex('a{1000}');
    assert.equal(regexCacheBytes(), 0);
    assert.equal(re.test('a'.repeat(1000)), true);
    assert.ok(regexCacheBytes() > 0);
  });

  test('a large program is not held by the filter: after the cache drops it, it is compiled again', () => {
    resetRegexCache();
    const re = lazyRegex('b{1000}');
    assert.equal(re.test('b'.repeat(999)), false);
    resetRegexCache();
    assert.equal(re.test('b'.repeat(1000)), true);
    assert.ok(regexCacheBytes() > 0);
  });

  test('a small program is held: the cache is not asked again', () => {
    resetRegexCache();
    const re = lazyRegex('ab+c');
    assert.equal(re.test('xabbbc'), true);
    resetRegexCache();
    assert.equal(re.replaceFirst('xabcx', '-'), 'x-x');
    assert.equal(regexCacheBytes(), 0);
  });

  test('a pattern that does not compile gives no answer', () => {
    const re = lazyRegex('a{327680}');
    assert.equal(re.test('a'), undefined);
    assert.equal(re.replaceFirst('a', 'b'), undefined);
    resetRegexCache();
  });
});
