/**
 * A hand-written parser for well-formed input: rules.ohm transcribed rule by rule as a
 * recursive-descent PEG (ordered choice, greedy repetition, the same lookaheads), building
 * the same tree as parse.ts's ohm semantics, spans included. It is ~50× faster than ohm on
 * valid text, which is what the CLI, the service and the proxy check all day.
 *
 * It never reports an error: on any failure it returns undefined and parse.ts runs ohm,
 * which stays the specification and words every syntax error. Property tests
 * (test/unit/language/fastParse.test.ts) assert that wherever this parser returns a tree,
 * ohm returns a deep-equal one.
 *
 * How ohm reads the grammar, mirrored here: in a syntactic (capitalised) rule, spaces
 * (space, CR, LF) are skipped before every rule application and terminal, lookaheads
 * included; a failed element restores the position from before its skip, so no node's span
 * ends in white space. Lexical (lower-case) rules and `#index` skip nothing.
 */
import type * as A from './ast';
import { operatorOf } from './scheme/operators';

/** Deeper than this, ohm's own handling (its stack limit) decides. */
const MAX_DEPTH = 100;

class Bail {}
const BAIL = new Bail();

const SP = 32;
const CR = 13;
const LF = 10;

function isIdentChar(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 95;
}

function isHex(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 97 && c <= 102) || (c >= 65 && c <= 70);
}

/** `-`, `.`, `:` */
function isBareSep(c: number): boolean {
  return c === 45 || c === 46 || c === 58;
}

/** cmpOp's alternatives, in the grammar's order (the first that matches wins). */
const CMP_OPS = ['eq', '==', 'ne', '!=', 'ge', '>=', 'le', '<=', 'gt', '>', 'lt', '<', 'bitwise_and', '&', 'contains'];

/** Parses `input` (outer white space already blanked) or returns undefined. */
export function fastParse(input: string): A.Expr | undefined {
  const p = new Parser(input);
  try {
    p.skip();
    const e = p.or();
    if (e === undefined) return undefined;
    p.skip();
    return p.pos === input.length ? e : undefined;
  } catch (e) {
    if (e === BAIL) return undefined;
    throw e;
  }
}

class Parser {
  pos = 0;
  private depth = 0;

  constructor(private readonly s: string) {}

  skip(): void {
    const s = this.s;
    let c: number;
    while ((c = s.charCodeAt(this.pos)) === SP || c === CR || c === LF) this.pos++;
  }

  private at(text: string): boolean {
    return this.s.startsWith(text, this.pos);
  }

  private code(): number {
    return this.s.charCodeAt(this.pos);
  }

  /** A syntactic terminal: skip, then `c`; the position is restored on failure. */
  private char(c: number): boolean {
    const save = this.pos;
    this.skip();
    if (this.code() === c) {
      this.pos++;
      return true;
    }
    this.pos = save;
    return false;
  }

  /** One of the literal alternatives at the current position (lexical): its text. */
  private oneOf(texts: readonly string[]): string | undefined {
    for (const t of texts) if (this.at(t)) return t;
    return undefined;
  }

  /** Applies a syntactic-context token rule: skip, then the token; restores on failure. */
  private token(texts: readonly string[]): A.Token | undefined {
    const save = this.pos;
    this.skip();
    const t = this.oneOf(texts);
    if (t === undefined) {
      this.pos = save;
      return undefined;
    }
    const start = this.pos;
    this.pos += t.length;
    return { text: t, span: { start, end: this.pos } };
  }

  // --- Logic: Or = Xor (orOp Xor)*, Xor = And (xorOp And)*, And = Simple (andOp Simple)* ---

  or(): A.Expr | undefined {
    return this.logical('or', ['or', '||'], () => this.xor());
  }

  private xor(): A.Expr | undefined {
    return this.logical('xor', ['xor', '^^'], () => this.and());
  }

  private and(): A.Expr | undefined {
    return this.logical('and', ['and', '&&'], () => this.simple());
  }

  private logical(op: A.LogicalOp, texts: readonly string[], item: () => A.Expr | undefined): A.Expr | undefined {
    this.skip();
    const start = this.pos;
    const first = item();
    if (first === undefined) return undefined;
    let items: A.Expr[] | undefined;
    let ops: A.Token[] | undefined;
    for (;;) {
      const save = this.pos;
      const t = this.token(texts);
      if (t === undefined) break;
      this.skip();
      const next = item();
      if (next === undefined) {
        this.pos = save;
        break;
      }
      (items ??= [first]).push(next);
      (ops ??= []).push(t);
    }
    if (items === undefined) return first;
    return { kind: 'logical', op, items, ops: ops!, span: { start, end: this.pos } };
  }

  // --- Simple = "(" Or ")" | notOp Simple | quantName "(" Arg ")" | Comparison ---

  private simple(): A.Expr | undefined {
    if (++this.depth > MAX_DEPTH) throw BAIL;
    try {
      return this.simpleAlternatives();
    } finally {
      this.depth--;
    }
  }

  private simpleAlternatives(): A.Expr | undefined {
    const save = this.pos;
    this.skip();
    const start = this.pos;
    // -- group
    if (this.code() === 40) {
      this.pos++;
      this.skip();
      const inner = this.or();
      if (inner !== undefined && this.char(41)) return { kind: 'group', inner, span: { start, end: this.pos } };
      this.pos = start;
    }
    // -- not
    const not = this.oneOf(['not', '!']);
    if (not !== undefined) {
      this.pos += not.length;
      const token: A.Token = { text: not, span: { start, end: this.pos } };
      this.skip();
      const operand = this.simple();
      if (operand !== undefined) return { kind: 'not', token, operand, span: { start, end: this.pos } };
      this.pos = start;
    }
    // -- quantifier
    if (this.quantNameAt()) {
      const name = this.s.slice(start, start + 3) as 'any' | 'all';
      this.pos += 3;
      if (this.char(40)) {
        this.skip();
        const arg = this.arg();
        if (arg !== undefined && this.char(41)) {
          return { kind: 'quantifier', name, nameSpan: { start, end: start + 3 }, arg, span: { start, end: this.pos } };
        }
      }
      this.pos = start;
    }
    const c = this.comparison();
    if (c === undefined) this.pos = save;
    return c;
  }

  /** quantName = ("any" | "all") &(space* "("), at the current position. */
  private quantNameAt(): boolean {
    if (!this.at('any') && !this.at('all')) return false;
    const s = this.s;
    let i = this.pos + 3;
    let c: number;
    while ((c = s.charCodeAt(i)) === SP || c === CR || c === LF) i++;
    return c === 40;
  }

  /** Comparison = ValueExpr Test? (at a non-space). */
  private comparison(): A.ComparisonExpr | undefined {
    const start = this.pos;
    const lhs = this.valueExpr();
    if (lhs === undefined) return undefined;
    const t = this.test();
    if (t === undefined) return { kind: 'comparison', lhs, span: { start, end: this.pos } };
    return { kind: 'comparison', lhs, op: t.op, rhs: t.rhs, span: { start, end: this.pos } };
  }

  // --- Test = inOp InRhs | matchOp RegexRhs | wildcardOp PatternRhs | cmpOp Rhs ---

  private test(): { op: A.OperatorToken; rhs: A.Rhs } | undefined {
    const save = this.pos;
    this.skip();
    const start = this.pos;
    if (this.at('in')) {
      this.pos += 2;
      const end = this.pos;
      this.skip();
      const rhs = this.code() === 123 ? this.set() : this.code() === 36 ? this.listRef() : undefined;
      if (rhs !== undefined) return this.testOf('in', start, end, rhs);
      this.pos = start;
    }
    const m = this.oneOf(['matches', '~']);
    if (m !== undefined) {
      this.pos += m.length;
      const end = this.pos;
      this.skip();
      const rhs = this.regexString() ?? this.rawString();
      if (rhs !== undefined) return this.testOf(m, start, end, rhs);
      this.pos = start;
    }
    const w = this.oneOf(['wildcard', 'strict wildcard']);
    if (w !== undefined) {
      this.pos += w.length;
      const end = this.pos;
      this.skip();
      const rhs = this.quotedString() ?? this.rawString();
      if (rhs !== undefined) return this.testOf(w, start, end, rhs);
      this.pos = start;
    }
    const op = this.oneOf(CMP_OPS);
    if (op !== undefined) {
      this.pos += op.length;
      const end = this.pos;
      this.skip();
      const rhs = this.quotedString() ?? this.rawString() ?? this.bareLiteral() ?? this.valueExpr();
      if (rhs !== undefined) return this.testOf(op, start, end, rhs);
    }
    this.pos = save;
    return undefined;
  }

  private testOf(text: string, start: number, end: number, rhs: A.Rhs): { op: A.OperatorToken; rhs: A.Rhs } {
    return { op: { op: operatorOf(text)!, text, span: { start, end } }, rhs };
  }

  /** Set = "{" SetItem* "}"; SetItem = quotedString | rawString | bareLiteral | "," */
  private set(): A.SetLiteral | undefined {
    const start = this.pos;
    this.pos++;
    const items: A.Literal[] = [];
    for (;;) {
      this.skip();
      const item = this.quotedString() ?? this.rawString() ?? this.bareLiteral() ?? this.comma();
      if (item === undefined) break;
      items.push(item);
    }
    if (this.code() !== 125) return undefined;
    this.pos++;
    return { kind: 'set', items, span: { start, end: this.pos } };
  }

  private comma(): A.Literal | undefined {
    if (this.code() !== 44) return undefined;
    this.pos++;
    return { kind: 'literal', form: 'bare', text: ',', span: { start: this.pos - 1, end: this.pos } };
  }

  /** listRef = "$" (identChar | ".")* */
  private listRef(): A.ListRef {
    const start = this.pos++;
    let c: number;
    while (isIdentChar((c = this.code())) || c === 46) this.pos++;
    return { kind: 'list', name: this.s.slice(start + 1, this.pos), span: { start, end: this.pos } };
  }

  // --- Values: ValueExpr = Primary #index*, Primary = Call | identifier ---

  private valueExpr(): A.ValueExpr | undefined {
    let target: A.ValueExpr | undefined = this.call() ?? this.identifier();
    if (target === undefined) return undefined;
    while (this.code() === 91) {
      const key = this.index();
      if (key === undefined) break;
      target = { kind: 'index', target, key, span: { start: target.span.start, end: this.pos } };
    }
    return target;
  }

  /** Call = ~quantName identifier "(" ListOf<Arg, ","> ")" (at a non-space). */
  private call(): A.FunctionCall | undefined {
    if (this.quantNameAt()) return undefined;
    const start = this.pos;
    const name = this.identifier();
    if (name === undefined) return undefined;
    if (!this.char(40)) {
      this.pos = start;
      return undefined;
    }
    if (++this.depth > MAX_DEPTH) throw BAIL;
    const args: A.Argument[] = [];
    const save = this.pos;
    this.skip();
    const first = this.arg();
    if (first === undefined) this.pos = save;
    else {
      args.push(first);
      for (;;) {
        const before = this.pos;
        if (!this.char(44)) break;
        this.skip();
        const next = this.arg();
        if (next === undefined) {
          this.pos = before;
          break;
        }
        args.push(next);
      }
    }
    this.depth--;
    if (!this.char(41)) {
      this.pos = start;
      return undefined;
    }
    return { kind: 'call', name: name.name, nameSpan: name.span, args, span: { start, end: this.pos } };
  }

  /** Arg: &logicalStart Or | quotedString | rawString | bareLiteral ~identChar | ValueExpr Test? (at a non-space). */
  private arg(): A.Argument | undefined {
    const start = this.pos;
    if (this.code() === 40 || this.at('not') || this.code() === 33 || this.quantNameAt()) {
      const e = this.or();
      if (e !== undefined) return e;
      this.pos = start;
    }
    const lit = this.quotedString() ?? this.rawString();
    if (lit !== undefined) return lit;
    const bare = this.bareLiteral();
    if (bare !== undefined) {
      const end = this.pos;
      this.skip();
      const glued = isIdentChar(this.code());
      this.pos = end;
      if (!glued) return bare;
      this.pos = start;
    }
    const value = this.valueExpr();
    if (value === undefined) return undefined;
    const t = this.test();
    if (t === undefined) return value;
    return { kind: 'comparison', lhs: value, op: t.op, rhs: t.rhs, span: { start, end: this.pos } };
  }

  /** identifier = identChar+ ("." identChar*)* */
  private identifier(): A.FieldRef | undefined {
    const s = this.s;
    const start = this.pos;
    let i = start;
    while (isIdentChar(s.charCodeAt(i))) i++;
    if (i === start) return undefined;
    while (s.charCodeAt(i) === 46) {
      i++;
      while (isIdentChar(s.charCodeAt(i))) i++;
    }
    this.pos = i;
    return { kind: 'field', name: s.slice(start, i), span: { start, end: i } };
  }

  /** index = "[" space* indexKey space* "]"; indexKey = "*" | quotedString | bareLiteral */
  private index(): A.IndexKey | undefined {
    const start = this.pos;
    this.pos++;
    this.skip();
    let literal: A.Literal | undefined;
    if (this.code() === 42) this.pos++;
    else if ((literal = this.quotedString() ?? this.bareLiteral()) === undefined) {
      this.pos = start;
      return undefined;
    }
    this.skip();
    if (this.code() !== 93) {
      this.pos = start;
      return undefined;
    }
    this.pos++;
    const span = { start, end: this.pos };
    return literal === undefined ? { kind: 'each', span } : { kind: 'key', literal, span };
  }

  // --- Literals (lexical; each returns undefined with the position unchanged on failure) ---

  private literal(form: A.Literal['form'], start: number): A.Literal {
    return { kind: 'literal', form, text: this.s.slice(start, this.pos), span: { start, end: this.pos } };
  }

  /** quotedString = "\"" (("\\" | ~"\"" "") any)* "\"" */
  private quotedString(): A.Literal | undefined {
    const s = this.s;
    const start = this.pos;
    if (s.charCodeAt(start) !== 34) return undefined;
    for (let i = start + 1; i < s.length; i++) {
      const c = s.charCodeAt(i);
      if (c === 34) {
        this.pos = i + 1;
        return this.literal('quoted', start);
      }
      if (c === 92) i++;
    }
    return undefined;
  }

  /** regexString: `"`, then escapes and `[…]` classes in which `"` does not close it. */
  private regexString(): A.Literal | undefined {
    const s = this.s;
    const start = this.pos;
    if (s.charCodeAt(start) !== 34) return undefined;
    let i = start + 1;
    while (i < s.length) {
      const c = s.charCodeAt(i);
      if (c === 34) {
        this.pos = i + 1;
        return this.literal('quoted', start);
      }
      if (c === 91) {
        // regexClass = "[" (("\\" | ~"]" "") any)* "]"; an unclosed class fails the string.
        let j = i + 1;
        for (; j < s.length && s.charCodeAt(j) !== 93; j++) if (s.charCodeAt(j) === 92) j++;
        if (j >= s.length) return undefined;
        i = j + 1;
      } else if (c === 92) {
        if (i + 1 >= s.length) return undefined;
        i += 2;
      } else i++;
    }
    return undefined;
  }

  /** rawString = "r" then n `#`, `"`, the body, and the first `"` followed by n `#`. */
  private rawString(): A.Literal | undefined {
    const s = this.s;
    const start = this.pos;
    if (s.charCodeAt(start) !== 114) return undefined;
    let i = start + 1;
    while (s.charCodeAt(i) === 35) i++;
    if (s.charCodeAt(i) !== 34) return undefined;
    const close = '"' + '#'.repeat(i - start - 1);
    const end = s.indexOf(close, i + 1);
    if (end < 0) return undefined;
    this.pos = end + close.length;
    return this.literal('raw', start);
  }

  /**
   * bareLiteral = bareStart bareChar* (~identChar "" | &gluedWord)
   * bareStart = digit | "-" | "." | ":" | "/" | hexLed; hexLed = &(hex+ ("-" | "." | ":")) hex
   * bareChar = ~("and" | "xor") ("-" | "." | ":" | "/" | hex | "x" | "X")
   */
  private bareLiteral(): A.Literal | undefined {
    const s = this.s;
    const start = this.pos;
    const c0 = s.charCodeAt(start);
    if (!((c0 >= 48 && c0 <= 57) || isBareSep(c0) || c0 === 47)) {
      let j = start;
      while (isHex(s.charCodeAt(j))) j++;
      if (j === start || !isBareSep(s.charCodeAt(j))) return undefined;
    }
    let i = start + 1;
    for (;;) {
      const c = s.charCodeAt(i);
      if ((c === 97 && s.startsWith('and', i)) || (c === 120 && s.startsWith('xor', i))) break;
      if (isHex(c) || isBareSep(c) || c === 47 || c === 120 || c === 88) i++;
      else break;
    }
    if (isIdentChar(s.charCodeAt(i)) && !(s.startsWith('and', i) || s.startsWith('or', i) || s.startsWith('xor', i) || s.startsWith('not', i))) return undefined;
    this.pos = i;
    return this.literal('bare', start);
  }
}
