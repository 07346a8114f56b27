/**
 * Managed-only extensions of the HTTP scheme: what the OWASP Core Rule Set (CRS 3.3.4)
 * needs beyond the public Rules language. Every name here is `managedOnly`: the checker
 * rejects it in user rules (code `managed-only`) unless `allowManaged` is set.
 *
 * - Fields `crs.<variable>`: ModSecurity's request variables, lower case (values in
 *   requests/fields.ts).
 * - Functions `t.<name>(Bytes) -> Bytes`: CRS transformations (`t.length` -> Int).
 * - Functions `op.<name>(value, "parameter") -> Bool`: CRS operators; the parameter is a
 *   literal. True when ModSecurity reports a match (for `op.validate*`: when the value is
 *   invalid).
 * - `crs.without`, `crs.without_matching`, `crs.values`: collection exclusions
 *   (`!ARGS:name`, `!REQUEST_COOKIES:/regex/`) and the values of a collection.
 * Runtime: runtime/crs.ts.
 */
import { BOOL, BYTES, INT, IP, arrayOf, mapOf, parseType, type Type } from '../types';
import type { FieldDef, FunctionDef, ParamDef, TypePattern } from './types';
import { parseByteRanges, parseIpList } from '../runtime/crs/operators';
import { translatePcre } from '../runtime/crs/pcre';
import { TRANSFORMS } from '../runtime/crs/transforms';

const f = (name: string, type: string, doc: string): FieldDef => ({ name: `crs.${name}`, type: parseType(type), doc, managedOnly: true });

export const MANAGED_FIELDS: readonly FieldDef[] = [
  f('args', 'Map<Array<Bytes>>', 'ARGS: query, form (urlencoded or multipart) and JSON body arguments, names and values URL-decoded.'),
  f('args_names', 'Array<Bytes>', 'ARGS_NAMES: names of every argument (URL-decoded).'),
  f('args_get', 'Map<Array<Bytes>>', 'ARGS_GET: query string arguments (URL-decoded).'),
  f('args_get_names', 'Array<Bytes>', 'ARGS_GET_NAMES: names of the query string arguments.'),
  f('args_post', 'Map<Array<Bytes>>', 'ARGS_POST: body arguments (urlencoded, multipart non-file parts; JSON leaves are in ARGS only).'),
  f('args_post_names', 'Array<Bytes>', 'ARGS_POST_NAMES: names of the body arguments.'),
  f('args_combined_size', 'Int', 'ARGS_COMBINED_SIZE: total length of all argument names and values.'),
  f('request_cookies', 'Map<Array<Bytes>>', 'REQUEST_COOKIES: cookies by name, values as sent.'),
  f('request_cookies_names', 'Array<Bytes>', 'REQUEST_COOKIES_NAMES: cookie names as sent.'),
  f('request_headers', 'Map<Array<Bytes>>', 'REQUEST_HEADERS: headers by lower-cased name.'),
  f('request_headers_names', 'Array<Bytes>', 'REQUEST_HEADERS_NAMES: header names as sent.'),
  f('request_uri', 'Bytes', 'REQUEST_URI: path and query string, percent-decoded as libmodsecurity 3 does (no scheme or host).'),
  f('request_uri_raw', 'Bytes', 'REQUEST_URI_RAW: the request target exactly as in the request line.'),
  f('request_filename', 'Bytes', 'REQUEST_FILENAME: the path without the query string, percent-decoded.'),
  f('request_basename', 'Bytes', 'REQUEST_BASENAME: the last segment of REQUEST_FILENAME.'),
  f('query_string', 'Bytes', 'QUERY_STRING: the query string as sent.'),
  f('request_body', 'Bytes', 'REQUEST_BODY: the raw request body.'),
  f('request_body_length', 'Int', 'REQUEST_BODY_LENGTH: the body length in bytes.'),
  f('request_line', 'Bytes', 'REQUEST_LINE: `METHOD target PROTOCOL`.'),
  f('request_method', 'Bytes', 'REQUEST_METHOD: the method as sent.'),
  f('request_protocol', 'Bytes', 'REQUEST_PROTOCOL: e.g. HTTP/1.1.'),
  f('files', 'Array<Bytes>', 'FILES: file names of the uploaded files (multipart).'),
  f('files_names', 'Array<Bytes>', 'FILES_NAMES: form field names of the uploaded files.'),
  f('files_combined_size', 'Int', 'FILES_COMBINED_SIZE: total size of the uploaded files.'),
  f('multipart_part_headers', 'Array<Bytes>', 'MULTIPART_PART_HEADERS: every header line of every multipart part.'),
  f('xml', 'Array<Bytes>', 'XML:/*: the text content of an XML body\'s root element (one value, no attribute values), empty when the body is not XML.'),
  f('xml_attributes', 'Array<Bytes>', 'XML://@*: every attribute value of an XML body, in document order, empty when the body is not XML.'),
  f('reqbody_processor', 'Bytes', 'REQBODY_PROCESSOR: URLENCODED, MULTIPART, JSON, XML or empty.'),
  f('reqbody_error', 'Bool', 'REQBODY_ERROR: the body could not be parsed by its processor.'),
  f('multipart_strict_error', 'Bool', 'MULTIPART_STRICT_ERROR: the multipart body is malformed or ambiguous.'),
  f('remote_addr', 'Ip', 'REMOTE_ADDR: the client address.'),
  f('inbound_data_error', 'Bool', 'INBOUND_DATA_ERROR: the body was larger than the inspection limit; the body variables hold only its start.'),
];

const BYTES_P: readonly TypePattern[] = [BYTES];
const p = (name: string, types: readonly TypePattern[], kind: ParamDef['kind'], extra: Partial<ParamDef> = {}): ParamDef => ({ name, types, kind, ...extra });
const ret = (t: Type) => (): Type => t;
const text = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/** A transformation takes Bytes, or Array<Bytes> (element-wise, same length). */
const TRANSFORM_INPUT: readonly TypePattern[] = [BYTES, arrayOf(BYTES)];
const sameShape =
  (t: Type) =>
  (args: readonly Type[]): Type =>
    args[0]?.kind === 'Array' ? arrayOf(t) : t;

function transform(name: string): FunctionDef {
  return {
    name: `t.${name}`,
    signature: `t.${name}(value: Bytes | Array<Bytes>) -> Bytes | Array<Bytes>`,
    doc: `CRS transformation t:${name} (element-wise on an array).`,
    params: [p('value', TRANSFORM_INPUT, 'field')],
    minArgs: 1,
    maxArgs: 1,
    returns: sameShape(BYTES),
    managedOnly: true,
  };
}

function operator(name: string, first: readonly TypePattern[], param: readonly TypePattern[] | undefined, doc: string, validate?: (v: string) => string | undefined): FunctionDef {
  const firstType = first.map((t) => ('kind' in t ? t.kind : '_')).join(' | ');
  return {
    name: `op.${name}`,
    signature: param ? `op.${name}(value: ${firstType}, parameter: ${param.map((t) => ('kind' in t ? t.kind : '_')).join(' | ')}) -> Bool` : `op.${name}(value: ${firstType}) -> Bool`,
    doc: `CRS operator @${name}: ${doc}`,
    params: param ? [p('value', first, 'either'), p('parameter', param, 'literal')] : [p('value', first, 'either')],
    minArgs: param ? 2 : 1,
    maxArgs: param ? 2 : 1,
    returns: ret(BOOL),
    validateLiteral: validate ? (i, v) => (i === 1 && text(v) !== undefined ? validate(text(v)!) : undefined) : undefined,
    managedOnly: true,
  };
}

const validatePcre = (v: string): string | undefined => {
  const t = translatePcre(v);
  if (!t.ok) return `untranslatable PCRE pattern: ${t.message}`;
  try {
    new RegExp(t.source, t.flags);
    return undefined;
  } catch (e) {
    return `untranslatable PCRE pattern: ${(e as Error).message}`;
  }
};

const MAP_ARRAY_BYTES = mapOf(arrayOf(BYTES));

export const MANAGED_FUNCTIONS: readonly FunctionDef[] = [
  ...[...TRANSFORMS.keys()].map(transform),
  {
    name: 't.length',
    signature: 't.length(value: Bytes | Array<Bytes>) -> Int | Array<Int>',
    doc: 'CRS transformation t:length: the length in bytes (element-wise on an array).',
    params: [p('value', TRANSFORM_INPUT, 'field')],
    minArgs: 1,
    maxArgs: 1,
    returns: sameShape(INT),
    managedOnly: true,
  },
  operator('rx', BYTES_P, BYTES_P, 'the PCRE pattern matches.', validatePcre),
  operator('pm', BYTES_P, BYTES_P, 'one of the space-separated phrases occurs (ASCII case-insensitive).'),
  operator('pmFromFile', BYTES_P, BYTES_P, 'one of the phrases of the CRS data file occurs (ASCII case-insensitive).'),
  operator('detectSQLi', BYTES_P, undefined, 'libinjection finds SQL injection.'),
  operator('detectXSS', BYTES_P, undefined, 'libinjection finds cross-site scripting.'),
  operator('validateByteRange', BYTES_P, BYTES_P, 'a byte is outside the ranges (e.g. "1-255" or "38,44-46").', (v) => {
    const r = parseByteRanges(v);
    return r.ok ? undefined : r.message;
  }),
  operator('validateUrlEncoding', BYTES_P, undefined, 'the value has an invalid %-escape.'),
  operator('validateUtf8Encoding', BYTES_P, undefined, 'the value is not valid UTF-8.'),
  operator('streq', BYTES_P, BYTES_P, 'the value equals the parameter.'),
  operator('within', BYTES_P, BYTES_P, 'the value occurs within the parameter.'),
  operator('beginsWith', BYTES_P, BYTES_P, 'the value starts with the parameter.'),
  operator('endsWith', BYTES_P, BYTES_P, 'the value ends with the parameter.'),
  operator('contains', BYTES_P, BYTES_P, 'the value contains the parameter.'),
  ...(['eq', 'ge', 'gt', 'le', 'lt'] as const).map((op) => operator(op, [INT, BYTES], [INT], `numeric comparison (a Bytes value is read as a decimal number, 0 when it is none).`)),
  operator('ipMatch', [IP], BYTES_P, 'the address is in one of the comma-separated addresses or CIDRs.', (v) => {
    const r = parseIpList(v);
    return r.ok ? undefined : r.message;
  }),
  {
    name: 'crs.without',
    signature: 'crs.without(collection: Map<Array<Bytes>>, name: Bytes, ...) -> Map<Array<Bytes>>',
    doc: 'The collection without the named keys (case-insensitive), as `!ARGS:name` does.',
    params: [p('collection', [MAP_ARRAY_BYTES], 'field'), p('name', BYTES_P, 'literal', { variadic: true })],
    minArgs: 2,
    maxArgs: Infinity,
    returns: ret(MAP_ARRAY_BYTES),
    managedOnly: true,
  },
  {
    name: 'crs.without_matching',
    signature: 'crs.without_matching(collection: Map<Array<Bytes>>, pattern: Bytes) -> Map<Array<Bytes>>',
    doc: 'The collection without the keys the (case-insensitive) PCRE pattern matches, as `!REQUEST_COOKIES:/regex/` does.',
    params: [p('collection', [MAP_ARRAY_BYTES], 'field'), p('pattern', BYTES_P, 'literal')],
    minArgs: 2,
    maxArgs: 2,
    returns: ret(MAP_ARRAY_BYTES),
    validateLiteral: (i, v) => (i === 1 && text(v) !== undefined ? validatePcre(text(v)!) : undefined),
    managedOnly: true,
  },
  {
    name: 'crs.join',
    signature: 'crs.join(values: Array<Bytes>, separator: Bytes) -> Bytes',
    doc: 'The values joined with the separator, in order (`join` of the transform phases, for managed rules).',
    params: [p('values', [arrayOf(BYTES)], 'field'), p('separator', BYTES_P, 'literal')],
    minArgs: 2,
    maxArgs: 2,
    returns: ret(BYTES),
    managedOnly: true,
  },
  {
    name: 'crs.has_repeat',
    signature: 'crs.has_repeat(values: Array<Bytes>) -> Bool',
    doc: 'True when a value occurs twice, values made only of line feeds aside (921180: an argument name given twice, as 921170 counts the names that `.` matches).',
    params: [p('values', [arrayOf(BYTES)], 'field')],
    minArgs: 1,
    maxArgs: 1,
    returns: ret(BOOL),
    managedOnly: true,
  },
  {
    name: 'crs.values',
    signature: 'crs.values(collection: Map<Array<Bytes>>) -> Array<Bytes>',
    doc: 'All values of the collection, flattened.',
    params: [p('collection', [MAP_ARRAY_BYTES], 'field')],
    minArgs: 1,
    maxArgs: 1,
    returns: ret(arrayOf(BYTES)),
    managedOnly: true,
  },
];

/** What a managed-only name is, for the `managed-only` diagnostic. */
export function managedOnlyMessage(name: string): string {
  const what = name.startsWith('t.')
    ? 'a CRS transformation'
    : name.startsWith('op.')
      ? 'a CRS operator'
      : MANAGED_FIELDS.some((x) => x.name === name)
        ? 'a CRS variable'
        : name.startsWith('crs.')
          ? 'a CRS collection helper'
          : 'a managed-only extension';
  return `\`${name}\` is ${what}, only available to managed rulesets`;
}
