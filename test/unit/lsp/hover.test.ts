// Hover: pure unit tests on expression text with a caret `|` marking the hovered character.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { hover } from '../../../server/src/lsp/hover';
import type { ExpressionContext } from '../../../server/src/lsp/context';
import { httpScheme } from '../../../server/src/language/scheme/index';

const base: ExpressionContext = { scheme: httpScheme };

function at(fixture: string): { text: string; offset: number } {
  const offset = fixture.indexOf('|');
  assert.ok(offset >= 0, `no caret in ${fixture}`);
  return { text: fixture.slice(0, offset) + fixture.slice(offset + 1), offset };
}

/** The hover's markdown lines and its range, or undefined. */
function hoverAt(fixture: string, ctx: Partial<ExpressionContext> = {}): { lines: string[]; range: [number, number] } | undefined {
  const { text, offset } = at(fixture);
  const h = hover(text, offset, { ...base, ...ctx });
  if (!h) return undefined;
  assert.equal(h.contents.kind, 'markdown');
  return { lines: h.contents.value.split('\n'), range: [h.range.start, h.range.end] };
}

function lines(fixture: string, ctx: Partial<ExpressionContext> = {}): string[] {
  const h = hoverAt(fixture, ctx);
  assert.ok(h, `no hover for ${fixture}`);
  return h.lines;
}

// ----- fields ---------------------------------------------------------------------------

test('a field: name and type, doc, the first well-known values', () => {
  assert.deepEqual(hoverAt('http.request.me|thod eq "GET"'), {
    range: [0, 19],
    lines: [
      '(field) `http.request.method`: `Bytes`',
      '',
      'HTTP method in upper case, such as "GET".',
      '',
      'Values: `"GET"`, `"HEAD"`, `"POST"`, `"PUT"`, `"DELETE"`, `"CONNECT"`, `"OPTIONS"`, `"TRACE"`, … (10 in all)',
      '',
      '[Documentation of `http.request.method`](https://developers.cloudflare.com/ruleset-engine/rules-language/fields/reference/http.request.method/)',
    ],
  });
  assert.deepEqual(lines('|http.host eq "a"'), [
    '(field) `http.host`: `Bytes`',
    '',
    'Host name of the request as the client sent it (Origin Rules do not change it).',
    '',
    '[Documentation of `http.host`](https://developers.cloudflare.com/ruleset-engine/rules-language/fields/reference/http.host/)',
  ]);
});

test('a field above the plan: the plan, its note, and that the zone\'s plan lacks it', () => {
  assert.deepEqual(lines('cf.bot_management.sco|re lt 30', { plan: 'pro' }), [
    '(field) `cf.bot_management.score`: `Int`',
    '',
    'Bot score from 1 (almost certainly automated) to 99 (almost certainly human).',
    '',
    'Plan: Enterprise (Bot Management add-on) — not included in the Pro plan',
    '',
    '[Documentation of `cf.bot_management.score`](https://developers.cloudflare.com/ruleset-engine/rules-language/fields/reference/cf.bot_management.score/)',
  ]);
  assert.equal(lines('cf.bot_management.sco|re lt 30', { plan: 'enterprise' })[4], 'Plan: Enterprise (Bot Management add-on)');
  assert.equal(lines('any(http.request.coo|kies["a"][*] eq "b")')[4], 'Plan: Pro and above');
  assert.equal(lines('s|ha256(http.host) eq "x"')[4], 'Plan: all plans (must be enabled for the account)');
});

test('a field restricted to phases: the phases, and that the rule\'s phase is not one of them', () => {
  assert.deepEqual(lines('http.request.accepted_languages|[0] eq "en"', { phase: 'http_request_firewall_custom' }), [
    '(field) `http.request.accepted_languages`: `Array<Bytes>`',
    '',
    'Language tags of the Accept-Language header, highest preference first, without "*" (Transform Rules only).',
    '',
    'Phases: only `http_request_transform`, `http_request_late_transform`, `http_response_headers_transform` — not available in `http_request_firewall_custom`',
    '',
    '[Documentation of `http.request.accepted_languages`](https://developers.cloudflare.com/ruleset-engine/rules-language/fields/reference/http.request.accepted_languages/)',
  ]);
  assert.equal(
    lines('http.response.co|de eq 404', { phase: 'http_response_headers_transform' })[4].includes('not available'),
    false,
  );
});

test('a deprecated field: deprecation, replacement, values with country names (no documentation link: it has no page)', () => {
  assert.deepEqual(lines('ip.geoip.co|untry eq "DE"'), [
    '(field) `ip.geoip.country`: `Bytes`',
    '',
    'Deprecated alias of ip.src.country. Upper-case ISO 3166-1 alpha-2 country code of the client IP address ("T1" for Tor).',
    '',
    '**Deprecated**: use `ip.src.country` instead.',
    '',
    'Values: `"AD"` Andorra, `"AE"` United Arab Emirates, `"AF"` Afghanistan, `"AG"` Antigua & Barbuda, `"AI"` Anguilla, `"AL"` Albania, `"AM"` Armenia, `"AO"` Angola, … (252 in all)',
  ]);
});

test('the cursor just after a name still hovers it', () => {
  assert.deepEqual(hoverAt('ssl|')?.range, [0, 3]);
  assert.deepEqual(hoverAt('http.host| eq "a"')?.range, [0, 9]);
});

// ----- functions ------------------------------------------------------------------------

test('a function: signature, doc, phases and plan', () => {
  assert.deepEqual(hoverAt('low|er(http.host) eq "a"'), {
    range: [0, 5],
    lines: ['(function) `lower(source: Bytes) -> Bytes`', '', 'Converts ASCII upper-case letters to lower case; other bytes are unchanged.', '', '[Documentation of `lower`](https://developers.cloudflare.com/ruleset-engine/rules-language/functions/#lower)'],
  });
  const regex = lines('regex_re|place(http.request.uri.path, "a", "b") eq "x"', { phase: 'http_request_firewall_custom' });
  assert.equal(regex[0], '(function) `regex_replace(source: Bytes, regex: Bytes, replacement: Bytes) -> Bytes`');
  assert.equal(
    regex[4],
    'Phases: only `http_request_transform`, `http_request_late_transform`, `http_response_headers_transform`, `http_request_dynamic_redirect` — not available in `http_request_firewall_custom`',
  );
  assert.equal(lines('is_timed_hmac|_valid_v0("k", http.request.uri, 10, http.request.timestamp.sec)', { plan: 'free' })[4], 'Plan: Pro and above — not included in the Free plan');
});

// ----- operators ------------------------------------------------------------------------

test('eq: meaning, the other notation, byte-exact and case-sensitive', () => {
  assert.deepEqual(hoverAt('http.host e|q "a"'), {
    range: [10, 12],
    lines: [
      '(operator) `eq` — equal',
      '',
      'Same as `==`.',
      '',
      'True when the value equals the right-hand side.',
      '',
      'Strings compare byte for byte: exact and case-sensitive (`"GET"` is not `"get"`; use `lower(…)` or `wildcard` to ignore case).',
    ],
  });
  assert.deepEqual(lines('http.host =|= "a"').slice(0, 3), ['(operator) `==` — equal', '', 'Same as `eq`.']);
});

test('wildcard is case-insensitive, strict wildcard case-sensitive (spanning both words)', () => {
  const w = lines('http.host wild|card "*.example.com"');
  assert.equal(w[0], '(operator) `wildcard` — wildcard match, case-insensitive');
  assert.equal(w[w.length - 1], 'Case-insensitive (ASCII letters); use `strict wildcard` to match case. Strings only.');
  const strict = hoverAt('http.host strict wild|card "*.Example.com"');
  assert.deepEqual(strict?.range, [10, 25]);
  assert.equal(strict?.lines[0], '(operator) `strict wildcard` — wildcard match, case-sensitive');
  assert.equal(strict?.lines[strict.lines.length - 1], 'Case-sensitive; use `wildcard` to ignore case. Strings only.');
  assert.deepEqual(hoverAt('http.host str|ict wildcard "a"')?.range, [10, 25]);
});

test('matches: RE2 syntax, (?i), the Business plan', () => {
  assert.deepEqual(lines('http.host ma|tches "^a"', { plan: 'pro' }), [
    '(operator) `matches` — regular expression match',
    '',
    'Same as `~`.',
    '',
    'True when the regular expression matches anywhere in the value (anchor it with `^` and `$`).',
    '',
    'RE2 / Rust `regex` syntax: no look-around, no backreferences. Case-sensitive unless the pattern starts with `(?i)`. Prefer raw strings: `r"\\d+"`.',
    '',
    'Strings only. Requires the Business or Enterprise plan.',
    '',
    'Not included in the Pro plan.',
  ]);
  assert.equal(lines('http.host |~ "^a"', { plan: 'business' }).length, 9);
});

test('contains, in and the bitwise test', () => {
  assert.deepEqual(lines('http.host con|tains "a"'), [
    '(operator) `contains` — substring',
    '',
    'True when the string contains the right-hand side as a substring.',
    '',
    'Case-sensitive, byte for byte. Strings only; there is no C-like notation.',
  ]);
  assert.deepEqual(lines('ip.src i|n {10.0.0.0/8}').slice(0, 3), ['(operator) `in` — set or list membership', '', 'True when the value is an item of the set `{…}` or of the list `$name`.']);
  assert.deepEqual(lines('cf.edge.server_port |& 1').slice(0, 5), [
    '(operator) `&` — bitwise test',
    '',
    'Same as `bitwise_and`.',
    '',
    'True when the value and the right-hand side have a bit in common (`value & n` is not zero).',
  ]);
});

test('logical operators and not, in both notations', () => {
  assert.deepEqual(hoverAt('ssl a|nd cf.client.bot'), {
    range: [4, 7],
    lines: [
      '(logical operator) `and` — logical and',
      '',
      'Same as `&&`.',
      '',
      'True when both sides are true.',
      '',
      'Binds tighter than `xor` and `or`: `a or b and c` is `a or (b and c)`. Lower case only.',
    ],
  });
  assert.equal(lines('ssl |&& cf.client.bot')[2], 'Same as `and`.');
  assert.equal(lines('ssl |or cf.client.bot')[0], '(logical operator) `or` — logical or');
  assert.equal(lines('ssl ^|^ cf.client.bot')[0], '(logical operator) `^^` — logical exclusive or');
  assert.equal(lines('n|ot ssl')[0], '(logical operator) `not` — logical not');
  assert.deepEqual(hoverAt('|!ssl')?.range, [0, 1]);
});

test('any and all', () => {
  assert.deepEqual(hoverAt('an|y(http.request.headers.names[*] eq "a")'), {
    range: [0, 3],
    lines: [
      '(quantifier) `any(condition: Array<Bool>) -> Bool`',
      '',
      'True when the condition holds for at least one element; false when there are none.',
      '',
      'Write the condition over `[*]`: `any(http.request.headers["accept"][*] contains "json")`.',
    ],
  });
  assert.equal(lines('al|l(http.request.headers.values[*] ne "")')[2], 'True when the condition holds for every element; true when there are none.');
});

// ----- lists and values -----------------------------------------------------------------

test('list references: managed and custom', () => {
  assert.deepEqual(hoverAt('ip.src in $cf.open|_proxies'), {
    range: [10, 26],
    lines: ['(list) `$cf.open_proxies` — managed IP list', '', 'IP addresses of known open proxy servers.', '', 'Use it with an IP field: `ip.src in $cf.open_proxies`.'],
  });
  assert.deepEqual(lines('ip.src in $off|ice', { listNames: ['office'] }), [
    '(list) `$office` — custom list',
    '',
    "True after `in` when the value matches an item of the account's list with this name.",
  ]);
  assert.equal(lines('ip.src in $oth|er', { listNames: ['office'] })[4], 'No list with this name is known to the workspace.');
});

test('a country or continent code compared with its field: its name', () => {
  assert.deepEqual(hoverAt('ip.src.country eq "D|E"'), { range: [18, 22], lines: ['`"DE"` — Germany (a value of `ip.src.country`)'] });
  assert.deepEqual(hoverAt('ip.src.continent in {"EU" "|NA"}'), { range: [26, 30], lines: ['`"NA"` — North America (a value of `ip.src.continent`)'] });
  assert.equal(hoverAt('http.host eq "D|E"'), undefined);
});

// ----- text that does not parse ---------------------------------------------------------

test('while typing (the text does not parse) the token under the cursor is used', () => {
  assert.equal(lines('http.request.me|thod eq')[0], '(field) `http.request.method`: `Bytes`');
  assert.equal(lines('low|er(http.host')[0], '(function) `lower(source: Bytes) -> Bytes`');
  assert.equal(lines('ssl an|d')[0], '(logical operator) `and` — logical and');
  assert.equal(lines('http.host strict wild|card')[0], '(operator) `strict wildcard` — wildcard match, case-sensitive');
  assert.equal(lines('ip.src in $cf.v|pn and')[0], '(list) `$cf.vpn` — managed IP list');
  assert.equal(lines('a|ny(http.request.headers.names[*] eq')[0], '(quantifier) `any(condition: Array<Bool>) -> Bool`');
  assert.equal(lines('http.host ma|tches')[0], '(operator) `matches` — regular expression match');
});

test('nothing to say: literals, spaces, unknown names, punctuation', () => {
  assert.equal(hoverAt('http.host eq "ab|c"'), undefined);
  assert.equal(hoverAt('tcp.port eq 8|0'), undefined);
  assert.equal(hoverAt('foo.b|ar eq 1'), undefined);
  assert.equal(hoverAt('(ssl)|'), undefined);
  assert.equal(hoverAt('|'), undefined);
});
