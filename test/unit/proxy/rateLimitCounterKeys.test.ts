// Rate-limit counters are stored under a fixed-size digest of their characteristics, so a
// counter's memory does not grow with the values it counts (a 12 KB x-api-key, say), while
// distinct values still count apart and equal ones together.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { characteristicsKey, counterKey, RateLimiter } from '../../../server/src/proxy/rateLimit';

const LIMIT = { characteristics: ['http.request.headers["x-api-key"]'], period: 10, requests_per_period: 2, mitigation_timeout: 0 };

/** The key evaluateLive.ts builds for one request with this x-api-key. */
function keyFor(apiKey: string): string {
  return `zone/ep/r1\u0000${characteristicsKey(LIMIT.characteristics, { 'http.request.headers': { 'x-api-key': [apiKey] } })}`;
}

describe('rate-limit counter keys', () => {
  it('is the SHA-256 of the key, base64url: 43 characters whatever the key', () => {
    assert.equal(counterKey(''), '47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU');
    assert.deepEqual([1, 1_000, 16 * 1024, 1024 * 1024].map((n) => counterKey('k'.repeat(n)).length), [43, 43, 43, 43]);
  });

  it('counts two long header values apart, and the same value together', () => {
    const l = new RateLimiter(() => 0);
    const a = keyFor('a'.repeat(12 * 1024));
    // Differs from a only in its last character: the whole value counts.
    const b = keyFor('a'.repeat(12 * 1024 - 1) + 'b');
    assert.deepEqual([l.hit(a, LIMIT), l.hit(a, LIMIT), l.hit(b, LIMIT), l.hit(b, LIMIT), l.hit(a, LIMIT), l.hit(b, LIMIT)], [false, false, false, false, true, true]);
    assert.equal(l.size, 2);
  });

  it('stores each counter under its digest, not the value', () => {
    const l = new RateLimiter(() => 0);
    const keys = [10, 12 * 1024, 16 * 1024].map((n) => keyFor('x'.repeat(n)));
    for (const k of keys) l.hit(k, LIMIT);
    assert.deepEqual(l.keys(), keys.map(counterKey));
    assert.deepEqual(l.keys().map((k) => k.length), [43, 43, 43]);
  });

  it('keeps the LRU bound with digest keys', () => {
    const l = new RateLimiter(() => 0, 2);
    for (const k of ['a', 'b', 'a', 'c']) l.hit(keyFor(k), LIMIT);
    // 'b' was the least recently used when 'c' came.
    assert.deepEqual(l.keys(), [keyFor('a'), keyFor('c')].map(counterKey));
  });
});
