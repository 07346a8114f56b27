/**
 * The evaluator: compiles checked IR once into a tree of closures, then runs it per
 * request (reference §3). Regexes, wildcard patterns, sets and function call sites are
 * prepared at compile time; an evaluation allocates only for `[*]` streams and
 * Array<Bool> results, and never throws on valid IR.
 *
 * Missing values (absent field, index out of range, absent key, function without a
 * result) are `undefined`. A comparison whose left side is missing is false — Cloudflare's
 * documented behaviour — except `ne` when `nilNotEqual` asks for wirefilter's default.
 * A missing bare Bool is false; `any`/`all` of a missing Array<Bool> are false; a missing
 * Array<Bool> operand of `and`/`or`/`xor`/`not` counts as empty.
 */
import type { IntValue, IpAddr, IrArg, IrBool, IrTest, IrValue, Value } from './ir';
import { generateFilter } from './codegen';
import { compareIp, ipInRanges } from './ip';
import { lazyRegex } from './regex';
import { RUNTIME_FUNCTIONS } from './runtime/functions';
import type { CallEnv, RuntimeCall } from './runtime/runtimeFunction';
import { matchWildcard, parseWildcard } from './wildcard';

export type FieldValues = ReadonlyMap<string, Value>;
/** Whether `value` is in the list `$name` (IP lists match addresses and CIDRs, etc.). */
export type ListResolver = (name: string, value: Value) => boolean;

export interface EvalContext {
  readonly lists?: ListResolver;
  /**
   * Results of the managed-only collection and transformation calls (`crs.*`, `t.*`,
   * `concat` over `crs.*` fields) for one request, shared by every filter evaluated with
   * this context: CRS rules apply the same transformation chain to the same variables again
   * and again (e.g. `t.urlDecodeUni` of ARGS in 920270–920274). Keyed by the call's IR, so
   * equal chains share a slot; bound to one FieldValues object (other fields reset it).
   * The engine makes one per evaluation; without one nothing is remembered.
   */
  readonly memo?: EvalMemo;
}

/** A per-request store of call results (see EvalContext.memo). */
export class EvalMemo {
  fields: FieldValues | undefined = undefined;
  values: unknown[] = [];
}

/** Slots of memoizable calls by their canonical IR text, shared by every compiled filter. */
const MEMO_SLOTS = new Map<string, number>();
/** A remembered missing result. */
const MISSING = Symbol('missing');

/** Whether a call is a pure managed-only collection/transformation worth remembering. */
function memoizable(n: Extract<IrValue, { k: 'call' }>, key: () => string): boolean {
  if (n.fn.startsWith('t.') || n.fn.startsWith('crs.')) return true;
  return n.fn === 'concat' && key().includes('"name":"crs.');
}

function irKey(n: IrValue): string {
  return JSON.stringify(n, (_k, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v instanceof Map ? [...(v as Map<unknown, unknown>)] : v));
}

export interface CompileOptions {
  /**
   * wirefilter's default: `ne` with a missing left side is true. Default false:
   * Cloudflare's documented behaviour, where every comparison with a missing side is false.
   */
  readonly nilNotEqual?: boolean;
}

export interface CompiledFilter {
  matches(fields: FieldValues, ctx?: EvalContext): boolean;
}

type Ctx = EvalContext | undefined;
type BoolFn = (f: FieldValues, c: Ctx) => boolean;
/** Array<Bool>; undefined when the array itself is missing. */
type ArrFn = (f: FieldValues, c: Ctx) => readonly boolean[] | undefined;
type ValFn = (f: FieldValues, c: Ctx) => Value | undefined;
/** A `[*]` stream: the flattened elements, never containing missing values. */
type StreamFn = (f: FieldValues, c: Ctx) => readonly Value[];
/** A test on a present left-hand value. */
type TestFn = (v: Value, f: FieldValues, c: Ctx) => boolean;

const EMPTY: readonly never[] = [];

/** Compiles a filter. Throws only on IR that violates the contract (unknown function). */
export function compile(ir: IrBool, options: CompileOptions = {}): CompiledFilter {
  const nilNotEqual = options.nilNotEqual === true;
  const c = new Compiler(nilNotEqual);
  // One generated function per filter (codegen.ts), with this compiler for the rest.
  const generated = generateFilter<Ctx>(ir, nilNotEqual, {
    bool: (n) => c.bool(n),
    value: (n) => c.value(n),
    test: (t) => c.test(t),
    arg: (a) => c.arg(a),
    memoized: (n) => c.memoized(n),
  });
  return generated ? { matches: generated } : compileClosures(ir, options);
}

/**
 * The closure tree alone, without generated code: what runs where code generation is
 * forbidden, and the reference the generated code is tested against.
 */
export function compileClosures(ir: IrBool, options: CompileOptions = {}): CompiledFilter {
  const root = new Compiler(options.nilNotEqual === true).bool(ir);
  return { matches: (fields, ctx) => root(fields, ctx) };
}

/** Compiles a value expression (rewrite / header-value expressions): undefined = missing. */
export function compileValue(ir: IrValue, options: CompileOptions = {}): (fields: FieldValues, ctx?: EvalContext) => Value | undefined {
  const c = new Compiler(options.nilNotEqual === true);
  if (ir.each) {
    const s = c.stream(ir);
    return (f, ctx) => s(f, ctx);
  }
  const v = c.value(ir);
  return (f, ctx) => v(f, ctx);
}

class Compiler {
  constructor(private readonly nilNotEqual: boolean) {}

  // --- Bool and Array<Bool> -------------------------------------------------------------

  bool(n: IrBool): BoolFn {
    if (n.k !== 'quantifier' && n.array) {
      // An Array<Bool> where a Bool is expected only happens in malformed IR.
      const a = this.arr(n);
      return (f, c) => {
        const r = a(f, c);
        return r !== undefined && r.length > 0 && r.every(Boolean);
      };
    }
    switch (n.k) {
      case 'logical':
        return this.logical(n.op, n.items.map((x) => this.bool(x)));
      case 'not': {
        const x = this.bool(n.x);
        return (f, c) => !x(f, c);
      }
      case 'quantifier': {
        const direct = this.quantifiedCall(n.q, n.x);
        if (direct) return direct;
        const x = this.arr(n.x);
        if (n.q === 'any') {
          return (f, c) => {
            const r = x(f, c);
            if (r === undefined) return false;
            for (let i = 0; i < r.length; i++) if (r[i]) return true;
            return false;
          };
        }
        return (f, c) => {
          const r = x(f, c);
          if (r === undefined) return false;
          for (let i = 0; i < r.length; i++) if (!r[i]) return false;
          return true;
        };
      }
      case 'compare': {
        const lhs = this.value(n.lhs);
        const test = this.test(n.test);
        const missing = this.missingResult(n.test);
        return (f, c) => {
          const v = lhs(f, c);
          return v === undefined ? missing : test(v, f, c);
        };
      }
      case 'value': {
        if (n.x.k === 'field' && n.x.name === 'true') return () => true;
        const x = this.value(n.x);
        return (f, c) => x(f, c) === true;
      }
    }
  }

  private logical(op: 'and' | 'or' | 'xor', items: BoolFn[]): BoolFn {
    if (items.length === 1) return items[0];
    if (items.length === 2) {
      const [a, b] = items;
      if (op === 'and') return (f, c) => a(f, c) && b(f, c);
      if (op === 'or') return (f, c) => a(f, c) || b(f, c);
      return (f, c) => a(f, c) !== b(f, c);
    }
    const n = items.length;
    if (op === 'and') {
      return (f, c) => {
        for (let i = 0; i < n; i++) if (!items[i](f, c)) return false;
        return true;
      };
    }
    if (op === 'or') {
      return (f, c) => {
        for (let i = 0; i < n; i++) if (items[i](f, c)) return true;
        return false;
      };
    }
    return (f, c) => {
      let r = false;
      for (let i = 0; i < n; i++) r = r !== items[i](f, c);
      return r;
    };
  }

  arr(n: IrBool): ArrFn {
    switch (n.k) {
      case 'logical': {
        const items = n.items.map((x) => this.arr(x));
        const op = n.op;
        return (f, c) => {
          // Element-wise; the result is as long as the shortest operand.
          let acc: boolean[] | undefined;
          for (const item of items) {
            const r = item(f, c) ?? EMPTY;
            if (acc === undefined) {
              acc = r.slice();
              continue;
            }
            const len = Math.min(acc.length, r.length);
            acc.length = len;
            for (let i = 0; i < len; i++) acc[i] = op === 'and' ? acc[i] && r[i] : op === 'or' ? acc[i] || r[i] : acc[i] !== r[i];
          }
          return acc ?? [];
        };
      }
      case 'not': {
        const x = this.arr(n.x);
        return (f, c) => {
          const r = x(f, c) ?? EMPTY;
          const out = new Array<boolean>(r.length);
          for (let i = 0; i < r.length; i++) out[i] = !r[i];
          return out;
        };
      }
      case 'compare': {
        const test = this.test(n.test);
        if (n.lhs.each) {
          const s = this.stream(n.lhs);
          return (f, c) => {
            const items = s(f, c);
            const out = new Array<boolean>(items.length);
            for (let i = 0; i < items.length; i++) out[i] = test(items[i], f, c);
            return out;
          };
        }
        // An Array<Bool> compare without a stream is malformed; treat as one element.
        const b = this.bool({ ...n, array: false });
        return (f, c) => [b(f, c)];
      }
      case 'value': {
        if (n.x.each) {
          const s = this.stream(n.x);
          return (f, c) => s(f, c).map((v) => v === true);
        }
        const x = this.value(n.x);
        return (f, c) => {
          const v = x(f, c);
          return Array.isArray(v) ? (v as readonly Value[]).map((e) => e === true) : undefined;
        };
      }
      case 'quantifier': {
        const b = this.bool(n);
        return (f, c) => [b(f, c)];
      }
    }
  }

  /** What a comparison yields when its left side is missing. */
  private missingResult(t: IrTest): boolean {
    if (!this.nilNotEqual) return false;
    return t.k === 'ne' || (t.k === 'dynamic' && t.op === 'ne');
  }

  // --- tests ---------------------------------------------------------------------------

  test(t: IrTest): TestFn {
    switch (t.k) {
      case 'eq':
      case 'ne':
      case 'lt':
      case 'le':
      case 'gt':
      case 'ge': {
        return literalComparison(t.k, t.value);
      }
      case 'contains': {
        const needle = t.value;
        if (needle === '') return (v) => typeof v === 'string';
        return (v) => typeof v === 'string' && v.includes(needle);
      }
      case 'matches': {
        // Compiled at first use; an invalid pattern (the checker refuses it) never matches.
        const re = lazyRegex(t.pattern);
        return (v) => typeof v === 'string' && re.test(v) === true;
      }
      case 'wildcard': {
        const w = parseWildcard(t.pattern);
        if (!w.ok) return () => false;
        const p = w.value;
        const strict = t.strict;
        return (v) => typeof v === 'string' && matchWildcard(p, v, strict);
      }
      case 'bitwise_and': {
        const n = t.value;
        const small = typeof n === 'number' && (n | 0) === n;
        const big = BigInt(n);
        return (v) => {
          if (small && typeof v === 'number' && (v | 0) === v) return (v & (n as number)) !== 0;
          if (typeof v !== 'number' && typeof v !== 'bigint') return false;
          return (BigInt(v) & big) !== 0n;
        };
      }
      case 'inBytes': {
        const set = new Set(t.values);
        return (v) => typeof v === 'string' && set.has(v);
      }
      case 'inInt': {
        const ranges = t.ranges;
        const n = ranges.length;
        return (v) => {
          if (typeof v !== 'number' && typeof v !== 'bigint') return false;
          for (let i = 0; i < n; i++) {
            const r = ranges[i];
            // Mixed number/bigint relational comparisons are exact in JS.
            if (v >= r[0] && v <= r[1]) return true;
          }
          return false;
        };
      }
      case 'inIp': {
        const ranges = t.ranges;
        return (v) => isIp(v) && ipInRanges(v, ranges);
      }
      case 'inList': {
        const name = t.name;
        return (v, _f, c) => (c?.lists ? c.lists(name, v) : false);
      }
      case 'dynamic': {
        const rhs = this.value(t.rhs);
        const cmp = comparator(t.op);
        const missing = this.nilNotEqual && t.op === 'ne';
        return (v, f, c) => {
          const r = rhs(f, c);
          if (r === undefined) return missing;
          return cmp(v, r as string | IntValue | IpAddr);
        };
      }
    }
  }

  // --- values --------------------------------------------------------------------------

  value(n: IrValue): ValFn {
    if (n.each) {
      // A stream used where one value is expected: its elements as an array.
      const s = this.stream(n);
      return (f, c) => s(f, c);
    }
    switch (n.k) {
      case 'field': {
        const name = n.name;
        if (name === 'true') return () => true;
        return (f) => f.get(name);
      }
      case 'index': {
        const target = this.value(n.target);
        const idx = n.index;
        if (idx.kind === 'array') {
          const i = idx.i;
          return (f, c) => {
            const t = target(f, c);
            return Array.isArray(t) ? (t as readonly Value[])[i] : undefined;
          };
        }
        if (idx.kind === 'key') {
          const key = idx.key;
          return (f, c) => {
            const t = target(f, c);
            return t instanceof Map ? t.get(key) : undefined;
          };
        }
        // `[*]` with each: false cannot happen; keep the elements as an array.
        return (f, c) => elements(target(f, c));
      }
      case 'call':
        return this.call(n);
    }
  }

  stream(n: IrValue): StreamFn {
    if (!n.each) {
      const v = this.value(n);
      return (f, c) => {
        const x = v(f, c);
        return x === undefined ? EMPTY : [x];
      };
    }
    if (n.k !== 'index') throw new Error('a stream must come from an index expression');
    const idx = n.index;
    if (!n.target.each) {
      // The first `[*]` of a path: unpack the target.
      const target = this.value(n.target);
      if (idx.kind === 'each') return (f, c) => elements(target(f, c));
      throw new Error('index on a non-stream marked each');
    }
    const src = this.stream(n.target);
    if (idx.kind === 'each') {
      return (f, c) => {
        const items = src(f, c);
        const out: Value[] = [];
        for (let i = 0; i < items.length; i++) {
          const e = elements(items[i]);
          for (let j = 0; j < e.length; j++) out.push(e[j]);
        }
        return out;
      };
    }
    if (idx.kind === 'array') {
      const k = idx.i;
      return (f, c) => {
        const items = src(f, c);
        const out: Value[] = [];
        for (let i = 0; i < items.length; i++) {
          const it = items[i];
          const x = Array.isArray(it) ? (it as readonly Value[])[k] : undefined;
          if (x !== undefined) out.push(x);
        }
        return out;
      };
    }
    const key = idx.key;
    return (f, c) => {
      const items = src(f, c);
      const out: Value[] = [];
      for (let i = 0; i < items.length; i++) {
        const it = items[i];
        const x = it instanceof Map ? it.get(key) : undefined;
        if (x !== undefined) out.push(x);
      }
      return out;
    };
  }

  /**
   * `any(f(x[*], …))` / `all(f(x[*], …))` over a lifted call (the CRS shape
   * `any(op.rx(t.…(…)[*], "…"))`): the call runs element by element and stops at the first
   * element that decides, without building the Array<Bool>. Same result as the general path.
   */
  private quantifiedCall(q: 'any' | 'all', x: IrBool): BoolFn | undefined {
    if (x.k !== 'value' || x.x.k !== 'call' || !x.x.lifted || x.x.each) return undefined;
    const n = x.x;
    const first = n.args[0];
    if (first?.k !== 'val') return undefined;
    const def = RUNTIME_FUNCTIONS.get(n.fn);
    if (!def) throw new Error(`unknown function ${n.fn}`);
    const literals = n.args.map((a) => (a.k === 'literal' ? a.value : undefined));
    const argTypes = n.args.map((a) => (a.k === 'literal' ? a.type : a.k === 'val' ? a.x.type : undefined));
    const impl: RuntimeCall = def.prepare(literals, { type: n.type, argTypes });
    const argFns = n.args.map((a, i) => (i === 0 ? undefined : this.arg(a)));
    const count = argFns.length;
    const scratch: (Value | undefined)[] = new Array(count);
    const env = { fields: undefined as unknown as FieldValues };
    const stream = this.stream(first.x);
    const any = q === 'any';
    return (f, c) => {
      const items = stream(f, c);
      for (let i = 1; i < count; i++) scratch[i] = argFns[i]!(f, c);
      env.fields = f;
      let result = !any;
      for (let i = 0; i < items.length; i++) {
        scratch[0] = items[i];
        const r = impl(scratch, env);
        if (r !== undefined && (r === true) === any) {
          result = any;
          break;
        }
      }
      clear(scratch, env);
      return result;
    };
  }

  /** Whether a call's result goes through the per-request memo. */
  memoized(n: Extract<IrValue, { k: 'call' }>): boolean {
    return memoizable(n, () => irKey(n));
  }

  private call(n: Extract<IrValue, { k: 'call' }>): ValFn {
    const inner = this.callUncached(n);
    let key: string | undefined;
    const keyOf = () => (key ??= irKey(n));
    if (!memoizable(n, keyOf)) return inner;
    let slot = MEMO_SLOTS.get(keyOf());
    if (slot === undefined) MEMO_SLOTS.set(keyOf(), (slot = MEMO_SLOTS.size));
    const at = slot;
    return (f, c) => {
      const m = c?.memo;
      if (m === undefined) return inner(f, c);
      if (m.fields !== f) {
        m.fields = f;
        m.values = new Array(MEMO_SLOTS.size);
      }
      const hit = m.values[at];
      if (hit !== undefined) return hit === MISSING ? undefined : (hit as Value);
      const v = inner(f, c);
      m.values[at] = v === undefined ? MISSING : v;
      return v;
    };
  }

  private callUncached(n: Extract<IrValue, { k: 'call' }>): ValFn {
    const def = RUNTIME_FUNCTIONS.get(n.fn);
    if (!def) throw new Error(`unknown function ${n.fn}`);
    const literals = n.args.map((a) => (a.k === 'literal' ? a.value : undefined));
    const argTypes = n.args.map((a) => (a.k === 'literal' ? a.type : a.k === 'val' ? a.x.type : undefined));
    const impl: RuntimeCall = def.prepare(literals, { type: n.type, argTypes });
    const argFns = n.args.map((a, i) => (n.lifted && i === 0 ? undefined : this.arg(a)));
    const count = argFns.length;
    // One scratch array per call site: a call is never re-entered while it evaluates.
    const scratch: (Value | undefined)[] = new Array(count);
    const env = { fields: undefined as unknown as FieldValues };
    const envOf = (f: FieldValues): CallEnv => ((env.fields = f), env);

    if (!n.lifted) {
      return (f, c) => {
        for (let i = 0; i < count; i++) scratch[i] = argFns[i]!(f, c);
        const r = impl(scratch, envOf(f));
        clear(scratch, env);
        return r;
      };
    }
    const first = n.args[0];
    if (first.k !== 'val') throw new Error('lifted call without a stream argument');
    const stream = this.stream(first.x);
    return (f, c) => {
      const items = stream(f, c);
      for (let i = 1; i < count; i++) scratch[i] = argFns[i]!(f, c);
      const out: Value[] = [];
      for (let i = 0; i < items.length; i++) {
        scratch[0] = items[i];
        const r = impl(scratch, envOf(f));
        if (r !== undefined) out.push(r);
      }
      clear(scratch, env);
      return out;
    };
  }

  arg(a: IrArg): ValFn {
    switch (a.k) {
      case 'literal': {
        const v = a.value;
        return () => v;
      }
      case 'val':
        return this.value(a.x);
      case 'expr': {
        if (a.x.k !== 'quantifier' && a.x.array) {
          const x = this.arr(a.x);
          return (f, c) => x(f, c);
        }
        const x = this.bool(a.x);
        return (f, c) => x(f, c);
      }
    }
  }
}

/**
 * Empties a call site's scratch array and environment once the call returns. They live as
 * long as the compiled rule; holding the last request's values would keep them alive
 * through young-generation collections (copied, then promoted), and make every such
 * collection scan them, in a proxy evaluating thousands of requests a second.
 */
function clear(scratch: (Value | undefined)[], env: { fields: FieldValues | undefined }): void {
  for (let i = 0; i < scratch.length; i++) scratch[i] = undefined;
  env.fields = undefined;
}

/** The elements of an array or the values of a map; nothing for anything else. */
function elements(v: Value | undefined): readonly Value[] {
  if (Array.isArray(v)) return v as readonly Value[];
  if (v instanceof Map) return Array.from((v as ReadonlyMap<string, Value>).values());
  return EMPTY;
}

function isIp(v: Value): v is IpAddr {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Map);
}

type Op = 'eq' | 'ne' | 'lt' | 'le' | 'gt' | 'ge';

/** A comparison with a literal, specialised by the literal's type (the hot path). */
function literalComparison(op: Op, rhs: string | IntValue | IpAddr): TestFn {
  if (typeof rhs === 'string') {
    switch (op) {
      case 'eq':
        return (v) => v === rhs;
      case 'ne':
        return (v) => v !== rhs;
      case 'lt':
        return (v) => typeof v === 'string' && v < rhs;
      case 'le':
        return (v) => typeof v === 'string' && v <= rhs;
      case 'gt':
        return (v) => typeof v === 'string' && v > rhs;
      case 'ge':
        return (v) => typeof v === 'string' && v >= rhs;
    }
  }
  if (typeof rhs === 'number') {
    // Values are normalised (number when safe), but compare a bigint exactly anyway.
    // eslint-disable-next-line eqeqeq
    const eq = (v: Value): boolean => v === rhs || (typeof v === 'bigint' && v == (rhs as unknown as bigint));
    switch (op) {
      case 'eq':
        return eq;
      case 'ne':
        return (v) => !eq(v);
      case 'lt':
        return (v) => (typeof v === 'number' || typeof v === 'bigint') && v < rhs;
      case 'le':
        return (v) => (typeof v === 'number' || typeof v === 'bigint') && v <= rhs;
      case 'gt':
        return (v) => (typeof v === 'number' || typeof v === 'bigint') && v > rhs;
      case 'ge':
        return (v) => (typeof v === 'number' || typeof v === 'bigint') && v >= rhs;
    }
  }
  const cmp = comparator(op);
  return (v) => cmp(v, rhs);
}

/** Compares a present value with a right-hand side of the same type. */
function comparator(op: Op): (v: Value, rhs: string | IntValue | IpAddr) => boolean {
  return (v, rhs) => {
    if (typeof rhs === 'string' || typeof v === 'string') {
      // Binary strings: code-unit order is unsigned byte order.
      if (typeof v !== 'string' || typeof rhs !== 'string') return op === 'ne';
      return order(op, v === rhs, v < rhs);
    }
    if (typeof rhs === 'number' || typeof rhs === 'bigint') {
      if (typeof v !== 'number' && typeof v !== 'bigint') return op === 'ne';
      // == and < are exact across number and bigint.
      // eslint-disable-next-line eqeqeq
      return order(op, v == rhs, v < rhs);
    }
    if (!isIp(v)) return op === 'ne';
    const d = compareIp(v, rhs);
    if (d === undefined) return op === 'ne'; // IPv4 vs IPv6: only `ne` holds
    return order(op, d === 0, d < 0);
  };
}

function order(op: Op, eq: boolean, lt: boolean): boolean {
  switch (op) {
    case 'eq':
      return eq;
    case 'ne':
      return !eq;
    case 'lt':
      return lt;
    case 'le':
      return lt || eq;
    case 'gt':
      return !lt && !eq;
    case 'ge':
      return !lt;
  }
}
