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
  assert.deepEqual(parseMultipart('just text', 'b'), []);
  assert.deepEqual(parseMultipart('--b--\r\n', 'b'), []);
  const parts = parseMultipart('--b\nContent-Disposition: form-data; name=a\n\n1\n--b--\n--b\nContent-Disposition: form-data; name=z\n\n2', 'b');
  assert.deepEqual(parts.map((p) => [p.names, p.value]), [[['a'], '1']]);
});
