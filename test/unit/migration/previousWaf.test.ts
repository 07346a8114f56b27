import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  CLOUDFLARE_PACKAGE_ID,
  createOverride,
  defaultWafSettings,
  deleteOverride,
  getGroup,
  getOverride,
  getPackage,
  getRule,
  listGroups,
  listOverrides,
  listPackages,
  listRules,
  MAGENTO_GROUP_ID,
  OWASP_PACKAGE_ID,
  PACKAGES,
  patchGroup,
  patchPackage,
  patchRule,
  patchWafZoneSetting,
  wafZoneSetting,
  updateOverride,
  type MigrationError,
  type MigrationErrorCode,
  type Result,
  type ZoneWafSettings,
} from '../../../server/src/migration/index';

const ZONE_ID = '023e105f4ecef8ad9ca31a8372d0c353';
const S = defaultWafSettings(ZONE_ID);

function err<T>(r: Result<T>): MigrationError {
  assert.equal(r.ok, false, 'expected an error');
  return (r as { error: MigrationError }).error;
}
function ok<T>(r: Result<T>): { ok: true } & T {
  assert.ok(r.ok, `expected success, got ${JSON.stringify(r)}`);
  return r as { ok: true } & T;
}
const groupIdOf = (name: string) => PACKAGES.flatMap((p) => p.groups).find((g) => g.name === name)!.id;

describe('the content', () => {
  test('two packages, every id stable and unique, a few dozen rules', () => {
    assert.deepEqual(
      PACKAGES.map((p) => [p.name, p.detection_mode, p.groups.length, p.groups.reduce((n, g) => n + g.rules.length, 0)]),
      [
        ['CloudFlare', 'traditional', 7, 23],
        ['OWASP ModSecurity Core Rule Set', 'anomaly', 8, 22],
      ],
    );
    assert.equal(OWASP_PACKAGE_ID, 'a25a9a7e9c00afc1fb2e0245519d725b');
    assert.equal(CLOUDFLARE_PACKAGE_ID, 'eb15fa81f4a09a8963215a725026240f');
    const ids = PACKAGES.flatMap((p) => [p.id, ...p.groups.flatMap((g) => [g.id, ...g.rules.map((r) => r.id)])]);
    assert.equal(new Set(ids).size, ids.length);
    for (const p of PACKAGES) for (const g of p.groups) assert.match(g.id, /^[0-9a-f]{32}$/);
    for (const r of PACKAGES[0].groups.flatMap((g) => g.rules)) assert.match(r.id, /^100\d{3}$/);
    for (const r of PACKAGES[1].groups.flatMap((g) => g.rules)) assert.match(r.id, /^9\d{5}$/);
  });
});

describe('packages', () => {
  const cf = { id: CLOUDFLARE_PACKAGE_ID, name: 'CloudFlare', description: 'Rules written by Cloudflare for common attacks and for the vulnerabilities of popular applications.', detection_mode: 'traditional', zone_id: ZONE_ID, status: 'active' };
  const ow = { id: OWASP_PACKAGE_ID, name: 'OWASP ModSecurity Core Rule Set', description: 'Covers OWASP Top 10 vulnerabilities, and more.', detection_mode: 'anomaly', zone_id: ZONE_ID, status: 'active', sensitivity: 'high', action_mode: 'challenge' };

  test('list, with the §5.1 objects (every one: paging is the caller\'s)', () => {
    assert.deepEqual(listPackages(S), { ok: true, result: [cf, ow] });
  });
  test('filters and order', () => {
    assert.deepEqual(ok(listPackages(S, { name: 'owasp' })).result.map((p) => p.name), ['OWASP ModSecurity Core Rule Set']);
    assert.deepEqual(ok(listPackages(S, { order: 'name', direction: 'desc' })).result.map((p) => p.name), ['OWASP ModSecurity Core Rule Set', 'CloudFlare']);
    assert.deepEqual(ok(listPackages(S, { page: '2', per_page: '1' })).result.length, 2, 'page and per_page are not list options of the core');
  });
  test('get, and get unknown', () => {
    assert.deepEqual(ok(getPackage(S, OWASP_PACKAGE_ID)).result, ow);
    assert.deepEqual(err(getPackage(S, 'f'.repeat(32))), { code: 'not-found', message: `WAF package ${'f'.repeat(32)} does not exist` });
  });
  test('patch sensitivity and action_mode', () => {
    const a = ok(patchPackage(S, OWASP_PACKAGE_ID, { sensitivity: 'medium' }));
    assert.deepEqual(a.result, { ...ow, sensitivity: 'medium' });
    const b = ok(patchPackage(a.settings, OWASP_PACKAGE_ID, { action_mode: 'simulate' }));
    assert.deepEqual(b.result, { ...ow, sensitivity: 'medium', action_mode: 'simulate' });
    assert.deepEqual(b.settings.packages, { [OWASP_PACKAGE_ID]: { sensitivity: 'medium', action_mode: 'simulate' } });
    assert.deepEqual(S.packages, undefined, 'pure: the input is untouched');
  });
  const errors: [string, string, unknown, MigrationErrorCode, string, string?][] = [
    ['bad sensitivity', OWASP_PACKAGE_ID, { sensitivity: 'extreme' }, 'invalid-value', "'extreme' is not a valid value for sensitivity because it must be one of: high, medium, low, off", '/sensitivity'],
    ['bad action_mode', OWASP_PACKAGE_ID, { sensitivity: 'low', action_mode: 'log' }, 'invalid-value', "'log' is not a valid value for action_mode because it must be one of: simulate, block, challenge", '/action_mode'],
    ['a number', OWASP_PACKAGE_ID, { sensitivity: 3 }, 'invalid-value', "'3' is not a valid value for sensitivity because it must be one of: high, medium, low, off", '/sensitivity'],
    ['unknown field', OWASP_PACKAGE_ID, { mode: 'on' }, 'unknown-field', 'invalid JSON: unknown field "mode" (a package accepts "sensitivity" and "action_mode")', '/mode'],
    ['empty body', OWASP_PACKAGE_ID, {}, 'missing-field', 'nothing to change: send "sensitivity" (high|medium|low|off) and/or "action_mode" (simulate|block|challenge)', ''],
    ['not an object', OWASP_PACKAGE_ID, ['high'], 'invalid-value', 'the request body must be a JSON object such as {"sensitivity": "medium", "action_mode": "block"}', ''],
    [
      'a traditional package',
      CLOUDFLARE_PACKAGE_ID,
      { sensitivity: 'low' },
      'invalid-value',
      `package ${CLOUDFLARE_PACKAGE_ID} ("CloudFlare") uses the traditional detection mode: sensitivity and action_mode can only be set on an anomaly package ("OWASP ModSecurity Core Rule Set", ${OWASP_PACKAGE_ID}); change its rule groups and rules instead`,
      '/sensitivity',
    ],
  ];
  for (const [name, id, body, code, message, pointer] of errors) {
    test(`patch error: ${name}`, () => assert.deepEqual(err(patchPackage(S, id, body)), { code, message, ...(pointer !== undefined ? { pointer } : {}) }));
  }
});

describe('groups', () => {
  test('list with counts, filters, order', () => {
    const all = ok(listGroups(S, CLOUDFLARE_PACKAGE_ID));
    assert.deepEqual(
      all.result.map((g) => [g.name, g.mode, g.rules_count, g.modified_rules_count]),
      [
        ['Cloudflare Specials', 'on', 10, 0],
        ['Cloudflare WordPress', 'off', 3, 0],
        ['Cloudflare Drupal', 'off', 2, 0],
        ['Cloudflare Joomla', 'off', 2, 0],
        ['Cloudflare PHP', 'off', 2, 0],
        ['Cloudflare Magento', 'off', 2, 0],
        ['Cloudflare Miscellaneous', 'on', 2, 0],
      ],
    );
    assert.deepEqual(all.result[5], { id: MAGENTO_GROUP_ID, name: 'Cloudflare Magento', description: 'Rules for Magento stores.', rules_count: 2, modified_rules_count: 0, package_id: CLOUDFLARE_PACKAGE_ID, mode: 'off', allowed_modes: ['on', 'off'] });
    assert.deepEqual(ok(listGroups(S, CLOUDFLARE_PACKAGE_ID, { mode: 'on' })).result.map((g) => g.name), ['Cloudflare Specials', 'Cloudflare Miscellaneous']);
    assert.deepEqual(ok(listGroups(S, OWASP_PACKAGE_ID, { name: 'xss' })).result.map((g) => g.name), ['OWASP XSS Attacks', 'OWASP Uri XSS Attacks']);
    assert.deepEqual(ok(listGroups(S, OWASP_PACKAGE_ID, { rules_count: '4' })).result.map((g) => g.name), ['OWASP Generic Attacks', 'OWASP SQL Injection Attacks']);
    assert.deepEqual(ok(listGroups(S, OWASP_PACKAGE_ID, { mode: 'off', name: 'bad', match: 'any' })).result.map((g) => g.name), ['OWASP Bad Robots', 'OWASP Trojan Detection']);
    assert.deepEqual(ok(listGroups(S, OWASP_PACKAGE_ID, { order: 'rules_count', direction: 'desc' })).result.map((g) => g.rules_count), [4, 4, 3, 3, 3, 2, 2, 1]);
  });
  test('patch mode, and the counts follow rule changes', () => {
    const a = ok(patchGroup(S, CLOUDFLARE_PACKAGE_ID, MAGENTO_GROUP_ID, { mode: 'on' }));
    assert.equal(a.result.mode, 'on');
    const b = ok(patchRule(a.settings, CLOUDFLARE_PACKAGE_ID, '100013', { mode: 'simulate' }));
    assert.deepEqual(ok(getGroup(b.settings, CLOUDFLARE_PACKAGE_ID, MAGENTO_GROUP_ID)).result.modified_rules_count, 1);
  });
  const errors: [string, string, string, unknown, MigrationError][] = [
    ['bad mode', CLOUDFLARE_PACKAGE_ID, MAGENTO_GROUP_ID, { mode: 'default' }, { code: 'invalid-value', pointer: '/mode', message: "'default' is not a valid value for mode because it must be one of the group's allowed_modes: on, off" }],
    ['missing mode', CLOUDFLARE_PACKAGE_ID, MAGENTO_GROUP_ID, {}, { code: 'missing-field', pointer: '/mode', message: 'mode is required: one of on, off' }],
    ['unknown field', CLOUDFLARE_PACKAGE_ID, MAGENTO_GROUP_ID, { mode: 'on', name: 'x' }, { code: 'unknown-field', pointer: '/name', message: 'invalid JSON: unknown field "name" (a rule group accepts only "mode")' }],
    ['group of another package', OWASP_PACKAGE_ID, MAGENTO_GROUP_ID, { mode: 'on' }, { code: 'not-found', message: `rule group ${MAGENTO_GROUP_ID} of package ${OWASP_PACKAGE_ID} does not exist` }],
  ];
  for (const [name, pkg, group, body, e] of errors) test(`patch error: ${name}`, () => assert.deepEqual(err(patchGroup(S, pkg, group, body)), e));
  test('list error: bad mode filter', () =>
    assert.deepEqual(err(listGroups(S, OWASP_PACKAGE_ID, { mode: 'maybe' })), { code: 'invalid-value', message: "'maybe' is not a valid value for mode because it must be one of: on, off" }));
});

describe('rules', () => {
  test('the three flavours as §5.3 objects', () => {
    assert.deepEqual(ok(getRule(S, CLOUDFLARE_PACKAGE_ID, '100015')).result, {
      id: '100015',
      description: 'Anomaly:URL:Query String - Multiple Slashes, Relative Paths, CR, LF or NULL',
      priority: '6',
      package_id: CLOUDFLARE_PACKAGE_ID,
      group: { id: groupIdOf('Cloudflare Specials'), name: 'Cloudflare Specials' },
      mode: 'default',
      allowed_modes: ['default', 'disable', 'simulate', 'block', 'challenge'],
      default_mode: 'challenge',
    });
    assert.deepEqual(ok(getRule(S, CLOUDFLARE_PACKAGE_ID, '100048')).result, {
      id: '100048',
      description: 'WordPress - Allow requests to the admin area from logged-in users',
      priority: '13',
      package_id: CLOUDFLARE_PACKAGE_ID,
      group: { id: groupIdOf('Cloudflare WordPress'), name: 'Cloudflare WordPress' },
      mode: 'on',
      allowed_modes: ['on', 'off'],
    });
    assert.deepEqual(ok(getRule(S, OWASP_PACKAGE_ID, '973338')).result, {
      id: '973338',
      description: 'XSS Filter - Category 3: Javascript URI Vector',
      priority: '21',
      package_id: OWASP_PACKAGE_ID,
      group: { id: groupIdOf('OWASP Uri XSS Attacks'), name: 'OWASP Uri XSS Attacks' },
      mode: 'off',
      allowed_modes: ['on', 'off'],
    });
  });
  const ids = (q: Record<string, string>, pkg = CLOUDFLARE_PACKAGE_ID, s: ZoneWafSettings = S) => ok(listRules(s, pkg, q)).result.map((r) => r.id);
  test('filters: mode (by what the rule does), group_id, description, priority', () => {
    assert.deepEqual(ids({ mode: 'CHL' }), ['100005', '100015', '100020', '100012']);
    assert.deepEqual(ids({ mode: 'SIM' }), ['100038', '100045', '100051']);
    assert.deepEqual(ids({ mode: 'DIS' }), ['100030']);
    assert.deepEqual(ids({ mode: 'BLK', group_id: MAGENTO_GROUP_ID }), ['100013', '100014']);
    assert.deepEqual(ids({ mode: 'off' }, OWASP_PACKAGE_ID), ['973338']);
    assert.deepEqual(ids({ description: 'cve:cve-2018' }), ['100006', '100007']);
    assert.deepEqual(ids({ priority: '3' }), ['100003']);
    assert.deepEqual(ids({ description: 'joomla', priority: '1', match: 'any' }), ['100000', '100009', '100010']);
    const s = ok(patchRule(S, CLOUDFLARE_PACKAGE_ID, '100000', { mode: 'challenge' })).settings;
    assert.deepEqual(ids({ mode: 'CHL' }, CLOUDFLARE_PACKAGE_ID, s), ['100000', '100005', '100015', '100020', '100012']);
  });
  test('order and direction', () => {
    assert.deepEqual(ids({ order: 'description' }).slice(0, 5), ['100050', '100030', '100051', '100015', '100045']);
    assert.deepEqual(ids({ order: 'priority', direction: 'desc' }, OWASP_PACKAGE_ID).slice(0, 5), ['950110', '973338', '973337', '973336', '973300']);
  });
  test('patch: every allowed mode of a deny rule, on/off of the others', () => {
    let s = S;
    for (const mode of ['disable', 'simulate', 'block', 'challenge', 'default']) {
      const r = ok(patchRule(s, CLOUDFLARE_PACKAGE_ID, '100015', { mode }));
      assert.equal(r.result.mode, mode);
      s = r.settings;
    }
    assert.equal(ok(patchRule(S, OWASP_PACKAGE_ID, '950001', { mode: 'off' })).result.mode, 'off');
    assert.equal(ok(patchRule(S, CLOUDFLARE_PACKAGE_ID, '100048', { mode: 'off' })).result.mode, 'off');
  });
  const errors: [string, string, string, unknown, MigrationError][] = [
    [
      'deny rule, on',
      CLOUDFLARE_PACKAGE_ID,
      '100015',
      { mode: 'on' },
      { code: 'invalid-value', pointer: '/mode', message: "'on' is not a valid value for mode because rule 100015 is a traditional deny rule: its allowed_modes are default, disable, simulate, block, challenge" },
    ],
    ['anomaly rule, block', OWASP_PACKAGE_ID, '950001', { mode: 'block' }, { code: 'invalid-value', pointer: '/mode', message: "'block' is not a valid value for mode because rule 950001 is an anomaly rule: its allowed_modes are on, off" }],
    ['allow rule, disable', CLOUDFLARE_PACKAGE_ID, '100048', { mode: 'disable' }, { code: 'invalid-value', pointer: '/mode', message: "'disable' is not a valid value for mode because rule 100048 is a traditional allow rule: its allowed_modes are on, off" }],
    ['missing mode', OWASP_PACKAGE_ID, '950001', {}, { code: 'missing-field', pointer: '/mode', message: "mode is required: one of the rule's allowed_modes: on, off" }],
    ['unknown field', OWASP_PACKAGE_ID, '950001', { mode: 'on', priority: 1 }, { code: 'unknown-field', pointer: '/priority', message: 'invalid JSON: unknown field "priority" (a rule accepts only "mode")' }],
    ['rule of another package', OWASP_PACKAGE_ID, '100015', { mode: 'on' }, { code: 'not-found', message: `rule 100015 of package ${OWASP_PACKAGE_ID} does not exist` }],
  ];
  for (const [name, pkg, rule, body, e] of errors) test(`patch error: ${name}`, () => assert.deepEqual(err(patchRule(S, pkg, rule, body)), e));
  test('list error: bad mode filter', () =>
    assert.match(err(listRules(S, CLOUDFLARE_PACKAGE_ID, { mode: 'XYZ' })).message, /^'XYZ' is not a valid value for mode because it must be one of: DIS, CHL, BLK, SIM/));
});

describe('URI-based overrides', () => {
  const body = { description: 'Enable Cloudflare Magento ruleset for shop.example.com', urls: ['shop.example.com/*'], priority: 1, groups: { [MAGENTO_GROUP_ID]: 'default' }, rules: { '100015': 'disable' }, rewrite_action: { default: 'simulate', block: 'challenge' } };
  const ID = 'a27cece9ec0e4af39ae9c58e3326e2b6';
  test('create, get, list, replace, delete', () => {
    const c = ok(createOverride(S, body, ID));
    const created = { id: ID, ...body, paused: false };
    assert.deepEqual(c.result, created);
    assert.deepEqual(ok(getOverride(c.settings, ID)).result, created);
    const c2 = ok(createOverride(c.settings, { urls: ['a.example.com/*'], priority: -5 }, 'b'.repeat(32)));
    assert.deepEqual(c2.result, { id: 'b'.repeat(32), description: null, urls: ['a.example.com/*'], priority: -5, paused: false, groups: {}, rules: {}, rewrite_action: {} });
    assert.deepEqual(listOverrides(c2.settings).result.map((o) => o.id), ['b'.repeat(32), ID], 'lowest priority first');
    const u = ok(updateOverride(c2.settings, ID, { id: ID, urls: ['shop.example.com/cart/*'], rules: {}, rewrite_action: { block: 'simulate' } }));
    assert.deepEqual(u.result, { id: ID, description: null, urls: ['shop.example.com/cart/*'], priority: 1, paused: false, groups: {}, rules: {}, rewrite_action: { block: 'simulate' } });
    const d = ok(deleteOverride(u.settings, ID));
    assert.deepEqual(d.result, { id: ID });
    assert.deepEqual(listOverrides(d.settings).result.map((o) => o.id), ['b'.repeat(32)]);
    assert.equal(err(getOverride(d.settings, ID)).code, 'not-found');
  });
  const E = (message: string, pointer: string, code: MigrationErrorCode = 'invalid-value'): MigrationError => ({ code, message, pointer });
  const createErrors: [string, unknown, MigrationError][] = [
    ['no urls', { rules: {} }, E('urls is required: a list of URL patterns such as ["shop.example.com/*"]', '/urls', 'missing-field')],
    ['empty urls', { urls: [] }, E('\'[]\' is not a valid value for urls because it must be a non-empty list of URL patterns such as ["shop.example.com/*"]', '/urls')],
    ['a url not a string', { urls: ['a.example.com/*', 7] }, E('\'7\' is not a valid value for urls because every URL pattern must be a non-empty string such as "shop.example.com/*"', '/urls/1')],
    ['priority too low', { urls: ['x/*'], priority: -1_000_000_001 }, E("'-1000000001' is not a valid value for priority because it must be an integer from -1000000000 to 1000000000 (lower runs first)", '/priority')],
    ['priority not an integer', { urls: ['x/*'], priority: 1.5 }, E("'1.5' is not a valid value for priority because it must be an integer from -1000000000 to 1000000000 (lower runs first)", '/priority')],
    ['rule value', { urls: ['x/*'], rules: { '100015': 'off' } }, E("'off' is not a valid value for rules because the value for 100015 must be one of: challenge, block, simulate, disable, default", '/rules/100015')],
    ['unknown rule', { urls: ['x/*'], rules: { '999999': 'block' } }, E("'999999' is not a valid value for rules because it is not the id of a rule of this zone's WAF packages", '/rules/999999')],
    ['unknown group', { urls: ['x/*'], groups: { ['0'.repeat(32)]: 'block' } }, E(`'${'0'.repeat(32)}' is not a valid value for groups because it is not the id of a rule group of this zone's WAF packages`, `/groups/${'0'.repeat(32)}`)],
    ['rewrite key', { urls: ['x/*'], rewrite_action: { log: 'block' } }, E("'log' is not a valid value for rewrite_action because its keys must be actions: block, challenge, default, disable, simulate", '/rewrite_action/log')],
    ['rewrite value', { urls: ['x/*'], rewrite_action: { block: 'allow' } }, E("'allow' is not a valid value for rewrite_action because the value for block must be one of: challenge, block, simulate, disable, default", '/rewrite_action/block')],
    ['description too long (not quoted back)', { urls: ['x/*'], description: 'd'.repeat(1025) }, E('a description of 1025 characters is not a valid value for description because it must be a string of at most 1024 characters (or null)', '/description')],
    ['description not a string', { urls: ['x/*'], description: 7 }, E("'7' is not a valid value for description because it must be a string of at most 1024 characters (or null)", '/description')],
    ['51 urls', { urls: Array.from({ length: 51 }, (_, i) => `x.example.com/${i}/*`) }, E('a list of 51 URL patterns is not a valid value for urls because an override has at most 50 URL patterns', '/urls')],
    ['a url of 501 characters (not quoted back)', { urls: ['x/*', `x.example.com/${'a'.repeat(487)}`] }, E('a URL pattern of 501 characters is not a valid value for urls because a URL pattern is at most 500 characters', '/urls/1')],
    ['paused not boolean', { urls: ['x/*'], paused: 'yes' }, E("'yes' is not a valid value for paused because it must be true or false", '/paused')],
    ['unknown field', { urls: ['x/*'], filter: 'x' }, E('invalid JSON: unknown field "filter" (an override accepts id, description, urls, priority, paused, groups, rules, rewrite_action)', '/filter', 'unknown-field')],
    ['id on create', { urls: ['x/*'], id: 'abc' }, E("'abc' is not a valid value for id because the id of a new override is assigned by the service", '/id')],
  ];
  for (const [name, b, e] of createErrors) test(`create error: ${name}`, () => assert.deepEqual(err(createOverride(S, b, ID)), e));
  test('the limits themselves are allowed: 50 URLs of 500 characters, a 1024-character description', () => {
    const urls = Array.from({ length: 50 }, (_, i) => `x.example.com/${String(i).padStart(2, '0')}/${'a'.repeat(483)}`);
    assert.equal(urls[0]!.length, 500);
    assert.deepEqual(ok(createOverride(S, { urls, description: 'd'.repeat(1024) }, ID)).result.urls, urls);
  });
  test('a zone has at most 1000 overrides: the 1001st is refused before its body is read; replacing and deleting still work', () => {
    let s: typeof S = S;
    for (let i = 0; i < 1000; i++) s = ok(createOverride(s, { urls: [`x.example.com/${i}/*`] }, i.toString(16).padStart(32, '0'))).settings;
    const full = E('the zone has 1000 URI-based overrides, the most a zone may have (1000): delete one, or add its URL patterns to an override with the same rules, before creating another', '');
    assert.deepEqual(err(createOverride(s, { urls: ['y/*'] }, ID)), full);
    assert.deepEqual(err(createOverride(s, { urls: 'not even a list' }, ID)), full);
    const first = '0'.repeat(32);
    assert.deepEqual(ok(updateOverride(s, first, { urls: ['z/*'], rules: {}, rewrite_action: {} })).result.urls, ['z/*']);
    const fewer = ok(deleteOverride(s, first)).settings;
    assert.equal(ok(createOverride(fewer, { urls: ['y/*'] }, ID)).settings.overrides!.length, 1000);
  });
  test('replace errors: rules and rewrite_action required, id must match', () => {
    const s = ok(createOverride(S, body, ID)).settings;
    assert.deepEqual(err(updateOverride(s, ID, { urls: ['x/*'], rules: {} })), E('rewrite_action is required when replacing an override (PUT needs urls, rules and rewrite_action)', '/rewrite_action', 'missing-field'));
    assert.deepEqual(err(updateOverride(s, ID, { urls: ['x/*'], rewrite_action: {} })), E('rules is required when replacing an override (PUT needs urls, rules and rewrite_action)', '/rules', 'missing-field'));
    assert.deepEqual(err(updateOverride(s, ID, { id: 'c'.repeat(32), urls: ['x/*'], rules: {}, rewrite_action: {} })), E(`'${'c'.repeat(32)}' is not a valid value for id because it must be the id in the URL (${ID})`, '/id'));
    assert.deepEqual(err(updateOverride(s, 'd'.repeat(32), body)).code, 'not-found');
    assert.deepEqual(err(deleteOverride(s, 'd'.repeat(32))), { code: 'not-found', message: `URI-based override ${'d'.repeat(32)} does not exist` });
  });
});

describe('the zone-wide switch (settings/waf)', () => {
  test('read and patch', () => {
    assert.deepEqual(wafZoneSetting(S), { id: 'waf', value: 'on', editable: true });
    const r = ok(patchWafZoneSetting(S, { value: 'off' }));
    assert.deepEqual([r.settings.enabled, r.result.value], [false, 'off']);
  });
  test('errors', () => {
    assert.deepEqual(err(patchWafZoneSetting(S, { value: true })), { code: 'invalid-value', pointer: '/value', message: "'true' is not a valid value for value because it must be on or off" });
    assert.deepEqual(err(patchWafZoneSetting(S, { value: 'on', id: 'waf' })), { code: 'unknown-field', pointer: '/id', message: 'invalid JSON: unknown field "id" (the waf setting accepts only "value")' });
  });
});
