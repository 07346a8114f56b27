// Problems of files that are not open: a closed file keeps its saved text's problems
// (re-checked from disk, so unsaved edits that were discarded do not linger), and
// rulesmith/checkFiles publishes every file it is sent, counting open ones as the editor has them.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, test } from 'node:test';
import { LspClient } from './client';

let client: LspClient;
let dir: string;
before(async () => {
  client = await LspClient.start();
  dir = mkdtempSync(join(tmpdir(), 'rulesmith-wscheck-'));
});
after(async () => {
  await client?.close();
  rmSync(dir, { recursive: true, force: true });
});

function file(name: string, text: string): string {
  writeFileSync(join(dir, name), text);
  return pathToFileURL(join(dir, name)).href;
}

const summary = (ds: readonly { message: unknown; range: { start: { character: number } } }[]) => ds.map((d) => [d.range.start.character, String(d.message).split('\n')[0]]);

test('a closed file keeps the problems of its saved text', async () => {
  const uri = file('saved.cfrule', 'http.hots eq "a"');
  // The editor had unsaved edits that break something else; they are discarded on close.
  await client.open(uri, 'rulesmith-expression', 'http.host eq "\\x"');
  assert.deepEqual(summary((await client.diagnostics(uri, { version: 1 })).diagnostics), [[16, 'expected 2 characters, but found 1']]);
  const mark = client.mark(uri);
  await client.closeDocument(uri);
  const p = await client.diagnostics(uri, { after: mark });
  assert.deepEqual(summary(p.diagnostics), [[0, 'unknown identifier']]);
  assert.equal(p.diagnostics[0].message, 'unknown identifier\n`http.hots` is not a field: did you mean `http.host`?');
});

test('a closed file without problems is cleared', async () => {
  const uri = file('clean.cfrule', 'http.host eq "a"');
  await client.open(uri, 'rulesmith-expression', 'http.hots eq "a"');
  await client.diagnostics(uri, { version: 1 });
  const mark = client.mark(uri);
  await client.closeDocument(uri);
  assert.deepEqual((await client.diagnostics(uri, { after: mark })).diagnostics, []);
});

test('rulesmith/checkFiles: every file into Problems, counts of errors, warnings and files with problems', async () => {
  const bad = file('bad.cfrule', 'lower(http.host) eq "Example.COM" and ip.src eq 10.0.0.0/8');
  const ruleset = file('zone.ruleset.json', JSON.stringify({ kind: 'zone', phase: 'http_request_firewall_custom', rules: [{ action: 'block', expression: 'http.request.method eq "get"' }] }, null, 2));
  const clean = file('ok.cfrule', 'http.host eq "example.com"');
  const other = file('notes.json', '{"expression": "bogus"}');
  const open = file('open.cfrule', 'ssl');
  await client.open(open, 'rulesmith-expression', 'foo eq 1');
  await client.diagnostics(open, { version: 1 });
  const openMark = client.mark(open);
  const result = await client.request('rulesmith/checkFiles', {
    files: [
      { uri: bad, text: 'lower(http.host) eq "Example.COM" and ip.src eq 10.0.0.0/8' },
      { uri: ruleset, text: JSON.stringify({ kind: 'zone', phase: 'http_request_firewall_custom', rules: [{ action: 'block', expression: 'http.request.method eq "get"' }] }, null, 2) },
      { uri: clean, text: 'http.host eq "example.com"' },
      { uri: other, languageId: 'json', text: '{"expression": "bogus"}' },
      // Open: counted with the editor's text ("foo eq 1"), not what was sent.
      { uri: open, text: 'ssl' },
    ],
  });
  assert.deepEqual(result, { checked: 4, errors: 2, warnings: 2, withProblems: 3 });
  assert.deepEqual(summary((await client.diagnostics(bad)).diagnostics), [
    [20, '"Example.COM" can never match: `lower(…)` is lower case'],
    [48, "couldn't parse address in network: invalid IP address syntax"],
  ]);
  assert.deepEqual(
    (await client.diagnostics(ruleset)).diagnostics.map((d) => [d.code, String(d.message).split('\n')[0]]),
    [
      ['missing-ref', 'the rule has no "ref"'],
      ['method-not-uppercase', '"get" can never match: methods are upper case'],
    ],
  );
  // Nothing published for a clean file never published before, nor for a JSON file that is not a ruleset.
  assert.equal(client.publishes(clean).length, 0);
  assert.equal(client.publishes(other).length, 0);
  // The open file's diagnostics are the editor's run, not re-published.
  assert.equal(client.mark(open), openMark);
});
