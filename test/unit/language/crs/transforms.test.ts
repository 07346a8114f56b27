// CRS transformations (t.*): examples from ModSecurity's reference manual and edge cases.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { TRANSFORMS, hexEncode, sha1 } from '../../../../server/src/language/runtime/crs/transforms';
import { prepareCrs } from '../../../../server/src/language/runtime/crs';

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

// The shortcuts (a value with nothing to change is returned as it is; runs of plain bytes
// copied whole) against the byte-by-byte definitions they replace, on generated values.
describe('transformation shortcuts agree with the byte-by-byte definitions', () => {
  const isSpace = (c: number) => c === 32 || (c >= 9 && c <= 13);
  const reference: Record<string, (s: string) => string> = {
    cmdLine: (s) => {
      let out = '';
      let pending = false;
      for (let i = 0; i < s.length; i++) {
        let ch = s[i];
        if (ch === '\\' || ch === '"' || ch === "'" || ch === '^') continue;
        if (ch === ',' || ch === ';') ch = ' ';
        const c = ch.charCodeAt(0);
        if (isSpace(c)) {
          pending = true;
          continue;
        }
        if (pending && ch !== '/' && ch !== '(') out += ' ';
        pending = false;
        out += c >= 65 && c <= 90 ? String.fromCharCode(c + 32) : ch;
      }
      return pending ? out + ' ' : out;
    },
    normalizePath: (s) => {
      if (s === '') return s;
      const absolute = s[0] === '/';
      const segments = s.split('/');
      const last = segments[segments.length - 1];
      const trailing = segments.length > 1 && (last === '' || last === '.' || last === '..');
      const out: string[] = [];
      for (const seg of segments) {
        if (seg === '' || seg === '.') continue;
        if (seg === '..') {
          if (out.length > 0 && out[out.length - 1] !== '..') out.pop();
          else if (!absolute) out.push('..');
          continue;
        }
        out.push(seg);
      }
      let r = (absolute ? '/' : '') + out.join('/');
      if (trailing && out.length > 0) r += '/';
      return r;
    },
    urlDecode: (s) => {
      let out = '';
      for (let i = 0; i < s.length; i++) {
        const c = s[i];
        if (c === '+') out += ' ';
        else if (c === '%' && /^[0-9a-fA-F]{2}$/.test(s.slice(i + 1, i + 3))) {
          out += String.fromCharCode(parseInt(s.slice(i + 1, i + 3), 16));
          i += 2;
        } else out += c;
      }
      return out;
    },
    replaceComments: (s) => {
      let out = '';
      for (let i = 0; i < s.length; i++) {
        if (s[i] === '/' && s[i + 1] === '*') {
          const end = s.indexOf('*/', i + 2);
          out += ' ';
          if (end < 0) return out;
          i = end + 1;
        } else out += s[i];
      }
      return out;
    },
  };
  const alphabet = ['a', 'B', '/', '.', '%', '2', 'f', 'F', '+', ' ', '\t', '\\', '"', "'", '^', ',', ';', '(', '*', 'Z', '\xe9', '\xc3', '\xa9'];
  let seed = 7;
  const rnd = (n: number) => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff), seed % n);
  const values = Array.from({ length: 4000 }, () => {
    let s = '';
    for (let j = rnd(14); j > 0; j--) s += alphabet[rnd(alphabet.length)];
    return s;
  });
  for (const [name, ref] of Object.entries(reference)) {
    test(name, () => {
      const t = TRANSFORMS.get(name)!;
      for (const v of values) assert.equal(t(v), ref(v), JSON.stringify(v));
    });
  }
  test('utf8toUnicode: ASCII unchanged, multi-byte sequences after an ASCII run still converted', () => {
    const t = TRANSFORMS.get('utf8toUnicode')!;
    assert.equal(t('plain/ascii?x=1'), 'plain/ascii?x=1');
    assert.equal(t('ab\xc3\xa9c'), 'ab%u00e9c');
    assert.equal(t('ab\xc3'), 'ab\xc3');
  });
});
