/**
 * The comparison operators as data: spellings in both notations, the operand types each
 * applies to, and the words hover and completion show. The parser, the checker, the
 * formatter and the editor features all derive from this one table.
 */
import type { ComparisonOp } from '../ast';
import type { Type } from '../types';
import type { Plan } from './types';
import { editDistance } from './index';

/** The left-hand types a comparison operator can apply to. */
export type OperandKind = 'Bytes' | 'Int' | 'Ip';

/** What hover and completion say about an operator (comparison or logical). */
export interface OperatorDoc {
  /** English spelling. */
  readonly english: string;
  /** C-like spelling, when there is one. */
  readonly clike?: string;
  readonly title: string;
  readonly lines: readonly string[];
  /** Lowest plan that may use it; absent = every plan. */
  readonly plan?: Plan;
}

export interface OperatorDef extends OperatorDoc {
  readonly op: ComparisonOp;
  /** Left-hand types it applies to, in the order the checker lists them. */
  readonly types: readonly OperandKind[];
  /** Types on which it works but is not recommended (completion lists it last, the checker warns). */
  readonly discouragedOn?: readonly OperandKind[];
  /** Completion offers the C-like spelling as an item of its own, before the English one. */
  readonly completeClike?: boolean;
}

const ORDERING_NOTE =
  'Strings compare in byte order (case-sensitive), integers numerically. On IP addresses it compares within one family only (IPv4 with IPv4): not recommended.';

const ordering = (op: 'lt' | 'le' | 'gt' | 'ge', clike: string, title: string, what: string): OperatorDef => ({
  op,
  english: op,
  clike,
  title,
  lines: [`True when the value is ${what} the right-hand side.`, ORDERING_NOTE],
  types: ['Bytes', 'Int', 'Ip'],
  discouragedOn: ['Ip'],
});

const WILDCARD_LINE =
  'True when the whole value matches the pattern; `*` matches any sequence of characters (write `\\\\*` in a quoted string, `\\*` in a raw string, for a literal star).';

/** Every comparison operator, in the order completion offers them. */
export const OPERATORS: readonly OperatorDef[] = [
  {
    op: 'eq',
    english: 'eq',
    clike: '==',
    title: 'equal',
    lines: [
      'True when the value equals the right-hand side.',
      'Strings compare byte for byte: exact and case-sensitive (`"GET"` is not `"get"`; use `lower(…)` or `wildcard` to ignore case).',
    ],
    types: ['Bytes', 'Int', 'Ip'],
  },
  {
    op: 'ne',
    english: 'ne',
    clike: '!=',
    title: 'not equal',
    lines: [
      'True when the value differs from the right-hand side.',
      'Strings compare byte for byte (case-sensitive). A missing value (an absent header, an index out of range) makes the comparison false.',
    ],
    types: ['Bytes', 'Int', 'Ip'],
  },
  ordering('lt', '<', 'less than', 'less than'),
  ordering('le', '<=', 'less than or equal', 'less than or equal to'),
  ordering('gt', '>', 'greater than', 'greater than'),
  ordering('ge', '>=', 'greater than or equal', 'greater than or equal to'),
  {
    op: 'contains',
    english: 'contains',
    title: 'substring',
    lines: ['True when the string contains the right-hand side as a substring.', 'Case-sensitive, byte for byte. Strings only; there is no C-like notation.'],
    types: ['Bytes'],
  },
  {
    op: 'matches',
    english: 'matches',
    clike: '~',
    title: 'regular expression match',
    lines: [
      'True when the regular expression matches anywhere in the value (anchor it with `^` and `$`).',
      'RE2 / Rust `regex` syntax: no look-around, no backreferences. Case-sensitive unless the pattern starts with `(?i)`. Prefer raw strings: `r"\\d+"`.',
      'Strings only. Requires the Business or Enterprise plan.',
    ],
    types: ['Bytes'],
    plan: 'business',
  },
  {
    op: 'wildcard',
    english: 'wildcard',
    title: 'wildcard match, case-insensitive',
    lines: [WILDCARD_LINE, 'Case-insensitive (ASCII letters); use `strict wildcard` to match case. Strings only.'],
    types: ['Bytes'],
  },
  {
    op: 'strict wildcard',
    english: 'strict wildcard',
    title: 'wildcard match, case-sensitive',
    lines: [WILDCARD_LINE, 'Case-sensitive; use `wildcard` to ignore case. Strings only.'],
    types: ['Bytes'],
  },
  {
    op: 'in',
    english: 'in',
    title: 'set or list membership',
    lines: [
      'True when the value is an item of the set `{…}` or of the list `$name`.',
      'Set items are separated by spaces, not commas. Strings compare exactly (case-sensitive); integers may be ranges `a..b`; IP addresses may be CIDRs `10.0.0.0/8` or ranges `a..b`.',
    ],
    types: ['Bytes', 'Int', 'Ip'],
  },
  {
    op: 'bitwise_and',
    english: 'bitwise_and',
    clike: '&',
    title: 'bitwise test',
    lines: ['True when the value and the right-hand side have a bit in common (`value & n` is not zero).', 'Integers only.'],
    types: ['Int'],
    completeClike: true,
  },
];

/** The operator table by operator. */
export const OPERATOR_BY_OP: Readonly<Record<ComparisonOp, OperatorDef>> = Object.fromEntries(OPERATORS.map((o) => [o.op, o])) as Record<
  ComparisonOp,
  OperatorDef
>;

/** Every spelling (both notations, `strict wildcard` as two words) to its operator. */
export const OPERATOR_SPELLINGS: ReadonlyMap<string, ComparisonOp> = new Map(
  OPERATORS.flatMap((o) => (o.clike ? [[o.english, o.op] as const, [o.clike, o.op] as const] : [[o.english, o.op] as const])),
);

/** The operator a spelling stands for, or undefined. */
export function operatorOf(spelling: string): ComparisonOp | undefined {
  return OPERATOR_SPELLINGS.get(spelling);
}

/** Operators as other languages spell them, to the one that is meant. */
const OPERATOR_ALIASES: ReadonlyMap<string, ComparisonOp> = new Map<string, ComparisonOp>([
  ['=', 'eq'], ['===', 'eq'], ['equals', 'eq'], ['equal', 'eq'], ['is', 'eq'],
  ['!==', 'ne'], ['<>', 'ne'], ['=!', 'ne'], ['neq', 'ne'], ['not_eq', 'ne'], ['not_equal', 'ne'], ['notequals', 'ne'],
  ['=>', 'ge'], ['gte', 'ge'], ['=<', 'le'], ['lte', 'le'],
  ['=~', 'matches'], ['~=', 'matches'], ['match', 'matches'], ['matching', 'matches'], ['regex', 'matches'],
  ['like', 'wildcard'], ['contain', 'contains'], ['includes', 'contains'], ['include', 'contains'], ['has', 'contains'],
  ['inside', 'in'], ['within', 'in'],
]);

/**
 * The operator a mistyped spelling (`equals`, `===`, `EQ`, `contians`) probably means,
 * written in the same notation (a symbol gets the C-like spelling where there is one);
 * undefined for a real operator or keyword, or when nothing is close.
 */
export function suggestOperator(written: string): string | undefined {
  if (OPERATOR_SPELLINGS.has(written) || LOGICAL_SPELLINGS.has(written)) return undefined;
  const lower = written.toLowerCase();
  const symbolic = !/[a-z]/.test(lower);
  let op = OPERATOR_ALIASES.get(lower) ?? OPERATOR_SPELLINGS.get(lower);
  if (!op && !symbolic && lower.length >= 4) {
    const limit = lower.length >= 7 ? 2 : 1;
    op = OPERATORS.find((o) => editDistance(lower, o.english, limit) <= limit)?.op;
  }
  if (!op) return undefined;
  const def = OPERATOR_BY_OP[op];
  return symbolic && def.clike ? def.clike : def.english;
}

function operandKind(t: Type): OperandKind | undefined {
  return t.kind === 'Bytes' || t.kind === 'Int' || t.kind === 'Ip' ? t.kind : undefined;
}

/** The operators a left-hand value of type `t` allows, in table order (none for Bool, arrays, maps). */
export function operatorsFor(t: Type): readonly OperatorDef[] {
  const kind = operandKind(t);
  return kind ? OPERATORS.filter((o) => o.types.includes(kind)) : [];
}

/** True when `op` works on `t` but is not recommended there (ordering on IP addresses). */
export function isDiscouraged(op: ComparisonOp, t: Type): boolean {
  const kind = operandKind(t);
  return kind !== undefined && (OPERATOR_BY_OP[op].discouragedOn?.includes(kind) ?? false);
}

/** True for the operators that work on strings only (`contains`, `matches`, the wildcards). */
export function isStringOnly(op: ComparisonOp): boolean {
  const types = OPERATOR_BY_OP[op].types;
  return types.length === 1 && types[0] === 'Bytes';
}

// ---------------------------------------------------------------------------------------
// Logical operators

export type LogicalWord = 'and' | 'or' | 'xor' | 'not';

/** The logical operators (`not` included) and what hover and completion say about them. */
export const LOGICAL_OPERATORS: Readonly<Record<LogicalWord, OperatorDoc & { readonly clike: string }>> = {
  and: {
    english: 'and',
    clike: '&&',
    title: 'logical and',
    lines: ['True when both sides are true.', 'Binds tighter than `xor` and `or`: `a or b and c` is `a or (b and c)`. Lower case only.'],
  },
  or: {
    english: 'or',
    clike: '||',
    title: 'logical or',
    lines: ['True when either side is true.', 'Binds loosest: `a or b and c` is `a or (b and c)`. Lower case only.'],
  },
  xor: {
    english: 'xor',
    clike: '^^',
    title: 'logical exclusive or',
    lines: ['True when exactly one side is true (with more operands: an odd number of them).', 'Binds tighter than `or` and looser than `and`. Lower case only.'],
  },
  not: {
    english: 'not',
    clike: '!',
    title: 'logical not',
    lines: [
      'Negates the simple expression that follows it.',
      '`not http.host eq "a"` is `not (http.host eq "a")`; `not a and b` is `(not a) and b`. Lower case only.',
    ],
  },
};

/** Every logical spelling (both notations) to its word. */
export const LOGICAL_SPELLINGS: ReadonlyMap<string, LogicalWord> = new Map(
  Object.values(LOGICAL_OPERATORS).flatMap((o) => [[o.english, o.english as LogicalWord] as const, [o.clike, o.english as LogicalWord] as const]),
);
