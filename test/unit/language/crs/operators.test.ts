// CRS operators (op.*) and collection helpers (crs.*), called through their runtime.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { prepareCrs, registerCrsData } from '../../../../server/src/language/runtime/crs';
import type { Value } from '../../../../server/src/language/ir';
import { parseIpAddr } from '../../../../server/src/language/ip';
import { phraseAutomaton } from '../../../../server/src/language/runtime/crs/operators';

const ip = (t: string): Value => {
  const r = parseIpAddr(t);
  assert.ok(r.ok);
  return r.value;
};

/** [operator, value, parameter (undefined when it takes none), expected] */
const CASES: ReadonlyArray<readonly [string, Value, Value | undefined, boolean]> = [
  ['op.rx', 'SELECT * FROM t', '(?i)select.+from', true],
  ['op.rx', 'selectfrom', '(?i)select.+from', false],
  ['op.rx', 'abc\n', '^abc$', false], // PCRE_DOLLAR_ENDONLY, as ModSecurity 2 compiles
  ['op.rx', 'a\nb', '^a.b$', true], // PCRE_DOTALL
  ['op.pm', 'I use WGET here', 'curl wget nikto', true],
  ['op.pm', 'nothing', 'curl wget nikto', false],
  ['op.pm', 'a.b', 'x a.b', true],
  ['op.detectSQLi', "1' or '1'='1", undefined, true],
  ['op.detectSQLi', 'hello world', undefined, false],
  ['op.detectXSS', '<script>alert(1)</script>', undefined, true],
  ['op.detectXSS', 'hello <b>world', undefined, false],
  ['op.validateByteRange', 'abc', '1-255', false],
  ['op.validateByteRange', 'a\0c', '1-255', true],
  ['op.validateByteRange', '&,-.', '38,44-46', false],
  ['op.validateByteRange', '&,-./', '38,44-46', true],
  ['op.validateByteRange', 'a b', '32-36, 38-126', false],
  ['op.validateUrlEncoding', 'a%20b%41', undefined, false],
  ['op.validateUrlEncoding', 'a%2', undefined, true],
  ['op.validateUrlEncoding', '%zz', undefined, true],
  ['op.validateUtf8Encoding', 'caf\xc3\xa9', undefined, false],
  ['op.validateUtf8Encoding', 'caf\xc3', undefined, true],
  ['op.validateUtf8Encoding', '\xc0\xaf', undefined, true],
  ['op.validateUtf8Encoding', '\xed\xa0\x80', undefined, true],
  ['op.streq', 'GET', 'GET', true],
  ['op.streq', 'get', 'GET', false],
  ['op.within', 'POST', 'GET HEAD POST OPTIONS', true],
  ['op.within', 'PUT', 'GET HEAD POST OPTIONS', false],
  ['op.within', 'EAD', 'GET HEAD POST OPTIONS', true],
  ['op.beginsWith', '/admin/x', '/admin', true],
  ['op.beginsWith', '/x/admin', '/admin', false],
  ['op.endsWith', 'a.php', '.php', true],
  ['op.endsWith', 'a.php5', '.php', false],
  ['op.contains', 'xx<scriptyy', '<script', true],
  ['op.contains', 'xx<SCRIPT', '<script', false],
  ['op.eq', 0, 0, true],
  ['op.eq', '12', 12, true],
  ['op.eq', 'abc', 0, true],
  ['op.gt', ' 42x', 41, true],
  ['op.gt', 41, 41, false],
  ['op.ge', 41, 41, true],
  ['op.lt', '-3', 0, true],
  ['op.le', 5, 4, false],
  ['op.ipMatch', ip('192.168.1.7'), '10.0.0.0/8,192.168.1.0/24', true],
  ['op.ipMatch', ip('192.168.2.7'), '10.0.0.0/8,192.168.1.0/24', false],
  ['op.ipMatch', ip('127.0.0.1'), '127.0.0.1, ::1', true],
  ['op.ipMatch', ip('::1'), '127.0.0.1, ::1', true],
  ['op.ipMatch', ip('2001:db8::5'), '2001:db8::/32', true],
];

describe('CRS operators', () => {
  for (const [op, value, param, expected] of CASES) {
    test(`${op}(${JSON.stringify(typeof value === 'object' ? 'ip' : value)}, ${JSON.stringify(param)}) = ${expected}`, () => {
      const call = prepareCrs(op, param === undefined ? [undefined] : [undefined, param]);
      assert.equal(call(param === undefined ? [value] : [value, param]), expected);
    });
  }

  test('a missing value gives a missing result', () => {
    assert.equal(prepareCrs('op.rx', [undefined, 'a'])([undefined, 'a']), undefined);
    assert.equal(prepareCrs('op.detectSQLi', [undefined])([undefined]), undefined);
  });

  test('bad parameters fail clearly when the call is prepared', () => {
    assert.throws(() => prepareCrs('op.rx', [undefined, '\\p{L}']), /op\.rx: the escape \\p is not supported/);
    assert.throws(() => prepareCrs('op.validateByteRange', [undefined, '1-300']), /bad byte range "1-300"/);
    assert.throws(() => prepareCrs('op.ipMatch', [undefined, 'nope']), /bad address "nope"/);
  });

  test('op.pmFromFile reads registered data files and fails clearly on an unknown one', () => {
    assert.throws(() => prepareCrs('op.pmFromFile', [undefined, 'no-such-file.data']), /no CRS data file "no-such-file.data" is registered/);
    registerCrsData('test-scanners.data', ['Nikto', 'sqlmap/']);
    const call = prepareCrs('op.pmFromFile', [undefined, 'test-scanners.data']);
    assert.equal(call(['Mozilla SQLMAP/1.0', 'test-scanners.data']), true);
    assert.equal(call(['Mozilla/5.0', 'test-scanners.data']), false);
  });
});

describe('CRS collection helpers', () => {
  const cookies = new Map<string, Value>([
    ['__utma', ['1']],
    ['__UTMZ', ['2']],
    ['SID', ['a', 'b']],
    ['other', ['c']],
  ]);

  test('crs.without drops keys case-insensitively', () => {
    const r = prepareCrs('crs.without', [undefined, 'sid', 'nothing'])([cookies, 'sid', 'nothing']) as Map<string, Value>;
    assert.deepEqual([...r.keys()], ['__utma', '__UTMZ', 'other']);
  });

  test('crs.without_matching drops keys the (case-insensitive) pattern matches', () => {
    const r = prepareCrs('crs.without_matching', [undefined, '^__utm'])([cookies, '^__utm']) as Map<string, Value>;
    assert.deepEqual([...r.keys()], ['SID', 'other']);
  });

  test('crs.values flattens the values in order', () => {
    assert.deepEqual(prepareCrs('crs.values', [undefined])([cookies]), ['1', '2', 'a', 'b', 'c']);
    assert.equal(prepareCrs('crs.values', [undefined])([undefined]), undefined);
  });

  test('crs.has_repeat: a value given twice, line-feed-only values aside; missing stays missing', () => {
    const repeats = prepareCrs('crs.has_repeat', [undefined]);
    assert.equal(repeats([['id', 'q', 'id']]), true);
    assert.equal(repeats([['id', 'ID', 'q']]), false); // the rule lower-cases first
    assert.equal(repeats([['\n', '\n', 'a']]), false);
    assert.equal(repeats([[]]), false);
    assert.equal(repeats([undefined]), undefined);
  });

  test('crs.join joins the values in order with the separator; missing stays missing', () => {
    assert.equal(prepareCrs('crs.join', [undefined, '\x00'])([['id', 'q', 'id'], '\x00']), 'id\x00q\x00id');
    assert.equal(prepareCrs('crs.join', [undefined, ','])([[], ',']), '');
    assert.equal(prepareCrs('crs.join', [undefined, ','])([undefined, ',']), undefined);
  });
});

describe('@pm with a long phrase list: the Aho–Corasick automaton', () => {
  const phrases = ['.htaccess', 'etc/passwd', 'ab', 'abc', 'bca', 'caa', 'xyzzy', 'she', 'he', 'hers', 'his', 'Proc/Self', '<!--', 'ÿþ', 'zz', 'rs.', '/p'];
  // ModSecurity's @pm: some phrase occurs in the value, ASCII letters compared without case.
  const reference = (s: string) => phrases.some((p) => s.replace(/[A-Z]/g, (c) => c.toLowerCase()).includes(p.toLowerCase()));
  const automaton = phraseAutomaton(phrases.map((p) => p.toLowerCase()));
  const pm = ([s]: (Value | undefined)[]) => automaton(s as string);

  test('agrees with a plain substring search on generated values', () => {
    const alphabet = ['a', 'b', 'c', 'h', 'e', 'r', 's', 'i', 'X', 'Y', 'Z', 'H', 'E', '.', '/', 'P', 'ÿ', 'þ', '<', '!', '-', ' ', 'y', '\u0100'];
    let seed = 42;
    const rnd = (n: number) => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff), seed % n);
    for (let i = 0; i < 3000; i++) {
      let s = '';
      for (let j = rnd(12); j > 0; j--) s += alphabet[rnd(alphabet.length)];
      const words = phrases.filter(() => rnd(40) === 0);
      for (const w of words) s = s.slice(0, rnd(s.length + 1)) + w + s.slice(rnd(s.length + 1));
      assert.equal(pm([s, undefined]), reference(s), JSON.stringify(s));
    }
  });

  test('cases', () => {
    assert.equal(pm(['GET /.HTACCESS', undefined]), true);
    assert.equal(pm(['/proc/self/environ', undefined]), true);
    assert.equal(pm(['bbb', undefined]), false);
    assert.equal(pm(['shx', undefined]), false);
    assert.equal(pm(['x\u0100zz', undefined]), true);
    assert.equal(pm(['z\u0100z', undefined]), false);
    assert.equal(pm(['ushers', undefined]), true);
    assert.equal(pm(['', undefined]), false);
  });
});

test('@pm over a .data file of 302 phrases (the automaton) finds them without case', () => {
  const names = Array.from({ length: 300 }, (_, i) => `fn${i}_x`).concat(['passthru', 'Shell_Exec']);
  registerCrsData('test-long.data', names);
  const call = prepareCrs('op.pmFromFile', [undefined, 'test-long.data']);
  for (const [s, expected] of [['a=PASSTHRU(1)', true], ['fn29_', false], ['fn299_x', true], ['shell_exe', false], ['', false]] as const) {
    assert.equal(call([s, 'test-long.data']), expected, s);
  }
});
