// Completion over the wire, in .cfrule and inside ruleset JSON strings (ranges mapped,
// inserted text and filter text JSON-escaped), and nothing outside expressions.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { CompletionItem, CompletionList, TextEdit } from 'vscode-languageserver-protocol';
import { applyEdits, caret, LspClient, positionAt } from './client';

let client: LspClient;
before(async () => {
  client = await LspClient.start();
});
after(async () => {
  await client?.close();
});

let n = 0;
async function complete(marked: string, languageId = 'rulesmith-expression'): Promise<{ text: string; items: CompletionItem[] | null }> {
  const { text, offset } = caret(marked);
  const uri = `file:///c/${++n}.${languageId === 'json' ? 'ruleset.json' : 'cfrule'}`;
  await client.open(uri, languageId, text);
  const r = await client.request<CompletionList | null>('textDocument/completion', { textDocument: { uri }, position: positionAt(text, offset) });
  return { text, items: r?.items ?? null };
}

function item(items: CompletionItem[] | null, label: string): CompletionItem {
  const found = items?.find((i) => i.label === label);
  assert.ok(found, `no item ${label} among ${JSON.stringify(items?.slice(0, 20).map((i) => i.label))}`);
  return found;
}

test('a field name being typed in a .cfrule', async () => {
  const { text, items } = await complete('http.request.meth|');
  const method = item(items, 'http.request.method');
  assert.deepEqual((method.textEdit as TextEdit).range, { start: { line: 0, character: 0 }, end: { line: 0, character: 17 } });
  assert.equal(applyEdits(text, [method.textEdit as TextEdit]), 'http.request.method');
});

test('operators for the left-hand type after a field', async () => {
  const { items } = await complete('ip.src |');
  const labels = items!.map((i) => i.label);
  assert.ok(labels.includes('in') && labels.includes('eq'));
  assert.ok(!labels.includes('contains'), 'contains is not offered for an IP');
});

test('inside a JSON string: the value replaces the escaped string, JSON-escaped', async () => {
  const { text, items } = await complete('{"rules": [{"expression": "http.host eq \\"caf\\u00e9\\" and http.request.method eq \\"G|"}]}', 'json');
  const get = item(items, '"GET"');
  const edit = get.textEdit as TextEdit;
  assert.equal(edit.newText, '\\"GET\\"');
  assert.equal(get.filterText, '\\"GET\\"');
  const out = applyEdits(text, [edit]);
  assert.equal(out, '{"rules": [{"expression": "http.host eq \\"caf\\u00e9\\" and http.request.method eq \\"GET\\""}]}');
  assert.equal((JSON.parse(out) as { rules: { expression: string }[] }).rules[0].expression, 'http.host eq "café" and http.request.method eq "GET"');
});

test('inside a JSON string: a function snippet keeps its placeholders', async () => {
  const { text, items } = await complete('{"rules": [{"expression": "starts_|"}]}', 'json');
  const fn = item(items, 'starts_with');
  const edit = fn.textEdit as TextEdit;
  assert.equal(edit.newText, 'starts_with(${1:source}, ${2:prefix})');
  assert.equal(applyEdits(text, [edit]), '{"rules": [{"expression": "starts_with(${1:source}, ${2:prefix})"}]}');
});

test('outside every expression of a ruleset: no answer (the JSON service answers)', async () => {
  // (Actions, categories and rule ids have their own completion: test/lsp/rulesets.test.ts.)
  const { items } = await complete('{"rules": [{"expression": "ssl", "description": "bl|"}]}', 'json');
  assert.equal(items, null);
});

test('list names and map keys used by other open documents are offered', async () => {
  await client.open('file:///c/office.ruleset.json', 'json', '{"rules": [{"expression": "ip.src in $office_network and http.request.headers[\\"x-api-key\\"][0] eq \\"k\\""}]}');
  const lists = await complete('ip.src in $|');
  item(lists.items, '$office_network');
  const keys = await complete('http.request.headers["|');
  item(keys.items, '"x-api-key"');
});
