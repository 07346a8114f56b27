/**
 * Generators of Rules expressions for the property tests: token soup (anything, mostly
 * invalid) and valid expressions over the HTTP scheme, with every literal form, operator
 * spelling and layout, and squeezed variants with odd token adjacency.
 */
import fc from 'fast-check';

/** Pieces of the language, including the awkward ones: quotes, escapes, raw-string delimiters, tabs. */
export const TOKENS = [
  'http.host', 'ssl', 'ip.src', 'cf.edge.server_port', 'http.request.headers', 'http.request.uri.path', 'lower', 'len',
  'any', 'all', 'true', 'eq', '==', 'ne', '!=', 'lt', '<', 'le', '<=', 'gt', '>', 'ge', '>=', 'contains', 'matches', '~',
  'wildcard', 'strict wildcard', 'strict', 'in', '&', 'bitwise_and', 'and', '&&', 'or', '||', 'xor', '^^', 'not', '!',
  '(', ')', '[', ']', '{', '}', ',', '*', '[*]', '[0]', '["x"]', '"', '\\', '\\"', '\\\\', '\\x41', '\\101', '\\n',
  'r"', 'r#"', '"#', '#', 'r', '$', '$list', '$cf.open_proxies', '"a"', '"\\d+["]"', 'r#"x"y"#', '1', '0x1F', '010',
  '-5', '1.2.3.4', '2001:db8::1', '10.0.0.0/8', '1..5', 'ab:cd', '.', '..', ':', '/', '-', '_', ' ', '  ', '\n', '\r\n',
  '\r', '\t', '\u00a0', '\u2028', 'é', '😀', '\ud800',
];

export const tokenSoup = fc.array(fc.constantFrom(...TOKENS), { maxLength: 40 }).map((ts) => ts.join(''));
export const spacedTokenSoup = fc.array(fc.constantFrom(...TOKENS), { maxLength: 40 }).map((ts) => ts.join(' '));

export type Arb = fc.Arbitrary<string>;
type Part = string | Arb;

/** Concatenates constant and generated parts. */
function seq(...parts: Part[]): Arb {
  return fc.tuple(...parts.map((p) => (typeof p === 'string' ? fc.constant(p) : p))).map((xs) => xs.join(''));
}

/** White space between tokens: at least one character / possibly none (only where tokens self-delimit). */
const ws1: Arb = fc.constantFrom(' ', ' ', ' ', '  ', '\n', '\r\n', ' \n    ');
const ws0: Arb = fc.constantFrom('', '', ' ', '\n');

const hex2 = fc.integer({ min: 0, max: 255 }).map((n) => n.toString(16).padStart(2, '0'));
const hexDigitsCase = fc.boolean();

/** Quoted strings with every escape form, non-ASCII characters and line breaks. */
const quoted: Arb = fc
  .array(
    fc.oneof(
      fc.constantFrom('a', 'b', 'Z', '0', '/', '.', '-', '_', ' ', '*', 'é', '😀', '\n', '[', ']', '#', "'"),
      fc.constantFrom('\\"', '\\\\', '\\x41', '\\x7f', '\\101', '\\377'),
    ),
    { maxLength: 8 },
  )
  .map((cs) => `"${cs.join('')}"`);

const rawContent = fc.array(fc.constantFrom('a', 'b', ' ', '\\', '/', 'é', '\n', '*'), { maxLength: 6 }).map((cs) => cs.join(''));
const raw: Arb = fc.oneof(
  rawContent.map((s) => `r"${s}"`),
  fc.tuple(rawContent, rawContent).map(([a, b]) => `r#"${a}"${b}"#`),
  rawContent.map((s) => `r##"${s}"#"##`),
);

const hexBytes: Arb = fc
  .tuple(fc.array(fc.tuple(fc.constantFrom(':', '-', '.'), hex2), { minLength: 1, maxLength: 3 }), hex2, hexDigitsCase)
  .map(([rest, first, upper]) => {
    const s = first + rest.map(([sep, h]) => sep + h).join('');
    return upper ? s.toUpperCase() : s;
  });

const bytesLiteral: Arb = fc.oneof(quoted, raw, hexBytes);
// As a function argument a token starting with a digit is read as an integer (the
// engine's order: IP, integer, hex bytes), so hex bytes there start with a letter.
const hexBytesArg: Arb = fc.tuple(fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f', 'A', 'F'), hexBytes).map(([l, h]) => l + h.slice(1));
const bytesArgLiteral: Arb = fc.oneof(quoted, raw, hexBytesArg);

/** Valid regular expressions as written after `matches` (regex-literal lexing of quoted strings). */
const regexLiteral: Arb = fc.constantFrom(
  '"^/api/"',
  '"\\d+\\.php$"',
  '"[a-z\\"]+"',
  '"[a-z"\\]]+\\d{1,10}\\""',
  '"(?i)^admin"',
  'r"^\\w+$"',
  'r#"a"b"#',
  '""',
);

const wildcardLiteral: Arb = fc.constantFrom('"*.example.com"', '"/a/*/b"', 'r"*.Example.*"', '"\\\\*x"', 'r"\\*"', '""');

const decimal = fc.integer({ min: -100000, max: 100000 }).map(String);
const intLiteral: Arb = fc.oneof(
  decimal,
  fc.integer({ min: 0, max: 0xffff }).map((n) => '0x' + n.toString(16)),
  fc.integer({ min: 1, max: 0o777 }).map((n) => '0' + n.toString(8)),
);
const intRange: Arb = fc
  .tuple(fc.integer({ min: -1000, max: 1000 }), fc.integer({ min: 0, max: 1000 }))
  .map(([a, d]) => `${a}..${a + d}`);

const u32 = fc.integer({ min: 0, max: 0xffffffff });
const ipv4 = (n: number): string => [24, 16, 8, 0].map((s) => (n >>> s) & 255).join('.');
const ipv4Literal: Arb = u32.map(ipv4);
const ipv6Literal: Arb = fc.oneof(
  fc.constantFrom('::1', '::', '2001:db8::1', '2001:DB8:0:0:0:0:0:1', '::ffff:192.0.2.1', 'fe80::1:2'),
  fc.array(fc.integer({ min: 0, max: 0xffff }), { minLength: 8, maxLength: 8 }).map((g) => g.map((x) => x.toString(16)).join(':')),
);
const ipLiteral: Arb = fc.oneof(ipv4Literal, ipv6Literal);
const ipv4Cidr: Arb = fc.tuple(u32, fc.integer({ min: 0, max: 32 })).map(([n, len]) => {
  const mask = len === 0 ? 0 : (0xffffffff << (32 - len)) >>> 0;
  return `${ipv4((n & mask) >>> 0)}/${len}`;
});
const ipv4Range: Arb = fc.tuple(u32, u32).map(([a, b]) => `${ipv4(Math.min(a, b))}..${ipv4(Math.max(a, b))}`);
const ipSetItem: Arb = fc.oneof(ipLiteral, ipv4Cidr, ipv4Range, fc.constantFrom('2001:db8::/32', '::/0'));

function set(item: Arb): Arb {
  return fc
    .tuple(ws0, fc.array(fc.tuple(item, ws1), { maxLength: 6 }))
    .map(([lead, items]) => `{${lead}${items.map(([i, w]) => i + w).join('')}}`);
}

const BYTES_FIELDS = ['http.host', 'http.request.uri.path', 'http.request.uri.query', 'http.request.method', 'http.user_agent', 'http.cookie', 'raw.http.request.uri.path'];
const INT_FIELDS = ['cf.edge.server_port', 'cf.threat_score', 'ip.src.asnum', 'http.request.timestamp.sec'];
const BOOL_FIELDS = ['ssl', 'http.request.headers.truncated'];
const MAP_FIELDS = ['http.request.headers', 'http.request.uri.args'];
const ARRAY_FIELDS = ['http.request.headers.names', 'http.request.uri.args.values'];

const bytesField: Arb = fc.constantFrom(...BYTES_FIELDS);
const mapKey: Arb = fc.constantFrom('"x"', '"content-type"', '"x-a"', '"é"', '""');
const arrayIndex: Arb = fc.constantFrom('0', '1', '0x1', '010');

/** `map[ "k" ]`: spaces allowed inside the brackets, never before `[`. */
const mapEntry: Arb = seq(fc.constantFrom(...MAP_FIELDS), '[', ws0, mapKey, ws0, ']');

const bytesValue: Arb = fc.oneof(
  { weight: 4, arbitrary: bytesField },
  seq(mapEntry, '[', ws0, arrayIndex, ws0, ']'),
  seq(fc.constantFrom('lower', 'upper'), ws0, '(', ws0, bytesField, ws0, ')'),
  seq('concat(', ws0, bytesField, ws0, ',', ws0, bytesArgLiteral, ws0, ')'),
);
const intValue: Arb = fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...INT_FIELDS) }, seq('len(', ws0, bytesField, ws0, ')'));

const op = (...ops: string[]): Arb => fc.constantFrom(...ops);
const ORDER = ['eq', '==', 'ne', '!=', 'lt', '<', 'le', '<=', 'gt', '>', 'ge', '>='];

const bytesComparison: Arb = fc.oneof(
  seq(bytesValue, ws1, op(...ORDER, 'contains'), ws1, bytesLiteral),
  seq(bytesValue, ws1, op('matches', '~'), ws1, regexLiteral),
  seq(bytesValue, ws1, op('wildcard', 'strict wildcard'), ws1, wildcardLiteral),
  seq(bytesValue, ws1, 'in', ws1, set(bytesLiteral)),
  seq(bytesField, ws1, op('eq', '==', 'ne', '!=', 'lt', 'ge'), ws1, bytesValue),
);
const intComparison: Arb = fc.oneof(
  seq(intValue, ws1, op(...ORDER, '&', 'bitwise_and'), ws1, intLiteral),
  seq(intValue, ws1, 'in', ws1, set(fc.oneof(intLiteral, intRange))),
  seq(fc.constantFrom(...INT_FIELDS), ws1, op('eq', 'ne', 'gt'), ws1, intValue),
);
const ipComparison: Arb = fc.oneof(
  seq('ip.src', ws1, op('eq', '==', 'ne', '!=', 'lt', 'ge'), ws1, ipLiteral),
  seq('ip.src', ws1, 'in', ws1, fc.oneof(set(ipSetItem), fc.constantFrom('$office_network', '$cf.open_proxies'))),
);
const boolAtom: Arb = fc.oneof(
  fc.constantFrom(...BOOL_FIELDS),
  seq(fc.constantFrom('starts_with', 'ends_with'), ws0, '(', ws0, bytesField, ws0, ',', ws0, bytesArgLiteral, ws0, ')'),
  seq('has_key(', ws0, fc.constantFrom(...MAP_FIELDS), ws0, ',', ws0, quoted, ws0, ')'),
);

/** Element-wise conditions (Array<Bool>) for `any(…)` / `all(…)`. */
const eachValue: Arb = fc.oneof(seq(mapEntry, '[*]'), seq(fc.constantFrom(...ARRAY_FIELDS), '[', ws0, '*', ws0, ']'));
const eachCondition: Arb = seq(eachValue, ws1, op('eq', '==', 'ne', 'contains'), ws1, bytesLiteral);
const arrayBool: Arb = fc.oneof(
  eachCondition,
  seq(eachValue, ws1, op('matches', '~'), ws1, regexLiteral),
  seq(fc.constantFrom('not', '!'), ws1, eachValue, ws1, 'in', ws1, set(bytesLiteral)),
  seq('(', ws0, eachCondition, ws1, op('or', '||', 'and', '&&', 'xor', '^^'), ws1, eachCondition, ws0, ')'),
  seq('lower(', ws0, eachValue, ws0, ')[*]', ws1, op('eq', 'ne'), ws1, quoted),
);
const quantifier: Arb = seq(fc.constantFrom('any', 'all'), ws0, '(', ws0, arrayBool, ws0, ')');

const atom: Arb = fc.oneof(bytesComparison, intComparison, ipComparison, boolAtom, quantifier);
const LOGICAL_OPS = ['and', '&&', 'or', '||', 'xor', '^^'];

export const { expr: validExpression } = fc.letrec<{ expr: string }>((tie) => ({
  expr: fc.oneof(
    { maxDepth: 3, depthIdentifier: 'expr' },
    { weight: 3, arbitrary: atom },
    seq(fc.constantFrom('not', '!'), ws1, tie('expr')),
    seq('!', tie('expr')),
    seq('(', ws0, tie('expr'), ws0, ')'),
    fc
      .tuple(tie('expr'), fc.array(fc.tuple(ws1, fc.constantFrom(...LOGICAL_OPS), ws1, tie('expr')), { minLength: 1, maxLength: 3 }))
      .map(([first, rest]) => first + rest.map((r) => r.join('')).join('')),
  ),
}));

/** A valid expression with some of its white space (outside string literals) removed: odd token adjacency. */
export const squeezedExpression: Arb = fc.tuple(validExpression, fc.infiniteStream(fc.boolean())).map(([text, drops]) =>
  text
    .split(/(r#*"[^"]*"#*|"(?:\\[\s\S]|[^"\\])*")/)
    .map((piece, i) => (i % 2 === 1 ? piece : piece.replace(/[ \r\n]+/g, (w) => (drops.next().value ? '' : w))))
    .join(''),
);
