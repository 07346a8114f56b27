// Hover over the wire: field and operator docs in .cfrule, and inside an escaped JSON
// string with the hover range mapped back to the document.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Hover, MarkupContent } from 'vscode-languageserver-protocol';
import { caret, LspClient, positionAt, rangeText } from './client';

let client: LspClient;
before(async () => {
  client = await LspClient.start();
});
after(async () => {
  await client?.close();
});

let n = 0;
async function hover(marked: string, languageId = 'rulesmith-expression'): Promise<{ text: string; hover: Hover | null }> {
  const { text, offset } = caret(marked);
  const uri = `file:///h/${++n}.${languageId === 'json' ? 'ruleset.json' : 'cfrule'}`;
  await client.open(uri, languageId, text);
  return { text, hover: await client.request<Hover | null>('textDocument/hover', { textDocument: { uri }, position: positionAt(text, offset) }) };
}

test('a field: its type and doc, over the field name', async () => {
  const { text, hover: h } = await hover('http.h|ost eq "a"');
  assert.ok(h);
  assert.match((h.contents as MarkupContent).value, /`http\.host`/);
  assert.match((h.contents as MarkupContent).value, /Bytes/);
  assert.equal(rangeText(text, h.range!), 'http.host');
});

test('an operator: its meaning', async () => {
  const { text, hover: h } = await hover('http.host cont|ains "a"');
  assert.ok(h);
  assert.equal(rangeText(text, h.range!), 'contains');
});

test('inside JSON after escapes: the range covers the field in the document', async () => {
  const { text, hover: h } = await hover('{"rules": [{"expression": "http.host eq \\"\\u00e9\\\\\\\\\\" and ip.src.cou|ntry eq \\"FR\\""}]}', 'json');
  assert.ok(h);
  assert.match((h.contents as MarkupContent).value, /ip\.src\.country/);
  assert.equal(rangeText(text, h.range!), 'ip.src.country');
});

// A rule whose ratelimit comes before its expression: both strings are found under the cursor,
// and the counting expression may read the answer (the rule's expression may not).
test("a rate limiting rule's counting expression and expression, in any key order", async () => {
  const doc = (inCounting: boolean) =>
    `{"phase": "http_ratelimit", "rules": [{"ratelimit": {"characteristics": ["ip.src"], "period": 60, "requests_per_period": 5, "counting_expression": "http.response.${inCounting ? 'co|de' : 'code'} eq 401"}, "expression": "http.response.${inCounting ? 'code' : 'co|de'} eq 401", "action": "block"}]}`;
  const counting = await hover(doc(true), 'json');
  assert.ok(counting.hover);
  assert.doesNotMatch((counting.hover.contents as MarkupContent).value, /not available in `http_ratelimit`/);
  const own = await hover(doc(false), 'json');
  assert.ok(own.hover);
  assert.equal(rangeText(own.text, own.hover.range!), 'http.response.code');
  assert.match((own.hover.contents as MarkupContent).value, /not available in `http_ratelimit`/);
});

test('nothing to say outside expressions', async () => {
  const { hover: h } = await hover('{"rules": [{"ac|tion": "block", "expression": "ssl"}]}', 'json');
  assert.equal(h, null);
});
