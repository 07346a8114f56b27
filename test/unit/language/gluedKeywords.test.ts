import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compileExpression, prepareFields } from '../../../server/src/language/index';

/** The result of `text` on `fields`; fails on any error. */
function run(text: string, fields: Record<string, unknown>): boolean {
  const r = compileExpression(text);
  assert.deepEqual(r.diagnostics.filter((d) => d.severity === 'error'), [], text);
  const prepared = prepareFields(fields);
  assert.deepEqual(prepared.errors, [], text);
  return r.filter!.matches(prepared.values);
}

/** The one error of `text`: code, message, range. */
function error(text: string): [string, string, [number, number]] {
  const errors = compileExpression(text).diagnostics.filter((d) => d.severity === 'error');
  assert.equal(errors.length, 1, `${text}: ${JSON.stringify(errors)}`);
  return [errors[0].code, errors[0].message, [errors[0].range.start, errors[0].range.end]];
}

test('a keyword glued to a literal is read as the engine reads it (5or ssl = 5 or ssl)', () => {
  const asn5 = { 'ip.src.asnum': 5, ssl: false, 'ip.src': '192.0.2.1', 'http.host': 'ab' };
  const asn6 = { ...asn5, 'ip.src.asnum': 6 };
  // `or` binds loosest: true from the comparison alone, or from ssl alone.
  assert.equal(run('ip.src.asnum eq 5or ssl', asn5), true);
  assert.equal(run('ip.src.asnum eq 5or ssl', asn6), false);
  assert.equal(run('ip.src.asnum eq 5or ssl', { ...asn6, ssl: true }), true);
  assert.equal(run('ip.src.asnum eq 5or(ssl)', asn5), true);
  assert.equal(run('ip.src.asnum eq 5 or(ssl)', asn5), true);
  assert.equal(run('ip.src.asnum eq 5xor ssl', { ...asn5, ssl: true }), false);
  assert.equal(run('ip.src.asnum eq 0x5or ssl', asn5), true);
  assert.equal(run('ip.src.asnum eq -5or ssl', asn5), false);
  assert.equal(run('ip.src eq 192.0.2.1or ssl', asn5), true);
  assert.equal(run('ip.src eq ::1or ssl', asn5), false);
  assert.equal(run('http.host eq 61:62or ssl', asn5), true);
  // Hex bytes stop at a letter that is not a separator, so `and` may follow.
  assert.equal(run('http.host eq 61:62and ssl', asn5), false);
  assert.equal(run('http.host eq "ab"and not ssl', asn5), true);
});

test('where the engine reads on into the keyword, its error is reported', () => {
  // An integer takes every hex digit first: `1and` is `1a`.
  assert.deepEqual(error('ip.src.asnum eq 1and ssl'), ['invalid-integer', 'invalid digit found in string while parsing with radix 10', [16, 18]]);
  assert.deepEqual(error('ip.src.asnum eq 05and ssl'), ['invalid-integer', 'invalid digit found in string while parsing with radix 8', [16, 19]]);
  assert.deepEqual(error('ip.src.asnum eq 0x5and ssl'), ['unrecognised-input', 'unrecognised input', [20, 26]]);
  assert.deepEqual(error('ip.src.asnum eq 0xor ssl'), ['invalid-integer', 'expected digit', [18, 24]]);
  // An address takes `[0-9a-fA-F:./]`.
  assert.deepEqual(error('ip.src eq 1.2.3.4and ssl'), ['invalid-ip', "couldn't parse address in network: invalid IP address syntax", [10, 18]]);
  assert.deepEqual(error('ip.src eq fe80::1and ssl'), ['unrecognised-input', 'unrecognised input', [18, 24]]);
  // Hex bytes read pairs: `61:6and` is 61:6a, then `nd`.
  assert.deepEqual(error('http.host eq 61:6and ssl'), ['unrecognised-input', 'unrecognised input', [18, 24]]);
  assert.deepEqual(error('http.host eq 5or(ssl)'), ['invalid-hex-bytes', 'invalid digit found in string while parsing with radix 16', [13, 15]]);
  // `not` is not a binary operator.
  assert.deepEqual(error('ip.src.asnum eq 5notssl'), ['unrecognised-input', 'unrecognised input', [17, 23]]);
});

test('the hint says the value ran into the keyword', () => {
  const d = compileExpression('ip.src.asnum eq 1and ssl').diagnostics[0];
  assert.equal(d.hint, 'The value runs into `and`: the engine reads on while the characters fit the value. Put a space before `and`.');
});

test('5or(ssl) where a condition starts is an unknown identifier, never an unknown function', () => {
  assert.deepEqual(error('5or(ssl)'), ['unknown-identifier', 'unknown identifier', [0, 3]]);
  assert.deepEqual(error('ssl or 5or(ssl)'), ['unknown-identifier', 'unknown identifier', [7, 10]]);
  assert.deepEqual(error('any(5or(ssl))'), ['unknown-identifier', 'unknown identifier', [4, 7]]);
  const d = compileExpression('5or(ssl)').diagnostics[0];
  assert.equal(d.hint, '`5or` is not a name (names start with a letter), and a condition cannot start with a value: compare a field with it, e.g. `ip.src.asnum eq 5 or (…)`.');
});
