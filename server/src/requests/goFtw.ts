/**
 * The go-ftw test format of CRS v4 (coreruleset/ftw-tests-schema), beside the ftw 1.x
 * format of CRS 3.3.x that requests/ftw.ts reads:
 * - A file has `rule_id`; tests have `test_id` (named `<rule_id>-<test_id>`, the position
 *   when absent); a stage is `{input, output}` (the 1.x `stage:` wrapper is still read).
 * - `output.log`: `expect_ids` (every one must match), `no_expect_ids` (none may),
 *   `match_regex` / `no_match_regex` (judged only when they name one rule, `id "N"`).
 * - The request go-ftw sends for a structured input: method `GET`, uri `/`, version
 *   `HTTP/1.1` by default; with `autocomplete_headers` (default true; `stop_magic: true`
 *   is its inverse) and non-empty `data`: a `Content-Type: application/x-www-form-urlencoded`
 *   when none is given, and that data re-encoded (each `&`-separated `name=value` with both
 *   sides escaped, a piece without `=` escaped whole) when the Content-Type is exactly that
 *   and the data holds no `%` or `+` (go-ftw's test: unescaping changes nothing); a
 *   `multipart/form-data;` body has every LF written as CRLF (with or without
 *   autocomplete); then `Connection: close` and, for data or a POST/PUT/PATCH/DELETE
 *   method, `Content-Length` when absent. Header names are matched exactly (go-ftw keeps
 *   them in a map by name) and written sorted by name.
 * - The file is YAML 1.2 (go-ftw's parser): `yes`/`on` are strings, `true` is written `true`.
 * Keys that change what go-ftw sends or checks and that Rulesmith cannot do here (a second
 * URI list, redirects, cookies kept between stages, a backend response, `response_contains`,
 * `isolated`) are refused by name: the stage is skipped saying which, never passed unchecked.
 */
import { utf8ToBinary } from '../language/bytes';
import { formQuote, messageBody } from './httpWire';
import type { SampleRequest } from './types';

/** The input and output keys each format defines and Rulesmith honours. */
const KNOWN = {
  ftw: {
    input: ['dest_addr', 'port', 'protocol', 'method', 'uri', 'version', 'headers', 'data', 'stop_magic', 'autocomplete_headers', 'raw_request', 'encoded_request'],
    output: ['status', 'log_contains', 'no_log_contains', 'expect_error'],
  },
  goFtw: {
    input: ['dest_addr', 'port', 'protocol', 'method', 'uri', 'version', 'headers', 'data', 'stop_magic', 'autocomplete_headers', 'raw_request', 'encoded_request'],
    output: ['status', 'log_contains', 'no_log_contains', 'expect_error', 'log', 'retry_once'],
  },
} as const;
const LOG_KEYS = ['expect_ids', 'no_expect_ids', 'match_regex', 'no_match_regex'];

export type FtwFormat = keyof typeof KNOWN;

/** A go-ftw file: a top-level `rule_id`, a test with `test_id` and no `test_title`, or an output with `log`. */
export function isGoFtw(data: Record<string, unknown>): boolean {
  if (data.rule_id !== undefined) return true;
  if (!Array.isArray(data.tests)) return false;
  return data.tests.some((t: unknown) => {
    if (!isRecord(t)) return false;
    if (t.test_id !== undefined && t.test_title === undefined) return true;
    return Array.isArray(t.stages) && t.stages.some((s: unknown) => isRecord(s) && isRecord(isRecord(s.stage) ? s.stage.output : s.output) && 'log' in ((isRecord(s.stage) ? s.stage.output : s.output) as object));
  });
}

/**
 * The keys of a stage that Rulesmith does not run, as `input.uris`, `output.isolated`, …
 * (empty when there are none).
 */
export function unsupportedKeys(format: FtwFormat, input: Record<string, unknown>, output: unknown): string[] {
  const out = Object.keys(input)
    .filter((k) => !(KNOWN[format].input as readonly string[]).includes(k))
    .map((k) => `input.${k}`);
  if (isRecord(output)) {
    for (const k of Object.keys(output)) if (!(KNOWN[format].output as readonly string[]).includes(k)) out.push(`output.${k}`);
    if (format === 'goFtw' && isRecord(output.log)) for (const k of Object.keys(output.log)) if (!LOG_KEYS.includes(k)) out.push(`output.log.${k}`);
  }
  return out;
}

export interface GoFtwLog {
  expectIds?: string[];
  noExpectIds?: string[];
  matchRegex?: string;
  noMatchRegex?: string;
}

/** `output.log`, or a problem naming the bad key. */
export function goFtwLog(log: unknown): { log?: GoFtwLog; problem?: string } {
  if (log === undefined || log === null) return { log: {} };
  if (!isRecord(log)) return { problem: 'output.log must be a mapping (expect_ids, no_expect_ids, match_regex, no_match_regex)' };
  const out: GoFtwLog = {};
  for (const [key, field] of [['expect_ids', 'expectIds'], ['no_expect_ids', 'noExpectIds']] as const) {
    const v = log[key];
    if (v === undefined || v === null) continue;
    const list = Array.isArray(v) ? v : [v];
    if (!list.every((x) => Number.isInteger(x) && (x as number) > 0)) return { problem: `output.log.${key} must be a list of rule ids (e.g. [942100]), not ${JSON.stringify(v)}` };
    out[field] = list.map(String);
  }
  for (const [key, field] of [['match_regex', 'matchRegex'], ['no_match_regex', 'noMatchRegex']] as const) {
    const v = log[key];
    if (v === undefined || v === null) continue;
    if (typeof v !== 'string') return { problem: `output.log.${key} must be a string (a regular expression)` };
    out[field] = v;
  }
  return { log: out };
}

/** A go-ftw structured input as the request go-ftw sends (see the file comment); raw inputs are the caller's. */
export function goFtwInputRequest(input: Record<string, unknown>): { request?: Omit<SampleRequest, 'meta'>; problem?: string } {
  const text = (key: string, fallback: string): string | undefined => (input[key] === undefined || input[key] === null ? fallback : typeof input[key] === 'string' ? (input[key] as string) : undefined);
  const method = text('method', 'GET');
  const uri = text('uri', '/');
  const version = text('version', 'HTTP/1.1');
  const data = text('data', '');
  for (const [k, v] of [['method', method], ['uri', uri], ['version', version], ['data', data]] as const) {
    if (v === undefined) return { problem: `input.${k} must be a string (go-ftw reads it as one), not ${JSON.stringify(input[k])}` };
  }
  if (input.headers !== undefined && input.headers !== null && !isRecord(input.headers)) return { problem: 'input.headers must be a mapping of header names to values' };
  const headers = new Map<string, string>(Object.entries(isRecord(input.headers) ? input.headers : {}).map(([k, v]) => [k, goStr(v)]));
  const auto = typeof input.autocomplete_headers === 'boolean' ? input.autocomplete_headers : typeof input.stop_magic === 'boolean' ? !input.stop_magic : true;
  let body = utf8ToBinary(data!);
  if (body !== '' && auto) {
    if (!headers.get('Content-Type')) headers.set('Content-Type', 'application/x-www-form-urlencoded');
    if (headers.get('Content-Type') === 'application/x-www-form-urlencoded' && !/[%+]/.test(body)) body = goFormEncode(body);
  }
  if ((headers.get('Content-Type') ?? '').startsWith('multipart/form-data;')) body = body.replace(/\n/g, '\r\n');
  if (auto) {
    if (!headers.get('Connection')) headers.set('Connection', 'close');
    if ((body !== '' || /^POST|PUT|PATCH|DELETE$/.test(method!)) && !headers.get('Content-Length')) headers.set('Content-Length', String(body.length));
  }
  const sorted: [string, string][] = [...headers].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const read = messageBody(sorted, body);
  return { request: { method: method!, url: uri!, httpVersion: version!, headers: sorted, ...(read !== '' ? { body: read } : {}) } };
}

/** go-ftw's form re-encoding of data without `%` or `+` (a binary string). */
export function goFormEncode(data: string): string {
  const pieces = data.split('&');
  if (pieces.length > 1 && pieces[pieces.length - 1] === '') pieces.pop();
  return pieces
    .map((p) => {
      const eq = p.indexOf('=');
      return eq < 0 ? formQuote(p) : `${formQuote(p.slice(0, eq))}=${formQuote(p.slice(eq + 1))}`;
    })
    .join('&');
}

/** A YAML scalar as Go reads it into a string. */
function goStr(v: unknown): string {
  if (typeof v === 'string') return v;
  if (v === null || v === undefined) return '';
  return String(v);
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
