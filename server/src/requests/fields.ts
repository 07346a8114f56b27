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
 * - Body: `body.raw` is the body bytes, `body.size` its length, `body.truncated` false
 *   (no inspection limit is applied). `body.form*` for an
 *   `application/x-www-form-urlencoded` body, split like the query and not decoded (docs:
 *   "No decoding performed"); `body.multipart*` for `multipart/form-data` with a boundary
 *   (parsed leniently: an unterminated last part still counts). Other bodies give empty
 *   maps and arrays. `body.mime` is sniffed from the body bytes (the docs: "detected from
 *   the request body"), see `sniffMime`.
 * - Edge defaults: `ip.src` is 192.0.2.1 (TEST-NET-1, RFC 5737) and the request time is
 *   1700000000 s (2023-11-14T22:13:20Z) with 0 ms, so that evaluations are repeatable.
 * - Every `meta` entry (`# @field value`) is converted to its field's type and replaces the
 *   computed value; unknown fields and bad values are problems ("did you mean" included).
 */
import { asciiLower, binaryToBytes, binaryToUtf8, percentDecode as decodePercent, utf8ToBinary } from '../language/bytes';
import type { FieldValues } from '../language/evaluate';
import { convertFieldValue, prepareFields } from '../language/fieldValues';
import { EDGE_CONTEXT_FIELDS } from '../language/runtime/functions';
import { httpScheme, suggestNames } from '../language/scheme/index';
import type { Type } from '../language/types';
import { normalizeUrlPath, pathExtension, percentDecode, type UrlNormalization } from './normalize';
import type { SampleRequest } from './types';

/** The client address when the request does not say (`# @ip.src …`): TEST-NET-1. */
export const DEFAULT_CLIENT_IP = '192.0.2.1';
/** The request time when the request does not say: 2023-11-14T22:13:20Z. */
export const DEFAULT_TIMESTAMP_SEC = 1_700_000_000;

export interface RequestFieldsOptions {
  /** The zone's URL normalization type; default `cloudflare`. */
  readonly normalization?: UrlNormalization;
}

export function requestFields(req: SampleRequest, options: RequestFieldsOptions = {}): { fields: Record<string, unknown>; problems: string[] } {
  const problems: string[] = [];
  const f: Record<string, unknown> = {};
  const meta = req.meta ?? {};

  // Request line and URL.
  const target = splitTarget(req.url);
  const headers = req.headers ?? [];
  const hostSource = target.authority ?? headerValues(headers, 'host')[0]?.trim() ?? '';
  const { host, port } = splitHostPort(hostSource.slice(hostSource.lastIndexOf('@') + 1));
  const sslMeta = meta['ssl']?.trim().toLowerCase();
  const scheme = target.scheme ?? (sslMeta === 'true' ? 'https' : 'http');
  const defaultPort = scheme === 'https' ? 443 : 80;
  const portNumber = port !== undefined && /^\d{1,5}$/.test(port) && Number(port) <= 65535 ? Number(port) : undefined;
  const authority = host + (portNumber !== undefined && portNumber !== defaultPort ? `:${portNumber}` : '');

  const rawPath = utf8ToBinary(target.path);
  const rawQuery = target.query === undefined ? undefined : utf8ToBinary(target.query);
  const path = normalizeUrlPath(rawPath, options.normalization ?? 'cloudflare');
  const withQuery = (p: string): string => (rawQuery === undefined ? p : `${p}?${rawQuery}`);
  const args = splitPairs(rawQuery ?? '');

  f['http.request.method'] = req.method;
  f['http.request.version'] = req.httpVersion;
  f['http.host'] = host;
  f['http.request.full_uri'] = bytes(`${scheme}://${utf8ToBinary(authority)}${withQuery(path)}`);
  f['http.request.uri'] = bytes(withQuery(path));
  f['http.request.uri.path'] = bytes(path);
  f['http.request.uri.path.extension'] = bytes(pathExtension(path, true));
  f['http.request.uri.query'] = bytes(rawQuery ?? '');
  const argFields = pairFields(args, 'query argument', problems);
  f['http.request.uri.args'] = argFields.map;
  f['http.request.uri.args.names'] = argFields.names;
  f['http.request.uri.args.values'] = argFields.values;
  f['raw.http.request.full_uri'] = bytes(`${scheme}://${utf8ToBinary(authority)}${withQuery(rawPath)}`);
  f['raw.http.request.uri'] = bytes(withQuery(rawPath));
  f['raw.http.request.uri.path'] = bytes(rawPath);
  f['raw.http.request.uri.path.extension'] = bytes(pathExtension(rawPath, false));
  f['raw.http.request.uri.query'] = bytes(rawQuery ?? '');
  f['raw.http.request.uri.args'] = argFields.map;
  f['raw.http.request.uri.args.names'] = argFields.names;
  f['raw.http.request.uri.args.values'] = argFields.values;

  // Headers.
  const headerMap = emptyMap();
  for (const [name, value] of headers) (headerMap[asciiLower(name)] ??= [] as string[]).push(value);
  f['http.request.headers'] = headerMap;
  f['http.request.headers.names'] = headers.map(([n]) => n);
  f['http.request.headers.values'] = headers.map(([, v]) => v);
  f['http.request.headers.truncated'] = false;
  const cookieHeaders = headerValues(headers, 'cookie');
  f['http.cookie'] = cookieHeaders.join('; ');
  f['http.request.cookies'] = cookieMap(cookieHeaders, problems);
  f['http.user_agent'] = headerValues(headers, 'user-agent').join(', ');
  f['http.referer'] = headerValues(headers, 'referer').join(', ');
  f['http.x_forwarded_for'] = headerValues(headers, 'x-forwarded-for').join(', ');

  // Body.
  const body = req.body ?? '';
  f['http.request.body.raw'] = bytes(body);
  f['http.request.body.size'] = body.length;
  f['http.request.body.truncated'] = false;
  f['http.request.body.mime'] = sniffMime(body);
  const contentType = headerValues(headers, 'content-type')[0] ?? '';
  const media = asciiLower(contentType.split(';')[0].trim());
  const form = pairFields(media === 'application/x-www-form-urlencoded' ? splitPairs(body) : [], 'form field', problems);
  f['http.request.body.form'] = form.map;
  f['http.request.body.form.names'] = form.names;
  f['http.request.body.form.values'] = form.values;
  const boundary = media === 'multipart/form-data' ? headerParams(utf8ToBinary(contentType)).find(([n]) => n === 'boundary')?.[1] : undefined;
  const parts = boundary ? parseMultipart(body, boundary) : [];
  const partMap = emptyMap();
  for (const part of parts) {
    for (const name of part.names) (partMap[mapKey(name, 'multipart part name', problems)] ??= []).push(bytes(part.value));
  }
  f['http.request.body.multipart'] = partMap;
  f['http.request.body.multipart.names'] = parts.map((p) => p.names.map(bytes));
  f['http.request.body.multipart.values'] = parts.map((p) => bytes(p.value));
  f['http.request.body.multipart.content_types'] = parts.map((p) => p.contentTypes.map(bytes));
  f['http.request.body.multipart.content_dispositions'] = parts.map((p) => p.dispositions.map(bytes));
  f['http.request.body.multipart.content_transfer_encodings'] = parts.map((p) => p.transferEncodings.map(bytes));
  f['http.request.body.multipart.filenames'] = parts.map((p) => p.filenames.map(bytes));

  // Connection and edge.
  f['ssl'] = scheme === 'https';
  f['ip.src'] = DEFAULT_CLIENT_IP;
  f['http.request.timestamp.sec'] = DEFAULT_TIMESTAMP_SEC;
  f['http.request.timestamp.msec'] = 0;
  f['cf.edge.server_port'] = portNumber ?? defaultPort;

  // ModSecurity's variables for the managed OWASP ruleset (managed-only `crs.*` fields).
  Object.assign(f, crsFields(req, target, body, media, contentType));
  f['crs.remote_addr'] = meta['ip.src']?.trim() || DEFAULT_CLIENT_IP;

  for (const [name, text] of Object.entries(meta)) {
    const r = metaFieldValue(name, text);
    if (r.problem !== undefined) problems.push(r.problem);
    else f[name] = r.value;
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

// ---------------------------------------------------------------------------------------
// URL pieces

interface Target {
  readonly scheme?: string;
  readonly authority?: string;
  readonly path: string;
  readonly query?: string;
}

/** Splits a request target (absolute URL or anything else, taken as path?query); drops a #fragment. */
function splitTarget(url: string): Target {
  const hash = url.indexOf('#');
  const u = hash < 0 ? url : url.slice(0, hash);
  const m = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/([^/?]*)(.*)$/s.exec(u);
  const rest = m ? m[3] : u;
  const q = rest.indexOf('?');
  const path = q < 0 ? rest : rest.slice(0, q);
  return {
    scheme: m ? m[1].toLowerCase() : undefined,
    authority: m ? m[2] : undefined,
    path: m && path === '' ? '/' : path,
    query: q < 0 ? undefined : rest.slice(q + 1),
  };
}

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


function headerValues(headers: readonly (readonly [string, string])[], lowerName: string): string[] {
  const out: string[] = [];
  for (const [n, v] of headers) if (asciiLower(n) === lowerName) out.push(v);
  return out;
}

/** `a=1&b&&c=2` -> [a,1] [b,""] [c,2] (binary strings in, binary strings out). */
export function splitPairs(s: string): [string, string][] {
  const out: [string, string][] = [];
  if (s === '') return out;
  for (const piece of s.split('&')) {
    if (piece === '') continue;
    const eq = piece.indexOf('=');
    out.push(eq < 0 ? [piece, ''] : [piece.slice(0, eq), piece.slice(eq + 1)]);
  }
  return out;
}

function pairFields(pairs: readonly [string, string][], what: string, problems: string[]): { map: Record<string, unknown[]>; names: unknown[]; values: unknown[] } {
  const map = emptyMap();
  for (const [n, v] of pairs) (map[mapKey(n, what, problems)] ??= []).push(bytes(v));
  return { map, names: pairs.map(([n]) => bytes(n)), values: pairs.map(([, v]) => bytes(v)) };
}

function cookieMap(cookieHeaders: readonly string[], problems: string[]): Record<string, unknown[]> {
  const map = emptyMap();
  for (const header of cookieHeaders) {
    for (const piece of utf8ToBinary(header).split(';')) {
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

// ---------------------------------------------------------------------------------------
// Bytes as JSON-like values

/** A map without a prototype, so that any key (even `__proto__`) is an own entry. */
function emptyMap(): Record<string, unknown[]> {
  return Object.create(null) as Record<string, unknown[]>;
}

const lossy = new TextDecoder('utf-8');

function toHex(b: string): string {
  let out = '';
  for (let i = 0; i < b.length; i++) out += (b.charCodeAt(i) & 0xff).toString(16).padStart(2, '0');
  return out;
}

/** A Bytes value prepareFields turns back into exactly these bytes. */
function bytes(b: string): string | { hex: string } {
  const text = binaryToUtf8(b);
  return text !== undefined ? text : { hex: toHex(b) };
}

/** A map key (text); bytes that are not UTF-8 become U+FFFD and a problem. */
function mapKey(b: string, what: string, problems: string[]): string {
  const text = binaryToUtf8(b);
  if (text !== undefined) return text;
  const approx = lossy.decode(binaryToBytes(b));
  problems.push(`${what} ${JSON.stringify(approx)} is not valid UTF-8; as a map key its bad bytes read as U+FFFD (the name arrays keep the exact bytes)`);
  return approx;
}

// ---------------------------------------------------------------------------------------
// Header parameters and multipart bodies (binary strings)

/** The `; name=value` parameters of a header value, names lower-cased, quoted strings unescaped. */
export function headerParams(value: string): [string, string][] {
  const out: [string, string][] = [];
  let i = value.indexOf(';');
  if (i < 0) return out;
  while (i < value.length) {
    i++; // past ';'
    while (i < value.length && (value[i] === ' ' || value[i] === '\t')) i++;
    let name = '';
    while (i < value.length && value[i] !== '=' && value[i] !== ';') name += value[i++];
    name = asciiLower(name.trim());
    let v = '';
    if (value[i] === '=') {
      i++;
      while (i < value.length && (value[i] === ' ' || value[i] === '\t')) i++;
      if (value[i] === '"') {
        i++;
        while (i < value.length && value[i] !== '"') {
          if (value[i] === '\\' && i + 1 < value.length) i++;
          v += value[i++];
        }
        i++; // past the closing quote
        while (i < value.length && value[i] !== ';') i++;
      } else {
        while (i < value.length && value[i] !== ';') v += value[i++];
        v = v.trim();
      }
    }
    if (name !== '') out.push([name, v]);
  }
  return out;
}

export interface MultipartPart {
  readonly names: string[];
  readonly filenames: string[];
  readonly contentTypes: string[];
  readonly dispositions: string[];
  readonly transferEncodings: string[];
  readonly value: string;
}

/**
 * Parses a multipart body (RFC 7578 / RFC 2046): parts between `--boundary` lines, each with
 * header lines, an empty line and the content. Lenient: LF line ends are accepted, a
 * preamble is skipped, a missing close delimiter ends the last part at the end of the body,
 * and a part without an empty line is all headers.
 */
export function parseMultipart(body: string, boundary: string): MultipartPart[] {
  const delimiter = '--' + boundary;
  const parts: MultipartPart[] = [];
  let pos = body.startsWith(delimiter) ? 0 : nextDelimiter(body, delimiter, 0)?.at ?? -1;
  while (pos >= 0) {
    let p = pos + delimiter.length;
    if (body.startsWith('--', p)) break; // close delimiter
    const eol = body.indexOf('\n', p);
    if (eol < 0) break;
    p = eol + 1;
    const next = nextDelimiter(body, delimiter, p);
    const content = body.slice(p, next ? next.end : body.length);
    parts.push(parsePart(content));
    pos = next ? next.at : -1;
  }
  return parts;
}

/**
 * The next delimiter line whose content could start at `from`: `at` is the index of its
 * `--`, `end` where the content before it ends (the line break before it is not content).
 */
function nextDelimiter(body: string, delimiter: string, from: number): { at: number; end: number } | undefined {
  const lf = body.indexOf('\n' + delimiter, Math.max(from - 1, 0));
  if (lf < 0) return undefined;
  const end = lf > from && body[lf - 1] === '\r' ? lf - 1 : Math.max(lf, from);
  return { at: lf + 1, end };
}

function parsePart(part: string): MultipartPart {
  const crlf = part.indexOf('\r\n\r\n');
  const lf = part.indexOf('\n\n');
  let headEnd: number;
  let bodyStart: number;
  if (part.startsWith('\r\n')) [headEnd, bodyStart] = [0, 2];
  else if (part.startsWith('\n')) [headEnd, bodyStart] = [0, 1];
  else if (crlf >= 0 && (lf < 0 || crlf < lf)) [headEnd, bodyStart] = [crlf, crlf + 4];
  else if (lf >= 0) [headEnd, bodyStart] = [lf, lf + 2];
  else [headEnd, bodyStart] = [part.length, part.length];
  const result: MultipartPart = { names: [], filenames: [], contentTypes: [], dispositions: [], transferEncodings: [], value: part.slice(bodyStart) };
  for (const [name, value] of headerLines(part.slice(0, headEnd))) {
    const n = asciiLower(name);
    if (n === 'content-disposition') {
      result.dispositions.push(value);
      for (const [pn, pv] of headerParams(value)) {
        if (pn === 'name') result.names.push(pv);
        else if (pn === 'filename') result.filenames.push(pv);
        else if (pn === 'filename*') result.filenames.push(decodeExtValue(pv));
      }
    } else if (n === 'content-type') result.contentTypes.push(value);
    else if (n === 'content-transfer-encoding') result.transferEncodings.push(value);
  }
  return result;
}

/** RFC 8187 `charset'lang'pct-encoded` -> the decoded bytes (the charset is not applied). */
function decodeExtValue(v: string): string {
  const m = /^[^']*'[^']*'(.*)$/s.exec(v);
  return percentDecode(m ? m[1] : v);
}

/** `Name: value` lines of a header block, with obsolete line folding joined; lines without a colon are skipped. */
export function headerLines(head: string): [string, string][] {
  const out: [string, string][] = [];
  for (const line of head.split(/\r?\n/)) {
    if (line === '') continue;
    if ((line[0] === ' ' || line[0] === '\t') && out.length > 0) {
      const last = out[out.length - 1];
      last[1] = (last[1] + ' ' + line.trim()).trim();
      continue;
    }
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    out.push([line.slice(0, colon).trim(), line.slice(colon + 1).trim()]);
  }
  return out;
}

// ---------------------------------------------------------------------------------------
// Body MIME type sniffing

/**
 * The media type of a body from its first bytes: common image, audio, video, archive and
 * document signatures, then HTML, XML and JSON text, then `text/plain` for other UTF-8 text
 * without control characters, else `application/octet-stream`; "" for an empty body.
 * Parameters (charset) are never added, as in the docs' example values.
 */
export function sniffMime(body: string): string {
  if (body.length === 0) return '';
  const at = (i: number, s: string): boolean => body.startsWith(s, i);
  if (at(0, '\xff\xd8\xff')) return 'image/jpeg';
  if (at(0, '\x89PNG\r\n\x1a\n')) return 'image/png';
  if (at(0, 'GIF87a') || at(0, 'GIF89a')) return 'image/gif';
  if (at(0, 'II*\x00') || at(0, 'MM\x00*')) return 'image/tiff';
  if (at(0, 'RIFF') && at(8, 'WEBP')) return 'image/webp';
  if (at(0, 'RIFF') && at(8, 'WAVE')) return 'audio/wav';
  if (at(0, 'RIFF') && at(8, 'AVI ')) return 'video/x-msvideo';
  if (at(0, 'BM') && body.length >= 14) return 'image/bmp';
  if (at(0, '\x00\x00\x01\x00')) return 'image/x-icon';
  if (at(0, '%PDF-')) return 'application/pdf';
  if (at(0, 'PK\x03\x04')) return 'application/zip';
  if (at(0, '\x1f\x8b\x08')) return 'application/gzip';
  if (at(0, '7z\xbc\xaf\x27\x1c')) return 'application/x-7z-compressed';
  if (at(0, 'Rar!\x1a\x07')) return 'application/vnd.rar';
  if (at(0, 'OggS')) return 'audio/ogg';
  if (at(0, 'fLaC')) return 'audio/flac';
  if (at(0, 'ID3') || /^\xff[\xe2-\xe7\xf2-\xf7\xfa-\xff]/.test(body)) return 'audio/mpeg';
  if (at(4, 'ftyp')) return 'video/mp4';
  if (at(0, '\x1aE\xdf\xa3')) return 'video/webm';
  if (at(0, '\x00asm')) return 'application/wasm';

  const text = binaryToUtf8(body.startsWith('\xef\xbb\xbf') ? body.slice(3) : body);
  if (text === undefined) return 'application/octet-stream';
  const start = text.trimStart();
  const lower = start.slice(0, 64).toLowerCase();
  if (/^<(!doctype html|html|head|body|script|iframe|h1|div|font|table|a|style|title|b|br|p)[ >]/.test(lower) || lower.startsWith('<!--')) return 'text/html';
  if (lower.startsWith('<?xml')) return 'text/xml';
  if ((start.startsWith('{') || start.startsWith('[')) && parseJson(text) !== undefined) return 'application/json';
  if (start.startsWith('%!PS-Adobe-')) return 'application/postscript';
  if (/[\x00-\x08\x0b\x0e-\x1a\x1c-\x1f\x7f]/.test(text)) return 'application/octet-stream';
  return 'text/plain';
}

// ---------------------------------------------------------------------------------------
// ModSecurity variables (`crs.*`, managed-only)

/**
 * The request as ModSecurity v3 sees it, for the CRS rules (scheme/managed.ts), from
 * ModSecurity's reference manual:
 * - ARGS_GET from the query string, ARGS_POST from an urlencoded body or the non-file
 *   parts of a multipart body; names and values of the query and the urlencoded body are
 *   URL-decoded (`+` is a space, a bad `%` stays). The leaves of a JSON body (names
 *   `json.a.b`, array elements `json.a.0`; numbers and booleans as text, null as "") are
 *   in ARGS only, as in libmodsecurity 3, not in ARGS_POST. ARGS: query, body, JSON.
 * - libmodsecurity 3 decodes the URI implicitly: REQUEST_URI is path and query
 *   percent-decoded (an absolute target loses its scheme and host; a bad `%` stays; `+`
 *   stays), REQUEST_FILENAME the path split off the raw target first and then decoded
 *   (so `%3f` does not cut it, as since libmodsecurity 3.0.13), REQUEST_BASENAME its last
 *   `/` segment (empty without a `/`); REQUEST_URI_RAW is the target exactly as in the request line and
 *   QUERY_STRING the query as sent.
 * - Cookies: split on `;`, leading white space trimmed, names and values as sent.
 * - REQUEST_BODY: the raw body with the URLENCODED processor or none; empty with XML,
 *   JSON and MULTIPART (REQUEST_BODY_LENGTH is always the body's length).
 * - XML (`text/xml`, `application/xml`, `…+xml`): the text content of the document
 *   (`XML:/*`), then each attribute value (`XML://@*`); CDATA and the five XML entities
 *   and numeric references decoded.
 * - REQBODY_ERROR: a JSON or XML body that does not parse, a multipart body without a
 *   boundary or parts. MULTIPART_STRICT_ERROR (approximation): a multipart error, content
 *   before the first boundary, no closing boundary, or a part without a name.
 * Map keys that are not UTF-8 read with U+FFFD (the names arrays keep the exact bytes).
 */
function crsFields(req: SampleRequest, target: Target, body: string, media: string, contentType: string): Record<string, unknown> {
  const f: Record<string, unknown> = {};
  const ignored: string[] = [];
  const written = req.headers ?? [];
  // A client adds Host from an absolute URL (HTTP/1.1 requires it); ftw requests are exact.
  const headers: readonly (readonly [string, string])[] =
    !req.wire && target.authority && !written.some(([n]) => asciiLower(n) === 'host') ? [...written, ['Host', target.authority.slice(target.authority.lastIndexOf('@') + 1)]] : written;
  const rawTarget = utf8ToBinary(req.url);
  const rawQuery = target.query === undefined ? undefined : utf8ToBinary(target.query);
  const rawPath = utf8ToBinary(target.path);
  const filename = percentDecode(rawPath);

  const getArgs: [string, string][] = splitPairs(rawQuery ?? '').map(([n, v]) => [formDecode(n), formDecode(v)]);
  let postArgs: [string, string][] = [];
  const jsonArgs: [string, string][] = [];
  const files: string[] = [];
  const fileNames: string[] = [];
  const partHeaders: string[] = [];
  let filesSize = 0;
  let processor = '';
  let bodyError = false;
  let strictError = false;
  let xml: string[] = [];

  if (media === 'application/x-www-form-urlencoded') {
    processor = 'URLENCODED';
    postArgs = splitPairs(body).map(([n, v]) => [formDecode(n), formDecode(v)]);
  } else if (media === 'multipart/form-data') {
    processor = 'MULTIPART';
    const boundary = headerParams(utf8ToBinary(contentType)).find(([n]) => n === 'boundary')?.[1];
    const parts = boundary ? parseMultipart(body, boundary) : [];
    if (!boundary || parts.length === 0) bodyError = true;
    for (const part of parts) {
      const name = part.names[0] ?? '';
      if (part.names.length === 0) strictError = true;
      if (part.filenames.length > 0) {
        files.push(part.filenames[0]);
        fileNames.push(name);
        filesSize += part.value.length;
      } else postArgs.push([name, part.value]);
    }
    if (boundary) {
      partHeaders.push(...multipartHeaderLines(body, boundary));
      const delimiter = '--' + boundary;
      const first = body.indexOf(delimiter);
      if (first < 0 || body.slice(0, first).trim() !== '' || !body.includes(delimiter + '--')) strictError = true;
    }
    strictError ||= bodyError;
  } else if (media === 'application/json' || media.endsWith('+json')) {
    processor = 'JSON';
    const text = binaryToUtf8(body);
    let doc: unknown;
    try {
      doc = text === undefined || text.trim() === '' ? undefined : JSON.parse(text);
    } catch {
      bodyError = true;
    }
    if (doc !== undefined && !jsonLeaves(doc, 'json', jsonArgs)) bodyError = true;
  } else if (/^(?:text\/xml|application\/xml|application\/[\w.+-]*\+xml)$/.test(media)) {
    processor = 'XML';
    const r = xmlText(body);
    if (r === undefined) bodyError = true;
    else xml = [r.text, ...r.attributes];
  }

  const args = [...getArgs, ...postArgs, ...jsonArgs];
  const collection = (pairs: readonly [string, string][]): Record<string, unknown[]> => {
    const map = emptyMap();
    for (const [n, v] of pairs) (map[mapKey(n, 'argument name', ignored)] ??= []).push(bytes(v));
    return map;
  };
  f['crs.args'] = collection(args);
  f['crs.args_names'] = args.map(([n]) => bytes(n));
  f['crs.args_get'] = collection(getArgs);
  f['crs.args_get_names'] = getArgs.map(([n]) => bytes(n));
  f['crs.args_post'] = collection(postArgs);
  f['crs.args_post_names'] = postArgs.map(([n]) => bytes(n));
  f['crs.args_combined_size'] = args.reduce((sum, [n, v]) => sum + n.length + v.length, 0);

  const cookies: [string, string][] = [];
  for (const [n, v] of headers) {
    if (asciiLower(n) !== 'cookie') continue;
    for (const piece of utf8ToBinary(v).split(';')) {
      const c = piece.replace(/^[ \t]+/, '');
      if (c === '') continue;
      const eq = c.indexOf('=');
      cookies.push(eq < 0 ? [c, ''] : [c.slice(0, eq), c.slice(eq + 1)]);
    }
  }
  f['crs.request_cookies'] = collection(cookies);
  f['crs.request_cookies_names'] = cookies.map(([n]) => bytes(n));
  const headerMap = emptyMap();
  for (const [n, v] of headers) (headerMap[asciiLower(n)] ??= []).push(v);
  f['crs.request_headers'] = headerMap;
  f['crs.request_headers_names'] = headers.map(([n]) => n);

  f['crs.request_uri'] = bytes(percentDecode(rawPath + (rawQuery === undefined ? '' : `?${rawQuery}`)));
  f['crs.request_uri_raw'] = bytes(rawTarget);
  f['crs.request_filename'] = bytes(filename);
  // Only a path with a `/` has a basename (a CONNECT target `host:port` has none, as in
  // libmodsecurity 3; ModSecurity 2 has no path for it at all).
  const slash = filename.lastIndexOf('/');
  f['crs.request_basename'] = bytes(slash < 0 ? '' : filename.slice(slash + 1));
  f['crs.query_string'] = bytes(rawQuery ?? '');
  // REQUEST_BODY holds the raw body only when the URLENCODED processor read it or when no
  // processor did (CRS 901340 then sets ctl:forceRequestBodyVariable): with the XML, JSON
  // or MULTIPART processor it is empty, as ModSecurity documents and the CRS regression
  // tests expect (944100-11: an XML element name is not searched as body text).
  f['crs.request_body'] = bytes(processor === '' || processor === 'URLENCODED' ? body : '');
  f['crs.request_body_length'] = body.length;
  f['crs.request_line'] = bytes(`${req.method} ${rawTarget} ${req.httpVersion}`);
  f['crs.request_method'] = req.method;
  f['crs.request_protocol'] = req.httpVersion;
  f['crs.files'] = files.map(bytes);
  f['crs.files_names'] = fileNames.map(bytes);
  f['crs.files_combined_size'] = filesSize;
  f['crs.multipart_part_headers'] = partHeaders.map(bytes);
  f['crs.xml'] = xml.map(bytes);
  f['crs.reqbody_processor'] = processor;
  f['crs.reqbody_error'] = bodyError;
  f['crs.multipart_strict_error'] = strictError;
  return f;
}

/** ModSecurity 3's default SecRequestBodyJsonDepthLimit: a deeper body is a body error. */
const JSON_DEPTH_LIMIT = 10_000;

/**
 * The leaves of a JSON document as `[name, value]` pairs (binary strings), in document
 * order; false when it nests deeper than JSON_DEPTH_LIMIT. A loop with its own stack, not
 * recursion: a body of a few thousand `[` must not overflow the call stack.
 */
function jsonLeaves(doc: unknown, root: string, out: [string, string][]): boolean {
  const stack: [unknown, string, number][] = [[doc, root, 0]];
  while (stack.length > 0) {
    const [v, name, depth] = stack.pop()!;
    if (v !== null && typeof v === 'object') {
      if (depth >= JSON_DEPTH_LIMIT) return false;
      const entries: [string, unknown][] = Array.isArray(v) ? v.map((x, i) => [String(i), x]) : Object.entries(v as Record<string, unknown>).map(([k, x]) => [utf8ToBinary(k), x]);
      for (let i = entries.length - 1; i >= 0; i--) stack.push([entries[i]![1], `${name}.${entries[i]![0]}`, depth + 1]);
    } else out.push([name, v === null ? '' : typeof v === 'string' ? utf8ToBinary(v) : String(v)]);
  }
  return true;
}

/** Every header line (`Name: value`) of every part of a multipart body. */
function multipartHeaderLines(body: string, boundary: string): string[] {
  const out: string[] = [];
  const pieces = body.split('--' + boundary);
  for (let i = 1; i < pieces.length; i++) {
    const piece = pieces[i];
    if (piece.startsWith('--')) break;
    const start = piece.startsWith('\r\n') ? 2 : piece.startsWith('\n') ? 1 : 0;
    const rest = piece.slice(start);
    const m = /\r?\n\r?\n/.exec(rest);
    const head = m ? rest.slice(0, m.index) : rest;
    for (const [n, v] of headerLines(head)) out.push(`${n}: ${v}`);
  }
  return out;
}

const XML_ENTITIES: Readonly<Record<string, string>> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };

const decodeXmlEntities = (s: string): string =>
  s.replace(/&(#x[0-9A-Fa-f]+|#\d+|lt|gt|amp|quot|apos);/g, (_m, e: string) => (e[0] === '#' ? String.fromCharCode(parseInt(e[1] === 'x' ? e.slice(2) : e.slice(1), e[1] === 'x' ? 16 : 10) & 0xff) : XML_ENTITIES[e]));

/**
 * The text content of an XML document (`XML:/*`) and its attribute values in document order
 * (`XML://@*`), or undefined when its tags do not nest.
 */
function xmlText(body: string): { text: string; attributes: string[] } | undefined {
  let out = '';
  const attributes: string[] = [];
  const stack: string[] = [];
  let i = 0;
  let sawElement = false;
  while (i < body.length) {
    const lt = body.indexOf('<', i);
    const chunk = body.slice(i, lt < 0 ? body.length : lt);
    if (stack.length > 0) out += decodeXmlEntities(chunk);
    else if (chunk.trim() !== '') return undefined;
    if (lt < 0) break;
    const rest = body.slice(lt);
    const end = (marker: string): number => body.indexOf(marker, lt);
    if (rest.startsWith('<![CDATA[')) {
      const e = end(']]>');
      if (e < 0 || stack.length === 0) return undefined;
      out += body.slice(lt + 9, e);
      i = e + 3;
    } else if (rest.startsWith('<!--')) {
      const e = end('-->');
      if (e < 0) return undefined;
      i = e + 3;
    } else if (rest.startsWith('<?') || rest.startsWith('<!')) {
      const e = end('>');
      if (e < 0) return undefined;
      i = e + 1;
    } else {
      const e = end('>');
      if (e < 0) return undefined;
      const tag = body.slice(lt + 1, e);
      const m = /^(\/?)([^\s/>]+)/.exec(tag);
      if (!m) return undefined;
      if (!m[1]) for (const a of tag.slice(m[0].length).matchAll(/[^\s=/>]+\s*=\s*(?:"([^"]*)"|'([^']*)')/g)) attributes.push(decodeXmlEntities(a[1] ?? a[2]));
      if (m[1]) {
        if (stack.pop() !== m[2]) return undefined;
      } else if (!tag.endsWith('/')) {
        if (stack.length === 0 && sawElement) return undefined;
        stack.push(m[2]);
      }
      sawElement = true;
      i = e + 1;
    }
  }
  return stack.length === 0 && sawElement ? { text: out, attributes } : undefined;
}

/**
 * A sample request as runtime field values for the engine, with every problem found on
 * the way (from reading the request and from typing its values), worded for a user.
 */
export function requestValues(req: SampleRequest): { fields: Record<string, unknown>; values: FieldValues; problems: string[] } {
  const f = requestFields(req);
  const { values, errors } = prepareFields(f.fields, httpScheme);
  return { fields: f.fields, values, problems: [...f.problems, ...errors.map((e) => `${e.field}: ${e.message}`)] };
}

/** Argument names and values as ModSecurity reads them: `%XX` decoded and `+` a space. */
function formDecode(s: string): string {
  return decodePercent(s, { plus: true });
}
