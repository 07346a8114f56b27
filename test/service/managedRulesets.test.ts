// Managed rulesets as the hosted API returns them (crs-and-managed-rules §4, rules-api
// §2.2/§2.5): `source` on every managed ruleset, the OWASP anomaly-score rule with its
// `score_threshold` and categories, execute rules stored with `version: "latest"` when
// written without a version, and the Free Managed Ruleset deployable on every plan.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { FREE_RULESET_ID, OWASP_ANOMALY_RULE_ID, OWASP_ANOMALY_RULE_REF, OWASP_RULESET_ID, VENDOR_RULESET_ID } from '../../server/src/rulesets/managedIds';
import { FREE_RULE_REFS } from '../../server/src/managed/free';
import { DEMO_ACCOUNT } from '../../server/src/service/seed';
import { startService, type TestService } from './harness';

let svc: TestService;
/** A Free zone of the demo account, added for these tests (the seed has only paid plans). */
const FREE_ZONE = 'f1f1f1f1f1f1f1f1f1f1f1f1f1f1f1f1';
const ACCOUNT = DEMO_ACCOUNT.id;
const MANAGED = 'http_request_firewall_managed';
const entry = (zone: string) => `/zones/${zone}/rulesets/phases/${MANAGED}/entrypoint`;

before(async () => {
  svc = await startService();
  svc.store.run('INSERT INTO zones (id, account_id, name, plan, status, created_on) VALUES (?, ?, ?, ?, ?, ?)', [FREE_ZONE, ACCOUNT, 'free.example.com', 'free', 'active', '2026-01-01T00:00:00.000000Z']);
});
after(() => svc.close());

describe('GET of a managed ruleset', () => {
  it('the OWASP ruleset: source firewall_managed, and the anomaly rule with score_threshold and categories', async () => {
    const r = await svc.call('GET', `/accounts/${ACCOUNT}/rulesets/${OWASP_RULESET_ID}`);
    assert.equal(r.status, 200);
    const rs = r.body.result;
    assert.deepEqual(Object.keys(rs), ['id', 'name', 'description', 'source', 'kind', 'version', 'last_updated', 'phase', 'rules']);
    assert.deepEqual([rs.id, rs.name, rs.source, rs.kind, rs.version, rs.phase], [OWASP_RULESET_ID, 'Cloudflare OWASP Core Ruleset', 'firewall_managed', 'managed', '1', MANAGED]);
    const anomaly = rs.rules[rs.rules.length - 1];
    assert.deepEqual(anomaly, {
      id: OWASP_ANOMALY_RULE_ID,
      version: '1',
      action: 'block',
      score_threshold: 40,
      categories: ['application-multi', 'language-multi', 'platform-multi', 'attack-generic'],
      description: '949110: Inbound Anomaly Score Exceeded',
      last_updated: '2024-07-15T10:00:00.000000Z',
      ref: OWASP_ANOMALY_RULE_REF,
      enabled: true,
    });
    // Only the anomaly rule has a threshold.
    assert.deepEqual(rs.rules.filter((x: { score_threshold?: number }) => x.score_threshold !== undefined).map((x: { id: string }) => x.id), [OWASP_ANOMALY_RULE_ID]);
  });

  it('lists: every managed ruleset has source firewall_managed, the others none', async () => {
    await svc.call('POST', `/accounts/${ACCOUNT}/rulesets`, { body: { name: 'Mine', kind: 'custom', phase: 'http_request_firewall_custom' } });
    const r = await svc.call('GET', `/accounts/${ACCOUNT}/rulesets`);
    const shown = r.body.result.map((x: { id: string; kind: string; source?: string }) => [x.kind, x.source]);
    assert.deepEqual(shown, [
      ['managed', 'firewall_managed'],
      ['managed', 'firewall_managed'],
      ['managed', 'firewall_managed'],
      ['custom', undefined],
    ]);
    const versions = await svc.call('GET', `/zones/${FREE_ZONE}/rulesets/${VENDOR_RULESET_ID}/versions`);
    assert.deepEqual(versions.body.result.map((v: { version: string; source: string }) => [v.version, v.source]), [['1', 'firewall_managed'], ['2', 'firewall_managed']]);
  });

  it('the Free Managed Ruleset: hosted id and name, a few vendor rules with their categories', async () => {
    const r = await svc.call('GET', `/zones/${FREE_ZONE}/rulesets/${FREE_RULESET_ID}`);
    assert.equal(r.status, 200);
    const rs = r.body.result;
    assert.deepEqual([rs.name, rs.source, rs.kind, rs.version, rs.phase], ['Cloudflare Free Managed Ruleset', 'firewall_managed', 'managed', '1', MANAGED]);
    assert.deepEqual(rs.rules.map((x: { ref: string }) => x.ref), FREE_RULE_REFS);
    assert.deepEqual(rs.rules[0].categories, ['java', 'log4j', 'rce', 'cve-2021-44228']);
    assert.deepEqual(rs.rules[0].description, 'Apache Log4j - Remote Code Execution - URI - CVE:CVE-2021-44228');
    for (const rule of rs.rules) assert.equal(rule.expression, undefined, rule.ref);
  });
});

describe('deploying', () => {
  it('an execute rule without version is stored and returned with version "latest"; a given version is kept', async () => {
    const put = await svc.call('PUT', entry(FREE_ZONE), {
      body: { rules: [{ action: 'execute', expression: 'true', action_parameters: { id: FREE_RULESET_ID, overrides: { action: 'log' } } }] },
    });
    assert.equal(put.status, 200, JSON.stringify(put.body));
    const expected = { id: FREE_RULESET_ID, version: 'latest', overrides: { action: 'log' } };
    assert.deepEqual(put.body.result.rules[0].action_parameters, expected);
    const got = await svc.call('GET', entry(FREE_ZONE));
    assert.deepEqual(got.body.result.rules[0].action_parameters, expected);
    // Key order as the API returns it: id, version, then the rest.
    assert.deepEqual(Object.keys(got.body.result.rules[0].action_parameters), ['id', 'version', 'overrides']);
    const pinned = await svc.call('PUT', entry(FREE_ZONE), { body: { rules: [{ action: 'execute', expression: 'true', action_parameters: { id: FREE_RULESET_ID, version: '1' } }] } });
    assert.deepEqual(pinned.body.result.rules[0].action_parameters, { id: FREE_RULESET_ID, version: '1' });
  });

  it('a Free zone may deploy the Free Managed Ruleset, not the other two: the whole write fails on those', async () => {
    const ok = await svc.call('PUT', `${entry(FREE_ZONE)}?dry_run=true`, { body: { rules: [{ action: 'execute', expression: 'true', action_parameters: { id: FREE_RULESET_ID } }] } });
    assert.deepEqual([ok.status, ok.body.result, ok.body.errors], [200, null, []]);
    const refused = await svc.call('PUT', entry(FREE_ZONE), {
      body: {
        rules: [
          { action: 'execute', expression: 'true', action_parameters: { id: FREE_RULESET_ID } },
          { action: 'execute', expression: 'true', action_parameters: { id: VENDOR_RULESET_ID } },
          { action: 'execute', expression: 'true', action_parameters: { id: OWASP_RULESET_ID } },
        ],
      },
    });
    assert.equal(refused.status, 400);
    assert.deepEqual(refused.body.errors, [
      {
        code: 10208,
        message: `'${VENDOR_RULESET_ID}' is not a valid value for id because Cloudflare Managed Ruleset (${VENDOR_RULESET_ID}) requires the Pro plan or above; this zone is on the Free plan`,
        source: { pointer: '/rules/1/action_parameters/id' },
      },
      {
        code: 10208,
        message: `'${OWASP_RULESET_ID}' is not a valid value for id because Cloudflare OWASP Core Ruleset (${OWASP_RULESET_ID}) requires the Pro plan or above; this zone is on the Free plan`,
        source: { pointer: '/rules/2/action_parameters/id' },
      },
    ]);
  });
});
