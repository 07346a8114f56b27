/**
 * The functions of the HTTP scheme (reference rules-language §5), and `bit_slice` of the
 * network-layer scheme. `any` and `all` are not here: they are syntax (quantifiers).
 *
 * Argument kinds follow the reference's kinds column: `field` = must not be a literal
 * (any field, call or indexed expression), `literal` = must be one, `either` = both.
 * `validateLiteral` returns the inner text of the engine's
 * `invalid value of argument #i: invalid argument: "<msg>"`; it receives the decoded
 * literal (a string or bytes for Bytes, a number or bigint for Int).
 */
import { BOOL, BYTES, INT, IP, arrayOf } from '../types';
import type { Type } from '../types';
import type { FunctionDef, ParamDef, Phase, TypePattern } from './types';
import { TRANSFORM_PHASES } from './fields';

const ANY: TypePattern = { any: true };
const ANY_ARRAY: TypePattern = { anyArray: true };
const ANY_MAP: TypePattern = { anyMap: true };

type Kind = ParamDef['kind'];

function param(name: string, types: readonly TypePattern[], kind: Kind, extra: Partial<ParamDef> = {}): ParamDef {
  return { name, types, kind, ...extra };
}

const returnsType =
  (t: Type) =>
  (): Type =>
    t;

/** Returns the type of argument #0 (concat, coalesce); Bytes when it is not known yet. */
const returnsFirst = (args: readonly Type[]): Type => args[0] ?? BYTES;

/** Transform Rules plus dynamic redirect targets: where rewrite/value functions work. */
const REWRITE_PHASES: readonly Phase[] = [...TRANSFORM_PHASES, 'http_request_dynamic_redirect'];
const FIREWALL_PHASES: readonly Phase[] = ['http_request_firewall_custom', 'http_ratelimit'];

// ----- literal checks -------------------------------------------------------------------

function intValue(v: unknown): number | undefined {
  if (typeof v === 'number') return v;
  if (typeof v === 'bigint') return Number(v);
  return undefined;
}

function textValue(v: unknown): string | undefined {
  if (typeof v === 'string') return v;
  if (v instanceof Uint8Array) {
    let s = '';
    for (const b of v) s += String.fromCharCode(b);
    return s;
  }
  return undefined;
}

function checkRange(v: unknown, min: number, max: number, what: string): string | undefined {
  const n = intValue(v);
  if (n === undefined || (n >= min && n <= max)) return undefined;
  return `${what} must be between ${min} and ${max}`;
}

function checkLetters(v: unknown, allowed: string, what: string): string | undefined {
  const s = textValue(v);
  if (s === undefined) return undefined;
  for (const ch of s) if (!allowed.includes(ch)) return `${what} may only contain ${describeLetters(allowed)}`;
  return undefined;
}

function describeLetters(allowed: string): string {
  const letters = [...allowed];
  if (letters.length === 1) return `the letter ${letters[0]}`;
  return `the letters ${letters.slice(0, -1).join(', ')} and ${letters[letters.length - 1]}`;
}

function checkNotEmpty(v: unknown, what: string): string | undefined {
  const s = textValue(v);
  return s === '' ? `${what} must not be empty` : undefined;
}

function checkNotNegative(v: unknown, what: string): string | undefined {
  const n = intValue(v);
  return n !== undefined && n < 0 ? `${what} must not be negative` : undefined;
}

// ----- the catalog ----------------------------------------------------------------------

export const FUNCTIONS: readonly FunctionDef[] = [
  {
    name: 'cidr',
    signature: 'cidr(address: Ip, v4_bits: Int, v6_bits: Int) -> Ip',
    doc: 'Network address of an IP: keeps the first v4_bits (IPv4, 1–32) or v6_bits (IPv6, 1–128) bits and zeroes the rest.',
    params: [param('address', [IP], 'field'), param('v4_bits', [INT], 'literal'), param('v6_bits', [INT], 'literal')],
    minArgs: 3,
    maxArgs: 3,
    returns: returnsType(IP),
    validateLiteral: (i, v) =>
      i === 1 ? checkRange(v, 1, 32, 'cidr v4_bits') : i === 2 ? checkRange(v, 1, 128, 'cidr v6_bits') : undefined,
    phases: FIREWALL_PHASES,
  },
  {
    name: 'cidr6',
    signature: 'cidr6(address: Ip, v6_bits: Int) -> Ip',
    doc: 'Network address of an IPv6 address with a v6_bits (1–128) prefix; IPv4 addresses come back unchanged.',
    params: [param('address', [IP], 'field'), param('v6_bits', [INT], 'literal')],
    minArgs: 2,
    maxArgs: 2,
    returns: returnsType(IP),
    validateLiteral: (i, v) => (i === 1 ? checkRange(v, 1, 128, 'cidr6 v6_bits') : undefined),
    phases: FIREWALL_PHASES,
  },
  {
    name: 'concat',
    signature: 'concat(first: Bytes | Array<_>, ...rest: Bytes | Array<_>) -> Bytes | Array<_>',
    doc: 'Joins two or more byte strings, or two or more arrays of the same type; missing arguments count as empty.',
    params: [param('first', [BYTES, ANY_ARRAY], 'either'), param('rest', [{ sameAs: 0 }], 'either', { variadic: true })],
    minArgs: 2,
    maxArgs: Infinity,
    returns: returnsFirst,
  },
  {
    name: 'decode_base64',
    signature: 'decode_base64(source: Bytes) -> Bytes',
    doc: 'Decodes a Base64 string.',
    params: [param('source', [BYTES], 'field')],
    minArgs: 1,
    maxArgs: 1,
    returns: returnsType(BYTES),
    phases: [...TRANSFORM_PHASES, ...FIREWALL_PHASES],
  },
  {
    name: 'encode_base64',
    signature: 'encode_base64(input: Bytes, flags?: Bytes) -> Bytes',
    doc: 'Encodes bytes as Base64 (standard alphabet, no padding); flags: u = URL-safe alphabet, p = add "=" padding.',
    params: [param('input', [BYTES], 'either'), param('flags', [BYTES], 'literal', { optional: true })],
    minArgs: 1,
    maxArgs: 2,
    returns: returnsType(BYTES),
    validateLiteral: (i, v) => (i === 1 ? checkLetters(v, 'up', 'encode_base64 flags') : undefined),
    phases: ['http_request_late_transform', 'http_response_headers_transform'],
  },
  {
    name: 'ends_with',
    signature: 'ends_with(source: Bytes, suffix: Bytes) -> Bool',
    doc: 'True when source ends with suffix (byte comparison, case-sensitive).',
    params: [param('source', [BYTES], 'field'), param('suffix', [BYTES], 'literal')],
    minArgs: 2,
    maxArgs: 2,
    returns: returnsType(BOOL),
  },
  {
    name: 'starts_with',
    signature: 'starts_with(source: Bytes, prefix: Bytes) -> Bool',
    doc: 'True when source begins with prefix (byte comparison, case-sensitive).',
    params: [param('source', [BYTES], 'field'), param('prefix', [BYTES], 'literal')],
    minArgs: 2,
    maxArgs: 2,
    returns: returnsType(BOOL),
  },
  {
    name: 'has_key',
    signature: 'has_key(map: Map<_>, key: Bytes) -> Bool',
    doc: 'True when the map has an entry for key.',
    params: [param('map', [ANY_MAP], 'field'), param('key', [BYTES], 'either')],
    minArgs: 2,
    maxArgs: 2,
    returns: returnsType(BOOL),
  },
  {
    name: 'has_value',
    signature: 'has_value(collection: Map<_> | Array<_>, value: _) -> Bool',
    doc: 'True when some element of the array (or some value of the map) equals value.',
    params: [param('collection', [ANY_MAP, ANY_ARRAY], 'field'), param('value', [{ elementOf: 0 }], 'either')],
    minArgs: 2,
    maxArgs: 2,
    returns: returnsType(BOOL),
  },
  {
    name: 'join',
    signature: 'join(items: Array<Bytes>, separator: Bytes) -> Bytes',
    doc: 'Joins the items of an array with separator between them; an empty array gives "".',
    params: [param('items', [arrayOf(BYTES)], 'field'), param('separator', [BYTES], 'literal')],
    minArgs: 2,
    maxArgs: 2,
    returns: returnsType(BYTES),
    phases: [...TRANSFORM_PHASES, 'http_request_firewall_custom', 'http_custom_errors'],
  },
  {
    name: 'split',
    signature: 'split(source: Bytes, separator: Bytes, limit?: Int) -> Array<Bytes>',
    doc: 'Splits source at each separator into at most limit (1–128) items; the last item keeps the rest.',
    params: [
      param('source', [BYTES], 'field'),
      param('separator', [BYTES], 'literal'),
      param('limit', [INT], 'literal', { optional: true }),
    ],
    minArgs: 2,
    maxArgs: 3,
    returns: returnsType(arrayOf(BYTES)),
    validateLiteral: (i, v) =>
      i === 1 ? checkNotEmpty(v, 'split separator') : i === 2 ? checkRange(v, 1, 128, 'split limit') : undefined,
    phases: ['http_response_headers_transform', 'http_custom_errors'],
  },
  {
    name: 'len',
    signature: 'len(value: Bytes | Array<_>) -> Int',
    doc: 'Length of a byte string in bytes, or number of elements of an array.',
    params: [param('value', [BYTES, ANY_ARRAY], 'field')],
    minArgs: 1,
    maxArgs: 1,
    returns: returnsType(INT),
  },
  {
    name: 'lookup_json_integer',
    signature: 'lookup_json_integer(json: Bytes, key: Bytes | Int, ...keys: Bytes | Int) -> Int',
    doc: 'Integer found in a JSON document by following object keys and array indexes; missing unless it is a plain integer.',
    params: [param('json', [BYTES], 'field'), param('keys', [BYTES, INT], 'literal', { variadic: true })],
    minArgs: 2,
    maxArgs: Infinity,
    returns: returnsType(INT),
  },
  {
    name: 'lookup_json_string',
    signature: 'lookup_json_string(json: Bytes, key: Bytes | Int, ...keys: Bytes | Int) -> Bytes',
    doc: 'String found in a JSON document by following object keys and array indexes; missing unless it is a string.',
    params: [param('json', [BYTES], 'field'), param('keys', [BYTES, INT], 'literal', { variadic: true })],
    minArgs: 2,
    maxArgs: Infinity,
    returns: returnsType(BYTES),
  },
  {
    name: 'lower',
    signature: 'lower(source: Bytes) -> Bytes',
    doc: 'Converts ASCII upper-case letters to lower case; other bytes are unchanged.',
    params: [param('source', [BYTES], 'field')],
    minArgs: 1,
    maxArgs: 1,
    returns: returnsType(BYTES),
  },
  {
    name: 'upper',
    signature: 'upper(source: Bytes) -> Bytes',
    doc: 'Converts ASCII lower-case letters to upper case; other bytes are unchanged.',
    params: [param('source', [BYTES], 'field')],
    minArgs: 1,
    maxArgs: 1,
    returns: returnsType(BYTES),
  },
  {
    name: 'regex_replace',
    signature: 'regex_replace(source: Bytes, regex: Bytes, replacement: Bytes) -> Bytes',
    doc: 'Replaces the first match of regex in source; ${1}…${8} insert capture groups and $$ a literal $. Once per expression.',
    params: [param('source', [BYTES], 'field'), param('regex', [BYTES], 'literal'), param('replacement', [BYTES], 'literal')],
    minArgs: 3,
    maxArgs: 3,
    returns: returnsType(BYTES),
    phases: REWRITE_PHASES,
    oncePerExpression: true,
  },
  {
    name: 'remove_bytes',
    signature: 'remove_bytes(source: Bytes, bytes: Bytes) -> Bytes',
    doc: 'Removes from source every occurrence of each byte listed in bytes.',
    params: [param('source', [BYTES], 'field'), param('bytes', [BYTES], 'literal')],
    minArgs: 2,
    maxArgs: 2,
    returns: returnsType(BYTES),
  },
  {
    // The first argument must be http.request.uri.query or raw.http.request.uri.query;
    // that is a restriction on which field, so the checker enforces it (see
    // REMOVE_QUERY_ARGS_SOURCES), not the type patterns here.
    name: 'remove_query_args',
    signature: 'remove_query_args(query: Bytes, name: Bytes, ...names: Bytes) -> Bytes',
    doc: 'Query string with every occurrence of the named arguments removed; the other arguments keep their order.',
    params: [param('query', [BYTES], 'field'), param('names', [BYTES], 'literal', { variadic: true })],
    minArgs: 2,
    maxArgs: Infinity,
    returns: returnsType(BYTES),
    phases: REWRITE_PHASES,
  },
  {
    name: 'sha256',
    signature: 'sha256(input: Bytes) -> Bytes',
    doc: 'SHA-256 digest of the input as 32 raw bytes (combine with encode_base64 to print it).',
    params: [param('input', [BYTES], 'either')],
    minArgs: 1,
    maxArgs: 1,
    returns: returnsType(BYTES),
    planNote: 'must be enabled for the account',
  },
  {
    name: 'substring',
    signature: 'substring(source: Bytes, start: Int, end?: Int) -> Bytes',
    doc: 'Bytes of source from start up to (not including) end; negative positions count from the end.',
    params: [
      param('source', [BYTES], 'field'),
      param('start', [INT], 'literal'),
      param('end', [INT], 'literal', { optional: true }),
    ],
    minArgs: 2,
    maxArgs: 3,
    returns: returnsType(BYTES),
  },
  {
    name: 'to_string',
    signature: 'to_string(value: Int | Bool | Ip) -> Bytes',
    doc: 'Text form of an integer (decimal), a boolean ("true" / "false") or an IP address.',
    params: [param('value', [INT, BOOL, IP], 'field')],
    minArgs: 1,
    maxArgs: 1,
    returns: returnsType(BYTES),
    phases: REWRITE_PHASES,
  },
  {
    name: 'url_decode',
    signature: 'url_decode(source: Bytes, options?: Bytes) -> Bytes',
    doc: 'Decodes %HH escapes and "+" as a space; options: r = decode repeatedly, u = also decode %uXXXX to UTF-8.',
    params: [param('source', [BYTES], 'field'), param('options', [BYTES], 'literal', { optional: true })],
    minArgs: 1,
    maxArgs: 2,
    returns: returnsType(BYTES),
    validateLiteral: (i, v) => (i === 1 ? checkLetters(v, 'ru', 'url_decode options') : undefined),
  },
  {
    name: 'uuidv4',
    signature: 'uuidv4(seed: Bytes) -> Bytes',
    doc: 'Random version 4 UUID made from seed bytes (pass cf.random_seed).',
    params: [param('seed', [BYTES], 'field')],
    minArgs: 1,
    maxArgs: 1,
    returns: returnsType(BYTES),
    phases: REWRITE_PHASES,
  },
  {
    name: 'wildcard_replace',
    signature: 'wildcard_replace(source: Bytes, pattern: Bytes, replacement: Bytes, flags?: Bytes) -> Bytes',
    doc: 'When the whole source matches the wildcard pattern, builds replacement with ${1}…${8} for the parts matched by *; otherwise returns source. Flag s = case-sensitive. Once per expression.',
    params: [
      param('source', [BYTES], 'field'),
      param('pattern', [BYTES], 'literal'),
      param('replacement', [BYTES], 'literal'),
      param('flags', [BYTES], 'literal', { optional: true }),
    ],
    minArgs: 3,
    maxArgs: 4,
    returns: returnsType(BYTES),
    validateLiteral: (i, v) => (i === 3 ? checkLetters(v, 's', 'wildcard_replace flags') : undefined),
    phases: REWRITE_PHASES,
    oncePerExpression: true,
  },
  {
    name: 'is_timed_hmac_valid_v0',
    signature:
      'is_timed_hmac_valid_v0(key: Bytes, message_mac: Bytes, ttl: Int, current_timestamp: Int, separator_length?: Int, flags?: Bytes) -> Bool',
    doc: 'Checks a timed HMAC token "message, separator, 10-digit timestamp, -, MAC" against key and ttl seconds; flag s = URL-safe Base64 without padding.',
    params: [
      param('key', [BYTES], 'literal'),
      param('message_mac', [BYTES], 'either'),
      param('ttl', [INT], 'literal'),
      param('current_timestamp', [INT], 'either'),
      param('separator_length', [INT], 'literal', { optional: true }),
      param('flags', [BYTES], 'literal', { optional: true }),
    ],
    minArgs: 4,
    maxArgs: 6,
    returns: returnsType(BOOL),
    validateLiteral: (i, v) => {
      switch (i) {
        case 2:
          return checkNotNegative(v, 'is_timed_hmac_valid_v0 ttl');
        case 4:
          return checkNotNegative(v, 'is_timed_hmac_valid_v0 separator length');
        case 5:
          return checkLetters(v, 's', 'is_timed_hmac_valid_v0 flags');
        default:
          return undefined;
      }
    },
    plan: 'pro',
  },
  {
    name: 'coalesce',
    signature: 'coalesce(first: _, ...rest: _) -> _',
    doc: 'The first argument that is not missing; all arguments have the same type.',
    params: [param('first', [ANY], 'either'), param('rest', [{ sameAs: 0 }], 'either', { variadic: true })],
    minArgs: 2,
    maxArgs: Infinity,
    returns: returnsFirst,
  },
  {
    name: 'is_jwt_valid',
    signature: 'is_jwt_valid(config_id: Bytes) -> Bool',
    doc: 'True when the request carries a valid JWT for the API Shield token configuration with this ID.',
    params: [param('config_id', [BYTES], 'literal')],
    minArgs: 1,
    maxArgs: 1,
    returns: returnsType(BOOL),
    plan: 'enterprise',
    planNote: 'API Shield add-on (token validation rules)',
  },
];

/** The only fields `remove_query_args` accepts as its first argument. */
export const REMOVE_QUERY_ARGS_SOURCES: readonly string[] = ['http.request.uri.query', 'raw.http.request.uri.query'];

/** Functions of the network-layer (Magic Firewall) scheme. */
export const MAGIC_FIREWALL_FUNCTIONS: readonly FunctionDef[] = [
  {
    // The slice (offset_end - offset_start) may be at most 32 bits; that involves two
    // arguments, so the checker compares them; each offset alone is checked here.
    name: 'bit_slice',
    signature: 'bit_slice(protocol: Bytes, offset_start: Int, offset_end: Int) -> Int',
    doc: 'Integer value of the bits offset_start to offset_end of a protocol header (ip, tcp, udp, icmp); at most 32 bits, offsets up to 2040.',
    params: [
      param('protocol', [BYTES], 'field'),
      param('offset_start', [INT], 'literal'),
      param('offset_end', [INT], 'literal'),
    ],
    minArgs: 3,
    maxArgs: 3,
    returns: returnsType(INT),
    validateLiteral: (i, v) =>
      i === 1
        ? checkRange(v, 0, 2040, 'bit_slice offset_start')
        : i === 2
          ? checkRange(v, 0, 2040, 'bit_slice offset_end')
          : undefined,
  },
];

/** Largest bit slice `bit_slice` can read. */
export const BIT_SLICE_MAX_BITS = 32;
