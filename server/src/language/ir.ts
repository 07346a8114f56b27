/**
 * The checked, typed form of an expression: what `check.ts` produces from the syntax
 * tree and what `evaluate.ts` compiles into closures. Literals are already decoded,
 * regexes and wildcards already validated, types already resolved.
 *
 * Runtime value representation (shared by the evaluator, field preparation and
 * functions):
 *   Bytes -> a "binary string": one UTF-16 code unit per byte (0..255), so that
 *            ===, <, includes and regexes work on bytes exactly (`\x80` stays one byte)
 *   Int   -> number (safe integer), or bigint when outside ±2^53 (i64 range)
 *   Bool  -> boolean
 *   Ip    -> IpAddr
 *   Array -> Value[]
 *   Map   -> Map<string, Value> (keys are binary strings)
 * A missing value (absent field, index out of range, absent key) is `undefined`.
 */
import type { ComparisonOp } from './ast';
import type { Type } from './types';

export type IpAddr = { readonly family: 4; readonly n: number } | { readonly family: 6; readonly n: bigint };

export type IntValue = number | bigint;

export type Value = string | IntValue | boolean | IpAddr | readonly Value[] | ReadonlyMap<string, Value>;

/** An inclusive range of integers or of addresses of one family (a CIDR is a range). */
export type IntRange = readonly [IntValue, IntValue];
export type IpRange = readonly [IpAddr, IpAddr];

/** A Bool-valued node; when `array` is true it yields Array<Bool> instead (element-wise). */
export type IrBool =
  | { readonly k: 'logical'; readonly op: 'and' | 'or' | 'xor'; readonly items: readonly IrBool[]; readonly array: boolean }
  | { readonly k: 'not'; readonly x: IrBool; readonly array: boolean }
  /** `any(x)` / `all(x)`; x always has array: true. */
  | { readonly k: 'quantifier'; readonly q: 'any' | 'all'; readonly x: IrBool }
  /** A comparison; when lhs.each is true it is lifted over each element (array: true). */
  | { readonly k: 'compare'; readonly lhs: IrValue; readonly test: IrTest; readonly array: boolean }
  /** A bare Bool operand (`ssl`), or an Array<Bool> value / `x[*]` stream when array is true. */
  | { readonly k: 'value'; readonly x: IrValue; readonly array: boolean };

/**
 * A value-producing node. `type` is the type of the value, or of each element when
 * `each` is true: such a node contains an unresolved `[*]` and yields a stream
 * (flattened Value[]) that the enclosing comparison or function call lifts over.
 */
export type IrValue =
  | { readonly k: 'field'; readonly name: string; readonly type: Type; readonly each: false }
  | {
      readonly k: 'index';
      readonly target: IrValue;
      /** Array index, map key (binary string), or '*' for map-each. */
      readonly index: { readonly kind: 'array'; readonly i: number } | { readonly kind: 'key'; readonly key: string } | { readonly kind: 'each' };
      readonly type: Type;
      readonly each: boolean;
    }
  | {
      readonly k: 'call';
      readonly fn: string;
      readonly args: readonly IrArg[];
      readonly type: Type;
      /** True when the first argument is a stream: f is applied per element, missing results dropped, result is an Array. */
      readonly lifted: boolean;
      readonly each: false;
    };

export type IrArg =
  | { readonly k: 'literal'; readonly type: Type; readonly value: Value }
  | { readonly k: 'expr'; readonly x: IrBool }
  | { readonly k: 'val'; readonly x: IrValue };

/** The right-hand side of a comparison, already decoded. */
export type IrTest =
  | { readonly k: 'eq' | 'ne' | 'lt' | 'le' | 'gt' | 'ge'; readonly value: string | IntValue | IpAddr }
  | { readonly k: 'contains'; readonly value: string }
  /** RE2 / Rust-regex syntax, Unicode off unless the pattern enables it with (?u). */
  | { readonly k: 'matches'; readonly pattern: string }
  /** Decoded pattern bytes (binary string); `*` any sequence, `\*` and `\\` escapes; whole-value match. */
  | { readonly k: 'wildcard'; readonly pattern: string; readonly strict: boolean }
  | { readonly k: 'bitwise_and'; readonly value: IntValue }
  | { readonly k: 'inBytes'; readonly values: readonly string[] }
  | { readonly k: 'inInt'; readonly ranges: readonly IntRange[] }
  | { readonly k: 'inIp'; readonly ranges: readonly IpRange[] }
  | { readonly k: 'inList'; readonly name: string; readonly type: Type }
  /** Dynamic comparison (field on the right); rhs has the same type as lhs. */
  | { readonly k: 'dynamic'; readonly op: Extract<ComparisonOp, 'eq' | 'ne' | 'lt' | 'le' | 'gt' | 'ge'>; readonly rhs: IrValue };
