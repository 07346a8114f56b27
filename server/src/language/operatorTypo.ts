/**
 * Mistyped comparison operators (`http.host equals "a"`, `http.host === "a"`): where one
 * is, what the engine says about it, and which operator was meant.
 *
 * The engine reads the longest operator spelling the word starts with (`eq` of `equals`,
 * `==` of `===`) and then the rest as the right-hand value, so its message is about that
 * value (`invalid digit found in string while parsing with radix 16` after a string
 * field); with no such prefix it says `expected ComparisonOp`. The diagnostic keeps the
 * engine's text as its message, underlines the whole word and names the operator meant
 * in its hint (and in `data.replacement`, for a quick fix).
 */
import { error, type Diagnostic } from './diagnostics';
import { parseIpAddr } from './ip';
import { parseHexBytes, parseInt64 } from './literals';
import { LOGICAL_SPELLINGS, OPERATOR_SPELLINGS, suggestOperator } from './scheme/operators';
import type { Type } from './types';

const WORD = /[A-Za-z_]/;
const SYMBOL = /[=!<>~&]/;
const IDENT = /[A-Za-z0-9_.]/;
const SPACE = /[ \r\n\t]/;

/** Where the identifier (or number) that ends just before `pos`, skipping spaces, is; undefined after anything else (a call's `)`, a string). */
export function identifierBefore(text: string, pos: number): { readonly start: number; readonly end: number } | undefined {
  let end = pos;
  while (end > 0 && SPACE.test(text[end - 1])) end--;
  let start = end;
  while (start > 0 && IDENT.test(text[start - 1])) start--;
  return start < end ? { start, end } : undefined;
}

/** The identifier (or function call's name) that ends just before `pos`, skipping spaces. */
export function operandBefore(text: string, pos: number): string | undefined {
  let end = pos;
  while (end > 0 && SPACE.test(text[end - 1])) end--;
  if (text[end - 1] === ')') {
    // A function call: name its function (its return type words the message).
    let depth = 0;
    for (let i = end - 1; i >= 0; i--) {
      if (text[i] === ')') depth++;
      else if (text[i] === '(' && --depth === 0) return operandBefore(text, i);
    }
    return undefined;
  }
  const at = identifierBefore(text, end);
  return at && text.slice(at.start, at.end);
}

/**
 * The type of the value (field, call, index expression) that ends before `pos`, or
 * undefined when what precedes is not a value (a keyword, a literal, nothing).
 */
function valueTypeBefore(text: string, pos: number, typeOf: (name: string) => Type | undefined): Type | undefined {
  let end = pos;
  while (end > 0 && SPACE.test(text[end - 1])) end--;
  let indexes = 0;
  while (text[end - 1] === ']') {
    const open = text.lastIndexOf('[', end - 1);
    if (open < 0) return undefined;
    indexes++;
    end = open;
  }
  const name = operandBefore(text, end);
  if (name === undefined || /^[0-9]/.test(name) || OPERATOR_SPELLINGS.has(name) || LOGICAL_SPELLINGS.has(name)) return undefined;
  let type = typeOf(name);
  for (let i = 0; i < indexes && type; i++) type = type.kind === 'Array' || type.kind === 'Map' ? type.of : undefined;
  return type;
}

/** The run of word or of symbol characters that holds `at`. */
function runAt(text: string, at: number): { start: number; end: number } | undefined {
  const c = text[at] ?? '';
  const cls = WORD.test(c) ? WORD : SYMBOL.test(c) ? SYMBOL : undefined;
  if (!cls) return undefined;
  let start = at;
  let end = at + 1;
  while (start > 0 && cls.test(text[start - 1])) start--;
  while (end < text.length && cls.test(text[end])) end++;
  // A word must stand alone (not the end of a name or a number).
  if (cls === WORD && start > 0 && !SPACE.test(text[start - 1])) return undefined;
  return { start, end };
}

/** The runs a syntax error at `pos` may be about: the one at `pos`, the one before it (spaces skipped). */
function runsNear(text: string, pos: number): { start: number; end: number }[] {
  let before = pos;
  while (before > 0 && SPACE.test(text[before - 1])) before--;
  return [runAt(text, pos), runAt(text, before - 1)].filter((r) => r !== undefined);
}

/** The longest operator spelling `word` starts with, as the engine lexes it. */
function operatorPrefix(word: string): string | undefined {
  let best: string | undefined;
  for (const spelling of OPERATOR_SPELLINGS.keys()) {
    if (word.startsWith(spelling) && (best === undefined || spelling.length > best.length)) best = spelling;
  }
  return best;
}

/** What the engine says reading `rest` as the right-hand side of `prefix` after a value of type `type`. */
function engineMessage(type: Type, prefix: string | undefined, rest: string): string {
  const op = prefix === undefined ? undefined : OPERATOR_SPELLINGS.get(prefix);
  if (op === undefined) return 'expected ComparisonOp';
  if (op === 'in') return 'expected literal "{"';
  if (op === 'matches' || op === 'wildcard' || op === 'strict wildcard') return 'expected " or r';
  const r = type.kind === 'Int' ? parseInt64(rest) : type.kind === 'Ip' ? parseIpAddr(rest) : type.kind === 'Bytes' ? parseHexBytes(rest) : undefined;
  if (!r) return 'expected ComparisonOp';
  return r.ok ? 'unrecognised input' : r.message;
}

/**
 * The diagnostic for the word or symbol run [start, end) written where an operator goes,
 * after a value of type `type`; undefined when it is not close to any operator (the
 * caller keeps the engine's plain wording then).
 */
export function unknownOperator(text: string, start: number, end: number, type: Type): Diagnostic | undefined {
  const word = text.slice(start, end);
  const meant = suggestOperator(word);
  if (meant === undefined) return undefined;
  const prefix = operatorPrefix(word);
  const message = engineMessage(type, prefix, text.slice(start + (prefix?.length ?? 0)));
  return error('unknown-operator', start, end, message, `\`${word}\` is not an operator: did you mean \`${meant}\`?`, { replacement: meant });
}

/**
 * A mistyped operator at or just before a syntax error at `pos`, after a value whose type
 * `typeOf` knows (a Bool takes no operator, so it is left to the usual wording).
 */
export function mistypedOperatorAt(text: string, pos: number, typeOf: ((name: string) => Type | undefined) | undefined): Diagnostic | undefined {
  if (!typeOf) return undefined;
  for (const run of runsNear(text, pos)) {
    const type = valueTypeBefore(text, run.start, typeOf);
    if (!type || type.kind === 'Bool' || (type.kind === 'Array' && type.of.kind === 'Bool')) continue;
    const d = unknownOperator(text, run.start, run.end, type);
    if (d) return d;
  }
  return undefined;
}
