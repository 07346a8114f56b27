// PCRE (as CRS writes it) -> JavaScript RegExp on binary strings.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { compilePcre, translatePcre } from '../../../../server/src/language/runtime/crs/pcre';

const TRANSLATIONS: ReadonlyArray<readonly [string, string, string]> = [
  // [PCRE, JS source, JS flags]
  // ModSecurity 2 compiles with PCRE_DOTALL | PCRE_DOLLAR_ENDONLY: `.` is any byte, `$` the very end.
  ['(?i)select.+from', '[sS][eE][lL][eE][cC][tT][\\s\\S]+[fF][rR][oO][mM]', ''],
  ['(?-s)a.b', 'a[^\\n]b', ''],
  ['(?is)a.b', '[aA][\\s\\S][bB]', ''],
  ['(?i)a(?-i:b)c', '[aA](?:b)[cC]', ''],
  ['a(?i)b|c', 'a[bB]|[cC]', ''],
  ['(?i)[a-z\\x41\\xc3]', '[\\x61-\\x7a\\x41\\xc3\\x41-\\x5a\\x61]', ''],
  ['^abc$', '^abc$', ''],
  ['\\Aabc\\Z', '^abc(?=\\n?$)', ''],
  ['abc\\z', 'abc$', ''],
  ['a(?i:bc)d', 'a(?:[bB][cC])d', ''],
  ['(?i:[a-c]x)', '(?:[\\x61-\\x63\\x41-\\x43][xX])', ''],
  ['x(?:a(?i)b)c', 'x(?:a[bB])c', ''],
  ['a*+b', '(?=(?<__a1>a*))\\k<__a1>b', ''],
  ['\\s*+;[^;]++', '(?=(?<__a1>[\\t-\\r ]*))\\k<__a1>;(?=(?<__a2>[^\\x3b]+))\\k<__a2>', ''],
  ['(?:ab)?+c{2}+', '(?=(?<__a1>(?:ab)?))\\k<__a1>(?=(?<__a2>c{2}))\\k<__a2>', ''],
  ['\\?+$', '\\?+$', ''],
  ['a*?b+?', 'a*?b+?', ''],
  ['\\x{41}\\x{ff}\\x4', 'A\\xff\\x04', ''],
  ['\\h\\H', '[\\t \\xa0][^\\t \\xa0]', ''],
  ['\\R', '(?:\\r\\n|[\\n-\\r\\x85])', ''],
  ['\\s+\\S', '[\\t-\\r ]+[^\\t-\\r ]', ''],
  ['[\\s,]', '[\\t-\\r \\x2c]', ''],
  ['[]a]', '[\\x5d\\x61]', ''],
  ['[[:alpha:]_]', '[A-Za-z\\x5f]', ''],
  ['(?>ab|a)c', '(?=(?<__a1>ab|a))\\k<__a1>c', ''],
  ['(?P<n>a)\\1', '(?<n>a)\\1', ''],
  ['(?i)(?<nm>a)\\k<nm>', '(?<nm>[aA])\\k<nm>', ''],
  ['a(?#note)b', 'ab', ''],
  ['\\Qa.b\\E.', 'a\\.b[\\s\\S]', ''],
  ['\\e\\0\\012', '\\x1b\\x00\\x0a', ''],
  ['(?=a)(?!b)(?<=c)(?<!d)', '(?=a)(?!b)(?<=c)(?<!d)', ''],
  ['a/b', 'a\\/b', ''],
  ['^(?i)up', '^[uU][pP]', ''],
  ['(?m)^a$', '(?<=^|\\n)a(?=\\n|$)', ''],
];

describe('PCRE translation', () => {
  for (const [pcre, source, flags] of TRANSLATIONS) {
    test(`${pcre} -> /${source}/${flags}`, () => {
      const t = translatePcre(pcre);
      assert.ok(t.ok, t.ok ? '' : t.message);
      assert.equal(t.source, source);
      assert.equal(t.flags, flags);
      assert.doesNotThrow(() => new RegExp(t.source, t.flags));
    });
  }

  test('with numbered back-references, possessiveness is dropped and reported', () => {
    const t = translatePcre('(a)++(?>b)\\1');
    assert.ok(t.ok);
    assert.equal(t.source, '(?:(a)+)(?:b)\\1');
    assert.deepEqual(t.notes, ['possessive quantifiers and atomic groups are matched as ordinary ones (the pattern has back-references)']);
  });

  const UNTRANSLATABLE: ReadonlyArray<readonly [string, RegExp]> = [
    ['\\x{100}', /not a byte/],
    ['\\p{L}', /\\p is not supported/],
    ['a\\Gb', /\\G is not supported/],
    ['(?x) a b', /extended syntax/],
    ['(?(1)a|b)', /unsupported group syntax/],
    ['(*UTF8)a', /unsupported group syntax/],
    ['(a', /missing \)/],
    ['a)', /unmatched \)/],
    ['[a', /missing \]/],
    ['a\\', /ends with a backslash/],
  ];
  for (const [pcre, message] of UNTRANSLATABLE) {
    test(`untranslatable: ${pcre}`, () => {
      const t = translatePcre(pcre);
      assert.equal(t.ok, false);
      assert.match(t.ok ? '' : t.message, message);
    });
  }

  const MATCHES: ReadonlyArray<readonly [string, string, boolean]> = [
    ['^abc$', 'abc\n', false],
    ['^abc\\Z', 'abc\n', true],
    ['^abc$', 'abc\n\n', false],
    ['a.c', 'a\rc', true],
    ['a.c', 'a\nc', true],
    ['(?-s)a.c', 'a\nc', false],
    ['(?s)a.c', 'a\nc', true],
    ['\\s', '\xa0', false],
    ['\\h', '\xa0', true],
    ['[\\x80-\\xff]', '\xe9', true],
    ['[^\\x00-\\x7f]', 'abc', false],
    ['a(?i:b)c', 'aBc', true],
    ['a(?i:b)c', 'ABc', false],
    ['(?i)select.+from', 'SeLeCt * FrOm', true],
    ['(?i)\\xc3', '\xe3', false], // byte mode: only ASCII letters fold
    ['(?i)a(?-i)b', 'Ab', true],
    ['(?i)a(?-i)b', 'AB', false],
    ['\\x{3c}script', '<script', true],
    ['\\bunion\\b', 'x union y', true],
    // Possessive and atomic: no backtracking into what they matched.
    ['^a*+a', 'aaa', false],
    ['^a*a', 'aaa', true],
    ['^(?>a|ab)c', 'abc', false],
    ['^(?:a|ab)c', 'abc', true],
    ['^[^;]++;', 'x;', true],
  ];
  for (const [pcre, input, expected] of MATCHES) {
    test(`${pcre} on ${JSON.stringify(input)}: ${expected}`, () => {
      const r = compilePcre(pcre);
      assert.ok(r.ok, r.ok ? '' : r.message);
      assert.equal(r.regex.test(input), expected);
    });
  }
});

// Every @rx pattern and every /regex/ selector of the CRS 3.3.4 request rules (Debian's
// modsecurity-crs, which `npm test` installs) translates and compiles.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { parseSecLang, rulesOf } from '../../../../scripts/crs/seclang';

const CRS_RULES = '/usr/share/modsecurity-crs/rules';

describe('CRS 3.3.4 patterns', () => {
  test('every @rx pattern and regex selector of the REQUEST-9xx rules translates', { skip: !existsSync(CRS_RULES) && 'modsecurity-crs is not installed' }, () => {
    const failures: string[] = [];
    let count = 0;
    for (const file of readdirSync(CRS_RULES).filter((f) => /^REQUEST-9.*\.conf$/.test(f))) {
      for (const rule of rulesOf(parseSecLang(readFileSync(`${CRS_RULES}/${file}`, 'utf8'), file))) {
        for (const link of rule.links) {
          const patterns: string[] = [];
          if (link.operator && link.operator.name === 'rx' && link.operator.macros.parts.every((p) => p.kind === 'text')) patterns.push(link.operator.argument);
          for (const v of link.variables) if (v.selector?.kind === 'regex') patterns.push(v.selector.pattern);
          for (const p of patterns) {
            count++;
            const r = compilePcre(p);
            if (!r.ok) failures.push(`${rule.id}: ${r.message}`);
          }
        }
      }
    }
    assert.ok(count > 250, `only ${count} patterns found`);
    assert.deepEqual(failures, []);
  });
});
