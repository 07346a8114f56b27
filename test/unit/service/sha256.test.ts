// Digests the store keeps (token hashes, rule body hashes) must not change with the way
// they are taken: a database written before must still match.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { sha256 } from '../../../server/src/service/sha256';

it('takes the SHA-256 of UTF-8 text in hex and base64url', () => {
  assert.equal(sha256('abc', 'hex'), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  assert.equal(sha256('règle', 'base64url'), 'xSeFSmZg_Y_gmavMNBX4st0eNxr5dnRd6TNgomfpsDc');
});
