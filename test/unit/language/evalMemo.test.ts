// The per-request memo of managed-only calls (EvalContext.memo) and the element-by-element
// `any(…)` / `all(…)` over a lifted call: the same results as without them.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { compileExpression, prepareFields } from '../../../server/src/language/index';
import { EvalMemo, type FieldValues } from '../../../server/src/language/evaluate';

const CHECK = { allowManaged: true, plan: 'enterprise', phase: 'http_request_firewall_managed' } as const;

function filter(text: string) {
  const { filter, diagnostics } = compileExpression(text, CHECK);
  assert.ok(filter, JSON.stringify(diagnostics));
  return filter;
}

function values(args: Record<string, string[]>): FieldValues {
  const { values, errors } = prepareFields({ 'crs.args': args, 'crs.args_names': Object.keys(args) });
  assert.deepEqual(errors, []);
  return values;
}

const CHAIN = 't.lowercase(t.urlDecodeUni(concat(crs.values(crs.args), crs.args_names)[*])[*])[*]';

describe('EvalContext.memo', () => {
  const rules = [
    filter(`any(op.rx(${CHAIN}, "select"))`),
    filter(`any(op.contains(${CHAIN}, "union"))`),
    filter(`all(op.rx(${CHAIN}, "^[a-z ]*$"))`),
    filter(`any(op.rx(t.urlDecodeUni(concat(crs.values(crs.args), crs.args_names)[*])[*], "SELECT"))`),
  ];
  const requests = [values({ q: ['SELECT%20a'] }), values({ q: ['x UNION y'] }), values({ Q: ['plain'] }), values({})];

  test('filters sharing a memo give what they give alone, request after request', () => {
    const memo = new EvalMemo();
    for (const fields of requests) {
      const alone = rules.map((r) => r.matches(fields));
      const shared = rules.map((r) => r.matches(fields, { memo }));
      assert.deepEqual(shared, alone);
      assert.equal(memo.fields, fields, 'the memo is bound to the request being evaluated');
    }
  });

  test('equal chains share one slot: a second rule reads the first one\'s result', () => {
    const memo = new EvalMemo();
    const fields = requests[0];
    rules[0].matches(fields, { memo });
    const filled = memo.values.filter((v) => v !== undefined).length;
    assert.ok(filled >= 3, 'crs.values, concat and the two transformations are remembered');
    rules[1].matches(fields, { memo });
    assert.equal(memo.values.filter((v) => v !== undefined).length, filled, 'the same chain adds nothing');
  });

  test('other field values reset the memo (nothing carries over)', () => {
    const memo = new EvalMemo();
    assert.equal(rules[0].matches(requests[0], { memo }), true);
    assert.equal(rules[0].matches(requests[2], { memo }), false);
    assert.equal(rules[0].matches(requests[0], { memo }), true);
  });
});

describe('any / all over a lifted call', () => {
  const cases: [string, Record<string, string[]>, boolean][] = [
    ['any(op.rx(crs.args_names[*], "^a"))', { b: ['1'], ab: ['2'] }, true],
    ['any(op.rx(crs.args_names[*], "^a"))', { b: ['1'] }, false],
    ['any(op.rx(crs.args_names[*], "^a"))', {}, false],
    ['all(op.rx(crs.args_names[*], "^a"))', { a: ['1'], ab: ['2'] }, true],
    ['all(op.rx(crs.args_names[*], "^a"))', { a: ['1'], b: ['2'] }, false],
    ['all(op.rx(crs.args_names[*], "^a"))', {}, true],
    ['not any(op.streq(crs.values(crs.args)[*], "x"))', { a: ['y', 'x'] }, false],
  ];
  for (const [text, args, expected] of cases) {
    test(`${text} over ${JSON.stringify(args)}: ${expected}`, () => {
      assert.equal(filter(text).matches(values(args)), expected);
    });
  }
});
