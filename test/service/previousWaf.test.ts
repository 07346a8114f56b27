// The previous version of WAF managed rules over real HTTP: packages, groups, rules and
// URI-based overrides with the official SDK where it has methods and raw calls elsewhere,
// every validation error with its text, the plan and permission rules, and 410 under
// `--legacy sunset`.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CLOUDFLARE_PACKAGE_ID, MAGENTO_GROUP_ID, OWASP_PACKAGE_ID, PACKAGES } from '../../server/src/migration/index';
import { DEMO_ACCOUNT, demoZoneId, seedId } from '../../server/src/service/seed';
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
const waf = (zone: string, rest = '') => `/zones/${zone}/firewall/waf${rest}`;
const groupId = (name: string) => PACKAGES.flatMap((p) => p.groups).find((g) => g.name === name)!.id;

describe('packages', () => {
  it('lists the two packages with the seeded sensitivity and action mode (SDK, iterating pages)', async () => {
    const cf = svc.sdk();
    const all = [];
    for await (const p of cf.firewall.waf.packages.list({ zone_id: PRO })) all.push(p);
    assert.deepEqual(all, [
      {
        id: CLOUDFLARE_PACKAGE_ID,
        name: 'CloudFlare',
        description: 'Rules written by Cloudflare for common attacks and for the vulnerabilities of popular applications.',
        detection_mode: 'traditional',
        zone_id: PRO,
        status: 'active',
      },
      {
        id: OWASP_PACKAGE_ID,
        name: 'OWASP ModSecurity Core Rule Set',
        description: 'Covers OWASP Top 10 vulnerabilities, and more.',
        detection_mode: 'anomaly',
        zone_id: PRO,
        status: 'active',
        sensitivity: 'high',
        action_mode: 'challenge',
      },
    ]);
    const business = await cf.firewall.waf.packages.get(OWASP_PACKAGE_ID, { zone_id: BUSINESS });
    assert.deepEqual([(business as { sensitivity?: string }).sensitivity, (business as { action_mode?: string }).action_mode], ['medium', 'simulate']);
    const ent = await svc.call('GET', waf(ENTERPRISE, `/packages/${OWASP_PACKAGE_ID}`));
    assert.deepEqual([ent.body.result.sensitivity, ent.body.result.action_mode], ['low', 'block']);
    // An untouched zone shows the package defaults.
    const dflt = await svc.call('GET', waf(OVERRIDES, `/packages/${OWASP_PACKAGE_ID}`));
    assert.deepEqual([dflt.body.result.sensitivity, dflt.body.result.action_mode], ['high', 'challenge']);
  });

  it('pages per page-based pagination: per_page 5–100, default 50, [] past the end', async () => {
    const r = await svc.call('GET', waf(PRO, '/packages?page=2&per_page=5'));
    assert.deepEqual([r.status, r.body.result, r.body.result_info], [200, [], { page: 2, per_page: 5, count: 0, total_count: 2, total_pages: 1 }]);
    const d = await svc.call('GET', waf(PRO, '/packages'));
    assert.deepEqual(d.body.result_info, { page: 1, per_page: 50, count: 2, total_count: 2, total_pages: 1 });
    const bad = await svc.call('GET', waf(PRO, '/packages?per_page=2'));
    assert.equal(bad.status, 400);
    assert.deepEqual(bad.body.errors, [{ code: 20021, message: "'2' is not a valid value for per_page: expected an integer from 5 to 100" }]);
  });

  it('pages as the rest of the service: an empty list has total_pages 1, a bad page is 20021', async () => {
    const none = await svc.call('GET', waf(ENTERPRISE, '/packages?name=no-such-package'));
    assert.deepEqual([none.status, none.body.result, none.body.result_info], [200, [], { page: 1, per_page: 50, count: 0, total_count: 0, total_pages: 1 }]);
    const noFilters = await svc.call('GET', `/zones/${ENTERPRISE}/filters?description=no-such-filter`);
    assert.deepEqual(noFilters.body.result_info, { page: 1, per_page: 25, count: 0, total_count: 0, total_pages: 1 });
    const noOverrides = await svc.call('GET', waf(ENTERPRISE, '/overrides'));
    assert.deepEqual(noOverrides.body.result_info, { page: 1, per_page: 50, count: 0, total_count: 0, total_pages: 1 });

    const page0 = "'0' is not a valid value for page: expected an integer from 1 to 9007199254740991";
    for (const path of [waf(ENTERPRISE, '/packages?page=0'), waf(ENTERPRISE, `/packages/${OWASP_PACKAGE_ID}/rules?page=0`), waf(ENTERPRISE, '/overrides?page=0'), `/zones/${ENTERPRISE}/filters?page=0`]) {
      const r = await svc.call('GET', path);
      assert.deepEqual([r.status, r.body.errors], [400, [{ code: 20021, message: page0 }]], path);
    }
    const order = await svc.call('GET', waf(ENTERPRISE, `/packages/${OWASP_PACKAGE_ID}/groups?order=name`));
    assert.deepEqual([order.status, order.body.errors], [400, [{ code: 20021, message: "'name' is not a valid value for order because it must be one of: mode, rules_count" }]]);
  });

  it('patches sensitivity and action_mode of the anomaly package (raw call: the SDK has no method)', async () => {
    const r = await svc.call('PATCH', waf(PRO, `/packages/${OWASP_PACKAGE_ID}`), { body: { sensitivity: 'medium', action_mode: 'block' } });
    assert.equal(r.status, 200);
    assert.deepEqual([r.body.result.sensitivity, r.body.result.action_mode], ['medium', 'block']);
    const again = await svc.call('GET', waf(PRO, `/packages/${OWASP_PACKAGE_ID}`));
    assert.deepEqual([again.body.result.sensitivity, again.body.result.action_mode], ['medium', 'block']);
    await svc.call('PATCH', waf(PRO, `/packages/${OWASP_PACKAGE_ID}`), { body: { sensitivity: 'high', action_mode: 'challenge' } });
  });

  it('refuses bad package patches with the error text, changing nothing', async () => {
    const cases: [string, unknown, number, object][] = [
      [OWASP_PACKAGE_ID, { sensitivity: 'extreme' }, 400, { code: 20021, message: "'extreme' is not a valid value for sensitivity because it must be one of: high, medium, low, off", source: { pointer: '/sensitivity' } }],
      [OWASP_PACKAGE_ID, { action_mode: 'log' }, 400, { code: 20021, message: "'log' is not a valid value for action_mode because it must be one of: simulate, block, challenge", source: { pointer: '/action_mode' } }],
      [OWASP_PACKAGE_ID, { sensitivity: 'low', mode: 'on' }, 400, { code: 20601, message: 'invalid JSON: unknown field "mode" (a package accepts "sensitivity" and "action_mode")', source: { pointer: '/mode' } }],
      [OWASP_PACKAGE_ID, {}, 400, { code: 20602, message: 'nothing to change: send "sensitivity" (high|medium|low|off) and/or "action_mode" (simulate|block|challenge)' }],
      [
        CLOUDFLARE_PACKAGE_ID,
        { sensitivity: 'low' },
        400,
        {
          code: 20021,
          message: `package ${CLOUDFLARE_PACKAGE_ID} ("CloudFlare") uses the traditional detection mode: sensitivity and action_mode can only be set on an anomaly package ("OWASP ModSecurity Core Rule Set", ${OWASP_PACKAGE_ID}); change its rule groups and rules instead`,
          source: { pointer: '/sensitivity' },
        },
      ],
      ['0'.repeat(32), { sensitivity: 'low' }, 404, { code: 7003, message: `Could not route to /zones/${PRO}/firewall/waf/packages/${'0'.repeat(32)}, perhaps your object identifier is invalid?` }],
    ];
    for (const [pkg, body, status, error] of cases) {
      const r = await svc.call('PATCH', waf(PRO, `/packages/${pkg}`), { body });
      assert.equal(r.status, status, JSON.stringify(body));
      assert.deepEqual(r.body.errors, [error], JSON.stringify(body));
    }
    const after = await svc.call('GET', waf(PRO, `/packages/${OWASP_PACKAGE_ID}`));
    assert.deepEqual([after.body.result.sensitivity, after.body.result.action_mode], ['high', 'challenge']);
  });
});

describe('groups', () => {
  it('lists groups with modes and rule counts (SDK) and filters by mode', async () => {
    const cf = svc.sdk();
    const groups = [];
    for await (const g of cf.firewall.waf.packages.groups.list(OWASP_PACKAGE_ID, { zone_id: BUSINESS, per_page: 5 })) groups.push(g);
    assert.equal(groups.length, 8);
    assert.deepEqual(groups[0], {
      id: groupId('OWASP Protocol Anomalies'),
      name: 'OWASP Protocol Anomalies',
      description: 'Requests that do not follow the HTTP protocol as common clients do.',
      rules_count: 3,
      modified_rules_count: 0,
      package_id: OWASP_PACKAGE_ID,
      mode: 'on',
      allowed_modes: ['on', 'off'],
    });
    const xss = groups.find((g) => g.name === 'OWASP XSS Attacks')!;
    assert.equal(xss.modified_rules_count, 1); // 973300 seeded off
    const trojan = groups.find((g) => g.name === 'OWASP Trojan Detection')!;
    assert.equal(trojan.mode, 'on'); // seeded on (default off)
    const off = await svc.call('GET', waf(PRO, `/packages/${OWASP_PACKAGE_ID}/groups?mode=off`));
    assert.deepEqual(off.body.result.map((g: { name: string }) => g.name), ['OWASP Trojan Detection']);
  });

  it('edits a group mode (SDK) and refuses a mode outside allowed_modes', async () => {
    const cf = svc.sdk();
    const id = groupId('OWASP Bad Robots');
    const edited = (await cf.firewall.waf.packages.groups.edit(id, { zone_id: PRO, package_id: OWASP_PACKAGE_ID, mode: 'off' })) as { mode?: string };
    assert.equal(edited.mode, 'off');
    const got = (await cf.firewall.waf.packages.groups.get(id, { zone_id: PRO, package_id: OWASP_PACKAGE_ID })) as { mode?: string };
    assert.equal(got.mode, 'off');
    const bad = await svc.call('PATCH', waf(PRO, `/packages/${OWASP_PACKAGE_ID}/groups/${id}`), { body: { mode: 'maybe' } });
    assert.equal(bad.status, 400);
    assert.deepEqual(bad.body.errors, [{ code: 20021, message: "'maybe' is not a valid value for mode because it must be one of the group's allowed_modes: on, off", source: { pointer: '/mode' } }]);
    const missing = await svc.call('PATCH', waf(PRO, `/packages/${OWASP_PACKAGE_ID}/groups/${id}`), { body: {} });
    assert.deepEqual(missing.body.errors, [{ code: 20602, message: 'mode is required: one of on, off', source: { pointer: '/mode' } }]);
    const unknown = await svc.call('GET', waf(PRO, `/packages/${OWASP_PACKAGE_ID}/groups/${'a'.repeat(32)}`));
    assert.equal(unknown.status, 404);
    assert.deepEqual(unknown.body.errors, [{ code: 7003, message: `Could not route to /zones/${PRO}/firewall/waf/packages/${OWASP_PACKAGE_ID}/groups/${'a'.repeat(32)}, perhaps your object identifier is invalid?` }]);
  });
});

describe('rules', () => {
  it('lists rules (SDK, all pages) and filters by mode and group', async () => {
    const cf = svc.sdk();
    const rules = [];
    for await (const r of cf.firewall.waf.packages.rules.list(CLOUDFLARE_PACKAGE_ID, { zone_id: ENTERPRISE, per_page: 5 })) rules.push(r);
    assert.equal(rules.length, 23);
    assert.deepEqual(rules[5], {
      id: '100015',
      description: 'Anomaly:URL:Query String - Multiple Slashes, Relative Paths, CR, LF or NULL',
      priority: '6',
      package_id: CLOUDFLARE_PACKAGE_ID,
      group: { id: groupId('Cloudflare Specials'), name: 'Cloudflare Specials' },
      mode: 'default',
      allowed_modes: ['default', 'disable', 'simulate', 'block', 'challenge'],
      default_mode: 'challenge',
    });
    const sim = await svc.call('GET', waf(ENTERPRISE, `/packages/${CLOUDFLARE_PACKAGE_ID}/rules?mode=SIM`));
    assert.deepEqual(sim.body.result.map((r: { id: string }) => r.id), ['100038', '100045', '100051']);
    const magento = await svc.call('GET', waf(ENTERPRISE, `/packages/${CLOUDFLARE_PACKAGE_ID}/rules?group_id=${MAGENTO_GROUP_ID}`));
    assert.deepEqual(magento.body.result.map((r: { id: string }) => r.id), ['100013', '100014']);
  });

  it('edits a rule mode (SDK) within its allowed_modes; refuses others with the error text', async () => {
    const cf = svc.sdk();
    const edited = (await cf.firewall.waf.packages.rules.edit('100015', { zone_id: ENTERPRISE, package_id: CLOUDFLARE_PACKAGE_ID, mode: 'block' })) as { mode?: string };
    assert.equal(edited.mode, 'block');
    const anomaly = (await cf.firewall.waf.packages.rules.edit('958000', { zone_id: ENTERPRISE, package_id: OWASP_PACKAGE_ID, mode: 'off' })) as { mode?: string };
    assert.equal(anomaly.mode, 'off');
    const cases: [string, string, unknown, object][] = [
      [OWASP_PACKAGE_ID, '958000', { mode: 'block' }, { code: 20021, message: "'block' is not a valid value for mode because rule 958000 is an anomaly rule: its allowed_modes are on, off", source: { pointer: '/mode' } }],
      [CLOUDFLARE_PACKAGE_ID, '100015', { mode: 'on' }, { code: 20021, message: "'on' is not a valid value for mode because rule 100015 is a traditional deny rule: its allowed_modes are default, disable, simulate, block, challenge", source: { pointer: '/mode' } }],
      [CLOUDFLARE_PACKAGE_ID, '100048', { mode: 'disable' }, { code: 20021, message: "'disable' is not a valid value for mode because rule 100048 is a traditional allow rule: its allowed_modes are on, off", source: { pointer: '/mode' } }],
      [CLOUDFLARE_PACKAGE_ID, '100015', { mode: 'block', priority: 1 }, { code: 20601, message: 'invalid JSON: unknown field "priority" (a rule accepts only "mode")', source: { pointer: '/priority' } }],
    ];
    for (const [pkg, rule, body, error] of cases) {
      const r = await svc.call('PATCH', waf(ENTERPRISE, `/packages/${pkg}/rules/${rule}`), { body });
      assert.equal(r.status, 400);
      assert.deepEqual(r.body.errors, [error]);
    }
    const unknown = await svc.call('PATCH', waf(ENTERPRISE, `/packages/${CLOUDFLARE_PACKAGE_ID}/rules/999999`), { body: { mode: 'block' } });
    assert.equal(unknown.status, 404);
    assert.deepEqual(unknown.body.errors, [{ code: 7003, message: `Could not route to /zones/${ENTERPRISE}/firewall/waf/packages/${CLOUDFLARE_PACKAGE_ID}/rules/999999, perhaps your object identifier is invalid?` }]);
    const bad = await svc.call('GET', waf(ENTERPRISE, `/packages/${CLOUDFLARE_PACKAGE_ID}/rules?mode=XYZ`));
    assert.equal(bad.status, 400);
    assert.equal(bad.body.errors[0].code, 20021);
  });
});

describe('URI-based overrides', () => {
  it('lists the seeded overrides of the not-eligible zone', async () => {
    const r = await svc.call('GET', waf(OVERRIDES, '/overrides'));
    assert.equal(r.status, 200);
    assert.deepEqual(r.body.result.map((o: { id: string; urls: string[]; priority: number }) => [o.id, o.urls, o.priority]), [
      [seedId('waf-override:overrides.example.com:1'), ['shop.overrides.example.com/*'], 1],
      [seedId('waf-override:overrides.example.com:2'), ['overrides.example.com/api/search*'], 2],
    ]);
    assert.deepEqual(r.body.result_info, { page: 1, per_page: 50, count: 2, total_count: 2, total_pages: 1 });
  });

  it('creates, gets, replaces and deletes an override on Enterprise; the check follows', async () => {
    const body = { urls: ['enterprise.example.com/shop/*'], description: 'Magento for the shop', groups: { [MAGENTO_GROUP_ID]: 'default' }, rules: { '100015': 'disable' }, priority: 5 };
    const c = await svc.call('POST', waf(ENTERPRISE, '/overrides'), { body });
    assert.equal(c.status, 200, JSON.stringify(c.body));
    const id = c.body.result.id;
    assert.match(id, /^[0-9a-f]{32}$/);
    assert.deepEqual(c.body.result, { id, description: 'Magento for the shop', urls: ['enterprise.example.com/shop/*'], priority: 5, paused: false, groups: { [MAGENTO_GROUP_ID]: 'default' }, rules: { '100015': 'disable' }, rewrite_action: {} });
    assert.deepEqual((await svc.call('GET', waf(ENTERPRISE, `/overrides/${id}`))).body.result, c.body.result);
    const check = await svc.call('GET', `/zones/${ENTERPRISE}/waf_migration/check?phase_two=1`);
    assert.equal(check.body.result.compatible, false);
    assert.equal(check.body.result.reasons[0].code, 'uri-overrides');

    const put = await svc.call('PUT', waf(ENTERPRISE, `/overrides/${id}`), { body: { id, urls: ['enterprise.example.com/store/*'], rules: {}, rewrite_action: { block: 'challenge' } } });
    assert.equal(put.status, 200, JSON.stringify(put.body));
    assert.deepEqual(put.body.result, { id, description: null, urls: ['enterprise.example.com/store/*'], priority: 1, paused: false, groups: {}, rules: {}, rewrite_action: { block: 'challenge' } });

    const putMissing = await svc.call('PUT', waf(ENTERPRISE, `/overrides/${id}`), { body: { urls: ['x/*'] } });
    assert.equal(putMissing.status, 400);
    assert.deepEqual(putMissing.body.errors, [{ code: 20602, message: 'rules is required when replacing an override (PUT needs urls, rules and rewrite_action)', source: { pointer: '/rules' } }]);

    const d = await svc.call('DELETE', waf(ENTERPRISE, `/overrides/${id}`));
    assert.deepEqual([d.status, d.body.result], [200, { id }]);
    const gone = await svc.call('GET', waf(ENTERPRISE, `/overrides/${id}`));
    assert.equal(gone.status, 404);
    assert.deepEqual(gone.body.errors, [{ code: 7003, message: `Could not route to /zones/${ENTERPRISE}/firewall/waf/overrides/${id}, perhaps your object identifier is invalid?` }]);
    assert.equal((await svc.call('GET', `/zones/${ENTERPRISE}/waf_migration/check?phase_two=1`)).body.result.compatible, true);
  });

  it('refuses bad override bodies with the error text', async () => {
    const cases: [unknown, object][] = [
      [{ description: 'x' }, { code: 20602, message: 'urls is required: a list of URL patterns such as ["shop.example.com/*"]', source: { pointer: '/urls' } }],
      [{ urls: [] }, { code: 20021, message: "'[]' is not a valid value for urls because it must be a non-empty list of URL patterns such as [\"shop.example.com/*\"]", source: { pointer: '/urls' } }],
      [{ urls: ['a/*'], rules: { '100015': 'allow' } }, { code: 20021, message: "'allow' is not a valid value for rules because the value for 100015 must be one of: challenge, block, simulate, disable, default", source: { pointer: '/rules/100015' } }],
      [{ urls: ['a/*'], groups: { nope: 'block' } }, { code: 20021, message: "'nope' is not a valid value for groups because it is not the id of a rule group of this zone's WAF packages", source: { pointer: '/groups/nope' } }],
      [{ urls: ['a/*'], priority: 2e9 }, { code: 20021, message: "'2000000000' is not a valid value for priority because it must be an integer from -1000000000 to 1000000000 (lower runs first)", source: { pointer: '/priority' } }],
      [{ urls: ['a/*', 'b/\u0000*'] }, { code: 20021, message: "'b/\u0000*' is not a valid value for urls because a URL pattern must not contain a NUL character (U+0000)", source: { pointer: '/urls/1' } }],
      [{ urls: ['a/*'], description: 'x\u0000y' }, { code: 20021, message: "'x\u0000y' is not a valid value for description because it must not contain a NUL character (U+0000)", source: { pointer: '/description' } }],
      [{ urls: ['a/*'], action: 'block' }, { code: 20601, message: 'invalid JSON: unknown field "action" (an override accepts id, description, urls, priority, paused, groups, rules, rewrite_action)', source: { pointer: '/action' } }],
    ];
    for (const [body, error] of cases) {
      const r = await svc.call('POST', waf(ENTERPRISE, '/overrides'), { body });
      assert.equal(r.status, 400, JSON.stringify(body));
      assert.deepEqual(r.body.errors, [error], JSON.stringify(body));
    }
    assert.deepEqual((await svc.call('GET', waf(ENTERPRISE, '/overrides'))).body.result, []);
  });

  it('bounds an override and a zone: 50 URL patterns, 500 characters each, 1000 overrides per zone (sizes are not quoted back)', async () => {
    const settings = () => svc.store.get<{ settings: string }>('SELECT settings FROM previous_waf WHERE zone_id = ?', [ENTERPRISE])?.settings;
    const before = settings();
    const cases: [unknown, object][] = [
      [{ urls: Array.from({ length: 51 }, (_, i) => `enterprise.example.com/${i}/*`) }, { code: 20021, message: 'a list of 51 URL patterns is not a valid value for urls because an override has at most 50 URL patterns', source: { pointer: '/urls' } }],
      [{ urls: ['a/*', `enterprise.example.com/${'a'.repeat(7 * 1024 * 1024)}`] }, { code: 20021, message: `a URL pattern of ${23 + 7 * 1024 * 1024} characters is not a valid value for urls because a URL pattern is at most 500 characters`, source: { pointer: '/urls/1' } }],
      [{ urls: ['a/*'], description: 'd'.repeat(1025) }, { code: 20021, message: 'a description of 1025 characters is not a valid value for description because it must be a string of at most 1024 characters (or null)', source: { pointer: '/description' } }],
    ];
    for (const [body, error] of cases) {
      const r = await svc.call('POST', waf(ENTERPRISE, '/overrides'), { body });
      assert.equal(r.status, 400);
      assert.deepEqual(r.body.errors, [error]);
      assert.equal(settings(), before, 'nothing stored');
    }
    // A zone at the cap (its settings written directly: 1000 POSTs would take a while).
    const zoneSettings = JSON.parse(before ?? JSON.stringify({ zoneId: ENTERPRISE, enabled: true }));
    const full = { ...zoneSettings, overrides: Array.from({ length: 1000 }, (_, i) => ({ id: i.toString(16).padStart(32, '0'), description: null, urls: [`enterprise.example.com/${i}/*`], priority: 1, paused: false, groups: {}, rules: {}, rewrite_action: {} })) };
    svc.store.write(() => svc.store.run('INSERT INTO previous_waf (zone_id, settings) VALUES (?, ?) ON CONFLICT (zone_id) DO UPDATE SET settings = excluded.settings', [ENTERPRISE, JSON.stringify(full)]));
    try {
      const atCap = settings();
      const r = await svc.call('POST', waf(ENTERPRISE, '/overrides'), { body: { urls: ['enterprise.example.com/new/*'] } });
      assert.equal(r.status, 400);
      assert.deepEqual(r.body.errors, [
        { code: 20021, message: 'the zone has 1000 URI-based overrides, the most a zone may have (1000): delete one, or add its URL patterns to an override with the same rules, before creating another' },
      ]);
      assert.equal(settings(), atCap, 'nothing stored');
      const id = '0'.repeat(32);
      const put = await svc.call('PUT', waf(ENTERPRISE, `/overrides/${id}`), { body: { urls: ['enterprise.example.com/changed/*'], rules: {}, rewrite_action: {} } });
      assert.equal(put.status, 200, 'replacing one at the cap is fine');
      assert.equal((await svc.call('DELETE', waf(ENTERPRISE, `/overrides/${id}`))).status, 200);
      assert.equal((await svc.call('POST', waf(ENTERPRISE, '/overrides'), { body: { urls: ['enterprise.example.com/new/*'] } })).status, 200, 'room again after a delete');
    } finally {
      svc.store.write(() => svc.store.run('UPDATE previous_waf SET settings = ? WHERE zone_id = ?', [before ?? JSON.stringify(zoneSettings), ENTERPRISE]));
    }
  });

  it('settings written without the API (no zone-wide switch, an override without urls) read with the API\'s defaults: no crash', async () => {
    const settings = () => svc.store.get<{ settings: string }>('SELECT settings FROM previous_waf WHERE zone_id = ?', [ENTERPRISE])?.settings;
    const before = settings();
    const hand = { zoneId: ENTERPRISE, overrides: [{ id: '1'.repeat(32), description: null, priority: 1, paused: false, groups: {}, rules: {}, rewrite_action: {} }] };
    svc.store.write(() => svc.store.run('INSERT INTO previous_waf (zone_id, settings) VALUES (?, ?) ON CONFLICT (zone_id) DO UPDATE SET settings = excluded.settings', [ENTERPRISE, JSON.stringify(hand)]));
    try {
      const check = await svc.call('GET', `/zones/${ENTERPRISE}/waf_migration/check?phase_two=1`);
      assert.equal(check.status, 200, JSON.stringify(check.body));
      assert.deepEqual([check.body.result.compatible, check.body.result.reasons[0].code], [false, 'uri-overrides']);
      assert.match(check.body.result.reasons[0].message, new RegExp(`${'1'.repeat(32)} \\(\\)`));
      const config = await svc.call('GET', `/zones/${ENTERPRISE}/waf_migration/config?phase_two=1`);
      assert.equal(config.status, 200, JSON.stringify(config.body));
      // The zone-wide switch reads as on: the execute rules are enabled.
      assert.deepEqual(config.body.result.rules.filter((r: { action: string }) => r.action === 'execute').map((r: { enabled: boolean }) => r.enabled), [true, true]);
    } finally {
      svc.store.write(() => svc.store.run('UPDATE previous_waf SET settings = ? WHERE zone_id = ?', [before ?? JSON.stringify({ zoneId: ENTERPRISE, enabled: true }), ENTERPRISE]));
    }
  });

  it('creates overrides on Enterprise only; other plans may still read and delete theirs', async () => {
    const r = await svc.call('POST', waf(BUSINESS, '/overrides'), { body: { urls: ['business.example.com/*'] } });
    assert.equal(r.status, 403);
    assert.deepEqual(r.body.errors, [{ code: 10208, message: 'URI-based WAF overrides are available on the Enterprise plan only; this zone is on the business plan.' }]);
    assert.equal((await svc.call('GET', waf(BUSINESS, '/overrides'))).status, 200);
  });
});

describe('plans, permissions, sunset', () => {
  it('a Free zone has no previous WAF', async () => {
    const other = await startService();
    try {
      const id = 'f'.repeat(32);
      other.store.write(() =>
        other.store.run('INSERT INTO zones (id, account_id, name, plan, status, created_on) VALUES (?, ?, ?, ?, ?, ?)', [id, DEMO_ACCOUNT.id, 'free.example.com', 'free', 'active', '2026-01-01T00:00:00.000000Z']),
      );
      const r = await other.call('GET', waf(id, '/packages'));
      assert.equal(r.status, 403);
      assert.deepEqual(r.body.errors, [
        {
          code: 20613,
          message:
            'The previous version of WAF managed rules is available on the Pro, Business and Enterprise plans only; this zone is on the Free plan. Use the managed rulesets (the Cloudflare Free Managed Ruleset) instead.',
        },
      ]);
      const check = await other.call('GET', `/zones/${id}/waf_migration/check`);
      assert.deepEqual(check.body.result.compatible, false);
      assert.deepEqual(check.body.result.migration_state, 'default');
      assert.deepEqual(check.body.result.reasons.map((x: { code: string }) => x.code), ['no-previous-waf']);
    } finally {
      await other.close();
    }
  });

  it('needs Firewall Services Read to read and Write to change', async () => {
    const ro = svc.credentials.get('demo read-only');
    assert.equal((await svc.call('GET', waf(PRO, '/packages'), { token: ro })).status, 200);
    const w = await svc.call('PATCH', waf(PRO, `/packages/${OWASP_PACKAGE_ID}`), { token: ro, body: { sensitivity: 'low' } });
    assert.equal(w.status, 403);
    assert.deepEqual(w.body.errors, [{ code: 10000, message: 'Authentication error' }]);
    const other = await svc.call('GET', waf(PRO, '/packages'), { token: svc.credentials.get('business.example.com WAF') });
    assert.equal(other.status, 403);
  });

  it('answers 410 Gone under --legacy sunset, and the SDK raises', async () => {
    const sunset = await startService({ legacy: 'sunset' });
    try {
      const gone = {
        code: 10410,
        message:
          'The previous WAF API is no longer available (sunset on 2025-06-15). Use the Rulesets API: custom rules in the http_request_firewall_custom phase, managed rules in http_request_firewall_managed.',
      };
      for (const [method, path] of [
        ['GET', waf(PRO, '/packages')],
        ['PATCH', waf(PRO, `/packages/${OWASP_PACKAGE_ID}`)],
        ['GET', waf(PRO, `/packages/${OWASP_PACKAGE_ID}/groups`)],
        ['PATCH', waf(PRO, `/packages/${OWASP_PACKAGE_ID}/rules/958000`)],
        ['GET', waf(OVERRIDES, '/overrides')],
        ['POST', waf(ENTERPRISE, '/overrides')],
        ['DELETE', waf(OVERRIDES, `/overrides/${seedId('waf-override:overrides.example.com:1')}`)],
      ]) {
        const r = await sunset.call(method!, path!, method === 'GET' || method === 'DELETE' ? {} : { body: { mode: 'on' } });
        assert.equal(r.status, 410, `${method} ${path}`);
        assert.deepEqual(r.body.errors, [gone]);
      }
      await assert.rejects(
        async () => {
          for await (const _ of sunset.sdk().firewall.waf.packages.list({ zone_id: PRO })) void _;
        },
        (e: { status?: number }) => e.status === 410,
      );
      // The migration helper is not a legacy family: it still answers.
      assert.equal((await sunset.call('GET', `/zones/${PRO}/waf_migration/check`)).status, 200);
    } finally {
      await sunset.close();
    }
  });
});
