/**
 * Compiles a filter's checked IR into the source of one JavaScript function, so that each
 * filter gets its own machine code from V8: no calls between closures shared by every
 * filter (which V8 cannot inline, their call sites seeing every filter's closures), field
 * values read once into locals, literals inlined into the comparisons, small sets and IPv4
 * ranges as chains of comparisons, field values read from their slots (fieldSlots.ts),
 * `contains` as a search loop made for its needle (contains.ts).
 *
 * It covers the common shapes (logic, comparisons of fields, map keys, array indexes and
 * plain function calls with every test); what it does not cover — `[*]` streams and
 * `any`/`all`, memoized managed-only calls, Array<Bool> logic — is compiled by the closure
 * compiler (evaluate.ts) and called from the generated code. Both give the same results:
 * every test below is the closure compiler's, written out.
 *
 * Literal strings are inlined with JSON.stringify (valid JavaScript string literals); every
 * other constant (regexes, sets, closures) is passed in as a parameter, never as text.
 */
import type { IpRange, IrArg, IrBool, IrTest, IrValue, Value } from './ir';
import { containsSearch } from './contains';
import { NEEDLE_SET_MAX, needleSet } from './needleSet';
import { slotOf } from './fieldSlots';
import { compileRegex } from './regex';
import { RUNTIME_FUNCTIONS } from './runtime/functions';
import type { CallEnv } from './runtime/runtimeFunction';
import { matchWildcard, parseWildcard } from './wildcard';

type Fields = ReadonlyMap<string, Value>;
/** A compiled filter; C is the evaluation context, passed through to the fallbacks. */
export type GenBool<C> = (f: Fields, c: C) => boolean;

/** What the closure compiler provides for the parts generated code does not cover. */
export interface Fallback<C> {
  bool(n: IrBool): GenBool<C>;
  value(n: IrValue): (f: Fields, c: C) => Value | undefined;
  test(t: IrTest): (v: Value, f: Fields, c: C) => boolean;
  arg(a: IrArg): (f: Fields, c: C) => Value | undefined;
  /** Whether a call's result is kept in the per-request memo (then it goes to `value`). */
  memoized(n: Extract<IrValue, { k: 'call' }>): boolean;
}

/** Sets and range lists up to this size become comparison chains. */
const INLINE_MAX = 16;
/** From this many `contains` needles on one field, one pass finds them all (needleSet.ts). */
const NEEDLE_SET_MIN = 4;

/** Compiles `ir` into one function; undefined when this runtime forbids code generation. */
export function generateFilter<C>(ir: IrBool, nilNotEqual: boolean, fallback: Fallback<C>): GenBool<C> | undefined {
  // A dry pass counts the field reads; fields read more than once are read into locals.
  const counter = new Generator(nilNotEqual, fallback, undefined);
  counter.bool(ir);
  const g = new Generator(nilNotEqual, fallback, counter.reads, counter.tests, counter.needles);
  const source = g.source(g.bool(ir));
  let factory: (...k: unknown[]) => GenBool<C>;
  try {
    factory = new Function(...g.consts.map((_, i) => `k${i}`), source) as (...k: unknown[]) => GenBool<C>;
  } catch (e) {
    if (e instanceof EvalError) return undefined; // --disallow-code-generation-from-strings
    throw e;
  }
  return factory(...g.consts);
}

/**
 * A rough cost of evaluating a Bool node, to order the operands of `and` / `or`: a
 * comparison of a field with a constant 1, a search (`contains`, wildcard) 2, a regex 3,
 * a function call or a stream over an array 4; `and` / `or` / `xor` the sum of theirs.
 */
function cost(n: IrBool): number {
  if (n.k === 'quantifier' || n.array) return 4;
  switch (n.k) {
    case 'logical':
      return n.items.reduce((sum, x) => sum + cost(x), 0);
    case 'not':
      return cost(n.x);
    case 'value':
      return valueCost(n.x);
    case 'compare': {
      const t = n.test.k;
      const test = t === 'contains' || t === 'wildcard' ? 2 : t === 'matches' ? 3 : t === 'inList' || t === 'dynamic' ? 4 : 1;
      return test + valueCost(n.lhs) - 1;
    }
  }
}

function valueCost(v: IrValue): number {
  if (v.each) return 4;
  if (v.k === 'field') return 1;
  if (v.k === 'index') return valueCost(v.target);
  return 4;
}

/** A test's IR as text (bigints and Maps spelt out), to find equal tests. */
function testKey(t: IrTest): string {
  return JSON.stringify(t, (_k, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v instanceof Map ? [...(v as Map<unknown, unknown>)] : v));
}

class Generator<C> {
  readonly consts: unknown[] = [];
  /** Field reads emitted (the dry pass) or to emit, by field name. */
  readonly reads = new Map<string, number>();
  /** Comparisons emitted (the dry pass) or to emit, by their IR text. */
  readonly tests = new Map<string, number>();
  /** The memo local of each comparison that occurs more than once. */
  private readonly memos = new Map<string, string>();
  private readonly locals = new Map<string, string>();
  private temps = 0;
  private readonly searchers = new Map<string, string>();
  /** Byte needles of `contains` on each field (the dry pass collects them). */
  readonly needles = new Map<string, Set<string>>();
  /** Per field with enough needles: each needle's automaton, memo local and bit. */
  private readonly needleGroups = new Map<string, Map<string, { readonly search: string; readonly local: string; readonly bit: number }>>();
  /** Whether the code reads fields (and so needs `s`, the slots). */
  private slotted = false;

  /** `counts` absent: the dry pass, which creates no constants and only counts reads. */
  constructor(
    private readonly nilNotEqual: boolean,
    private readonly fb: Fallback<C>,
    private readonly counts: ReadonlyMap<string, number> | undefined,
    private readonly testCounts: ReadonlyMap<string, number> = new Map(),
    private readonly needleCounts: ReadonlyMap<string, ReadonlySet<string>> = new Map(),
  ) {}

  /** The factory body: the function, its temporaries and its field locals. */
  source(expr: string): string {
    const temps = Array.from({ length: this.temps }, (_, i) => `t${i}`);
    const locals = [...this.locals].map(([name, local]) => `const ${local} = ${this.read(name)};`);
    return [
      '"use strict";',
      'return function filter(f, c) {',
      ...(temps.length > 0 ? [`let ${temps.join(', ')};`] : []),
      ...(this.memos.size > 0 ? [`let ${[...this.memos.values()].map((m) => `${m} = 0`).join(', ')};`] : []),
      ...(this.needleLocals.size > 0 ? [`let ${[...this.needleLocals].map((l) => `${l} = -1`).join(', ')};`] : []),
      ...(this.slotted ? ['const s = f.slots;'] : []),
      ...locals,
      `return ${expr};`,
      '};',
    ].join('\n');
  }

  /** A constant made on demand (not at all in the dry pass), as a parameter name. */
  private constant(make: () => unknown): string {
    if (!this.counts) return 'k';
    this.consts.push(make());
    return `k${this.consts.length - 1}`;
  }

  /** One search function per needle, shared by its call sites (so V8 can inline it at each). */
  private searcher(needle: string): string {
    let k = this.searchers.get(needle);
    if (k === undefined) this.searchers.set(needle, (k = this.constant(() => containsSearch(needle))));
    return k;
  }

  /** The needles found in a field's value (a memo local per group: -1 until searched). */
  private readonly needleLocals = new Set<string>();

  /**
   * `contains` of a field that the filter searches for many needles: a bit of the result of
   * one pass over the value, shared by all of them (undefined: an ordinary search).
   */
  private groupedContains(field: string, needle: string, v: string): string | undefined {
    if (!this.counts) {
      let set = this.needles.get(field);
      if (!set) this.needles.set(field, (set = new Set()));
      set.add(needle);
      return undefined;
    }
    let group = this.needleGroups.get(field);
    if (!group) {
      group = new Map();
      this.needleGroups.set(field, group);
      const all = [...(this.needleCounts.get(field) ?? [])].filter((x) => x !== '' && !/[^\x00-\xff]/.test(x));
      if (all.length >= NEEDLE_SET_MIN) {
        for (let i = 0; i < all.length; i += NEEDLE_SET_MAX) {
          const chunk = all.slice(i, i + NEEDLE_SET_MAX);
          const search = this.constant(() => needleSet(chunk));
          const local = `n${this.needleLocals.size}`;
          this.needleLocals.add(local);
          chunk.forEach((x, bit) => group!.set(x, { search, local, bit: 1 << bit }));
        }
      }
    }
    const g = group.get(needle);
    if (!g) return undefined;
    return `typeof ${v} === "string" && ((${g.local} === -1 ? (${g.local} = ${g.search}(${v})) : ${g.local}) & ${g.bit}) !== 0`;
  }

  private temp(): string {
    return `t${this.temps++}`;
  }

  /**
   * Reading a field: from its slot when the values are a FieldMap (fieldSlots.ts), else
   * with `get`.
   */
  private read(name: string): string {
    this.slotted = true;
    return `(s === undefined ? f.get(${JSON.stringify(name)}) : s[${slotOf(name)}])`;
  }

  /** A field's value: its local when read more than once, else a read. */
  private field(name: string): string {
    this.reads.set(name, (this.reads.get(name) ?? 0) + 1);
    if ((this.counts?.get(name) ?? 0) < 2) return this.read(name);
    let local = this.locals.get(name);
    if (!local) this.locals.set(name, (local = `v${this.locals.size}`));
    return local;
  }

  // --- Bool ------------------------------------------------------------------------------

  bool(n: IrBool): string {
    if (n.k === 'quantifier' || n.array) return `${this.constant(() => this.fb.bool(n))}(f, c)`;
    switch (n.k) {
      case 'logical': {
        // `and` / `or` short-circuit: the cheaper operands go first (tests have no side
        // effects and never throw, so the order changes only the cost, never the result).
        const ordered = n.op === 'xor' ? n.items : [...n.items].sort((a, b) => cost(a) - cost(b));
        const items = ordered.map((x) => this.bool(x));
        if (items.length === 1) return items[0];
        if (n.op === 'xor') return items.reduce((a, b) => `(${a} !== ${b})`);
        return `(${items.join(n.op === 'and' ? ' && ' : ' || ')})`;
      }
      case 'not':
        return `!${this.bool(n.x)}`;
      case 'value':
        if (n.x.k === 'field' && n.x.name === 'true') return 'true';
        return `(${this.value(n.x)} === true)`;
      case 'compare':
        return this.memoCompare(n.lhs, n.test);
    }
  }

  /**
   * A comparison of a field that the filter makes more than once (the same test in several
   * branches) is computed once per evaluation: its memo local is 0 until then, 1 if true,
   * 2 if false. Tests have no side effects.
   */
  private memoCompare(lhs: IrValue, t: IrTest): string {
    if (lhs.k !== 'field' || lhs.each) return this.compare(lhs, t);
    const key = `${lhs.name}\n${testKey(t)}`;
    this.tests.set(key, (this.tests.get(key) ?? 0) + 1);
    if ((this.testCounts.get(key) ?? 0) < 2) return this.compare(lhs, t);
    let m = this.memos.get(key);
    if (m === undefined) this.memos.set(key, (m = `m${this.memos.size}`));
    return `((${m} === 0 ? (${m} = ${this.compare(lhs, t)} ? 1 : 2) : ${m}) === 1)`;
  }

  private compare(lhs: IrValue, t: IrTest): string {
    const missing = this.nilNotEqual && (t.k === 'ne' || (t.k === 'dynamic' && t.op === 'ne'));
    const v = this.value(lhs);
    // A field in a local is already a variable; anything else is read once into a temp.
    const simple = /^v\d+$/.test(v);
    const name = simple ? v : this.temp();
    const grouped = lhs.k === 'field' && t.k === 'contains' ? this.groupedContains(lhs.name, t.value, name) : undefined;
    const { expr, falseOnMissing } = grouped !== undefined ? { expr: grouped, falseOnMissing: true } : this.test(t, name);
    if (falseOnMissing && !missing) return simple ? `(${expr})` : `((${name} = ${v}), ${expr})`;
    const check = simple ? `${name} === undefined` : `(${name} = ${v}) === undefined`;
    return `(${check} ? ${missing} : ${expr})`;
  }

  /**
   * A test on the value held in the variable `v`. `falseOnMissing`: expr is false, and does
   * not throw, when v is undefined.
   */
  private test(t: IrTest, v: string): { expr: string; falseOnMissing: boolean } {
    const str = (s: string): string => JSON.stringify(s);
    const isStr = `typeof ${v} === "string"`;
    const isInt = `(typeof ${v} === "number" || typeof ${v} === "bigint")`;
    const via = (): { expr: string; falseOnMissing: boolean } => ({ expr: `${this.constant(() => this.fb.test(t))}(${v}, f, c)`, falseOnMissing: false });
    switch (t.k) {
      case 'eq':
      case 'ne':
      case 'lt':
      case 'le':
      case 'gt':
      case 'ge': {
        const rhs = t.value;
        const op = { eq: '===', ne: '!==', lt: '<', le: '<=', gt: '>', ge: '>=' }[t.k];
        if (typeof rhs === 'string') {
          if (t.k === 'eq') return { expr: `${v} === ${str(rhs)}`, falseOnMissing: true };
          if (t.k === 'ne') return { expr: `${v} !== ${str(rhs)}`, falseOnMissing: false };
          return { expr: `${isStr} && ${v} ${op} ${str(rhs)}`, falseOnMissing: true };
        }
        if (typeof rhs === 'number') {
          // A bigint value is compared exactly, as the closure compiler does.
          const eq = `(${v} === ${rhs} || (typeof ${v} === "bigint" && ${v} == ${rhs}))`;
          if (t.k === 'eq') return { expr: eq, falseOnMissing: true };
          if (t.k === 'ne') return { expr: `!${eq}`, falseOnMissing: false };
          return { expr: `${isInt} && ${v} ${op} ${rhs}`, falseOnMissing: true };
        }
        return via();
      }
      case 'contains':
        if (t.value === '') return { expr: isStr, falseOnMissing: true };
        return { expr: `${isStr} && ${this.searcher(t.value)}(${v})`, falseOnMissing: true };
      case 'matches': {
        const r = compileRegex(t.pattern);
        if (!r.ok) return { expr: 'false', falseOnMissing: true }; // the checker rejects invalid patterns
        // V8's own RegExp when the pattern allows it (regex.ts), else the re2js search.
        return { expr: `${isStr} && ${this.constant(() => r.regex.native ?? r.regex)}.test(${v})`, falseOnMissing: true };
      }
      case 'wildcard': {
        const w = parseWildcard(t.pattern);
        if (!w.ok) return { expr: 'false', falseOnMissing: true };
        return { expr: `${isStr} && ${this.constant(() => matchWildcard)}(${this.constant(() => w.value)}, ${v}, ${t.strict})`, falseOnMissing: true };
      }
      case 'inBytes': {
        if (t.values.length === 0) return { expr: 'false', falseOnMissing: true };
        if (t.values.length <= INLINE_MAX) return { expr: `(${t.values.map((s) => `${v} === ${str(s)}`).join(' || ')})`, falseOnMissing: true };
        return { expr: `${this.constant(() => new Set(t.values))}.has(${v})`, falseOnMissing: true };
      }
      case 'inInt': {
        const small = t.ranges.every(([lo, hi]) => typeof lo === 'number' && typeof hi === 'number');
        if (!small || t.ranges.length > INLINE_MAX) return via();
        const conds = t.ranges.map(([lo, hi]) => (lo === hi ? `${v} === ${lo}` : `(${v} >= ${lo} && ${v} <= ${hi})`));
        // Numbers inline; a bigint value goes through the closure compiler's exact test.
        return { expr: `(typeof ${v} === "number" ? (${conds.join(' || ') || 'false'}) : typeof ${v} === "bigint" && ${this.constant(() => this.fb.test(t))}(${v}, f, c))`, falseOnMissing: true };
      }
      case 'inIp': {
        const v4 = t.ranges.filter((r): r is readonly [Extract<IpRange[0], { family: 4 }>, Extract<IpRange[1], { family: 4 }>] => r[0].family === 4);
        if (v4.length > INLINE_MAX) return via();
        const n = `${v}.n`;
        const conds = v4.map(([lo, hi]) => (lo.n === hi.n ? `${n} === ${lo.n}` : `(${n} >= ${lo.n} && ${n} <= ${hi.n})`));
        // IPv4 inline; anything else (IPv6, or not an address) through the closure compiler.
        return { expr: `(${v}.family === 4 ? (${conds.join(' || ') || 'false'}) : ${this.constant(() => this.fb.test(t))}(${v}, f, c))`, falseOnMissing: false };
      }
      case 'bitwise_and':
      case 'inList':
      case 'dynamic':
        return via();
    }
  }

  // --- values ----------------------------------------------------------------------------

  value(n: IrValue): string {
    if (n.each) return `${this.constant(() => this.fb.value(n))}(f, c)`;
    switch (n.k) {
      case 'field':
        return n.name === 'true' ? 'true' : this.field(n.name);
      case 'index': {
        const target = this.value(n.target);
        const t = this.temp();
        const idx = n.index;
        if (idx.kind === 'array') return `(Array.isArray(${t} = ${target}) ? ${t}[${idx.i}] : undefined)`;
        if (idx.kind === 'key') return `((${t} = ${target}) instanceof Map ? ${t}.get(${JSON.stringify(idx.key)}) : undefined)`;
        return `${this.constant(() => this.fb.value(n))}(f, c)`;
      }
      case 'call':
        return this.call(n);
    }
  }

  private call(n: Extract<IrValue, { k: 'call' }>): string {
    if (n.lifted || this.fb.memoized(n)) return `${this.constant(() => this.fb.value(n))}(f, c)`;
    const def = RUNTIME_FUNCTIONS.get(n.fn);
    if (!def) throw new Error(`unknown function ${n.fn}`);
    const literals = n.args.map((a) => (a.k === 'literal' ? a.value : undefined));
    const argTypes = n.args.map((a) => (a.k === 'literal' ? a.type : a.k === 'val' ? a.x.type : undefined));
    const impl = this.constant(() => def.prepare(literals, { type: n.type, argTypes }));
    // One scratch array per call site, as in the closure compiler: a call never re-enters itself.
    const scratch = this.constant(() => new Array<Value | undefined>(n.args.length));
    const env = this.constant(() => ({ fields: undefined }) as unknown as CallEnv);
    const sets = n.args.map((a, i) => `${scratch}[${i}] = ${this.arg(a)}`);
    // Emptied after the call: a long-lived array holding a request's values would keep
    // them alive past the request (see evaluate.ts callUncached).
    const t = this.temp();
    const clears = n.args.map((_a, i) => `${scratch}[${i}] = undefined`);
    return `(${[...sets, `${env}.fields = f`, `${t} = ${impl}(${scratch}, ${env})`, ...clears, `${env}.fields = undefined`, t].join(', ')})`;
  }

  private arg(a: IrArg): string {
    switch (a.k) {
      case 'literal':
        return typeof a.value === 'string' ? JSON.stringify(a.value) : this.constant(() => a.value);
      case 'val':
        return this.value(a.x);
      case 'expr':
        return a.x.k !== 'quantifier' && a.x.array ? `${this.constant(() => this.fb.arg(a))}(f, c)` : this.bool(a.x);
    }
  }
}
