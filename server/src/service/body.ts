/**
 * Strict decoding of request bodies, worded like the real API's decoder
 * (`invalid JSON: unknown field "kind"`), each error pointing at the field
 * (`source.pointer`, a JSON pointer into the body).
 */
import { ApiError, CODES } from './api';
import { bytesToBinary, firstNonUtf8 } from '../language/bytes';

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

/** Parses a body; an empty body is `undefined`. */
export function parseJson(text: string): Json | undefined {
  if (text.trim() === '') return undefined;
  if (depthOf(text) > MAX_DEPTH) throw invalidJson(`exceeded max depth: the body nests objects and arrays more than ${MAX_DEPTH} levels deep`);
  try {
    return JSON.parse(text) as Json;
  } catch (e) {
    throw invalidJson(`${(e as Error).message}; send a JSON document with Content-Type: application/json`);
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

export function optString(obj: JsonObject, key: string, pointer = '', max?: number): string | undefined {
  const v = obj[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw invalidJson(`field "${key}" must be a string, got ${kindOf(v)}`, `${pointer}/${key}`);
  refuseNul(v, key, pointer);
  if (max !== undefined && v.length > max) {
    throw ApiError.of(400, CODES.invalidValue, `'${key}' is too long: at most ${max} characters, got ${v.length}`, `${pointer}/${key}`);
  }
  return v;
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
