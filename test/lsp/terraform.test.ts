// The built language server on .tf files, over the wire: diagnostics at the exact place
// (through HCL escapes), hover inside an expression, a quick fix written back escaped,
// and no formatting, folding or semantic tokens (HashiCorp's extension's).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, test } from 'node:test';
import type { CodeAction, Hover } from 'vscode-languageserver-protocol';
import { applyWorkspaceEdit, LspClient, positionAt, rangeText, ROOT } from './client';

const V5 = readFileSync(`${ROOT}test/fixtures/terraform/v5-escapes.tf`, 'utf8');
let client: LspClient;

before(async () => {
  client = await LspClient.start();
});
after(async () => {
  await client?.close();
});

test('diagnostics: expressions through escapes and heredocs, interpolations as information', async () => {
  const uri = 'file:///work/v5.tf';
  await client.open(uri, 'terraform', V5);
  const p = await client.diagnostics(uri, { version: 1 });
  assert.deepEqual(
    p.diagnostics.map((d) => [d.code, rangeText(V5, d.range)]),
    [
      ['unknown-identifier', 'http.hots'],
      ['unknown-identifier', 'ip.src.contry'],
      ['interpolated-expression', '${var.country}'],
      ['interpolated-expression', '${var.blocked}'],
      ['method-not-uppercase', '\\"get\\"'],
      ['invalid-ip', '192.0.2.300'],
    ],
  );
});

test('hover and a quick fix inside an escaped HCL string', async () => {
  const uri = 'file:///work/fix.tf';
  const text = 'resource "cloudflare_filter" "f" {\n  expression = "http.user_agent contains \\"caf\\u00e9\\" and http.hots eq \\"a\\""\n}\n';
  await client.open(uri, 'terraform', text);
  const p = await client.diagnostics(uri, { version: 1 });
  const d = p.diagnostics.find((x) => x.code === 'unknown-identifier');
  assert.ok(d);
  const h = await client.request<Hover | null>('textDocument/hover', { textDocument: { uri }, position: positionAt(text, text.indexOf('user_agent')) });
  assert.ok(h?.range);
  assert.equal(rangeText(text, h.range), 'http.user_agent');
  const actions = await client.request<CodeAction[]>('textDocument/codeAction', { textDocument: { uri }, range: d.range, context: { diagnostics: [d] } });
  const fix = actions.find((a) => a.title.includes('http.host'));
  assert.ok(fix, actions.map((a) => a.title).join(' | '));
  assert.equal(applyWorkspaceEdit(text, fix.edit, uri), text.replace('http.hots', 'http.host'));
});

test('formatting, folding and semantic tokens are left to the Terraform extension', async () => {
  const uri = 'file:///work/v5.tf';
  assert.deepEqual(await client.request('textDocument/formatting', { textDocument: { uri }, options: { tabSize: 2, insertSpaces: true } }), []);
  assert.deepEqual(await client.request('textDocument/foldingRange', { textDocument: { uri } }), []);
  assert.deepEqual(await client.request('textDocument/semanticTokens/full', { textDocument: { uri } }), { data: [] });
});
