/**
 * Strict decoding of request bodies, worded like the real API's decoder
 * (`invalid JSON: unknown field "kind"`), each error pointing at the field
 * (`source.pointer`, a JSON pointer into the body).
 */
import { ApiError, CODES } from './api';
import { bytesToBinary, charLength, firstNonUtf8, longerThan } from '../language/bytes';

export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
export type JsonObject = { [k: string]: Json };

export function invalidJson(message: string, pointer?: string): ApiError {
  return ApiError.of(400, CODES.invalidJson, `invalid JSON: ${message}`, pointer);
}

/**
 * How deep a body may nest (objects and arrays). The deepest body the API takes (an
 * execute rule's overrides) nests 7 levels; 64 leaves room and keeps every recursive
 * walk of a body (validation, canonical JSON, pointers) far from the stack's limit.
 */
export const MAX_DEPTH = 64;

/** Decodes a body's bytes as UTF-8; invalid bytes are refused (not replaced, which would change the data). */
export function decodeUtf8(bytes: Uint8Array): string {
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    // The decoder says only that it failed; the core's check says where.
    const at = Math.max(0, firstNonUtf8(bytesToBinary(bytes)));
    throw invalidJson(`the body is not valid UTF-8 (byte 0x${bytes[at]?.toString(16).padStart(2, '0') ?? '??'} at offset ${at}); send UTF-8 JSON`);
  }
}

/** The nesting depth of a JSON text (strings skipped), without recursion. */
function depthOf(text: string): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) max = Math.max(max, ++depth);
    else if (c === 0x7d || c === 0x5d) depth--;
  }
  return max;
}

/** Parses a body; an empty body is `undefined`. Every string and key is well-formed Unicode (refuseLoneSurrogates). */
export function parseJson(text: string): Json | undefined {
  if (text.trim() === '') return undefined;
  if (depthOf(text) > MAX_DEPTH) throw invalidJson(`exceeded max depth: the body nests objects and arrays more than ${MAX_DEPTH} levels deep`);
  let value: Json;
  try {
    value = JSON.parse(text) as Json;
  } catch (e) {
    throw invalidJson(`${(e as Error).message}; send a JSON document with Content-Type: application/json`);
  }
  // Text decoded from UTF-8 holds no lone surrogate: only a `\uD800`-style escape can make one.
  if (SURROGATE_ESCAPE.test(text)) refuseLoneSurrogates(value, '');
  return value;
}

const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;

/** `String.prototype.isWellFormed` (ES2024, in Node 20; the project's lib is ES2022). */
function isWellFormed(s: string): boolean {
  return (s as unknown as { isWellFormed(): boolean }).isWellFormed();
}

/** The index of a string's first lone UTF-16 surrogate (-1: none). */
function loneSurrogateAt(s: string): number {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const next = s.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) i++;
      else return i;
    } else if (c >= 0xdc00 && c <= 0xdfff) return i;
  }
  return -1;
}

function loneSurrogate(s: string): string {
  const at = loneSurrogateAt(s);
  return `a lone UTF-16 surrogate (U+${s.charCodeAt(at).toString(16).toUpperCase()} at index ${at})`;
}

/**
 * `"\ud800"` is valid JSON but not well-formed Unicode: the store writes it as UTF-8 that
 * reads back as U+FFFD, so what was validated and answered would not be what is kept. Any
 * string or key holding a lone surrogate is refused at its JSON pointer (a key: at the
 * object that has it, as a key with a NUL is), as a NUL is (refuseNul). The walk is
 * bounded by MAX_DEPTH.
 */
function refuseLoneSurrogates(v: Json, pointer: string): void {
  eachLeaf(v, pointer, (x, at, key) => {
    if (typeof x !== 'string' || isWellFormed(x)) return;
    const message = key
      ? `a key in ${at || '/'} must not contain ${loneSurrogate(x)}: send keys of well-formed Unicode, a surrogate only as half of a pair`
      : `the value at ${at || '/'} must not contain ${loneSurrogate(x)}: send a string of well-formed Unicode, a surrogate only as half of a pair`;
    throw ApiError.of(400, CODES.invalidValue, message, at);
  });
}

/**
 * Calls `visit` on every string, number and key in `v`, depth first, with its JSON pointer
 * (a key's is the object's that holds it, where an error about it is reported).
 */
export function eachLeaf(v: Json, pointer: string, visit: (leaf: string | number, pointer: string, key: boolean) => void): void {
  if (typeof v === 'string' || typeof v === 'number') {
    visit(v, pointer, false);
    return;
  }
  if (v === null || typeof v !== 'object') return;
  if (Array.isArray(v)) {
    v.forEach((x, i) => eachLeaf(x, `${pointer}/${i}`, visit));
    return;
  }
  for (const [k, x] of Object.entries(v)) {
    visit(k, pointer, true);
    eachLeaf(x, `${pointer}/${escapePointer(k)}`, visit);
  }
}

/**
 * A copy of an object without its `null` members, at every level of nested objects
 * (array elements are kept as they are). The hosted API decodes bodies like Go's
 * encoding/json: `null` for a field is the same as leaving the field out.
 */
export function withoutNulls(v: JsonObject): JsonObject {
  const out: JsonObject = {};
  for (const [k, val] of Object.entries(v)) {
    if (val === null) continue;
    out[k] = typeof val === 'object' && !Array.isArray(val) ? withoutNulls(val) : Array.isArray(val) ? val.map((x) => (x !== null && typeof x === 'object' && !Array.isArray(x) ? withoutNulls(x) : x)) : val;
  }
  return out;
}

function kindOf(v: Json | undefined): string {
  if (v === undefined) return 'nothing';
  if (v === null) return 'null';
  return Array.isArray(v) ? 'array' : typeof v;
}

export function expectObject(v: Json | undefined, pointer = ''): JsonObject {
  if (v === null || v === undefined || typeof v !== 'object' || Array.isArray(v)) {
    throw invalidJson(`expected an object at ${pointer || 'the top level'}, got ${kindOf(v)}`, pointer || '/');
  }
  return v;
}

export function expectArray(v: Json | undefined, pointer = ''): Json[] {
  if (!Array.isArray(v)) throw invalidJson(`expected an array at ${pointer || 'the top level'}, got ${kindOf(v)}`, pointer || '/');
  return v;
}

/** Rejects any key outside `allowed`, as the API's strict decoder does. */
export function onlyKeys(obj: JsonObject, allowed: readonly string[], pointer = ''): void {
  for (const k of Object.keys(obj)) {
    if (!allowed.includes(k)) throw invalidJson(`unknown field "${k}"`, `${pointer}/${escapePointer(k)}`);
  }
}

export function escapePointer(k: string): string {
  return k.replace(/~/g, '~0').replace(/\//g, '~1');
}

/**
 * A string field may not hold a NUL character: the store's text columns reach SQLite as C
 * strings and would silently end there (store.ts refuses such a value outright).
 */
export function refuseNul(v: string, key: string, pointer: string): string {
  if (v.includes('\u0000')) throw ApiError.of(400, CODES.invalidValue, `'${key}' must not contain a NUL character (U+0000)`, `${pointer}/${key}`);
  return v;
}

/** Refuses a text of more than `max` characters (code points: an emoji is one), in the API's words. */
export function refuseLong(v: string, max: number, key: string, pointer: string): string {
  if (longerThan(v, max)) throw ApiError.of(400, CODES.invalidValue, `'${key}' is too long: at most ${max} characters, got ${charLength(v)}`, `${pointer}/${key}`);
  return v;
}

export function optString(obj: JsonObject, key: string, pointer = '', max?: number): string | undefined {
  const v = obj[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw invalidJson(`field "${key}" must be a string, got ${kindOf(v)}`, `${pointer}/${key}`);
  refuseNul(v, key, pointer);
  return max === undefined ? v : refuseLong(v, max, key, pointer);
}

export function reqString(obj: JsonObject, key: string, pointer = ''): string {
  const v = optString(obj, key, pointer);
  if (v === undefined) throw ApiError.of(400, CODES.invalidValue, `${key} is required`, `${pointer}/${key}`);
  return v;
}

export function optBool(obj: JsonObject, key: string, pointer = ''): boolean | undefined {
  const v = obj[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'boolean') throw invalidJson(`field "${key}" must be true or false, got ${kindOf(v)}`, `${pointer}/${key}`);
  return v;
}

export function optInt(obj: JsonObject, key: string, pointer = '', min = -Infinity, max = Infinity): number | undefined {
  const v = obj[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v)) throw invalidJson(`field "${key}" must be an integer, got ${kindOf(v)}`, `${pointer}/${key}`);
  if (v < min || v > max) {
    throw ApiError.of(400, CODES.invalidValue, `'${v}' is not a valid value for ${key}: expected ${min} to ${max}`, `${pointer}/${key}`);
  }
  return v;
}

/**
 * A NUL anywhere in a value (a rule, a trace's headers; a key or a string, at any depth) is
 * refused where it is: SQLite would cut the text there. So is a number too large for a double (`1e400`): JSON.parse
 * reads it as Infinity, which would be stored, and compared, as null.
 */
export function refuseNulWithin(v: Json, pointer: string): void {
  eachLeaf(v, pointer, (x, at, key) => {
    if (typeof x === 'number') {
      if (!Number.isFinite(x)) throw invalidJson(`the number at ${at || '/'} is too large: a JSON number must fit in a 64-bit float`, at);
    } else if (x.includes('\u0000')) {
      throw ApiError.of(400, CODES.invalidValue, key ? `a key in ${at || '/'} must not contain a NUL character (U+0000)` : `the value at ${at || '/'} must not contain a NUL character (U+0000)`, at);
    }
  });
}
