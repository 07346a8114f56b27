/**
 * Tiny builders for hand-written IR in evaluator tests (no checker involved), and a
 * helper to build field values.
 */
import type { IntRange, IntValue, IpAddr, IpRange, IrArg, IrBool, IrTest, IrValue, Value } from '../../../server/src/language/ir';
import { BOOL, BYTES, INT, IP, arrayOf, mapOf, type Type } from '../../../server/src/language/types';

export { BOOL, BYTES, INT, IP, arrayOf, mapOf };

function elementType(t: Type): Type {
  return t.kind === 'Array' || t.kind === 'Map' ? t.of : t;
}

export function field(name: string, type: Type = BYTES): IrValue {
  return { k: 'field', name, type, each: false };
}

/** `x[i]` */
export function at(target: IrValue, i: number): IrValue {
  return { k: 'index', target, index: { kind: 'array', i }, type: elementType(target.type), each: target.each };
}

/** `x["key"]` */
export function key(target: IrValue, k: string): IrValue {
  return { k: 'index', target, index: { kind: 'key', key: k }, type: elementType(target.type), each: target.each };
}

/** `x[*]` */
export function each(target: IrValue): IrValue {
  return { k: 'index', target, index: { kind: 'each' }, type: elementType(target.type), each: true };
}

/** A call; lifted when the first argument is a stream (its result type is then Array<type>). */
export function call(fn: string, args: readonly IrArg[], type: Type): IrValue {
  const first = args[0];
  const lifted = first !== undefined && first.k === 'val' && first.x.each;
  return { k: 'call', fn, args, type: lifted ? arrayOf(type) : type, lifted, each: false };
}

export function lit(value: Value, type: Type = BYTES): IrArg {
  return { k: 'literal', type, value };
}

export function val(x: IrValue): IrArg {
  return { k: 'val', x };
}

export function expr(x: IrBool): IrArg {
  return { k: 'expr', x };
}

export function cmp(lhs: IrValue, test: IrTest): IrBool {
  return { k: 'compare', lhs, test, array: lhs.each };
}

export const eq = (value: string | IntValue | IpAddr): IrTest => ({ k: 'eq', value });
export const ne = (value: string | IntValue | IpAddr): IrTest => ({ k: 'ne', value });
export const lt = (value: string | IntValue | IpAddr): IrTest => ({ k: 'lt', value });
export const le = (value: string | IntValue | IpAddr): IrTest => ({ k: 'le', value });
export const gt = (value: string | IntValue | IpAddr): IrTest => ({ k: 'gt', value });
export const ge = (value: string | IntValue | IpAddr): IrTest => ({ k: 'ge', value });
export const contains = (value: string): IrTest => ({ k: 'contains', value });
export const matches = (pattern: string): IrTest => ({ k: 'matches', pattern });
export const wildcard = (pattern: string, strict = false): IrTest => ({ k: 'wildcard', pattern, strict });
export const bitAnd = (value: IntValue): IrTest => ({ k: 'bitwise_and', value });
export const inBytes = (...values: string[]): IrTest => ({ k: 'inBytes', values });
export const inInt = (...ranges: IntRange[]): IrTest => ({ k: 'inInt', ranges });
export const inIp = (...ranges: IpRange[]): IrTest => ({ k: 'inIp', ranges });
export const inList = (name: string, type: Type = IP): IrTest => ({ k: 'inList', name, type });
export const dyn = (op: 'eq' | 'ne' | 'lt' | 'le' | 'gt' | 'ge', rhs: IrValue): IrTest => ({ k: 'dynamic', op, rhs });

function isArray(items: readonly IrBool[]): boolean {
  return items.length > 0 && items.every((x) => x.k !== 'quantifier' && x.array);
}

export const and = (...items: IrBool[]): IrBool => ({ k: 'logical', op: 'and', items, array: isArray(items) });
export const or = (...items: IrBool[]): IrBool => ({ k: 'logical', op: 'or', items, array: isArray(items) });
export const xor = (...items: IrBool[]): IrBool => ({ k: 'logical', op: 'xor', items, array: isArray(items) });
export const not = (x: IrBool): IrBool => ({ k: 'not', x, array: x.k !== 'quantifier' && x.array });
export const any = (x: IrBool): IrBool => ({ k: 'quantifier', q: 'any', x });
export const all = (x: IrBool): IrBool => ({ k: 'quantifier', q: 'all', x });
/** A bare Bool operand, or an Array<Bool> value / stream. */
export const bool = (x: IrValue): IrBool => ({ k: 'value', x, array: x.each || x.type.kind === 'Array' });

export const v4 = (text: string): IpAddr => {
  const [a, b, c, d] = text.split('.').map(Number);
  return { family: 4, n: ((a * 256 + b) * 256 + c) * 256 + d };
};

export const v6 = (hex: bigint): IpAddr => ({ family: 6, n: hex });

export function fields(entries: Record<string, Value>): ReadonlyMap<string, Value> {
  return new Map(Object.entries(entries));
}

export function map(entries: Record<string, Value>): ReadonlyMap<string, Value> {
  return new Map(Object.entries(entries));
}
