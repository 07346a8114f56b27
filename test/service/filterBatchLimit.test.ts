// The Filters API takes at most 1000 filters per create (POST) or bulk update (PUT): a
// larger body is refused before any item is decoded or any expression checked (1,900 4 KB
// expressions in one body held the service's main thread for ~2 s), and stores nothing.
// 1000 is allowed. (A firewall-rule create is bounded by the plan's rule quota instead:
// firewallRules.test.ts.)
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { demoZoneId } from '../../server/src/service/seed';
import { MAX_FILTERS_PER_REQUEST } from '../../server/src/service/legacyStore';
import { startService, type TestService, refusedUnchanged } from './harness';

let svc: TestService;
before(async () => {
  svc = await startService();
});
after(() => svc.close());

const ENT = demoZoneId('enterprise.example.com');
const filters = `/zones/${ENT}/filters`;
const MISSING = 'f'.repeat(32);

describe('filters per request', () => {
  it('is 1000', () => assert.equal(MAX_FILTERS_PER_REQUEST, 1000));

  it('a create of 1001 filters is refused before any is checked (the last one is invalid), and stores nothing', async () => {
    const body = [...Array.from({ length: 1000 }, (_, i) => ({ expression: `http.host eq "h${i}.example"` })), { expression: 'http.host eq' }];
    await refusedUnchanged(svc, 'POST', filters, { body }, 400, { code: 20021, message: 'a request may carry at most 1000 filters, got 1001: send them in several requests' });
  });

  it('a bulk update of 1001 filters is refused the same way, before the ids are looked up', async () => {
    const body = Array.from({ length: 1001 }, (_, i) => ({ id: MISSING, expression: `http.host eq "u${i}.example"` }));
    await refusedUnchanged(svc, 'PUT', filters, { body }, 400, { code: 20021, message: 'a request may carry at most 1000 filters, got 1001: send them in several requests' });
  });

  it('1000 filters in one create are fine', async () => {
    const body = Array.from({ length: 1000 }, (_, i) => ({ expression: `http.host eq "ok${i}.example"` }));
    const r = await svc.call('POST', filters, { body });
    assert.equal(r.status, 200, JSON.stringify(r.body).slice(0, 300));
    assert.equal(r.body.result.length, 1000);
  });
});
