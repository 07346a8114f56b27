/**
 * The syntax tree produced by `parse.ts`. It is scheme-free: literals are kept as
 * source text and interpreted by the checker according to the left-hand type, because
 * the engine lexes a right-hand side differently for Bytes, Int and Ip (`12:34` is two
 * bytes after `http.host eq`, an error after `tcp.port eq`).
 *
 * Every node records its `span`: UTF-16 offsets [start, end) into the source text.
 */
import type { Range } from './diagnostics';

export type Span = Range;

/** A logical expression (anything whose type is Bool or Array<Bool>). */
export type Expr = LogicalExpr | NotExpr | GroupExpr | QuantifierExpr | ComparisonExpr;

export type LogicalOp = 'and' | 'xor' | 'or';

export interface LogicalExpr {
  readonly kind: 'logical';
  readonly op: LogicalOp;
  /** Flattened, left to right (`a or b or c` has three items). */
  readonly items: readonly Expr[];
  /** The operator tokens between items, as written (`and` or `&&`). */
  readonly ops: readonly Token[];
  readonly span: Span;
}

export interface NotExpr {
  readonly kind: 'not';
  /** `not` or `!`, as written. */
  readonly token: Token;
  readonly operand: Expr;
  readonly span: Span;
}

/** `( … )`; kept so that the formatter and the nesting limit see the user's grouping. */
export interface GroupExpr {
  readonly kind: 'group';
  readonly inner: Expr;
  readonly span: Span;
}

export interface QuantifierExpr {
  readonly kind: 'quantifier';
  readonly name: 'any' | 'all';
  readonly nameSpan: Span;
  /** Must have type Array<Bool>; parsed like a function argument (§2.4). */
  readonly arg: Argument;
  readonly span: Span;
}

export type ComparisonOp =
  | 'eq'
  | 'ne'
  | 'lt'
  | 'le'
  | 'gt'
  | 'ge'
  | 'contains'
  | 'matches'
  | 'wildcard'
  | 'strict wildcard'
  | 'in'
  | 'bitwise_and';

export interface Token {
  /** The text as written: `==`, `eq`, `&&`, `and`, `strict wildcard`. */
  readonly text: string;
  readonly span: Span;
}

export interface OperatorToken extends Token {
  readonly op: ComparisonOp;
}

/**
 * A comparison `lhs op rhs`, or a bare operand (`ssl`, `starts_with(…)`, an
 * Array<Bool> field) when `op` is absent.
 */
export interface ComparisonExpr {
  readonly kind: 'comparison';
  readonly lhs: ValueExpr;
  readonly op?: OperatorToken;
  readonly rhs?: Rhs;
  readonly span: Span;
}

/** An index expression: a field or function call, optionally indexed. */
export type ValueExpr = FieldRef | FunctionCall | IndexAccess;

/** An identifier; whether it names a field or a function is the checker's business. */
export interface FieldRef {
  readonly kind: 'field';
  readonly name: string;
  readonly span: Span;
}

export interface FunctionCall {
  readonly kind: 'call';
  readonly name: string;
  readonly nameSpan: Span;
  readonly args: readonly Argument[];
  readonly span: Span;
}

export type IndexKey =
  | { readonly kind: 'each'; readonly span: Span } // [*]
  | { readonly kind: 'key'; readonly literal: Literal; readonly span: Span }; // [0], ["k"]

export interface IndexAccess {
  readonly kind: 'index';
  readonly target: ValueExpr;
  readonly key: IndexKey;
  readonly span: Span;
}

/** A function argument: a literal, or an expression (value or logical). */
export type Argument = Literal | ValueExpr | Expr;

/**
 * A literal exactly as written. `quoted` is `"…"` (decoded with the normal escapes,
 * or with regex-literal lexing after `matches`), `raw` is `r#"…"#`, and `bare` is any
 * unquoted token (integer, IP, CIDR, range `a..b`, hex bytes), read by the checker.
 */
export interface Literal {
  readonly kind: 'literal';
  readonly form: 'quoted' | 'raw' | 'bare';
  readonly text: string;
  readonly span: Span;
}

export interface SetLiteral {
  readonly kind: 'set';
  readonly items: readonly Literal[];
  readonly span: Span;
}

export interface ListRef {
  readonly kind: 'list';
  /** Without the `$`. */
  readonly name: string;
  readonly span: Span;
}

/** The right-hand side: a literal, a set, a `$list`, or (dynamic comparison) a value. */
export type Rhs = Literal | SetLiteral | ListRef | ValueExpr;

export function isExpr(node: Argument | Rhs): node is Expr {
  return (
    node.kind === 'logical' ||
    node.kind === 'not' ||
    node.kind === 'group' ||
    node.kind === 'quantifier' ||
    node.kind === 'comparison'
  );
}

/** Any node of the tree. */
export type Node = Expr | ValueExpr | Literal | SetLiteral | ListRef;

/** Every node of the tree, parents before children, in source order. */
export function nodesOf(root: Expr | Argument | Rhs): Node[] {
  const out: Node[] = [];
  const visit = (n: Expr | Argument | Rhs): void => {
    out.push(n);
    switch (n.kind) {
      case 'logical':
        return n.items.forEach(visit);
      case 'not':
        return visit(n.operand);
      case 'group':
        return visit(n.inner);
      case 'quantifier':
        return visit(n.arg);
      case 'comparison':
        visit(n.lhs);
        if (n.rhs) visit(n.rhs);
        return;
      case 'call':
        return n.args.forEach(visit);
      case 'index':
        visit(n.target);
        if (n.key.kind === 'key') visit(n.key.literal);
        return;
      case 'set':
        return n.items.forEach(visit);
    }
  };
  visit(root);
  return out;
}
