/**
 * Parsing: text -> syntax tree (ast.ts) or one syntax diagnostic. Never throws.
 *
 * The grammar (rules.ohm) is scheme-free; a failure is worded like the engine's
 * error at the rightmost failure position. The engine's wording sometimes depends on
 * the type of the operand before the failure (`ssl "a"` is "unrecognised input",
 * `http.host "a"` is "expected ComparisonOp"), so the caller may pass `typeOf`.
 */
import type { MatchResult, Node as OhmNode } from 'ohm-js';
import grammar from './rules.ohm-bundle';
import type * as A from './ast';
import { error, type Diagnostic, type DiagnosticCode } from './diagnostics';
import { operatorOf } from './scheme/operators';
import { identifierBefore, mistypedOperatorAt, operandBefore } from './operatorTypo';
import { unterminatedStringStart } from './scan';
import { fastParse } from './fastParse';
import type { Type } from './types';

export interface ParseOptions {
  /** Type of a field or a function's return, used only to word syntax errors like the engine. */
  readonly typeOf?: (name: string) => Type | undefined;
  /**
   * Matches the (whitespace-normalised) input, in place of a fresh `grammar.match`. The
   * editor passes an incremental matcher (`grammar.matcher()` + `replaceInputRange`)
   * so that an edit re-parses only around the change.
   */
  readonly match?: (input: string) => MatchResult;
}

/** The grammar, for callers that keep an incremental matcher. */
export const rulesGrammar = grammar;

export interface ParseResult {
  readonly ast?: A.Expr;
  /** Empty when `ast` is present. */
  readonly diagnostics: readonly Diagnostic[];
}

const semantics = grammar.createSemantics();

function span(node: OhmNode): A.Span {
  return { start: node.source.startIdx, end: node.source.endIdx };
}

function token(node: OhmNode): A.Token {
  return { text: node.sourceString, span: span(node) };
}

/** Builds a flattened logical node from `first (op next)*`, or returns `first` alone. */
function logical(node: OhmNode, op: A.LogicalOp, first: OhmNode, ops: OhmNode, rest: OhmNode): A.Expr {
  const head = first.toAST() as A.Expr;
  if (rest.numChildren === 0) return head;
  return {
    kind: 'logical',
    op,
    items: [head, ...rest.children.map((c) => c.toAST() as A.Expr)],
    ops: ops.children.map(token),
    span: span(node),
  };
}

function literal(form: A.Literal['form'], node: OhmNode): A.Literal {
  return { kind: 'literal', form, text: node.sourceString, span: span(node) };
}

/** A value followed by an optional test becomes a comparison; a bare value stays a comparison without op. */
function comparison(node: OhmNode, value: OhmNode, test: OhmNode): A.ComparisonExpr {
  const lhs = value.toAST() as A.ValueExpr;
  if (test.numChildren === 0) return { kind: 'comparison', lhs, span: span(node) };
  const t = test.children[0].toAST() as { op: A.OperatorToken; rhs: A.Rhs };
  return { kind: 'comparison', lhs, op: t.op, rhs: t.rhs, span: span(node) };
}

function test(opNode: OhmNode, rhsNode: OhmNode): { op: A.OperatorToken; rhs: A.Rhs } {
  const text = opNode.sourceString;
  // The grammar accepts only the table's spellings.
  return { op: { op: operatorOf(text)!, text, span: span(opNode) }, rhs: rhsNode.toAST() as A.Rhs };
}

semantics.addOperation<unknown>('toAST', {
  Filter(or, _end) {
    return or.toAST();
  },
  Or(first, ops, rest) {
    return logical(this, 'or', first, ops, rest);
  },
  Xor(first, ops, rest) {
    return logical(this, 'xor', first, ops, rest);
  },
  And(first, ops, rest) {
    return logical(this, 'and', first, ops, rest);
  },
  Simple_group(_open, inner, _close): A.GroupExpr {
    return { kind: 'group', inner: inner.toAST() as A.Expr, span: span(this) };
  },
  Simple_not(op, operand): A.NotExpr {
    return { kind: 'not', token: token(op), operand: operand.toAST() as A.Expr, span: span(this) };
  },
  Simple_quantifier(name, _open, arg, _close): A.QuantifierExpr {
    return {
      kind: 'quantifier',
      name: name.sourceString.slice(0, 3) as 'any' | 'all',
      nameSpan: { start: name.source.startIdx, end: name.source.startIdx + 3 },
      arg: arg.toAST() as A.Argument,
      span: span(this),
    };
  },
  Comparison(value, test) {
    return comparison(this, value, test);
  },
  Test_in(op, rhs) {
    return test(op, rhs);
  },
  Test_matches(op, rhs) {
    return test(op, rhs);
  },
  Test_wildcard(op, rhs) {
    return test(op, rhs);
  },
  Test_cmp(op, rhs) {
    return test(op, rhs);
  },
  ValueExpr(primary, indexes) {
    let target = primary.toAST() as A.ValueExpr;
    for (const ix of indexes.children) {
      const key = ix.toAST() as A.IndexKey;
      target = { kind: 'index', target, key, span: { start: target.span.start, end: ix.source.endIdx } };
    }
    return target;
  },
  Call(name, _open, args, _close): A.FunctionCall {
    return {
      kind: 'call',
      name: name.sourceString,
      nameSpan: span(name),
      args: args.asIteration().children.map((a) => a.toAST() as A.Argument),
      span: span(this),
    };
  },
  Arg_logical(_lookahead, or) {
    return or.toAST();
  },
  Arg_quoted(s) {
    return literal('quoted', s);
  },
  Arg_raw(s) {
    return literal('raw', s);
  },
  Arg_bare(s) {
    return literal('bare', s);
  },
  Arg_value(value, test) {
    // A value with no comparison stays a value (it may be Bytes, Int, …).
    if (test.numChildren === 0) return value.toAST();
    return comparison(this, value, test);
  },
  Set(_open, items, _close): A.SetLiteral {
    return { kind: 'set', items: items.children.map((i) => i.toAST() as A.Literal), span: span(this) };
  },
  SetItem(item) {
    return item.toAST();
  },
  identifier(_a, _b, _c): A.FieldRef {
    return { kind: 'field', name: this.sourceString, span: span(this) };
  },
  index(_open, _s1, key, _s2, _close): A.IndexKey {
    if (key.sourceString === '*') return { kind: 'each', span: span(this) };
    return { kind: 'key', literal: key.toAST() as A.Literal, span: span(this) };
  },
  indexKey(k) {
    return k.toAST();
  },
  listRef(_dollar, _name): A.ListRef {
    return { kind: 'list', name: this.sourceString.slice(1), span: span(this) };
  },
  bareLiteral(_first, _rest, _end) {
    return literal('bare', this);
  },
  quotedString(_o, _a, _b, _c) {
    return literal('quoted', this);
  },
  regexString(_o, _a, _c) {
    return literal('quoted', this);
  },
  rawString(_r, _tail) {
    return literal('raw', this);
  },
  _terminal() {
    // Only reached for the `,` set item: a bare token the checker explains.
    return literal('bare', this);
  },
});

/**
 * The engine trims the input with Unicode's definition of white space first. Blanking
 * those characters (all single UTF-16 units) keeps every offset equal to the source's.
 */
function blankOuterWhitespace(text: string): string {
  const lead = text.length - text.trimStart().length;
  const trail = text.length - text.trimEnd().length;
  if (lead === 0 && trail === 0) return text;
  if (lead === text.length) return ' '.repeat(text.length);
  return ' '.repeat(lead) + text.slice(lead, text.length - trail) + ' '.repeat(trail);
}

export function parseExpression(text: string, options: ParseOptions = {}): ParseResult {
  return parseWith(text, options, true);
}

/** The grammar alone, without the hand-written fast path (tests compare the two). */
export function parseWithGrammar(text: string, options: ParseOptions = {}): ParseResult {
  return parseWith(text, options, false);
}

function parseWith(text: string, options: ParseOptions, fast: boolean): ParseResult {
  const input = blankOuterWhitespace(text);
  if (input.trim() === '') {
    return {
      diagnostics: [
        error('empty-expression', 0, text.length, 'expected identifier character', 'Write an expression, e.g. `http.host eq "example.com"`.'),
      ],
    };
  }
  // The engine refuses more than 255 `#`s; checking first also keeps the grammar's
  // per-`#` recursion bounded.
  const hashes = /r(#{256,})"/.exec(input);
  if (hashes) {
    return {
      diagnostics: [
        error('invalid-raw-string', hashes.index, hashes.index + hashes[0].length, "invalid raw string hash count, there can't be more than 255 #s", 'Use fewer `#`: one more than the longest run of `#` after a `"` inside the string is enough.'),
      ],
    };
  }
  // Well-formed input takes the hand-written parser (fastParse.ts); anything it does not
  // accept goes to ohm, which words every error.
  const ast = fast ? fastParse(input) : undefined;
  if (ast) return { ast, diagnostics: [] };
  let result: MatchResult;
  try {
    result = options.match ? options.match(input) : grammar.match(input);
  } catch (e) {
    // Only pathological nesting can exhaust the stack; the engine's own limit is 128.
    if (e instanceof RangeError) {
      return { diagnostics: [error('nesting-too-deep', 0, text.length, 'maximum nesting depth exceeded (limit: 128)', NESTING_HINT)] };
    }
    throw e;
  }
  if (result.succeeded()) {
    try {
      return { ast: semantics(result).toAST() as A.Expr, diagnostics: [] };
    } catch (e) {
      if (e instanceof RangeError) {
        return { diagnostics: [error('nesting-too-deep', 0, text.length, 'maximum nesting depth exceeded (limit: 128)', NESTING_HINT)] };
      }
      throw e;
    }
  }
  return { diagnostics: [describeFailure(input, result, options)] };
}

export const NESTING_HINT = 'Flatten the expression: remove redundant parentheses and `not`s.';

const TAB_HINT = 'A tab is not white space in the Rules language (only spaces and line breaks are). Replace it with a space.';

/** The failure details ohm keeps (getRightmostFailures is not in its typings). */
interface Failed {
  getRightmostFailurePosition(): number;
  getRightmostFailures(): { getText(): string }[];
}

function describeFailure(text: string, result: MatchResult, options: ParseOptions): Diagnostic {
  const failed = result as unknown as Failed;
  const pos = failed.getRightmostFailurePosition();
  const expected = new Set(failed.getRightmostFailures().map((f) => f.getText()));

  if (expected.has('any character')) {
    const start = unterminatedStringStart(text) ?? pos;
    return error(
      'unterminated-string',
      start,
      text.trimEnd().length,
      'could not find an ending quote',
      'Close the string with `"`. Inside a quoted string write a quote as `\\"` and a backslash as `\\\\`, or use a raw string `r#"…"#`.',
    );
  }

  const typo = mistypedOperatorAt(text, pos, options.typeOf);
  if (typo) return typo;
  const unknown = expected.has('ComparisonOp') ? unknownNameBefore(text, pos, options) : undefined;
  if (unknown) return unknown;
  const w = wording(text, pos, expected, options);
  const isTab = text[pos] === '\t';
  let end = w.toEnd ? Math.max(pos + 1, text.trimEnd().length) : tokenEnd(text, pos);
  if (isTab) for (end = pos + 1; text[end] === '\t'; end++);
  return error(isTab ? 'tab-character' : w.code, pos, Math.min(end, text.length), w.message, isTab ? TAB_HINT : w.hint, isTab ? { tab: true } : undefined);
}

/**
 * A name that is not a field or a known word, right before where a comparison operator was
 * expected (`ssl and and ssl`, `ssl and foo bar`): the engine looks the name up first and
 * reports it, not the operator missing after it.
 */
function unknownNameBefore(text: string, pos: number, options: ParseOptions): Diagnostic | undefined {
  const at = options.typeOf && identifierBefore(text, pos);
  const name = at && text.slice(at.start, at.end);
  // A number is no name; a known one is the operator's problem.
  if (!at || !name || !/^[A-Za-z_]/.test(name) || options.typeOf!(name) !== undefined) return undefined;
  const doubled = /^(and|or|xor|not)$/.test(name);
  const hint = doubled ? `\`${name}\` is read here as a field name: remove the doubled operator.` : 'Check the spelling of the field name.';
  return error('unknown-identifier', at.start, at.end, 'unknown identifier', hint);
}

interface Wording {
  code: DiagnosticCode;
  message: string;
  hint?: string;
  /** Underline the rest of the input (the engine's span for trailing garbage). */
  toEnd?: boolean;
}

function wording(text: string, pos: number, expected: Set<string>, options: ParseOptions): Wording {
  if (expected.has('quoted utf8 string or positive integer')) {
    return {
      code: 'invalid-index',
      message: 'expected literal "expected quoted utf8 string or positive integer"',
      hint: 'Index a map with a double-quoted key (`["content-type"]`), an array with a number (`[0]`), or every element with `[*]`.',
    };
  }
  // An unclosed set (the grammar takes `,` as a set item only to report it): the set wants its `}`.
  if (expected.has('}') && expected.has(',')) {
    return { code: 'syntax-error', message: 'expected literal "}"', hint: 'Close the set with `}`. Its values are separated by spaces, not commas: `{"a" "b"}`, `{80 443}`.' };
  }
  // Inside a call a bare value is complete, so the engine asks for the separator.
  if (expected.has(',')) {
    return { code: 'syntax-error', message: 'expected literal ","', hint: 'Separate function arguments with commas, and close the call with `)`. To combine conditions inside `any(…)`, wrap them in parentheses.' };
  }
  if (expected.has('ComparisonOp')) {
    const before = operandBefore(text, pos);
    const type = before !== undefined ? options.typeOf?.(before) : undefined;
    if (type?.kind !== 'Bool' && !(type?.kind === 'Array' && type.of.kind === 'Bool')) {
      return {
        code: 'expected-comparison-op',
        message: 'expected ComparisonOp',
        hint: 'Put an operator between the field and the value, e.g. `eq`, `contains`, `in`, `matches`.',
      };
    }
  }
  if (expected.has(')')) {
    return { code: 'syntax-error', message: 'expected literal ")"', hint: 'Close the parenthesis. Inside `any(…)`/`all(…)` only one comparison is allowed unless you wrap several in parentheses.' };
  }
  if (expected.has(']')) {
    return { code: 'syntax-error', message: 'expected literal "]"' };
  }
  if (expected.has('{')) {
    return { code: 'syntax-error', message: 'expected literal "{"', hint: 'After `in` write a set in braces, e.g. `{80 443}`, or a list, e.g. `$office_network`.' };
  }
  if (expected.has('r') && !expected.has('identifier')) {
    return { code: 'syntax-error', message: 'expected " or r', hint: 'Write the pattern as a quoted string `"…"` or a raw string `r"…"`.' };
  }
  if (expected.has('r') && expected.has('identifier')) {
    const lhs = lhsBeforeOperator(text, pos);
    const type = lhs !== undefined ? options.typeOf?.(lhs) : undefined;
    if (type?.kind === 'Int') return { code: 'invalid-integer', message: 'expected digit' };
    if (type?.kind === 'Ip') return { code: 'invalid-ip', message: 'expected IP address character' };
    return { code: 'syntax-error', message: 'expected " or r', hint: 'Write a value after the operator, e.g. a quoted string.' };
  }
  if (expected.has('identifier')) {
    return { code: 'syntax-error', message: 'expected identifier character', hint: 'A field, a function call, `not`, `any(…)` or `(` is expected here.' };
  }
  return {
    code: 'unrecognised-input',
    message: 'unrecognised input',
    hint: 'The expression is complete before this point. Logical operators are lower case (`and`, `or`, `not`), strings use double quotes, and a Bool field takes no operator.',
    toEnd: true,
  };
}

const IDENT = /[A-Za-z0-9_.]/;

/** The identifier before the operator that ends before `pos`: `tcp.port eq ` -> `tcp.port`. */
function lhsBeforeOperator(text: string, pos: number): string | undefined {
  let end = pos;
  while (end > 0 && /\s/.test(text[end - 1])) end--;
  let start = end;
  while (start > 0 && !/\s/.test(text[start - 1]) && !IDENT.test(text[start - 1])) start--;
  if (start === end) while (start > 0 && /[a-z_]/.test(text[start - 1])) start--;
  return operandBefore(text, start);
}

function tokenEnd(text: string, pos: number): number {
  if (pos >= text.length) return pos;
  let end = pos + 1;
  if (IDENT.test(text[pos])) while (end < text.length && IDENT.test(text[end])) end++;
  return end;
}
