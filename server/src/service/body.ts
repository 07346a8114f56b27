/**
 * Strict decoding of request bodies, worded like the real API's decoder
 * (`invalid JSON: unknown field "kind"`), each error pointing at the field
 * (`source.pointer`, a JSON pointer into the body).
 */
import { ApiError, CODES } from './api';

export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
export type JsonObject = { [k: string]: Json };

export function invalidJson(message: string, pointer?: string): ApiError {
  return ApiError.of(400, CODES.invalidJson, `invalid JSON: ${message}`, pointer);
}

/** Parses a body; an empty body is `undefined`. */
export function parseJson(text: string): Json | undefined {
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text) as Json;
  } catch (e) {
    throw invalidJson(`${(e as Error).message}; send a JSON document with Content-Type: application/json`);
  }
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

export function optString(obj: JsonObject, key: string, pointer = '', max?: number): string | undefined {
  const v = obj[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw invalidJson(`field "${key}" must be a string, got ${kindOf(v)}`, `${pointer}/${key}`);
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
