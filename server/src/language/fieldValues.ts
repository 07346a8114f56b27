/**
 * Field values as a user writes them in a request sample (JSON), turned into the
 * evaluator's runtime values by the scheme's types:
 *
 *   {"http.host": "a.example", "ip.src": "192.0.2.1", "cf.threat_score": 5,
 *    "http.request.headers": {"x-a": ["1"]}, "ssl": true, "http.request.uri.args.names": ["a"]}
 *
 * Bytes: a string (UTF-8 encoded), or `{"hex": "0a1b"}` / `{"base64": "…"}` for bytes that
 * are not UTF-8 text (raw packets, digests). Int: an integer (a JS bigint is accepted too).
 * Bool: true / false. Ip: an address in text form. Array: a JSON array. Map: a JSON
 * object (or a JS Map); keys are UTF-8 encoded. `null` means the field is not set.
 *
 * Edge context that is not a field (`cf.api_gateway.jwt_valid`, see runtime/functions.ts)
 * is accepted under its pseudo-field name. Never throws: problems come back as errors,
 * and the offending field is left out.
 */
import type { Value } from './ir';
import { utf8ToBinary } from './bytes';
import { FieldMap } from './fieldSlots';
import { parseIpAddr } from './ip';
import { EDGE_CONTEXT_FIELDS } from './runtime/functions';
import { base64Decode } from './runtime/functions';
import { suggestNames } from './scheme/index';
import type { Scheme } from './scheme/types';
import { typeToString, type Type } from './types';
import type { FieldValues } from './evaluate';

export interface FieldValueError {
  /** The field name as given. */
  readonly field: string;
  /** Includes the path inside the value, e.g. `http.request.headers["x-a"][0]: expected …`. */
  readonly message: string;
}

/**
 * `only`: the scheme fields the caller reads (a compiled zone's `fieldsRead`); the others
 * are left out unconverted. Edge-context pseudo-fields are kept: functions read them.
 */
export function prepareFields(input: Record<string, unknown>, scheme: Scheme, only?: ReadonlySet<string>): { values: FieldValues; errors: FieldValueError[] } {
  const values = new FieldMap();
  const errors: FieldValueError[] = [];
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    errors.push({ field: '', message: `expected an object of field values, got ${show(input)}` });
    return { values, errors };
  }
  // Object.keys and a lookup, not Object.entries: the request's field object has ~80 keys
  // added one by one (dictionary mode), where Object.entries costs several times as much.
  for (const name of Object.keys(input)) {
    const raw = input[name];
    const fieldType = typesOf(scheme).get(name);
    if (fieldType !== undefined && only !== undefined && !only.has(name)) continue;
    const type = fieldType ?? EDGE_CONTEXT_FIELDS.get(name);
    if (!type) {
      const near = suggestNames(name, scheme).filter((n) => scheme.fields.has(n));
      const hint = near.length === 0 ? '' : ` (did you mean ${near.length === 1 ? near[0] : near.slice(0, -1).join(', ') + ' or ' + near[near.length - 1]}?)`;
      errors.push({ field: name, message: `unknown field ${JSON.stringify(name)}${hint}` });
      continue;
    }
    if (raw === null || raw === undefined) continue;
    const problems: string[] = [];
    const v = convert(raw, type, name, problems);
    if (problems.length > 0) for (const message of problems) errors.push({ field: name, message });
    else if (v !== undefined) values.set(name, v);
  }
  return { values, errors };
}

/**
 * Each scheme's field types by name, read once: the field definitions have many shapes, so
 * reading `.type` from each on every request is a slow (megamorphic) property access.
 */
const FIELD_TYPES = new WeakMap<Scheme, ReadonlyMap<string, Type>>();

function typesOf(scheme: Scheme): ReadonlyMap<string, Type> {
  let types = FIELD_TYPES.get(scheme);
  if (types === undefined) {
    types = new Map([...scheme.fields].map(([name, def]) => [name, def.type]));
    FIELD_TYPES.set(scheme, types);
  }
  return types;
}

/**
 * On a `{"hex": …}` value made in this process from bytes (requests/fieldBytes.ts): the
 * bytes themselves, which convert takes as they are. Its `hex` is then computed only if
 * something reads it (the JSON form), not built and decoded again per request: 100 KB of
 * invalid UTF-8 in a query was 200 KB of hex both ways.
 */
export const EXACT_BYTES: unique symbol = Symbol('exact bytes');

/** Converts one JSON value to a runtime value of `type`; pushes messages on failure. */
export function convertFieldValue(raw: unknown, type: Type, path: string, problems: string[]): Value | undefined {
  return convert(raw, type, path, problems);
}

const MAX_PROBLEMS = 20;

/** A hex digit's value by char code, -1 for any other character. */
const HEX_DIGIT = Array.from({ length: 128 }, (_, c) => (c >= 48 && c <= 57 ? c - 48 : c >= 65 && c <= 70 ? c - 55 : c >= 97 && c <= 102 ? c - 87 : -1));

/**
 * `{"hex": …}` as a binary string: pairs of hex digits, with white space, `:`, `.` and `-`
 * allowed between them; undefined for anything else. A table and no regex: a request's
 * 128 KiB body that is not UTF-8 arrives this way.
 */
function hexToBinary(hex: string): string | undefined {
  const clean = /[\s:.-]/.test(hex) ? hex.replace(/[\s:.-]/g, '') : hex;
  if (clean.length % 2 !== 0) return undefined;
  let out = '';
  for (let i = 0; i < clean.length; i += 2) {
    const hi = HEX_DIGIT[clean.charCodeAt(i)] ?? -1;
    const lo = HEX_DIGIT[clean.charCodeAt(i + 1)] ?? -1;
    if (hi < 0 || lo < 0) return undefined;
    out += String.fromCharCode(hi * 16 + lo);
  }
  return out;
}

/** Records that `raw` at `path` is not a `type` (a function, not a closure per call: this runs for every field of every request). */
function mismatch(raw: unknown, type: Type, path: string, problems: string[]): undefined {
  if (problems.length < MAX_PROBLEMS) problems.push(`${path}: expected ${describe(type)} (${typeToString(type)}), got ${show(raw)}`);
  return undefined;
}

/** Text items as binary strings: the array itself when every item is ASCII (the same bytes either way), else a copy. */
function binaryItems(items: readonly string[]): string[] {
  for (let i = 0; i < items.length; i++) {
    if (utf8ToBinary(items[i]!) !== items[i]) return items.map(utf8ToBinary);
  }
  return items as string[];
}

function convert(raw: unknown, type: Type, path: string, problems: string[]): Value | undefined {
  switch (type.kind) {
    case 'Bytes':
      if (typeof raw === 'string') return utf8ToBinary(raw);
      if (isPlainObject(raw)) {
        const exact = (raw as { [EXACT_BYTES]?: unknown })[EXACT_BYTES];
        if (typeof exact === 'string') return exact;
        const keys = Object.keys(raw);
        if (keys.length === 1 && keys[0] === 'hex' && typeof raw.hex === 'string') {
          const b = hexToBinary(raw.hex);
          if (b !== undefined) return b;
        }
        if (keys.length === 1 && keys[0] === 'base64' && typeof raw.base64 === 'string') {
          const b = base64Decode(raw.base64, false) ?? base64Decode(raw.base64, true);
          if (b !== undefined) return b;
        }
      }
      return mismatch(raw, type, path, problems);
    case 'Int':
      if (typeof raw === 'number' && Number.isInteger(raw)) {
        if (Number.isSafeInteger(raw)) return raw;
        const b = BigInt(raw);
        return b >= I64_MIN && b <= I64_MAX ? b : mismatch(raw, type, path, problems);
      }
      if (typeof raw === 'bigint') {
        if (raw < I64_MIN || raw > I64_MAX) return mismatch(raw, type, path, problems);
        return raw >= BigInt(Number.MIN_SAFE_INTEGER) && raw <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(raw) : raw;
      }
      return mismatch(raw, type, path, problems);
    case 'Bool':
      return typeof raw === 'boolean' ? raw : mismatch(raw, type, path, problems);
    case 'Ip': {
      if (typeof raw !== 'string') return mismatch(raw, type, path, problems);
      const r = parseIpAddr(raw.trim());
      return r.ok ? r.value : mismatch(raw, type, path, problems);
    }
    case 'Array': {
      if (!Array.isArray(raw)) return mismatch(raw, type, path, problems);
      // The common case first: text items of an Array<Bytes>, without a path per item.
      if (type.of.kind === 'Bytes' && raw.every((x) => typeof x === 'string')) return binaryItems(raw as string[]);
      const out: Value[] = [];
      let ok = true;
      raw.forEach((item, i) => {
        const v = convert(item, type.of, `${path}[${i}]`, problems);
        if (v === undefined) ok = false;
        else out.push(v);
      });
      return ok ? out : undefined;
    }
    case 'Map': {
      if (!(raw instanceof Map) && !isPlainObject(raw)) return mismatch(raw, type, path, problems);
      const out = new Map<string, Value>();
      let ok = true;
      const of = type.of;
      const add = (k: string, item: unknown): void => {
        // The common cases first (text, or an array of text), without building the item's path.
        const quick =
          of.kind === 'Bytes' && typeof item === 'string'
            ? utf8ToBinary(item)
            : of.kind === 'Array' && of.of.kind === 'Bytes' && Array.isArray(item) && item.every((x) => typeof x === 'string')
              ? binaryItems(item as string[])
              : undefined;
        const v = quick ?? convert(item, of, `${path}[${JSON.stringify(k)}]`, problems);
        if (v === undefined) ok = false;
        else out.set(utf8ToBinary(k), v);
      };
      if (raw instanceof Map) for (const [k, item] of raw) add(String(k), item);
      else for (const k of Object.keys(raw)) add(k, raw[k]);
      return ok ? out : undefined;
    }
  }
}

const I64_MIN = -(2n ** 63n);
const I64_MAX = 2n ** 63n - 1n;

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Map);
}

function describe(t: Type): string {
  switch (t.kind) {
    case 'Bytes':
      return 'a string';
    case 'Int':
      return 'an integer';
    case 'Bool':
      return 'true or false';
    case 'Ip':
      return 'an IP address';
    case 'Array':
      return 'an array';
    case 'Map':
      return 'an object';
  }
}

/** A short JSON-ish rendering of what the user gave. */
function show(v: unknown): string {
  let s: string;
  if (typeof v === 'bigint') s = `${v}`;
  else if (v === undefined) s = 'nothing';
  else if (typeof v === 'function' || typeof v === 'symbol') s = typeof v;
  else {
    try {
      s = JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? `${x}` : x)) ?? String(v);
    } catch {
      s = String(v);
    }
  }
  return s.length > 60 ? s.slice(0, 57) + '...' : s;
}
