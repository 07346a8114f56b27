/**
 * A sample request turned into the field values the engine evaluates: JSON-like values
 * in the shape `prepareFields` (language/fieldValues.ts) accepts.
 *
 * Text and bytes: the request's URL and headers are text (JS strings; they are sent as
 * UTF-8), the body is a binary string (one code unit per byte). Bytes fields are given
 * as text when the bytes are valid UTF-8, else as `{"hex": "…"}`, so prepareFields
 * rebuilds the exact bytes either way. Map keys can only be text there, so a map key that
 * is not valid UTF-8 (a decoded cookie name, a multipart part name) is given with U+FFFD
 * in place of the bad bytes and reported as a problem.
 *
 * What each field holds, and the choices made where Cloudflare's documentation is silent:
 * - `http.request.uri.path` and what derives from it are normalized (normalize.ts, the
 *   "Cloudflare" type by default; `options.normalization` picks another); `raw.*` fields
 *   and the query string are as written. The `#fragment` is never part of any field.
 * - `http.host`: the host of an absolute URL, else of the first Host header; without the
 *   port (the docs call it "the hostname used in the full request URI") and lower-cased
 *   (host names are case-insensitive; rules compare against lower-case literals).
 *   `full_uri` is `scheme://host[:port]path?query`, the port only when it was written and
 *   is not the scheme's default. A relative URL with no Host header gives an empty host.
 * - Scheme: the URL's; for a relative URL `https` when the meta says `ssl true`, else
 *   `http`. `ssl` follows the scheme; `cf.edge.server_port` is the written port, else 443
 *   or 80.
 * - Query arguments (`uri.args*`): split on `&`, then on the first `=`; nothing decoded
 *   (docs: "No decoding performed"); empty pieces (`a=1&&b=2`) are skipped; a piece with
 *   no `=` is a name with an empty value.
 * - Headers: map keys lower-cased, names in `.names` as written, values as written.
 *   `http.cookie` is every Cookie header joined with "; "; `http.user_agent`,
 *   `http.referer` and `http.x_forwarded_for` join repeated headers with ", "; each is ""
 *   when the header is absent. `http.request.headers.truncated` is false.
 * - `http.request.cookies`: pairs split on `;`, trimmed; names percent-decoded (docs),
 *   values as written; repeated names merge their values in order.
 * - Body: only the first `options.bodyLimit` bytes (default 128 KiB, body.ts) become field
 *   values, as a WAF inspects a body: `body.raw` is those bytes, `body.size` the whole
 *   body's size and `body.truncated` true when it was cut; form, multipart, mime and the
 *   `crs.*` body fields read the same bytes (a multipart part past the limit is not seen,
 *   one across it is cut). `body.form*` for an
 *   `application/x-www-form-urlencoded` body, split like the query and not decoded (docs:
 *   "No decoding performed"); `body.multipart*` for `multipart/form-data` with a boundary
 *   (multipart.ts; parsed leniently: an unterminated last part still counts). Other bodies give empty
 *   maps and arrays. `body.mime` is sniffed from the body bytes (the docs: "detected from
 *   the request body"), see sniff.ts.
 * - Edge defaults: `ip.src` is 192.0.2.1 (TEST-NET-1, RFC 5737) and the request time is
 *   1700000000 s (2023-11-14T22:13:20Z) with 0 ms, so that evaluations are repeatable.
 * - The managed-only `crs.*` fields: ModSecurity's view of the request, see crsFields.ts,
 *   as with `SecRequestBodyLimitAction ProcessPartial`: REQUEST_BODY_LENGTH is the length
 *   read, and `crs.inbound_data_error` (INBOUND_DATA_ERROR) is true when the body was cut.
 * - Every `meta` entry (`# @field value`) is converted to its field's type and replaces the
 *   computed value; unknown fields and bad values are problems ("did you mean" included).
 */
import { asciiLower, binaryToUtf8, utf8ToBinary } from '../language/bytes';
import type { FieldValues } from '../language/evaluate';
import { convertFieldValue, prepareFields } from '../language/fieldValues';
import { EDGE_CONTEXT_FIELDS } from '../language/runtime/functions';
import { GEOIP_ALIASES, httpScheme, suggestNames } from '../language/scheme/index';
import type { Type } from '../language/types';
import { bodyWithoutFiles, DEFAULT_BODY_LIMIT, inspectedBody } from './body';
import { crsFields } from './crsFields';
import { bytes, emptyMap, headerBytes, mapKey } from './fieldBytes';
import { headerParams, parseMultipart } from './multipart';
import { normalizeUrlPath, pathExtension, percentDecode, type UrlNormalization } from './normalize';
import { sniffMime } from './sniff';
import { splitPairs, splitTarget } from './target';
import type { SampleRequest } from './types';

/** The client address when the request does not say (`# @ip.src …`): TEST-NET-1. */
export const DEFAULT_CLIENT_IP = '192.0.2.1';
/** The request time when the request does not say: 2023-11-14T22:13:20Z. */
export const DEFAULT_TIMESTAMP_SEC = 1_700_000_000;

export interface RequestFieldsOptions {
  /** The zone's URL normalization type; default `cloudflare`. */
  readonly normalization?: UrlNormalization;
  /** Bytes of the body that become field values (the inspection limit); default DEFAULT_BODY_LIMIT. */
  readonly bodyLimit?: number;
  /**
   * The fields the caller reads (a compiled zone's `fieldsRead`): the others may be left out,
   * so a request pays only for the maps and `crs.*` fields its rules use. Default: all.
   */
  readonly only?: ReadonlySet<string>;
}

/** Whether a caller reads a field, and any field of each group that costs something to build. */
interface Wanted {
  readonly field: (name: string) => boolean;
  /** The normalized path: `http.request.uri.path` and the fields built on it. */
  readonly path: boolean;
  readonly args: boolean;
  readonly headers: boolean;
  readonly cookies: boolean;
  readonly mime: boolean;
  readonly form: boolean;
  readonly multipart: boolean;
  readonly crs: boolean;
}

const ALL: Wanted = { field: () => true, path: true, args: true, headers: true, cookies: true, mime: true, form: true, multipart: true, crs: true };
/** Per `only` set (one per compiled zone), worked out once. */
const wantedBy = new WeakMap<ReadonlySet<string>, Wanted>();

function wanted(only: ReadonlySet<string> | undefined): Wanted {
  if (only === undefined) return ALL;
  let w = wantedBy.get(only);
  if (w === undefined) {
    const any = (names: readonly string[]) => names.some((n) => only.has(n));
    const under = (prefix: string) => [...only].some((n) => n.startsWith(prefix));
    w = {
      field: (name) => only.has(name),
      path: any(['http.request.full_uri', 'http.request.uri', 'http.request.uri.path', 'http.request.uri.path.extension']),
      args: under('http.request.uri.args') || under('raw.http.request.uri.args'),
      headers: any(['http.request.headers', 'http.request.headers.names', 'http.request.headers.values']),
      cookies: only.has('http.request.cookies'),
      mime: only.has('http.request.body.mime'),
      form: under('http.request.body.form'),
      multipart: under('http.request.body.multipart'),
      crs: under('crs.'),
    };
    wantedBy.set(only, w);
  }
  return w;
}

export function requestFields(req: SampleRequest, options: RequestFieldsOptions = {}): { fields: Record<string, unknown>; problems: string[] } {
  const problems: string[] = [];
  const f: Record<string, unknown> = {};
  const meta = req.meta ?? {};
  const want = wanted(options.only);

  // Request line and URL.
  const target = splitTarget(req.url);
  const headers = headerBytes(req);
  const hostHeader = headerValues(headers, 'host')[0]?.trim();
  const hostSource = target.authority ?? (hostHeader === undefined ? '' : (binaryToUtf8(hostHeader) ?? hostHeader));
  const { host, port } = splitHostPort(hostSource.slice(hostSource.lastIndexOf('@') + 1));
  const sslMeta = meta['ssl']?.trim().toLowerCase();
  const scheme = target.scheme ?? (sslMeta === 'true' ? 'https' : 'http');
  const defaultPort = scheme === 'https' ? 443 : 80;
  const portNumber = port !== undefined && /^\d{1,5}$/.test(port) && Number(port) <= 65535 ? Number(port) : undefined;
  const authority = host + (portNumber !== undefined && portNumber !== defaultPort ? `:${portNumber}` : '');

  const rawPath = utf8ToBinary(target.path);
  const rawQuery = target.query === undefined ? undefined : utf8ToBinary(target.query);
  const path = want.path ? normalizeUrlPath(rawPath, options.normalization ?? 'cloudflare') : '';
  const withQuery = (p: string): string => (rawQuery === undefined ? p : `${p}?${rawQuery}`);

  f['http.request.method'] = req.method;
  f['http.request.version'] = req.httpVersion;
  f['http.host'] = host;
  if (want.field('http.request.full_uri')) f['http.request.full_uri'] = bytes(`${scheme}://${utf8ToBinary(authority)}${withQuery(path)}`);
  if (want.field('http.request.uri')) f['http.request.uri'] = bytes(withQuery(path));
  if (want.field('http.request.uri.path')) f['http.request.uri.path'] = bytes(path);
  if (want.field('http.request.uri.path.extension')) f['http.request.uri.path.extension'] = bytes(pathExtension(path, true));
  if (want.field('http.request.uri.query')) f['http.request.uri.query'] = bytes(rawQuery ?? '');
  const argFields = want.args ? pairFields(splitPairs(rawQuery ?? ''), 'query argument', problems) : undefined;
  if (argFields) {
    f['http.request.uri.args'] = argFields.map;
    f['http.request.uri.args.names'] = argFields.names;
    f['http.request.uri.args.values'] = argFields.values;
  }
  if (want.field('raw.http.request.full_uri')) f['raw.http.request.full_uri'] = bytes(`${scheme}://${utf8ToBinary(authority)}${withQuery(rawPath)}`);
  if (want.field('raw.http.request.uri')) f['raw.http.request.uri'] = bytes(withQuery(rawPath));
  if (want.field('raw.http.request.uri.path')) f['raw.http.request.uri.path'] = bytes(rawPath);
  if (want.field('raw.http.request.uri.path.extension')) f['raw.http.request.uri.path.extension'] = bytes(pathExtension(rawPath, false));
  if (want.field('raw.http.request.uri.query')) f['raw.http.request.uri.query'] = bytes(rawQuery ?? '');
  if (argFields) {
    f['raw.http.request.uri.args'] = argFields.map;
    f['raw.http.request.uri.args.names'] = argFields.names;
    f['raw.http.request.uri.args.values'] = argFields.values;
  }

  // Headers.
  if (want.headers) {
    const h = headerFields(headers);
    f['http.request.headers'] = h.map;
    f['http.request.headers.names'] = h.names;
    f['http.request.headers.values'] = h.values;
  }
  f['http.request.headers.truncated'] = false;
  const cookieHeaders = headerValues(headers, 'cookie');
  if (want.field('http.cookie')) f['http.cookie'] = bytes(cookieHeaders.join('; '));
  if (want.cookies) f['http.request.cookies'] = cookieMap(cookieHeaders, problems);
  if (want.field('http.user_agent')) f['http.user_agent'] = bytes(headerValues(headers, 'user-agent').join(', '));
  if (want.field('http.referer')) f['http.referer'] = bytes(headerValues(headers, 'referer').join(', '));
  if (want.field('http.x_forwarded_for')) f['http.x_forwarded_for'] = bytes(headerValues(headers, 'x-forwarded-for').join(', '));

  // Body.
  const unread = bodyWithoutFiles(req);
  if (unread.problem) problems.push(unread.problem);
  const { body, size: bodySize, truncated } = inspectedBody(Object.assign({}, req, { body: unread.body }), options.bodyLimit ?? DEFAULT_BODY_LIMIT);
  if (want.field('http.request.body.raw')) f['http.request.body.raw'] = bytes(body);
  f['http.request.body.size'] = bodySize;
  f['http.request.body.truncated'] = truncated;
  if (want.mime) f['http.request.body.mime'] = sniffMime(body);
  const contentType = headerValues(headers, 'content-type')[0] ?? '';
  const media = asciiLower(contentType.split(';')[0].trim());
  if (want.form) {
    const form = pairFields(media === 'application/x-www-form-urlencoded' ? splitPairs(body) : [], 'form field', problems);
    f['http.request.body.form'] = form.map;
    f['http.request.body.form.names'] = form.names;
    f['http.request.body.form.values'] = form.values;
  }
  if (want.multipart) Object.assign(f, multipartFields(body, media, contentType, problems));

  // Connection and edge.
  f['ssl'] = scheme === 'https';
  f['ip.src'] = DEFAULT_CLIENT_IP;
  f['http.request.timestamp.sec'] = DEFAULT_TIMESTAMP_SEC;
  f['http.request.timestamp.msec'] = 0;
  f['cf.edge.server_port'] = portNumber ?? defaultPort;

  // ModSecurity's variables for the managed OWASP ruleset (managed-only `crs.*` fields).
  if (want.crs) {
    Object.assign(f, crsFields(req, target, body, media, contentType));
    f['crs.remote_addr'] = meta['ip.src']?.trim() || DEFAULT_CLIENT_IP;
    f['crs.inbound_data_error'] = truncated;
  }

  for (const [name, text] of Object.entries(meta)) {
    const r = metaFieldValue(name, text);
    if (r.problem !== undefined) problems.push(r.problem);
    else f[name] = r.value;
  }
  // A deprecated `ip.geoip.*` name is another name for its `ip.src.*` field: a value given under either is the other's too.
  for (const [alias, field] of GEOIP_ALIASES) {
    if (f[alias] === undefined && f[field] !== undefined) f[alias] = f[field];
    else if (f[field] === undefined && f[alias] !== undefined) f[field] = f[alias];
  }
  return { fields: f, problems };
}

/** A one-line label for UIs: `POST /login?next=%2F`. */
export function requestSummary(req: SampleRequest): string {
  const t = splitTarget(req.url);
  const target = t.path + (t.query === undefined ? '' : `?${t.query}`) || req.url;
  const s = `${req.method} ${target}`;
  return s.length > 80 ? s.slice(0, 79) + '…' : s;
}

// ---------------------------------------------------------------------------------------
// Host, headers and pairs

function splitHostPort(hostPort: string): { host: string; port?: string } {
  let host = hostPort;
  let port: string | undefined;
  if (hostPort.startsWith('[')) {
    const close = hostPort.indexOf(']');
    if (close > 0) {
      host = hostPort.slice(0, close + 1);
      if (hostPort[close + 1] === ':') port = hostPort.slice(close + 2);
    }
  } else {
    const colon = hostPort.lastIndexOf(':');
    if (colon >= 0 && hostPort.indexOf(':') === colon) {
      host = hostPort.slice(0, colon);
      port = hostPort.slice(colon + 1);
    }
  }
  return { host: asciiLower(host), port };
}

/**
 * Headers as the `…headers` fields have them: by lower-case name, and names and values in
 * order (a request's or an answer's), from values that are bytes (binary strings).
 */
export function headerFields(headers: readonly (readonly [string, string])[]): { map: Record<string, unknown[]>; names: string[]; values: unknown[] } {
  const map = emptyMap();
  const values = headers.map(([, v]) => bytes(v));
  headers.forEach(([name], i) => (map[asciiLower(name)] ??= []).push(values[i]));
  return { map, names: headers.map(([n]) => n), values };
}

/** The values of header `lowerName`, in order. */
export function headerValues(headers: readonly (readonly [string, string])[], lowerName: string): string[] {
  const out: string[] = [];
  for (const [n, v] of headers) if (asciiLower(n) === lowerName) out.push(v);
  return out;
}

/** The `http.request.body.multipart*` fields of a `multipart/form-data` body (empty for another). */
function multipartFields(body: string, media: string, contentType: string, problems: string[]): Record<string, unknown> {
  const boundary = media === 'multipart/form-data' ? headerParams(contentType).find(([n]) => n === 'boundary')?.[1] : undefined;
  const parts = boundary ? parseMultipart(body, boundary).parts : [];
  const partMap = emptyMap();
  for (const part of parts) {
    for (const name of part.names) (partMap[mapKey(name, 'multipart part name', problems)] ??= []).push(bytes(part.value));
  }
  return {
    'http.request.body.multipart': partMap,
    'http.request.body.multipart.names': parts.map((p) => p.names.map(bytes)),
    'http.request.body.multipart.values': parts.map((p) => bytes(p.value)),
    'http.request.body.multipart.content_types': parts.map((p) => p.contentTypes.map(bytes)),
    'http.request.body.multipart.content_dispositions': parts.map((p) => p.dispositions.map(bytes)),
    'http.request.body.multipart.content_transfer_encodings': parts.map((p) => p.transferEncodings.map(bytes)),
    'http.request.body.multipart.filenames': parts.map((p) => p.filenames.map(bytes)),
  };
}

function pairFields(pairs: readonly [string, string][], what: string, problems: string[]): { map: Record<string, unknown[]>; names: unknown[]; values: unknown[] } {
  const map = emptyMap();
  for (const [n, v] of pairs) (map[mapKey(n, what, problems)] ??= []).push(bytes(v));
  return { map, names: pairs.map(([n]) => bytes(n)), values: pairs.map(([, v]) => bytes(v)) };
}

function cookieMap(cookieHeaders: readonly string[], problems: string[]): Record<string, unknown[]> {
  const map = emptyMap();
  for (const header of cookieHeaders) {
    for (const piece of header.split(';')) {
      const p = piece.trim();
      if (p === '') continue;
      const eq = p.indexOf('=');
      const name = percentDecode((eq < 0 ? p : p.slice(0, eq)).trim());
      const value = eq < 0 ? '' : p.slice(eq + 1).trim();
      (map[mapKey(name, 'cookie name', problems)] ??= []).push(bytes(value));
    }
  }
  return map;
}

/** Request fields that an edge parses and requestFields does not: the languages it reads from `Accept-Language`, API Shield's validated JWT claims. */
const EDGE_PARSED = /^http\.request\.(?:jwt\.|accepted_languages$)/;
/** A deprecated `ip.geoip.*` field and the `ip.src.*` field whose value it holds. */
const GEOIP_OF = new Map(GEOIP_ALIASES);

/**
 * For a scheme field only an edge gives (`ip.src.continent`, `cf.tls_client_auth.*`,
 * `http.request.jwt.claims.sub`, …), the name it goes by: itself, or for a deprecated
 * `ip.geoip.*` one the `ip.src.*` field it holds. Undefined for a field requestFields builds
 * from the request (`http.*`, `raw.*`, the OWASP ruleset's `crs.*`), one responseFields
 * builds from the answer, `true`,
 * or a name the scheme does not have. A request has a value for an edge-only field only from
 * its metadata: a sample's `# @field` line, the WAF proxy's edge fields.
 */
export function edgeOnlyField(name: string): string | undefined {
  if (name === 'true' || !httpScheme.fields.has(name)) return undefined;
  if (/^(?:http|raw|crs)\./.test(name) && !EDGE_PARSED.test(name)) return undefined;
  return GEOIP_OF.get(name) ?? name;
}

/** Per compiled zone (its `fieldsRead`, rulesets/engine.ts), the fields it reads that only an edge gives, each with the name it is listed by (`edgeOnlyField`): made once. */
const edgeReads = new WeakMap<ReadonlySet<string>, readonly (readonly [read: string, listed: string])[]>();

/**
 * The fields the zone's enabled rules read that the request has no value for, of those only
 * an edge gives (`ip.src.continent`, `cf.tls_client_auth.cert_verified`,
 * `http.request.jwt.claims.sub`, …; not a request field such as `http.cookie`, whose absence
 * is the request's own). A rule that read one compared it with the engine's default, so the
 * request's events list them as defaulted: a live request's beside the proxy's own list
 * (edgeFields.ts), a trace's beside the context fields it was not given (fromTrace.ts). None
 * when the zone may read any field (`fieldsRead` undefined: a previous-WAF stand-in).
 */
export function defaultedReads(read: ReadonlySet<string> | undefined, fields: Readonly<Record<string, unknown>>): string[] {
  if (!read) return [];
  let edge = edgeReads.get(read);
  if (!edge) {
    const pairs = [...read].flatMap((f) => {
      const listed = edgeOnlyField(f);
      return listed === undefined ? [] : [[f, listed] as const];
    });
    edgeReads.set(read, (edge = pairs.sort((a, b) => (a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0))));
  }
  if (edge.length === 0) return [];
  const listed = new Set<string>();
  for (const [f, name] of edge) if (fields[f] === undefined) listed.add(name);
  return [...listed];
}

// ---------------------------------------------------------------------------------------
// Metadata values

/** The type of a field a request may set: a scheme field or an edge-context pseudo-field. */
export function metaFieldType(name: string): Type | undefined {
  return httpScheme.fields.get(name)?.type ?? EDGE_CONTEXT_FIELDS.get(name);
}

/**
 * Converts the text of a metadata comment (`# @cf.bot_management.score 12`) into the
 * JSON-like value of that field: Bytes as written (or a JSON string / `{"hex": …}` when it
 * starts with `"` or `{`), Int as a decimal integer, Bool as true/false, Ip as an address,
 * arrays and maps as JSON.
 */
export function metaFieldValue(name: string, text: string): { value?: unknown; problem?: string } {
  const type = metaFieldType(name);
  if (!type) {
    const near = suggestNames(name, httpScheme).filter((n) => httpScheme.fields.has(n));
    const hint = near.length === 0 ? '' : ` (did you mean ${near.length === 1 ? near[0] : near.slice(0, -1).join(', ') + ' or ' + near[near.length - 1]}?)`;
    return { problem: `unknown field ${JSON.stringify(name)}${hint}` };
  }
  const t = text.trim();
  let raw: unknown;
  switch (type.kind) {
    case 'Bytes':
      raw = t.startsWith('"') || t.startsWith('{') ? (parseJson(t) ?? text) : text;
      break;
    case 'Int':
      if (!/^[+-]?\d+$/.test(t)) return { problem: `${name}: expected an integer, got ${JSON.stringify(t)}` };
      raw = Number.isSafeInteger(Number(t)) ? Number(t) : BigInt(t);
      break;
    case 'Bool':
      if (!/^(true|false)$/i.test(t)) return { problem: `${name}: expected true or false, got ${JSON.stringify(t)}` };
      raw = t.toLowerCase() === 'true';
      break;
    case 'Ip':
      raw = t;
      break;
    case 'Array':
    case 'Map':
      raw = parseJson(t);
      if (raw === undefined) return { problem: `${name}: expected a JSON ${type.kind === 'Array' ? 'array' : 'object'}, got ${JSON.stringify(t)}` };
      break;
  }
  const problems: string[] = [];
  convertFieldValue(raw, type, name, problems);
  return problems.length > 0 ? { problem: problems.join('; ') } : { value: raw };
}

function parseJson(t: string): unknown {
  try {
    return JSON.parse(t) as unknown;
  } catch {
    return undefined;
  }
}

/**
 * A sample request as runtime field values for the engine, with every problem found on
 * the way (from reading the request and from typing its values), worded for a user.
 */
export function requestValues(req: SampleRequest, options: RequestFieldsOptions = {}): { fields: Record<string, unknown>; values: FieldValues; problems: string[] } {
  const f = requestFields(req, options);
  const { values, errors } = prepareFields(f.fields, httpScheme, options.only);
  return { fields: f.fields, values, problems: [...f.problems, ...errors.map((e) => `${e.field}: ${e.message}`)] };
}
