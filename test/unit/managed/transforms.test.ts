// CRS transformations (t.*): examples from ModSecurity's reference manual and edge cases.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { TRANSFORMS, hexEncode, sha1 } from '../../../server/src/language/runtime/crs/transforms';
import { prepareCrs } from '../../../server/src/language/runtime/crs';

const CASES: ReadonlyArray<readonly [string, string, string]> = [
  ['urlDecode', '%41%42+c', 'AB c'],
  ['urlDecode', 'a%2', 'a%2'],
  ['urlDecode', '%zz%', '%zz%'],
  ['urlDecode', '%u0041', '%u0041'],
  ['urlDecodeUni', '%u0041%u0062', 'Ab'],
  ['urlDecodeUni', '%uff1cscript%uFF1E', '<script>'],
  ['urlDecodeUni', '%u20ac', '\xac'],
  ['urlDecodeUni', '%u12', '%u12'],
  ['urlDecodeUni', "1%27+or+1%3D1", "1' or 1=1"],
  ['htmlEntityDecode', '&lt;script&gt;', '<script>'],
  ['htmlEntityDecode', '&#x41;&#66;&#67', 'ABC'],
  ['htmlEntityDecode', '&quot&amp;&nbsp;', '"&\xa0'],
  ['htmlEntityDecode', '&foo; & &#;', '&foo; & &#;'],
  ['htmlEntityDecode', '&#x3c;&#X3E;', '<>'],
  ['jsDecode', '\\x41\\u0042\\n', 'AB\n'],
  ['jsDecode', '\\101\\0', 'A\0'],
  ['jsDecode', '\\uff1c\\q\\\\', '<q\\'],
  ['jsDecode', 'a\\', 'a\\'],
  ['cssDecode', 'jav\\61script', 'javascript'],
  ['cssDecode', '\\000041 B', 'AB'],
  ['cssDecode', 'a\\\nb\\"', 'ab"'],
  ['cssDecode', 'x\\', 'x'],
  ['cmdLine', '"c^md.exe" /c  dir', 'cmd.exe/c dir'],
  ['cmdLine', "echo,hello;WORLD 'x' (y)", 'echo hello world x(y)'],
  ['cmdLine', 'a\\b\t\n c', 'ab c'],
  ['compressWhitespace', 'a \t\n b\xa0\xa0c', 'a b c'],
  ['removeNulls', 'a\0b\0', 'ab'],
  ['removeWhitespace', ' a b\tc\n\xa0', 'abc'],
  ['replaceComments', 'UNION/**/SELECT/*x*/1', 'UNION SELECT 1'],
  ['replaceComments', 'a/*b', 'a '],
  ['replaceComments', 'a*/b', 'a*/b'],
  ['normalisePath', '/a/b/../c/./d//e', '/a/c/d/e'],
  ['normalizePath', '/../../etc/passwd', '/etc/passwd'],
  ['normalizePath', 'a/../../b', '../b'],
  ['normalizePath', '/a/b/', '/a/b/'],
  ['normalizePath', '/a/./', '/a/'],
  ['normalizePathWin', '\\a\\..\\b\\c.txt', '/b/c.txt'],
  ['utf8toUnicode', 'caf\xc3\xa9 \xe2\x82\xac', 'caf%u00e9 %u20ac'],
  ['utf8toUnicode', 'a\xffb\xc3', 'a\xffb\xc3'],
  ['lowercase', 'SeLeCT \xc9', 'select \xc9'],
  ['base64Decode', 'SGVsbG8=', 'Hello'],
  ['base64Decode', 'SGVsbG8gV29ybGQ', 'Hello World'],
  ['base64Decode', 'SGk*junk', 'SGk*junk'],
  ['base64Decode', '_$$ND_FUNC$$_', '_$$ND_FUNC$$_'],
  ['base64Decode', 'XyQkTkRfRlVOQyQkXwo=', '_$$ND_FUNC$$_\n'],
  ['hexEncode', 'AB\n\xff', '41420aff'],
  ['trim', ' \t a b \r\n', 'a b'],
];

describe('CRS transformations', () => {
  for (const [name, input, expected] of CASES) {
    test(`t.${name}(${JSON.stringify(input)}) = ${JSON.stringify(expected)}`, () => {
      const t = TRANSFORMS.get(name);
      assert.ok(t, name);
      assert.equal(t(input), expected);
    });
  }

  test('t.sha1 is SHA-1 (FIPS 180 test vectors)', () => {
    assert.equal(hexEncode(sha1('abc')), 'a9993e364706816aba3e25717850c26c9cd0d89d');
    assert.equal(hexEncode(sha1('')), 'da39a3ee5e6b4b0d3255bfef95601890afd80709');
    assert.equal(hexEncode(sha1('a'.repeat(1000))), '291e9a6c66994949b57ba5e650361e98fc36b1ba');
  });

  test('the runtime functions apply to Bytes and element-wise to Array<Bytes>; missing stays missing', () => {
    const lower = prepareCrs('t.lowercase', [undefined]);
    assert.equal(lower(['AbC']), 'abc');
    assert.deepEqual(lower([['A', 'B']]), ['a', 'b']);
    assert.equal(lower([undefined]), undefined);
    const len = prepareCrs('t.length', [undefined]);
    assert.equal(len(['\xff\xfe']), 2);
    assert.deepEqual(len([['', 'abc']]), [0, 3]);
  });

  test('every CRS transformation of the contract exists', () => {
    for (const n of ['urlDecodeUni', 'urlDecode', 'htmlEntityDecode', 'jsDecode', 'cssDecode', 'cmdLine', 'compressWhitespace', 'removeNulls', 'removeWhitespace', 'replaceComments', 'normalisePath', 'normalizePath', 'normalizePathWin', 'utf8toUnicode', 'lowercase', 'base64Decode', 'hexEncode', 'sha1', 'trim']) {
      assert.ok(TRANSFORMS.has(n), n);
    }
  });
});
