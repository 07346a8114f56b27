// @detectXSS: the HTML5 tokenizer against every test-html5-* vector of libinjection
// (test/fixtures/libinjection/tests, vendored), and the detector against the XSS sample corpora and
// the false-positive list (test/fixtures/libinjection/samples).
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { test } from 'node:test';
import { HTML5_START_STATES, html5Tokens } from '../../../../server/src/language/runtime/crs/libinjection/html5';
import { detectXSS, isXssInContext } from '../../../../server/src/language/runtime/crs/libinjection/xss';

const DATA = new URL('../../../fixtures/libinjection/', import.meta.url);
const TESTS = new URL('tests/', DATA).pathname;
const SAMPLES = new URL('samples/', DATA).pathname;

/** Parses a --TEST-- / --INPUT-- / --EXPECTED-- file (bytes kept as a binary string). */
function parseVector(text: string): { name: string; input: string; expected: string } {
  const lines = text.split('\n');
  const at = (marker: string): number => {
    const k = lines.indexOf(marker);
    assert.ok(k >= 0, `missing ${marker}`);
    return k;
  };
  const t = at('--TEST--');
  const inp = at('--INPUT--');
  const exp = at('--EXPECTED--');
  return {
    name: lines.slice(t + 1, inp).join(' ').trim(),
    input: lines.slice(inp + 1, exp).join('\n'),
    expected: normaliseOutput(lines.slice(exp + 1).join('\n')),
  };
}

/** Lines compared without trailing blanks (the vector files drop them), no blank tail. */
function normaliseOutput(text: string): string {
  return text
    .split('\n')
    .map((l) => l.replace(/\s+$/, ''))
    .join('\n')
    .replace(/\n+$/, '');
}

function render(input: string): string {
  return normaliseOutput(
    html5Tokens(input, 'data')
      .map((t) => `${t.type},${t.value.length},${t.value}`)
      .join('\n'),
  );
}

test('the libinjection data is where the test expects it', () => {
  assert.ok(existsSync(TESTS), TESTS);
  assert.ok(existsSync(SAMPLES), SAMPLES);
});

const vectorFiles = existsSync(TESTS)
  ? readdirSync(TESTS)
      .filter((f) => /^test-html5-\d+\.txt$/.test(f))
      .sort()
  : [];

test('every test-html5 vector is there (63 files)', () => {
  assert.equal(vectorFiles.length, 63);
});

for (const file of vectorFiles) {
  const v = parseVector(readFileSync(TESTS + file, 'latin1'));
  test(`html5 ${file}: ${v.name}`, () => {
    assert.equal(render(v.input), v.expected, JSON.stringify(v.input));
  });
}

/** Sample lines: not empty, not '#' comments, URL-decoded like query-string input. */
function sampleLines(file: string): string[] {
  return readFileSync(SAMPLES + file, 'latin1')
    .split('\n')
    .map((l) => l.replace(/\r$/, ''))
    .filter((l) => l.trim() !== '' && !l.startsWith('#'))
    .map(urlDecode);
}

function urlDecode(s: string): string {
  return s
    .replace(/\+/g, ' ')
    .replace(/%([0-9a-fA-F]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)));
}

// Detected / total per attack corpus, and flagged / total for the false positives: the
// figures this implementation reaches (pinned so that a change shows up). In all, 1,627 of
// 1,645 attack lines are detected and none of the 421 benign lines is flagged. The misses:
// - 6 lines whose entities were mangled by the corpus's own escaping ("&\#106;", which
//   browsers do not decode either), in xss-smoke-test.txt and xss-xenotix.txt;
// - 5 html5sec.org parser-differential vectors (tests 62_1, 62_2, 62_3, 62_5 and 102)
//   whose payload sits inside a quoted attribute value or a bogus comment for an HTML5
//   parser (they fire only in old or non-HTML5 parsers).
const EXPECTED_DETECTION: Record<string, [number, number]> = {
  'xss-0x6D6172696F-394932823645503488.txt': [1, 1],
  'xss-angular-pull-11290.txt': [1, 1],
  'xss-html5secorg.txt': [230, 235],
  'xss-mgentile-2013.txt': [5, 5],
  'xss-modsecurity-2013-1.txt': [1, 1],
  'xss-modsecurity-2013-2.txt': [1, 1],
  'xss-owasp-cheatsheet-20131120.txt': [77, 77],
  'xss-smoke-test.txt': [25, 26],
  'xss-soaj1664ashar-pastebin-u6FY1xDA.txt': [99, 99],
  'xss-soaj1664ashar.txt': [11, 11],
  'xss-xenotix.txt': [1184, 1188],
};
const EXPECTED_FALSE_POSITIVES: [number, number] = [0, 421];

const xssFiles = existsSync(SAMPLES)
  ? readdirSync(SAMPLES)
      .filter((f) => /^xss-.*\.txt$/.test(f))
      .sort()
  : [];

test('XSS sample corpora: detection counts', () => {
  const got: Record<string, [number, number]> = {};
  const missed: string[] = [];
  for (const file of xssFiles) {
    const lines = sampleLines(file);
    const hits = lines.filter((l) => detectXSS(l));
    got[file] = [hits.length, lines.length];
    for (const l of lines) if (!detectXSS(l)) missed.push(`${file}: ${l}`);
  }
  if (process.env.XSS_DEBUG) {
    console.log(JSON.stringify(got, null, 1));
    console.log(missed.map((m) => JSON.stringify(m)).join('\n'));
  }
  assert.deepEqual(got, EXPECTED_DETECTION);
});

test('false positives: benign lines flagged', () => {
  const lines = sampleLines('false_positives.txt');
  const flagged = lines.filter((l) => detectXSS(l));
  if (process.env.XSS_DEBUG) console.log(flagged.join('\n'));
  assert.deepEqual([flagged.length, lines.length], EXPECTED_FALSE_POSITIVES);
});

test('detectXSS: typical payloads and benign text', () => {
  for (const attack of [
    '<script>alert(1)</script>',
    '"><script>alert(1)</script>',
    '" onmouseover="alert(1)',
    "' onfocus=alert(1) autofocus x='",
    '<img src=x onerror=alert(1)>',
    '<a href="javascript:alert(1)">x</a>',
    '<a href=" JaVa\tScRiPt:alert(1)">x</a>',
    '<a href="javascript&#58;alert(1)">x</a>',
    '<iframe src=//evil>',
    '<svg/onload=alert(1)>',
    '<scr\0ipt>alert(1)</script>',
    '<!DOCTYPE html>',
    '<!--[if gte IE 4]><script>alert(1)</script><![endif]-->',
    '<?xml version="1.0"?>',
    '<div style="background:url(javascript:alert(1))">',
    '<object data="data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==">',
    '<a/href=javascript&colon;alert(1)>x',
    '<a href="jav&#x09;ascript:alert(1)">x</a>',
    '<img/src/onerror=alert(1)>',
    '<details open ontoggle=alert(1)>',
    '<button formaction=javascript:alert(1)>x</button>',
    '<x:script xmlns:x="http://www.w3.org/1999/xhtml" src="data:,alert(1)" />',
    '<math><a xlink:href="//evil/">click',
    '<svg><animate attributeName=href values=javascript:alert(1) />',
    '</a onclick=alert(1)>',
    'onmouseover=alert(1);',
    '<\0script>alert(1)</script>',
    '<a href="javas\x01cript:alert(1)">x</a>',
    '<% foo><x foo="%><script>',
    '<?import namespace="t" implementation="#default#time2">',
  ]) {
    assert.ok(detectXSS(attack), attack);
  }
  for (const benign of [
    '',
    'hello world',
    "O'Reilly",
    'a < b and c > d',
    '1 + 1 = 2',
    '<b>bold</b> and <i>italic</i>',
    '<a href="https://example.com/">link</a>',
    'the script ran online',
    'SELECT * FROM users WHERE id = 1',
    'email me at <john@example.com>',
    'I <3 you',
    'javascript:alert(1)', // a bare URL is no markup (other CRS rules look at it)
    'http://www.cnn.com',
    '/search?q=online+ongoing&sort=asc',
    '<a href="/style/index.html" title="x">ok</a>',
    '<!-- a comment -->',
  ]) {
    assert.ok(!detectXSS(benign), benign);
  }
});

test('contexts: an attribute breakout is caught only where it breaks out', () => {
  const input = '" onclick="alert(1)';
  assert.ok(isXssInContext(input, 'valueDoubleQuote'));
  assert.ok(!isXssInContext(input, 'data'));
  assert.ok(isXssInContext('` onclick=alert(1)', 'valueBackQuote'));
});

test('html5Tokens: the starting contexts', () => {
  const show = (input: string, start: Parameters<typeof html5Tokens>[1]): string[] =>
    html5Tokens(input, start).map((t) => `${t.type},${t.value}`);
  assert.deepEqual(show('x" onclick=1>', 'valueDoubleQuote'), [
    'ATTR_VALUE,x',
    'ATTR_NAME,onclick',
    'ATTR_VALUE,1',
    'TAG_NAME_CLOSE,>',
  ]);
  assert.deepEqual(show("x' y", 'valueSingleQuote'), ['ATTR_VALUE,x', 'ATTR_NAME,y']);
  assert.deepEqual(show('x` y', 'valueBackQuote'), ['ATTR_VALUE,x', 'ATTR_NAME,y']);
  assert.deepEqual(show('x y=z', 'valueNoQuote'), ['ATTR_VALUE,x', 'ATTR_NAME,y', 'ATTR_VALUE,z']);
  assert.deepEqual(show('x y=z', 'attrName'), ['ATTR_NAME,x', 'ATTR_NAME,y', 'ATTR_VALUE,z']);
  assert.deepEqual(show('a<\0b>', 'data'), ['DATA_TEXT,a', 'TAG_NAME_OPEN,\0b', 'TAG_NAME_CLOSE,>']);
});

test('detectXSS: without `<` or `=` no context holds a dangerous token (the shortcut)', () => {
  const alphabet = ['a', 'o', 'n', 'l', 'd', ' ', '"', "'", '`', '/', '!', '-', '?', '>', '&', '#', 'j', 's', ':', 'x', '\0', 'S', 'c', 'r', 'i', 'p', 't', 'e'];
  let seed = 11;
  const rnd = (n: number) => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff), seed % n);
  const contexts = HTML5_START_STATES;
  for (let i = 0; i < 5000; i++) {
    let s = rnd(3) === 0 ? ['onload ', 'x onclick x', '" style ', 'href javascript:'][rnd(4)] : '';
    for (let j = rnd(16); j > 0; j--) s += alphabet[rnd(alphabet.length)];
    for (const c of contexts) assert.equal(isXssInContext(s, c), false, `${c}: ${JSON.stringify(s)}`);
  }
});
