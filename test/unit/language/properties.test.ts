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
import { spacedTokenSoup, squeezedExpression, tokenSoup, validExpression } from './expressionArbitraries';
import { GROWTH_BOUND, minCpuTime } from '../../cpuTime';

const RUNS = 300;

// ---------------------------------------------------------------------------------------
// (a) Arbitrary input


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
