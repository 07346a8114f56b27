/**
 * The hand-written parser (fastParse.ts) against the grammar (rules.ohm): wherever the fast
 * path gives a tree, ohm gives a deep-equal one, spans included; where ohm refuses the text,
 * so does the fast path (parseExpression then reports ohm's error). Inputs are generated
 * from the grammar's shapes, including its odd corners (keywords glued to names and
 * literals, `not` as a prefix of a name, raw strings with `#`s, regex classes holding `"`,
 * commas in sets), and mutated by deleting or inserting characters.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { fastParse } from '../../../server/src/language/fastParse';
import { parseExpression, parseWithGrammar } from '../../../server/src/language/parse';
import { spacedTokenSoup, squeezedExpression, tokenSoup, validExpression, type Arb } from './expressionArbitraries';

const RUNS = 2000;

/** Both parsers' full results are equal; returns whether the fast path answered. */
function agree(text: string): boolean {
  const ohm = parseWithGrammar(text);
  const ours = parseExpression(text);
  assert.deepStrictEqual(ours, ohm, JSON.stringify(text));
  return fastParse(blank(text)) !== undefined;
}

/** As parse.ts: outer white space blanked. */
function blank(text: string): string {
  const lead = text.length - text.trimStart().length;
  const trail = text.length - text.trimEnd().length;
  return ' '.repeat(lead) + text.slice(lead, text.length - trail) + ' '.repeat(trail);
}

// --- Inputs from the grammar's shapes -------------------------------------------------

const seq = (...parts: (string | Arb)[]): Arb => fc.tuple(...parts.map((p) => (typeof p === 'string' ? fc.constant(p) : p))).map((xs) => xs.join(''));
const ws: Arb = fc.constantFrom('', ' ', ' ', ' ', '  ', '\n', '\r\n');

const NAMES = ['http.host', 'ssl', 'ip.src', 'a', 'cafe', 'x', 'r', 'nothing', 'notes', 'any', 'all', 'anything', 'order', 'android', 'xor1', 'in', 'eq', 'a.b', 'a..b', 'a.', '_', '1', '0x1', 'lower', 'f'];
const name: Arb = fc.constantFrom(...NAMES);

const quoted: Arb = fc
  .array(fc.constantFrom('a', ' ', '"', '\\"', '\\\\', '\\', '[', ']', 'é', '😀', '\n', '#', 'r'), { maxLength: 6 })
  .map((cs) => `"${cs.join('')}"`);
const raw: Arb = fc
  .tuple(fc.integer({ min: 0, max: 3 }), fc.array(fc.constantFrom('a', '"', '#', '"#', '\\', ' '), { maxLength: 5 }), fc.integer({ min: 0, max: 3 }))
  .map(([open, body, close]) => `r${'#'.repeat(open)}"${body.join('')}"${'#'.repeat(close)}`);
const regex: Arb = fc
  .array(fc.constantFrom('a', '.', '\\d', '\\"', '\\[', '[a-z]', '["]', '[\\]"]', '[', ']', '(', ')', '+', '\\'), { maxLength: 6 })
  .map((cs) => `"${cs.join('')}"`);
const bare: Arb = fc.constantFrom(
  '1', '-5', '0x1F', '010', '1.2.3.4', '10.0.0.0/8', '2001:db8::1', '::1', '1..5', 'ab:cd', 'AB-CD', 'fe80::1', 'cafe:',
  '5or', '5and', '1xor', '5not', '5x', '1and', '1a', '..', ':', '/', '-', '.', '1e', 'ffand', 'a1:b2',
);
const literal: Arb = fc.oneof(quoted, raw, bare);
const set: Arb = fc.array(fc.tuple(ws, fc.oneof(literal, fc.constant(','))), { maxLength: 4 }).chain((items) => seq('{', fc.constant(items.map(([w, i]) => w + i).join('')), ws, '}'));
const listRef: Arb = fc.constantFrom('$list', '$cf.open_proxies', '$', '$a..b');

const CMP = ['eq', '==', 'ne', '!=', 'ge', '>=', 'le', '<=', 'gt', '>', 'lt', '<', 'bitwise_and', '&', 'contains', 'equals', '===', '=', 'eqx'];
const index: Arb = fc.constantFrom('[*]', '[0]', '["k"]', '[ 1 ]', '[\n"a"\n]', '[', '[x]', '[ * ]', '[-1]');

const { expr: shaped } = fc.letrec<{ expr: string; value: string; arg: string; test: string }>((tie) => ({
  value: fc.oneof(
    { maxDepth: 3, depthIdentifier: 'shape' },
    { weight: 3, arbitrary: name },
    seq(name, ws, '(', fc.array(fc.tuple(ws, tie('arg')), { maxLength: 3 }).map((as) => as.map(([w, a]) => w + a).join(',')), ws, ')'),
    seq(tie('value'), index),
  ),
  arg: fc.oneof(
    { maxDepth: 3, depthIdentifier: 'shape' },
    literal,
    tie('value'),
    seq(tie('value'), ws, tie('test')),
    tie('expr'),
  ),
  test: fc.oneof(
    seq(fc.constantFrom(...CMP), ws, fc.oneof(literal, tie('value'))),
    seq('in', ws, fc.oneof(set, listRef)),
    seq(fc.constantFrom('matches', '~'), ws, fc.oneof(regex, raw)),
    seq(fc.constantFrom('wildcard', 'strict wildcard', 'strict  wildcard'), ws, fc.oneof(quoted, raw)),
  ),
  expr: fc.oneof(
    { maxDepth: 3, depthIdentifier: 'shape' },
    { weight: 4, arbitrary: seq(tie('value'), fc.oneof(fc.constant(''), seq(ws, tie('test')))) },
    seq(fc.constantFrom('not', '!', 'not '), ws, tie('expr')),
    seq('(', ws, tie('expr'), ws, ')'),
    seq(fc.constantFrom('any', 'all'), ws, '(', ws, tie('arg'), ws, ')'),
    seq(tie('expr'), ws, fc.constantFrom('and', '&&', 'or', '||', 'xor', '^^', '&', '|'), ws, tie('expr')),
  ),
}));

/** A text with a few characters deleted or inserted: mostly near-misses ohm refuses. */
function mutated(base: Arb): Arb {
  return fc
    .tuple(base, fc.array(fc.tuple(fc.nat(), fc.boolean(), fc.constantFrom(' ', '"', '(', ')', '[', ']', '{', '}', ',', '#', 'r', 'a', '1', '\\', '\t', 'n')), { minLength: 1, maxLength: 3 }))
    .map(([text, edits]) => {
      let t = text;
      for (const [at, insert, c] of edits) {
        const i = t.length === 0 ? 0 : at % (t.length + 1);
        t = insert ? t.slice(0, i) + c + t.slice(i) : t.slice(0, i) + t.slice(i + 1);
      }
      return t;
    });
}

// --- Properties -------------------------------------------------------------------------

test('valid expressions: the fast path parses every one, to the tree ohm builds', () => {
  fc.assert(
    fc.property(validExpression, (text) => {
      assert.ok(agree(text), `the fast path refused ${JSON.stringify(text)}`);
    }),
    { numRuns: RUNS },
  );
});

for (const [what, arb, minFast] of [
  ['grammar-shaped expressions', shaped, 0.4],
  ['squeezed valid expressions', squeezedExpression, 0.5],
  ['mutated valid expressions', mutated(validExpression), 0.2],
  ['mutated grammar-shaped expressions', mutated(shaped), 0.1],
  ['token soup', tokenSoup, 0.02],
  ['spaced token soup', spacedTokenSoup, 0.02],
] as const) {
  test(`${what}: the same tree or the same error as ohm`, () => {
    let fast = 0;
    fc.assert(
      fc.property(arb, (text) => {
        if (agree(text)) fast++;
      }),
      { numRuns: RUNS },
    );
    // The fast path must have answered often enough for the comparison to mean something.
    assert.ok(fast >= minFast * RUNS, `the fast path answered ${fast} of ${RUNS}`);
  });
}

test('the grammar’s odd corners: the same trees as ohm, from the fast path', () => {
  for (const text of [
    'nothing eq 1', // `not` + `hing eq 1`, as the grammar reads it
    'cf.threat_score eq 5or ssl',
    'x eq 1and ssl',
    'lower(1 eq 2)',
    'lower(not)',
    'lower(nothing)',
    'f(1, ab:cd, "x", r#"a"b"#, -)',
    'http.host in {"a","b" , 1}',
    'http.host matches "[\\"]x\\["',
    'http.host eqx',
    'any (x[*] eq 1)',
    'anything(x) eq 1',
    'x[ * ][0]["a"] eq r"b"',
    'a and b or c xor d && e || f ^^ g',
    '!(!(ssl))',
    'ssl&&ssl',
    'http.host strict wildcard r"*"',
  ]) {
    assert.ok(agree(text), `the fast path refused ${JSON.stringify(text)}`);
  }
});

test('what ohm refuses goes to ohm, for its message', () => {
  for (const text of ['http.host equals "a"', 'http.host eq "a', 'ssl and', 'a[', 'x in {', 'f(1 x)', 'ssl\tand ssl', 'r#"a"', 'x matches "[a"', 'strict  wildcard']) {
    assert.equal(agree(text), false, text);
    assert.ok(parseExpression(text).diagnostics.length > 0, text);
  }
});

test('deep nesting is left to ohm', () => {
  for (const depth of [50, 99, 100, 101, 150, 400]) {
    const text = '('.repeat(depth) + 'ssl' + ')'.repeat(depth);
    const notText = 'not '.repeat(depth) + 'ssl';
    agree(text);
    agree(notText);
  }
  assert.equal(fastParse('('.repeat(150) + 'ssl' + ')'.repeat(150)), undefined);
});
