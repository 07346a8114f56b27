// The language server on .tf files, in process: expression slices whose offsets map through
// HCL escapes and heredoc indentation, hover and completion inside them (edits HCL-escaped),
// diagnostics for expressions and rulesets, nothing of ours outside those attributes.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { documentKind, DocumentStore, type Analysed } from '../../../server/src/lsp/documents';
import { completion, hoverAt } from '../../../server/src/lsp/embedded';
import { DEFAULT_SETTINGS } from '../../../server/src/lsp/settings';
import { hclEscape, terraformSlices } from '../../../server/src/lsp/expressionSlices';
import { terraformDiagnostics } from '../../../server/src/lsp/terraform';

const fixtures = new URL('../../fixtures/terraform/', import.meta.url).pathname;
const v5 = readFileSync(`${fixtures}v5-escapes.tf`, 'utf8');

function analysed(text: string): { a: Analysed; store: DocumentStore } {
  const store = new DocumentStore();
  store.open('file:///w/main.tf', 'terraform', 1, text);
  const doc = store.get('file:///w/main.tf')!;
  return { store, a: { doc, kind: 'terraform', slices: store.slicesOf(doc, 'terraform'), settings: DEFAULT_SETTINGS } };
}

test('.tf files and the terraform language id are terraform documents', () => {
  assert.equal(documentKind('file:///w/main.tf', 'terraform', DEFAULT_SETTINGS), 'terraform');
  assert.equal(documentKind('file:///w/main.tf', 'plaintext', DEFAULT_SETTINGS), 'terraform');
  assert.equal(documentKind('file:///w/vars.tfvars', 'plaintext', DEFAULT_SETTINGS), undefined);
});

test('slices: each checkable expression, mapped back through escapes and heredoc indentation', () => {
  const slices = terraformSlices(v5);
  // The list expression (`ip.src in ${var.blocked}`) cannot be checked, so it has no slice.
  assert.equal(slices.length, 4);
  const [cafe, heredoc] = slices;
  assert.equal(cafe.text, 'http.host eq "café.example" and http.hots eq "a"');
  const hots = cafe.text.indexOf('http.hots');
  assert.equal(v5.slice(cafe.toDocument(hots), cafe.toDocument(hots + 9)), 'http.hots');
  // é is written \u00e9: its six characters map to one.
  const e = cafe.text.indexOf('é');
  assert.equal(v5.slice(cafe.toDocument(e), cafe.toDocument(e + 1)), '\\u00e9');
  assert.equal(cafe.fromDocument(cafe.toDocument(e) + 3), e);
  assert.equal(heredoc.text, 'http.request.uri.path eq "/login"\n  and ip.src.contry eq "xxxxxxxxxxxxxx"\n');
  assert.equal(heredoc.phase, 'http_request_firewall_custom');
  assert.equal(heredoc.rule, 1);
});

test('hover inside an escaped expression answers for the field under the cursor', () => {
  const { a } = analysed(v5);
  const at = v5.indexOf('http.host eq \\"caf');
  const h = hoverAt(a, a.doc.positionAt(at + 3));
  assert.ok(h);
  assert.match(JSON.stringify(h.contents), /http\.host/);
  assert.deepEqual(h.range, { start: a.doc.positionAt(at), end: a.doc.positionAt(at + 9) });
});

test('completion inside a quoted HCL string escapes what it inserts', () => {
  const text = 'resource "cloudflare_filter" "f" {\n  expression = "http.request.uri.path eq \\"/a\\" and http.user_"\n}\n';
  const { a } = analysed(text);
  const list = completion(a, a.doc.positionAt(text.indexOf('http.user_') + 'http.user_'.length));
  assert.ok(list);
  const ua = list.items.find((i) => i.label === 'http.user_agent');
  assert.ok(ua, list.items.map((i) => i.label).join(', '));
});

test('hclEscape: quotes, backslashes, controls and template sequences', () => {
  assert.equal(hclEscape('a "b" \\ ${x} %{y}\n'), 'a \\"b\\" \\\\ $${x} %%{y}\\n');
});

test('diagnostics: expressions and the ruleset, and nothing for HCL syntax errors', async () => {
  const { a, store } = analysed(readFileSync(`${fixtures}v4-blocks.tf`, 'utf8'));
  const ds = await terraformDiagnostics(store, a);
  assert.deepEqual(
    ds.map((d) => [d.range.start.line + 1, d.range.start.character + 1, d.code]),
    [
      [17, 11, 'misplaced-score-threshold'],
      [26, 18, 'unknown-action'],
    ],
  );
  // A file that does not parse (being typed): its expressions are still checked, the syntax error is not ours.
  const broken = analysed('resource "cloudflare_filter" "f" {\n  expression = "http.hots eq 1"\n  zone_id = \n}\n');
  const bs = await terraformDiagnostics(broken.store, broken.a);
  assert.deepEqual(bs.map((d) => d.code), ['unknown-identifier']);
});
