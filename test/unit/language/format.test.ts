import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatAst, formatExpression, type FormatOptions } from '../../../server/src/language/format';
import { parseExpression } from '../../../server/src/language/parse';
import { astShape } from './astShape';

interface Case {
  readonly name: string;
  readonly input: string;
  readonly output: string;
  readonly options?: FormatOptions;
}

/** One-line layout: spacing, every construct, literals verbatim, parentheses kept. */
const LAYOUT: readonly Case[] = [
  { name: 'bare Bool field', input: 'ssl', output: 'ssl' },
  { name: 'outer white space trimmed', input: '  \n ssl \r\n ', output: 'ssl' },
  { name: 'spaces around eq added', input: 'http.host eq"example.com"', output: 'http.host eq "example.com"' },
  { name: 'extra spaces collapsed', input: 'http.host    ==     "a"', output: 'http.host == "a"' },
  { name: 'multi-line input joined', input: 'http.host eq "a"\n  and\nssl', output: 'http.host eq "a" and ssl' },
  { name: 'CRLF input joined', input: 'ssl\r\nor\r\nssl', output: 'ssl or ssl' },
  { name: 'C-like operators without spaces', input: 'cf.threat_score>=10&&cf.threat_score<=20', output: 'cf.threat_score >= 10 && cf.threat_score <= 20' },
  { name: 'ne / != / lt / gt', input: 'a ne 1 and b!=2 and c lt 3 and d>4 and e<5 and f gt 6', output: 'a ne 1 and b != 2 and c lt 3 and d > 4 and e < 5 and f gt 6' },
  { name: 'ge / le words', input: 'a ge 1 or a le 2', output: 'a ge 1 or a le 2' },
  { name: 'contains', input: 'http.request.uri.path  contains  "/admin"', output: 'http.request.uri.path contains "/admin"' },
  { name: 'matches keeps the regex literal', input: 'http.request.uri.path matches "\\d+[\\"]\\.php$"', output: 'http.request.uri.path matches "\\d+[\\"]\\.php$"' },
  { name: '~ with a class containing a quote', input: 'http.host~"[a-z"\\]]+"', output: 'http.host ~ "[a-z"\\]]+"' },
  { name: 'wildcard', input: 'http.host wildcard "*.example.com"', output: 'http.host wildcard "*.example.com"' },
  { name: 'strict wildcard', input: 'http.host strict wildcard"*.Example.com"', output: 'http.host strict wildcard "*.Example.com"' },
  { name: 'bitwise_and and &', input: 'tcp.flags bitwise_and 0x02 or tcp.flags&0x10', output: 'tcp.flags bitwise_and 0x02 or tcp.flags & 0x10' },
  { name: 'quoted escapes kept verbatim', input: 'http.host eq "a\\x41\\101\\"\\\\b"', output: 'http.host eq "a\\x41\\101\\"\\\\b"' },
  { name: 'raw strings kept verbatim', input: 'http.host eq r#"a"b"# or http.host eq r"c"', output: 'http.host eq r#"a"b"# or http.host eq r"c"' },
  { name: 'non-ASCII string', input: 'http.host eq "ü€😀"', output: 'http.host eq "ü€😀"' },
  { name: 'multi-line string kept as is', input: 'http.host eq "a  \nb"  and  ssl', output: 'http.host eq "a  \nb" and ssl' },
  { name: 'hex bytes', input: 'http.host eq 6F:72-67.2e', output: 'http.host eq 6F:72-67.2e' },
  { name: 'integer forms kept (hex, octal, negative)', input: 'a eq 0x1F or a eq 010 or a eq -010', output: 'a eq 0x1F or a eq 010 or a eq -010' },
  { name: 'IPv4 and IPv6 kept', input: 'ip.src eq 192.0.2.1 or ip.src == 2001:DB8::0:1', output: 'ip.src eq 192.0.2.1 or ip.src == 2001:DB8::0:1' },
  { name: 'set single-spaced', input: 'ip.src in {  192.0.2.0/24   10.0.0.1..10.0.0.9\n2001:db8::/32 }', output: 'ip.src in {192.0.2.0/24 10.0.0.1..10.0.0.9 2001:db8::/32}' },
  { name: 'int set with ranges', input: 'cf.edge.server_port in{80 443 8000..8999 -5..-1}', output: 'cf.edge.server_port in {80 443 8000..8999 -5..-1}' },
  { name: 'adjacent strings in a set separated', input: 'http.host in {"a""b"r#"c"#}', output: 'http.host in {"a" "b" r#"c"#}' },
  { name: 'empty set', input: 'http.host in {  }', output: 'http.host in {}' },
  { name: 'comma in a set kept (the checker reports it)', input: 'ip.src in {1.1.1.1, 2.2.2.2}', output: 'ip.src in {1.1.1.1 , 2.2.2.2}' },
  { name: 'list reference', input: 'ip.src in   $cf.open_proxies', output: 'ip.src in $cf.open_proxies' },
  { name: 'index: no spaces inside brackets', input: 'http.request.headers[ "x-a" ][ 0 ] eq "1"', output: 'http.request.headers["x-a"][0] eq "1"' },
  { name: 'index: map-each', input: 'any(http.request.headers[ * ][*]contains"a")', output: 'any(http.request.headers[*][*] contains "a")' },
  { name: 'call arguments', input: 'starts_with( http.request.uri.path ,"/a" )', output: 'starts_with(http.request.uri.path, "/a")' },
  { name: 'call without arguments, space before (', input: 'f ( ) eq 1', output: 'f() eq 1' },
  { name: 'nested and indexed calls', input: 'len(split(http.cookie,";",5)[0])>3', output: 'len(split(http.cookie, ";", 5)[0]) > 3' },
  { name: 'logical call argument', input: 'f((ssl or ssl),not ssl and ssl)', output: 'f((ssl or ssl), not ssl and ssl)' },
  { name: 'comparison argument', input: 'f(http.host eq"a",1)', output: 'f(http.host eq "a", 1)' },
  { name: 'not with a space', input: 'not   ssl', output: 'not ssl' },
  { name: 'not written without a space (keyword prefix)', input: 'nottcp.flags.syn', output: 'not tcp.flags.syn' },
  { name: '! without space', input: '!  ssl', output: '!ssl' },
  { name: 'double negation', input: '! !ssl or not not ssl', output: '!!ssl or not not ssl' },
  { name: 'not of a group', input: 'not(ssl)', output: 'not (ssl)' },
  { name: '! of a group', input: '! ( ssl )', output: '!(ssl)' },
  { name: 'quantifiers', input: 'any (http.request.headers.names[*] eq "a") and all( x[*] ne 1 )', output: 'any(http.request.headers.names[*] eq "a") and all(x[*] ne 1)' },
  { name: 'quantifier with a logical argument', input: 'any( ( a[*] eq 1 or b[*] eq 2 ) )', output: 'any((a[*] eq 1 or b[*] eq 2))' },
  { name: 'quantifier with not', input: 'any(not x[*] in {1 2})', output: 'any(not x[*] in {1 2})' },
  { name: 'groups kept, none added', input: '((ssl))   or ssl and ( ssl xor ssl )', output: '((ssl)) or ssl and (ssl xor ssl)' },
  { name: 'precedence without parentheses stays without', input: 'a or b and c xor d', output: 'a or b and c xor d' },
  { name: 'operator written without spaces before a keyword', input: 'http.host eq "x"and ssl', output: 'http.host eq "x" and ssl' },
  { name: 'xor forms', input: 'ssl xor ssl ^^ ssl', output: 'ssl xor ssl ^^ ssl' },
  { name: 'dynamic comparison', input: 'http.request.uri.path  ne  raw.http.request.uri.path', output: 'http.request.uri.path ne raw.http.request.uri.path' },
  { name: 'dynamic comparison of calls', input: 'len(http.request.uri.path)gt len( http.request.uri.query )', output: 'len(http.request.uri.path) gt len(http.request.uri.query)' },
  { name: 'true pseudo-field', input: ' true ', output: 'true' },
];

/** Operator spelling. */
const NOTATION: readonly Case[] = [
  {
    name: 'english -> c-like, every operator',
    input: 'a eq 1 and b ne 2 or c lt 3 xor d le 4 and e gt 5 and f ge 6 or g matches "x" or not h bitwise_and 1',
    output: 'a == 1 && b != 2 || c < 3 ^^ d <= 4 && e > 5 && f >= 6 || g ~ "x" || !h & 1',
    options: { notation: 'c-like' },
  },
  {
    name: 'c-like -> english, every operator',
    input: 'a == 1 && b != 2 || c < 3 ^^ d <= 4 && e > 5 && f >= 6 || g ~ "x" || !h & 1',
    output: 'a eq 1 and b ne 2 or c lt 3 xor d le 4 and e gt 5 and f ge 6 or g matches "x" or not h bitwise_and 1',
    options: { notation: 'english' },
  },
  {
    name: 'operators without a C-like form stay words',
    input: 'a contains "x" and b wildcard "y" and c strict wildcard "z" and d in {1} and e in $l',
    output: 'a contains "x" && b wildcard "y" && c strict wildcard "z" && d in {1} && e in $l',
    options: { notation: 'c-like' },
  },
  {
    name: 'mixed notation preserved by default',
    input: 'a == 1 and b eq 2 && !c or not d',
    output: 'a == 1 and b eq 2 && !c or not d',
  },
  { name: 'mixed -> english', input: 'a == 1 and b eq 2 && !c', output: 'a eq 1 and b eq 2 and not c', options: { notation: 'english' } },
  { name: 'mixed -> c-like', input: 'a == 1 and b eq 2 && not(c)', output: 'a == 1 && b == 2 && !(c)', options: { notation: 'c-like' } },
  { name: 'preserve explicitly', input: 'a==1&&b eq 2', output: 'a == 1 && b eq 2', options: { notation: 'preserve' } },
  {
    name: 'operators inside arguments and quantifiers converted',
    input: 'any(x[*] == 1) and f(not ssl, y eq 2)',
    output: 'any(x[*] eq 1) and f(not ssl, y eq 2)',
    options: { notation: 'english' },
  },
  { name: 'regex literal kept when ~ becomes matches', input: 'a ~ "[\\"]"', output: 'a matches "[\\"]"', options: { notation: 'english' } },
];

/** Breaking lines wider than `width`. */
const WRAPPING: readonly Case[] = [
  {
    name: 'a logical expression one operand per line, operator leading',
    input: 'http.host eq "aaaaaaaaaaaaaaaa" or http.host eq "bbbbbbbbbbbbbbbb" or http.host eq "cccccccc"',
    options: { width: 40 },
    output: 'http.host eq "aaaaaaaaaaaaaaaa"\nor http.host eq "bbbbbbbbbbbbbbbb"\nor http.host eq "cccccccc"',
  },
  {
    name: 'a nested group: ( ends the line, content indented, ) alone',
    input: 'http.host eq "aaaaaaaaaaaaaaaaaaaa" or (ssl and http.request.uri.path contains "/cccccccccccccccccc")',
    options: { width: 50 },
    output: 'http.host eq "aaaaaaaaaaaaaaaaaaaa"\nor (\n  ssl\n  and http.request.uri.path contains "/cccccccccccccccccc"\n)',
  },
  {
    name: 'a group that fits stays on its line',
    input: 'http.host eq "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" or (ssl and ssl)',
    options: { width: 40 },
    output: 'http.host eq "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"\nor (ssl and ssl)',
  },
  {
    name: 'two levels of groups',
    input: '(http.host eq "aaaaaaaaaaaaaaaa" and (http.host eq "bbbbbbbbbbbbbbbbbbbb" or http.host eq "cccccccccccccccccccc"))',
    options: { width: 50 },
    output:
      '(\n  http.host eq "aaaaaaaaaaaaaaaa"\n  and (\n    http.host eq "bbbbbbbbbbbbbbbbbbbb"\n    or http.host eq "cccccccccccccccccccc"\n  )\n)',
  },
  {
    name: 'an unparenthesised operand of higher precedence indents its continuation',
    input: 'ssl or http.host eq "bbbbbbbbbbbbbbbbbbbb" and http.host eq "cccccccccccccccccccc"',
    options: { width: 40 },
    output: 'ssl\nor http.host eq "bbbbbbbbbbbbbbbbbbbb"\n  and http.host eq "cccccccccccccccccccc"',
  },
  {
    name: 'not of a group',
    input: 'not (ssl and http.host eq "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa")',
    options: { width: 30 },
    output: 'not (\n  ssl\n  and http.host eq "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"\n)',
  },
  {
    name: '! of a group',
    input: '!(ssl && http.host == "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa")',
    options: { width: 30 },
    output: '!(\n  ssl\n  && http.host == "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"\n)',
  },
  {
    name: 'a quantifier hugs its parenthesised argument',
    input: 'any((a[*] eq "xxxxxxxxxxxxxxxxxxxxxxxxxxxx" or b[*] eq "yyyyyyyyyyyyyyyyyyyyyyyyyy"))',
    options: { width: 50 },
    output: 'any((\n  a[*] eq "xxxxxxxxxxxxxxxxxxxxxxxxxxxx"\n  or b[*] eq "yyyyyyyyyyyyyyyyyyyyyyyyyy"\n))',
  },
  {
    name: 'a quantifier with one long comparison',
    input: 'any(http.request.headers["x-forwarded-for"][*] contains "zzzzzzzzzzzzzz")',
    options: { width: 50 },
    output: 'any(\n  http.request.headers["x-forwarded-for"][*] contains "zzzzzzzzzzzzzz"\n)',
  },
  {
    name: 'a long call puts one argument per line',
    input: 'regex_replace(http.request.uri.path, "^/aaaaaaaaaaaaaaaaaa/(.*)$", "/bbbbbbbbbbbbbbbbbbbbbb/${1}") eq "x"',
    options: { width: 50 },
    output: 'regex_replace(\n  http.request.uri.path,\n  "^/aaaaaaaaaaaaaaaaaa/(.*)$",\n  "/bbbbbbbbbbbbbbbbbbbbbb/${1}"\n) eq "x"',
  },
  {
    name: 'a long set wraps its elements',
    input: 'ip.src in {192.0.2.1 192.0.2.2 192.0.2.3 192.0.2.4 192.0.2.5 192.0.2.6 192.0.2.7}',
    options: { width: 40 },
    output: 'ip.src in {\n  192.0.2.1 192.0.2.2 192.0.2.3\n  192.0.2.4 192.0.2.5 192.0.2.6\n  192.0.2.7\n}',
  },
  {
    name: 'a long set inside a broken logical expression',
    input: 'ssl and http.host in {"aaaaaaaaaa" "bbbbbbbbbb" "cccccccccc" "dddddddddd"} and ssl',
    options: { width: 40 },
    output: 'ssl\nand http.host in {\n  "aaaaaaaaaa" "bbbbbbbbbb" "cccccccccc"\n  "dddddddddd"\n}\nand ssl',
  },
  {
    name: 'a literal wider than the line is not split',
    input: 'http.host eq "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" or ssl',
    options: { width: 20 },
    output: 'http.host eq "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"\nor ssl',
  },
  {
    name: 'a line exactly as wide as width is kept',
    input: 'http.host eq "abc" or ssl',
    options: { width: 25 },
    output: 'http.host eq "abc" or ssl',
  },
  {
    name: 'one column less breaks it',
    input: 'http.host eq "abc" or ssl',
    options: { width: 24 },
    output: 'http.host eq "abc"\nor ssl',
  },
  {
    name: 'custom indent',
    input: '(ssl and http.host eq "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa")',
    options: { width: 30, indent: '    ' },
    output: '(\n    ssl\n    and http.host eq "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"\n)',
  },
  {
    name: 'a tab indent becomes spaces (a tab is not white space in the language)',
    input: '(ssl and http.host eq "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa")',
    options: { width: 30, indent: '\t' },
    output: '(\n  ssl\n  and http.host eq "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"\n)',
  },
  {
    name: 'the default width is 100',
    input: `http.host eq "${'a'.repeat(40)}" or http.host eq "${'b'.repeat(40)}"`,
    output: `http.host eq "${'a'.repeat(40)}"\nor http.host eq "${'b'.repeat(40)}"`,
  },
  {
    name: 'under the default width stays on one line',
    input: `http.host eq "${'a'.repeat(30)}" or http.host eq "${'b'.repeat(30)}"`,
    output: `http.host eq "${'a'.repeat(30)}" or http.host eq "${'b'.repeat(30)}"`,
  },
  {
    name: 'a string with a line break: the text after the break counts toward the width',
    input: 'http.host eq "a\nbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb" or ssl',
    options: { width: 30 },
    output: 'http.host eq "a\nbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"\nor ssl',
  },
  {
    name: 'a string with a line break that fits on both lines',
    input: 'http.host eq "a\nb" or ssl',
    options: { width: 30 },
    output: 'http.host eq "a\nb" or ssl',
  },
  {
    name: 'a multi-line input re-laid out from the tree',
    input: 'http.host eq "a"\n    or\n        ssl',
    options: { width: 10 },
    output: 'http.host eq "a"\nor ssl',
  },
  {
    name: 'notation conversion and wrapping together',
    input: 'http.host == "aaaaaaaaaaaaaaaaaaaa" || (ssl && !(http.request.uri.path contains "/cccccccccccc"))',
    options: { width: 40, notation: 'english' },
    output: 'http.host eq "aaaaaaaaaaaaaaaaaaaa"\nor (\n  ssl\n  and not (\n    http.request.uri.path contains "/cccccccccccc"\n  )\n)',
  },
];

const ALL = [...LAYOUT, ...NOTATION, ...WRAPPING];

for (const c of ALL) {
  test(`format: ${c.name}`, () => {
    const r = formatExpression(c.input, c.options);
    assert.deepEqual(r.diagnostics, []);
    assert.equal(r.text, c.output);
  });
}

test('format is idempotent on every case', () => {
  for (const c of ALL) {
    assert.equal(formatExpression(c.output, c.options).text, c.output, c.name);
  }
});

test('format preserves the syntax tree (operator spellings too, unless converted)', () => {
  for (const c of ALL) {
    const before = parseExpression(c.input).ast;
    const after = parseExpression(c.output).ast;
    assert.ok(before && after, c.name);
    const converted = c.options?.notation !== undefined && c.options.notation !== 'preserve';
    assert.deepEqual(astShape(after, converted), astShape(before, converted), c.name);
  }
});

test('format output has no trailing white space, no tabs and no trailing newline', () => {
  for (const c of ALL) {
    // Inside a string literal spaces before a line break are the literal's own.
    if (c.output.includes('"a  \n')) continue;
    assert.doesNotMatch(c.output, / \n|\t|\s$/, c.name);
  }
});

test('an unparsable input returns no text and the parse diagnostics', () => {
  for (const input of ['http.host eq "abc', 'http.host eq', 'ssl and', '(ssl', 'ssl\tand ssl', '', '   ', 'http.host eq "a" AND ssl']) {
    const r = formatExpression(input);
    assert.equal(r.text, undefined, input);
    assert.ok(r.diagnostics.length > 0, input);
    assert.deepEqual(r.diagnostics, parseExpression(input).diagnostics, input);
  }
});

test('megabytes are refused as too long, not parsed', () => {
  const huge = `http.host eq "${'a'.repeat(1_000_000)}"`;
  assert.deepEqual(formatExpression(huge).diagnostics.map((d) => [d.code, d.range.start, d.range.end]), [['expression-too-long', 4096, huge.length]]);
});

test('formatAst formats an already parsed tree', () => {
  const source = 'http.host==  "a"  and(ssl)';
  const { ast } = parseExpression(source);
  assert.ok(ast);
  assert.equal(formatAst(ast, source), 'http.host == "a" and (ssl)');
  assert.equal(formatAst(ast, source, { notation: 'english' }), 'http.host eq "a" and (ssl)');
});

test('options out of range fall back sensibly', () => {
  assert.equal(formatExpression('ssl or ssl', { width: Number.NaN }).text, 'ssl or ssl');
  assert.equal(formatExpression('ssl or ssl', { width: 0 }).text, 'ssl\nor ssl');
});

test('deep nesting does not throw', () => {
  const deep = '('.repeat(100) + 'ssl' + ')'.repeat(100);
  assert.equal(formatExpression(deep, { width: 1000 }).text, deep);
  // Broken, every level is indented.
  const broken = formatExpression(deep, { width: 10 }).text ?? '';
  assert.equal(broken.split('\n').length, 201);
  assert.deepEqual(astShape(parseExpression(broken).ast), astShape(parseExpression(deep).ast));
  const nots = 'not '.repeat(100) + 'ssl';
  assert.equal(formatExpression(nots).text, nots);
});
