// Where the challenge page sends the browser after it passes: only a path on the same host.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { safeReturn } from '../../../server/src/proxy/clearance';

describe('safeReturn', () => {
  it('keeps a path on the same host, with its query (a backslash there too) and fragment', () => {
    const kept = ['/', '/challenge?next=1', '/a/b#c', '/%2F%2Fevil.example', '/search?q=C:\\temp', '/a%20b', '/é'];
    assert.deepEqual(kept.map(safeReturn), kept);
  });

  it('sends anything that a browser could read as another host to /', () => {
    const leaving = ['//evil.example', '/\\evil.example', '/\t/evil.example/phish', '/\n/evil.example', '/ /evil.example', 'https://evil.example/', 'evil.example', '', null, undefined];
    assert.deepEqual(leaving.map(safeReturn), Array(leaving.length).fill('/'));
  });
});
