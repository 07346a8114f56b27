// Completion: pure unit tests on expression text with a caret `|` marking the cursor.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CompletionItemKind, CompletionItemTag, InsertTextFormat } from 'vscode-languageserver';
import { complete, COMMON_REQUEST_HEADERS, type OffsetCompletionItem } from '../../../server/src/lsp/completion';
import type { ExpressionContext } from '../../../server/src/lsp/context';
import { httpScheme, magicFirewallScheme } from '../../../server/src/language/scheme/index';
import { COUNTRY_CODES, HTTP_METHODS } from '../../../server/src/language/scheme/values';

const base: ExpressionContext = { scheme: httpScheme };

/** Splits a fixture at its caret: `http.host |` -> text `http.host `, offset 10. */
function at(fixture: string): { text: string; offset: number } {
  const offset = fixture.indexOf('|');
  assert.ok(offset >= 0, `no caret in ${fixture}`);
  assert.equal(fixture.indexOf('|', offset + 1), -1, `two carets in ${fixture}`);
  return { text: fixture.slice(0, offset) + fixture.slice(offset + 1), offset };
}

function items(fixture: string, ctx: Partial<ExpressionContext> = {}): OffsetCompletionItem[] {
  const { text, offset } = at(fixture);
  return complete(text, offset, { ...base, ...ctx });
}

function labels(fixture: string, ctx: Partial<ExpressionContext> = {}): string[] {
  return items(fixture, ctx).map((i) => i.label);
}

function item(fixture: string, label: string, ctx: Partial<ExpressionContext> = {}): OffsetCompletionItem {
  const found = items(fixture, ctx).find((i) => i.label === label);
  assert.ok(found, `no item ${label} for ${fixture}`);
  return found;
}

// ----- operands -------------------------------------------------------------------------

test('an empty expression offers fields first, in catalog order, then functions and keywords', () => {
  const all = items('|');
  assert.deepEqual(
    all.slice(0, 6).map((i) => i.label),
    ['http.cookie', 'http.host', 'http.referer', 'http.user_agent', 'http.x_forwarded_for', 'http.request.method'],
  );
  assert.ok(all.slice(0, 6).every((i) => i.kind === CompletionItemKind.Field));
  const names = all.map((i) => i.label);
  for (const k of ['not', 'any(', 'all(', '(', 'lower', 'starts_with', 'true']) assert.ok(names.includes(k), k);
  // functions after the (available) fields, keywords after the functions
  assert.ok(names.indexOf('true') < names.indexOf('concat'));
  assert.ok(names.indexOf('upper') < names.indexOf('not'));
  assert.deepEqual(all.find((i) => i.label === 'http.host')!.textEdit, { range: { start: 0, end: 0 }, newText: 'http.host' });
});

test('items come sorted: sortText agrees with the array order', () => {
  for (const fixture of ['|', 'http.request.method |', 'ip.src.country eq |', 'ip.src in |', 'http.request.headers["|']) {
    const list = items(fixture, { plan: 'free', phase: 'http_request_firewall_custom', listNames: ['office'] });
    const keys = list.map((i) => i.sortText ?? '');
    assert.deepEqual(keys, [...keys].sort(), fixture);
  }
});

test('a field item: kind, detail (type and plan), documentation (doc, plan, phases, deprecation)', () => {
  const score = item('cf.bot_management.sc|', 'cf.bot_management.score');
  assert.equal(score.kind, CompletionItemKind.Field);
  assert.equal(score.detail, 'Int · Enterprise');
  assert.deepEqual(score.documentation, {
    kind: 'markdown',
    value: 'Bot score from 1 (almost certainly automated) to 99 (almost certainly human).\n\nPlan: Enterprise (Bot Management add-on)',
  });
  assert.equal(item('http.request.coo|', 'http.request.cookies').detail, 'Map<Array<Bytes>> · Pro and above');
  assert.equal(item('http.ho|', 'http.host').detail, 'Bytes');

  const langs = item('http.request.accepted|', 'http.request.accepted_languages', { phase: 'http_request_firewall_custom' });
  assert.deepEqual(langs.documentation, {
    kind: 'markdown',
    value:
      'Language tags of the Accept-Language header, highest preference first, without "*" (Transform Rules only).\n\n' +
      'Phases: only `http_request_transform`, `http_request_late_transform`, `http_response_headers_transform` — not available in `http_request_firewall_custom`',
  });

  const geo = item('ip.geoip.cou|', 'ip.geoip.country');
  assert.deepEqual(geo.tags, [CompletionItemTag.Deprecated]);
  assert.match((geo.documentation as { value: string }).value, /\*\*Deprecated\*\*: use `ip\.src\.country` instead\.$/);
});

test('deprecated fields come last; fields above the plan or outside the phase after the available ones', () => {
  const names = labels('ip.|');
  assert.deepEqual(names.slice(-6), [
    'ip.geoip.asnum',
    'ip.geoip.continent',
    'ip.geoip.country',
    'ip.geoip.subdivision_1_iso_code',
    'ip.geoip.subdivision_2_iso_code',
    'ip.geoip.is_in_european_union',
  ]);
  assert.deepEqual(names.slice(0, 3), ['ip.src', 'ip.src.lat', 'ip.src.lon']);

  const free = labels('ip.src.|', { plan: 'free', phase: 'http_request_firewall_custom' });
  // Business fields and the Transform-only time zone follow every available field.
  assert.deepEqual(free.slice(-4), [
    'ip.src.timezone.name',
    'ip.src.subdivision_1_iso_code',
    'ip.src.subdivision_2_iso_code',
    'ip.src.is_in_european_union',
  ]);
  const enterprise = labels('ip.src.|', { plan: 'enterprise', phase: 'http_request_firewall_custom' });
  assert.equal(enterprise[enterprise.length - 1], 'ip.src.timezone.name');

  const all = labels('|', { plan: 'free', phase: 'http_request_firewall_custom' });
  assert.ok(all.indexOf('http.request.cookies') > all.indexOf('cf.client.bot'));
  assert.ok(all.indexOf('http.response.code') > all.indexOf('upper'));
  assert.ok(all.indexOf('ip.geoip.country') > all.indexOf('http.response.code'));
});

test('a partly typed dotted name: fields by prefix, the edit replaces the whole dotted token', () => {
  const list = items('http.req|uest.meth eq "GET"');
  assert.ok(list.length > 10);
  assert.ok(list.every((i) => i.label.startsWith('http.req')));
  assert.deepEqual(
    list.slice(0, 3).map((i) => i.label),
    ['http.request.method', 'http.request.version', 'http.request.full_uri'],
  );
  for (const i of list) assert.deepEqual(i.textEdit!.range, { start: 0, end: 17 });

  const trailingDot = items('not http.request.uri.|');
  assert.deepEqual(
    trailingDot.map((i) => i.label),
    [
      'http.request.uri.path',
      'http.request.uri.path.extension',
      'http.request.uri.query',
      'http.request.uri.args',
      'http.request.uri.args.names',
      'http.request.uri.args.values',
    ],
  );
  assert.deepEqual(trailingDot[0].textEdit, { range: { start: 4, end: 21 }, newText: 'http.request.uri.path' });
});

test('a bare last segment finds the field it ends', () => {
  assert.deepEqual(labels('user_ag|'), ['http.user_agent']);
});

test('functions are snippets with a placeholder per required parameter', () => {
  const lower = item('low|', 'lower');
  assert.equal(lower.kind, CompletionItemKind.Function);
  assert.equal(lower.insertTextFormat, InsertTextFormat.Snippet);
  assert.deepEqual(lower.textEdit, { range: { start: 0, end: 3 }, newText: 'lower(${1:source})' });
  assert.equal(lower.detail, 'lower(source: Bytes) -> Bytes');
  assert.equal(lower.command?.command, 'editor.action.triggerParameterHints');
  assert.equal(item('|', 'split').textEdit!.newText, 'split(${1:source}, ${2:separator})');
  assert.equal(item('|', 'concat').textEdit!.newText, 'concat(${1:first}, ${2:rest})');
  assert.equal(item('|', 'lookup_json_string').textEdit!.newText, 'lookup_json_string(${1:json}, ${2:keys})');
  // Parentheses already there: just the name.
  const plain = item('low|(http.host) eq "a"', 'lower');
  assert.equal(plain.insertTextFormat, InsertTextFormat.PlainText);
  assert.deepEqual(plain.textEdit, { range: { start: 0, end: 3 }, newText: 'lower' });
});

test('keywords at the start of an operand', () => {
  assert.deepEqual(labels('n|'), ['not']);
  assert.deepEqual(labels('a|'), ['any(', 'all(']);
  const any = item('a|', 'any(');
  assert.equal(any.kind, CompletionItemKind.Keyword);
  assert.deepEqual(any.textEdit, { range: { start: 0, end: 1 }, newText: 'any(${1})' });
  assert.equal(any.insertTextFormat, InsertTextFormat.Snippet);
  assert.deepEqual(item('|', '(').textEdit, { range: { start: 0, end: 0 }, newText: '(${1})' });
  assert.deepEqual(item('|', 'not').textEdit, { range: { start: 0, end: 0 }, newText: 'not ' });
});

test('`true` only as the whole expression', () => {
  assert.equal(labels('tr|')[0], 'true');
  assert.ok(!labels('ssl and tr|').includes('true'));
});

test('after and / or / not / ( the operand completions come back', () => {
  for (const fixture of ['ssl and |', 'ssl or |', 'ssl && |', 'not |', '!|', '(|', 'http.host eq "a" xor (ssl or |']) {
    const list = labels(fixture);
    assert.equal(list[0], 'http.cookie', fixture);
    assert.ok(list.includes('not') && list.includes('lower'), fixture);
  }
});

// ----- operators ------------------------------------------------------------------------

test('after a Bytes operand: the Bytes operators, in order', () => {
  const list = items('http.request.method |', { plan: 'enterprise' });
  assert.deepEqual(
    list.map((i) => i.label),
    ['eq', 'ne', 'lt', 'le', 'gt', 'ge', 'contains', 'matches', 'wildcard', 'strict wildcard', 'in'],
  );
  assert.deepEqual(list[0].textEdit, { range: { start: 20, end: 20 }, newText: 'eq ' });
  assert.equal(list[0].kind, CompletionItemKind.Operator);
  assert.equal(list[0].detail, 'equal (also ==)');
  assert.equal(list[6].detail, 'substring');
  assert.equal(list[0].command?.command, 'editor.action.triggerSuggest', 'the method values follow');
  // Suggest again only when something follows: a set or a list after `in`, or values.
  const host = items('http.host |');
  assert.equal(host.find((i) => i.label === 'eq')!.command, undefined);
  assert.equal(host.find((i) => i.label === 'in')!.command?.command, 'editor.action.triggerSuggest');
  assert.equal(list.find((i) => i.label === 'matches')!.command, undefined);
});

test('inside an index after its key: nothing', () => {
  assert.deepEqual(labels('http.request.headers["a" |]'), []);
});

test('matches sorts last below the Business plan', () => {
  const list = items('http.host |', { plan: 'pro' });
  assert.equal(list[list.length - 1].label, 'matches');
  assert.equal(list[list.length - 1].detail, 'regular expression match (also ~) — needs the Business plan');
});

test('after an Int operand: the Int operators, including the bitwise test', () => {
  assert.deepEqual(labels('cf.bot_management.score |'), ['eq', 'ne', 'lt', 'le', 'gt', 'ge', 'in', '&', 'bitwise_and']);
  assert.deepEqual(labels('len(http.request.uri.path) |'), ['eq', 'ne', 'lt', 'le', 'gt', 'ge', 'in', '&', 'bitwise_and']);
});

test('after an Ip operand: eq ne in, then the ordering operators marked as not recommended', () => {
  const list = items('ip.src |');
  assert.deepEqual(
    list.map((i) => i.label),
    ['eq', 'ne', 'in', 'lt', 'le', 'gt', 'ge'],
  );
  assert.equal(list[3].detail, 'less than (also <) — not recommended for IP addresses');
});

test('after a Bool operand or a complete comparison: and, or, xor', () => {
  for (const fixture of ['ssl |', 'http.host eq "a" |', 'tcp.flags.syn |', 'starts_with(http.host, "a") |', 'ip.src in {10.0.0.0/8} |', '(ssl) |', 'any(http.request.headers.names[*] eq "a") |']) {
    assert.deepEqual(labels(fixture, fixture.startsWith('tcp') ? { scheme: magicFirewallScheme } : {}), ['and', 'or', 'xor'], fixture);
  }
  const and = item('ssl |', 'and');
  assert.deepEqual(and.textEdit, { range: { start: 4, end: 4 }, newText: 'and ' });
  assert.equal(and.detail, 'logical and (also &&)');
});

test('an operator right after a value gets a leading space; a typed word is replaced', () => {
  assert.deepEqual(item('lower(http.host)|', 'eq').textEdit, { range: { start: 16, end: 16 }, newText: ' eq ' });
  assert.deepEqual(item('http.host eq "a"|', 'or').textEdit, { range: { start: 16, end: 16 }, newText: ' or ' });
  assert.deepEqual(item('http.host co|', 'contains').textEdit, { range: { start: 10, end: 12 }, newText: 'contains ' });
  assert.deepEqual(item('ssl a| x', 'and').textEdit, { range: { start: 4, end: 5 }, newText: 'and' });
});

test('strict: only `strict wildcard`, replacing both words', () => {
  assert.deepEqual(
    items('http.host strict |').map((i) => [i.label, i.textEdit]),
    [['strict wildcard', { range: { start: 10, end: 17 }, newText: 'strict wildcard ' }]],
  );
  assert.deepEqual(item('http.host strict w|', 'strict wildcard').textEdit!.range, { start: 10, end: 18 });
});

test('a map or an array offers its index forms, attached to the value', () => {
  const map = items('http.request.headers |');
  assert.deepEqual(map.map((i) => i.label), ['["…"]', '[*]']);
  assert.deepEqual(map[0].textEdit, { range: { start: 20, end: 21 }, newText: '["$1"]' });
  assert.equal(map[0].insertTextFormat, InsertTextFormat.Snippet);
  assert.deepEqual(map[1].textEdit, { range: { start: 20, end: 21 }, newText: '[*]' });
  const array = items('http.request.uri.args.names |');
  assert.deepEqual(array.map((i) => [i.label, i.textEdit!.newText]), [['[0]', '[${1:0}]'], ['[*]', '[*]']]);
  // Map<Array<Bytes>>["k"] is an array
  assert.deepEqual(labels('http.request.headers["accept"] |'), ['[0]', '[*]']);
  // …and its element a string
  assert.equal(labels('http.request.headers["accept"][0] |')[0], 'eq');
  assert.equal(labels('any(http.request.headers["accept"][*] |')[0], 'eq');
});

test('an unknown operand gets every operator', () => {
  assert.deepEqual(labels('foo.bar |'), ['eq', 'ne', 'lt', 'le', 'gt', 'ge', 'contains', 'matches', 'wildcard', 'strict wildcard', 'in', '&', 'bitwise_and']);
});

// ----- values ---------------------------------------------------------------------------

test('after eq: the field\'s well-known values, quoted', () => {
  const list = items('http.request.method eq |');
  assert.deepEqual(list.map((i) => i.label), HTTP_METHODS.map((m) => `"${m}"`));
  assert.deepEqual(list[0].textEdit, { range: { start: 23, end: 23 }, newText: '"GET"' });
  assert.equal(list[0].kind, CompletionItemKind.Value);
  assert.deepEqual(item('http.request.method ==|', '"POST"').textEdit, { range: { start: 22, end: 22 }, newText: ' "POST"' });
  assert.deepEqual(labels('http.request.version ne |'), ['"HTTP/1.0"', '"HTTP/1.1"', '"HTTP/2"', '"HTTP/3"']);
  assert.deepEqual(labels('cf.tls_version eq |'), ['"TLSv1"', '"TLSv1.1"', '"TLSv1.2"', '"TLSv1.3"', '"SSLv3"']);
  assert.deepEqual(labels('cf.waf.score.class eq |'), ['"attack"', '"likely_attack"', '"likely_clean"', '"clean"']);
  assert.ok(labels('cf.verified_bot_category eq |').includes('"Search Engine Crawler"'));
  assert.ok(labels('cf.response.error_type contains |').includes('"managed_challenge"'));
});

test('country and continent codes carry their names', () => {
  const countries = items('ip.src.country eq |');
  assert.equal(countries.length, COUNTRY_CODES.length);
  const de = countries.find((i) => i.label === '"DE"')!;
  assert.equal(de.detail, 'Germany');
  assert.deepEqual(de.labelDetails, { description: 'Germany' });
  assert.equal(de.filterText, 'DE Germany');
  assert.equal(countries.find((i) => i.label === '"T1"')!.detail, 'Tor network');
  assert.deepEqual(
    items('ip.src.continent eq |').map((i) => `${i.label} ${i.detail}`),
    ['"AF" Africa', '"AN" Antarctica', '"AS" Asia', '"EU" Europe', '"NA" North America', '"OC" Oceania', '"SA" South America', '"T1" Tor network'],
  );
});

test('inside a string after an operator: values, replacing the whole string', () => {
  const typing = items('http.request.method eq "G|');
  assert.equal(typing.length, HTTP_METHODS.length);
  assert.deepEqual(typing[0].textEdit, { range: { start: 23, end: 25 }, newText: '"GET"' });
  assert.equal(typing[0].filterText, '"GET"');
  // auto-closed quotes: both are replaced
  assert.deepEqual(item('http.request.method eq "|"', '"PUT"').textEdit, { range: { start: 23, end: 25 }, newText: '"PUT"' });
  assert.deepEqual(item('http.request.method eq "P|OS" and ssl', '"POST"').textEdit, { range: { start: 23, end: 28 }, newText: '"POST"' });
  // quotes out of step (the rest of the text does not pair up): up to the cursor only
  assert.deepEqual(item('http.request.method eq "|http.host eq "a"', '"GET"').textEdit!.range, { start: 23, end: 24 });
});

test('an unquoted word after an operator is replaced by the quoted value', () => {
  const g = item('ip.src.country eq G|', '"GB"');
  assert.deepEqual(g.textEdit, { range: { start: 18, end: 19 }, newText: '"GB"' });
});

test('after in: a set and the lists; inside the set the values not yet there', () => {
  const ip = items('ip.src in |', { listNames: ['office_network'] });
  assert.deepEqual(
    ip.map((i) => i.label),
    ['{…}', '$office_network', '$cf.open_proxies', '$cf.anonymizer', '$cf.vpn', '$cf.malware', '$cf.botnetcc'],
  );
  assert.deepEqual(ip[0].textEdit, { range: { start: 10, end: 10 }, newText: '{${1:192.0.2.0/24}}' });
  assert.equal(ip[0].insertTextFormat, InsertTextFormat.Snippet);
  // the managed lists hold IP addresses
  assert.deepEqual(labels('http.host in |', { listNames: ['hosts'] }), ['{…}', '$hosts']);
  assert.equal(item('tcp.dstport in |', '{…}', { scheme: magicFirewallScheme }).textEdit!.newText, '{${1:80 443}}');

  assert.deepEqual(labels('http.request.method in {"GET" "POST" |'), HTTP_METHODS.filter((m) => m !== 'GET' && m !== 'POST').map((m) => `"${m}"`));
  assert.deepEqual(item('http.request.method in {"GET" "|"}', '"HEAD"').textEdit, { range: { start: 30, end: 32 }, newText: '"HEAD"' });
  assert.deepEqual(item('http.request.method in {|}', '"GET"').textEdit, { range: { start: 24, end: 24 }, newText: '"GET"' });
});

test('after in $: the workspace lists and the managed lists, replacing the typed name', () => {
  const list = items('ip.src in $|', { listNames: ['office', 'partners'] });
  assert.deepEqual(list.map((i) => i.label), ['$office', '$partners', '$cf.open_proxies', '$cf.anonymizer', '$cf.vpn', '$cf.malware', '$cf.botnetcc']);
  assert.deepEqual(list[0].textEdit, { range: { start: 10, end: 11 }, newText: '$office' });
  assert.equal(list[2].detail, 'managed IP list');
  assert.deepEqual(item('ip.src in $cf.v| and ssl', '$cf.vpn').textEdit, { range: { start: 10, end: 15 }, newText: '$cf.vpn' });
});

test('a name typed on the right of eq: fields of the left-hand type (dynamic comparison)', () => {
  const list = labels('http.request.uri.path ne raw.http.request.uri.p|');
  assert.deepEqual(list, ['raw.http.request.uri.path', 'raw.http.request.uri.path.extension']);
  assert.ok(!labels('http.request.uri.path ne cf.bot|').includes('cf.bot_management.score'));
  assert.ok(labels('cf.waf.score lt cf.waf.score.|').includes('cf.waf.score.sqli'));
});

test('array elements use the array field\'s values', () => {
  assert.equal(labels('any(cf.llm.prompt.pii_categories[*] eq |')[0], '"BANK_ACCOUNT"');
  assert.equal(labels('cf.waf.content_scan.obj_results[0] eq |')[3], '"not scanned"');
});

// ----- map keys -------------------------------------------------------------------------

test('inside http.request.headers["…"]: sample keys (lower-cased) first, then common request headers', () => {
  const ctx = { sampleKeys: { 'http.request.headers': ['X-Custom-Token', 'user-agent'] } };
  const list = items('http.request.headers["|', ctx);
  const names = list.map((i) => i.label);
  assert.deepEqual(names.slice(0, 3), ['"x-custom-token"', '"user-agent"', '"referer"']);
  for (const h of ['user-agent', 'referer', 'content-type', 'accept', 'accept-language', 'cookie', 'authorization', 'x-forwarded-for', 'host', 'origin', 'x-requested-with']) {
    assert.ok(names.includes(`"${h}"`), h);
  }
  assert.equal(names.length, new Set(names).size);
  assert.equal(list[0].kind, CompletionItemKind.Property);
  assert.equal(list[0].detail, 'key seen in samples');
  assert.equal(list[2].detail, 'common header');
  assert.deepEqual(list[0].textEdit, { range: { start: 21, end: 22 }, newText: '"x-custom-token"' });
  // closed string: the whole string is replaced
  assert.deepEqual(item('http.request.headers["us|"][0] eq "x"', '"user-agent"').textEdit, { range: { start: 21, end: 25 }, newText: '"user-agent"' });
  // without any sample: the common headers
  assert.deepEqual(labels('http.request.headers["|').slice(0, COMMON_REQUEST_HEADERS.length), COMMON_REQUEST_HEADERS.map((h) => `"${h}"`));
});

test('right after `[`: quoted keys and `*` for a map, `0` and `*` for an array', () => {
  const list = items('http.request.headers[|]');
  assert.equal(list[0].label, '"user-agent"');
  assert.deepEqual(list[0].textEdit, { range: { start: 21, end: 21 }, newText: '"user-agent"' });
  assert.equal(list[list.length - 1].label, '*');
  assert.deepEqual(labels('http.request.uri.args.names[|]'), ['0', '*']);
});

test('other maps: only the keys seen in samples', () => {
  assert.deepEqual(labels('http.request.uri.args["|', { sampleKeys: { 'http.request.uri.args': ['id', 'page'] } }), ['"id"', '"page"']);
  assert.deepEqual(labels('http.request.uri.args["|'), []);
  assert.deepEqual(labels('http.request.cookies["|', { sampleKeys: { 'http.request.cookies': ['Session'] } }), ['"Session"']);
  assert.ok(labels('http.response.headers["|').includes('"set-cookie"'));
});

test('has_key and has_value suggest keys and values for their second argument', () => {
  assert.equal(labels('has_key(http.request.headers, "|')[0], '"user-agent"');
  assert.equal(labels('has_value(cf.llm.prompt.pii_categories, "|')[0], '"BANK_ACCOUNT"');
});

// ----- function arguments ---------------------------------------------------------------

test('in a function argument: fields of a fitting type first, no keywords', () => {
  const list = labels('lower(|');
  assert.equal(list[0], 'http.cookie');
  assert.ok(!list.includes('not') && !list.includes('any('));
  assert.ok(list.indexOf('ip.src') > list.indexOf('cf.ray_id'), 'an Ip field is not a fit for lower');
  const len = labels('len(|');
  assert.ok(len.indexOf('http.request.headers.names') < len.indexOf('ip.src'));
});

test('in any(…): maps and arrays first, keywords available', () => {
  const list = labels('any(|');
  assert.equal(list[0], 'http.request.uri.args');
  assert.ok(list.includes('not') && list.includes('('));
  assert.ok(list.indexOf('http.host') > list.indexOf('http.request.headers.names'));
});

test('a literal-only parameter gets no fields; flags get their letters', () => {
  assert.deepEqual(labels('starts_with(http.host, |'), []);
  assert.deepEqual(labels('url_decode(http.request.uri.path, "|'), ['"r"', '"u"', '"ur"']);
  assert.deepEqual(labels('url_decode(http.request.uri.path, |'), ['"r"', '"u"', '"ur"']);
  assert.deepEqual(labels('wildcard_replace(http.request.uri.path, "/a/*", "/b/${1}", "|'), ['"s"']);
});

// ----- nothing inside other strings -----------------------------------------------------

test('nothing inside a string literal other than values and keys', () => {
  for (const fixture of [
    'http.host eq "exa|',
    'http.host contains "x|"',
    'http.request.method matches "G|',
    'http.request.method matches r"G|',
    'http.host wildcard "*.exam|ple.com"',
    'starts_with(http.host, "/a|")',
    'lower("a|',
    'http.request.uri.path in {"/a|',
    'http.request.method eq r#"G|"#',
  ]) {
    assert.deepEqual(labels(fixture), [], fixture);
  }
});

test('robust: every cursor position of assorted (partly invalid) expressions', () => {
  const texts = [
    'http.request.method eq "GET" and not ip.src in {192.0.2.0/24 2001:db8::/32} or any(lower(http.request.headers.names[*])[*] contains "x")',
    'http.host matches r#"^a"b$"# && cf.bot_management.score lt 30 || ip.src in $cf.open_proxies',
    'len(http.request.headers["a,b"][0]) ge 3 xor (ssl and "unterminated',
    'http.request.uri.args["x"][*] strict wildcard "a*" ) ) ] } , , eq eq',
    'not not ! ( ( any( all( lower( concat( "a", ',
    '{ [ $ $x. "\\" r#" \t ~ & && ^^ 12:34:56 fe80::1 0x1F -10..-2',
    '',
  ];
  for (const text of texts) {
    for (let offset = 0; offset <= text.length; offset++) {
      const list = complete(text, offset, { ...base, listNames: ['a'], sampleKeys: { 'http.request.headers': ['x'] } });
      for (const i of list) {
        const r = i.textEdit!.range;
        assert.ok(r.start <= offset && offset <= r.end && r.end <= text.length, `${JSON.stringify(text)} @${offset}: ${i.label}`);
      }
    }
  }
});

test("a rate limiting rule's counting expression ranks the response fields as available; its expression ranks them last", () => {
  const ctx = { phase: 'http_ratelimit' as const };
  const rank = (c: Partial<ExpressionContext>) => item('http.response.|', 'http.response.code', c).sortText!;
  assert.ok(rank({ ...ctx, countingExpression: true }) < rank(ctx), `${rank({ ...ctx, countingExpression: true })} vs ${rank(ctx)}`);
  assert.equal(rank({ ...ctx, countingExpression: true }), rank({ phase: 'http_response_firewall_managed' }));
});
