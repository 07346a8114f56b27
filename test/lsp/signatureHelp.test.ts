// Signature help over the wire, in .cfrule and inside a JSON expression string.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { SignatureHelp } from 'vscode-languageserver-protocol';
import { caret, LspClient, positionAt } from './client';

let client: LspClient;
before(async () => {
  client = await LspClient.start();
});
after(async () => {
  await client?.close();
});

let n = 0;
async function help(marked: string, languageId = 'rulesmith-expression'): Promise<SignatureHelp | null> {
  const { text, offset } = caret(marked);
  const uri = `file:///s/${++n}.${languageId === 'json' ? 'ruleset.json' : 'cfrule'}`;
  await client.open(uri, languageId, text);
  return client.request<SignatureHelp | null>('textDocument/signatureHelp', { textDocument: { uri }, position: positionAt(text, offset) });
}

test('the second argument of starts_with', async () => {
  const h = await help('starts_with(http.host, |');
  assert.ok(h);
  assert.equal(h.signatures[0].label, 'starts_with(source: Bytes, prefix: Bytes) -> Bool');
  assert.equal(h.activeParameter, 1);
});

test('inside a JSON string, after escapes', async () => {
  const h = await help('{"rules": [{"expression": "http.host eq \\"\\u00e9\\" and lower(|"}]}', 'json');
  assert.ok(h);
  assert.match(h.signatures[0].label, /^lower\(/);
  assert.equal(h.activeParameter, 0);
});

test('no help outside a call', async () => {
  assert.equal(await help('http.host eq |"a"'), null);
});
