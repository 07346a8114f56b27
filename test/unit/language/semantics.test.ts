// End-to-end semantics (reference §3): expression text and JSON field values in, the
// verdict out — through the same facade the CLI, the server and the engine use.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compileExpression, prepareFields } from '../../../server/src/language/index';
import { formatIp } from '../../../server/src/language/ip';
import type { IpAddr } from '../../../server/src/language/ir';

function verdict(expr: string, fields: Record<string, unknown>, options: { nilNotEqual?: boolean; lists?: Record<string, string[]> } = {}): boolean {
  const { filter, diagnostics } = compileExpression(expr, { nilNotEqual: options.nilNotEqual });
  assert.ok(filter, `${expr}: ${diagnostics.map((d) => d.message).join('; ')}`);
  const prepared = prepareFields(fields);
  assert.deepEqual(prepared.errors, [], expr);
  const lists = options.lists;
  return filter.matches(prepared.values, lists ? { lists: (name, value) => (lists[name] ?? []).includes(typeof value === 'object' && 'family' in value ? formatIp(value as IpAddr) : String(value)) } : undefined);
}

const request = {
  'http.host': 'www.example.com',
  'http.request.method': 'POST',
  'http.request.uri.path': '/admin/users',
  'http.request.uri.query': 'a=1&b=2',
  'http.request.uri.args': { a: ['1'], b: ['2', '3'] },
  'http.request.headers': { 'user-agent': ['curl/8.5'], 'x-empty': [] },
  'http.request.headers.names': ['User-Agent', 'X-Empty'],
  'http.user_agent': 'curl/8.5',
  'ip.src': '192.0.2.77',
  'ip.src.asnum': 64500,
  'cf.threat_score': 14,
  'cf.edge.server_port': 443,
  ssl: true,
};

test('comparisons are byte-exact and case-sensitive unless the operator says otherwise', () => {
  const cases: [string, boolean][] = [
    ['http.host eq "www.example.com"', true],
    ['http.host eq "WWW.example.com"', false],
    ['http.host wildcard "*.EXAMPLE.com"', true],
    ['http.host strict wildcard "*.EXAMPLE.com"', false],
    ['http.host strict wildcard "*.example.com"', true],
    ['http.host wildcard "example.com"', false],
    ['http.host contains ""', true],
    ['http.host contains "example"', true],
    ['http.host matches "^www\\.[a-z]+\\.com$"', true],
    ['http.host matches "(?i)^WWW"', true],
    ['http.host matches "^WWW"', false],
    ['http.host lt "x" and http.host gt "a"', true],
    ['http.host eq 77:77:77:2e:65:78:61:6d:70:6c:65:2e:63:6f:6d', true],
    ['http.host in {"a" "www.example.com"}', true],
    ['lower(http.request.method) eq "post"', true],
    ['upper(http.host) eq "WWW.EXAMPLE.COM"', true],
    ['starts_with(http.request.uri.path, "/admin")', true],
    ['ends_with(http.request.uri.path, "/admin")', false],
    ['len(http.host) eq 15', true],
  ];
  for (const [expr, expected] of cases) assert.equal(verdict(expr, request), expected, expr);
});

test('integers, IPs, sets and ranges', () => {
  const cases: [string, boolean][] = [
    ['cf.threat_score gt 10 and cf.threat_score le 14', true],
    ['cf.threat_score in {1..10 20..30}', false],
    ['cf.threat_score in {1..10 14}', true],
    ['cf.threat_score eq 0xE and cf.threat_score eq 016', true],
    ['cf.threat_score & 0x02', true],
    ['cf.threat_score & 0x01', false],
    ['ip.src in {192.0.2.0/24}', true],
    ['ip.src in {192.0.2.0/25}', true],
    ['ip.src in {192.0.2.128/25 2001:db8::/32}', false],
    ['ip.src in {192.0.2.70..192.0.2.80}', true],
    ['ip.src eq 192.0.2.77', true],
    ['ip.src ne 192.0.2.77', false],
    ['ip.src in {::ffff:192.0.2.77}', false],
    ['cidr(ip.src, 24, 64) eq 192.0.2.0', true],
    ['ip.src.asnum in {64496..64511}', true],
  ];
  for (const [expr, expected] of cases) assert.equal(verdict(expr, request), expected, expr);
});

test('logical operators: precedence, xor, not', () => {
  const cases: [string, boolean][] = [
    ['ssl or ssl and not ssl', true],
    ['(ssl or ssl) and not ssl', false],
    ['ssl xor ssl', false],
    ['ssl xor ssl xor ssl', true],
    ['not ssl xor ssl', true],
    ['true', true],
    ['not true', false],
  ];
  for (const [expr, expected] of cases) assert.equal(verdict(expr, request), expected, expr);
});

test('maps, arrays, [*], any and all', () => {
  const cases: [string, boolean][] = [
    ['http.request.uri.args["b"][1] eq "3"', true],
    ['http.request.uri.args["b"][2] eq "3"', false],
    ['any(http.request.uri.args["b"][*] eq "3")', true],
    ['all(http.request.uri.args["b"][*] eq "3")', false],
    ['any(http.request.uri.args[*][*] eq "1")', true],
    ['any(http.request.headers["x-empty"][*] eq "x")', false],
    ['all(http.request.headers["x-empty"][*] eq "x")', true],
    ['any(http.request.headers["absent"][*] eq "x")', false],
    ['all(http.request.headers["absent"][*] eq "x")', true],
    ['any(lower(http.request.headers.names[*])[*] eq "user-agent")', true],
    ['any(http.request.headers.names[*] eq "user-agent")', false],
    ['any(len(http.request.headers.names[*])[*] gt 9)', true],
    ['all((http.request.headers.names[*] ne "" and http.request.headers.names[*] ne "x"))', true],
    ['has_key(http.request.uri.args, "a")', true],
    ['has_key(http.request.uri.args, "z")', false],
    ['concat(http.request.uri.args["a"], http.request.uri.args["b"])[2] eq "3"', true],
  ];
  for (const [expr, expected] of cases) assert.equal(verdict(expr, request), expected, expr);
});

test('missing values make every comparison false (Cloudflare), or ne true (wirefilter option)', () => {
  const cases: [string, boolean][] = [
    ['http.referer eq "x"', false],
    ['http.referer ne "x"', false],
    ['not http.referer eq "x"', true],
    ['http.request.uri.args["zz"][0] ne "x"', false],
    ['cf.bot_management.verified_bot', false],
    ['not cf.bot_management.verified_bot', true],
    ['len(http.request.uri.args["zz"]) ge 0', false],
    ['len(http.request.uri.args["a"]) ge 0', true],
  ];
  for (const [expr, expected] of cases) assert.equal(verdict(expr, request), expected, expr);
  assert.equal(verdict('http.referer ne "x"', request, { nilNotEqual: true }), true);
});

test('lists through a resolver; no resolver means no match', () => {
  assert.equal(verdict('ip.src in $office', request, { lists: { office: ['192.0.2.77'] } }), true);
  assert.equal(verdict('ip.src in $office', request, { lists: { office: [] } }), false);
  assert.equal(verdict('ip.src in $office', request), false);
});

test('bytes outside UTF-8 compare by byte', () => {
  assert.equal(verdict('http.host contains "\\xc3\\xa9"', { 'http.host': 'café.example' }), true);
  assert.equal(verdict('http.host contains "\\xe9"', { 'http.host': 'café.example' }), false);
  assert.equal(verdict('http.host matches "^caf.\\.example$"', { 'http.host': 'café.example' }), false);
  assert.equal(verdict('http.host matches "^caf..\\.example$"', { 'http.host': 'café.example' }), true);
});

test('dynamic comparisons compare two fields', () => {
  assert.equal(verdict('http.request.uri.path ne raw.http.request.uri.path', { 'http.request.uri.path': '/a', 'raw.http.request.uri.path': '/%61' }), true);
  assert.equal(verdict('len(http.request.uri.path) gt len(http.request.uri.query)', request), true);
});
