// The service keeps recently used rulesets in memory up to a budget of their JSON's bytes
// (a count would not bound a cache whose entries can be megabytes). Past it the least
// recently used go, and a ruleset that went reads back, and takes writes, as if it had
// stayed: its rows come from the store.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { rulesetCacheSize, setRulesetCacheBudget } from '../../server/src/service/rulesetStore';
import { DEMO_ACCOUNT } from '../../server/src/service/seed';
import { startService, type TestService } from './harness';

const BUDGET = 64 * 1024;
const CUSTOM = 'http_request_firewall_custom';
const rulesetsPath = `/accounts/${DEMO_ACCOUNT.id}/rulesets`;

/** 40 rules of ~330 bytes each: a ruleset of ~14 KB of JSON. */
function rules(set: number): Record<string, unknown>[] {
  return Array.from({ length: 40 }, (_, i) => ({
    action: 'block',
    expression: `(http.request.uri.path wildcard "/set-${set}/app-${i}/*" and ip.src in {192.0.2.0/24}) or http.host eq "h${i}.set-${set}.example.com"`,
    description: `Set ${set}, rule ${i}: ${'padding '.repeat(12)}`,
    ref: `s${set}-r${i}`,
  }));
}

let svc: TestService;
before(async () => {
  setRulesetCacheBudget(BUDGET);
  svc = await startService();
});
after(async () => {
  await svc.close();
  setRulesetCacheBudget();
});

describe('the ruleset cache is bounded by bytes', () => {
  it('holds at most its budget; rulesets it dropped read back exactly, and a PATCH of one changes only its rule', async () => {
    const made: any[] = [];
    for (let s = 0; s < 8; s++) {
      const r = await svc.call('POST', rulesetsPath, { body: { name: `set ${s}`, kind: 'custom', phase: CUSTOM, rules: rules(s) } });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      made.push(r.body.result);
    }
    const held = rulesetCacheSize(svc.store);
    // Eight rulesets of ~14 KB do not fit in 64 KB: the oldest went.
    assert.ok(held.bytes <= BUDGET, `${held.bytes} bytes held`);
    assert.ok(held.rulesets >= 3 && held.rulesets < 8, `${held.rulesets} rulesets held`);

    // Each read of a dropped ruleset brings it back from the store and drops another.
    for (const rs of made) assert.deepEqual((await svc.call('GET', `${rulesetsPath}/${rs.id}`)).body.result, rs);
    assert.ok(rulesetCacheSize(svc.store).rulesets < 8);

    // The first ruleset was dropped again by the reads after it: its PATCH reads it from the store.
    const first = made[0];
    const target = first.rules[7];
    const edited = await svc.call('PATCH', `${rulesetsPath}/${first.id}/rules/${target.id}`, { body: { action: 'log', expression: 'http.host eq "edited.example.com"' } });
    assert.equal(edited.status, 200, JSON.stringify(edited.body));
    const after = edited.body.result;
    assert.equal(after.version, '2');
    assert.deepEqual(
      after.rules.map((r: any) => (r.id === target.id ? [r.ref, r.action, r.expression, r.version] : r)),
      first.rules.map((r: any) => (r.id === target.id ? [target.ref, 'log', 'http.host eq "edited.example.com"', '2'] : r)),
    );
    assert.deepEqual((await svc.call('GET', `${rulesetsPath}/${first.id}/versions/1`)).body.result, first);
    assert.ok(rulesetCacheSize(svc.store).bytes <= BUDGET);
  });
});
