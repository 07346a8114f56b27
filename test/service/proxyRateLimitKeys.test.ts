// Rate limiting rules counted by characteristics that are not a field of the request as it
// is (reference traffic-events-terraform.md §2.2): before, such a characteristic read null for
// every request, so one client's requests rate-limited every other client.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { entrypoint, proxyTestFile, send, ZONE, ZONE_ID } from './proxyHarness';

/** The proxies' clock (rate limits): each test moves it past the last one's windows. */
let clock = 1_800_000_000_000;
const RATELIMIT = entrypoint(ZONE_ID, 'http_ratelimit');

const file = proxyTestFile({ proxy: { now: () => clock } });

async function rateLimitRules(rules: unknown[]): Promise<void> {
  clock += 24 * 3600 * 1000;
  await file.deploy(RATELIMIT, rules);
}

describe('rate limiting characteristics that are not a request field: each client or user has its own counter', () => {
  // `cf.unique_visitor_id` is "IP with NAT support" (reference §2.2): locally, the client's address.
  it('cf.unique_visitor_id counts each visitor apart', async () => {
    await rateLimitRules([
      { action: 'block', expression: 'http.request.uri.path eq "/uv"', description: 'two per visitor', ratelimit: { characteristics: ['cf.colo.id', 'cf.unique_visitor_id'], period: 60, requests_per_period: 2, mitigation_timeout: 60 } },
    ]);
    await file.withProxy({ trust: 'everyone' }, async (p) => {
      const from = async (ip: string) => (await send(p.url(), ZONE, '/uv', { headers: { 'cf-connecting-ip': ip } })).status;
      const statuses = [await from('198.51.100.1'), await from('198.51.100.1'), await from('198.51.100.1'), await from('198.51.100.2')];
      // 198.51.100.2's first request is its first: under the limit.
      assert.deepEqual(statuses, [200, 200, 429, 200]);
    });
  });

  // A counter per value of that JSON key (per user name here), as the engine's lookup_json_string reads it.
  it('lookup_json_string(http.request.body.raw, "user") counts each user apart', async () => {
    await rateLimitRules([
      { action: 'block', expression: 'http.request.uri.path eq "/login"', description: 'one login per user', ratelimit: { characteristics: ['cf.colo.id', 'lookup_json_string(http.request.body.raw, "user")'], period: 60, requests_per_period: 1, mitigation_timeout: 60 } },
    ]);
    await file.withProxy({}, async (p) => {
      const login = async (user: string) => (await send(p.url(), ZONE, '/login', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ user }) })).status;
      const statuses = [await login('alice'), await login('bob'), await login('alice')];
      assert.deepEqual(statuses, [200, 200, 429]);
    });
  });
});
