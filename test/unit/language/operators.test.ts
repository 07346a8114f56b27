import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseExpression } from '../../../server/src/language/parse';
import {
  LOGICAL_OPERATORS,
  LOGICAL_SPELLINGS,
  OPERATORS,
  OPERATOR_SPELLINGS,
  isDiscouraged,
  isStringOnly,
  operatorOf,
  operatorsFor,
} from '../../../server/src/language/scheme/operators';
import { BOOL, BYTES, INT, IP, arrayOf } from '../../../server/src/language/types';

test('every comparison operator has a title, docs and its English name as its spelling', () => {
  assert.equal(OPERATORS.length, 12);
  for (const o of OPERATORS) {
    assert.equal(o.english, o.op, o.op);
    assert.ok(o.title.length > 0, o.op);
    assert.ok(o.lines.length >= 2, o.op);
    assert.ok(o.types.length > 0, o.op);
  }
});

test('the C-like spellings: exactly these operators have one', () => {
  assert.deepEqual(
    OPERATORS.filter((o) => o.clike).map((o) => [o.op, o.clike]),
    [['eq', '=='], ['ne', '!='], ['lt', '<'], ['le', '<='], ['gt', '>'], ['ge', '>='], ['matches', '~'], ['bitwise_and', '&']],
  );
  assert.deepEqual(
    Object.values(LOGICAL_OPERATORS).map((o) => [o.english, o.clike]),
    [['and', '&&'], ['or', '||'], ['xor', '^^'], ['not', '!']],
  );
});

test('spellings map to their operator in both notations', () => {
  assert.equal(OPERATOR_SPELLINGS.size, 20);
  assert.equal(operatorOf('=='), 'eq');
  assert.equal(operatorOf('~'), 'matches');
  assert.equal(operatorOf('strict wildcard'), 'strict wildcard');
  assert.equal(operatorOf('&'), 'bitwise_and');
  assert.equal(operatorOf('and'), undefined);
  assert.equal(operatorOf('EQ'), undefined, 'operators are lower case only');
  assert.equal(LOGICAL_SPELLINGS.get('^^'), 'xor');
  assert.equal(LOGICAL_SPELLINGS.get('!'), 'not');
});

test('the parser knows every spelling in the table', () => {
  for (const [spelling, op] of OPERATOR_SPELLINGS) {
    const rhs = op === 'in' ? '{"a"}' : '"a"';
    const parsed = parseExpression(`x ${spelling} ${rhs}`);
    assert.ok(parsed.ast && parsed.ast.kind === 'comparison', spelling);
    assert.equal(parsed.ast.op?.op, op, spelling);
    assert.equal(parsed.ast.op?.text, spelling);
  }
});

test('operators by left-hand type', () => {
  assert.deepEqual(
    operatorsFor(BYTES).map((o) => o.op),
    ['eq', 'ne', 'lt', 'le', 'gt', 'ge', 'contains', 'matches', 'wildcard', 'strict wildcard', 'in'],
  );
  assert.deepEqual(operatorsFor(INT).map((o) => o.op), ['eq', 'ne', 'lt', 'le', 'gt', 'ge', 'in', 'bitwise_and']);
  assert.deepEqual(operatorsFor(IP).map((o) => o.op), ['eq', 'ne', 'lt', 'le', 'gt', 'ge', 'in']);
  assert.deepEqual(operatorsFor(BOOL), []);
  assert.deepEqual(operatorsFor(arrayOf(BYTES)), []);
});

test('ordering is discouraged on IP addresses only; the string-only operators', () => {
  assert.deepEqual(
    OPERATORS.filter((o) => isDiscouraged(o.op, IP)).map((o) => o.op),
    ['lt', 'le', 'gt', 'ge'],
  );
  assert.equal(isDiscouraged('lt', INT), false);
  assert.equal(isDiscouraged('lt', BYTES), false);
  assert.deepEqual(
    OPERATORS.filter((o) => isStringOnly(o.op)).map((o) => o.op),
    ['contains', 'matches', 'wildcard', 'strict wildcard'],
  );
  assert.deepEqual(
    OPERATORS.filter((o) => o.plan).map((o) => [o.op, o.plan]),
    [['matches', 'business']],
  );
});
