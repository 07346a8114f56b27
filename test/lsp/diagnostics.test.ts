// Diagnostics over the wire: exact ranges in .cfrule and inside escaped JSON strings,
// settings per document (plan, phase) and their changes, the ruleset's own phase,
// stale results dropped, JSON syntax left to VS Code, clearing on close.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { DiagnosticSeverity, DiagnosticTag } from 'vscode-languageserver-protocol';
import { fixtureUri, FIXTURES, holdSettings, LspClient, positionAt, rangeText } from './client';

const settingsByUri = new Map<string, Record<string, unknown>>();
let client: LspClient;

before(async () => {
  client = await LspClient.start({ settings: (uri) => settingsByUri.get(uri ?? '') ?? {} });
});
after(async () => {
  await client?.close();
});

test('.cfrule: an unknown field, with its exact range, code, docs link, hint and suggestions', async () => {
  const uri = fixtureUri('unknown-field.cfrule');
  const text = readFileSync(`${FIXTURES}unknown-field.cfrule`, 'utf8');
  await client.open(uri, 'rulesmith-expression', text);
  const p = await client.diagnostics(uri, { version: 1 });
  assert.equal(p.diagnostics.length, 1);
  const d = p.diagnostics[0];
  assert.deepEqual(d.range, { start: { line: 0, character: 0 }, end: { line: 0, character: 20 } });
  assert.equal(rangeText(text, d.range), 'http.request.uri.pth');
  assert.equal(d.code, 'unknown-identifier');
  assert.equal(d.source, 'rulesmith');
  assert.equal(d.severity, DiagnosticSeverity.Error);
  assert.equal(d.message, 'unknown identifier\n`http.request.uri.pth` is not a field: did you mean `http.request.uri.path`?');
  assert.equal(d.codeDescription?.href, 'https://developers.cloudflare.com/ruleset-engine/rules-language/fields/');
  assert.deepEqual(d.data, { suggestions: ['http.request.uri.path'] });
});

test('ruleset JSON: ranges are mapped through \\" \\u00e9 surrogate pairs and \\\\', async () => {
  const uri = fixtureUri('escaped.ruleset.json');
  const text = readFileSync(`${FIXTURES}escaped.ruleset.json`, 'utf8');
  await client.open(uri, 'json', text);
  const p = await client.diagnostics(uri, { version: 1 });
  const byCode = Object.fromEntries(p.diagnostics.map((d) => [d.code, d]));
  assert.deepEqual(Object.keys(byCode).sort(), ['cidr-outside-set', 'unknown-identifier']);
  const unknown = byCode['unknown-identifier'];
  const at = text.indexOf('http.hots');
  assert.deepEqual(unknown.range, { start: positionAt(text, at), end: positionAt(text, at + 'http.hots'.length) });
  assert.equal(rangeText(text, unknown.range), 'http.hots');
  const cidr = byCode['cidr-outside-set'];
  assert.equal(rangeText(text, cidr.range), '192.0.2.0/24');
  assert.match(cidr.message as string, /^couldn't parse address in network: invalid IP address syntax\n`192\.0\.2\.0\/24` is a network \(CIDR\), and a network is only allowed in a set/);
});

test('a multi-line .cfrule: ranges count UTF-16 units within the line', async () => {
  const uri = 'file:///work/multi.cfrule';
  const text = 'http.host eq "😀é"\n  and http.hots eq "x"\n';
  await client.open(uri, 'rulesmith-expression', text);
  const p = await client.diagnostics(uri, { version: 1 });
  assert.deepEqual(p.diagnostics.map((d) => [d.range, d.code]), [[{ start: { line: 1, character: 6 }, end: { line: 1, character: 15 } }, 'unknown-identifier']]);
});

test('settings are per document, and a change of settings re-checks', async () => {
  const free = 'file:///work/plan/free.cfrule';
  const ent = 'file:///work/plan/enterprise.cfrule';
  settingsByUri.set(free, { plan: 'free' });
  settingsByUri.set(ent, { plan: 'enterprise' });
  const text = 'cf.bot_management.score lt 30';
  await client.open(free, 'rulesmith-expression', text);
  await client.open(ent, 'rulesmith-expression', text);
  const f = await client.diagnostics(free, { version: 1 });
  const e = await client.diagnostics(ent, { version: 1 });
  assert.deepEqual(f.diagnostics.map((d) => [d.code, d.severity]), [['plan-required', DiagnosticSeverity.Warning]]);
  assert.deepEqual(e.diagnostics, []);

  const mark = client.mark(ent);
  settingsByUri.set(ent, { plan: 'pro' });
  await client.settingsChanged();
  const e2 = await client.diagnostics(ent, { after: mark });
  assert.deepEqual(e2.diagnostics.map((d) => d.code), ['plan-required']);
  assert.match(e2.diagnostics[0].message as string, /This zone is on the Pro plan/);
});

test('phase: the setting for .cfrule, the ruleset\'s own "phase" for JSON', async () => {
  const expr = 'http.response.code eq 200';
  const cfrule = 'file:///work/phase/response.cfrule';
  const own = 'file:///work/phase/own.ruleset.json';
  const none = 'file:///work/phase/none.ruleset.json';
  for (const u of [cfrule, own, none]) settingsByUri.set(u, { phase: 'http_request_firewall_custom' });
  await client.open(cfrule, 'rulesmith-expression', expr);
  await client.open(own, 'json', JSON.stringify({ phase: 'http_response_headers_transform', rules: [{ ref: 'r', expression: expr, action: 'rewrite' }] }, null, 2));
  await client.open(none, 'json', JSON.stringify({ rules: [{ ref: 'r', expression: expr, action: 'block' }] }, null, 2));
  assert.deepEqual((await client.diagnostics(cfrule, { version: 1 })).diagnostics.map((d) => d.code), ['not-in-phase']);
  assert.deepEqual((await client.diagnostics(own, { version: 1 })).diagnostics, []);
  assert.deepEqual((await client.diagnostics(none, { version: 1 })).diagnostics.map((d) => d.code), ['not-in-phase']);

  const mark = client.mark(cfrule);
  settingsByUri.set(cfrule, { phase: 'http_response_headers_transform' });
  await client.settingsChanged();
  assert.deepEqual((await client.diagnostics(cfrule, { after: mark })).diagnostics, []);
});

test('incremental edits: the fixed expression publishes no problems for the new version', async () => {
  const uri = 'file:///work/incremental.cfrule';
  await client.open(uri, 'rulesmith-expression', 'http.hots eq "a"\n');
  assert.equal((await client.diagnostics(uri, { version: 1 })).diagnostics.length, 1);
  const v = await client.edit(uri, { start: { line: 0, character: 7 }, end: { line: 0, character: 9 } }, 'st');
  const p = await client.diagnostics(uri, { version: v });
  assert.deepEqual(p.diagnostics, []);
  assert.equal(client.document(uri).getText(), 'http.host eq "a"\n');
});

test('JSON syntax errors are left to the JSON service; expressions are still checked', async () => {
  const uri = 'file:///work/broken.ruleset.json';
  await client.open(uri, 'json', '{ "rules": [ { "ref": "a", "action": "block", "expression": "http.hots eq \\"a\\"", }, ] ');
  const p = await client.diagnostics(uri, { version: 1 });
  assert.deepEqual(p.diagnostics.map((d) => d.code), ['unknown-identifier']);
});

test('JSON files that are not rulesets are ignored, unless rulesmith.rulesetFiles matches them', async () => {
  const plain = 'file:///work/json/package.json';
  const matched = 'file:///work/json/waf/zone.json';
  settingsByUri.set(matched, { rulesetFiles: ['waf/*.json'] });
  const body = JSON.stringify({ rules: [{ ref: 'a', expression: 'http.hots eq "a"', action: 'block' }] });
  await client.open(plain, 'json', body);
  await client.open(matched, 'json', body);
  assert.deepEqual((await client.diagnostics(matched, { version: 1 })).diagnostics.map((d) => d.code), ['unknown-identifier']);
  // The plain file was scheduled first; its run has finished by now and published nothing.
  assert.deepEqual(client.publishes(plain), []);
});

test('warnings carry tags and quick-fix data', async () => {
  const uri = 'file:///work/deprecated.cfrule';
  await client.open(uri, 'rulesmith-expression', 'ip.geoip.country eq "US"');
  const [d] = (await client.diagnostics(uri, { version: 1 })).diagnostics;
  assert.equal(d.code, 'deprecated-field');
  assert.equal(d.severity, DiagnosticSeverity.Warning);
  assert.deepEqual(d.tags, [DiagnosticTag.Deprecated]);
  assert.deepEqual(d.data, { replacement: 'ip.src.country' });
});

test('closing a document that is not on disk clears its problems', async () => {
  const uri = 'file:///work/closing.cfrule';
  await client.open(uri, 'rulesmith-expression', 'http.hots eq "a"');
  await client.diagnostics(uri, { version: 1 });
  const mark = client.mark(uri);
  await client.closeDocument(uri);
  const p = await client.diagnostics(uri, { after: mark });
  assert.deepEqual(p.diagnostics, []);
});

test('a result computed for an older version is dropped', async () => {
  // The server asks for settings before checking; hold that answer until the document
  // has changed, so the run for version 1 finds version 2 when it resumes.
  const uri = 'file:///work/stale.cfrule';
  const hold = holdSettings(client, uri);
  try {
    await client.open(uri, 'rulesmith-expression', 'http.hots eq "v1"');
    await hold.asked;
    const v2 = await client.replace(uri, 'http.host eq "v2"');
    hold.release();
    const p = await client.diagnostics(uri, { timeoutMs: 5000 });
    assert.equal(p.version, v2, 'the first publish is for the newest version');
    assert.deepEqual(p.diagnostics, []);
    assert.ok(client.publishes(uri).every((x) => x.version === v2));
  } finally {
    hold.restore();
  }
});

test('rulesmith.dynamicComparisons: field-to-field comparisons flagged when turned off', async () => {
  const on = 'file:///work/dynamic/on.cfrule';
  const off = 'file:///work/dynamic/off.cfrule';
  settingsByUri.set(off, { dynamicComparisons: false });
  const text = 'http.request.uri.path ne raw.http.request.uri.path';
  await client.open(on, 'rulesmith-expression', text);
  await client.open(off, 'rulesmith-expression', text);
  assert.deepEqual((await client.diagnostics(on, { version: 1 })).diagnostics, []);
  const [d] = (await client.diagnostics(off, { version: 1 })).diagnostics;
  assert.equal(d.code, 'dynamic-comparison-disabled');
  assert.equal(rangeText(text, d.range), 'raw.http.request.uri.path');
});
