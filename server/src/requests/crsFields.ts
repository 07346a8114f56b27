/** ModSecurity's variables for the managed OWASP ruleset: the managed-only `crs.*` fields. */
import { asciiLower, binaryToUtf8, percentDecode as decodePercent, utf8ToBinary } from '../language/bytes';
import { bytes, emptyMap, headerBytes, mapKey } from './fieldBytes';
import { parseJsonBody } from './jsonBody';
import { headerParams, parseMultipart } from './multipart';
import { percentDecode } from './normalize';
import { splitPairs, type Target } from './target';
import type { SampleRequest } from './types';

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
 * - XML (`text/xml`, `application/xml`, `…+xml`): `crs.xml` is the root element's text
 *   content (`XML:/*`, one value: the text of every descendant, no attribute values),
 *   `crs.xml_attributes` each attribute value in document order (`XML://@*`); CDATA and the
 *   five XML entities and numeric references decoded.
 * - REQBODY_ERROR: a JSON or XML body that does not parse, a multipart body without a
 *   boundary or parts. MULTIPART_STRICT_ERROR (approximation): a multipart error, content
 *   before the first boundary, no closing boundary, or a part without a name.
 * Map keys that are not UTF-8 read with U+FFFD (the names arrays keep the exact bytes).
 */
export function crsFields(req: SampleRequest, target: Target, body: string, media: string, contentType: string): Record<string, unknown> {
  const f: Record<string, unknown> = {};
  const ignored: string[] = [];
  const written = headerBytes(req);
  // A client adds Host from an absolute URL (HTTP/1.1 requires it); ftw requests are exact.
  const headers: readonly (readonly [string, string])[] =
    !req.wire && target.authority && !written.some(([n]) => asciiLower(n) === 'host') ? [...written, ['Host', utf8ToBinary(target.authority.slice(target.authority.lastIndexOf('@') + 1))]] : written;
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
  let xmlAttributes: string[] = [];

  if (media === 'application/x-www-form-urlencoded') {
    processor = 'URLENCODED';
    postArgs = splitPairs(body).map(([n, v]) => [formDecode(n), formDecode(v)]);
  } else if (media === 'multipart/form-data') {
    processor = 'MULTIPART';
    const boundary = headerParams(contentType).find(([n]) => n === 'boundary')?.[1];
    const { parts, lookalikes } = boundary ? parseMultipart(body, boundary) : { parts: [], lookalikes: 0 };
    if (!boundary || parts.length === 0) bodyError = true;
    if (lookalikes > 0) strictError = true;
    for (const part of parts) {
      partHeaders.push(...part.headerLines);
      const name = part.names[0] ?? '';
      if (part.names.length === 0) strictError = true;
      if (part.filenames.length > 0) {
        files.push(part.filenames[0]);
        fileNames.push(name);
        filesSize += part.value.length;
      } else postArgs.push([name, part.value]);
    }
    if (boundary) {
      const delimiter = '--' + boundary;
      const first = body.indexOf(delimiter);
      if (first < 0 || body.slice(0, first).trim() !== '' || !body.includes(delimiter + '--')) strictError = true;
    }
    strictError ||= bodyError;
  } else if (media === 'application/json' || media.endsWith('+json')) {
    processor = 'JSON';
    const text = binaryToUtf8(body);
    // A body that is not UTF-8 is no JSON (ModSecurity's parser refuses it too): a body error.
    if (text === undefined) bodyError = true;
    else if (text.trim() !== '') {
      const doc = parseJsonBody(text);
      if (doc === undefined || !jsonLeaves(doc, 'json', jsonArgs)) bodyError = true;
    }
  } else if (/^(?:text\/xml|application\/xml|application\/[\w.+-]*\+xml)$/.test(media)) {
    processor = 'XML';
    const r = xmlText(body);
    if (r === undefined) bodyError = true;
    else [xml, xmlAttributes] = [[r.text], r.attributes];
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
    for (const piece of v.split(';')) {
      const c = piece.replace(/^[ \t]+/, '');
      if (c === '') continue;
      const eq = c.indexOf('=');
      cookies.push(eq < 0 ? [c, ''] : [c.slice(0, eq), c.slice(eq + 1)]);
    }
  }
  f['crs.request_cookies'] = collection(cookies);
  f['crs.request_cookies_names'] = cookies.map(([n]) => bytes(n));
  const headerMap = emptyMap();
  for (const [n, v] of headers) (headerMap[asciiLower(n)] ??= []).push(bytes(v));
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
  // A body its processor could not read whole (malformed JSON or XML, a multipart body
  // without parts, JSON past its limits) gives the rules too few arguments or none: its raw
  // bytes are REQUEST_BODY, so the rules that read it still see what the app may parse more
  // leniently (ModSecurity's recommended config denies such a body outright, rule 200002;
  // the hosted ruleset has no such rule).
  f['crs.request_body'] = bytes(processor === '' || processor === 'URLENCODED' || bodyError ? body : '');
  f['crs.request_body_length'] = body.length;
  f['crs.request_line'] = bytes(`${req.method} ${rawTarget} ${req.httpVersion}`);
  f['crs.request_method'] = req.method;
  f['crs.request_protocol'] = req.httpVersion;
  f['crs.files'] = files.map(bytes);
  f['crs.files_names'] = fileNames.map(bytes);
  f['crs.files_combined_size'] = filesSize;
  f['crs.multipart_part_headers'] = partHeaders.map(bytes);
  f['crs.xml'] = xml.map(bytes);
  f['crs.xml_attributes'] = xmlAttributes.map(bytes);
  f['crs.reqbody_processor'] = processor;
  f['crs.reqbody_error'] = bodyError;
  f['crs.multipart_strict_error'] = strictError;
  return f;
}

/** ModSecurity 3's default SecRequestBodyJsonDepthLimit: a deeper body is a body error. */
const JSON_DEPTH_LIMIT = 10_000;

/**
 * The most characters of argument names one JSON body may give (its leaves', as
 * `json.a.0.b`). Each name holds its whole path, so a deep body with a wide array at the
 * bottom (or a long key above many leaves) would otherwise make names of quadratic total
 * size: a 98 KB body made gigabytes. A body over it is a body error.
 */
export const JSON_NAMES_LIMIT = 4 * 1024 * 1024;

/**
 * The leaves of a JSON document as `[name, value]` pairs (binary strings), in document
 * order; false when it nests deeper than JSON_DEPTH_LIMIT or its names pass JSON_NAMES_LIMIT
 * (the leaves before that point are kept). A loop with its own stack, not recursion: a body
 * of a few thousand `[` must not overflow the call stack.
 */
function jsonLeaves(doc: unknown, root: string, out: [string, string][]): boolean {
  let namesLength = 0;
  // Three parallel stacks rather than a tuple per node: a body of 50,000 `[` makes 50,000 nodes.
  const values: unknown[] = [doc];
  const names: string[] = [root];
  const depths: number[] = [0];
  while (values.length > 0) {
    const v = values.pop();
    const name = names.pop()!;
    const depth = depths.pop()!;
    if (v === null || typeof v !== 'object') {
      // A node's name is its parent's joined to a key (a rope, made in constant time); a leaf's
      // is read whole, so the leaves' names are what costs.
      namesLength += name.length;
      if (namesLength > JSON_NAMES_LIMIT) return false;
      out.push([name, v === null ? '' : typeof v === 'string' ? utf8ToBinary(v) : String(v)]);
      continue;
    }
    if (depth >= JSON_DEPTH_LIMIT) return false;
    const keys = Array.isArray(v) ? undefined : Object.keys(v);
    const count = keys ? keys.length : (v as unknown[]).length;
    for (let i = count - 1; i >= 0; i--) {
      values.push(keys ? (v as Record<string, unknown>)[keys[i]!] : (v as unknown[])[i]);
      names.push(`${name}.${keys ? utf8ToBinary(keys[i]!) : i}`);
      depths.push(depth + 1);
    }
  }
  return true;
}

const XML_ENTITIES: Readonly<Record<string, string>> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };

/** The body is bytes (a binary string): a character reference becomes its code point's UTF-8 bytes, as libxml2 gives. */
const decodeXmlEntities = (s: string): string =>
  s.replace(/&(#x[0-9A-Fa-f]+|#\d+|lt|gt|amp|quot|apos);/g, (m, e: string) => {
    if (e[0] !== '#') return XML_ENTITIES[e];
    const n = e[1] === 'x' ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10);
    return n > 0 && n <= 0x10ffff && (n < 0xd800 || n > 0xdfff) ? utf8ToBinary(String.fromCodePoint(n)) : m;
  });

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

/** Argument names and values as ModSecurity reads them: `%XX` decoded and `+` a space. */
function formDecode(s: string): string {
  return decodePercent(s, { plus: true });
}
