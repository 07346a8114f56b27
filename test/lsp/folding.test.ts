// Folding ranges over the wire: groups, sets and calls spanning lines; a lexical
// fallback while the text does not parse; one-line JSON expressions do not fold.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { FoldingRange } from 'vscode-languageserver-protocol';
import { LspClient } from './client';

let client: LspClient;
before(async () => {
  client = await LspClient.start();
});
after(async () => {
  await client?.close();
});

async function folds(uri: string, languageId: string, text: string): Promise<[number, number][]> {
  await client.open(uri, languageId, text);
  const ranges = await client.request<FoldingRange[]>('textDocument/foldingRange', { textDocument: { uri } });
  return ranges.map((r) => [r.startLine, r.endLine]);
}

test('groups, sets and function calls that span lines fold, closing bracket left visible', async () => {
  const text = [
    '(', //                                             0
    '  http.host eq "example.com"', //                  1
    '  or http.host eq "www.example.com"', //           2
    ')', //                                             3
    'and ip.src in {', //                               4
    '  192.0.2.0/24', //                                5
    '  198.51.100.0/24', //                             6
    '}', //                                             7
    'and any(', //                                      8
    '  lower(http.request.headers.names[*])', //        9
    '  == "x-debug")', //                               10
    'and starts_with(http.request.uri.path, "/a")', //  11
  ].join('\n');
  assert.deepEqual(await folds('file:///fold/ok.cfrule', 'rulesmith-expression', text), [
    [0, 2],
    [4, 6],
    [8, 10],
  ]);
});

test('while the text does not parse, brackets are matched lexically (strings skipped)', async () => {
  const text = ['(', '  http.host eq ")("', '  or http.host eq', ')', 'and'].join('\n');
  assert.deepEqual(await folds('file:///fold/broken.cfrule', 'rulesmith-expression', text), [[0, 2]]);
});

test('expressions in ruleset JSON are on one line: nothing to fold', async () => {
  const text = JSON.stringify({ rules: [{ expression: '(\n  http.host eq "a"\n  or ssl\n)' }] }, null, 2);
  assert.deepEqual(await folds('file:///fold/r.ruleset.json', 'json', text), []);
});
