// The adapter's pure parts: offsets mapped both ways through JSON escapes, the check
// cache re-checking only the changed expression, document kinds and ruleset globs,
// settings validation, and JSON-escaping of snippets.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { TextDocument } from 'vscode-languageserver-textdocument';
import { CheckCache, documentKind, DocumentStore } from '../../server/src/lsp/documents';
import { patchSlices, rulesetSlices, sliceAt, type ExpressionSlice } from '../../server/src/lsp/expressionSlices';
import { jsonEscapeSnippet } from '../../server/src/lsp/embedded';
import { DEFAULT_SETTINGS, matchesGlob, parseSettings } from '../../server/src/lsp/settings';

test('offsets map both ways through every JSON escape', () => {
  const json = String.raw`{"rules": [{"expression": "a\"b\\c\nd\u00e9\ud83d\ude00é😀\/x"}]}`;
  const [s] = rulesetSlices(json);
  assert.equal(s.text, 'a"b\\c\nd\u00e9\ud83d\ude00é😀/x');
  const source = [...'a', '\\"', 'b', '\\\\', 'c', '\\n', 'd', '\\u00e9', '\\ud83d', '\\ude00', 'é', '\ud83d', '\ude00', '\\/', 'x'];
  let at = json.indexOf('"a') + 1;
  for (let i = 0; i < s.text.length; i++) {
    assert.equal(s.toDocument(i), at, `unit ${i} starts at its escape`);
    assert.equal(s.fromDocument(at), i);
    // Inside an escape sequence: the unit it encodes.
    for (let k = 1; k < source[i].length; k++) assert.equal(s.fromDocument(at + k), i);
    at += source[i].length;
  }
  assert.equal(s.toDocument(s.text.length), at, 'the end maps to the closing quote');
  assert.equal(s.fromDocument(at), s.text.length);
  assert.equal(s.fromDocument(0), 0, 'before the string: clamped');
  assert.equal(s.fromDocument(json.length), s.text.length, 'after the string: clamped');
  assert.equal(s.encode('a"é\n'), 'a\\"é\\n');
});

test('sliceAt finds the expression whose content holds an offset (its end included)', () => {
  const json = '{"rules": [{"expression": "ssl"}, {"expression": "http.host eq \\"a\\""}]}';
  const slices = rulesetSlices(json);
  assert.equal(slices.length, 2);
  assert.equal(sliceAt(slices, json.indexOf('ssl')), slices[0]);
  assert.equal(sliceAt(slices, json.indexOf('ssl') + 3), slices[0]);
  assert.equal(sliceAt(slices, json.indexOf('http.host') + 2), slices[1]);
  assert.equal(sliceAt(slices, json.indexOf('rules')), undefined);
});

test('one edit in a large ruleset re-checks only the changed expression', () => {
  const rules = Array.from({ length: 200 }, (_, i) => ({ ref: `r${i}`, expression: `http.request.uri.path eq "/p${i}" and ip.src in {192.0.2.${i % 250}}` }));
  const before = JSON.stringify({ phase: 'http_request_firewall_custom', rules }, null, 2);
  const cache = new CheckCache();
  const options = { plan: 'enterprise' as const };
  for (const s of rulesetSlices(before)) cache.check(s.text, options);
  assert.equal(cache.misses, 200);
  const doc = TextDocument.create('file:///r.ruleset.json', 'json', 1, before);
  const at = before.indexOf('/p17\\"');
  assert.ok(at > 0);
  TextDocument.update(doc, [{ range: { start: doc.positionAt(at + 2), end: doc.positionAt(at + 4) }, text: '99' }], 2);
  for (const s of rulesetSlices(doc.getText())) cache.check(s.text, options);
  assert.equal(cache.misses, 201);
  assert.equal(cache.hits, 199);
  // Other settings are another key.
  cache.check(rules[0].expression, { plan: 'free' });
  assert.equal(cache.misses, 202);
});

test('document kinds: .cfrule, *.ruleset.json, and JSON matched by rulesmith.rulesetFiles', () => {
  const none = { rulesetFiles: [] };
  assert.equal(documentKind('file:///a/x.cfrule', 'plaintext', none), 'expression');
  assert.equal(documentKind('untitled:Untitled-1', 'rulesmith-expression', none), 'expression');
  assert.equal(documentKind('file:///a/zone.ruleset.json', 'json', none), 'ruleset');
  assert.equal(documentKind('file:///a/package.json', 'json', none), undefined);
  assert.equal(documentKind('file:///a/notes.md', 'markdown', none), undefined);
  const globs = { rulesetFiles: ['*.rules.json', 'waf/**/*.json', '**/cf-{zone,account}.json'] };
  assert.equal(documentKind('file:///a/b/my.rules.json', 'json', globs), 'ruleset');
  assert.equal(documentKind('file:///repo/waf/zones/a.json', 'json', globs), 'ruleset');
  assert.equal(documentKind('file:///repo/x/cf-account.json', 'json', globs), 'ruleset');
  assert.equal(documentKind('file:///repo/x/cf-other.json', 'json', globs), undefined);
  assert.equal(documentKind('file:///repo/my%20rules/a.rules.json', 'json', globs), 'ruleset');
  assert.ok(matchesGlob('/a/b/c.json', '**/*.json'));
  assert.ok(!matchesGlob('/a/b/c.json', 'b/*.jsonc'));
  assert.ok(matchesGlob('/a/b/c.json', 'b/?.json'));
});

test('settings: validated, defaults for anything missing or wrong', () => {
  assert.deepEqual(parseSettings(undefined), DEFAULT_SETTINGS);
  assert.deepEqual(parseSettings({ plan: 'gold', phase: 'nope', format: { width: 5, notation: 'x' }, rulesetFiles: 'a' }), DEFAULT_SETTINGS);
  const s = parseSettings({ plan: 'pro', phase: 'http_request_transform', dynamicComparisons: false, format: { notation: 'c-like', width: 60 }, rulesetFiles: ['a/*.json', 3] });
  assert.deepEqual(s, { plan: 'pro', phase: 'http_request_transform', dynamicComparisons: false, format: { notation: 'c-like', width: 60 }, rulesetFiles: ['a/*.json'] });
  assert.equal(parseSettings({ 'format.width': 40 }).format.width, 40);
});

test('snippets are JSON-escaped without breaking their syntax', () => {
  assert.equal(jsonEscapeSnippet('starts_with(${1:source}, ${2:prefix})'), 'starts_with(${1:source}, ${2:prefix})');
  // A quote becomes \" in the document: the snippet writes the backslash as \\.
  assert.equal(jsonEscapeSnippet('eq "${1}"'), 'eq \\\\"${1}\\\\"');
  // Snippet-escaped literals: \$ stays a literal $, \\ (one backslash) becomes two in JSON.
  assert.equal(jsonEscapeSnippet('a\\$b \\\\ ${1:x\\}y}'), 'a\\$b \\\\\\\\ ${1:x\\}y}');
  assert.equal(jsonEscapeSnippet('line\nbreak'), 'line\\\\nbreak');
});

function sameSlices(actual: readonly ExpressionSlice[], expected: readonly ExpressionSlice[], what: string): void {
  assert.deepEqual(actual.map((s) => s.text), expected.map((s) => s.text), what);
  actual.forEach((s, k) => {
    const e = expected[k];
    assert.equal(s.contentStart, e.contentStart, what);
    assert.equal(s.contentEnd, e.contentEnd, what);
    for (let i = 0; i <= s.text.length; i++) assert.equal(s.toDocument(i), e.toDocument(i), `${what}: unit ${i} of rule ${k}`);
  });
}

test('edits inside an expression string patch its slice; the result equals a full re-parse', () => {
  const json = String.raw`{"phase": "http_request_firewall_custom", "rules": [
  {"expression": "http.host eq \"caf\u00e9\" and ssl"},
  {"description": "x", "expression": "ip.src in {192.0.2.0/24}"},
  {"expression": "http.request.uri.path contains \"\\\\\" or not ssl"}
]}`;
  const slices = rulesetSlices(json);
  assert.equal(slices.length, 3);
  // Typing inside the first expression moves the others.
  const at = json.indexOf('and ssl');
  const typed = patchSlices(slices, at, at, 'not ');
  assert.ok(typed);
  sameSlices(typed, rulesetSlices(json.slice(0, at) + 'not ' + json.slice(at)), 'insert');
  // Deleting a whole escape is fine; cutting into one, or typing a quote or backslash, re-parses.
  const esc = json.indexOf('\\u00e9');
  assert.ok(esc > 0);
  const deleted = patchSlices(slices, esc, esc + 6, 'e');
  assert.ok(deleted);
  sameSlices(deleted, rulesetSlices(json.slice(0, esc) + 'e' + json.slice(esc + 6)), 'replace an escape');
  assert.equal(patchSlices(slices, esc + 1, esc + 2, 'x'), undefined);
  assert.equal(patchSlices(slices, at, at, '"'), undefined);
  assert.equal(patchSlices(slices, at, at, '\\'), undefined);
  assert.equal(patchSlices(slices, json.indexOf('"phase"'), json.indexOf('"phase"'), ' '), undefined, 'outside expressions');
});

test('random edits through the store: patched slices always equal a full re-parse', () => {
  let seed = 42;
  const rand = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed % n;
  };
  const json = JSON.stringify({ rules: Array.from({ length: 6 }, (_, i) => ({ ref: `r${i}`, expression: `http.host eq "a\\b"${i}é😀" and ip.src in {192.0.2.${i}}` })) }, null, 1);
  const store = new DocumentStore();
  const uri = 'file:///random.ruleset.json';
  store.open(uri, 'json', 1, json);
  let doc = store.get(uri)!;
  store.slicesOf(doc, 'ruleset');
  // Inside expressions: plain text (patched) and escapes (re-parsed); outside: white space.
  const inside = ['a', ' and ', 'é', '', 'xyz', '😀', '\\"', '\\u00e9', '\\\\'];
  let patched = 0;
  for (let v = 2; v < 400; v++) {
    const text = doc.getText();
    const slices = rulesetSlices(text);
    let start: number;
    let end: number;
    let insert: string;
    if (slices.length && rand(5) > 0) {
      const s = slices[rand(slices.length)];
      start = s.contentStart + rand(s.contentEnd - s.contentStart + 1);
      end = Math.min(s.contentEnd, start + (rand(3) === 0 ? rand(4) : 0));
      // Never delete half of an escape (that would end the JSON string early).
      if (/["\\]/.test(text.slice(start, end)) || text[start - 1] === '\\') end = start;
      insert = inside[rand(inside.length)];
      if (text[start - 1] === '\\') insert = '';
    } else {
      start = end = text.indexOf('\n', rand(text.length)) + 1;
      insert = rand(2) ? ' ' : '\n';
    }
    if (patchSlices(slices, start, end, insert)) patched++;
    store.change(uri, v, [{ range: { start: doc.positionAt(start), end: doc.positionAt(end) }, text: insert }]);
    doc = store.get(uri)!;
    assert.equal(doc.getText(), text.slice(0, start) + insert + text.slice(end));
    sameSlices(store.slicesOf(doc, 'ruleset'), rulesetSlices(doc.getText()), `edit ${v}`);
  }
  assert.equal(rulesetSlices(doc.getText()).length, 6, 'the JSON kept its rules');
  assert.ok(patched > 150, `most edits were patched (${patched})`);
});
