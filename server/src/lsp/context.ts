/**
 * What completion, hover and signature help know about an expression besides its text,
 * plus the lenient scanner they share.
 *
 * The scanner works on any text, including text the user is in the middle of typing
 * (unclosed strings, dangling operators, half-written names): `tokenize` never fails,
 * and `analyze` walks the tokens with a small state machine that tracks the open
 * brackets (groups, calls, quantifiers, sets, indexes) and what the grammar expects
 * next (an operand, an operator, a right-hand side, a logical operator), together with
 * the type of the operand on the left. It is deliberately forgiving: a token that does
 * not fit is skipped rather than reported (diagnostics are the checker's job).
 */
import type { ComparisonOp } from '../language/ast';
import { LOGICAL_SPELLINGS, operatorOf, type LogicalWord } from '../language/scheme/operators';
import type { FieldDef, FunctionDef, Phase, Plan, Scheme } from '../language/scheme/types';
import type { Type } from '../language/types';

export interface ExpressionContext {
  scheme: Scheme;
  plan?: Plan;
  phase?: Phase;
  listNames?: readonly string[];
  /** A rate limiting rule's counting expression: the response fields are available too. */
  countingExpression?: boolean;
  /** map keys seen in samples, per map field, e.g. {'http.request.headers': ['user-agent', …]} */
  sampleKeys?: Readonly<Record<string, readonly string[]>>;
}

/** UTF-16 offsets [start, end) into the expression text. */
export interface OffsetRange {
  start: number;
  end: number;
}

// ---------------------------------------------------------------------------------------
// Tokens

export type TokenKind =
  /** A dotted name (`http.request.method`, `and`, `eq`, `http.` while typing). */
  | 'ident'
  /** `"…"` (after `matches`/`~` lexed as a regex literal: `"` inside `[…]` does not end it). */
  | 'string'
  /** `r"…"`, `r#"…"#`. */
  | 'raw'
  /** An unquoted literal: integer, IP, CIDR, range, hex bytes. */
  | 'bare'
  /** `$name`. */
  | 'list'
  /** `( ) [ ] { } , *` */
  | 'punct'
  /** `== != <= >= < > ~ & && || ^^ !` */
  | 'op'
  /** Anything else (a stray `=`, `'`, `|`, …). */
  | 'unknown';

export interface Tok {
  readonly kind: TokenKind;
  readonly text: string;
  readonly start: number;
  readonly end: number;
  /** Strings only: false when the closing quote is missing (the token runs to the end). */
  readonly closed?: boolean;
}

const isIdentChar = (c: string | undefined): boolean => c !== undefined && /[A-Za-z0-9_]/.test(c);
const isSpace = (c: string | undefined): boolean => c === ' ' || c === '\n' || c === '\r' || c === '\t';
const BARE_CHAR = /[0-9A-Fa-fxX.:/-]/;
const TWO_CHAR_OPS = ['==', '!=', '<=', '>=', '&&', '||', '^^'];
const ONE_CHAR_OPS = '<>~&!';

/**
 * Splits text into tokens. Never throws; every character belongs to at most one token
 * (white space to none). Strings after `matches`/`~` are lexed as regex literals, as
 * the engine does.
 */
export function tokenize(text: string): Tok[] {
  const out: Tok[] = [];
  let i = 0;
  let regexNext = false;
  const n = text.length;
  while (i < n) {
    const c = text[i];
    if (isSpace(c)) {
      i++;
      continue;
    }
    const start = i;
    let kind: TokenKind;
    let closed: boolean | undefined;
    if (c === '"') {
      kind = 'string';
      closed = false;
      let inClass = false;
      for (i++; i < n; i++) {
        const d = text[i];
        if (d === '\\') i++;
        else if (regexNext && !inClass && d === '[') inClass = true;
        else if (inClass && d === ']') inClass = false;
        else if (d === '"' && !inClass) {
          i++;
          closed = true;
          break;
        }
      }
      if (i > n) i = n;
    } else if (c === 'r' && /^r#*"/.test(text.slice(i, i + 258))) {
      kind = 'raw';
      const hashes = /^r(#*)"/.exec(text.slice(i, i + 258))![1];
      const close = text.indexOf('"' + hashes, i + 2 + hashes.length);
      closed = close >= 0;
      i = closed ? close + 1 + hashes.length : n;
    } else if (c === '$') {
      kind = 'list';
      for (i++; i < n && /[A-Za-z0-9_.]/.test(text[i]); i++);
    } else if (/[0-9.:/-]/.test(c)) {
      kind = 'bare';
      for (i++; i < n && BARE_CHAR.test(text[i]); i++);
    } else if (isIdentChar(c)) {
      kind = 'ident';
      for (i++; i < n && (isIdentChar(text[i]) || text[i] === '.'); i++);
      // Hex bytes and IPv6 addresses that start with a letter: `ab:cd`, `fe80::1`.
      if ((text[i] === ':' || text[i] === '-') && /^[0-9A-Fa-f]+$/.test(text.slice(start, i))) {
        kind = 'bare';
        for (; i < n && BARE_CHAR.test(text[i]); i++);
      }
    } else if (TWO_CHAR_OPS.includes(text.slice(i, i + 2))) {
      kind = 'op';
      i += 2;
    } else if (ONE_CHAR_OPS.includes(c)) {
      kind = 'op';
      i++;
    } else if ('()[]{},*'.includes(c)) {
      kind = 'punct';
      i++;
    } else {
      kind = 'unknown';
      i++;
    }
    const tok: Tok = closed === undefined ? { kind, text: text.slice(start, i), start, end: i } : { kind, text: text.slice(start, i), start, end: i, closed };
    out.push(tok);
    if (tok.kind === 'string' || tok.kind === 'raw') regexNext = false;
    else regexNext = (tok.kind === 'ident' && tok.text === 'matches') || (tok.kind === 'op' && tok.text === '~');
  }
  return out;
}

// ---------------------------------------------------------------------------------------
// Operator words (spellings from the operator table)

export function comparisonOf(tok: Tok): ComparisonOp | undefined {
  if (tok.kind !== 'ident' && tok.kind !== 'op') return undefined;
  return operatorOf(tok.text);
}

/** `and`/`or`/`xor` in either notation (not `not`). */
export function binaryLogicalOf(tok: Tok): LogicalWord | undefined {
  if (tok.kind !== 'ident' && tok.kind !== 'op') return undefined;
  const w = LOGICAL_SPELLINGS.get(tok.text);
  return w === 'not' ? undefined : w;
}

const isNot = (tok: Tok): boolean => (tok.kind === 'ident' && tok.text === 'not') || (tok.kind === 'op' && tok.text === '!');
const isPunct = (tok: Tok | undefined, p: string): boolean => tok !== undefined && tok.kind === 'punct' && tok.text === p;

// ---------------------------------------------------------------------------------------
// Analysis

/** What is known about a value expression (a field or call, possibly indexed). */
export interface ValueInfo {
  /** Its type; for a `[*]` expression the element type. Undefined when unknown. */
  readonly type?: Type;
  /** True after `[*]` (the comparison or call is lifted over the elements). */
  readonly each: boolean;
  /** The field whose well-known values apply (the field itself, or an element of an array field). */
  readonly valuesOf?: FieldDef;
  /** The field this is, when it is a bare (unindexed) field: its map keys are `sampleKeys[name]`. */
  readonly field?: FieldDef;
  /** Offset just past the expression (an index `[` must follow without space). */
  readonly end: number;
  /** True for a literal function argument. */
  readonly literal?: boolean;
}

export type Frame =
  | { readonly kind: 'group'; readonly open: number }
  | { readonly kind: 'quantifier'; readonly name: 'any' | 'all'; readonly open: number; readonly nameTok: Tok }
  | {
      readonly kind: 'call';
      readonly name: string;
      readonly fn?: FunctionDef;
      readonly nameTok: Tok;
      readonly open: number;
      /** Index of the argument being written. */
      argIndex: number;
      /** What is known about each completed argument. */
      readonly args: (ValueInfo | undefined)[];
      /** The call is the right-hand side of a comparison. */
      readonly rhs: boolean;
    }
  | { readonly kind: 'set'; readonly lhs: ValueInfo; readonly open: number; readonly items: string[] }
  | { readonly kind: 'index'; readonly target: ValueInfo; readonly open: number; readonly rhs: boolean; key?: Tok };

export type State =
  /** At the start of an operand: a field, a call, `not`, `(`, `any(`. */
  | { readonly kind: 'operand' }
  /** After a complete value expression: an operator, an index, or (Bool) a logical operator. */
  | { readonly kind: 'value'; readonly value: ValueInfo; readonly strictPending?: Tok }
  /** After a comparison operator: the right-hand side. */
  | { readonly kind: 'operator'; readonly lhs: ValueInfo; readonly op: ComparisonOp; readonly opTok: Tok }
  /** After a complete condition (or a literal argument): a logical operator, `,` or `)`. */
  | { readonly kind: 'done' };

export interface Analysis {
  readonly state: State;
  /** Open brackets, outermost first. */
  readonly frames: readonly Frame[];
}

function tryReturns(fn: FunctionDef | undefined, args: readonly (ValueInfo | undefined)[]): Type | undefined {
  if (!fn) return undefined;
  const types: Type[] = [];
  for (const a of args) {
    if (!a?.type) break;
    types.push(a.type);
  }
  try {
    return fn.returns(types);
  } catch {
    return undefined;
  }
}

function literalType(tok: Tok): Type | undefined {
  if (tok.kind === 'string' || tok.kind === 'raw') return { kind: 'Bytes' };
  if (tok.kind === 'bare') return /^-?\d+$|^0x[0-9a-f]+$/i.test(tok.text) ? { kind: 'Int' } : undefined;
  return undefined;
}

/** The text of a quoted string without its quotes and with `\"`, `\\` unescaped (best effort). */
export function stringContent(tok: Tok): string {
  if (tok.kind === 'raw') {
    const m = /^r(#*)"/.exec(tok.text);
    const open = m ? m[0].length : 2;
    const close = tok.closed ? 1 + (m ? m[1].length : 0) : 0;
    return tok.text.slice(open, tok.text.length - close);
  }
  const inner = tok.text.slice(1, tok.closed ? -1 : undefined);
  return inner.replace(/\\(["\\])/g, '$1');
}

/**
 * Walks `tokens` (everything before the cursor) and returns where the grammar stands at
 * their end.
 */
export function analyze(tokens: readonly Tok[], scheme: Scheme): Analysis {
  /** A function call opening at `name (`; `rhs`: on the right of a comparison. */
  const callFrame = (name: Tok, paren: Tok, rhs: boolean): Frame => ({
    kind: 'call',
    name: name.text,
    fn: scheme.functions.get(name.text),
    nameTok: name,
    open: paren.start,
    argIndex: 0,
    args: [],
    rhs,
  });

  const frames: Frame[] = [];
  let state: State = { kind: 'operand' };
  /** The field just read on the right of a comparison (`a eq b`), which `[…]` may index. */
  let lastRhsValue: ValueInfo | undefined;

  const top = (): Frame | undefined => frames[frames.length - 1];

  /** The current argument's summary, for a call frame that is about to move on. */
  const currentArg = (): ValueInfo | undefined => (state.kind === 'value' ? state.value : undefined);

  const closeParen = (tok: Tok): void => {
    while (frames.length > 0 && (top()!.kind === 'set' || top()!.kind === 'index')) frames.pop();
    const f = frames.pop();
    if (!f || f.kind === 'group' || f.kind === 'quantifier') {
      state = { kind: 'done' };
      return;
    }
    if (f.kind !== 'call') return;
    if (f.args.length <= f.argIndex) f.args[f.argIndex] = currentArg();
    const ret = tryReturns(f.fn, f.args);
    if (f.rhs) {
      state = { kind: 'done' };
      return;
    }
    state = { kind: 'value', value: { type: ret, each: f.args[0]?.each ?? false, end: tok.end } };
  };

  const nextArg = (): void => {
    while (frames.length > 0 && (top()!.kind === 'set' || top()!.kind === 'index')) frames.pop();
    const f = top();
    if (f?.kind === 'call') {
      f.args[f.argIndex] = currentArg();
      f.argIndex++;
    }
    state = { kind: 'operand' };
  };

  for (let i = 0; i < tokens.length; i++) {
    const tok = tokens[i];
    const next = tokens[i + 1];
    const frame = top();

    // Inside a set literal: items until `}`.
    if (frame?.kind === 'set') {
      if (isPunct(tok, '}')) {
        frames.pop();
        state = { kind: 'done' };
      } else if (tok.kind === 'string' || tok.kind === 'raw') frame.items.push(stringContent(tok));
      else if (tok.kind === 'bare' || tok.kind === 'ident') frame.items.push(tok.text);
      else if (isPunct(tok, ')')) closeParen(tok);
      continue;
    }
    // Inside an index: one key until `]`.
    if (frame?.kind === 'index') {
      if (isPunct(tok, ']')) {
        frames.pop();
        const target = frame.target;
        const t = target.type;
        const each = target.each || (frame.key !== undefined && isPunct(frame.key, '*'));
        const elem = t && (t.kind === 'Array' || t.kind === 'Map') ? t.of : undefined;
        const valuesOf = t?.kind === 'Array' ? target.valuesOf : undefined;
        state = frame.rhs ? { kind: 'done' } : { kind: 'value', value: { type: elem, each, valuesOf, end: tok.end } };
      } else if (isPunct(tok, ')')) closeParen(tok);
      else if (frame.key === undefined) frame.key = tok;
      continue;
    }

    // Tokens that mean the same in every state.
    if (isPunct(tok, ')')) {
      closeParen(tok);
      continue;
    }
    if (isPunct(tok, ',')) {
      nextArg();
      continue;
    }
    if (binaryLogicalOf(tok) && state.kind !== 'operand') {
      state = { kind: 'operand' };
      continue;
    }

    switch (state.kind) {
      case 'operand': {
        if (isPunct(tok, '(')) frames.push({ kind: 'group', open: tok.start });
        else if (isNot(tok)) {
          // stays at an operand
        } else if (tok.kind === 'ident' && isPunct(next, '(')) {
          if (tok.text === 'any' || tok.text === 'all') {
            frames.push({ kind: 'quantifier', name: tok.text, open: next!.start, nameTok: tok });
          } else {
            frames.push(callFrame(tok, next!, false));
          }
          i++;
        } else if (tok.kind === 'ident') {
          const def = scheme.fields.get(tok.text);
          state = { kind: 'value', value: { type: def?.type, each: false, valuesOf: def, field: def, end: tok.end } };
        } else if (tok.kind === 'string' || tok.kind === 'raw' || tok.kind === 'bare') {
          state = { kind: 'value', value: { type: literalType(tok), each: false, end: tok.end, literal: true } };
        }
        break;
      }
      case 'value': {
        const v: ValueInfo = state.value;
        const strict: Tok | undefined = state.strictPending;
        if (strict) {
          if (tok.kind === 'ident' && tok.text === 'wildcard') {
            state = { kind: 'operator', lhs: v, op: 'strict wildcard', opTok: { kind: 'ident', text: 'strict wildcard', start: strict.start, end: tok.end } };
          } else state = { kind: 'value', value: v };
          break;
        }
        if (isPunct(tok, '[')) {
          frames.push({ kind: 'index', target: v, open: tok.start, rhs: false });
        } else if (tok.kind === 'ident' && tok.text === 'strict') {
          state = { kind: 'value', value: v, strictPending: tok };
        } else {
          const op = comparisonOf(tok);
          if (op) state = { kind: 'operator', lhs: v, op, opTok: tok };
        }
        break;
      }
      case 'operator': {
        if (isPunct(tok, '{')) {
          frames.push({ kind: 'set', lhs: state.lhs, open: tok.start, items: [] });
        } else if (tok.kind === 'ident' && isPunct(next, '(')) {
          frames.push(callFrame(tok, next!, true));
          state = { kind: 'operand' };
          i++;
        } else if (tok.kind === 'ident') {
          // A field on the right (dynamic comparison); it may be indexed.
          const def = scheme.fields.get(tok.text);
          state = { kind: 'done' };
          lastRhsValue = { type: def?.type, each: false, end: tok.end };
        } else if (tok.kind === 'string' || tok.kind === 'raw' || tok.kind === 'bare' || tok.kind === 'list') {
          state = { kind: 'done' };
        }
        break;
      }
      case 'done': {
        if (isPunct(tok, '[') && lastRhsValue && lastRhsValue.end === tok.start) {
          frames.push({ kind: 'index', target: lastRhsValue, open: tok.start, rhs: true });
        }
        break;
      }
    }
    if (state.kind !== 'done') lastRhsValue = undefined;
  }
  return { state, frames };
}

/** The innermost open call or quantifier, if any. */
export function innermostCall(frames: readonly Frame[]): Extract<Frame, { kind: 'call' | 'quantifier' }> | undefined {
  for (let i = frames.length - 1; i >= 0; i--) {
    const f = frames[i];
    if (f.kind === 'call' || f.kind === 'quantifier') return f;
  }
  return undefined;
}
