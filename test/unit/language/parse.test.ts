import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseExpression, rulesGrammar } from '../../../server/src/language/parse';
import { BOOL, BYTES, INT, IP } from '../../../server/src/language/types';
import { sexpr } from './sexpr';

const typeOf = (n: string) => ({ ssl: BOOL, 'http.host': BYTES, 'cf.edge.server_port': INT, 'ip.src': IP })[n];

function tree(text: string): string {
  const r = parseExpression(text, { typeOf });
  assert.deepEqual(r.diagnostics, [], `parses: ${text}`);
  return sexpr(r.ast!);
}

test('literal forms and operators parse into the expected tree', () => {
  const cases: [string, string][] = [
    ['http.host eq "a"', '(eq http.host "a")'],
    ['http.host=="a"', '(eq http.host "a")'],
    ['http.host eq"a"', '(eq http.host "a")'],
    ['http.host ne r#"a"b"#', '(ne http.host r#"a"b"#)'],
    ['http.host eq 6F:72-67.2e', '(eq http.host 6F:72-67.2e)'],
    ['cf.edge.server_port in {80 443 8000..8099 -5..-1 0x1F 010}', '(in cf.edge.server_port {80 443 8000..8099 -5..-1 0x1F 010})'],
    ['ip.src in {192.0.2.0/24 2001:db8::/32 10.0.0.1..10.0.0.9 ::1}', '(in ip.src {192.0.2.0/24 2001:db8::/32 10.0.0.1..10.0.0.9 ::1})'],
    ['ip.src in $office_network', '(in ip.src $office_network)'],
    ['http.host in{"a""b"}', '(in http.host {"a" "b"})'],
    ['http.host in {}', '(in http.host {})'],
    ['tcp.flags & 0x02', '(bitwise_and tcp.flags 0x02)'],
    ['tcp.flags bitwise_and 2', '(bitwise_and tcp.flags 2)'],
    ['http.host strict wildcard "*.Example.com"', '(strict wildcard http.host "*.Example.com")'],
    ['http.host wildcard r"*.example.com"', '(wildcard http.host r"*.example.com")'],
    ['http.host ~ "^a"', '(matches http.host "^a")'],
    ['http.host >= "a" and http.host <= "b"', '(and (ge http.host "a") (le http.host "b"))'],
    ['http.request.headers["content-type"][0] contains "json"', '(contains http.request.headers["content-type"][0] "json")'],
    ['http.request.headers[ "x" ][ 0 ] eq "1"', '(eq http.request.headers["x"][0] "1")'],
    ['any(http.request.headers.names[*] == "X")', '(any (eq http.request.headers.names[*] "X"))'],
    ['all(lower(http.request.headers.names[*])[*] ne "x")', '(all (ne lower(http.request.headers.names[*])[*] "x"))'],
    ['starts_with(http.request.uri.path, "/a")', 'starts_with(http.request.uri.path, "/a")'],
    ['len(http.host) gt 10', '(gt len(http.host) 10)'],
    ['concat (http.host, "x") eq "ax"', '(eq concat(http.host, "x") "ax")'],
    ['cidr(ip.src, 24, 64) eq 192.0.2.0', '(eq cidr(ip.src, 24, 64) 192.0.2.0)'],
    ['true', 'true'],
    ['nottcp.flags.syn', '(not tcp.flags.syn)'],
    ['!ssl', '(not ssl)'],
    ['not(ssl)', '(not (group ssl))'],
    ['http.host eq "x"and ssl', '(and (eq http.host "x") ssl)'],
    ['http.request.uri.path ne raw.http.request.uri.path', '(ne http.request.uri.path raw.http.request.uri.path)'],
    ['cf.bot_management.score lt cf.waf.score', '(lt cf.bot_management.score cf.waf.score)'],
    ['http.host\neq\r\n"a"', '(eq http.host "a")'],
  ];
  for (const [text, expected] of cases) assert.equal(tree(text), expected, text);
});

test('precedence is not > and > xor > or, with flattened n-ary nodes', () => {
  assert.equal(tree('t or t && t and t or t ^^ t and t || t'), '(or t (and t t t) (xor t (and t t)) t)');
  assert.equal(tree('not a and b'), '(and (not a) b)');
  assert.equal(tree('a or b or c'), '(or a b c)');
  assert.equal(tree('(a or b) and c'), '(and (group (or a b)) c)');
  assert.equal(tree('a xor b xor c'), '(xor a b c)');
});

test('the regex literal after matches keeps escapes and hides quotes in classes', () => {
  assert.equal(tree('http.host matches "[a-z\\"\\]]+\\d{1,10}\\""'), '(matches http.host "[a-z\\"\\]]+\\d{1,10}\\"")');
  assert.equal(tree('http.host matches "[\\"]" and ssl'), '(and (matches http.host "[\\"]") ssl)');
});

test('raw strings close at the first quote followed by enough hashes', () => {
  assert.equal(tree('http.host eq r##"a"#b"##'), '(eq http.host r##"a"#b"##)');
  assert.equal(tree('http.host eq r""'), '(eq http.host r"")');
});

test('function arguments: a logical expression when it starts like one, else one comparison', () => {
  assert.equal(tree('any((x[*] eq 1 or y[*] eq 2))'), '(any (group (or (eq x[*] 1) (eq y[*] 2))))');
  assert.equal(tree('f(not ssl, a eq 1)'), 'f((not ssl), (eq a 1))');
});

interface SyntaxCase {
  readonly text: string;
  readonly code: string;
  readonly message: string;
  readonly range: [number, number];
}

test('syntax errors carry the engine wording and the right range', () => {
  const cases: SyntaxCase[] = [
    { text: 'http.host "a"', code: 'expected-comparison-op', message: 'expected ComparisonOp', range: [10, 11] },
    { text: 'ssl "a"', code: 'unrecognised-input', message: 'unrecognised input', range: [4, 7] },
    { text: 'http.host eq "a" AND ssl', code: 'unrecognised-input', message: 'unrecognised input', range: [17, 24] },
    { text: 'http.host eq "a" )', code: 'unrecognised-input', message: 'unrecognised input', range: [17, 18] },
    { text: '(ssl', code: 'syntax-error', message: 'expected literal ")"', range: [4, 4] },
    { text: 'any(x[*] eq 1 and y)', code: 'syntax-error', message: 'expected literal ")"', range: [14, 17] },
    { text: 'len(http.host http.host) eq 1', code: 'syntax-error', message: 'expected literal ","', range: [14, 23] },
    { text: 'http.host in "a"', code: 'syntax-error', message: 'expected literal "{"', range: [13, 14] },
    { text: 'http.host matches 12', code: 'syntax-error', message: 'expected " or r', range: [18, 20] },
    { text: 'http.host wildcard 12', code: 'syntax-error', message: 'expected " or r', range: [19, 21] },
    { text: "http.request.headers['content-type'][0] eq \"x\"", code: 'invalid-index', message: 'expected literal "expected quoted utf8 string or positive integer"', range: [21, 22] },
    { text: 'http.host eq "abc', code: 'unterminated-string', message: 'could not find an ending quote', range: [13, 17] },
    { text: 'http.host matches "[a-z"', code: 'unterminated-string', message: 'could not find an ending quote', range: [18, 24] },
    { text: 'http.host eq r#"abc"', code: 'unterminated-string', message: 'could not find an ending quote', range: [13, 20] },
    { text: 'ssl and', code: 'syntax-error', message: 'expected identifier character', range: [7, 7] },
    { text: 'cf.edge.server_port eq', code: 'invalid-integer', message: 'expected digit', range: [22, 22] },
    { text: 'ip.src eq', code: 'invalid-ip', message: 'expected IP address character', range: [9, 9] },
    { text: '', code: 'empty-expression', message: 'expected identifier character', range: [0, 0] },
    { text: '  \t ', code: 'empty-expression', message: 'expected identifier character', range: [0, 4] },
  ];
  for (const c of cases) {
    const r = parseExpression(c.text, { typeOf });
    assert.equal(r.ast, undefined, c.text);
    assert.equal(r.diagnostics.length, 1, c.text);
    const d = r.diagnostics[0];
    assert.deepEqual({ code: d.code, message: d.message, range: [d.range.start, d.range.end] }, { code: c.code, message: c.message, range: c.range }, c.text);
  }
});

test('a tab between tokens is an error with a hint; around the expression it is trimmed', () => {
  const r = parseExpression('ssl\tand ssl', { typeOf });
  assert.equal(r.diagnostics[0].code, 'tab-character');
  assert.deepEqual(r.diagnostics[0].range, { start: 3, end: 4 });
  assert.match(r.diagnostics[0].hint!, /tab/);
  assert.equal(tree('\tssl\t'), 'ssl');
});

test('pathological nesting is reported, not thrown', () => {
  const deep = '('.repeat(20000) + 'ssl' + ')'.repeat(20000);
  const r = parseExpression(deep);
  assert.equal(r.diagnostics[0]?.code, 'nesting-too-deep');
});

test('an incremental matcher gives the same tree as a fresh parse after edits', () => {
  const m = rulesGrammar.matcher();
  let current = '';
  const match = (input: string) => {
    // Replace the whole differing middle, as the editor's matcher does.
    let p = 0;
    while (p < current.length && p < input.length && current[p] === input[p]) p++;
    let q = 0;
    while (q < current.length - p && q < input.length - p && current[current.length - 1 - q] === input[input.length - 1 - q]) q++;
    m.replaceInputRange(p, current.length - q, input.slice(p, input.length - q));
    current = input;
    return m.match();
  };
  for (const text of ['http.host eq "a"', 'http.host eq "ab" and ssl', 'http.host eq "ab" and not ssl', '(http.host eq "ab") or ip.src in {1.2.3.4}', 'http.host eq']) {
    const fresh = parseExpression(text, { typeOf });
    const incremental = parseExpression(text, { typeOf, match });
    assert.deepEqual(incremental, fresh, text);
  }
});

test('raw strings take any number of # up to the engine limit of 255', () => {
  const h = '#'.repeat(255);
  assert.equal(tree(`http.host eq r${h}"a"#"${h}`), `(eq http.host r${h}"a"#"${h})`);
  const r = parseExpression(`http.host eq r${'#'.repeat(256)}"a"${'#'.repeat(256)}`);
  assert.deepEqual(
    r.diagnostics.map((d) => [d.code, d.message, d.range.start]),
    [['invalid-raw-string', "invalid raw string hash count, there can't be more than 255 #s", 13]],
  );
});
