// The field values of a plain GET of `path?query` on `host` from 192.0.2.1, for tests that
// run a compiled zone on a request without the requests/ layer.
import assert from 'node:assert/strict';
import { prepareFields } from '../server/src/language/index';
import type { FieldValues } from '../server/src/language/evaluate';

export function getRequest(path: string, query = '', host = 'example.com'): FieldValues {
  const uri = query ? `${path}?${query}` : path;
  const { values, errors } = prepareFields({
    'http.request.uri.path': path,
    'http.request.uri.query': query,
    'raw.http.request.uri': uri,
    'raw.http.request.uri.path': path,
    'raw.http.request.uri.query': query,
    'http.request.full_uri': `https://${host}${uri}`,
    'http.user_agent': 'Mozilla/5.0',
    'http.request.method': 'GET',
    'ip.src': '192.0.2.1',
  });
  assert.deepEqual(errors, []);
  return values;
}
