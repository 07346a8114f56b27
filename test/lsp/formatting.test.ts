// Formatting over the wire: .cfrule (notation and width from the document's settings),
// ruleset JSON (only expression strings change, JSON-escaped; range formatting touches
// only the expressions in the range).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { TextEdit } from 'vscode-languageserver-protocol';
import { applyEdits, LspClient } from './client';

const settingsByUri = new Map<string, Record<string, unknown>>();
let client: LspClient;
const options = { tabSize: 2, insertSpaces: true };

before(async () => {
  client = await LspClient.start({ settings: (uri) => settingsByUri.get(uri ?? '') ?? {} });
});
after(async () => {
  await client?.close();
});

async function format(uri: string, languageId: string, text: string, settings: Record<string, unknown> = {}): Promise<string> {
  settingsByUri.set(uri, settings);
  await client.open(uri, languageId, text);
  const edits = await client.request<TextEdit[]>('textDocument/formatting', { textDocument: { uri }, options });
  return applyEdits(text, edits);
}

test('.cfrule: spacing normalised, operators in the notation of the settings, final newline kept', async () => {
  const text = 'http.host  eq "example.com"   &&  !ip.src in {192.0.2.0/24  198.51.100.0/24}\n';
  assert.equal(await format('file:///f/english.cfrule', 'rulesmith-expression', text, { format: { notation: 'english' } }), 'http.host eq "example.com" and not ip.src in {192.0.2.0/24 198.51.100.0/24}\n');
  assert.equal(await format('file:///f/preserve.cfrule', 'rulesmith-expression', text), 'http.host eq "example.com" && !ip.src in {192.0.2.0/24 198.51.100.0/24}\n');
});

test('.cfrule: the width setting breaks long expressions', async () => {
  const text = '(http.host eq "example.com" or http.host eq "www.example.com") and (http.request.uri.path contains "/admin" or http.request.uri.path contains "/login") and ip.src in {192.0.2.0/24 198.51.100.0/24 203.0.113.0/24}';
  assert.equal(
    await format('file:///f/width.cfrule', 'rulesmith-expression', text, { format: { width: 60 } }),
    [
      '(',
      '  http.host eq "example.com"',
      '  or http.host eq "www.example.com"',
      ')',
      'and (',
      '  http.request.uri.path contains "/admin"',
      '  or http.request.uri.path contains "/login"',
      ')',
      'and ip.src in {192.0.2.0/24 198.51.100.0/24 203.0.113.0/24}',
    ].join('\n'),
  );
});

test('.cfrule: no edits when already formatted or when the text does not parse', async () => {
  for (const [name, text] of [['clean', 'http.host eq "a"\n'], ['broken', 'http.host eq (']]) {
    const uri = `file:///f/${name}.cfrule`;
    await client.open(uri, 'rulesmith-expression', text);
    assert.deepEqual(await client.request('textDocument/formatting', { textDocument: { uri }, options }), []);
  }
});

const ruleset = `{
  "phase": "http_request_firewall_custom",
  "rules": [
    { "ref": "one", "expression": "http.request.uri.path eq \\"/caf\\u00e9\\"  and  ssl", "action": "block" },
    {
      "ref": "two",
      "expression": "http.host   eq \\"a\\\\\\\\b\\" ||   ip.src in {192.0.2.0/24}",
      "action": "log"
    }
  ]
}
`;

test('ruleset JSON: each expression string is replaced by its escaped formatted text; the JSON is left as it was', async () => {
  const out = await format('file:///f/all.ruleset.json', 'json', ruleset, { format: { notation: 'english' } });
  assert.equal(
    out,
    ruleset
      .replace('http.request.uri.path eq \\"/caf\\u00e9\\"  and  ssl', 'http.request.uri.path eq \\"/café\\" and ssl')
      .replace('http.host   eq \\"a\\\\\\\\b\\" ||   ip.src in {192.0.2.0/24}', 'http.host eq \\"a\\\\\\\\b\\" or ip.src in {192.0.2.0/24}'),
  );
  JSON.parse(out);
});

test('ruleset JSON: range formatting changes only the expressions in the range; line breaks become \\n', async () => {
  const uri = 'file:///f/range.ruleset.json';
  settingsByUri.set(uri, { format: { width: 30 } });
  await client.open(uri, 'json', ruleset);
  const line = ruleset.split('\n').findIndex((l) => l.includes('"ref": "two"'));
  const edits = await client.request<TextEdit[]>('textDocument/rangeFormatting', {
    textDocument: { uri },
    range: { start: { line, character: 0 }, end: { line: line + 2, character: 0 } },
    options,
  });
  assert.equal(edits.length, 1);
  const out = applyEdits(ruleset, edits);
  const parsed = JSON.parse(out) as { rules: { expression: string }[] };
  assert.equal(parsed.rules[0].expression, 'http.request.uri.path eq "/café"  and  ssl');
  assert.equal(parsed.rules[1].expression, 'http.host eq "a\\\\b"\n|| ip.src in {192.0.2.0/24}');
});
