import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  normalizePercentEncoding,
  normalizeUrlPath,
  pathExtension,
  percentDecode,
  removeDotSegments,
  type UrlNormalization,
} from '../../../server/src/requests/normalize';

// [input path (binary string), Cloudflare type, RFC 3986 type]
const PATHS: readonly [string, string, string][] = [
  // Cloudflare docs, "URL normalization examples" and "How URL normalization works".
  ['/hello/', '/hello/', '/hello/'],
  ['/hello', '/hello', '/hello'],
  ['/%68ello', '/hello', '/hello'],
  ['/%68ello//pa\\th', '/hello/pa/th', '/hello//pa%5Cth'],
  ['/hello//../path', '/path', '/hello/path'],
  ['/hello/\\../path', '/path', '/hello/%5C../path'],
  ['\\hello', '/hello', '%5Chello'],
  ['/./lang//en/hello./', '/lang/en/hello./', '/lang//en/hello./'],
  // Unreserved escapes decoded (either case), others upper-cased and kept.
  ['/%7e%2D%2e%5f%41%7A%30', '/~-._Az0', '/~-._Az0'],
  ['/a%2fb%3a%3F', '/a%2Fb%3A%3F', '/a%2Fb%3A%3F'],
  ['/%2e%2e/%2E%2E/etc/passwd', '/etc/passwd', '/etc/passwd'],
  ['/a/%2e/b', '/a/b', '/a/b'],
  // Reserved characters stay as they are.
  ["/a;b=c/d@e:f!$&'()*+,=[]", "/a;b=c/d@e:f!$&'()*+,=[]", "/a;b=c/d@e:f!$&'()*+,=[]"],
  // Other bytes are percent-encoded: non-ASCII (UTF-8 bytes), space, controls, quotes, braces.
  ['/caf\xc3\xa9', '/caf%C3%A9', '/caf%C3%A9'],
  ['/\xff\x00', '/%FF%00', '/%FF%00'],
  ['/a b"<>^`{|}', '/a%20b%22%3C%3E%5E%60%7B%7C%7D', '/a%20b%22%3C%3E%5E%60%7B%7C%7D'],
  // A % that does not start an escape is a literal byte: %25.
  ['/100%', '/100%25', '/100%25'],
  ['/%zz/%4', '/%25zz/%254', '/%25zz/%254'],
  ['/%%41', '/%25A', '/%25A'],
  // Dot segments.
  ['/a/b/../../../c', '/c', '/c'],
  ['/a/b/..', '/a/', '/a/'],
  ['/a/b/.', '/a/b/', '/a/b/'],
  ['/..', '/', '/'],
  ['/.', '/', '/'],
  ['/a/..b/c', '/a/..b/c', '/a/..b/c'],
  ['/a/b...', '/a/b...', '/a/b...'],
  ['//a//b//', '/a/b/', '//a//b//'],
  ['/a\\\\b', '/a/b', '/a%5C%5Cb'],
  ['', '', ''],
  ['/', '/', '/'],
  ['*', '*', '*'],
];

describe('normalizeUrlPath', () => {
  for (const [input, cloudflare, rfc] of PATHS) {
    test(JSON.stringify(input), () => {
      assert.equal(normalizeUrlPath(input), cloudflare, 'default (cloudflare)');
      assert.equal(normalizeUrlPath(input, 'cloudflare'), cloudflare, 'cloudflare');
      assert.equal(normalizeUrlPath(input, 'rfc3986'), rfc, 'rfc3986');
      assert.equal(normalizeUrlPath(input, 'none'), input, 'none');
    });
  }

  test('normalization is idempotent', () => {
    for (const [input] of PATHS) {
      for (const type of ['cloudflare', 'rfc3986'] as UrlNormalization[]) {
        const once = normalizeUrlPath(input, type);
        assert.equal(normalizeUrlPath(once, type), once, `${type} ${JSON.stringify(input)}`);
      }
    }
  });
});

describe('removeDotSegments (RFC 3986 §5.2.4 and §5.4 examples)', () => {
  const cases: readonly [string, string][] = [
    ['/a/b/c/./../../g', '/a/g'],
    ['mid/content=5/../6', 'mid/6'],
    ['/b/c/d;p/../../g', '/b/g'],
    ['../a', 'a'],
    ['./a', 'a'],
    ['.', ''],
    ['..', ''],
    ['/a/b/c/../../../../g', '/g'],
    ['/a/./b/./c/.', '/a/b/c/'],
    ['/a/g..', '/a/g..'],
    ['/a/.g', '/a/.g'],
  ];
  for (const [input, output] of cases) test(input, () => assert.equal(removeDotSegments(input), output));
});

describe('normalizePercentEncoding', () => {
  const cases: readonly [string, string][] = [
    ['abc', 'abc'],
    ['%61%62%63', 'abc'],
    ['%e2%82%ac', '%E2%82%AC'],
    ['\xe2\x82\xac', '%E2%82%AC'],
    ['a%2', 'a%252'],
    ['\\', '%5C'],
  ];
  for (const [input, output] of cases) test(JSON.stringify(input), () => assert.equal(normalizePercentEncoding(input), output));
});

describe('pathExtension (Cloudflare docs examples)', () => {
  const cases: readonly [path: string, lower: string, raw: string][] = [
    ['/foo', '', ''],
    ['/foo.mp3', 'mp3', 'mp3'],
    ['/.mp3', '', ''],
    ['/.foo.mp3', 'mp3', 'mp3'],
    ['/foo.tar.bz2', 'bz2', 'bz2'],
    ['/foo.', '', ''],
    ['/foo.MP3', 'mp3', 'MP3'],
    ['/articles/index.html', 'html', 'html'],
    ['/dir.d/file', '', ''],
    ['/dir.d/', '', ''],
    ['', '', ''],
    ['index.PhP', 'php', 'PhP'],
  ];
  for (const [path, lower, raw] of cases) {
    test(JSON.stringify(path), () => {
      assert.equal(pathExtension(path, true), lower);
      assert.equal(pathExtension(path, false), raw);
    });
  }
});

describe('percentDecode', () => {
  const cases: readonly [string, string][] = [
    ['a%3Db', 'a=b'],
    ['%74heme', 'theme'],
    ['%zz%4', '%zz%4'],
    ['a+b', 'a+b'],
    ['%ff%00', '\xff\x00'],
    ['plain', 'plain'],
  ];
  for (const [input, output] of cases) test(JSON.stringify(input), () => assert.equal(percentDecode(input), output));
});
