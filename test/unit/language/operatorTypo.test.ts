import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkExpression } from '../../../server/src/language/index';
import { suggestOperator } from '../../../server/src/language/scheme/operators';

/** The one error of `text`: code, message, range, hint and quick-fix replacement. */
function only(text: string) {
  const errors = checkExpression(text).diagnostics.filter((d) => d.severity === 'error');
  assert.equal(errors.length, 1, `${text}: ${JSON.stringify(errors)}`);
  const d = errors[0];
  return { code: d.code, message: d.message, range: [d.range.start, d.range.end], hint: d.hint, replacement: d.data?.replacement };
}

test('a mistyped operator keeps the engine text as message and names the operator meant', () => {
  // Messages as wirefilter words them (test/diff/engineWording.test.ts checks them against the engine).
  assert.deepEqual(only('http.host equals "a"'), {
    code: 'unknown-operator',
    message: 'invalid digit found in string while parsing with radix 16',
    range: [10, 16],
    hint: '`equals` is not an operator: did you mean `eq`?',
    replacement: 'eq',
  });
  assert.deepEqual(only('http.host === "a"'), {
    code: 'unknown-operator',
    message: 'invalid digit found in string while parsing with radix 16',
    range: [10, 13],
    hint: '`===` is not an operator: did you mean `==`?',
    replacement: '==',
  });
  assert.deepEqual(only('http.host = "a"'), {
    code: 'unknown-operator',
    message: 'expected ComparisonOp',
    range: [10, 11],
    hint: '`=` is not an operator: did you mean `==`?',
    replacement: '==',
  });
});

test('the engine text follows the type of the value before the operator', () => {
  const cases: Array<[string, string, [number, number], string]> = [
    ['ip.src.asnum equals 5', 'expected digit', [13, 19], 'eq'],
    ['ip.src.asnum === 5', 'expected digit', [13, 16], '=='],
    ['ip.src equals 1.2.3.4', 'expected IP address character', [7, 13], 'eq'],
    ['ip.src.asnum gte 5', 'invalid digit found in string while parsing with radix 10', [13, 16], 'ge'],
    ['ip.src.asnum => 5', 'expected ComparisonOp', [13, 15], '>='],
    ['http.host !== "a"', 'invalid digit found in string while parsing with radix 16', [10, 13], '!='],
    ['http.host <> "a"', 'invalid digit found in string while parsing with radix 16', [10, 12], '!='],
    ['http.host neq "a"', 'invalid digit found in string while parsing with radix 16', [10, 13], 'ne'],
    ['http.host EQ "a"', 'expected ComparisonOp', [10, 12], 'eq'],
    ['http.host contain "a"', 'expected ComparisonOp', [10, 17], 'contains'],
    ['http.host includes "a"', 'expected literal "{"', [10, 18], 'contains'],
    ['http.host =~ "a"', 'expected ComparisonOp', [10, 12], '~'],
    ['http.host like "a"', 'expected ComparisonOp', [10, 14], 'wildcard'],
    // After a call, an index and inside any(…).
    ['lower(http.host) equals "a"', 'invalid digit found in string while parsing with radix 16', [17, 23], 'eq'],
    ['http.request.headers["a"][0] equals "a"', 'invalid digit found in string while parsing with radix 16', [29, 35], 'eq'],
    ['any(http.request.headers.names[*] equals "a")', 'invalid digit found in string while parsing with radix 16', [34, 40], 'eq'],
    // At the end of the input the grammar reads `eq` and a name `uals`: the checker reports it.
    ['http.host equals', 'invalid digit found in string while parsing with radix 16', [10, 16], 'eq'],
    // Not the first condition.
    ['ssl and http.host equals "a"', 'invalid digit found in string while parsing with radix 16', [18, 24], 'eq'],
  ];
  for (const [text, message, range, meant] of cases) {
    const d = only(text);
    assert.deepEqual([d.code, d.message, d.range, d.replacement], ['unknown-operator', message, range, meant], text);
  }
});

test('words that are not close to an operator keep the engine wording', () => {
  assert.deepEqual(only('http.host foo "a"'), {
    code: 'expected-comparison-op',
    message: 'expected ComparisonOp',
    range: [10, 13],
    hint: 'Put an operator between the field and the value, e.g. `eq`, `contains`, `in`, `matches`.',
    replacement: undefined,
  });
  // A Bool takes no operator at all: not an operator typo.
  assert.equal(only('ssl equals "a"').code, 'unrecognised-input');
  // A value after a real operator is not an operator.
  assert.equal(only('http.host eq uals "a"').code, 'unrecognised-input');
});

test('suggestOperator: aliases, case, typos, in the notation written', () => {
  const cases: Array<[string, string | undefined]> = [
    ['equals', 'eq'],
    ['===', '=='],
    ['=', '=='],
    ['!==', '!='],
    ['<>', '!='],
    ['=>', '>='],
    ['gte', 'ge'],
    ['EQ', 'eq'],
    ['Contains', 'contains'],
    ['contians', 'contains'],
    ['maches', 'matches'],
    ['=~', '~'],
    ['like', 'wildcard'],
    // Real operators and keywords, and words far from any operator.
    ['eq', undefined],
    ['==', undefined],
    ['and', undefined],
    ['foo', undefined],
    ['constructor', undefined],
  ];
  for (const [written, meant] of cases) assert.equal(suggestOperator(written), meant, written);
});
