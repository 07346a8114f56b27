/**
 * OWASP CRS regression tests in the ftw 1.x format of CRS 3.3.x (`meta`, `tests[].test_title`,
 * `stages[].stage.input/output`, `log_contains`), turned into sample requests and
 * expected outcomes. CRS v4's go-ftw format (`rule_id`, `output.log.expect_ids`, its own
 * request defaults) is read too: requests/goFtw.ts. A stage key neither format's runner
 * here honours is listed in the stage's `unsupported`, so it is never passed unchecked.
 *
 * How a stage's `input` becomes a request, following the Python ftw client those tests
 * were written for (ftw/ruleset.py `Input`, ftw/http.py `build_request`) and the suite's
 * README:
 * - Defaults: method `GET`, uri `/`, version `HTTP/1.1`, protocol `http`, port 80. Values
 *   are taken as written, also odd ones (`"\tGET"`, `JUNK/1.0`): those are what the tests
 *   test. Header values that YAML reads as numbers or booleans are written as Python's
 *   `str()` does (`7`, `True`); the file is read as YAML 1.1, like PyYAML does.
 * - `data`: a string, or a list of lines joined with CRLF (ftw: `'\r\n'.join(data)`).
 * - Unless `stop_magic: true` (go-ftw's `autocomplete_headers: false` is accepted as the
 *   same), when `data` is not empty: add `Content-Type: application/x-www-form-urlencoded`
 *   when no Content-Type is given; when the Content-Type is exactly that and `data` holds
 *   no `%XX` escape, re-encode it as ftw does (`urlencode(parse_qsl(data))`: pairs split on
 *   `&` (Python 3.10+, no `;`), pairs without `=` or with an empty value dropped, `+` read as
 *   space, names and values written with `quote_plus`); then add a `Content-Length` of the
 *   body bytes when none is given. ftw adds no Host and no `Connection: close` (go-ftw
 *   adds the latter; the 3.3.x tests do not expect it). Header names are compared without
 *   case here (ftw compared them exactly; the suite only uses the canonical spelling).
 *   ftw counted characters, not bytes, for Content-Length; no 3.3.4 body has a non-ASCII
 *   character, so the two agree on this suite.
 * - The body is sent as UTF-8 (ftw's default; it would honour a `charset` of the
 *   Content-Type, the suite only names utf-8).
 * - `raw_request` (text, sent as UTF-8 like Python 3 ftw) and `encoded_request` (base64
 *   of the exact bytes) replace the structured fields and are parsed by `parseRawRequest`.
 * - The body of the resulting request is what the server reads from the wire (RFC 9112
 *   §6.3): a chunked Transfer-Encoding is decoded, else a valid Content-Length cuts the
 *   data to that many bytes, else there is no body. That is how `stop_magic` tests with a
 *   wrong or missing Content-Length reach the WAF (e.g. 920170-5, a GET with
 *   `Content-Length: 0` and data, is a GET without a body).
 * - `protocol: https` sets `meta.ssl = "true"`; `port` sets `meta["cf.edge.server_port"]`.
 *   `dest_addr` is the server's address and is not used.
 *
 * Outputs: `log_contains` / `no_log_contains` are kept as written (ftw searches the log
 * with them as regexes; `ftwRuleId` extracts the rule id of the usual `id "942100"` form),
 * `status` is always a list, `expect_error` a boolean.
 *
 * A file whose `meta.enabled` is false, or a test with `enabled: false`, is still returned,
 * with `enabled: false` (ftw skips those tests).
 */
import { LineCounter, parseDocument, type Node } from 'yaml';
import { binaryToUtf8, utf8ToBinary } from '../language/bytes';
import { base64Decode } from '../language/runtime/functions';
import { goFtwInputRequest, goFtwLog, isGoFtw, unsupportedKeys, type FtwFormat } from './goFtw';
import { formQuote, messageBody } from './httpWire';
import type { RequestProblem, SampleRequest } from './types';

export interface FtwTest {
  readonly title: string;
  readonly description?: string;
  readonly stages: FtwStage[];
  /** The rule the file tests (go-ftw's top-level `rule_id`). */
  readonly rule?: string;
  /** False when the file's `meta.enabled` or the test's `enabled` is false (ftw skips it). */
  readonly enabled?: boolean;
}

export interface FtwStage {
  readonly request: SampleRequest;
  /**
   * Why a web server in front of the WAF would answer 400 before the WAF sees the request
   * (`serverRejection`), when it would.
   */
  readonly rejected?: string;
  /**
   * Why the server never gets the whole request (`incompleteBody`: the body is shorter than
   * its Content-Length, so the server waits for the rest until the client gives up — what
   * ftw's `expect_error` tests expect), when it does not.
   */
  readonly incomplete?: string;
  readonly output: FtwOutput;
  /** Keys of the stage that Rulesmith does not run (`input.uris`, `output.isolated`, …): the stage is not judged. */
  readonly unsupported?: string[];
}

export interface FtwOutput {
  logContains?: string;
  noLogContains?: string;
  status?: number[];
  expectError?: boolean;
  /** go-ftw's `output.log`: rule ids that must / must not be logged, log regexes. */
  expectIds?: string[];
  noExpectIds?: string[];
  matchRegex?: string;
  noMatchRegex?: string;
}

export interface FtwMeta {
  readonly author?: string;
  readonly description?: string;
  readonly enabled?: boolean;
  readonly name?: string;
}

export function parseFtwFile(yamlText: string, version: '1.1' | '1.2' = '1.1'): { tests: FtwTest[]; problems: RequestProblem[]; meta?: FtwMeta; format?: FtwFormat } {
  const tests: FtwTest[] = [];
  const problems: RequestProblem[] = [];
  const lineCounter = new LineCounter();
  let doc: ReturnType<typeof parseDocument>;
  try {
    doc = parseDocument(typeof yamlText === 'string' ? yamlText : '', { version, lineCounter, uniqueKeys: false, prettyErrors: false });
  } catch (e) {
    problems.push({ line: 0, message: `not a YAML file: ${e instanceof Error ? e.message : String(e)}` });
    return { tests, problems };
  }
  const lineOf = (offset: number | undefined): number => (offset === undefined ? 0 : Math.max(0, lineCounter.linePos(offset).line - 1));
  if (doc.errors.length > 0) {
    for (const e of doc.errors) problems.push({ line: lineOf(e.pos[0]), message: `YAML: ${e.message.split('\n')[0]}` });
    return { tests, problems };
  }
  let data: unknown;
  try {
    data = doc.toJS({ maxAliasCount: 1000 });
  } catch (e) {
    problems.push({ line: 0, message: `YAML: ${e instanceof Error ? e.message : String(e)}` });
    return { tests, problems };
  }
  const nodeLine = (path: (string | number)[]): number => lineOf((doc.getIn(path, true) as Node | undefined)?.range?.[0]);
  const nodeRange = (path: (string | number)[]): [number, number] | undefined => {
    const r = (doc.getIn(path, true) as Node | undefined)?.range;
    return r ? [r[0], r[1]] : undefined;
  };

  if (!isRecord(data)) {
    problems.push({ line: 0, message: 'expected a mapping with "meta" and "tests"' });
    return { tests, problems };
  }
  const format: FtwFormat = isGoFtw(data) ? 'goFtw' : 'ftw';
  // go-ftw reads YAML 1.2 (`yes` is a string there), ftw 1.x YAML 1.1 (PyYAML).
  if (format === 'goFtw' && version === '1.1') return parseFtwFile(yamlText, '1.2');
  const fileRule = format === 'goFtw' && Number.isInteger(data.rule_id) ? String(data.rule_id) : undefined;
  const metaIn = isRecord(data.meta) ? data.meta : {};
  const meta: FtwMeta = {
    ...(metaIn.author !== undefined ? { author: pyStr(metaIn.author) } : {}),
    ...(metaIn.description !== undefined ? { description: pyStr(metaIn.description) } : {}),
    ...(typeof metaIn.enabled === 'boolean' ? { enabled: metaIn.enabled } : {}),
    ...(metaIn.name !== undefined ? { name: pyStr(metaIn.name) } : {}),
  };
  if (!Array.isArray(data.tests)) {
    problems.push({ line: nodeLine(['tests']), message: 'expected a list of tests under "tests"' });
    return { tests, problems, meta, format };
  }

  data.tests.forEach((t: unknown, ti: number) => {
    const at = (...rest: (string | number)[]): (string | number)[] => ['tests', ti, ...rest];
    if (!isRecord(t)) {
      problems.push({ line: nodeLine(at()), message: `test ${ti + 1}: expected a mapping with test_title and stages` });
      return;
    }
    // go-ftw names a test `<rule_id>-<test_id>`, the test id defaulting to its position.
    const title = t.test_title ?? (fileRule !== undefined ? `${fileRule}-${t.test_id ?? ti + 1}` : t.test_id);
    if (title === undefined || title === null || title === '') {
      problems.push({ line: nodeLine(at()), message: `test ${ti + 1}: no test_title` });
      return;
    }
    const name = pyStr(title);
    if (!Array.isArray(t.stages) || t.stages.length === 0) {
      problems.push({ line: nodeLine(at()), message: `test ${name}: no stages` });
      return;
    }
    const stageList: unknown[] = t.stages;
    const stages: FtwStage[] = [];
    let failed = false;
    stageList.forEach((s: unknown, si: number) => {
      if (failed) return;
      const wrapped = isRecord(s) && isRecord(s.stage);
      const stage = wrapped ? (s as { stage: Record<string, unknown> }).stage : s;
      const stagePath = wrapped ? at('stages', si, 'stage') : at('stages', si);
      if (!isRecord(stage) || !isRecord(stage.input)) {
        problems.push({ line: nodeLine(at('stages', si)), message: `test ${name}, stage ${si + 1}: no input` });
        failed = true;
        return;
      }
      const stageName = stageList.length > 1 ? `${name} (stage ${si + 1})` : name;
      const built = ftwInputRequest(stage.input, format);
      if (!built.request) {
        problems.push({ line: nodeLine([...stagePath, 'input']), message: `test ${name}, stage ${si + 1}: ${built.problem}` });
        failed = true;
        return;
      }
      const range = nodeRange([...stagePath, 'input']);
      const request: SampleRequest = {
        ...built.request,
        name: stageName,
        wire: true,
        ...(range ? { source: { start: range[0], end: range[1], line: lineOf(range[0]) } } : {}),
      };
      const output = ftwOutput(stage.output);
      if (typeof output === 'string') {
        problems.push({ line: nodeLine([...stagePath, 'output']), message: `test ${name}, stage ${si + 1}: ${output}` });
        failed = true;
        return;
      }
      const rejected = serverRejection(request);
      const incomplete = incompleteBody(request);
      const unsupported = unsupportedKeys(format, stage.input, stage.output);
      stages.push({ request, ...(rejected ? { rejected } : {}), ...(incomplete ? { incomplete } : {}), output, ...(unsupported.length > 0 ? { unsupported } : {}) });
    });
    if (failed) return;
    const enabled = meta.enabled !== false && t.enabled !== false;
    tests.push({
      title: name,
      ...(t.desc !== undefined && t.desc !== null ? { description: pyStr(t.desc) } : {}),
      stages,
      ...(fileRule !== undefined ? { rule: fileRule } : {}),
      enabled,
    });
  });
  return { tests, problems, meta, format };
}

/**
 * Why an HTTP/1.x server rejects the request with 400 before any module (the WAF) sees it,
 * or undefined: a method that is not a token (white space before `GET`), a request-line
 * version that is not `HTTP/` DIGIT `.` DIGIT (RFC 9112 §2.3, §3: "a server SHOULD respond
 * with 400"), a CONNECT target that is not `host:port`, a Content-Length that is not a
 * number or several that differ without Transfer-Encoding (RFC 9112 §6.3: "the server MUST
 * respond with a 400"), or a header
 * field whose name or value holds a CR or LF (RFC 9110 §5.5: a recipient rejects it or
 * replaces it with a space; Apache and nginx answer 400). The CRS 3.3.4 tests expect that
 * (920430-6: `status: [403, 400]` for version `1.1`; 921140-1: `status: 400` for a bare CR
 * in a header; 920160-1: `status: 400` for `Content-Length: NotDigits`; 920100-2: a method
 * written `"     GET"`).
 */
export function serverRejection(req: Pick<SampleRequest, 'method' | 'url' | 'httpVersion' | 'headers'>): string | undefined {
  if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(req.method)) return `the method ${JSON.stringify(req.method)} is not an HTTP token (RFC 9110 §9.1): a server answers 400`;
  if (!/^HTTP\/\d\.\d$/.test(req.httpVersion)) return `the request line's version ${JSON.stringify(req.httpVersion)} is not HTTP/x.y (RFC 9112): a server answers 400`;
  if (req.method === 'CONNECT' && !/^[^\s/?#]+:\d+$/.test(req.url)) return `CONNECT ${JSON.stringify(req.url)} is not host:port (RFC 9112 §3.2.3): a server answers 400`;
  if (!req.headers.some(([k]) => k.toLowerCase() === 'transfer-encoding')) {
    const lengths = [...new Set(req.headers.filter(([k]) => k.toLowerCase() === 'content-length').map(([, v]) => v.trim()))];
    if (lengths.length > 1 || (lengths.length === 1 && !/^\d+$/.test(lengths[0]))) return `the Content-Length ${lengths.map((l) => JSON.stringify(l)).join(', ')} is invalid (RFC 9112 §6.3: the framing is unrecoverable): a server answers 400`;
  }
  for (const [name, value] of req.headers) {
    if (/[\r\n]/.test(name) || /[\r\n]/.test(value)) return `the header ${JSON.stringify(name.replace(/[\r\n]/g, ' '))} holds a line break (RFC 9110 §5.5): a server answers 400`;
  }
  return undefined;
}

/**
 * Why the server waits for more of the request, or undefined: one valid Content-Length (and
 * no Transfer-Encoding) larger than the body sent (920340-2: `Content-Length: 50` and no body;
 * 920400-1: 10 MB declared, 410 bytes sent). The headers are complete, so the WAF's
 * request-header phase still runs; the body phase never does.
 */
export function incompleteBody(req: Pick<SampleRequest, 'headers' | 'body'>): string | undefined {
  if (req.headers.some(([k]) => k.toLowerCase() === 'transfer-encoding')) return undefined;
  const lengths = [...new Set(req.headers.filter(([k]) => k.toLowerCase() === 'content-length').map(([, v]) => v.trim()))];
  if (lengths.length !== 1 || !/^\d+$/.test(lengths[0])) return undefined;
  const sent = (req.body ?? '').length;
  const declared = Number(lengths[0]);
  return declared > sent ? `the body is shorter than its Content-Length (${sent} of ${declared} bytes): the server waits for the rest until the client gives up` : undefined;
}

/** The rule id an ftw log pattern names: `id "942100"`, `id:942100`, `"942100"` -> "942100". */
export function ftwRuleId(pattern: string): string | undefined {
  return /^\s*(?:id\s*[:\s]\s*)?"?(\d+)"?\s*$/.exec(pattern)?.[1];
}

/** A stage's `output` (both formats), or a problem. */
function ftwOutput(o: unknown): FtwOutput | string {
  if (!isRecord(o)) return {};
  const log = goFtwLog(o.log);
  if (log.problem !== undefined) return log.problem;
  const out: FtwOutput = { ...log.log };
  if (o.log_contains !== undefined && o.log_contains !== null) out.logContains = pyStr(o.log_contains);
  if (o.no_log_contains !== undefined && o.no_log_contains !== null) out.noLogContains = pyStr(o.no_log_contains);
  if (o.status !== undefined && o.status !== null) {
    const list = Array.isArray(o.status) ? o.status : [o.status];
    out.status = list.map((x) => Number(x)).filter((x) => Number.isInteger(x));
  }
  if (o.expect_error !== undefined) out.expectError = o.expect_error === true;
  return out;
}

/** A stage's `input` as the request the server receives (see the file comment). */
export function ftwInputRequest(input: Record<string, unknown>, format: FtwFormat = 'ftw'): { request?: SampleRequest; problem?: string } {
  const meta: Record<string, string> = {};
  if (typeof input.protocol === 'string' && input.protocol.toLowerCase() === 'https') meta['ssl'] = 'true';
  if (Number.isInteger(input.port) && (input.port as number) > 0 && (input.port as number) <= 65535) meta['cf.edge.server_port'] = String(input.port);

  if (input.raw_request !== undefined && input.raw_request !== null && input.encoded_request !== undefined && input.encoded_request !== null) {
    return { problem: 'raw_request and encoded_request are both given (ftw rejects that)' };
  }
  if (input.encoded_request !== undefined && input.encoded_request !== null) {
    const decoded = base64Decode(pyStr(input.encoded_request).replace(/\s+/g, ''), false);
    if (decoded === undefined) return { problem: 'encoded_request is not valid base64' };
    const r = parseRawRequest(decoded);
    return r.request ? { request: { ...r.request, meta } } : { problem: `encoded_request: ${r.problem}` };
  }
  if (input.raw_request !== undefined && input.raw_request !== null) {
    const r = parseRawRequest(utf8ToBinary(pyStr(input.raw_request)));
    return r.request ? { request: { ...r.request, meta } } : { problem: `raw_request: ${r.problem}` };
  }

  if (format === 'goFtw') {
    const r = goFtwInputRequest(input);
    return r.request ? { request: { ...r.request, meta } } : { problem: r.problem };
  }
  const method = input.method === undefined || input.method === null ? 'GET' : pyStr(input.method);
  const uri = input.uri === undefined || input.uri === null ? '/' : pyStr(input.uri);
  const version = input.version === undefined || input.version === null ? 'HTTP/1.1' : pyStr(input.version);
  const headers: [string, string][] = isRecord(input.headers) ? Object.entries(input.headers).map(([k, v]) => [k, pyStr(v)]) : [];
  const magic = input.stop_magic !== true && input.autocomplete_headers !== false;
  let data = Array.isArray(input.data) ? input.data.map(pyStr).join('\r\n') : input.data === undefined || input.data === null ? '' : pyStr(input.data);
  const find = (name: string): [string, string] | undefined => headers.find(([k]) => k.toLowerCase() === name);
  if (data !== '' && magic) {
    if (!find('content-type')) headers.push(['Content-Type', 'application/x-www-form-urlencoded']);
    if (find('content-type')?.[1] === 'application/x-www-form-urlencoded' && !/%[0-9A-Fa-f]{2}/.test(data)) data = ftwFormReencode(data);
    if (!find('content-length')) headers.push(['Content-Length', String(utf8ToBinary(data).length)]);
  }
  const body = messageBody(headers, utf8ToBinary(data));
  return {
    request: {
      method,
      url: uri,
      httpVersion: version,
      headers,
      ...(body !== '' ? { body } : {}),
      meta,
    },
  };
}

/** Python's `urlencode(parse_qsl(data))` for data without `%XX` escapes (unquote is then the identity). */
export function ftwFormReencode(data: string): string {
  const pairs: [string, string][] = [];
  for (const piece of data.split('&')) {
    if (piece === '') continue;
    const eq = piece.indexOf('=');
    if (eq < 0) continue; // no '=': dropped (keep_blank_values=False)
    const value = piece.slice(eq + 1);
    if (value === '') continue; // empty value: dropped
    pairs.push([piece.slice(0, eq).replace(/\+/g, ' '), value.replace(/\+/g, ' ')]);
  }
  if (pairs.length === 0) return data;
  return pairs.map(([n, v]) => `${formQuote(utf8ToBinary(n))}=${formQuote(utf8ToBinary(v))}`).join('&');
}

/**
 * Parses a raw HTTP/1.x request (a binary string: the exact bytes). Accepts CRLF or bare LF
 * line ends and empty lines before the request line; the request line is
 * `METHOD SP target [SP version]` (no version reads as HTTP/0.9); header lines are
 * `Name: value`, with obsolete folding joined; the body follows the empty line and is
 * what the server reads (chunked decoded, else cut to Content-Length, else none). The
 * request line and headers must be UTF-8 (they become text); the body keeps its bytes.
 */
export function parseRawRequest(raw: string): { request?: SampleRequest; problem?: string } {
  let text = raw;
  while (text.startsWith('\r\n') || text.startsWith('\n')) text = text.slice(text.startsWith('\r\n') ? 2 : 1);
  const crlf = text.indexOf('\r\n\r\n');
  const lf = text.indexOf('\n\n');
  let headEnd = text.length;
  let bodyStart = text.length;
  if (crlf >= 0 && (lf < 0 || crlf < lf)) [headEnd, bodyStart] = [crlf, crlf + 4];
  else if (lf >= 0) [headEnd, bodyStart] = [lf, lf + 2];
  if (text.trim() === '') return { problem: 'empty request' };
  // Without an empty line the request is all head; a final line break only ends its last line.
  const headBytes = headEnd === text.length ? text.replace(/\r?\n$/, '') : text.slice(0, headEnd);
  const head = binaryToUtf8(headBytes);
  if (head === undefined) return { problem: 'the request line or a header is not valid UTF-8' };
  const lines = head.split(/\r?\n/);
  const m = /^(\S+) +(\S+)(?: +(\S+))? *$/.exec(lines[0]);
  if (!m) return { problem: `bad request line ${JSON.stringify(lines[0].slice(0, 80))} (expected METHOD target HTTP/x.y)` };
  const headers: [string, string][] = [];
  for (const line of lines.slice(1)) {
    if ((line.startsWith(' ') || line.startsWith('\t')) && headers.length > 0) {
      const last = headers[headers.length - 1];
      last[1] = `${last[1]} ${line.trim()}`.trim();
      continue;
    }
    const colon = line.indexOf(':');
    if (colon <= 0) return { problem: `bad header line ${JSON.stringify(line.slice(0, 80))} (expected Name: value)` };
    headers.push([line.slice(0, colon).trim(), line.slice(colon + 1).trim()]);
  }
  const body = messageBody(headers, text.slice(bodyStart));
  return {
    request: {
      method: m[1],
      url: m[2],
      httpVersion: m[3] ?? 'HTTP/0.9',
      headers,
      ...(body !== '' ? { body } : {}),
      meta: {},
    },
  };
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Python's `str()` of a YAML scalar, as ftw writes header values. */
function pyStr(v: unknown): string {
  if (typeof v === 'string') return v;
  if (v === true) return 'True';
  if (v === false) return 'False';
  if (v === null || v === undefined) return 'None';
  if (typeof v === 'number') return Number.isInteger(v) ? String(v) : Number.isFinite(v) ? pyFloat(v) : v > 0 ? 'inf' : v < 0 ? '-inf' : 'nan';
  if (typeof v === 'bigint') return String(v);
  if (v instanceof Date) {
    // PyYAML gives a date or a datetime; str() writes "2001-12-14" or "2001-12-14 21:59:43".
    const iso = v.toISOString();
    return iso.endsWith('T00:00:00.000Z') ? iso.slice(0, 10) : iso.slice(0, 19).replace('T', ' ');
  }
  return JSON.stringify(v) ?? String(v);
}

function pyFloat(v: number): string {
  const s = String(v);
  return /[.e]/.test(s) ? s : `${s}.0`;
}
