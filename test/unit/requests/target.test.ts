import { test } from 'node:test';
import assert from 'node:assert/strict';
import { splitPairs, splitTarget } from '../../../server/src/requests/target';

test('splitPairs', () => {
  assert.deepEqual(splitPairs(''), []);
  assert.deepEqual(splitPairs('a=1&b&&c==2&=v&'), [['a', '1'], ['b', ''], ['c', '=2'], ['', 'v']]);
});

test('splitTarget: scheme and authority of an absolute URL, path and query, no fragment', () => {
  assert.deepEqual(splitTarget('HTTPS://Example.com:8443/a/b?x=1#f'), { scheme: 'https', authority: 'Example.com:8443', path: '/a/b', query: 'x=1' });
  assert.deepEqual(splitTarget('https://example.com'), { scheme: 'https', authority: 'example.com', path: '/', query: undefined });
  assert.deepEqual(splitTarget('/a?'), { scheme: undefined, authority: undefined, path: '/a', query: '' });
  assert.deepEqual(splitTarget('*'), { scheme: undefined, authority: undefined, path: '*', query: undefined });
});
