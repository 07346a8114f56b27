// Rulesets API policies over real HTTP: managed-ruleset entitlements by plan (rules-api
// §2.2: deploying a managed ruleset the zone is not entitled to fails the whole write),
// the per-plan quota of a zone's custom rules (the legacy firewall rules' figures), and
// the core's warnings in `messages` of successful writes.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { OWASP_RULESET_ID, VENDOR_RULESET_ID } from '../../server/src/rulesets/managedIds';
import { DEMO_ACCOUNT, demoZoneId } from '../../server/src/service/seed';
import { startService, type TestService } from './harness';

let svc: TestService;
/** A Free zone of the demo account, added for these tests (the seed has only paid plans). */
const FREE = 'f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0';
const PRO = demoZoneId('pro.example.com');
const BIZ = demoZoneId('business.example.com');
const MIGRATED = demoZoneId('migrated.example.com');
const CUSTOM = 'http_request_firewall_custom';
const MANAGED = 'http_request_firewall_managed';

before(async () => {
  svc = await startService();
  svc.store.run('INSERT INTO zones (id, account_id, name, plan, status, created_on) VALUES (?, ?, ?, ?, ?, ?)', [FREE, DEMO_ACCOUNT.id, 'free.example.com', 'free', 'active', '2026-01-01T00:00:00.000000Z']);
});
after(() => svc.close());

const entry = (zone: string, phase = CUSTOM) => `/zones/${zone}/rulesets/phases/${phase}/entrypoint`;
const rules = (n: number, from = 0) => Array.from({ length: n }, (_, i) => ({ action: 'block', expression: `http.host eq "r${from + i}.example.com"` }));

function storeSnapshot(): string {
  return JSON.stringify([svc.store.all('SELECT * FROM rulesets ORDER BY id'), svc.store.all('SELECT * FROM ruleset_versions ORDER BY ruleset_id, version'), svc.store.all('SELECT * FROM ruleset_rules ORDER BY ruleset_id, rule_id, from_version')]);
}

async function refused(method: string, path: string, body: unknown, status: number, errors: readonly { code: number; message: string; source?: { pointer: string } }[]): Promise<void> {
  const before = storeSnapshot();
  const r = await svc.call(method, path, { body });
  assert.equal(r.status, status, JSON.stringify(r.body));
  assert.deepEqual(r.body, { result: null, success: false, errors, messages: [] });
  assert.equal(storeSnapshot(), before, 'the store changed');
}

const vendorRule = { action: 'execute', action_parameters: { id: VENDOR_RULESET_ID }, expression: 'true' };
const owaspRule = { action: 'execute', action_parameters: { id: OWASP_RULESET_ID }, expression: 'true' };

describe('managed ruleset entitlements', () => {
  it('a Free zone cannot deploy the Cloudflare Managed Ruleset nor the OWASP Core Ruleset: the whole write fails, 10208 at the id', async () => {
    await refused('PUT', entry(FREE, MANAGED), { rules: [vendorRule, owaspRule] }, 400, [
      {
        code: 10208,
        message: `'${VENDOR_RULESET_ID}' is not a valid value for id because Cloudflare Managed Ruleset (${VENDOR_RULESET_ID}) requires the Pro plan or above; this zone is on the Free plan`,
        source: { pointer: '/rules/0/action_parameters/id' },
      },
      {
        code: 10208,
        message: `'${OWASP_RULESET_ID}' is not a valid value for id because Cloudflare OWASP Core Ruleset (${OWASP_RULESET_ID}) requires the Pro plan or above; this zone is on the Free plan`,
        source: { pointer: '/rules/1/action_parameters/id' },
      },
    ]);
    // dry run: the same answer
    await refused('PUT', `${entry(FREE, MANAGED)}?dry_run=true`, { rules: [{ ...owaspRule, enabled: false }] }, 400, [
      {
        code: 10208,
        message: `'${OWASP_RULESET_ID}' is not a valid value for id because Cloudflare OWASP Core Ruleset (${OWASP_RULESET_ID}) requires the Pro plan or above; this zone is on the Free plan`,
        source: { pointer: '/rules/0/action_parameters/id' },
      },
    ]);
    const missing = await svc.call('GET', entry(FREE, MANAGED));
    assert.equal(missing.status, 404);
  });

  it('also through POST …/rulesets (kind zone) and POST …/rules', async () => {
    await refused('POST', `/zones/${FREE}/rulesets`, { name: 'default', kind: 'zone', phase: MANAGED, rules: [vendorRule] }, 400, [
      {
        code: 10208,
        message: `'${VENDOR_RULESET_ID}' is not a valid value for id because Cloudflare Managed Ruleset (${VENDOR_RULESET_ID}) requires the Pro plan or above; this zone is on the Free plan`,
        source: { pointer: '/rules/0/action_parameters/id' },
      },
    ]);
    const created = await svc.call('PUT', entry(FREE, MANAGED), { body: { rules: [] } });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    await refused('POST', `/zones/${FREE}/rulesets/${created.body.result.id}/rules`, owaspRule, 400, [
      {
        code: 10208,
        message: `'${OWASP_RULESET_ID}' is not a valid value for id because Cloudflare OWASP Core Ruleset (${OWASP_RULESET_ID}) requires the Pro plan or above; this zone is on the Free plan`,
        source: { pointer: '/action_parameters/id' },
      },
    ]);
  });

  it('Pro and up may deploy both', async () => {
    svc.store.run('UPDATE zones SET plan = ? WHERE id = ?', ['pro', MIGRATED]);
    try {
      const r = await svc.call('PUT', `${entry(MIGRATED, MANAGED)}?dry_run=true`, { body: { rules: [vendorRule, owaspRule] } });
      assert.deepEqual([r.status, r.body.result, r.body.errors], [200, null, []]);
    } finally {
      svc.store.run('UPDATE zones SET plan = ? WHERE id = ?', ['business', MIGRATED]);
    }
  });
});

describe('custom rules quota per plan', () => {
  it('Free: 5 rules; a PUT with 6 is refused with 10207 giving the quota, the plan and the count', async () => {
    await refused('PUT', entry(FREE), { rules: rules(6) }, 400, [
      { code: 10207, message: "exceeded the maximum number of custom rules for the Free plan (5): the zone's http_request_firewall_custom entry point would have 6 rules (it has 0)", source: { pointer: '/rules' } },
    ]);
    const ok = await svc.call('PUT', entry(FREE), { body: { rules: rules(5) } });
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    assert.equal(ok.body.result.rules.length, 5);
  });

  it('Free: POST of a sixth rule is refused (position or not), dry run too', async () => {
    const ep = (await svc.call('GET', entry(FREE))).body.result;
    const error = { code: 10207, message: "exceeded the maximum number of custom rules for the Free plan (5): the zone's http_request_firewall_custom entry point would have 6 rules (it has 5)" };
    await refused('POST', `/zones/${FREE}/rulesets/${ep.id}/rules`, rules(1, 5)[0], 400, [error]);
    await refused('POST', `/zones/${FREE}/rulesets/${ep.id}/rules?dry_run=true`, { ...rules(1, 5)[0], position: { index: 1 } }, 400, [error]);
    // editing one of the five is fine
    const edited = await svc.call('PATCH', `/zones/${FREE}/rulesets/${ep.id}/rules/${ep.rules[0].id}`, { body: { action: 'managed_challenge', expression: 'http.host eq "x.example.com"' } });
    assert.equal(edited.status, 200, JSON.stringify(edited.body));
  });

  it('Pro: 20; PUT with 21 refused, 20 accepted, a 21st POST refused', async () => {
    await refused('PUT', entry(PRO), { rules: rules(21) }, 400, [
      { code: 10207, message: "exceeded the maximum number of custom rules for the Pro plan (20): the zone's http_request_firewall_custom entry point would have 21 rules (it has 0)", source: { pointer: '/rules' } },
    ]);
    const ok = await svc.call('PUT', entry(PRO), { body: { rules: rules(20) } });
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    await refused('POST', `/zones/${PRO}/rulesets/${ok.body.result.id}/rules`, rules(1, 20)[0], 400, [
      { code: 10207, message: "exceeded the maximum number of custom rules for the Pro plan (20): the zone's http_request_firewall_custom entry point would have 21 rules (it has 20)" },
    ]);
  });

  it('Business: 100 (101 refused); POST …/rulesets creating the entry point is counted too', async () => {
    await refused('POST', `/zones/${BIZ}/rulesets`, { name: 'default', kind: 'zone', phase: CUSTOM, rules: rules(101) }, 400, [
      { code: 10207, message: "exceeded the maximum number of custom rules for the Business plan (100): the zone's http_request_firewall_custom entry point would have 101 rules (it has 0)", source: { pointer: '/rules' } },
    ]);
    const ok = await svc.call('PUT', `${entry(BIZ)}?dry_run=true`, { body: { rules: rules(100) } });
    assert.deepEqual([ok.status, ok.body.result], [200, null]);
  });

  it('a zone over quota after a downgrade can still shrink and edit, not grow', async () => {
    svc.store.run('UPDATE zones SET plan = ? WHERE id = ?', ['free', PRO]);
    try {
      const ep = (await svc.call('GET', entry(PRO))).body.result;
      assert.equal(ep.rules.length, 20);
      const edited = await svc.call('PATCH', `/zones/${PRO}/rulesets/${ep.id}/rules/${ep.rules[0].id}`, { body: { action: 'block', expression: 'http.host eq "y.example.com"' } });
      assert.equal(edited.status, 200, JSON.stringify(edited.body));
      await refused('POST', `/zones/${PRO}/rulesets/${ep.id}/rules`, rules(1, 30)[0], 400, [
        { code: 10207, message: "exceeded the maximum number of custom rules for the Free plan (5): the zone's http_request_firewall_custom entry point would have 21 rules (it has 20)" },
      ]);
      const shrunk = await svc.call('PUT', entry(PRO), { body: { rules: rules(10) } });
      assert.equal(shrunk.status, 200, JSON.stringify(shrunk.body));
      await refused('PUT', entry(PRO), { rules: rules(11) }, 400, [
        { code: 10207, message: "exceeded the maximum number of custom rules for the Free plan (5): the zone's http_request_firewall_custom entry point would have 11 rules (it has 10)", source: { pointer: '/rules' } },
      ]);
    } finally {
      svc.store.run('UPDATE zones SET plan = ? WHERE id = ?', ['pro', PRO]);
    }
  });

  it('other phases and custom rulesets of the account are not counted', async () => {
    const rs = await svc.call('POST', `/accounts/${DEMO_ACCOUNT.id}/rulesets`, { body: { name: 'many', kind: 'custom', phase: CUSTOM, rules: rules(30) } });
    assert.equal(rs.status, 200, JSON.stringify(rs.body));
    const rl = await svc.call('PUT', `${entry(FREE, 'http_request_transform')}?dry_run=true`, {
      body: { rules: Array.from({ length: 6 }, (_, i) => ({ action: 'rewrite', action_parameters: { uri: { path: { value: `/p${i}` } } }, expression: 'true' })) },
    });
    assert.deepEqual([rl.status, rl.body.errors], [200, []]);
  });
});

describe('warnings of the core in messages', () => {
  it('a PUT whose rules have warnings succeeds and lists them with code 20040 and pointers', async () => {
    const r = await svc.call('PUT', entry(BIZ), {
      body: {
        rules: [
          { action: 'block', expression: 'ip.geoip.country eq "T1"' },
          { action: 'log', expression: 'http.request.method eq "get" or http.request.uri.path eq "api"' },
        ],
      },
    });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.success, true);
    assert.equal(r.body.result.rules.length, 2);
    assert.deepEqual(r.body.messages, [
      {
        code: 20040,
        message:
          `'ip.geoip.country eq "T1"' is accepted for expression, with a warning: Filter warning (1:1):\n` +
          'ip.geoip.country eq "T1"\n' +
          '^^^^^^^^^^^^^^^^ `ip.geoip.country` is deprecated; use `ip.src.country`\n' +
          'Replace it with `ip.src.country` (same value).',
        source: { pointer: '/rules/0/expression' },
      },
      { code: 20040, message: 'the log action in custom rules needs an Enterprise plan', source: { pointer: '/rules/1/action' } },
      {
        code: 20040,
        message:
          `'http.request.method eq "get" or http.request.uri.path eq "api"' is accepted for expression, with a warning: Filter warning (1:24):\n` +
          'http.request.method eq "get" or http.request.uri.path eq "api"\n' +
          '                       ^^^^^ "get" can never match: methods are upper case\n' +
          'Write "GET".',
        source: { pointer: '/rules/1/expression' },
      },
      {
        code: 20040,
        message:
          `'http.request.method eq "get" or http.request.uri.path eq "api"' is accepted for expression, with a warning: Filter warning (1:58):\n` +
          'http.request.method eq "get" or http.request.uri.path eq "api"\n' +
          '                                                         ^^^^^ "api" can never match: `http.request.uri.path` always starts with "/"\n' +
          'Write "/api".',
        source: { pointer: '/rules/1/expression' },
      },
    ]);
    // the write happened
    const got = await svc.call('GET', entry(BIZ));
    assert.deepEqual(got.body.result.rules.map((x: { expression: string }) => x.expression), ['ip.geoip.country eq "T1"', 'http.request.method eq "get" or http.request.uri.path eq "api"']);
    assert.deepEqual(got.body.messages, []);
  });

  it('POST and PATCH of a rule report only that rule\'s warnings, pointers relative to the body; a dry run reports them too', async () => {
    const ep = (await svc.call('GET', entry(BIZ))).body.result;
    const warning = {
      code: 20040,
      message:
        `'http.request.headers["X-Api"][0] eq "1"' is accepted for expression, with a warning: Filter warning (1:22):\n` +
        'http.request.headers["X-Api"][0] eq "1"\n' +
        '                     ^^^^^^^ "X-Api" can never match: header names in `http.request.headers` are lower case\n' +
        'Write "x-api".',
      source: { pointer: '/expression' },
    };
    const body = { action: 'block', expression: 'http.request.headers["X-Api"][0] eq "1"' };
    const dry = await svc.call('POST', `/zones/${BIZ}/rulesets/${ep.id}/rules?dry_run=true`, { body });
    assert.deepEqual([dry.status, dry.body.result, dry.body.messages], [200, null, [warning]]);
    const added = await svc.call('POST', `/zones/${BIZ}/rulesets/${ep.id}/rules`, { body });
    assert.deepEqual([added.status, added.body.result.rules.length, added.body.messages], [200, 3, [warning]]);
    const edited = await svc.call('PATCH', `/zones/${BIZ}/rulesets/${ep.id}/rules/${ep.rules[0].id}`, { body });
    assert.deepEqual([edited.status, edited.body.messages], [200, [warning]]);
    const clean = await svc.call('PATCH', `/zones/${BIZ}/rulesets/${ep.id}/rules/${ep.rules[0].id}`, { body: { action: 'block', expression: 'ip.src.country eq "T1"' } });
    assert.deepEqual([clean.status, clean.body.messages], [200, []]);
  });

  it('with an error, only the error: warnings never come alone on a refused write', async () => {
    await refused('PUT', entry(BIZ), { rules: [{ action: 'block', expression: 'ip.geoip.country eq "T1"' }, { action: 'allow', expression: 'true' }] }, 400, [
      { code: 20021, message: 'unknown variant for action: allow', source: { pointer: '/rules/1/action' } },
    ]);
  });
});
