/**
 * Property tests of the language core:
 *   (a) parsing, checking and formatting never throw, whatever the input;
 *   (b) formatting generated valid expressions keeps their syntax tree and their checked
 *       meaning (IR), and is idempotent, in every notation and at every width;
 *   (c) parsing (and formatting) time grows linearly with the length of the input.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { formatExpression, type FormatOptions } from '../../../server/src/language/format';
import { checkExpression } from '../../../server/src/language/index';
import { parseExpression } from '../../../server/src/language/parse';
import { astShape } from './astShape';
import { GROWTH_BOUND, minCpuTime } from '../../cpuTime';

const RUNS = 300;

// ---------------------------------------------------------------------------------------
// (a) Arbitrary input

/** Pieces of the language, including the awkward ones: quotes, escapes, raw-string delimiters, tabs. */
const TOKENS = [
  'http.host', 'ssl', 'ip.src', 'cf.edge.server_port', 'http.request.headers', 'http.request.uri.path', 'lower', 'len',
  'any', 'all', 'true', 'eq', '==', 'ne', '!=', 'lt', '<', 'le', '<=', 'gt', '>', 'ge', '>=', 'contains', 'matches', '~',
  'wildcard', 'strict wildcard', 'strict', 'in', '&', 'bitwise_and', 'and', '&&', 'or', '||', 'xor', '^^', 'not', '!',
  '(', ')', '[', ']', '{', '}', ',', '*', '[*]', '[0]', '["x"]', '"', '\\', '\\"', '\\\\', '\\x41', '\\101', '\\n',
  'r"', 'r#"', '"#', '#', 'r', '$', '$list', '$cf.open_proxies', '"a"', '"\\d+["]"', 'r#"x"y"#', '1', '0x1F', '010',
  '-5', '1.2.3.4', '2001:db8::1', '10.0.0.0/8', '1..5', 'ab:cd', '.', '..', ':', '/', '-', '_', ' ', '  ', '\n', '\r\n',
  '\r', '\t', '\u00a0', '\u2028', 'é', '😀', '\ud800',
];

const tokenSoup = fc.array(fc.constantFrom(...TOKENS), { maxLength: 40 }).map((ts) => ts.join(''));
const spacedTokenSoup = fc.array(fc.constantFrom(...TOKENS), { maxLength: 40 }).map((ts) => ts.join(' '));

const ARBITRARY_INPUTS: ReadonlyArray<readonly [string, fc.Arbitrary<string>]> = [
  ['fc.string', fc.string({ maxLength: 200 })],
  ['full Unicode strings', fc.string({ unit: 'binary', maxLength: 200 })],
  ['grapheme strings', fc.string({ unit: 'grapheme', maxLength: 100 })],
  ['token soup', tokenSoup],
  ['spaced token soup', spacedTokenSoup],
];

for (const [name, arb] of ARBITRARY_INPUTS) {
  test(`parseExpression, checkExpression and formatExpression never throw (${name})`, () => {
    fc.assert(
      fc.property(arb, (text) => {
        const parsed = parseExpression(text);
        assert.ok(parsed.ast !== undefined || parsed.diagnostics.length > 0);
        const checked = checkExpression(text);
        assert.ok(Array.isArray(checked.diagnostics));
        const formatted = formatExpression(text);
        assert.equal(formatted.text === undefined, parsed.ast === undefined);
      }),
      { numRuns: RUNS },
    );
  });
}

test('pathological nesting and length never throw', () => {
  for (const text of [
    '('.repeat(5000) + 'ssl' + ')'.repeat(5000),
    'not '.repeat(5000) + 'ssl',
    '!'.repeat(5000) + 'ssl',
    'any('.repeat(2000) + 'x' + ')'.repeat(2000),
    'lower('.repeat(2000) + 'http.host' + ')'.repeat(2000) + ' eq "a"',
    '('.repeat(5000),
    'ssl or '.repeat(3000) + 'ssl',
    '"' + 'a'.repeat(20000),
  ]) {
    assert.doesNotThrow(() => parseExpression(text));
    assert.doesNotThrow(() => checkExpression(text));
    assert.doesNotThrow(() => formatExpression(text));
  }
});

test('names of Object.prototype members are ordinary unknown names', () => {
  for (const text of ['__proto__', 'constructor', 'toString', 'http.host eq __proto__', '__proto__(http.host)', 'hasOwnProperty.x']) {
    assert.doesNotThrow(() => checkExpression(text), text);
    assert.ok(checkExpression(text).diagnostics.some((d) => d.severity === 'error'), text);
    assert.equal(formatExpression(text).text, text);
  }
});

test('whatever parses formats to text with the same syntax tree, idempotently (token soup)', () => {
  fc.assert(
    fc.property(fc.oneof(tokenSoup, spacedTokenSoup), fc.constantFrom(10, 40, 100), (text, width) => {
      const parsed = parseExpression(text);
      if (!parsed.ast) return;
      const out = formatExpression(text, { width }).text;
      assert.ok(out !== undefined);
      assert.deepEqual(astShape(parseExpression(out).ast), astShape(parsed.ast));
      assert.equal(formatExpression(out, { width }).text, out);
    }),
    { numRuns: 1000 },
  );
});

// ---------------------------------------------------------------------------------------
// (b) Valid expressions over the HTTP scheme

type Arb = fc.Arbitrary<string>;
type Part = string | Arb;

/** Concatenates constant and generated parts. */
function seq(...parts: Part[]): Arb {
  return fc.tuple(...parts.map((p) => (typeof p === 'string' ? fc.constant(p) : p))).map((xs) => xs.join(''));
}

/** White space between tokens: at least one character / possibly none (only where tokens self-delimit). */
const ws1: Arb = fc.constantFrom(' ', ' ', ' ', '  ', '\n', '\r\n', ' \n    ');
const ws0: Arb = fc.constantFrom('', '', ' ', '\n');

const hex2 = fc.integer({ min: 0, max: 255 }).map((n) => n.toString(16).padStart(2, '0'));
const hexDigitsCase = fc.boolean();

/** Quoted strings with every escape form, non-ASCII characters and line breaks. */
const quoted: Arb = fc
  .array(
    fc.oneof(
      fc.constantFrom('a', 'b', 'Z', '0', '/', '.', '-', '_', ' ', '*', 'é', '😀', '\n', '[', ']', '#', "'"),
      fc.constantFrom('\\"', '\\\\', '\\x41', '\\x7f', '\\101', '\\377'),
    ),
    { maxLength: 8 },
  )
  .map((cs) => `"${cs.join('')}"`);

const rawContent = fc.array(fc.constantFrom('a', 'b', ' ', '\\', '/', 'é', '\n', '*'), { maxLength: 6 }).map((cs) => cs.join(''));
const raw: Arb = fc.oneof(
  rawContent.map((s) => `r"${s}"`),
  fc.tuple(rawContent, rawContent).map(([a, b]) => `r#"${a}"${b}"#`),
  rawContent.map((s) => `r##"${s}"#"##`),
);

const hexBytes: Arb = fc
  .tuple(fc.array(fc.tuple(fc.constantFrom(':', '-', '.'), hex2), { minLength: 1, maxLength: 3 }), hex2, hexDigitsCase)
  .map(([rest, first, upper]) => {
    const s = first + rest.map(([sep, h]) => sep + h).join('');
    return upper ? s.toUpperCase() : s;
  });

const bytesLiteral: Arb = fc.oneof(quoted, raw, hexBytes);
// As a function argument a token starting with a digit is read as an integer (the
// engine's order: IP, integer, hex bytes), so hex bytes there start with a letter.
const hexBytesArg: Arb = fc.tuple(fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f', 'A', 'F'), hexBytes).map(([l, h]) => l + h.slice(1));
const bytesArgLiteral: Arb = fc.oneof(quoted, raw, hexBytesArg);

/** Valid regular expressions as written after `matches` (regex-literal lexing of quoted strings). */
const regexLiteral: Arb = fc.constantFrom(
  '"^/api/"',
  '"\\d+\\.php$"',
  '"[a-z\\"]+"',
  '"[a-z"\\]]+\\d{1,10}\\""',
  '"(?i)^admin"',
  'r"^\\w+$"',
  'r#"a"b"#',
  '""',
);

const wildcardLiteral: Arb = fc.constantFrom('"*.example.com"', '"/a/*/b"', 'r"*.Example.*"', '"\\\\*x"', 'r"\\*"', '""');

const decimal = fc.integer({ min: -100000, max: 100000 }).map(String);
const intLiteral: Arb = fc.oneof(
  decimal,
  fc.integer({ min: 0, max: 0xffff }).map((n) => '0x' + n.toString(16)),
  fc.integer({ min: 1, max: 0o777 }).map((n) => '0' + n.toString(8)),
);
const intRange: Arb = fc
  .tuple(fc.integer({ min: -1000, max: 1000 }), fc.integer({ min: 0, max: 1000 }))
  .map(([a, d]) => `${a}..${a + d}`);

const u32 = fc.integer({ min: 0, max: 0xffffffff });
const ipv4 = (n: number): string => [24, 16, 8, 0].map((s) => (n >>> s) & 255).join('.');
const ipv4Literal: Arb = u32.map(ipv4);
const ipv6Literal: Arb = fc.oneof(
  fc.constantFrom('::1', '::', '2001:db8::1', '2001:DB8:0:0:0:0:0:1', '::ffff:192.0.2.1', 'fe80::1:2'),
  fc.array(fc.integer({ min: 0, max: 0xffff }), { minLength: 8, maxLength: 8 }).map((g) => g.map((x) => x.toString(16)).join(':')),
);
const ipLiteral: Arb = fc.oneof(ipv4Literal, ipv6Literal);
const ipv4Cidr: Arb = fc.tuple(u32, fc.integer({ min: 0, max: 32 })).map(([n, len]) => {
  const mask = len === 0 ? 0 : (0xffffffff << (32 - len)) >>> 0;
  return `${ipv4((n & mask) >>> 0)}/${len}`;
});
const ipv4Range: Arb = fc.tuple(u32, u32).map(([a, b]) => `${ipv4(Math.min(a, b))}..${ipv4(Math.max(a, b))}`);
const ipSetItem: Arb = fc.oneof(ipLiteral, ipv4Cidr, ipv4Range, fc.constantFrom('2001:db8::/32', '::/0'));

function set(item: Arb): Arb {
  return fc
    .tuple(ws0, fc.array(fc.tuple(item, ws1), { maxLength: 6 }))
    .map(([lead, items]) => `{${lead}${items.map(([i, w]) => i + w).join('')}}`);
}

const BYTES_FIELDS = ['http.host', 'http.request.uri.path', 'http.request.uri.query', 'http.request.method', 'http.user_agent', 'http.cookie', 'raw.http.request.uri.path'];
const INT_FIELDS = ['cf.edge.server_port', 'cf.threat_score', 'ip.src.asnum', 'http.request.timestamp.sec'];
const BOOL_FIELDS = ['ssl', 'http.request.headers.truncated'];
const MAP_FIELDS = ['http.request.headers', 'http.request.uri.args'];
const ARRAY_FIELDS = ['http.request.headers.names', 'http.request.uri.args.values'];

const bytesField: Arb = fc.constantFrom(...BYTES_FIELDS);
const mapKey: Arb = fc.constantFrom('"x"', '"content-type"', '"x-a"', '"é"', '""');
const arrayIndex: Arb = fc.constantFrom('0', '1', '0x1', '010');

/** `map[ "k" ]`: spaces allowed inside the brackets, never before `[`. */
const mapEntry: Arb = seq(fc.constantFrom(...MAP_FIELDS), '[', ws0, mapKey, ws0, ']');

const bytesValue: Arb = fc.oneof(
  { weight: 4, arbitrary: bytesField },
  seq(mapEntry, '[', ws0, arrayIndex, ws0, ']'),
  seq(fc.constantFrom('lower', 'upper'), ws0, '(', ws0, bytesField, ws0, ')'),
  seq('concat(', ws0, bytesField, ws0, ',', ws0, bytesArgLiteral, ws0, ')'),
);
const intValue: Arb = fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...INT_FIELDS) }, seq('len(', ws0, bytesField, ws0, ')'));

const op = (...ops: string[]): Arb => fc.constantFrom(...ops);
const ORDER = ['eq', '==', 'ne', '!=', 'lt', '<', 'le', '<=', 'gt', '>', 'ge', '>='];

const bytesComparison: Arb = fc.oneof(
  seq(bytesValue, ws1, op(...ORDER, 'contains'), ws1, bytesLiteral),
  seq(bytesValue, ws1, op('matches', '~'), ws1, regexLiteral),
  seq(bytesValue, ws1, op('wildcard', 'strict wildcard'), ws1, wildcardLiteral),
  seq(bytesValue, ws1, 'in', ws1, set(bytesLiteral)),
  seq(bytesField, ws1, op('eq', '==', 'ne', '!=', 'lt', 'ge'), ws1, bytesValue),
);
const intComparison: Arb = fc.oneof(
  seq(intValue, ws1, op(...ORDER, '&', 'bitwise_and'), ws1, intLiteral),
  seq(intValue, ws1, 'in', ws1, set(fc.oneof(intLiteral, intRange))),
  seq(fc.constantFrom(...INT_FIELDS), ws1, op('eq', 'ne', 'gt'), ws1, intValue),
);
const ipComparison: Arb = fc.oneof(
  seq('ip.src', ws1, op('eq', '==', 'ne', '!=', 'lt', 'ge'), ws1, ipLiteral),
  seq('ip.src', ws1, 'in', ws1, fc.oneof(set(ipSetItem), fc.constantFrom('$office_network', '$cf.open_proxies'))),
);
const boolAtom: Arb = fc.oneof(
  fc.constantFrom(...BOOL_FIELDS),
  seq(fc.constantFrom('starts_with', 'ends_with'), ws0, '(', ws0, bytesField, ws0, ',', ws0, bytesArgLiteral, ws0, ')'),
  seq('has_key(', ws0, fc.constantFrom(...MAP_FIELDS), ws0, ',', ws0, quoted, ws0, ')'),
);

/** Element-wise conditions (Array<Bool>) for `any(…)` / `all(…)`. */
const eachValue: Arb = fc.oneof(seq(mapEntry, '[*]'), seq(fc.constantFrom(...ARRAY_FIELDS), '[', ws0, '*', ws0, ']'));
const eachCondition: Arb = seq(eachValue, ws1, op('eq', '==', 'ne', 'contains'), ws1, bytesLiteral);
const arrayBool: Arb = fc.oneof(
  eachCondition,
  seq(eachValue, ws1, op('matches', '~'), ws1, regexLiteral),
  seq(fc.constantFrom('not', '!'), ws1, eachValue, ws1, 'in', ws1, set(bytesLiteral)),
  seq('(', ws0, eachCondition, ws1, op('or', '||', 'and', '&&', 'xor', '^^'), ws1, eachCondition, ws0, ')'),
  seq('lower(', ws0, eachValue, ws0, ')[*]', ws1, op('eq', 'ne'), ws1, quoted),
);
const quantifier: Arb = seq(fc.constantFrom('any', 'all'), ws0, '(', ws0, arrayBool, ws0, ')');

const atom: Arb = fc.oneof(bytesComparison, intComparison, ipComparison, boolAtom, quantifier);
const LOGICAL_OPS = ['and', '&&', 'or', '||', 'xor', '^^'];

const { expr: validExpression } = fc.letrec<{ expr: string }>((tie) => ({
  expr: fc.oneof(
    { maxDepth: 3, depthIdentifier: 'expr' },
    { weight: 3, arbitrary: atom },
    seq(fc.constantFrom('not', '!'), ws1, tie('expr')),
    seq('!', tie('expr')),
    seq('(', ws0, tie('expr'), ws0, ')'),
    fc
      .tuple(tie('expr'), fc.array(fc.tuple(ws1, fc.constantFrom(...LOGICAL_OPS), ws1, tie('expr')), { minLength: 1, maxLength: 3 }))
      .map(([first, rest]) => first + rest.map((r) => r.join('')).join('')),
  ),
}));

const formatOptions: fc.Arbitrary<FormatOptions> = fc.record(
  {
    width: fc.constantFrom(0, 20, 40, 80, 100, 200),
    indent: fc.constantFrom('  ', '    ', ' '),
    notation: fc.constantFrom<'preserve' | 'english' | 'c-like'>('preserve', 'english', 'c-like'),
  },
  { requiredKeys: [] },
);

function errors(text: string): string[] {
  return checkExpression(text)
    .diagnostics.filter((d) => d.severity === 'error')
    .map((d) => `${d.code}: ${d.message} at ${d.range.start}`);
}

/** Operator tokens of a tree, as written. */
function operatorTexts(node: unknown, out: string[] = []): string[] {
  if (Array.isArray(node)) {
    for (const n of node) operatorTexts(n, out);
  } else if (node !== null && typeof node === 'object') {
    const o = node as Record<string, unknown>;
    if (o.kind === 'logical') for (const t of o.ops as { text: string }[]) out.push(t.text);
    if (o.kind === 'not') out.push((o.token as { text: string }).text);
    if (o.kind === 'comparison' && o.op) out.push((o.op as { text: string }).text);
    for (const v of Object.values(o)) operatorTexts(v, out);
  }
  return out;
}

const ENGLISH_TOKENS = new Set(['and', 'or', 'xor', 'not', 'eq', 'ne', 'lt', 'le', 'gt', 'ge', 'matches', 'bitwise_and', 'contains', 'wildcard', 'strict wildcard', 'in']);
const C_LIKE_TOKENS = new Set(['&&', '||', '^^', '!', '==', '!=', '<', '<=', '>', '>=', '~', '&', 'contains', 'wildcard', 'strict wildcard', 'in']);

test('the generator of valid expressions produces expressions without errors', () => {
  fc.assert(
    fc.property(validExpression, (text) => {
      assert.deepEqual(errors(text), [], text);
    }),
    { numRuns: RUNS },
  );
});

test('formatting a valid expression keeps its syntax tree and is idempotent (notation preserved)', () => {
  fc.assert(
    fc.property(validExpression, formatOptions, (text, options) => {
      const opts = { ...options, notation: 'preserve' as const };
      const out = formatExpression(text, opts).text;
      assert.ok(out !== undefined, text);
      assert.deepEqual(astShape(parseExpression(out).ast), astShape(parseExpression(text).ast));
      assert.equal(formatExpression(out, opts).text, out);
    }),
    { numRuns: RUNS },
  );
});

test('converting the notation keeps the tree (but for operator spellings), uses only that notation, and is idempotent', () => {
  fc.assert(
    fc.property(validExpression, fc.constantFrom<'english' | 'c-like'>('english', 'c-like'), fc.constantFrom(20, 100), (text, notation, width) => {
      const out = formatExpression(text, { notation, width }).text;
      assert.ok(out !== undefined, text);
      const ast = parseExpression(out).ast;
      assert.deepEqual(astShape(ast, true), astShape(parseExpression(text).ast, true));
      const allowed = notation === 'english' ? ENGLISH_TOKENS : C_LIKE_TOKENS;
      for (const t of operatorTexts(ast)) assert.ok(allowed.has(t), `${t} in ${out}`);
      assert.equal(formatExpression(out, { notation, width }).text, out);
      // And back: english -> c-like -> english is the identity on formatted text.
      const other = notation === 'english' ? 'c-like' : 'english';
      assert.equal(formatExpression(formatExpression(out, { notation: other, width }).text!, { notation, width }).text, out);
    }),
    { numRuns: RUNS },
  );
});

test('formatting preserves the checked meaning (IR) and the diagnostics', () => {
  fc.assert(
    fc.property(validExpression, formatOptions, (text, options) => {
      const out = formatExpression(text, options).text;
      assert.ok(out !== undefined, text);
      const before = checkExpression(text);
      const after = checkExpression(out);
      assert.ok(before.ir !== undefined, text);
      assert.deepEqual(after.ir, before.ir);
      const codes = (ds: typeof before.diagnostics) => ds.map((d) => `${d.severity}:${d.code}:${d.message}`).sort();
      assert.deepEqual(codes(after.diagnostics), codes(before.diagnostics));
    }),
    { numRuns: RUNS },
  );
});

/** A valid expression with some of its white space (outside string literals) removed: odd token adjacency. */
const squeezedExpression: Arb = fc.tuple(validExpression, fc.infiniteStream(fc.boolean())).map(([text, drops]) =>
  text
    .split(/(r#*"[^"]*"#*|"(?:\\[\s\S]|[^"\\])*")/)
    .map((piece, i) => (i % 2 === 1 ? piece : piece.replace(/[ \r\n]+/g, (w) => (drops.next().value ? '' : w))))
    .join(''),
);

test('squeezed expressions that still parse format to the same tree, idempotently', () => {
  let parsed = 0;
  fc.assert(
    fc.property(squeezedExpression, fc.constantFrom(20, 100), (text, width) => {
      const ast = parseExpression(text).ast;
      if (!ast) return;
      parsed++;
      const out = formatExpression(text, { width }).text;
      assert.ok(out !== undefined);
      assert.deepEqual(astShape(parseExpression(out).ast), astShape(ast), `${JSON.stringify(text)} -> ${JSON.stringify(out)}`);
      assert.equal(formatExpression(out, { width }).text, out);
    }),
    { numRuns: RUNS },
  );
  assert.ok(parsed > RUNS / 10, `only ${parsed} of ${RUNS} squeezed expressions parsed`);
});

test('formatted output has no tabs, no trailing newline, and no trailing spaces outside literals', () => {
  fc.assert(
    fc.property(validExpression, formatOptions, (text, options) => {
      const out = formatExpression(text, options).text!;
      assert.doesNotMatch(out, /\t|\s$|^\s/);
      // Every line break outside string literals is followed by indentation only and
      // preceded by a non-space: strip the literals first.
      const skeleton = out.replace(/r(#*)"[\s\S]*?"\1|"(?:\\[\s\S]|[^"\\])*"/g, 'L');
      assert.doesNotMatch(skeleton, / \n/, out);
    }),
    { numRuns: RUNS },
  );
});

// ---------------------------------------------------------------------------------------
// (c) Linear time

const RULE = '(http.host eq "example.com" and ip.src in {192.0.2.0/24 198.51.100.7} and not http.request.uri.path contains "/admin")';

function ofLength(n: number): string {
  const parts: string[] = [];
  let len = 0;
  while (len < n) {
    parts.push(RULE);
    len += RULE.length + 4;
  }
  return parts.join(' or ');
}

test('parse time grows linearly with the input length', () => {
  const t1 = minCpuTime(() => assert.ok(parseExpression(ofLength(1000)).ast));
  const t8 = minCpuTime(() => assert.ok(parseExpression(ofLength(8000)).ast));
  assert.ok(t8 / t1 < GROWTH_BOUND, `1k: ${t1} us, 8k: ${t8} us`);
});

test('format time grows linearly with the input length', () => {
  for (const width of [100, 20]) {
    const t1 = minCpuTime(() => assert.ok(formatExpression(ofLength(1000), { width }).text));
    const t8 = minCpuTime(() => assert.ok(formatExpression(ofLength(8000), { width }).text));
    assert.ok(t8 / t1 < GROWTH_BOUND, `width ${width}: 1k: ${t1} us, 8k: ${t8} us`);
  }
});
