/**
 * Runtime of the managed-only CRS extensions (scheme/managed.ts): transformations `t.*`,
 * operators `op.*` and collection helpers `crs.*`. A missing argument gives a missing
 * result, like every other function.
 */
import type { IpAddr, Value } from '../ir';
import { ipInRanges } from '../ip';
import { detectSQLi } from './crs/libinjection/sqli';
import { detectXSS } from './crs/libinjection/xss';
import { asciiLower } from '../bytes';
import type { RuntimeCall, RuntimeFunction } from './runtimeFunction';
import {
  byteOutsideRanges,
  bytesToNumber,
  crsData,
  invalidUrlEncoding,
  invalidUtf8,
  parseByteRanges,
  parseIpList,
  phraseMatcher,
  rxMatcher,
  splitPhrases,
} from './crs/operators';
import { TRANSFORMS } from './crs/transforms';

export { registerCrsData, crsData } from './crs/operators';

const isBytes = (v: Value | undefined): v is string => typeof v === 'string';
const isMap = (v: Value | undefined): v is ReadonlyMap<string, Value> => v instanceof Map;
const isIp = (v: Value | undefined): v is IpAddr => typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Map) && 'family' in v;

const fn = (prepare: RuntimeFunction['prepare']): RuntimeFunction => ({ prepare });

/** An operator on a Bytes value with a fixed literal parameter. */
function bytesOp(build: (param: string) => (s: string) => boolean, name: string): RuntimeFunction {
  return fn((lits) => {
    const param = lits[1];
    if (!isBytes(param)) throw new Error(`${name}: the parameter must be a literal string`);
    const test = build(param);
    return (args) => (isBytes(args[0]) ? test(args[0]) : undefined);
  });
}

function numericOp(cmp: (a: number, b: number) => boolean): RuntimeFunction {
  return fn((lits) => {
    const p = lits[1];
    const fixed = typeof p === 'number' ? p : typeof p === 'bigint' ? Number(p) : isBytes(p) ? bytesToNumber(p) : undefined;
    return (args) => {
      const [v, q] = args;
      const rhs = fixed ?? (typeof q === 'number' ? q : typeof q === 'bigint' ? Number(q) : isBytes(q) ? bytesToNumber(q) : undefined);
      if (rhs === undefined) return undefined;
      if (typeof v === 'number') return cmp(v, rhs);
      if (typeof v === 'bigint') return cmp(Number(v), rhs);
      if (isBytes(v)) return cmp(bytesToNumber(v), rhs);
      return undefined;
    };
  });
}

const entries: [string, RuntimeFunction][] = [];

/** A transformation of Bytes, applied element-wise to an Array<Bytes>. */
function transformFn(t: (s: string) => Value): RuntimeFunction {
  return fn(() => (args) => {
    const v = args[0];
    if (isBytes(v)) return t(v);
    if (Array.isArray(v)) return (v as readonly Value[]).filter(isBytes).map(t);
    return undefined;
  });
}

for (const [name, t] of TRANSFORMS) entries.push([`t.${name}`, transformFn(t)]);
entries.push(['t.length', transformFn((s) => s.length)]);

entries.push(
  [
    'op.rx',
    bytesOp((pattern) => {
      const r = rxMatcher(pattern);
      if (!r.ok) throw new Error(`op.rx: ${r.message}`);
      return r.test;
    }, 'op.rx'),
  ],
  ['op.pm', bytesOp((param) => phraseMatcher(splitPhrases(param)), 'op.pm')],
  [
    'op.pmFromFile',
    bytesOp((file) => {
      const phrases = splitPhrases(file).map((f) => {
        const data = crsData(f);
        if (!data) throw new Error(`op.pmFromFile: no CRS data file ${JSON.stringify(f)} is registered (scripts/crs/convert.ts generates runtime/crs/crs-data.ts)`);
        return data;
      });
      return phraseMatcher(phrases.flat());
    }, 'op.pmFromFile'),
  ],
  ['op.detectSQLi', fn(() => (args) => (isBytes(args[0]) ? detectSQLi(args[0]).isSqli : undefined))],
  ['op.detectXSS', fn(() => (args) => (isBytes(args[0]) ? detectXSS(args[0]) : undefined))],
  [
    'op.validateByteRange',
    bytesOp((param) => {
      const r = parseByteRanges(param);
      if (!r.ok) throw new Error(`op.validateByteRange: ${r.message}`);
      return (s) => byteOutsideRanges(s, r.allowed);
    }, 'op.validateByteRange'),
  ],
  ['op.validateUrlEncoding', fn(() => (args) => (isBytes(args[0]) ? invalidUrlEncoding(args[0]) : undefined))],
  ['op.validateUtf8Encoding', fn(() => (args) => (isBytes(args[0]) ? invalidUtf8(args[0]) : undefined))],
  ['op.streq', bytesOp((p) => (s) => s === p, 'op.streq')],
  ['op.within', bytesOp((p) => (s) => p.includes(s), 'op.within')],
  ['op.beginsWith', bytesOp((p) => (s) => s.startsWith(p), 'op.beginsWith')],
  ['op.endsWith', bytesOp((p) => (s) => s.endsWith(p), 'op.endsWith')],
  ['op.contains', bytesOp((p) => (s) => s.includes(p), 'op.contains')],
  ['op.eq', numericOp((a, b) => a === b)],
  ['op.ge', numericOp((a, b) => a >= b)],
  ['op.gt', numericOp((a, b) => a > b)],
  ['op.le', numericOp((a, b) => a <= b)],
  ['op.lt', numericOp((a, b) => a < b)],
  [
    'op.ipMatch',
    fn((lits) => {
      const p = lits[1];
      if (!isBytes(p)) throw new Error('op.ipMatch: the parameter must be a literal string');
      const r = parseIpList(p);
      if (!r.ok) throw new Error(`op.ipMatch: ${r.message}`);
      const ranges = r.ranges;
      return (args) => (isIp(args[0]) ? ipInRanges(args[0], ranges) : undefined);
    }),
  ],
  [
    'crs.without',
    fn((lits) => {
      const fixed = lits.slice(1).every(isBytes) ? new Set(lits.slice(1).map((n) => asciiLower(n as string))) : undefined;
      return (args) => {
        const m = args[0];
        if (!isMap(m)) return undefined;
        const drop = fixed ?? new Set(args.slice(1).filter(isBytes).map(asciiLower));
        const out = new Map<string, Value>();
        for (const [k, v] of m) if (!drop.has(asciiLower(k))) out.set(k, v);
        return out;
      };
    }),
  ],
  [
    'crs.without_matching',
    fn((lits) => {
      const p = lits[1];
      if (!isBytes(p)) throw new Error('crs.without_matching: the pattern must be a literal string');
      // ModSecurity matches collection-key regexes case-insensitively.
      const r = rxMatcher(p, true);
      if (!r.ok) throw new Error(`crs.without_matching: ${r.message}`);
      const test = r.test;
      return (args) => {
        const m = args[0];
        if (!isMap(m)) return undefined;
        const out = new Map<string, Value>();
        for (const [k, v] of m) if (!test(k)) out.set(k, v);
        return out;
      };
    }),
  ],
  [
    'crs.join',
    fn((literals) => {
      const separator = literals[1];
      if (!isBytes(separator)) throw new Error('crs.join: the separator must be a literal string');
      return (args) => {
        const values = args[0];
        if (!Array.isArray(values)) return undefined;
        return (values as readonly Value[]).filter(isBytes).join(separator);
      };
    }),
  ],
  [
    'crs.has_repeat',
    fn(() => (args) => {
      const values = args[0];
      if (!Array.isArray(values)) return undefined;
      // A hash set: linear in the number of values (a back-reference pattern over the
      // joined names was quadratic: 10,000 arguments took seconds).
      const seen = new Set<string>();
      for (const v of values as readonly Value[]) {
        if (!isBytes(v) || /^\n*$/.test(v)) continue;
        if (seen.has(v)) return true;
        seen.add(v);
      }
      return false;
    }),
  ],
  [
    'crs.values',
    fn(() => (args) => {
      const m = args[0];
      if (!isMap(m)) return undefined;
      const out: Value[] = [];
      for (const v of m.values()) {
        if (Array.isArray(v)) for (const x of v as readonly Value[]) out.push(x);
        else out.push(v);
      }
      return out;
    }),
  ],
);

export const CRS_RUNTIME_FUNCTIONS: ReadonlyMap<string, RuntimeFunction> = new Map(entries);

/** For tests and tools: a prepared call of one CRS function. */
export function prepareCrs(name: string, literals: readonly (Value | undefined)[]): RuntimeCall {
  const f = CRS_RUNTIME_FUNCTIONS.get(name);
  if (!f) throw new Error(`unknown CRS function ${name}`);
  return f.prepare(literals);
}
