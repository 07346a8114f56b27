// Semantic tokens over the wire, decoded back to (line, char, length, type, modifiers):
// fields, deprecated fields, functions, operators in both notations, strings, regexes,
// numbers, lists; tokens split at line breaks; positions mapped inside JSON strings.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { SemanticTokens, SemanticTokensLegend } from 'vscode-languageserver-protocol';
import { LspClient } from './client';

let client: LspClient;
let legend: SemanticTokensLegend;
before(async () => {
  client = await LspClient.start();
  legend = client.initializeResult!.capabilities.semanticTokensProvider!.legend;
});
after(async () => {
  await client?.close();
});

type Tok = [line: number, char: number, text: string, type: string, modifiers: string];

async function tokens(uri: string, languageId: string, text: string, range?: unknown): Promise<Tok[]> {
  await client.open(uri, languageId, text);
  const r = await client.request<SemanticTokens>(range ? 'textDocument/semanticTokens/range' : 'textDocument/semanticTokens/full', { textDocument: { uri }, range });
  const lines = text.split('\n');
  const out: Tok[] = [];
  let line = 0;
  let char = 0;
  for (let i = 0; i < r.data.length; i += 5) {
    const [dl, dc, len, type, mods] = r.data.slice(i, i + 5);
    line += dl;
    char = dl === 0 ? char + dc : dc;
    const modifiers = legend.tokenModifiers.filter((_, b) => mods & (1 << b)).join(',');
    out.push([line, char, lines[line].slice(char, char + len), legend.tokenTypes[type], modifiers]);
  }
  return out;
}

test('a .cfrule: every kind of token', async () => {
  const text = 'http.host eq "a" && not ip.geoip.country in {"US" "FR"} or ip.src in $blocked\nor lower(http.request.uri.path) matches "^/x" xor cf.edge.server_port == 443 and any(http.request.headers["x"][*] contains "y")';
  assert.deepEqual(await tokens('file:///st/all.cfrule', 'rulesmith-expression', text), [
    [0, 0, 'http.host', 'property', 'readonly'],
    [0, 10, 'eq', 'keyword', ''],
    [0, 13, '"a"', 'string', ''],
    [0, 17, '&&', 'operator', ''],
    [0, 20, 'not', 'keyword', ''],
    [0, 24, 'ip.geoip.country', 'property', 'readonly,deprecated'],
    [0, 41, 'in', 'keyword', ''],
    [0, 45, '"US"', 'string', ''],
    [0, 50, '"FR"', 'string', ''],
    [0, 56, 'or', 'keyword', ''],
    [0, 59, 'ip.src', 'property', 'readonly'],
    [0, 66, 'in', 'keyword', ''],
    [0, 69, '$blocked', 'variable', 'readonly'],
    [1, 0, 'or', 'keyword', ''],
    [1, 3, 'lower', 'function', 'defaultLibrary'],
    [1, 9, 'http.request.uri.path', 'property', 'readonly'],
    [1, 32, 'matches', 'keyword', ''],
    [1, 40, '"^/x"', 'regexp', ''],
    [1, 46, 'xor', 'keyword', ''],
    [1, 50, 'cf.edge.server_port', 'property', 'readonly'],
    [1, 70, '==', 'operator', ''],
    [1, 73, '443', 'number', ''],
    [1, 77, 'and', 'keyword', ''],
    [1, 81, 'any', 'function', 'defaultLibrary'],
    [1, 85, 'http.request.headers', 'property', 'readonly'],
    [1, 106, '"x"', 'string', ''],
    [1, 111, '*', 'operator', ''],
    [1, 114, 'contains', 'keyword', ''],
    [1, 123, '"y"', 'string', ''],
  ]);
});

test('a string spanning lines becomes one token per line', async () => {
  assert.deepEqual(await tokens('file:///st/multi.cfrule', 'rulesmith-expression', 'http.host eq "a\nbc"'), [
    [0, 0, 'http.host', 'property', 'readonly'],
    [0, 10, 'eq', 'keyword', ''],
    [0, 13, '"a', 'string', ''],
    [1, 0, 'bc"', 'string', ''],
  ]);
});

test('inside ruleset JSON, tokens cover the escaped source text', async () => {
  const text = '{"rules": [\n  {"expression": "http.host eq \\"caf\\u00e9\\" and ip.src in {192.0.2.0/24}"}\n]}';
  assert.deepEqual(await tokens('file:///st/r.ruleset.json', 'json', text), [
    [1, 18, 'http.host', 'property', 'readonly'],
    [1, 28, 'eq', 'keyword', ''],
    [1, 31, '\\"caf\\u00e9\\"', 'string', ''],
    [1, 45, 'and', 'keyword', ''],
    [1, 49, 'ip.src', 'property', 'readonly'],
    [1, 56, 'in', 'keyword', ''],
    [1, 60, '192.0.2.0/24', 'number', ''],
  ]);
});

test('a range request returns only the tokens in the range', async () => {
  const text = 'http.host eq "a"\nand ssl';
  const range = { start: { line: 1, character: 0 }, end: { line: 1, character: 7 } };
  assert.deepEqual(await tokens('file:///st/range.cfrule', 'rulesmith-expression', text, range), [
    [1, 0, 'and', 'keyword', ''],
    [1, 4, 'ssl', 'property', 'readonly'],
  ]);
});

test('text that does not parse gets no tokens (the TextMate grammar colours it)', async () => {
  assert.deepEqual(await tokens('file:///st/broken.cfrule', 'rulesmith-expression', 'http.host eq'), []);
});
