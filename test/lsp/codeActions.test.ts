// Code actions over the wire: each quick fix and refactoring is applied to the
// document and the resulting text asserted exactly, in .cfrule and in ruleset JSON
// (edits mapped through escapes, new text JSON-escaped).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, test } from 'node:test';
import type { CodeAction, Range } from 'vscode-languageserver-protocol';
import { applyWorkspaceEdit, fixtureUri, FIXTURES, LspClient, positionAt } from './client';

let client: LspClient;
before(async () => {
  client = await LspClient.start();
});
after(async () => {
  await client?.close();
});

let n = 0;

/** Opens `text`, asks for actions on [start, end) (offsets; default: the whole text). */
async function actions(text: string, opts: { languageId?: string; uri?: string; start?: number; end?: number; only?: string[] } = {}): Promise<{ uri: string; list: CodeAction[] }> {
  const languageId = opts.languageId ?? 'rulesmith-expression';
  const uri = opts.uri ?? `file:///ca/${++n}.${languageId === 'json' ? 'ruleset.json' : 'cfrule'}`;
  await client.open(uri, languageId, text);
  const range: Range = { start: positionAt(text, opts.start ?? 0), end: positionAt(text, opts.end ?? text.length) };
  const list = await client.request<CodeAction[]>('textDocument/codeAction', { textDocument: { uri }, range, context: { diagnostics: [], only: opts.only } });
  return { uri, list };
}

async function apply(text: string, title: string, opts: Parameters<typeof actions>[1] = {}): Promise<string> {
  const { uri, list } = await actions(text, opts);
  const action = list.find((a) => a.title === title);
  assert.ok(action, `no action "${title}" among ${JSON.stringify(list.map((a) => a.title))}`);
  return applyWorkspaceEdit(text, action.edit, uri);
}

test('unknown field: "Change to" each suggestion, preferred when there is one', async () => {
  const text = readFileSync(`${FIXTURES}unknown-field.cfrule`, 'utf8');
  const { list } = await actions(text, { uri: fixtureUri('unknown-field.cfrule'), only: ['quickfix'] });
  assert.deepEqual(list.map((a) => [a.title, a.kind, a.isPreferred, a.diagnostics?.[0]?.code]), [['Change to `http.request.uri.path`', 'quickfix', true, 'unknown-identifier']]);
  assert.equal(applyWorkspaceEdit(text, list[0].edit, fixtureUri('unknown-field.cfrule')), 'http.request.uri.path eq "/admin"\n');
});

test('a CIDR outside a set: `==` becomes `in {…}`, `!=` becomes `not … in {…}`', async () => {
  assert.equal(await apply('ip.src == 192.0.2.0/24 and ssl', 'Change to `ip.src in {192.0.2.0/24}`'), 'ip.src in {192.0.2.0/24} and ssl');
  assert.equal(await apply('ssl and ip.src ne 2001:db8::/32', 'Change to `not ip.src in {2001:db8::/32}`'), 'ssl and not ip.src in {2001:db8::/32}');
});

test('tabs: replaced by spaces outside strings, in the whole expression', async () => {
  assert.equal(await apply('http.host\teq "a\tb"\tand\tssl', 'Replace tabs with spaces', { start: 9, end: 10 }), 'http.host eq "a\tb" and ssl');
});

test('deprecated field -> replacement; literals that never match -> their replacement', async () => {
  assert.equal(await apply('ip.geoip.country eq "US"', 'Replace with `ip.src.country`'), 'ip.src.country eq "US"');
  assert.equal(await apply('http.request.method eq "get"', 'Change to `"GET"`'), 'http.request.method eq "GET"');
  assert.equal(await apply('http.request.headers["Content-Type"][0] eq "x"', 'Change to `"content-type"`'), 'http.request.headers["content-type"][0] eq "x"');
  assert.equal(await apply('http.request.uri.path eq "admin"', 'Change to `"/admin"`'), 'http.request.uri.path eq "/admin"');
  assert.equal(await apply('http.request.uri.path.extension eq ".PHP"', 'Change to `"php"`'), 'http.request.uri.path.extension eq "php"');
});

test('refactor: convert operators between English and C-like notation, keeping the layout', async () => {
  const english = 'http.host eq "a"\n  and not (tcp.x ne 1 or ip.src.asnum in {1 2})\n  xor http.request.uri.path matches "^/x" and cf.edge.server_port ge 8000';
  const clike = await apply(english, 'Convert operators to C-like notation (&&, ==, !)', { only: ['refactor'] });
  assert.equal(clike, 'http.host == "a"\n  && ! (tcp.x != 1 || ip.src.asnum in {1 2})\n  ^^ http.request.uri.path ~ "^/x" && cf.edge.server_port >= 8000');
  assert.equal(await apply(clike, 'Convert operators to English notation (and, eq, not)'), english);
  // Words get the spaces they need.
  assert.equal(await apply('http.host=="a"&&!ssl||(cf.edge.server_port>=1)', 'Convert operators to English notation (and, eq, not)'), 'http.host eq "a" and not ssl or (cf.edge.server_port ge 1)');
});

test('refactor: wrap a bare [*] comparison in any(…) / all(…)', async () => {
  const root = 'http.request.headers.names[*] eq "x-debug"';
  assert.equal(await apply(root, 'Wrap in any(…)'), 'any(http.request.headers.names[*] eq "x-debug")');
  assert.equal(await apply(root, 'Wrap in all(…)'), 'all(http.request.headers.names[*] eq "x-debug")');
  assert.equal(await apply('ssl and http.request.headers.names[*] eq "x"', 'Wrap in any(…)'), 'ssl and any(http.request.headers.names[*] eq "x")');
  const first = 'http.request.headers.names[*] eq "x" or ssl';
  const { list } = await actions(first);
  assert.deepEqual(list.filter((a) => a.title.startsWith('Wrap')).map((a) => a.title), ['Wrap in any(…)', 'Wrap in all(…)']);
  assert.equal(await apply(first, 'Wrap in any(…)'), 'any(http.request.headers.names[*] eq "x") or ssl');
});

test('only the diagnostics in the requested range give quick fixes', async () => {
  const text = 'http.hots eq "a" and ip.geoip.country eq "US"';
  const { list } = await actions(text, { start: 25, end: 25, only: ['quickfix'] });
  assert.deepEqual(list.map((a) => a.title), ['Replace with `ip.src.country`']);
});

test('ruleset JSON: edits are mapped through escapes and JSON-escaped', async () => {
  const text = readFileSync(`${FIXTURES}escaped.ruleset.json`, 'utf8');
  const at = text.indexOf('http.hots');
  const fixed = await apply(text, 'Change to `http.host`', { languageId: 'json', start: at, end: at });
  assert.equal(fixed, text.replace('http.hots', 'http.host'));
  const cidrAt = text.indexOf('192.0.2.0/24');
  const cidr = await apply(text, 'Change to `ip.src in {192.0.2.0/24}`', { languageId: 'json', start: cidrAt, end: cidrAt });
  assert.equal(cidr, text.replace('ip.src == 192.0.2.0/24', 'ip.src in {192.0.2.0/24}'));

  const methods = '{"rules": [{"expression": "http.request.method eq \\"g\\u0065t\\""}]}';
  const m = await apply(methods, 'Change to `"GET"`', { languageId: 'json' });
  assert.equal(m, '{"rules": [{"expression": "http.request.method eq \\"GET\\""}]}');
  const wrapped = await apply('{"rules": [{"expression": "http.request.headers.names[*] eq \\"\\u00e9\\""}]}', 'Wrap in any(…)', { languageId: 'json' });
  assert.equal(wrapped, '{"rules": [{"expression": "any(http.request.headers.names[*] eq \\"é\\")"}]}');
});

test('a mistyped operator -> the operator meant, in the notation written', async () => {
  assert.equal(await apply('http.host equals "a"', 'Change to `eq`'), 'http.host eq "a"');
  assert.equal(await apply('http.host === "a"', 'Change to `==`'), 'http.host == "a"');
});
