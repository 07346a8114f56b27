// Signature help: pure unit tests on expression text with a caret `|` marking the cursor.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { SignatureHelp } from 'vscode-languageserver';
import { signatureHelp } from '../../../server/src/lsp/signatureHelp';
import type { ExpressionContext } from '../../../server/src/lsp/context';
import { httpScheme } from '../../../server/src/language/scheme/index';

const base: ExpressionContext = { scheme: httpScheme };

function at(fixture: string): { text: string; offset: number } {
  const offset = fixture.indexOf('|');
  assert.ok(offset >= 0, `no caret in ${fixture}`);
  return { text: fixture.slice(0, offset) + fixture.slice(offset + 1), offset };
}

function help(fixture: string, ctx: Partial<ExpressionContext> = {}): SignatureHelp | undefined {
  const { text, offset } = at(fixture);
  return signatureHelp(text, offset, { ...base, ...ctx });
}

/** The signature label, the active parameter and the label text of every parameter. */
function summary(fixture: string): { label: string; active: number | undefined; params: string[] } | undefined {
  const h = help(fixture);
  if (!h) return undefined;
  assert.equal(h.signatures.length, 1);
  assert.equal(h.activeSignature, 0);
  const sig = h.signatures[0];
  assert.equal(sig.activeParameter, h.activeParameter);
  const params = (sig.parameters ?? []).map((p) => {
    assert.ok(Array.isArray(p.label), 'parameter labels are ranges into the signature label');
    const [s, e] = p.label as [number, number];
    return sig.label.slice(s, e);
  });
  return { label: sig.label, active: h.activeParameter ?? undefined, params };
}

test('the first parameter right after the opening parenthesis', () => {
  assert.deepEqual(summary('lower(|'), { label: 'lower(source: Bytes) -> Bytes', active: 0, params: ['source: Bytes'] });
  assert.deepEqual(summary('lower(|)'), { label: 'lower(source: Bytes) -> Bytes', active: 0, params: ['source: Bytes'] });
  assert.deepEqual(summary('lower (http.ho|st)')?.active, 0);
});

test('the active parameter counts the call\'s own commas', () => {
  const split = 'split(source: Bytes, separator: Bytes, limit?: Int) -> Array<Bytes>';
  assert.deepEqual(summary('split(http.host, |'), { label: split, active: 1, params: ['source: Bytes', 'separator: Bytes', 'limit?: Int'] });
  assert.equal(summary('split(http.host, ",", |')?.active, 2);
  assert.equal(summary('split(http.host, ",", 3|)')?.active, 2);
  assert.equal(summary('split(http.host,|')?.active, 1);
});

test('commas inside strings, indexes, sets and nested calls do not count', () => {
  assert.equal(summary('split(http.host, ",{(|')?.active, 1);
  assert.equal(summary('split(http.host, ",,", |')?.active, 2);
  assert.equal(summary('concat(http.request.headers["a,b"][0], |')?.active, 1);
  assert.equal(summary('concat(r#"a,"b"#, |')?.active, 1);
  assert.equal(summary('concat(lower(substring(http.host, 1, 2)), |')?.active, 1);
});

test('nested calls: the innermost one whose parentheses hold the cursor', () => {
  assert.deepEqual(summary('lower(concat("a", |'), {
    label: 'concat(first: Bytes | Array<_>, ...rest: Bytes | Array<_>) -> Bytes | Array<_>',
    active: 1,
    params: ['first: Bytes | Array<_>', '...rest: Bytes | Array<_>'],
  });
  assert.equal(summary('lower(concat("a", "b")|')?.label, 'lower(source: Bytes) -> Bytes');
  assert.equal(summary('len(lower((|')?.label, 'lower(source: Bytes) -> Bytes');
  assert.equal(summary('starts_with(http.host, "a") and ends_with(http.host, |')?.label, 'ends_with(source: Bytes, suffix: Bytes) -> Bool');
});

test('a repeating last parameter stays active; too many arguments highlight none', () => {
  const json = summary('lookup_json_string(http.request.body.raw, "a", "b", 0, |');
  assert.deepEqual(json, {
    label: 'lookup_json_string(json: Bytes, ...keys: Bytes | Int) -> Bytes',
    active: 1,
    params: ['json: Bytes', '...keys: Bytes | Int'],
  });
  assert.equal(summary('lower(concat("a", "b"), |')?.active, 1);
  assert.equal(summary('substring(http.host, 1, 2, |')?.active, 3);
});

test('optional parameters and type patterns in the label', () => {
  assert.equal(
    summary('is_timed_hmac_valid_v0(|')?.label,
    'is_timed_hmac_valid_v0(key: Bytes, message_mac: Bytes, ttl: Int, current_timestamp: Int, separator_length?: Int, flags?: Bytes) -> Bool',
  );
  assert.equal(summary('has_value(|')?.label, 'has_value(collection: Map<_> | Array<_>, value: _) -> Bool');
  assert.equal(summary('has_key(|')?.label, 'has_key(map: Map<_>, key: Bytes) -> Bool');
  assert.equal(summary('coalesce(|')?.label, 'coalesce(first: _, ...rest: _) -> _');
});

test('parameter documentation: kind (field or literal) and types', () => {
  const sig = help('split(http.host, |')!.signatures[0];
  assert.deepEqual(
    sig.parameters?.map((p) => p.documentation),
    [
      { kind: 'markdown', value: '`source` (`Bytes`): a field or expression, not a literal.' },
      { kind: 'markdown', value: '`separator` (`Bytes`): a literal value.' },
      { kind: 'markdown', value: '`limit` (`Int`, optional): a literal value.' },
    ],
  );
  assert.deepEqual(help('has_key(http.request.headers, |')!.signatures[0].parameters?.[1].documentation, {
    kind: 'markdown',
    value: '`key` (`Bytes`): a literal or a field.',
  });
  assert.deepEqual(help('lookup_json_integer(http.request.body.raw, |')!.signatures[0].parameters?.[1].documentation, {
    kind: 'markdown',
    value: '`keys` (`Bytes | Int`, repeats): a literal value.',
  });
});

test('signature documentation: doc, plan and phases for the rule\'s context', () => {
  const sig = help('split(|', { phase: 'http_request_firewall_custom' })!.signatures[0];
  assert.deepEqual(sig.documentation, {
    kind: 'markdown',
    value:
      'Splits source at each separator into at most limit (1–128) items; the last item keeps the rest.\n\n' +
      'Phases: only `http_response_headers_transform`, `http_custom_errors` — not available in `http_request_firewall_custom`',
  });
});

test('quantifiers: any( and all( have one Array<Bool> parameter', () => {
  assert.deepEqual(summary('any(|'), { label: 'any(condition: Array<Bool>) -> Bool', active: 0, params: ['condition: Array<Bool>'] });
  assert.deepEqual(summary('ssl and all(http.request.headers.names[*] eq |'), { label: 'all(condition: Array<Bool>) -> Bool', active: 0, params: ['condition: Array<Bool>'] });
  assert.equal(summary('any(lower(|')?.label, 'lower(source: Bytes) -> Bytes');
});

test('inside a string argument the call is still the one shown', () => {
  assert.equal(summary('starts_with(http.request.uri.path, "/ap|')?.active, 1);
  assert.equal(summary('starts_with(http.request.uri.path, "/a,|"')?.active, 1);
});

test('outside calls, after the closing parenthesis, in groups and for unknown functions: nothing', () => {
  for (const fixture of ['|', 'http.host eq |', 'lower(http.host) |', 'lower(http.host)| eq "a"', '(ssl or |', 'foo(|', 'low|er(http.host)', 'http.host in {|']) {
    assert.equal(help(fixture), undefined, fixture);
  }
});
