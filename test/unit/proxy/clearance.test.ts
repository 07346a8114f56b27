// Where the challenge page sends the browser after it passes: only a path on the same host.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { safeReturn } from '../../../server/src/proxy/clearance';

describe('safeReturn', () => {
  it('keeps a path on the same host, with its query and fragment', () => {
    assert.deepEqual(['/', '/challenge?next=1', '/a/b#c', '/%2F%2Fevil.example'].map(safeReturn), ['/', '/challenge?next=1', '/a/b#c', '/%2F%2Fevil.example']);
  });

  it('sends anything that a browser could read as another host to /', () => {
    const leaving = ['//evil.example', '/\\evil.example', '/\t/evil.example/phish', '/\n/evil.example', '/ /evil.example', 'https://evil.example/', 'evil.example', '', null, undefined];
    assert.deepEqual(leaving.map(safeReturn), Array(leaving.length).fill('/'));
  });
});
