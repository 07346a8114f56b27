import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkExpression, type CheckOptions } from '../../../server/src/language/index';

/** `code: message [start,end]` for every diagnostic, in order. */
function findings(text: string, options?: CheckOptions): string[] {
  return checkExpression(text, options).diagnostics.map((d) => `${d.code}: ${d.message} [${d.range.start},${d.range.end}]`);
}

function accepts(text: string, options?: CheckOptions): void {
  const r = checkExpression(text, options);
  assert.deepEqual(r.diagnostics.filter((d) => d.severity === 'error'), [], text);
  assert.ok(r.ir, `IR for ${text}`);
}

test('valid expressions over every literal form and operator are accepted', () => {
  for (const text of [
    'http.host eq "a"',
    'http.host eq 12:34',
    'http.host eq r#"say "hi""#',
    'http.host contains "\\x41\\101"',
    'http.host matches "\\d+\\.php$"',
    'http.host matches r"^/[a-z]+$"',
    'http.host wildcard "*.example.com" or http.host strict wildcard "A\\\\*"',
    'http.host in {"a" "b" 61:62}',
    'cf.edge.server_port in {80 443 8000..8099 0x50 010}',
    'cf.edge.server_port & 0x01',
    'ip.src in {192.0.2.0/24 2001:db8::/32 10.0.0.1..10.0.0.9 1.1.1.01}',
    'ip.src eq ::ffff:1.2.3.4',
    'ip.src in $office_network and ip.src in $cf.open_proxies',
    'any(http.request.headers["a"][*] == "x")',
    'all(http.request.headers.names[*] ne "x")',
    'any(lower(http.request.headers.names[*])[*] in {"x-a"})',
    'starts_with(http.request.uri.path, "/a")',
    'len(http.host) gt 10',
    'not ssl xor cf.client.bot',
    'true',
    'http.request.uri.path ne raw.http.request.uri.path',
    'len(http.host) gt len(http.referer)',
    'concat(http.host, "/", http.request.uri.path) eq "a/b"',
    'cidr(ip.src, 24, 64) eq 192.0.2.0',
    'lookup_json_string(http.request.body.raw, "user", 0) eq "x"',
    'split(http.host, ".", 3)[0] eq "www"',
    'has_key(http.request.uri.args, "token")',
    'http.request.headers["x"][0] eq "1"',
    'any(http.request.body.multipart.filenames[*][*] contains ".php")',
  ]) accepts(text);
});

test('literals are read by the left-hand type, with the engine wording', () => {
  const cases: [string, string[]][] = [
    ['http.host eq 80', ['invalid-hex-bytes: expected 1 characters, but found 0 [15,15]']],
    ['cf.edge.server_port eq "80"', ['invalid-integer: expected digit [23,27]']],
    ['cf.edge.server_port eq 08', ['invalid-integer: invalid digit found in string while parsing with radix 8 [23,25]']],
    ['cf.edge.server_port eq 10fe', ['invalid-integer: invalid digit found in string while parsing with radix 10 [23,27]']],
    ['cf.edge.server_port in {10..0}', ['incompatible-range-bounds: incompatible range bounds [24,29]']],
    ['ip.src eq 192.0.2.0/24', ["cidr-outside-set: couldn't parse address in network: invalid IP address syntax [10,22]"]],
    ['ip.src in {10.0.0.1/8}', ['invalid-ip: host part of address was not zero [11,19]']],
    ['ip.src in {"10.0.0.1"}', ['invalid-ip: expected IP address character [11,21]']],
    ['http.host eq "\\d"', ['invalid-escape: expected ", xHH or OOO after \\ [15,16]']],
    ['http.host wildcard "a**"', ['invalid-wildcard: wildcard contains a double star [19,24]']],
    ['http.host in $Office', ['invalid-list-name: invalid list name "O" [14,15]']],
  ];
  for (const [text, expected] of cases) assert.deepEqual(findings(text), expected, text);
});

test('a comma in a set is explained', () => {
  const r = checkExpression('http.host in {"a", "b"}');
  assert.equal(r.diagnostics[0].message, 'invalid digit found in string while parsing with radix 16');
  assert.match(r.diagnostics[0].hint!, /separated by spaces, not commas/);
  assert.equal(checkExpression('cf.edge.server_port in {1, 2}').diagnostics[0].message, 'expected digit');
});

test('types and the operator matrix', () => {
  const cases: [string, string[]][] = [
    ['ssl == true', ['unrecognised-input: unrecognised input [4,11]']],
    ['http.host', ['expected-comparison-op: expected ComparisonOp [9,9]']],
    ['http.request.headers["a"] == "x"', ['operator-type-mismatch: cannot perform this operation on type Array<Bytes> [26,28]']],
    ['ip.src contains "1"', ['operator-type-mismatch: cannot perform this operation on type Ip [7,15]']],
    ['cf.edge.server_port contains "1"', ['operator-type-mismatch: cannot perform this operation on type Int [20,28]']],
    ['http.host & 1', ['operator-type-mismatch: cannot perform this operation on type Bytes [10,11]']],
    ['http.request.headers.names[*] == "x"', ['type-mismatch: expected value of type Bool, but got Array<Bool> [0,36]']],
    ['any(ssl)', ['type-mismatch: expected value of type Array<Bool>, but got Bool [4,7]']],
    ['any("x")', ['type-mismatch: expected value of type Array<Bool>, but got Bytes [4,7]']],
    ['ssl and http.request.headers.names[*] == "x"', ['type-mismatch: expected value of type Bool, but got Array<Bool> [8,44]']],
    ['http.request.headers[0] eq "a"', ['invalid-index-access: cannot access index ArrayIndex(0) for type Map<Array<Bytes>> [20,23]']],
    ['http.host["x"] eq "a"', ['invalid-index-access: cannot access index MapKey("x") for type Bytes [9,14]']],
    ['http.host[*] eq "a"', ['invalid-index-access: cannot access index MapEach for type Bytes [9,12]']],
    ['http.request.headers["x"][-1] eq "a"', ['invalid-index: expected literal "expected positive integer as index" [26,28]']],
    ['cf.edge.server_port eq http.host', ['type-mismatch: expected value of type Int, but got Bytes [23,32]']],
  ];
  for (const [text, expected] of cases) assert.deepEqual(findings(text), expected, text);
});

test('names: unknown identifiers and functions with suggestions', () => {
  const r = checkExpression('http.hots eq "a"');
  assert.deepEqual(findings('http.hots eq "a"'), ['unknown-identifier: unknown identifier [0,9]']);
  assert.deepEqual(r.diagnostics[0].data, { suggestions: ['http.host'] });
  assert.deepEqual(findings('lowr(http.host) eq "a"'), ['unknown-function: unknown function [0,4]']);
  assert.match(checkExpression('lowr(http.host) eq "a"').diagnostics[0].hint!, /`lower`/);
  assert.deepEqual(findings('HTTP.HOST eq "a"'), ['unknown-identifier: unknown identifier [0,9]']);
  assert.deepEqual(findings('http..host eq "a"'), ['syntax-error: expected identifier character [5,6]']);
});

test('function arguments: count, kind, type, value, map-each', () => {
  const cases: [string, string[]][] = [
    ['lower("A") eq "a"', ['argument-kind: invalid kind of argument #0: expected argument of kind Field, but got Literal [6,9]']],
    ['ends_with(http.host, http.host)', ['argument-kind: invalid kind of argument #1: expected argument of kind Literal, but got Field [21,30]']],
    ['concat(0, 0) eq "a"', ['argument-type: invalid type of argument #0: expected value of type Bytes or Array<_>, but got Int [7,8]']],
    ['lower(cf.edge.server_port) eq "a"', ['argument-type: invalid type of argument #0: expected value of type Bytes, but got Int [6,25]']],
    ['len() eq 1', ['argument-count: invalid number of arguments [0,5]']],
    ['split(http.host, ",", 500)[0] eq "a"', ['argument-value: invalid value of argument #2: invalid argument: "split limit must be between 1 and 128" [22,25]']],
    ['any(ends_with(http.host, http.request.headers.names[*]))', ['argument-kind: invalid kind of argument #1: expected argument of kind Literal, but got Field [25,54]']],
    ['substring(http.host, 0x1) eq "a"', ['unknown-identifier: unknown identifier [21,24]']],
    ['ends_with(http.host, 61:62)', ['argument-type: invalid type of argument #1: expected value of type Bytes, but got Int [21,26]']],
    ['concat(http.host, http.request.headers.names[*])[0] eq "a"', ['invalid-map-each: invalid use of map each access operator [18,47]']],
  ];
  for (const [text, expected] of cases) assert.deepEqual(findings(text), expected, text);
});

test('limits: length, nesting, regex count, replace functions', () => {
  const long = `http.host in {${Array.from({ length: 500 }, (_, i) => `"host-${i}.example.com"`).join(' ')}}`;
  const d = checkExpression(long).diagnostics;
  assert.equal(d[0].code, 'expression-too-long');
  assert.equal(d[0].message, `expression is ${long.length} characters long; the limit is 4096`);
  assert.deepEqual([d[0].range.start, d[0].range.end], [4096, long.length]);
  assert.equal(checkExpression(long, { allowManaged: true }).diagnostics.length, 0, 'managed rules are not limited');
  // Megabytes are refused as too long without being parsed (a 3 MB string took 17 s and 2.5 GB).
  const huge = `http.host eq "${'a'.repeat(3_000_000)}" and (`;
  assert.deepEqual(findings(huge), [`expression-too-long: expression is ${huge.length} characters long; the limit is 4096 [4096,${huge.length}]`]);
  // Characters are code points: 4,096 emoji are within the limit; one more is over, from the 4,097th (the closing quote, at UTF-16 offset 8178).
  const emoji = (n: number) => `http.host eq "${'😀'.repeat(n - 'http.host eq ""'.length)}"`;
  assert.deepEqual(findings(emoji(4096)), []);
  assert.deepEqual(findings(emoji(4097)), [`expression-too-long: expression is 4097 characters long; the limit is 4096 [8178,${emoji(4097).length}]`]);

  // A name the scheme does not know, where an operator was expected, is reported as the engine does: on the name.
  assert.deepEqual(findings('ssl and and ssl'), ['unknown-identifier: unknown identifier [8,11]']);
  assert.equal(checkExpression('ssl and and ssl').diagnostics[0]!.hint, '`and` is read here as a field name: remove the doubled operator.');
  // An unclosed set wants its `}`, not a comma.
  assert.deepEqual(findings('http.host in {"a"'), ['syntax-error: expected literal "}" [17,17]']);

  const deep = `${'('.repeat(129)}ssl${')'.repeat(129)}`;
  assert.deepEqual(findings(deep), ['nesting-too-deep: maximum nesting depth exceeded (limit: 128) [128,133]']);
  accepts(`${'('.repeat(128)}ssl${')'.repeat(128)}`);
  // Within the length limit, still never a crash: a chain of indexes thousands long, and regexes nested past Rust's limit of 250.
  const chain = `http.request.headers["a"]${'[0]'.repeat(4000)} eq "a"`;
  assert.deepEqual(checkExpression(chain, { allowManaged: true }).diagnostics.map((d) => `${d.code}: ${d.message}`), ['nesting-too-deep: the expression is nested too deeply to check']);
  const nestedRegex = (open: string, close = '') => `http.host matches "${open}a${close}"`;
  for (const text of [nestedRegex('('.repeat(251), ')'.repeat(251)), nestedRegex('['.repeat(251), ']'.repeat(251)), `http.host matches r"a${'*'.repeat(251)}"`]) {
    assert.deepEqual(findings(text).map((f) => f.replace(/ \[.*$/, '')), ['invalid-regex: exceed the maximum number of nested parentheses/brackets (250)'], text.slice(0, 40));
  }
  accepts(nestedRegex('('.repeat(250), ')'.repeat(250)));

  const regexes = Array.from({ length: 65 }, (_, i) => `http.host matches "a${i}"`).join(' or ');
  assert.ok(findings(regexes).includes(`too-many-regexes: the expression uses 65 regular expressions; a rule may use at most 64 [0,${regexes.length}]`));

  const twice = 'regex_replace(http.request.uri.path, "a", "b") eq regex_replace(http.request.uri.path, "c", "d")';
  assert.ok(findings(twice).some((f) => f.startsWith('replace-function-limit: `regex_replace` may be used only once per expression')));
});

test('regex_replace and wildcard_replace patterns are validated after string decoding', () => {
  assert.deepEqual(findings('regex_replace(http.request.uri.path, "(a", "b") eq "x"'), ['invalid-regex: invalid value of argument #1: unclosed group [37,41]']);
  assert.deepEqual(findings('wildcard_replace(http.request.uri.path, "/a**", "b") eq "x"'), ['invalid-wildcard: invalid value of argument #1: wildcard contains a double star [40,46]']);
  accepts('regex_replace(http.request.uri.path, "^/v\\\\d+/", "/") eq "/x"');
});

test('regexes are validated with RE2 / Rust syntax', () => {
  assert.equal(checkExpression('http.host matches "(?=a)"').diagnostics[0].code, 'invalid-regex');
  assert.equal(checkExpression('http.host matches "(a"').diagnostics[0].code, 'invalid-regex');
  assert.equal(checkExpression('http.host matches "(a)\\1"').diagnostics[0].code, 'invalid-regex');
  assert.deepEqual(findings('http.host matches "(?)a"'), ['invalid-regex: repetition operator missing expression [18,24]']);
  assert.deepEqual(findings('http.host matches "a{,2}"'), ['invalid-regex: repetition quantifier expects a valid decimal [18,25]']);
  accepts('http.host matches "(?i)^www\\.[a-z]{2,}\\.example\\.com$"');
});

test('warnings users need: deprecation, plan, phase, literals that never match, IP ordering', () => {
  const cases: [string, CheckOptions, string[]][] = [
    ['ip.geoip.country eq "US"', {}, ['deprecated-field: `ip.geoip.country` is deprecated; use `ip.src.country` [0,16]']],
    ['http.request.method eq "get"', {}, ['method-not-uppercase: "get" can never match: methods are upper case [23,28]']],
    ['http.request.method in {"GET" "post"}', {}, ['method-not-uppercase: "post" can never match: methods are upper case [30,36]']],
    ['http.request.headers["Content-Type"][0] eq "x"', {}, ['header-key-not-lowercase: "Content-Type" can never match: header names in `http.request.headers` are lower case [21,35]']],
    ['http.request.uri.path eq "admin"', {}, ['path-without-slash: "admin" can never match: `http.request.uri.path` always starts with "/" [25,32]']],
    ['ip.src.country in {"us" "DE"}', {}, ['never-matches: "us" can never match: `ip.src.country` values are written "US" [19,23]']],
    ['http.request.uri.path.extension eq ".PHP"', {}, ['never-matches: ".PHP" can never match: `http.request.uri.path.extension` is lower case and has no leading dot [35,41]']],
    // `ne` is then always true; a case-insensitive wildcard matches any case; ordering and `contains` may match anything.
    ['http.request.method ne "get"', {}, ['method-not-uppercase: "get" is never equal to it, as methods are upper case: this condition is always true [23,28]']],
    ['http.request.uri.path ne "foo"', {}, ['path-without-slash: "foo" is never equal to it, as `http.request.uri.path` always starts with "/": this condition is always true [25,30]']],
    ['http.request.uri.path.extension wildcard "PH*"', {}, []],
    ['http.request.uri.path.extension strict wildcard "PH*"', {}, ['never-matches: "PH*" can never match: `http.request.uri.path.extension` is lower case and has no leading dot [48,53]']],
    ['http.request.uri.path lt "a"', {}, []],
    ['http.request.method contains "get"', {}, []],
    ['ip.src lt 1.2.3.4', {}, ["ip-ordering: ordering comparisons on IP addresses are not supported by Cloudflare's documentation [7,9]"]],
    ['cf.bot_management.score lt 30', { plan: 'pro' }, ['plan-required: `cf.bot_management.score` requires the Enterprise plan or above (Bot Management add-on) [0,23]']],
    ['http.response.code eq 500', { phase: 'http_request_firewall_custom' }, ['not-in-phase: the field `http.response.code` is not available in phase http_request_firewall_custom [0,18]']],
    // A rate limiting rule's expression is matched before the request goes on; its counting expression once the origin answered.
    ['http.response.code eq 401', { phase: 'http_ratelimit' }, [`not-in-phase: the field \`http.response.code\` is not available in phase http_ratelimit [0,18]`]],
    ['http.response.code eq 401', { phase: 'http_ratelimit', countingExpression: true }, []],
    ['cf.response.error_type eq "origin"', { phase: 'http_ratelimit', countingExpression: true }, ['not-in-phase: the field `cf.response.error_type` is not available in phase http_ratelimit [0,22]']],
    ['ip.src in $office', { listNames: ['office_network'] }, ['unknown-list: list "office" does not exist in this account [10,17]']],
  ];
  for (const [text, options, expected] of cases) assert.deepEqual(findings(text, options), expected, text);
  // Quick-fix data for the editor
  assert.deepEqual(checkExpression('http.request.method eq "get"').diagnostics[0].data, { replacement: '"GET"' });
  assert.deepEqual(checkExpression('ip.geoip.country eq "US"').diagnostics[0].data, { replacement: 'ip.src.country' });
  // In a rate limiting rule the editor says where the answer may be read instead.
  assert.equal(checkExpression('http.response.code eq 401', { phase: 'http_ratelimit' }).diagnostics[0].hint, "A rate limiting rule's expression is matched before the request goes on: read the origin's answer in its counting expression (`ratelimit.counting_expression`).");
  // Warnings do not block compilation
  assert.ok(checkExpression('ip.geoip.country eq "US"').ir);
});

test('dynamic comparisons can be turned off', () => {
  assert.deepEqual(findings('http.request.uri.path ne raw.http.request.uri.path', { dynamicComparisons: false }), [
    'dynamic-comparison-disabled: expected " or r [25,50]',
  ]);
});

test("a rate limiting rule reads what its zone's plan allows, and no list with the answer (reference §2.1, §2.3)", () => {
  const rl = (plan: CheckOptions['plan'], more: CheckOptions = {}): CheckOptions => ({ phase: 'http_ratelimit', ...(plan ? { plan } : {}), ...more });
  const cases: [string, CheckOptions, string[]][] = [
    // Free: the path and verified bots; the raw path is the path.
    ['http.request.uri.path eq "/login" and not cf.client.bot', rl('free'), []],
    ['raw.http.request.uri.path eq "/login"', rl('free'), []],
    ['true', rl('free'), []],
    ['http.host eq "a.example"', rl('free'), ['plan-required: `http.host` in a rate limiting rule requires the Pro plan or above [0,9]']],
    // Pro adds the host, URI and query; Business the method, client address and user agent.
    ['http.host eq "a.example" and http.request.uri.query contains "q="', rl('pro'), []],
    ['http.request.method eq "POST"', rl('pro'), ['plan-required: `http.request.method` in a rate limiting rule requires the Business plan or above [0,19]']],
    ['http.request.method eq "POST" and ip.src in {192.0.2.0/24}', rl('business'), []],
    ['http.request.headers["x-api-key"][0] eq "k"', rl('business'), ['plan-required: `http.request.headers` in a rate limiting rule requires the Enterprise plan [0,20]']],
    ['ip.src.country eq "GB"', rl('business'), ['plan-required: `ip.src.country` in a rate limiting rule requires the Enterprise plan [0,14]']],
    // Enterprise (Advanced Rate Limiting assumed) reads every request field; with no plan nothing is judged; other phases are not limited so.
    ['http.request.headers["x-api-key"][0] eq "k" and http.request.body.size gt 100', rl('enterprise'), []],
    ['ip.src.country eq "GB"', rl(undefined), []],
    ['ip.src.country eq "GB"', { phase: 'http_request_firewall_custom', plan: 'free' }, []],
    // A Business counting expression may read the answer.
    ['http.response.code eq 401', rl('business', { countingExpression: true }), []],
    // A counting expression that reads the answer cannot use a custom list (a managed one is not custom).
    ['ip.src in $office and http.response.code eq 401', rl(undefined, { countingExpression: true }), ["ratelimit-restriction: a counting expression that reads the origin's answer (`http.response.code`) cannot use custom lists (`$office`) [10,17]"]],
    ['ip.src in $office', rl(undefined, { countingExpression: true }), []],
    ['ip.src in $cf.open_proxies and http.response.code eq 401', rl(undefined, { countingExpression: true }), []],
    // An account's rate limiting rules use no list, and their counting expressions do not read the answer.
    ['ip.src in $office', rl(undefined, { account: true }), ["ratelimit-restriction: an account's rate limiting rules cannot use lists (`$office`) [10,17]"]],
    ['http.response.code eq 401', rl(undefined, { account: true, countingExpression: true }), ["ratelimit-restriction: an account's rate limiting rules cannot read the origin's answer (`http.response.code`) [0,18]"]],
    ['ip.src in $office', { phase: 'http_request_firewall_custom', account: true }, []],
    ['ip.src in $cf.open_proxies', rl(undefined, { account: true }), ["ratelimit-restriction: an account's rate limiting rules cannot use lists (`$cf.open_proxies`) [10,26]"]],
    // An account's ruleset has no plan: a zone's plan does not judge its fields.
    ['ip.src.country eq "GB"', rl('business', { account: true }), []],
    // One warning per field: its own plan, or the phase, says it already.
    ['cf.bot_management.score lt 30', rl('business'), ['plan-required: `cf.bot_management.score` requires the Enterprise plan or above (Bot Management add-on) [0,23]']],
  ];
  for (const [text, options, expected] of cases) assert.deepEqual(findings(text, options), expected, text);
  assert.equal(checkExpression('http.request.method eq "POST"', rl('pro')).diagnostics[0].hint, 'On the Pro plan a rate limiting rule may read the host, URI, path, full URI, query and whether the client is a verified bot; the API rejects the rule.');
});
