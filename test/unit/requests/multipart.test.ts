import { test } from 'node:test';
import assert from 'node:assert/strict';
import { headerParams, parseMultipart } from '../../../server/src/requests/multipart';

test('headerParams', () => {
  assert.deepEqual(headerParams('form-data; name="a\\"b;c"; filename=x.txt ;Boundary = "q" ; empty='), [
    ['name', 'a"b;c'],
    ['filename', 'x.txt'],
    ['boundary', 'q'],
    ['empty', ''],
  ]);
  assert.deepEqual(headerParams('text/plain'), []);
});

test('parseMultipart: no delimiter, no parts; close delimiter ends parsing; LF only', () => {
  assert.deepEqual(parseMultipart('just text', 'b'), { parts: [], lookalikes: 0 });
  assert.deepEqual(parseMultipart('--b--\r\n', 'b'), { parts: [], lookalikes: 0 });
  const { parts } = parseMultipart('--b\nContent-Disposition: form-data; name=a\n\n1\n--b--\n--b\nContent-Disposition: form-data; name=z\n\n2', 'b');
  assert.deepEqual(parts.map((p) => [p.names, p.value]), [[['a'], '1']]);
});

test('parseMultipart: a line that only begins with the delimiter is content (RFC 2046), counted as a look-alike', () => {
  const body = "--abc\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nhello\r\n--abc' UNION SELECT password FROM users--\r\nContent-Disposition: form-data; name=\"b\"\r\n\r\nx\r\n--abc--";
  const { parts, lookalikes } = parseMultipart(body, 'abc');
  assert.deepEqual(
    parts.map((p) => [p.names, p.value]),
    [[['a'], "hello\r\n--abc' UNION SELECT password FROM users--\r\nContent-Disposition: form-data; name=\"b\"\r\n\r\nx"]],
  );
  assert.equal(lookalikes, 1);
  // Transport padding (spaces, tabs) after a delimiter is allowed; a longer boundary is not this one.
  const padded = parseMultipart('--abc \t\r\nContent-Disposition: form-data; name=c\r\n\r\n3\r\n--abcd\r\n--abc--', 'abc');
  assert.deepEqual([padded.parts.map((p) => [p.names, p.value]), padded.lookalikes], [[[['c'], '3\r\n--abcd']], 1]);
  // At the very start too, with a real delimiter after it.
  const first = parseMultipart('--abcX\r\nContent-Disposition: form-data; name=a\r\n\r\n1\r\n--abc\r\nContent-Disposition: form-data; name=b\r\n\r\n2\r\n--abc--', 'abc');
  assert.deepEqual([first.parts.map((p) => [p.names, p.value]), first.lookalikes], [[[['b'], '2']], 1]);
});

test('parseMultipart: each part keeps its own header lines, never a line of another part', () => {
  const body = '--abc\r\nContent-Disposition: form-data; name="a"\r\nX-Extra: 1\r\n\r\nfoo--abc\r\nContent-Disposition: form-data; name="b"\r\n--abc--';
  const { parts } = parseMultipart(body, 'abc');
  assert.deepEqual(
    parts.map((p) => p.headerLines),
    [['Content-Disposition: form-data; name="a"', 'X-Extra: 1']],
  );
});
