/**
 * REST-Client-style `.http` files: requests separated by `###` lines, each with optional
 * comments and metadata, a request line, headers, an empty line and a body.
 *
 *   ### Login with a bad password          <- text after ### names the request
 *   # @ip.src 203.0.113.9                  <- metadata: a scheme field and its value
 *   # @name login                          <- REST Client's own request name (wins)
 *   POST https://example.com/login HTTP/1.1
 *   Content-Type: application/x-www-form-urlencoded
 *
 *   user=admin&password=x
 *
 * Rules (REST Client's where it has one):
 * - Comment lines start with `#` or `//` (before the request line and among headers; the
 *   body is taken verbatim). `# @field value` / `// @field value` set `meta`; REST Client's
 *   own directives (`@note`, `@no-redirect`, `@no-cookie-jar`, `@no-log`, `@prompt`) are
 *   ignored, and so is `# @todo …` (a name without a dot that is not close to any field).
 *   Metadata values are checked against the field's type here, with the line.
 * - Request line `METHOD URL [HTTP/x.y]`; a line that is only a URL is a GET. Known
 *   methods are upper-cased (REST Client accepts `get`); other methods must be HTTP tokens
 *   and are kept as written. Lines right after it that start with white space and `?` or
 *   `&` continue the URL (REST Client's multi-line query). The URL is absolute
 *   (`http://` / `https://`) or a path starting with `/`, which then needs a Host header.
 * - Headers `Name: value` up to the first empty line; the body runs to the next `###`,
 *   with trailing empty lines and the final line break removed; CRLF or LF kept as written;
 *   stored as UTF-8 bytes.
 * - `{{variables}}` and `@name = value` file variables are not supported: reported as
 *   problems, the request is still returned with the text left as written.
 * - A body line `< ./upload.bin` (or `<@ ./file`) stands for that file's bytes: the request
 *   then has `bodySegments` instead of `body`, and the adapter (CLI, language server) reads
 *   the files relative to the .http file, only up to the inspection limit (body.ts).
 *
 * Never throws. `parseHttpBlocks` returns every block that holds a request or a problem,
 * malformed ones included, numbered in file order: the one numbering that Evaluate, the
 * zone trace and the CLI show. `parseHttpFile` keeps the requests that can be sent.
 */
import { utf8ToBinary } from '../language/bytes';
import { httpScheme, suggestNames } from '../language/scheme/index';
import { metaFieldType, metaFieldValue } from './fields';
import type { BodySegment, RequestProblem, SampleRequest } from './types';

/** REST Client's request metadata that is not a field. */
const REST_CLIENT_DIRECTIVES = new Set(['note', 'no-redirect', 'no-cookie-jar', 'no-log', 'prompt']);

/** Methods REST Client knows; written in any case they are sent in upper case. */
const KNOWN_METHODS = new Set([
  'GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'CONNECT', 'OPTIONS', 'TRACE', 'PATCH',
  'LOCK', 'UNLOCK', 'PROPFIND', 'PROPPATCH', 'COPY', 'MOVE', 'MKCOL', 'MKCALENDAR', 'ACL', 'SEARCH',
]);

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

interface Line {
  readonly text: string;
  /** Offset of the first character. */
  readonly start: number;
  /** Offset just past the text (before the line break). */
  readonly end: number;
  /** 0-based line number. */
  readonly n: number;
}

function splitLines(text: string): Line[] {
  const lines: Line[] = [];
  let start = 0;
  let n = 0;
  for (;;) {
    const lf = text.indexOf('\n', start);
    const stop = lf < 0 ? text.length : lf;
    const end = stop > start && text[stop - 1] === '\r' ? stop - 1 : stop;
    lines.push({ text: text.slice(start, end), start, end, n: n++ });
    if (lf < 0) break;
    start = lf + 1;
  }
  return lines;
}

const SEPARATOR = /^\s*#{3,}/;
const COMMENT = /^\s*(#|\/\/)/;
const METADATA = /^\s*(?:#|\/\/)\s*@([^\s=]+)\s*(?:=\s*)?(.*)$/;
const FILE_VARIABLE = /^\s*@[A-Za-z_][\w.-]*\s*=/;
const VARIABLE = /\{\{\s*([^}]*?)\s*\}\}/;

/** One `###`-separated block of a `.http` file that holds a request or a problem. */
export interface HttpBlock {
  /** 0-based, in file order, counting malformed blocks (blocks with neither a request nor a problem are not counted). */
  readonly index: number;
  /** 0-based lines of the block: from its `###` line (0 for the first block) to the line before the next `###`. */
  readonly startLine: number;
  readonly endLine: number;
  /** `### name`, or `# @name name` (which wins). */
  readonly name?: string;
  /** The request line; in a block without a request, its first line that is neither blank nor a comment (else its first problem's). */
  readonly line: number;
  /** The request, unless the block has a problem that stops it (notes such as "variables are not supported" do not). */
  readonly request?: SampleRequest;
  /** Problems and notes, as the parser found them. */
  readonly problems: readonly RequestProblem[];
}

export function parseHttpBlocks(text: string): HttpBlock[] {
  const blocks: HttpBlock[] = [];
  const lines = splitLines(typeof text === 'string' ? text : '');
  let blockStart = 0;
  let name: string | undefined;
  for (let i = 0; i <= lines.length; i++) {
    if (i < lines.length && !SEPARATOR.test(lines[i].text)) continue;
    const b = parseBlock(text, lines.slice(blockStart, i), name);
    // The block's range starts at its own `###` line, so that every line belongs to one block.
    if (b.request || b.problems.length > 0) blocks.push({ index: blocks.length, startLine: Math.max(0, blockStart - 1), endLine: i - 1, ...b });
    if (i < lines.length) {
      name = lines[i].text.replace(SEPARATOR, '').trim() || undefined;
      blockStart = i + 1;
    }
  }
  return blocks;
}

export function parseHttpFile(text: string): { requests: SampleRequest[]; problems: RequestProblem[] } {
  const blocks = parseHttpBlocks(text);
  return { requests: blocks.flatMap((b) => (b.request ? [b.request] : [])), problems: blocks.flatMap((b) => b.problems) };
}

type ParsedBlock = Pick<HttpBlock, 'name' | 'line' | 'request' | 'problems'>;

/** Where a block without a request is shown: its first line that is neither blank nor a comment. */
function shownLine(lines: readonly Line[], problems: readonly RequestProblem[]): number {
  return lines.find((l) => l.text.trim() !== '' && !COMMENT.test(l.text))?.n ?? problems[0]?.line ?? lines[0]?.n ?? 0;
}

function parseBlock(text: string, lines: Line[], separatorName: string | undefined): ParsedBlock {
  const problems: RequestProblem[] = [];
  const own: RequestProblem[] = [];
  const notes: RequestProblem[] = [];
  const problem = (line: Line, message: string): void => void own.push({ line: line.n, message });
  let name = separatorName;
  const meta: Record<string, string> = {};
  let hasMeta = false;
  let first: Line | undefined;
  let i = 0;

  // Comments, metadata and file variables before the request line.
  for (; i < lines.length; i++) {
    const line = lines[i];
    if (line.text.trim() === '') continue;
    first ??= line;
    const m = METADATA.exec(line.text);
    if (m) {
      const [, key, value] = m;
      hasMeta = true;
      if (key === 'name') name = value.trim() || name;
      else if (!REST_CLIENT_DIRECTIVES.has(key) && !isPlainComment(key)) {
        const r = VARIABLE.test(value) ? {} : metaFieldValue(key, value);
        if (r.problem !== undefined) problem(line, `metadata: ${r.problem}`);
        meta[key] = value.trim();
      }
      continue;
    }
    if (COMMENT.test(line.text)) continue;
    if (FILE_VARIABLE.test(line.text)) {
      notes.push({ line: line.n, message: 'variables are not supported: this file variable is ignored' });
      continue;
    }
    break;
  }
  if (i >= lines.length) {
    if (hasMeta) problems.push({ line: (first ?? lines[0]).n, message: 'no request line after this metadata (expected METHOD URL)' });
    problems.push(...own, ...notes);
    return { ...(name !== undefined ? { name } : {}), line: shownLine(lines, problems), problems };
  }

  // Request line, with REST Client's query continuation lines.
  const requestLine = lines[i++];
  let url = '';
  let method = 'GET';
  let httpVersion = 'HTTP/1.1';
  {
    let rest = requestLine.text.trim();
    const vm = /\s+(HTTP\/\S*)$/i.exec(rest);
    if (vm) {
      rest = rest.slice(0, vm.index);
      if (/^HTTP\/\d(\.\d)?$/i.test(vm[1])) httpVersion = 'HTTP/' + vm[1].slice(5);
      else problem(requestLine, `unknown HTTP version ${JSON.stringify(vm[1])} (expected e.g. HTTP/1.1)`);
    }
    const mm = /^(\S+)\s+(\S.*)$/.exec(rest);
    if (mm && !looksLikeUrl(mm[1])) {
      const written = mm[1];
      if (KNOWN_METHODS.has(written.toUpperCase())) method = written.toUpperCase();
      else if (TOKEN.test(written)) method = written;
      else {
        const bad = [...written].find((c) => !TOKEN.test(c)) ?? '';
        problem(requestLine, `invalid character ${JSON.stringify(bad)} in method ${JSON.stringify(written)} (a method is letters, digits and !#$%&'*+.^_\`|~-)`);
      }
      url = mm[2];
    } else url = rest;
    while (i < lines.length && /^\s+[?&]/.test(lines[i].text)) url += lines[i++].text.trim();
  }
  let last: Line = lines[i - 1];

  // Headers up to the first empty line.
  const headers: [string, string][] = [];
  for (; i < lines.length; i++) {
    const line = lines[i];
    if (line.text.trim() === '') {
      i++;
      break;
    }
    last = line;
    if (COMMENT.test(line.text)) continue;
    const colon = line.text.indexOf(':');
    const headerName = colon > 0 ? line.text.slice(0, colon) : '';
    if (colon <= 0 || !TOKEN.test(headerName)) {
      problem(
        line,
        colon <= 0
          ? `bad header line ${JSON.stringify(clip(line.text))}: expected "Name: value" (an empty line must separate the headers from the body)`
          : `bad header name ${JSON.stringify(headerName)}: a header name is letters, digits and !#$%&'*+.^_\`|~- (no spaces)`,
      );
      continue;
    }
    headers.push([headerName, line.text.slice(colon + 1).trim()]);
  }

  // Body: the rest of the block, without trailing empty lines.
  let bodyEnd = lines.length;
  while (bodyEnd > i && lines[bodyEnd - 1].text.trim() === '') bodyEnd--;
  let body: string | undefined;
  let bodySegments: BodySegment[] | undefined;
  if (bodyEnd > i) {
    body = text.slice(lines[i].start, lines[bodyEnd - 1].end);
    last = lines[bodyEnd - 1];
    bodySegments = fileSegments(text, lines.slice(i, bodyEnd));
  }

  // The URL.
  const urlProblem = VARIABLE.test(url) ? undefined : checkUrl(url, method);
  if (urlProblem) problem(requestLine, urlProblem);
  else if (url.startsWith('/') && !VARIABLE.test(url) && !headers.some(([n]) => n.toLowerCase() === 'host')) {
    problem(requestLine, `the URL ${JSON.stringify(clip(url))} is a path: add a Host header or write the full URL (https://host${clip(url)})`);
  }

  // Variables are left as written, with a note on the first line that uses one.
  const used = lines
    .slice(0, Math.max(bodyEnd, i))
    .find((l) => VARIABLE.test(l.text) && (l.n >= requestLine.n || METADATA.test(l.text)) && !(l.n > requestLine.n && l.n < (lines[i]?.n ?? Infinity) && COMMENT.test(l.text)));
  if (used) {
    const v = VARIABLE.exec(used.text)?.[0] ?? '{{…}}';
    notes.push({ line: used.n, message: `variables are not supported: ${v} is left as written` });
  }

  problems.push(...own, ...notes);
  const named = name !== undefined ? { name } : {};
  if (own.length > 0) return { ...named, line: shownLine(lines, problems), problems };
  const start = first ?? requestLine;
  const request: SampleRequest = {
    ...named,
    method,
    url,
    httpVersion,
    headers,
    ...(bodySegments ? { bodySegments } : body !== undefined ? { body: utf8ToBinary(body) } : {}),
    meta,
    source: { start: start.start, end: last.end, line: requestLine.n },
  };
  return { ...named, line: requestLine.n, request, problems };
}

const FILE_REFERENCE = /^<@?[ \t]+(\S.*?)\s*$/;

/**
 * The body as text and file references when a line of it is `< path` (REST Client's file
 * body; `<@ path` too, its variables are not processed): the line stands for the file's
 * bytes, the line breaks around it stay. Undefined when no line names a file.
 */
function fileSegments(text: string, body: readonly Line[]): BodySegment[] | undefined {
  if (!body.some((l) => FILE_REFERENCE.test(l.text))) return undefined;
  const segments: BodySegment[] = [];
  let from = body[0].start;
  for (const l of body) {
    const m = FILE_REFERENCE.exec(l.text);
    if (!m) continue;
    if (l.start > from) segments.push(utf8ToBinary(text.slice(from, l.start)));
    segments.push({ file: m[1], line: l.n });
    from = l.end;
  }
  const end = body[body.length - 1].end;
  if (end > from) segments.push(utf8ToBinary(text.slice(from, end)));
  return segments;
}

/**
 * `# @todo …` is a comment, not metadata: a name without a dot that is no field and is not
 * close to one. A name with a dot, or close to a field name (`@sll`), is checked as a field.
 */
function isPlainComment(key: string): boolean {
  return !key.includes('.') && metaFieldType(key) === undefined && suggestNames(key, httpScheme).every((n) => !httpScheme.fields.has(n));
}

function looksLikeUrl(token: string): boolean {
  return token.startsWith('/') || /^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(token);
}

function clip(s: string): string {
  return s.length > 60 ? s.slice(0, 57) + '...' : s;
}

/** Why a request URL is not one we can send, or undefined when it is fine. */
function checkUrl(url: string, method: string): string | undefined {
  const shown = JSON.stringify(clip(url));
  if (url === '') return 'no URL in the request line (expected METHOD URL)';
  if (/[\x00-\x1f\x7f]/.test(url)) return `invalid URL ${shown}: control characters must be percent-encoded`;
  if (/\s/.test(url)) return `invalid URL ${shown}: spaces must be percent-encoded (%20)`;
  if (url === '*' && method === 'OPTIONS') return 'OPTIONS * needs a Host header and is not supported; write a URL';
  if (url.startsWith('/')) return undefined;
  const m = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/([^/?#]*)/.exec(url);
  if (!m) return `invalid URL ${shown}: expected http://…, https://… or a path starting with /`;
  if (!/^https?$/i.test(m[1])) return `invalid URL ${shown}: only http and https URLs are supported`;
  const authority = m[2].slice(m[2].lastIndexOf('@') + 1);
  const hm = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9\-._~%!$&'()*+,;=]*)(?::(\d*))?$/.exec(authority);
  if (!hm || hm[1] === '') return `invalid URL ${shown}: ${authority === '' ? 'no host' : `bad host ${JSON.stringify(authority)}`}`;
  if (hm[2] !== undefined && (hm[2] === '' || Number(hm[2]) > 65535)) return `invalid URL ${shown}: bad port ${JSON.stringify(hm[2])}`;
  return undefined;
}
