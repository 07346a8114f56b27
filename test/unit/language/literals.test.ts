import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { binaryToDisplay, binaryToUtf8, firstNonUtf8, utf8ToBinary } from '../../../server/src/language/bytes';
import {
  decodeMapKey,
  decodeQuoted,
  decodeRaw,
  decodeRegexQuoted,
  parseHexBytes,
  parseHexBytesItems,
  parseIndexLiteral,
  parseInt64,
  parseIntSetItem,
  parseIntSetItems,
  rawStringContent,
  validateListName,
  type LitResult,
} from '../../../server/src/language/literals';

/** A binary string from byte values. */
const bin = (...bytes: number[]) => String.fromCharCode(...bytes);

type Err = { message: string; start: number; end: number; code: string; hint?: RegExp };

const show = (v: unknown) => JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? `${x}n` : x));

function expectOk<T>(r: LitResult<T>, value: T, label: string): void {
  if (!r.ok) assert.fail(`${label}: expected ok, got ${show(r)}`);
  assert.deepEqual(r.value, value, label);
}

function expectErr<T>(r: LitResult<T>, e: Err, label: string): void {
  if (r.ok) assert.fail(`${label}: expected an error, got ${show(r)}`);
  assert.deepEqual({ message: r.message, start: r.start, end: r.end, code: r.code }, { message: e.message, start: e.start, end: e.end, code: e.code }, label);
  if (e.hint) assert.match(r.hint ?? '', e.hint, `${label}: hint`);
}

const RADIX = (err: string, radix: number) => `${err} while parsing with radix ${radix}`;
const INVALID = 'invalid digit found in string';
const TOO_LARGE = 'number too large to fit in target type';
const TOO_SMALL = 'number too small to fit in target type';

describe('bytes helpers', () => {
  test('utf8ToBinary / binaryToUtf8 / binaryToDisplay', () => {
    assert.equal(utf8ToBinary('abc'), 'abc');
    assert.equal(utf8ToBinary('é'), bin(0xc3, 0xa9));
    assert.equal(utf8ToBinary('😀'), bin(0xf0, 0x9f, 0x98, 0x80));
    assert.equal(utf8ToBinary('\ud800'), bin(0xef, 0xbf, 0xbd), 'lone surrogate -> U+FFFD');
    assert.equal(binaryToUtf8(bin(0xc3, 0xa9)), 'é');
    assert.equal(binaryToUtf8(bin(0xef, 0xbb, 0xbf, 0x61)), '\ufeffa', 'BOM kept');
    assert.equal(binaryToUtf8(bin(0xff)), undefined);
    assert.equal(binaryToUtf8(bin(0xc3)), undefined);
    assert.equal(binaryToDisplay(bin(0x61, 0xff, 0x0a)), 'a\\xff\\x0a');
    assert.equal(binaryToDisplay(utf8ToBinary('日本')), '日本');
  });

  test('binaryToUtf8 accepts exactly what a fatal TextDecoder accepts (overlong, surrogate, past U+10FFFF and cut sequences refused)', () => {
    const fatal = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
    const reference = (bytes: number[]) => {
      try {
        return fatal.decode(Uint8Array.from(bytes));
      } catch {
        return undefined;
      }
    };
    for (const bytes of [[0xe0, 0x80, 0x80], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80], [0xf0, 0x8f, 0xbf, 0xbf], [0xc1, 0xbf], [0xe2, 0x82], [0x61, 0xf0, 0x9f, 0x98], [0xed, 0x9f, 0xbf], [0xf4, 0x8f, 0xbf, 0xbf]]) {
      assert.equal(binaryToUtf8(bin(...bytes)), reference(bytes), bytes.map((b) => b.toString(16)).join(' '));
    }
    // Random bytes biased to the interesting ones (lead bytes, continuations), and valid text.
    const byte = fc.oneof(fc.integer({ min: 0, max: 255 }), fc.constantFrom(0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0, 0xc2, 0xdf, 0xe0, 0xed, 0xef, 0xf0, 0xf4, 0xf5));
    fc.assert(fc.property(fc.array(byte, { maxLength: 12 }), (bytes) => binaryToUtf8(bin(...bytes)) === reference(bytes)), { numRuns: 20_000 });
    fc.assert(fc.property(fc.string({ unit: 'grapheme' }), (text) => binaryToUtf8(utf8ToBinary(text)) === text));
  });

  test('firstNonUtf8 points at the first byte the decoder refuses (what the API reports for a body that is not UTF-8)', () => {
    assert.equal(firstNonUtf8('ab'), -1);
    assert.equal(firstNonUtf8(bin(0x61, 0xe0, 0x80, 0x80)), 1, 'overlong');
    assert.equal(firstNonUtf8(bin(0x61, 0xc3, 0xa9, 0xed, 0xa0, 0x80)), 3, 'surrogate after a valid é');
    assert.equal(firstNonUtf8(bin(0x61, 0x62, 0xf0, 0x9f)), 2, 'cut at the end');
  });
});

describe('decodeQuoted', () => {
  const ok: [string, string, string?][] = [
    ['""', ''],
    ['"abc"', 'abc'],
    ['"a\\x41\\101"', 'aAA'],
    ['"s\\\\t\\"r\\x0A\\000t"', 's\\t"r\n\0t'],
    ['"\\x7F"', '\x7f'],
    ['"\\x80"', bin(0x80)],
    ['"\\xFF"', bin(0xff)],
    ['"\\xff"', bin(0xff)],
    ['"\\177"', '\x7f'],
    ['"\\200"', bin(0x80)],
    ['"\\377"', bin(0xff)],
    ['"\\\\\\""', '\\"'],
    ['"é"', bin(0xc3, 0xa9)],
    ['"日本"', bin(0xe6, 0x97, 0xa5, 0xe6, 0x9c, 0xac)],
    ['"😀"', bin(0xf0, 0x9f, 0x98, 0x80)],
    ['"a\nb"', 'a\nb'],
    ['"\\x+f"', bin(0x0f), "Rust's u8 parser accepts a leading +"],
    ['"é\\x80é"', bin(0xc3, 0xa9, 0x80, 0xc3, 0xa9)],
  ];
  for (const [text, value, note] of ok) {
    test(`${text} decodes${note ? ` (${note})` : ''}`, () => expectOk(decodeQuoted(text), value, text));
  }

  const errors: [string, string, Err][] = [
    ['"\\400"', '', { message: RADIX(TOO_LARGE, 8), start: 2, end: 5, code: 'invalid-escape' }],
    ['"\\777"', '', { message: RADIX(TOO_LARGE, 8), start: 2, end: 5, code: 'invalid-escape' }],
    ['"\\n"', '', { message: 'expected ", xHH or OOO after \\', start: 2, end: 3, code: 'invalid-escape', hint: /\\x0a.*raw string/ }],
    ['"\\t"', '', { message: 'expected ", xHH or OOO after \\', start: 2, end: 3, code: 'invalid-escape', hint: /\\x09/ }],
    ['"\\d+"', '', { message: 'expected ", xHH or OOO after \\', start: 2, end: 3, code: 'invalid-escape', hint: /\\n, \\t/ }],
    ['"\\u0041"', '', { message: 'expected ", xHH or OOO after \\', start: 2, end: 3, code: 'invalid-escape' }],
    ['"a\\/b"', '', { message: 'expected ", xHH or OOO after \\', start: 3, end: 4, code: 'invalid-escape' }],
    ['"\\😢"', '', { message: 'expected ", xHH or OOO after \\', start: 2, end: 4, code: 'invalid-escape' }],
    ['"\\8"', '', { message: 'expected ", xHH or OOO after \\', start: 2, end: 3, code: 'invalid-escape' }],
    ['"\\x4g"', '', { message: RADIX(INVALID, 16), start: 3, end: 5, code: 'invalid-escape' }],
    ['"\\x7z"', '', { message: RADIX(INVALID, 16), start: 3, end: 5, code: 'invalid-escape' }],
    ['"\\x3😢"', '', { message: RADIX(INVALID, 16), start: 3, end: 6, code: 'invalid-escape' }],
    ['"\\01😢"', '', { message: RADIX(INVALID, 8), start: 2, end: 6, code: 'invalid-escape' }],
    ['"\\08x"', '', { message: RADIX(INVALID, 8), start: 2, end: 5, code: 'invalid-escape' }],
    // One digit then the closing quote: the quote is taken as the second digit.
    ['"\\x4"', '', { message: RADIX(INVALID, 16), start: 3, end: 5, code: 'invalid-escape' }],
    ['"\\01"', '', { message: RADIX(INVALID, 8), start: 2, end: 5, code: 'invalid-escape' }],
    // No digit: the quote and the next source character are taken.
    ['"\\x"', '', { message: 'expected 2 characters, but found 1', start: 3, end: 4, code: 'invalid-escape' }],
    ['"\\x"', ' and ssl', { message: RADIX(INVALID, 16), start: 3, end: 5, code: 'invalid-escape' }],
    ['"\\0"', '', { message: 'expected 3 characters, but found 2', start: 2, end: 4, code: 'invalid-escape' }],
    ['"\\0"', ')', { message: RADIX(INVALID, 8), start: 2, end: 5, code: 'invalid-escape' }],
    ['"\\7"', '', { message: 'expected 3 characters, but found 2', start: 2, end: 4, code: 'invalid-escape' }],
    ['"abc', '', { message: 'could not find an ending quote', start: 0, end: 4, code: 'unterminated-string' }],
    ['"abc\\', '', { message: 'could not find an ending quote', start: 0, end: 5, code: 'unterminated-string' }],
    ['"a"b', '', { message: 'unrecognised input', start: 3, end: 4, code: 'unrecognised-input' }],
  ];
  for (const [text, after, e] of errors) {
    test(`${text}${after ? ` followed by ${JSON.stringify(after)}` : ''} -> ${e.message}`, () =>
      expectErr(decodeQuoted(text, after), e, text));
  }
});

describe('decodeRegexQuoted', () => {
  const ok: [string, string][] = [
    ['"[a-z"\\]]+\\d{1,10}\\""', '[a-z"\\]]+\\d{1,10}"'],
    ['"\\d+\\.php$"', '\\d+\\.php$'],
    ['"a\\"b"', 'a"b'],
    ['"[\\"]"', '[\\"]'],
    ['"\\[a\\]"', '\\[a\\]'],
    ['"é\\d"', 'é\\d'],
    ['"(?i)admin"', '(?i)admin'],
    ['"(?u)\\p{Hangul}+"', '(?u)\\p{Hangul}+'],
    ['"\\\\"', '\\\\'],
    ['""', ''],
  ];
  for (const [text, value] of ok) test(`${text} -> ${value}`, () => expectOk(decodeRegexQuoted(text), value, text));

  test('"[a-z" never terminates', () =>
    expectErr(decodeRegexQuoted('"[a-z"'), { message: 'could not find an ending quote', start: 0, end: 6, code: 'unterminated-string' }, 'class'));
  test('"abcd\\ never terminates', () =>
    expectErr(decodeRegexQuoted('"abcd\\'), { message: 'could not find an ending quote', start: 0, end: 6, code: 'unterminated-string' }, 'backslash'));
});

describe('raw strings', () => {
  const ok: [string, string][] = [
    ['r""', ''],
    ['r#""#', ''],
    ['r##""##', ''],
    ['r###""###', ''],
    ['r"a"', 'a'],
    ['r#"a"#', 'a'],
    ['r##"a"##', 'a'],
    ['r"#"', '#'],
    ['r"a#"', 'a#'],
    ['r#""a"""#', '"a""'],
    ['r##""a"#b"##', '"a"#b'],
    ['r###"a###"##""###', 'a###"##"'],
    ['r#"a"""#', 'a""'],
    ['r##"a"#"##', 'a"#'],
    ['r"\\d\\n\\"', '\\d\\n\\'],
    ['r"é"', 'é'],
    [`r${'#'.repeat(255)}"abc"${'#'.repeat(255)}`, 'abc'],
  ];
  for (const [text, value] of ok) test(`${text.slice(0, 20)} -> ${JSON.stringify(value)}`, () => expectOk(rawStringContent(text), value, text));

  test('decodeRaw UTF-8 encodes', () => expectOk(decodeRaw('r"é\\x"'), bin(0xc3, 0xa9, 0x5c, 0x78), 'raw'));

  const errors: [string, Err][] = [
    ['r#"a"', { message: 'could not find an ending quote', start: 0, end: 5, code: 'unterminated-string' }],
    ['r##"a"#', { message: 'could not find an ending quote', start: 0, end: 7, code: 'unterminated-string' }],
    ['r###"a"##', { message: 'could not find an ending quote', start: 0, end: 9, code: 'unterminated-string' }],
    ['rx', { message: 'expected " or #', start: 1, end: 2, code: 'invalid-raw-string' }],
    ['r#x', { message: 'expected " or #', start: 2, end: 3, code: 'invalid-raw-string' }],
    ['r#"a"##', { message: 'unrecognised input', start: 6, end: 7, code: 'unrecognised-input' }],
    [
      `r${'#'.repeat(256)}"abc"${'#'.repeat(256)}`,
      { message: "invalid raw string hash count, there can't be more than 255 #s", start: 1, end: 257, code: 'invalid-raw-string' },
    ],
  ];
  for (const [text, e] of errors) test(`${text.slice(0, 20)} -> ${e.message}`, () => expectErr(decodeRaw(text), e, text));
});

describe('parseInt64', () => {
  const ok: [string, number | bigint][] = [
    ['0', 0],
    ['0x1f5', 501],
    ['0xEF', 239],
    ['0123', 83],
    ['010', 8],
    ['78', 78],
    ['-12', -12],
    ['-010', -10],
    ['-0', 0],
    ['9007199254740991', 9007199254740991],
    ['9007199254740992', 9007199254740992n],
    ['9223372036854775807', 9223372036854775807n],
    ['-9223372036854775808', -9223372036854775808n],
    ['0x7fffffffffffffff', 9223372036854775807n],
    ['0777', 511],
  ];
  for (const [text, value] of ok) test(`${text} = ${value}`, () => expectOk(parseInt64(text), value, text));

  const errors: [string, Err][] = [
    ['9223372036854775808', { message: RADIX(TOO_LARGE, 10), start: 0, end: 19, code: 'invalid-integer' }],
    ['-9223372036854775809', { message: RADIX(TOO_SMALL, 10), start: 0, end: 20, code: 'invalid-integer' }],
    ['99999999999999999999f', { message: RADIX(TOO_LARGE, 10), start: 0, end: 21, code: 'invalid-integer' }],
    ['10fe', { message: RADIX(INVALID, 10), start: 0, end: 4, code: 'invalid-integer' }],
    ['1a', { message: RADIX(INVALID, 10), start: 0, end: 2, code: 'invalid-integer' }],
    ['08', { message: RADIX(INVALID, 8), start: 0, end: 2, code: 'invalid-integer', hint: /octal/ }],
    ['0ff', { message: RADIX(INVALID, 8), start: 0, end: 3, code: 'invalid-integer' }],
    ['0x10000000000000000', { message: RADIX(TOO_LARGE, 16), start: 2, end: 19, code: 'invalid-integer' }],
    ['01000000000000000000000', { message: RADIX(TOO_LARGE, 8), start: 0, end: 23, code: 'invalid-integer' }],
    ['0x', { message: 'expected digit', start: 2, end: 2, code: 'invalid-integer' }],
    ['-', { message: 'expected digit', start: 1, end: 1, code: 'invalid-integer' }],
    ['x1', { message: 'expected digit', start: 0, end: 2, code: 'invalid-integer' }],
    ['.5', { message: 'expected digit', start: 0, end: 2, code: 'invalid-integer' }],
    ['-0x1', { message: 'unrecognised input', start: 2, end: 4, code: 'unrecognised-input', hint: /sign/ }],
    ['0X1', { message: 'unrecognised input', start: 1, end: 3, code: 'unrecognised-input' }],
    ['1.5', { message: 'unrecognised input', start: 1, end: 3, code: 'unrecognised-input', hint: /fraction/ }],
    ['1-2', { message: 'unrecognised input', start: 1, end: 3, code: 'unrecognised-input' }],
  ];
  for (const [text, e] of errors) test(`${text} -> ${e.message}`, () => expectErr(parseInt64(text), e, text));
});

describe('Int set items', () => {
  const ok: [string, [number | bigint, number | bigint]][] = [
    ['80', [80, 80]],
    ['0..10', [0, 10]],
    ['-20..-10', [-20, -10]],
    ['0123..0xef', [83, 239]],
    ['5..5', [5, 5]],
    ['-9223372036854775808..9223372036854775807', [-9223372036854775808n, 9223372036854775807n]],
  ];
  for (const [text, value] of ok) test(`${text}`, () => expectOk(parseIntSetItem(text), value, text));

  const errors: [string, Err][] = [
    ['10..0', { message: 'incompatible range bounds', start: 0, end: 5, code: 'incompatible-range-bounds', hint: /smaller/ }],
    ['-10..-20', { message: 'incompatible range bounds', start: 0, end: 8, code: 'incompatible-range-bounds' }],
    ['1..', { message: 'expected digit', start: 3, end: 3, code: 'invalid-integer' }],
    ['1...2', { message: 'expected digit', start: 3, end: 5, code: 'invalid-integer' }],
    ['1.5', { message: 'expected digit', start: 1, end: 3, code: 'invalid-integer' }],
    ['1..08', { message: RADIX(INVALID, 8), start: 3, end: 5, code: 'invalid-integer' }],
    ['1-2', { message: 'unrecognised input', start: 1, end: 3, code: 'unrecognised-input' }],
  ];
  for (const [text, e] of errors) test(`${text} -> ${e.message}`, () => expectErr(parseIntSetItem(text), e, text));

  test('an unspaced token holds as many elements as the engine reads', () => {
    expectOk(parseIntSetItems('1-2'), [[1, 1], [-2, -2]], '1-2');
    expectOk(parseIntSetItems('10..20-5'), [[10, 20], [-5, -5]], '10..20-5');
    expectOk(parseIntSetItems('80'), [[80, 80]], '80');
    expectErr(parseIntSetItems('1.5'), { message: 'expected digit', start: 1, end: 3, code: 'invalid-integer' }, '1.5');
    expectErr(parseIntSetItems(','), { message: 'expected digit', start: 0, end: 1, code: 'invalid-integer' }, 'comma');
  });
});

describe('parseHexBytes', () => {
  const ok: [string, string][] = [
    ['01:2e:f3-77.12', bin(0x01, 0x2e, 0xf3, 0x77, 0x12)],
    ['6F:72:67', 'org'],
    ['01:2f-34', bin(0x01, 0x2f, 0x34)],
    ['12:34', bin(0x12, 0x34)],
    ['ff.FF', bin(0xff, 0xff)],
  ];
  for (const [text, value] of ok) test(`${text}`, () => expectOk(parseHexBytes(text), value, text));

  const errors: [string, string, Err][] = [
    ['80', '', { message: 'expected 1 characters, but found 0', start: 2, end: 2, code: 'invalid-hex-bytes', hint: /quote it/ }],
    ['41', '', { message: 'expected 1 characters, but found 0', start: 2, end: 2, code: 'invalid-hex-bytes' }],
    ['80', ' and ssl', { message: 'expected byte separator', start: 2, end: 3, code: 'invalid-hex-bytes', hint: /quote it/ }],
    ['80', ')', { message: 'expected byte separator', start: 2, end: 3, code: 'invalid-hex-bytes' }],
    ['01:4x', '', { message: RADIX(INVALID, 16), start: 3, end: 5, code: 'invalid-hex-bytes' }],
    ['01:', '', { message: 'expected 2 characters, but found 0', start: 3, end: 3, code: 'invalid-hex-bytes' }],
    ['01:0', '', { message: 'expected 2 characters, but found 1', start: 3, end: 4, code: 'invalid-hex-bytes' }],
    ['01:', ' and', { message: RADIX(INVALID, 16), start: 3, end: 5, code: 'invalid-hex-bytes' }],
    ['1.2.3.4', '', { message: RADIX(INVALID, 16), start: 0, end: 2, code: 'invalid-hex-bytes' }],
    ['8', '', { message: 'expected 2 characters, but found 1', start: 0, end: 1, code: 'invalid-hex-bytes' }],
    ['c2:b4710c68', '', { message: 'unrecognised input', start: 5, end: 11, code: 'unrecognised-input' }],
    // A comma in a set: the engine's Bytes message (the checker adds the hint).
    [',', '', { message: RADIX(INVALID, 16), start: 0, end: 1, code: 'invalid-hex-bytes' }],
    [',', ' "b"}', { message: RADIX(INVALID, 16), start: 0, end: 2, code: 'invalid-hex-bytes' }],
  ];
  for (const [text, after, e] of errors) {
    test(`${text}${after ? ` followed by ${JSON.stringify(after)}` : ''} -> ${e.message}`, () =>
      expectErr(parseHexBytes(text, after), e, text));
  }

  test('a lone comma has no hint of its own', () => {
    const r = parseHexBytes(',');
    assert.ok(!r.ok && r.hint === undefined);
  });

  test('set tokens are read element after element', () => {
    expectOk(parseHexBytesItems('01:02'), [bin(1, 2)], '01:02');
    expectErr(parseHexBytesItems('c2:b4710c68'), { message: 'expected byte separator', start: 7, end: 8, code: 'invalid-hex-bytes' }, 'c2:b4…');
  });
});

describe('validateListName', () => {
  const ok = ['office_network', 'cf.open_proxies', 'hello1234567890', 'a..b', 'x'];
  for (const name of ok) test(`$${name}`, () => expectOk(validateListName(name), name, name));

  const errors: [string, string, Err][] = [
    ['Office', '', { message: 'invalid list name "O"', start: 0, end: 1, code: 'invalid-list-name', hint: /lowercase/ }],
    ['', '', { message: 'invalid list name ""', start: 0, end: 0, code: 'invalid-list-name' }],
    ['', ' and ssl', { message: 'invalid list name " "', start: 0, end: 1, code: 'invalid-list-name' }],
    ['', '"x"', { message: 'invalid list name "\\""', start: 0, end: 1, code: 'invalid-list-name' }],
    ['.', '', { message: 'invalid list name "."', start: 0, end: 1, code: 'invalid-list-name' }],
    ['.abc', '', { message: 'invalid list name ".abc"', start: 0, end: 4, code: 'invalid-list-name' }],
    ['.x', '', { message: 'invalid list name ".x"', start: 0, end: 2, code: 'invalid-list-name' }],
    ['x.', '', { message: 'invalid list name "x."', start: 0, end: 2, code: 'invalid-list-name' }],
    ['abc.', '', { message: 'invalid list name "abc."', start: 0, end: 4, code: 'invalid-list-name' }],
    ['abc.Def', '', { message: 'invalid list name "abc."', start: 0, end: 4, code: 'invalid-list-name' }],
    ['office_A', '', { message: 'unrecognised input', start: 7, end: 8, code: 'unrecognised-input', hint: /lowercase/ }],
  ];
  for (const [name, after, e] of errors) test(`$${name}${after} -> ${e.message}`, () => expectErr(validateListName(name, after), e, name));
});

describe('index keys', () => {
  const ok: [string, number][] = [
    ['0', 0],
    ['1', 1],
    ['99999', 99999],
    ['4294967295', 4294967295],
    ['0x10', 16],
    ['010', 8],
  ];
  for (const [text, value] of ok) test(`[${text}]`, () => expectOk(parseIndexLiteral(text), value, text));

  const QUOTED_OR_INT = 'expected literal "expected quoted utf8 string or positive integer"';
  const POSITIVE = 'expected literal "expected positive integer as index"';
  const errors: [string, Err][] = [
    ['-1', { message: POSITIVE, start: 0, end: 2, code: 'invalid-index' }],
    ['4294967296', { message: POSITIVE, start: 0, end: 10, code: 'invalid-index' }],
    ['08', { message: QUOTED_OR_INT, start: 0, end: 2, code: 'invalid-index' }],
    ['x', { message: QUOTED_OR_INT, start: 0, end: 1, code: 'invalid-index' }],
    ['1.5', { message: 'expected literal "]"', start: 1, end: 3, code: 'invalid-index' }],
  ];
  for (const [text, e] of errors) test(`[${text}] -> ${e.message}`, () => expectErr(parseIndexLiteral(text), e, text));

  test('quoted map keys', () => {
    expectOk(decodeMapKey('"a"'), 'a', 'a');
    expectOk(decodeMapKey('"content-type"'), 'content-type', 'content-type');
    expectOk(decodeMapKey('"😍"'), utf8ToBinary('😍'), 'emoji');
    expectOk(decodeMapKey('"\\xc3\\xa9"'), bin(0xc3, 0xa9), 'escaped UTF-8');
    expectErr(decodeMapKey('"\\xff"'), { message: 'expected literal "expected utf8 string"', start: 0, end: 6, code: 'invalid-index' }, 'xff');
    expectErr(decodeMapKey('"\\n"'), { message: 'expected ", xHH or OOO after \\', start: 2, end: 3, code: 'invalid-escape' }, 'n');
  });
});
