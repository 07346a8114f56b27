// The WAF migration over real HTTP: check/config/status on every demo zone, every state
// transition of the entry-point PUT with waf_migration (and every refusal), and what the
// previous-WAF APIs answer after a zone migrated.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CLOUDFLARE_PACKAGE_ID, PACKAGES } from '../../server/src/migration/index';
import { DEMO_MIGRATED_CREATED, DEMO_MIGRATED_ON } from '../../server/src/service/routes/previousWaf';
import { demoZoneId, seedId } from '../../server/src/service/seed';
import { startService, type TestService } from './harness';

let svc: TestService;
before(async () => {
  svc = await startService();
});
after(() => svc.close());

const PRO = demoZoneId('pro.example.com');
const BUSINESS = demoZoneId('business.example.com');
const ENTERPRISE = demoZoneId('enterprise.example.com');
const OVERRIDES = demoZoneId('overrides.example.com');
const FIREWALL = demoZoneId('firewall.example.com');
const MIGRATED = demoZoneId('migrated.example.com');

const VENDOR = 'efb7b8c949ac4650a09736fc376e9aee';
const OWASP = '4814384a9e5d4991b9815dcfc25d2f1f';
const ANOMALY = '6179ae15870a4bb7b2d480d4843b323c';
const OWASP_PACKAGE = 'a25a9a7e9c00afc1fb2e0245519d725b';
const OVERRIDE_1 = seedId('waf-override:overrides.example.com:1');
const OVERRIDE_2 = seedId('waf-override:overrides.example.com:2');

const groupId = (name: string) => PACKAGES.flatMap((p) => p.groups).find((g) => g.name === name)!.id;
const entryPoint = (zone: string, query = '') => `/zones/${zone}/rulesets/phases/http_request_firewall_managed/entrypoint${query}`;

/** The execute rule of the OWASP ruleset the config builds for a paranoia level, threshold and action. */
function owaspRule(pl: number, threshold: number, action: string) {
  const off = [2, 3, 4].filter((l) => l > pl).map((l) => ({ category: `paranoia-level-${l}`, enabled: false }));
  return {
    id: '',
    version: '',
    action: 'execute',
    expression: 'true',
    description: '',
    ref: '',
    enabled: true,
    action_parameters: { id: OWASP, overrides: { categories: off, rules: [{ id: ANOMALY, score_threshold: threshold, action }] } },
  };
}
const vendorRule = { id: '', version: '', action: 'execute', expression: 'true', description: '', ref: '', enabled: true, action_parameters: { id: VENDOR } };

async function status(zone: string) {
  const r = await svc.call('GET', `/zones/${zone}/waf_migration/status`);
  assert.equal(r.status, 200);
  return r.body.result;
}

async function config(zone: string) {
  const r = await svc.call('GET', `/zones/${zone}/waf_migration/config?phase_two=1`);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body.result;
}

/** The migration PUT with the body the config proposes (name + rules, as the guide sends it back). */
async function migrate(zone: string, value: string | undefined, rules?: unknown[]) {
  const body = rules ? { rules } : { name: 'default', rules: (await config(zone)).rules };
  const q = value === undefined ? '' : `?waf_migration=${value}&phase_two=1`;
  return svc.call('PUT', entryPoint(zone, q), { body });
}

function completedOn(zone: string): string {
  const row = svc.store.get<{ state: string }>('SELECT state FROM waf_migration WHERE zone_id = ?', [zone]);
  return JSON.parse(row!.state).completed_on;
}

const ALREADY = (when: string, asked: string) =>
  `This zone was already migrated to the new WAF Managed Rules on ${when}, and the migration is irreversible: ${asked} cannot be used again. Send the PUT without waf_migration to change the managed rules.`;

describe('waf_migration/check', () => {
  it('answers every demo zone exactly', async () => {
    const expected: Record<string, unknown> = {
      [PRO]: { compatible: true, migration_state: 'start' },
      [BUSINESS]: { compatible: true, migration_state: 'start' },
      [ENTERPRISE]: { compatible: true, migration_state: 'start' },
      [OVERRIDES]: {
        compatible: false,
        migration_state: 'start',
        reasons: [
          {
            code: 'uri-overrides',
            message: `This zone has 2 URI-based WAF overrides, which prevent the upgrade: ${OVERRIDE_1} (shop.overrides.example.com/*); ${OVERRIDE_2} (overrides.example.com/api/search*). Delete them (DELETE /zones/${OVERRIDES}/firewall/waf/overrides/{id}) and check again; recreate what they did as exceptions or overrides of the new managed rulesets after migrating.`,
          },
        ],
      },
      [FIREWALL]: {
        compatible: false,
        migration_state: 'start',
        reasons: [
          {
            code: 'too-many-firewall-rules',
            message: "The number of firewall rules to migrate (201) exceeds 200: this migration needs support (contact Cloudflare Support), or reduce the zone's firewall rules to 200 or fewer.",
          },
        ],
      },
      [MIGRATED]: {
        compatible: false,
        migration_state: 'complete',
        reasons: [
          {
            code: 'already-migrated',
            message: `This zone was already migrated to the new WAF Managed Rules on ${DEMO_MIGRATED_ON}; the migration is irreversible. Configure the managed rulesets in the http_request_firewall_managed entry point with the Rulesets API.`,
          },
        ],
      },
    };
    for (const [zone, result] of Object.entries(expected)) {
      const r = await svc.call('GET', `/zones/${zone}/waf_migration/check?phase_two=1`);
      assert.equal(r.status, 200);
      assert.deepEqual(r.body, { result, success: true, errors: [], messages: [] }, zone);
    }
  });

  it('works through the SDK as a raw call, without phase_two too; refuses a phase_two other than 1', async () => {
    const cf = svc.sdk();
    const env = (await cf.get(`/zones/${PRO}/waf_migration/check`, { query: { phase_two: 1 } })) as { result: unknown };
    assert.deepEqual(env.result, { compatible: true, migration_state: 'start' });
    assert.deepEqual((await svc.call('GET', `/zones/${PRO}/waf_migration/check`)).body.result, { compatible: true, migration_state: 'start' });
    const bad = await svc.call('GET', `/zones/${PRO}/waf_migration/check?phase_two=2`);
    assert.equal(bad.status, 400);
    assert.deepEqual(bad.body.errors, [
      {
        code: 20021,
        message: "'2' is not a valid value for phase_two: use phase_two=1 (Rulesmith always runs the second phase of the migration, which also converts firewall-rule bypasses and page rules)",
      },
    ]);
  });

  it('says support is needed for a firewall rule expression over 4 KB', async () => {
    const other = await startService();
    try {
      const zone = demoZoneId('business.example.com');
      const long = `http.request.uri.path in {${Array.from({ length: 500 }, (_, i) => `"/p/${String(i).padStart(4, '0')}"`).join(' ')}}`;
      const now = '2026-01-01T00:00:00.000000Z';
      other.store.write(() => {
        other.store.run('INSERT INTO filters (id, zone_id, expression, created_on, modified_on) VALUES (?, ?, ?, ?, ?)', ['f'.repeat(32), zone, long, now, now]);
        other.store.run(
          'INSERT INTO firewall_rules (id, zone_id, filter_id, action, description, seq, created_on, modified_on) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
          ['e'.repeat(32), zone, 'f'.repeat(32), 'block', 'Block old paths', 0, now, now],
        );
      });
      const bytes = Buffer.byteLength(long);
      assert.ok(bytes > 4096);
      const message = `firewall rule ${'e'.repeat(32)} ("Block old paths") has an expression of ${bytes} bytes: a firewall rule expression longer than 4 KB (4096 bytes) needs support to migrate (contact Cloudflare Support), or shorten it (an IP list instead of inline addresses, for example).`;
      const r = await other.call('GET', `/zones/${zone}/waf_migration/check?phase_two=1`);
      assert.deepEqual(r.body.result, { compatible: false, migration_state: 'start', reasons: [{ code: 'expression-too-long', message }] });
      const put = await other.call('PUT', entryPoint(zone, '?waf_migration=pending&phase_two=1'), { body: { rules: [] } });
      assert.equal(put.status, 400);
      assert.deepEqual(put.body.errors, [{ code: 20612, message: `Migration refused: ${message}` }]);
    } finally {
      await other.close();
    }
  });

  it('needs Zone WAF Read on the zone', async () => {
    assert.equal((await svc.call('GET', `/zones/${PRO}/waf_migration/check`, { token: svc.credentials.get('demo read-only') })).status, 200);
    const other = await svc.call('GET', `/zones/${PRO}/waf_migration/status`, { token: svc.credentials.get('business.example.com WAF') });
    assert.equal(other.status, 403);
    assert.deepEqual(other.body.errors, [{ code: 10000, message: 'Authentication error' }]);
  });
});

describe('waf_migration/config', () => {
  it('maps High to PL2/40 and Challenge to challenge; a WAF-off page rule becomes a skip exception (pro)', async () => {
    assert.deepEqual(await config(PRO), {
      name: 'default',
      rules: [
        {
          id: '',
          version: '',
          action: 'skip',
          expression: 'http.request.full_uri wildcard "http*://pro.example.com/wp-admin/*"',
          description: `Migrated from page rule ${seedId('page-rule:pro:wp-admin')} (Web Application Firewall: Off: pro.example.com/wp-admin/*)`,
          ref: '',
          enabled: true,
          action_parameters: { ruleset: 'current' },
        },
        vendorRule,
        owaspRule(2, 40, 'challenge'),
      ],
      not_migrated: [],
    });
  });

  it('maps Medium to PL1/25 and Simulate to log, and lists the group and rule overrides it does not migrate (business)', async () => {
    const c = await config(BUSINESS);
    assert.deepEqual(c.rules, [vendorRule, owaspRule(1, 25, 'log')]);
    assert.deepEqual(
      c.not_migrated.map((n: { kind: string; id: string; was: string }) => [n.kind, n.id, n.was]),
      [
        ['rule', '100030', 'mode block (default disable)'],
        ['group', groupId('Cloudflare WordPress'), 'mode on (default off)'],
        ['rule', '973300', 'mode off (default on)'],
        ['group', groupId('OWASP Trojan Detection'), 'mode on (default off)'],
      ],
    );
    assert.deepEqual(
      c.not_migrated.map((n: { name: string }) => n.name),
      [
        'CloudFlare › Cloudflare Specials › 100030 Anomaly:Header:User-Agent - Missing',
        'CloudFlare › Cloudflare WordPress',
        'OWASP ModSecurity Core Rule Set › OWASP XSS Attacks › 973300 Possible XSS Attack Detected - HTML Tag Handler',
        'OWASP ModSecurity Core Rule Set › OWASP Trojan Detection',
      ],
    );
    assert.equal(c.not_migrated[2].package_id, OWASP_PACKAGE);
    assert.equal(
      c.not_migrated[2].reason,
      'OWASP rule overrides are not migrated: there is no direct equivalence between rules of the two versions (upgrade guide). Recreate it with a rule override on the OWASP execute rule if needed.',
    );
  });

  it('maps Low to PL1/40 and Block to block; firewall-rule bypasses and Disable Security page rules become exceptions (enterprise)', async () => {
    const c = await config(ENTERPRISE);
    assert.deepEqual(c.rules, [
      {
        id: '',
        version: '',
        action: 'skip',
        expression: '(http.request.uri.path eq "/admin/health" and ip.src in {192.0.2.0/24})',
        description: `Migrated from firewall rule ${seedId(`firewall-rule:${ENTERPRISE}:0`)} "Health checks skip the WAF" (Bypass > WAF Managed Rules)`,
        ref: '',
        enabled: true,
        action_parameters: { ruleset: 'current' },
      },
      {
        id: '',
        version: '',
        action: 'skip',
        expression: 'http.request.full_uri wildcard "http*://enterprise.example.com/internal/*"',
        description: `Migrated from page rule ${seedId('page-rule:enterprise:internal')} (Disable Security: enterprise.example.com/internal/*)`,
        ref: '',
        enabled: true,
        action_parameters: { ruleset: 'current' },
      },
      vendorRule,
      owaspRule(1, 40, 'block'),
    ]);
    assert.deepEqual(c.not_migrated, []);
  });

  it('maps a sensitivity never set (Default) to PL2/40, and lists URI overrides as not migrated (overrides)', async () => {
    const c = await config(OVERRIDES);
    assert.deepEqual(c.rules, [vendorRule, owaspRule(2, 40, 'challenge')]);
    assert.deepEqual(c.not_migrated.map((n: { kind: string; id: string }) => [n.kind, n.id]), [
      ['uri-override', OVERRIDE_1],
      ['uri-override', OVERRIDE_2],
    ]);
  });

  it('follows a package change made through the previous-WAF API', async () => {
    const other = await startService();
    try {
      const p = await other.call('PATCH', `/zones/${PRO}/firewall/waf/packages/${OWASP_PACKAGE}`, { body: { sensitivity: 'low', action_mode: 'simulate' } });
      assert.equal(p.status, 200);
      const c = await other.call('GET', `/zones/${PRO}/waf_migration/config?phase_two=1`);
      assert.deepEqual(c.body.result.rules.slice(1), [vendorRule, owaspRule(1, 40, 'log')]);
      const off = await other.call('PATCH', `/zones/${PRO}/firewall/waf/packages/${OWASP_PACKAGE}`, { body: { sensitivity: 'off' } });
      assert.equal(off.status, 200);
      const c2 = await other.call('GET', `/zones/${PRO}/waf_migration/config?phase_two=1`);
      assert.deepEqual(c2.body.result.rules.slice(1), [vendorRule]);
    } finally {
      await other.close();
    }
  });

  it('maps the CloudFlare package switch to its execute rule, and the zone-wide switch to both', async () => {
    const other = await startService();
    try {
      const set = (settings: object) =>
        other.store.write(() => other.store.run('UPDATE previous_waf SET settings = ? WHERE zone_id = ?', [JSON.stringify({ zoneId: BUSINESS, ...settings }), BUSINESS]));
      set({ enabled: true, packages: { [CLOUDFLARE_PACKAGE_ID]: { enabled: false }, [OWASP_PACKAGE]: { sensitivity: 'low', action_mode: 'block' } } });
      const c = (await other.call('GET', `/zones/${BUSINESS}/waf_migration/config?phase_two=1`)).body.result;
      assert.deepEqual(c.rules, [{ ...vendorRule, enabled: false }, owaspRule(1, 40, 'block')]);
      set({ enabled: false, packages: { [OWASP_PACKAGE]: { sensitivity: 'medium', action_mode: 'challenge' } } });
      const off = (await other.call('GET', `/zones/${BUSINESS}/waf_migration/config?phase_two=1`)).body.result;
      assert.deepEqual(off.rules, [{ ...vendorRule, enabled: false }, { ...owaspRule(1, 25, 'challenge'), enabled: false }]);
      const s = (await other.call('GET', `/zones/${BUSINESS}/waf_migration/status`)).body.result;
      assert.deepEqual(s, { migration_state: 'start', old_waf_status: 'disabled', new_waf_status: 'disabled', source: 'defaults', created: null });
    } finally {
      await other.close();
    }
  });

  it('has nothing to propose for a migrated zone', async () => {
    const r = await svc.call('GET', `/zones/${MIGRATED}/waf_migration/config?phase_two=1`);
    assert.equal(r.status, 400);
    assert.deepEqual(r.body.errors, [
      {
        code: 20614,
        message: `This zone was already migrated to the new WAF Managed Rules on ${DEMO_MIGRATED_ON}; the migration is irreversible. Configure the managed rulesets in the http_request_firewall_managed entry point with the Rulesets API.`,
      },
    ]);
  });
});

describe('waf_migration/status', () => {
  it('starts at start with the previous WAF enabled; the seeded migrated zone is complete', async () => {
    for (const zone of [PRO, BUSINESS, ENTERPRISE, OVERRIDES, FIREWALL]) {
      assert.deepEqual(await status(zone), { migration_state: 'start', old_waf_status: 'enabled', new_waf_status: 'disabled', source: 'defaults', created: null });
    }
    assert.deepEqual(await status(MIGRATED), { migration_state: 'complete', old_waf_status: 'disabled', new_waf_status: 'enabled', source: 'zone', created: DEMO_MIGRATED_CREATED });
  });
});

describe('the migration PUT', () => {
  it('refuses an unknown waf_migration value', async () => {
    const r = await migrate(ENTERPRISE, '3');
    assert.equal(r.status, 400);
    assert.deepEqual(r.body.errors, [
      {
        code: 20617,
        message: "'3' is not a valid value for waf_migration: use pending (or 1) to migrate, or validation (or 2, Enterprise only) to run both versions side by side",
      },
    ]);
    assert.equal((await status(ENTERPRISE)).migration_state, 'start');
  });

  it('validates but changes nothing with dry_run=true', async () => {
    const r = await svc.call('PUT', entryPoint(ENTERPRISE, '?waf_migration=pending&phase_two=1&dry_run=true'), { body: { rules: (await config(ENTERPRISE)).rules } });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.result, null);
    assert.equal((await status(ENTERPRISE)).migration_state, 'start');
    const refused = await svc.call('PUT', entryPoint(FIREWALL, '?waf_migration=pending&phase_two=1&dry_run=true'), { body: { rules: [] } });
    assert.equal(refused.status, 400);
    assert.equal(refused.body.errors[0].code, 20611);
  });

  it('refuses validation mode on Pro: Enterprise only, and nothing changes', async () => {
    const r = await migrate(PRO, 'validation');
    assert.equal(r.status, 403);
    assert.deepEqual(r.body.errors, [
      {
        code: 20615,
        message:
          'Validation mode (waf_migration=validation) needs the Enterprise plan, and this zone is on the pro plan. Use waf_migration=pending to migrate directly: the new WAF Managed Rules are enabled, then the previous version is disabled.',
      },
    ]);
    assert.equal((await status(PRO)).migration_state, 'start');
    const ep = await svc.call('GET', entryPoint(PRO));
    assert.equal(ep.status, 404);
  });

  it('refuses enabled rules without waf_migration on Pro while the previous WAF runs; all-disabled rules are saved', async () => {
    const rules = (await config(PRO)).rules;
    const r = await migrate(PRO, undefined, rules);
    assert.equal(r.status, 400);
    assert.deepEqual(r.body.errors, [
      {
        code: 20616,
        message:
          'Before the WAF migration, a Pro zone can save the http_request_firewall_managed entry point only with every rule disabled ("enabled": false), and rule 1 is enabled. Add waf_migration=pending&phase_two=1 to save these rules and migrate, or disable every rule; only Enterprise zones may save enabled rules without migrating.',
        source: { pointer: '/rules/0/enabled' },
      },
    ]);
    assert.equal((await svc.call('GET', entryPoint(PRO))).status, 404);
    const disabled = rules.map((x: object) => ({ ...x, enabled: false }));
    const ok = await migrate(PRO, undefined, disabled);
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    assert.deepEqual(ok.body.result.rules.map((x: { enabled: boolean }) => x.enabled), [false, false, false]);
    // A write of one rule is refused the same way, pointing into its own body.
    const epId = ok.body.result.id as string;
    const refusal = (n: number) => ({
      code: 20616,
      message: `Before the WAF migration, a Pro zone can save the http_request_firewall_managed entry point only with every rule disabled ("enabled": false), and rule ${n} is enabled. Add waf_migration=pending&phase_two=1 to save these rules and migrate, or disable every rule; only Enterprise zones may save enabled rules without migrating.`,
      source: { pointer: '/enabled' },
    });
    const added = await svc.call('POST', `/zones/${PRO}/rulesets/${epId}/rules`, { body: { action: 'execute', expression: 'true', enabled: true, action_parameters: { id: VENDOR } } });
    assert.deepEqual([added.status, added.body.errors], [400, [refusal(4)]]);
    const second = ok.body.result.rules[1].id as string;
    const enabled = await svc.call('PATCH', `/zones/${PRO}/rulesets/${epId}/rules/${second}`, { body: { ...rules[1], enabled: true } });
    assert.deepEqual([enabled.status, enabled.body.errors], [400, [refusal(2)]]);
    assert.deepEqual((await svc.call('GET', entryPoint(PRO))).body.result.rules.map((x: { enabled: boolean }) => x.enabled), [false, false, false]);
    assert.deepEqual(await status(PRO), { migration_state: 'start', old_waf_status: 'enabled', new_waf_status: 'disabled', source: 'defaults', created: null });
  });

  it('migrates Pro from start with waf_migration=1 (pending): complete, irreversible, previous WAF gone', async () => {
    const r = await migrate(PRO, '1');
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual(r.body.result.rules.map((x: { action: string; enabled: boolean }) => [x.action, x.enabled]), [
      ['skip', true],
      ['execute', true],
      ['execute', true],
    ]);
    const s = await status(PRO);
    assert.equal(s.migration_state, 'complete');
    assert.equal(s.old_waf_status, 'disabled');
    assert.equal(s.new_waf_status, 'enabled');
    assert.equal(s.source, 'zone');
    assert.match(s.created, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    const when = completedOn(PRO);
    assert.equal(when, s.created);

    for (const value of ['pending', '1', 'validation', '2']) {
      const again = await migrate(PRO, value, []);
      assert.equal(again.status, 400);
      assert.deepEqual(again.body.errors, [{ code: 20614, message: ALREADY(when, `waf_migration=${value}`) }]);
    }
    // Without waf_migration, the managed rules can be changed as any entry point.
    const edit = await migrate(PRO, undefined, [{ action: 'execute', expression: 'true', action_parameters: { id: VENDOR } }]);
    assert.equal(edit.status, 200, JSON.stringify(edit.body));
    assert.equal((await status(PRO)).migration_state, 'complete');

    const migratedError = {
      code: 20618,
      message: `The previous version of WAF managed rules is no longer available for this zone: it was migrated to the new WAF Managed Rules on ${when}. Use the managed rulesets instead: the Rulesets API's http_request_firewall_managed entry point (/zones/${PRO}/rulesets/phases/http_request_firewall_managed/entrypoint).`,
    };
    for (const [method, path, body] of [
      ['GET', `/zones/${PRO}/firewall/waf/packages`],
      ['GET', `/zones/${PRO}/firewall/waf/packages/${OWASP_PACKAGE}`],
      ['PATCH', `/zones/${PRO}/firewall/waf/packages/${OWASP_PACKAGE}`, { sensitivity: 'low' }],
      ['GET', `/zones/${PRO}/firewall/waf/packages/${OWASP_PACKAGE}/groups`],
      ['GET', `/zones/${PRO}/firewall/waf/packages/${OWASP_PACKAGE}/rules`],
      ['PATCH', `/zones/${PRO}/firewall/waf/packages/${OWASP_PACKAGE}/rules/973300`, { mode: 'off' }],
      ['GET', `/zones/${PRO}/firewall/waf/overrides`],
    ] as [string, string, unknown?][]) {
      const res = await svc.call(method, path, body === undefined ? {} : { body });
      assert.equal(res.status, 400, `${method} ${path}`);
      assert.deepEqual(res.body.errors, [migratedError], `${method} ${path}`);
    }
  });

  it('runs Enterprise through validation mode, then pending; refuses validation afterwards', async () => {
    const v = await migrate(ENTERPRISE, 'validation');
    assert.equal(v.status, 200, JSON.stringify(v.body));
    const s1 = await status(ENTERPRISE);
    assert.deepEqual({ ...s1, created: typeof s1.created }, { migration_state: 'validation', old_waf_status: 'enabled', new_waf_status: 'enabled', source: 'zone', created: 'string' });
    assert.deepEqual((await svc.call('GET', `/zones/${ENTERPRISE}/waf_migration/check?phase_two=1`)).body.result, { compatible: true, migration_state: 'validation' });
    // The previous WAF still answers in validation mode.
    assert.equal((await svc.call('GET', `/zones/${ENTERPRISE}/firewall/waf/packages/${OWASP_PACKAGE}`)).body.result.sensitivity, 'low');
    // Saving again in validation mode (alias 2) keeps the state and its start time.
    const v2 = await migrate(ENTERPRISE, '2');
    assert.equal(v2.status, 200);
    assert.deepEqual(await status(ENTERPRISE), s1);

    const p = await migrate(ENTERPRISE, 'pending');
    assert.equal(p.status, 200, JSON.stringify(p.body));
    const s2 = await status(ENTERPRISE);
    assert.deepEqual(s2, { migration_state: 'complete', old_waf_status: 'disabled', new_waf_status: 'enabled', source: 'zone', created: s1.created });
    const again = await migrate(ENTERPRISE, 'validation', []);
    assert.equal(again.status, 400);
    assert.deepEqual(again.body.errors, [{ code: 20614, message: ALREADY(completedOn(ENTERPRISE), 'waf_migration=validation') }]);
  });

  it('migrates Business straight from start with pending', async () => {
    const r = await migrate(BUSINESS, 'pending');
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal((await status(BUSINESS)).migration_state, 'complete');
    const ep = await svc.call('GET', entryPoint(BUSINESS));
    // Stored as written, with the version the API adds to an execute rule without one.
    assert.deepEqual(ep.body.result.rules[1].action_parameters, { ...owaspRule(1, 25, 'log').action_parameters, version: 'latest' });
  });

  it('refuses a zone with URI-based overrides with the reason; after deleting them it migrates', async () => {
    const r = await migrate(OVERRIDES, 'pending');
    assert.equal(r.status, 400);
    assert.deepEqual(r.body.errors, [
      {
        code: 20610,
        message: `Migration refused: This zone has 2 URI-based WAF overrides, which prevent the upgrade: ${OVERRIDE_1} (shop.overrides.example.com/*); ${OVERRIDE_2} (overrides.example.com/api/search*). Delete them (DELETE /zones/${OVERRIDES}/firewall/waf/overrides/{id}) and check again; recreate what they did as exceptions or overrides of the new managed rulesets after migrating.`,
      },
    ]);
    assert.equal((await svc.call('GET', entryPoint(OVERRIDES))).status, 404);
    for (const id of [OVERRIDE_1, OVERRIDE_2]) {
      const d = await svc.call('DELETE', `/zones/${OVERRIDES}/firewall/waf/overrides/${id}`);
      assert.deepEqual([d.status, d.body.result], [200, { id }]);
    }
    assert.deepEqual((await svc.call('GET', `/zones/${OVERRIDES}/waf_migration/check?phase_two=1`)).body.result, { compatible: true, migration_state: 'start' });
    const ok = await migrate(OVERRIDES, 'pending');
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    assert.equal((await status(OVERRIDES)).migration_state, 'complete');
  });

  it('refuses a zone with more than 200 firewall rules: support needed', async () => {
    const r = await migrate(FIREWALL, 'pending');
    assert.equal(r.status, 400);
    assert.deepEqual(r.body.errors, [
      {
        code: 20611,
        message:
          "Migration refused: The number of firewall rules to migrate (201) exceeds 200: this migration needs support (contact Cloudflare Support), or reduce the zone's firewall rules to 200 or fewer.",
      },
    ]);
    assert.equal((await status(FIREWALL)).migration_state, 'start');
  });

  it('refuses any waf_migration on the seeded migrated zone', async () => {
    const r = await migrate(MIGRATED, 'validation', []);
    assert.equal(r.status, 400);
    assert.deepEqual(r.body.errors, [{ code: 20614, message: ALREADY(DEMO_MIGRATED_ON, 'waf_migration=validation') }]);
  });

  it('the SDK sends the migration PUT with its query', async () => {
    const other = await startService();
    try {
      const cf = other.sdk();
      const rules = (await other.call('GET', `/zones/${BUSINESS}/waf_migration/config?phase_two=1`)).body.result.rules;
      const ep = await cf.rulesets.phases.update('http_request_firewall_managed', { zone_id: BUSINESS, rules }, { query: { waf_migration: 'pending', phase_two: 1 } });
      assert.equal((ep as { rules: unknown[] }).rules.length, 2);
      const s = (await cf.get(`/zones/${BUSINESS}/waf_migration/status`)) as { result: { migration_state: string } };
      assert.equal(s.result.migration_state, 'complete');
    } finally {
      await other.close();
    }
  });

  it('needs Zone WAF Write for the PUT', async () => {
    const r = await svc.call('PUT', entryPoint(FIREWALL, '?waf_migration=pending&phase_two=1'), { body: { rules: [] }, token: svc.credentials.get('demo read-only') });
    assert.equal(r.status, 403);
    assert.deepEqual(r.body.errors, [{ code: 10000, message: 'Authentication error' }]);
  });
});
