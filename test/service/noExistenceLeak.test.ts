// Another account's credentials on every route of the rules service: a zone or account
// they may not see is answered exactly as one that does not exist (status, body, the
// Connection and Ratelimit headers), so nothing tells them it exists, and nothing of it
// changes. Rulesets, versions, rules, entry points, filters, firewall rules, zone settings,
// the WAF migration, the previous WAF and the trace.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { addToken, DEMO_ACCOUNT, demoZoneId, policy } from '../../server/src/service/seed';
import { startService, type TestService } from './harness';

const ACCOUNT = DEMO_ACCOUNT.id;
const ENT = demoZoneId('enterprise.example.com');
const CUSTOM = 'http_request_firewall_custom';

describe('another account on every route', () => {
  let svc: TestService;
  const other = 'other-account-token-leak-0123456789abcdefghij';
  before(async () => {
    svc = await startService();
    svc.store.write(() => {
      svc.store.run("INSERT INTO accounts (id, name, created_on) VALUES (?, 'Other', '2024-01-01T00:00:00Z')", ['f'.repeat(32)]);
      addToken(svc.store, 'other account', other, [policy([`com.cloudflare.api.account.${'f'.repeat(32)}`], ['Zone', 'Zone WAF', 'Account WAF', 'Account Rulesets', 'Firewall Services'], 'Write')]);
    });
  });
  after(() => svc.close());

  it('answers a zone or account it may not see exactly as one that does not exist: rulesets, versions, rules, entry points, filters, firewall rules, settings, trace', async () => {
    const ep = await svc.call('PUT', `/zones/${ENT}/rulesets/phases/${CUSTOM}/entrypoint`, { body: { rules: [{ action: 'block', expression: 'true' }] } });
    const rs: string = ep.body.result.id;
    const rule: string = ep.body.result.rules[0].id;
    const made = await svc.call('POST', `/accounts/${ACCOUNT}/rulesets`, { body: { name: 'mine', kind: 'custom', phase: CUSTOM, rules: [{ action: 'block', expression: 'true' }] } });
    const cr: string = made.body.result.id;
    const crRule: string = made.body.result.rules[0].id;
    const f = await svc.call('POST', `/zones/${ENT}/filters`, { body: [{ expression: 'http.host eq "leak.example"' }] });
    const fid: string = f.body.result[0].id;
    const fr = await svc.call('POST', `/zones/${ENT}/firewall/rules`, { body: [{ action: 'block', filter: { id: fid } }] });
    const frid: string = fr.body.result[0].id;
    const write = { action: 'block', expression: 'true' };
    const routes: [string, string, unknown?][] = [
      ['GET', '/zones/Z'],
      ['GET', '/zones/Z/rulesets'],
      ['POST', '/zones/Z/rulesets', { name: 'x', kind: 'zone', phase: CUSTOM, rules: [] }],
      ['GET', `/zones/Z/rulesets/${rs}`],
      ['PUT', `/zones/Z/rulesets/${rs}`, { rules: [] }],
      ['DELETE', `/zones/Z/rulesets/${rs}?dry_run=true`],
      ['GET', `/zones/Z/rulesets/${rs}/versions?per_page=1`],
      ['GET', `/zones/Z/rulesets/${rs}/versions/1`],
      ['DELETE', `/zones/Z/rulesets/${rs}/versions/1`],
      ['POST', `/zones/Z/rulesets/${rs}/rules`, { ...write, position: { before: rule } }],
      ['PATCH', `/zones/Z/rulesets/${rs}/rules/${rule}`, write],
      ['DELETE', `/zones/Z/rulesets/${rs}/rules/${rule}`],
      ['GET', `/zones/Z/rulesets/phases/${CUSTOM}/entrypoint`],
      ['PUT', `/zones/Z/rulesets/phases/${CUSTOM}/entrypoint`, { rules: [] }],
      ['GET', `/zones/Z/rulesets/phases/${CUSTOM}/entrypoint/versions`],
      ['GET', `/zones/Z/rulesets/phases/${CUSTOM}/entrypoint/versions/1`],
      ['GET', '/zones/Z/rulesets/phases/not_a_phase/entrypoint'],
      ['GET', '/zones/Z/filters'],
      ['POST', '/zones/Z/filters', [{ expression: 'true' }]],
      ['PUT', '/zones/Z/filters', [{ id: fid, expression: 'true' }]],
      ['DELETE', `/zones/Z/filters?id=${fid}`],
      ['GET', `/zones/Z/filters/${fid}`],
      ['PUT', `/zones/Z/filters/${fid}`, { expression: 'true' }],
      ['DELETE', `/zones/Z/filters/${fid}`],
      ['GET', '/zones/Z/firewall/rules'],
      ['POST', '/zones/Z/firewall/rules', [{ action: 'block', filter: { id: fid } }]],
      ['PUT', '/zones/Z/firewall/rules', [{ id: frid, action: 'block', filter: { id: fid } }]],
      ['PATCH', '/zones/Z/firewall/rules', [{ id: frid, priority: 1 }]],
      ['DELETE', `/zones/Z/firewall/rules?id=${frid}`],
      ['GET', `/zones/Z/firewall/rules/${frid}`],
      ['PUT', `/zones/Z/firewall/rules/${frid}`, { id: frid, action: 'block', filter: { id: fid } }],
      ['PATCH', `/zones/Z/firewall/rules/${frid}`, { priority: 1 }],
      ['DELETE', `/zones/Z/firewall/rules/${frid}`],
      ['GET', '/zones/Z/waf_migration/status'],
      ['GET', '/zones/Z/settings/request_body_inspection_limit'],
      ['PATCH', '/zones/Z/settings/request_body_inspection_limit', { value: 1 }],
      ['GET', '/zones/Z/firewall/waf/packages'],
      ['GET', '/accounts/A'],
      ['GET', '/accounts/A/rulesets'],
      ['GET', `/accounts/A/rulesets/${cr}`],
      ['GET', `/accounts/A/rulesets/${cr}/versions`],
      ['GET', `/accounts/A/rulesets/${cr}/versions/1/by_tag/x`],
      ['PATCH', `/accounts/A/rulesets/${cr}/rules/${crRule}`, write],
      ['DELETE', `/accounts/A/rulesets/${cr}/versions/1`],
      ['PUT', `/accounts/A/rulesets/phases/${CUSTOM}/entrypoint`, { rules: [] }],
      ['POST', '/accounts/A/request-tracer/trace', { url: 'https://enterprise.example.com/', method: 'GET' }],
    ];
    const differ: string[] = [];
    for (const [method, p, body] of routes) {
      const ask = (zone: string, account: string) => svc.call(method, p.replace('/zones/Z', `/zones/${zone}`).replace('/accounts/A', `/accounts/${account}`), { token: other, ...(body !== undefined ? { body } : {}) });
      const hidden = await ask(ENT, ACCOUNT);
      const missing = await ask('e'.repeat(32), 'e'.repeat(32));
      const seen = (r: typeof hidden) => JSON.stringify([r.status, r.body, r.headers.get('connection'), r.headers.get('ratelimit')]);
      if (seen(hidden) !== seen(missing) || hidden.status !== 403) differ.push(`${method} ${p}: ${seen(hidden)} vs ${seen(missing)}`);
    }
    assert.deepEqual(differ, []);
    // And nothing of the zone changed.
    assert.equal((await svc.call('GET', `/zones/${ENT}/rulesets/${rs}`)).body.result.version, '1');
  });
});
