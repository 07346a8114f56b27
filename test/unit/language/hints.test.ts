// Every diagnostic code has a hint: one sample expression per code, checked through the
// core's single entry point (so the CLI, the service and the editor all get it), with the
// exact hint where this project words it for the case; the general table is complete
// (a hint, and a quick fix or why there is none) and is what docs/vscode.md lists.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import type { DiagnosticCode } from '../../../server/src/language/diagnostics';
import { CODE_HELP, codeHelpMarkdown, withHint } from '../../../server/src/language/hints';
import { checkExpression, type CheckOptions } from '../../../server/src/language/index';

type Sample = { readonly expr: string; readonly options?: CheckOptions } | { readonly none: string };

/** One expression that yields each code. A Record: a new code needs its sample here. */
const SAMPLES: Record<DiagnosticCode, Sample> = {
  'syntax-error': { expr: '(http.host eq "a"' },
  'expected-comparison-op': { expr: 'http.host' },
  'unknown-operator': { expr: 'http.host equals "a"' },
  'unrecognised-input': { expr: 'http.host eq "a" "b"' },
  'tab-character': { expr: 'http.host\teq "a"' },
  'unterminated-string': { expr: 'http.host eq "a' },
  'invalid-escape': { expr: 'http.host eq "\\x"' },
  'invalid-raw-string': { expr: `http.host eq r${'#'.repeat(256)}"a"${'#'.repeat(256)}` },
  'invalid-integer': { expr: 'ip.src.asnum eq 1a' },
  'invalid-ip': { expr: 'ip.src in {192.0.2.300/24}' },
  'invalid-hex-bytes': { expr: 'http.host eq 5or(ssl)' },
  'invalid-index': { expr: 'http.request.headers[x-id][0] eq "a"' },
  'invalid-list-name': { expr: 'ip.src in $Office' },
  'incompatible-range-bounds': { expr: 'ip.src in {10.0.0.1..::1}' },
  'cidr-outside-set': { expr: 'ip.src eq 10.0.0.0/8' },
  'empty-expression': { expr: '' },
  'unknown-field': { none: 'not produced by the expression checker (an unknown name is `unknown-identifier`, as the engine says); kept because users filter on it' },
  'unknown-function': { expr: 'bogus(http.host)' },
  'unknown-identifier': { expr: 'foo eq 1' },
  'operator-type-mismatch': { expr: 'ip.src contains "a"' },
  'type-mismatch': { expr: 'http.host eq ip.src' },
  'invalid-index-access': { expr: 'http.host[0] eq "a"' },
  'invalid-map-each': { expr: 'concat("a", http.request.headers[*][0]) eq "a"' },
  'argument-count': { expr: 'lower() eq "a"' },
  'argument-kind': { expr: 'lower("a") eq "a"' },
  'argument-type': { expr: 'lower(ip.src) eq "a"' },
  'argument-value': { expr: 'url_decode(http.host, "q") eq "a"' },
  'dynamic-comparison-disabled': { expr: 'http.host eq http.referer', options: { dynamicComparisons: false } },
  'invalid-regex': { expr: 'http.host matches "(a"' },
  'invalid-wildcard': { expr: 'http.host wildcard "a\\\\"' },
  'expression-too-long': { expr: `http.host eq "${'a'.repeat(5000)}"` },
  'nesting-too-deep': { expr: `${'('.repeat(130)}true${')'.repeat(130)}` },
  'too-many-regexes': { expr: Array.from({ length: 65 }, (_, i) => `http.host matches "a${i}"`).join(' or ') },
  'replace-function-limit': { expr: 'regex_replace(http.host, "a", "b") eq regex_replace(http.host, "a", "c")' },
  'deprecated-field': { expr: 'ip.geoip.country eq "US"' },
  'plan-required': { expr: 'cf.bot_management.score lt 30', options: { plan: 'free' } },
  'not-in-phase': { expr: 'http.response.code eq 200', options: { phase: 'http_request_firewall_custom' } },
  'ratelimit-restriction': { expr: 'ip.src in $office and http.response.code eq 401', options: { phase: 'http_ratelimit', countingExpression: true } },
  'method-not-uppercase': { expr: 'http.request.method eq "get"' },
  'header-key-not-lowercase': { expr: 'http.request.headers["X"][0] eq "a"' },
  'path-without-slash': { expr: 'http.request.uri.path eq "a"' },
  'never-matches': { expr: 'lower(http.host) eq "Example.COM"' },
  'ip-ordering': { expr: 'ip.src gt 1.2.3.4' },
  'unknown-list': { expr: 'ip.src in $nolist', options: { listNames: ['office'] } },
  'managed-only': { expr: 'crs.args_names[*] eq "a"' },
};

for (const [code, sample] of Object.entries(SAMPLES) as [DiagnosticCode, Sample][]) {
  if ('none' in sample) continue;
  test(`${code}: the diagnostic has a hint`, () => {
    const found = checkExpression(sample.expr, sample.options).diagnostics.find((d) => d.code === code);
    assert.ok(found, `${JSON.stringify(sample.expr.slice(0, 60))} should give ${code}`);
    assert.ok(found.hint && found.hint.trim().length > 0, `${code} has no hint`);
    assert.notEqual(found.hint, found.message);
  });
}

test('codes without a sample are listed with why', () => {
  assert.deepEqual(
    Object.entries(SAMPLES).filter(([, s]) => 'none' in s).map(([c]) => c),
    ['unknown-field'],
  );
});

const hintOf = (expr: string, code: DiagnosticCode) => checkExpression(expr).diagnostics.find((d) => d.code === code)?.hint;

test('the wording the issue names: `"\\x"`, unknown identifier, the CIDR errors', () => {
  const first = checkExpression('http.host eq "\\x"').diagnostics[0];
  // The engine's words stay the message (users search them); the help is the hint.
  assert.equal(first.message, 'expected 2 characters, but found 1');
  assert.equal(first.hint, '`\\x` starts a byte written as two hex digits (`\\x41` is "A"). For a backslash followed by x write `\\\\x`, or use a raw string `r"…"` in which backslashes are literal.');
  assert.equal(hintOf('foo eq 1', 'unknown-identifier'), '`foo` is not a field or function of the Rules language. Field names are lower case and dot-separated, e.g. `http.request.uri.path`.');
  assert.equal(hintOf('http.hots eq "a"', 'unknown-identifier'), '`http.hots` is not a field: did you mean `http.host`?');
  assert.equal(hintOf('bogus(http.host)', 'unknown-function'), '`bogus` is not a function of the Rules language: see the list of functions in the reference.');
  const cidr = checkExpression('ip.src eq 10.0.0.0/8').diagnostics[0];
  assert.equal(cidr.message, "couldn't parse address in network: invalid IP address syntax");
  assert.equal(cidr.hint, '`10.0.0.0/8` is a network (CIDR), and a network is only allowed in a set: write `in {10.0.0.0/8}` instead of `eq` (e.g. `ip.src in {10.0.0.0/8}`).');
  assert.equal(hintOf('ip.src in {192.0.2.300/24}', 'invalid-ip'), '`192.0.2.300` is not an IP address: write IPv4 as four numbers 0–255 without leading zeros (192.0.2.1), IPv6 like 2001:db8::1.');
  assert.equal(hintOf('ip.src in {1.2.3.0/33}', 'invalid-ip'), 'The network length after `/` is a number of bits: 0–32 for IPv4, 0–128 for IPv6 (`192.0.2.0/24`).');
  const host = checkExpression('ip.src in {10.0.0.1/8}').diagnostics[0];
  assert.deepEqual([host.message, host.hint, host.data], ['host part of address was not zero', 'Did you mean 10.0.0.0/8? A network is written with its first address.', { replacement: '10.0.0.0/8' }]);
  assert.equal(hintOf('http.host eq "\\1"', 'invalid-escape'), 'A backslash before a digit starts a byte written as three octal digits (`\\101` is "A"). For a backslash write `\\\\`, or use a raw string `r"…"` in which backslashes are literal.');
  assert.equal(hintOf('http.host eq ip.src', 'type-mismatch'), '`http.host` is Bytes and `ip.src` is Ip: a field compares only with a value of the same type.');
});

test('a diagnostic without a hint of its own gets its code’s', () => {
  const d = { range: { start: 0, end: 1 }, severity: 'error' as const, code: 'invalid-regex' as const, message: 'unclosed group' };
  assert.equal(withHint(d).hint, 'Cloudflare uses Rust regex syntax (RE2-like): no look-around, no backreferences.');
  assert.equal(withHint({ ...d, hint: 'own' }).hint, 'own');
});

test('the table: every code has a hint, and a quick fix or the reason there is none', () => {
  for (const [code, h] of Object.entries(CODE_HELP)) {
    assert.ok(h.hint.length > 10, code);
    assert.equal(Number(h.fix !== undefined) + Number(h.noFix !== undefined), 1, `${code}: exactly one of fix / noFix`);
  }
  assert.equal(Object.keys(CODE_HELP).length, Object.keys(SAMPLES).length);
});

test('docs/vscode.md lists the codes with their hints, as the table says', () => {
  const docs = readFileSync(new URL('../../../docs/vscode.md', import.meta.url), 'utf8');
  assert.ok(docs.includes(codeHelpMarkdown()), 'docs/vscode.md is out of date: paste codeHelpMarkdown() into its "Diagnostic codes" section');
  assert.match(codeHelpMarkdown().split('\n')[2], /^\| `syntax-error` \| Add what the message says is expected/);
});
