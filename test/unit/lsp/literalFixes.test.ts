// Quick fixes for refused literals, applied to the expression text: each title and the
// exact text it makes; and the lowered-literal lint that feeds the "never matches" fix.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkExpression } from '../../../server/src/language/index';
import { literalFixes, rawStringFor } from '../../../server/src/lsp/literalFixes';
import { applyExprEdits } from '../../../server/src/lsp/codeActions';

/** Every fix for the first diagnostic of `expr`, as [title, resulting text, preferred]. */
function fixes(expr: string): [string, string, boolean][] {
  const r = checkExpression(expr);
  const d = r.diagnostics[0];
  assert.ok(d, `no diagnostic for ${expr}`);
  return literalFixes(expr, r.ast, d).map((f) => [f.title, applyExprEdits(expr, f.edits), f.preferred === true]);
}

test('"\\x": escape the backslash (preferred) or a raw string', () => {
  assert.deepEqual(fixes('http.host eq "\\x"'), [
    ['Escape the backslash: `\\\\x`', 'http.host eq "\\\\x"', true],
    ['Use a raw string: `r"\\x"`', 'http.host eq r"\\x"', false],
  ]);
  assert.deepEqual(fixes('http.request.uri.path eq "C:\\dir\\\\"'), [
    ['Escape the backslash: `\\\\d`', 'http.request.uri.path eq "C:\\\\dir\\\\"', true],
    ['Use a raw string: `r"C:\\dir\\"`', 'http.request.uri.path eq r"C:\\dir\\"', false],
  ]);
  // Unterminated first (`\"` is a quote): the fix closes it, then the escape is fixed.
  assert.deepEqual(fixes('http.request.uri.path eq "C:\\dir\\"'), [['Add the closing quote', 'http.request.uri.path eq "C:\\dir\\""', true]]);
});

test('a real byte escape elsewhere in the string: no raw-string fix (it would change the bytes)', () => {
  assert.deepEqual(fixes('http.host eq "\\x41\\q"'), [['Escape the backslash: `\\\\q`', 'http.host eq "\\x41\\\\q"', true]]);
  assert.equal(rawStringFor('a\\101b'), undefined);
  assert.equal(rawStringFor('a\\\\b'), 'r"a\\b"');
  assert.equal(rawStringFor('say \\"hi\\""#'), 'r##"say "hi""#"##');
});

test('unterminated string: the closing quote at the end', () => {
  assert.deepEqual(fixes('http.host eq "abc  '), [['Add the closing quote', 'http.host eq "abc"  ', true]]);
  // A backslash at the end would escape the quote added: it becomes one of the string's (a raw string's is already).
  assert.deepEqual(fixes('http.host eq "abc\\'), [['Add the closing quote', 'http.host eq "abc\\\\"', true]]);
  assert.deepEqual(fixes('http.host eq r"abc\\'), [['Add the closing quote', 'http.host eq r"abc\\"', true]]);
});

test('quoted IP: without the quotes; a network with host bits: its first address', () => {
  assert.deepEqual(fixes('ip.src eq "192.0.2.1"'), [['Remove the quotes: `192.0.2.1`', 'ip.src eq 192.0.2.1', true]]);
  assert.deepEqual(fixes('ip.src in {"10.0.0.0/8"}'), [['Remove the quotes: `10.0.0.0/8`', 'ip.src in {10.0.0.0/8}', true]]);
  assert.deepEqual(fixes('ip.src eq "example"'), []);
  assert.deepEqual(fixes('ip.src in {10.0.0.1/8 192.0.2.0/24}'), [['Change to `10.0.0.0/8`', 'ip.src in {10.0.0.0/8 192.0.2.0/24}', true]]);
});

test('unquoted map key: quoted; upper-case list name: lower-cased', () => {
  assert.deepEqual(fixes('http.request.headers[x-id][0] eq "a"'), [['Quote the key: `["x-id"]`', 'http.request.headers["x-id"][0] eq "a"', true]]);
  assert.deepEqual(fixes('http.request.headers[0x][0] eq "a"'), [['Quote the key: `["0x"]`', 'http.request.headers["0x"][0] eq "a"', true]]);
  assert.deepEqual(fixes('ip.src in $Office_IPs'), [['Change to `$office_ips`', 'ip.src in $office_ips', true]]);
});

const lint = (expr: string) => checkExpression(expr).diagnostics.map((d) => [d.code, d.severity, d.message, d.data?.replacement]);

test('lower(…) / upper(…) compared with a literal of the other case: never matches, with the literal that can', () => {
  assert.deepEqual(lint('lower(http.host) eq "Example.COM"'), [['never-matches', 'warning', '"Example.COM" can never match: `lower(…)` is lower case', '"example.com"']]);
  assert.deepEqual(lint('upper(http.request.uri.path) contains "/admin"'), [['never-matches', 'warning', '"/admin" can never match: `upper(…)` is upper case', '"/ADMIN"']]);
  assert.deepEqual(lint('lower(http.host) in {"a.com" "B.com"}'), [['never-matches', 'warning', '"B.com" can never match: `lower(…)` is lower case', '"b.com"']]);
  assert.deepEqual(lint('lower(http.host) ne r#"X"#'), [['never-matches', 'warning', '"X" is never equal to `lower(…)`, which is lower case: this condition is always true', 'r#"x"#']]);
  assert.deepEqual(lint('lower(http.host) strict wildcard "*.EXAMPLE.com"'), [['never-matches', 'warning', '"*.EXAMPLE.com" can never match: `lower(…)` is lower case', '"*.example.com"']]);
  // An escape in the literal: rewritten from the value.
  assert.deepEqual(lint('lower(http.host) eq "\\x41b"'), [['never-matches', 'warning', '"Ab" can never match: `lower(…)` is lower case', '"ab"']]);
});

test('left alone: lower-case literals, regexes, plain (case-insensitive) wildcards, ordering, non-letters', () => {
  for (const ok of ['lower(http.host) eq "example.com"', 'lower(http.host) matches "A"', 'lower(http.host) wildcard "*.EXAMPLE.com"', 'lower(http.host) lt "B"', 'upper(http.host) eq "A-1"', 'http.host eq "Example.COM"']) {
    assert.deepEqual(lint(ok), [], ok);
  }
});
