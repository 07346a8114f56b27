// A body its processor cannot read whole still reaches the rules: its raw bytes become
// REQUEST_BODY (so a malformed or over-deep JSON body is no way around the OWASP rules), a
// JSON body's argument names are bounded (a deep body with a wide array at the bottom made
// names of quadratic size), and a multipart line that only looks like a delimiter is content.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isDeepStrictEqual } from 'node:util';
import { JSON_NAMES_LIMIT } from '../../../server/src/requests/crsFields';
import { requestFields } from '../../../server/src/requests/fields';
import type { SampleRequest } from '../../../server/src/requests/types';

/** A collection as a plain object (the engine's maps have no prototype). */
const plain = (m: unknown) => ({ ...(m as object) });

/** The first of `names` whose lengths add up to JSON_NAMES_LIMIT at most. */
function fitting(names: readonly string[]): string[] {
  let total = 0;
  const out: string[] = [];
  for (const n of names) {
    total += n.length;
    if (total > JSON_NAMES_LIMIT) break;
    out.push(n);
  }
  return out;
}

/** The names are `expected` (compared without printing them: each is tens of kilobytes). */
function sameNames(actual: unknown, expected: readonly string[]): void {
  const got = actual as string[];
  assert.equal(got.length, expected.length);
  assert.ok(isDeepStrictEqual(got, expected), 'the names differ');
}

const post = (contentType: string, body: string): SampleRequest => ({
  method: 'POST',
  url: 'https://example.com/api',
  httpVersion: 'HTTP/1.1',
  headers: [['Content-Type', contentType]],
  body,
  meta: {},
});

test('a malformed JSON body: a body error, no arguments, and its raw bytes in REQUEST_BODY', () => {
  const body = '{"q": "<script>alert(1)</script>"';
  const f = requestFields(post('application/json', body)).fields;
  assert.equal(f['crs.reqbody_processor'], 'JSON');
  assert.equal(f['crs.reqbody_error'], true);
  assert.deepEqual(plain(f['crs.args']), {});
  assert.equal(f['crs.request_body'], body);
});

test('a well-formed JSON body: its leaves are arguments and REQUEST_BODY stays empty, as ModSecurity gives it', () => {
  const f = requestFields(post('application/json', '{"q": ["a", {"b": 1}]}')).fields;
  assert.equal(f['crs.reqbody_error'], false);
  assert.deepEqual(plain(f['crs.args']), { 'json.q.0': ['a'], 'json.q.1.b': ['1'] });
  assert.equal(f['crs.request_body'], '');
});

test('a deep JSON body with a wide array at the bottom: its leaves stop at the names limit, a body error, the raw body kept', () => {
  // 9,000 levels and 40,000 leaves in 98 KB: names of 18 KB each, 720 MB in all without the limit.
  const body = `${'['.repeat(9_000)}${'1,'.repeat(39_999)}1${']'.repeat(9_000)}`;
  // (Without the limit this test runs for minutes and grows past 300 MB.)
  const f = requestFields(post('application/json', body), { bodyLimit: 128 * 1024 }).fields;
  assert.equal(f['crs.reqbody_error'], true);
  // The innermost array is json.0.….0 (8,999 levels below the root); its leaves are that plus their index.
  const names = Array.from({ length: 40_000 }, (_, i) => `json${'.0'.repeat(8_999)}.${i}`);
  sameNames(f['crs.args_names'], fitting(names));
  assert.equal(f['crs.request_body'], body);
});

test('a long key above many leaves passes the names limit: the leaves before it are kept', () => {
  const key = 'k'.repeat(60_000);
  const body = `{"first": "kept", "${key}": [${Array.from({ length: 1_000 }, () => '1').join(',')}]}`;
  assert.ok(1_000 * key.length > JSON_NAMES_LIMIT, 'the fixture is over the limit');
  const f = requestFields(post('application/json', body), { bodyLimit: 128 * 1024 }).fields;
  assert.equal(f['crs.reqbody_error'], true);
  const names = ['json.first', ...Array.from({ length: 1_000 }, (_, i) => `json.${key}.${i}`)];
  sameNames(f['crs.args_names'], fitting(names));
  assert.equal(f['crs.request_body'], body);
});

test('malformed XML: a body error, and its raw bytes in REQUEST_BODY', () => {
  const body = '<a><b>1 UNION SELECT 1</a>';
  const f = requestFields(post('text/xml', body)).fields;
  assert.deepEqual([f['crs.reqbody_processor'], f['crs.reqbody_error'], f['crs.request_body']], ['XML', true, body]);
});

test('a multipart line that only begins with the delimiter is content of its part, and a strict error', () => {
  const body = "--abc\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nhello\r\n--abc' UNION SELECT password FROM users--\r\nContent-Disposition: form-data; name=\"b\"\r\n\r\nx\r\n--abc--";
  const f = requestFields(post('multipart/form-data; boundary=abc', body)).fields;
  assert.deepEqual(plain(f['crs.args']), { a: ["hello\r\n--abc' UNION SELECT password FROM users--\r\nContent-Disposition: form-data; name=\"b\"\r\n\r\nx"] });
  assert.equal(f['crs.multipart_strict_error'], true);
  assert.equal(f['crs.reqbody_error'], false);
  assert.deepEqual(f['crs.multipart_part_headers'], ['Content-Disposition: form-data; name="a"']);
  assert.deepEqual(f['http.request.body.multipart.names'], [['a']]);
});

test('a JSON body that is not UTF-8: a body error, and its raw bytes in REQUEST_BODY', () => {
  const body = '{"a":"<script>alert(1)</script>\xff"}';
  const f = requestFields(post('application/json', body)).fields;
  assert.deepEqual([f['crs.reqbody_error'], plain(f['crs.args'])], [true, {}]);
  // REQUEST_BODY holds the exact bytes (not UTF-8: as a bytes value).
  assert.equal((f['crs.request_body'] as { hex: string }).hex, Buffer.from(body, 'latin1').toString('hex'));
});
