// Rate-limit counters are stored under a fixed-size digest of their characteristics, so a
// counter's memory does not grow with the values it counts (a 12 KB x-api-key, say), while
// distinct values still count apart and equal ones together.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { defaultCatalog } from '../../../server/src/managed/catalog';
import { evaluateLive, type LiveJob } from '../../../server/src/proxy/evaluateLive';
import { characteristicsKey, counterKey, RateLimiter } from '../../../server/src/proxy/rateLimit';
import { compileZone } from '../../../server/src/rulesets/engine';

const LIMIT = { characteristics: ['http.request.headers["x-api-key"]'], period: 10, requests_per_period: 2, mitigation_timeout: 0 };

/** A zone whose one rate limit counts every request by its x-api-key. */
const ZONE = { compiled: compileZone({ catalog: defaultCatalog, entryPoints: { http_ratelimit: { id: 'f'.repeat(32), phase: 'http_ratelimit', rules: [{ id: 'r1', expression: 'true', action: 'block', ratelimit: LIMIT }] } } }) };

function withApiKey(apiKey: string): LiveJob {
  return { zoneId: 'zone', bodyLimit: 0, cleared: false, live: { method: 'GET', target: '/', httpVersion: '1.1', rawHeaders: ['Host', 'shop.example', 'X-Api-Key', apiKey], body: '', bodySize: 0, edge: { 'ip.src': '198.51.100.7' } } };
}

/** The key evaluateLive.ts builds for one request with this x-api-key (before its digest). */
function keyFor(apiKey: string): string {
  return `zone/${'f'.repeat(32)}/r1\u0000${characteristicsKey(LIMIT.characteristics, { 'http.request.headers': { 'x-api-key': [apiKey] } })}`;
}

describe('rate-limit counter keys', () => {
  it('is the SHA-256 of the key, base64url: 43 characters whatever the key', () => {
    assert.equal(counterKey(''), '47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU');
    assert.deepEqual([1, 1_000, 16 * 1024, 1024 * 1024].map((n) => counterKey('k'.repeat(n)).length), [43, 43, 43, 43]);
  });

  it('counts two long header values apart, and the same value together, each under a 43-character digest', () => {
    const l = new RateLimiter(() => 0);
    const long = 'a'.repeat(12 * 1024);
    // The second differs from the first only in its last character: the whole value counts.
    const actions = [long, long, long.slice(0, -1) + 'b', long.slice(0, -1) + 'b', long, long.slice(0, -1) + 'b'].map((k) => evaluateLive(ZONE, withApiKey(k), l).decision.action);
    assert.deepEqual(actions, ['allow-through', 'allow-through', 'allow-through', 'allow-through', 'block', 'block']);
    assert.deepEqual(l.keys(), [keyFor(long), keyFor(long.slice(0, -1) + 'b')].map(counterKey));
    assert.deepEqual(l.keys().map((k) => k.length), [43, 43]);
  });

  it('keeps the LRU bound with digest keys', () => {
    const l = new RateLimiter(() => 0, 2);
    for (const k of ['a', 'b', 'a', 'c']) l.hit(counterKey(keyFor(k)), LIMIT);
    // 'b' was the least recently used when 'c' came.
    assert.deepEqual(l.keys(), [keyFor('a'), keyFor('c')].map(counterKey));
  });
});
