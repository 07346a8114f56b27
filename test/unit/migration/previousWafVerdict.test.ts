import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { readFileSync } from 'node:fs';
import { getRequest } from '../../getRequest';
import { prepareFields } from '../../../server/src/language/index';
import { parseHttpFile } from '../../../server/src/requests/http';
import { requestFields } from '../../../server/src/requests/fields';
import { owaspRuleset } from '../../../server/src/managed/owasp';
import type { ManagedCatalog, ManagedRule } from '../../../server/src/rulesets/catalog';
import { vendorRuleset } from '../../../server/src/managed/vendor';
import { compileZone } from '../../../server/src/rulesets/engine';
import {
  CLOUDFLARE_PACKAGE,
  CLOUDFLARE_PACKAGE_ID,
  cloudflareModeOverrides,
  defaultWafSettings,
  migrationConfig,
  OWASP_PACKAGE_ID,
  PREVIOUS_OWASP_ANOMALY_RULE_ID,
  previousWafStandIn,
  type ActionMode,
  type GroupMode,
  type MigrationZone,
  type RuleMode,
  type Sensitivity,
  type ZoneWafSettings,
} from '../../../server/src/migration/index';

// A catalog whose OWASP rules make the arithmetic obvious: +30 at PL1, +30 at PL2, +50 at PL3.
const score = (ref: string, level: number, word: string, increment: number): ManagedRule => ({
  id: ref.padEnd(32, '0'),
  ref,
  description: `${ref}: test rule`,
  expression: `http.request.uri.query contains "${word}"`,
  action: 'score',
  action_parameters: { increment },
  enabled: true,
  categories: [`paranoia-level-${level}`],
});
const CATALOG: ManagedCatalog = { rulesets: [vendorRuleset, owaspRuleset([score('a1', 1, 'attack', 30), score('b2', 2, 'pl2', 30), score('c3', 3, 'pl3', 50)])] };
const VENDOR_LOG4SHELL = vendorRuleset.versions[vendorRuleset.versions.length - 1].rules.find((r) => r.ref === 'log4shell-uri')!;

const req = (path: string, query = '') => getRequest(path, query);

const ZONE_ID = '023e105f4ecef8ad9ca31a8372d0c353';
const waf = (sensitivity?: Sensitivity, action_mode?: ActionMode, extra: Partial<ZoneWafSettings> = {}): ZoneWafSettings => ({
  zoneId: ZONE_ID,
  enabled: true,
  packages: { [OWASP_PACKAGE_ID]: { ...(sensitivity ? { sensitivity } : {}), ...(action_mode ? { action_mode } : {}) } },
  ...extra,
});
const zone = (w: ZoneWafSettings, extra: Partial<MigrationZone> = {}): MigrationZone => ({ plan: 'business', waf: w, ...extra });

describe('the OWASP package at its mapped paranoia level and threshold', () => {
  // [sensitivity, query, expected action (undefined = lets it through)]
  const cases: [Sensitivity | undefined, string, string | undefined][] = [
    [undefined, 'attack', undefined], // PL2/40: 30
    [undefined, 'attack&pl2', 'challenge'], // 60
    ['high', 'attack', undefined],
    ['high', 'attack&pl2', 'challenge'],
    ['high', 'pl3&pl2', undefined], // PL3 is off at PL2: 30
    ['medium', 'attack', 'challenge'], // PL1/25: 30
    ['medium', 'pl2', undefined], // PL2 off at PL1
    ['low', 'attack', undefined], // PL1/40: 30
    ['low', 'attack&pl2', undefined], // PL2 off: 30
    ['off', 'attack&pl2', undefined],
  ];
  for (const [sensitivity, query, action] of cases) {
    test(`${sensitivity ?? 'default'} · ?${query} → ${action ?? 'through'}`, () => {
      const s = previousWafStandIn(zone(waf(sensitivity)), CATALOG);
      assert.deepEqual(s.problems, []);
      const v = s.previousWaf(req('/', query));
      assert.equal(v?.action, action);
      if (action) assert.equal(v?.ruleId, PREVIOUS_OWASP_ANOMALY_RULE_ID);
    });
  }
  const actions: [ActionMode, string][] = [
    ['simulate', 'simulate'],
    ['block', 'block'],
    ['challenge', 'challenge'],
  ];
  for (const [mode, action] of actions) {
    test(`action_mode ${mode} → ${action}`, () => {
      const v = previousWafStandIn(zone(waf('medium', mode)), CATALOG).previousWaf(req('/', 'attack'));
      assert.equal(v?.action, action);
      assert.equal(v?.ruleId, '981176');
      assert.match(v?.description ?? '', mode === 'simulate' ? /Inbound Anomaly Score Exceeded \(simulate, score 30\)$/ : /Inbound Anomaly Score Exceeded \(score 30 ≥ 25\)$/);
    });
  }
});

describe('the CloudFlare package, the switches and the exceptions', () => {
  const LOG4J = '${jndi:ldap://x.example/a}';
  test('the vendor ruleset acts for the CloudFlare package', () => {
    const v = previousWafStandIn(zone(waf('off')), CATALOG).previousWaf(req('/', LOG4J));
    assert.deepEqual(v, { action: 'block', ruleId: VENDOR_LOG4SHELL.id, description: `CloudFlare package: ${VENDOR_LOG4SHELL.description}` });
  });
  test('CloudFlare package off → nothing from it', () => {
    const w = waf('off', undefined, { packages: { [OWASP_PACKAGE_ID]: { sensitivity: 'off' }, [CLOUDFLARE_PACKAGE_ID]: { enabled: false } } });
    assert.equal(previousWafStandIn(zone(w), CATALOG).previousWaf(req('/', LOG4J)), undefined);
  });
  test('the zone-wide switch off → nothing at all', () => {
    const s = previousWafStandIn(zone(waf('medium', 'block', { enabled: false })), CATALOG);
    assert.equal(s.previousWaf(req('/', LOG4J)), undefined);
    assert.equal(s.previousWaf(req('/', 'attack')), undefined);
  });
  test('a page rule turning the WAF off for a path', () => {
    const s = previousWafStandIn(zone(waf('medium', 'block'), { pageRules: [{ id: 'p1', targets: ['example.com/admin/*'], waf: 'off' }] }), CATALOG);
    assert.equal(s.previousWaf(req('/admin/x', 'attack')), undefined);
    assert.equal(s.previousWaf(req('/shop', 'attack'))?.action, 'block');
  });
  test('Free plan → no previous WAF', () => {
    assert.equal(previousWafStandIn({ plan: 'free', waf: waf('medium', 'block') }, CATALOG).previousWaf(req('/', 'attack')), undefined);
  });
});

describe('group and rule modes of the CloudFlare package', () => {
  const VENDOR_RULES = vendorRuleset.versions[vendorRuleset.versions.length - 1].rules;
  const vendor = (ref: string) => VENDOR_RULES.find((r) => r.ref === ref)!;
  const TAUTOLOGY = vendor('sqli-tautology-uri');
  const WOOCOMMERCE = vendor('wp-woocommerce-payments-auth-bypass');
  const groupId = (name: string) => CLOUDFLARE_PACKAGE.groups.find((g) => g.name === name)!.id;
  const SPECIALS = groupId('Cloudflare Specials');
  const WORDPRESS = groupId('Cloudflare WordPress');
  // OWASP off, so only the CloudFlare package decides.
  const modes = (groupModes: Record<string, GroupMode> = {}, ruleModes: Record<string, RuleMode> = {}) => zone(waf('off', undefined, { groupModes, ruleModes }));
  const tautology = req('/search', "id=1' or 1=1");
  const woocommerce = (() => {
    const [match] = parseHttpFile(readFileSync(new URL('../../fixtures/vendor/wp-woocommerce-payments-auth-bypass.http', import.meta.url), 'utf8')).requests;
    return prepareFields(requestFields(match!).fields).values;
  })();
  const verdict = (z: MigrationZone, fields = tautology) => {
    const s = previousWafStandIn(z, CATALOG);
    assert.deepEqual(s.problems, []);
    return s.previousWaf(fields);
  };

  test('untouched: 100008 (default_mode block) blocks with its vendor counterpart', () => {
    assert.deepEqual(verdict(modes()), { action: 'block', ruleId: TAUTOLOGY.id, description: 'CloudFlare package: SQLi - Tautology - URI' });
    assert.equal(verdict(modes({}, { '100008': 'default' }))?.action, 'block');
  });
  test('rule 100008 disabled → not blocked', () => {
    assert.equal(verdict(modes({}, { '100008': 'disable' })), undefined);
  });
  test('its group off → not blocked', () => {
    assert.equal(verdict(modes({ [SPECIALS]: 'off' })), undefined);
    // A rule mode does not bring back a rule of a group that is off.
    assert.equal(verdict(modes({ [SPECIALS]: 'off' }, { '100008': 'block' })), undefined);
  });
  test('rule 100008 simulate → logged as simulate, not blocked', () => {
    assert.deepEqual(verdict(modes({}, { '100008': 'simulate' })), { action: 'simulate', ruleId: TAUTOLOGY.id, description: 'CloudFlare package: SQLi - Tautology - URI (simulate)' });
  });
  test('rule 100008 set to challenge → challenge', () => {
    assert.deepEqual(verdict(modes({}, { '100008': 'challenge' })), { action: 'challenge', ruleId: TAUTOLOGY.id, description: 'CloudFlare package: SQLi - Tautology - URI' });
  });
  test('a group off by default (Cloudflare WordPress) leaves its counterparts out until it is turned on', () => {
    assert.equal(verdict(modes(), woocommerce), undefined);
    assert.deepEqual(verdict(modes({ [WORDPRESS]: 'on' }), woocommerce), { action: 'block', ruleId: WOOCOMMERCE.id, description: `CloudFlare package: ${WOOCOMMERCE.description}` });
    assert.equal(verdict(modes({ [WORDPRESS]: 'on' }, { '100021': 'disable' }), woocommerce), undefined);
  });
  test('the overrides: only where a counterpart does something else than its default', () => {
    const settings = (groupModes: Record<string, GroupMode>, ruleModes: Record<string, RuleMode>) => ({ ...defaultWafSettings(ZONE_ID), groupModes, ruleModes });
    // Untouched: 100005 challenges by default (its counterpart blocks); the WordPress, Drupal, Joomla and PHP groups are off by default.
    assert.deepEqual(cloudflareModeOverrides(defaultWafSettings(ZONE_ID), VENDOR_RULES, 'effective').overrides, [
      { id: vendor('cmd-injection-body').id, action: 'challenge', enabled: true },
      ...['wp-xmlrpc-pingback', 'wp-woocommerce-payments-auth-bypass', 'drupalgeddon2', 'drupalgeddon3', 'joomla-session-object-injection', 'php-wrapper'].map((ref) => ({ id: vendor(ref).id, enabled: false })),
    ]);
    assert.deepEqual(cloudflareModeOverrides(settings({ [WORDPRESS]: 'on' }, { '100001': 'simulate', '100008': 'challenge', '100030': 'block' }), VENDOR_RULES, 'effective').overrides, [
      { id: vendor('xss-script-tag').id, action: 'log', enabled: true },
      { id: vendor('cmd-injection-body').id, action: 'challenge', enabled: true },
      { id: TAUTOLOGY.id, action: 'challenge', enabled: true },
      { id: vendor('wp-xmlrpc-pingback').id, action: 'challenge', enabled: true },
      ...['drupalgeddon2', 'drupalgeddon3', 'joomla-session-object-injection', 'php-wrapper'].map((ref) => ({ id: vendor(ref).id, enabled: false })),
    ]);
    // The rules that have a counterpart (the same description, or the one named): what the header and docs name.
    const mapped = CLOUDFLARE_PACKAGE.groups.flatMap((g) => g.rules).filter((r) => VENDOR_RULES.some((v) => v.description === (r.counterpart ?? r.description)));
    assert.deepEqual(mapped.map((r) => r.id).sort(), ['100000', '100001', '100003', '100005', '100006', '100007', '100008', '100010', '100011', '100016', '100020', '100021']);
  });
  test('the migration config is unchanged: it carries no group or rule mode', () => {
    const z = modes({ [SPECIALS]: 'off' }, { '100008': 'disable' });
    assert.deepEqual(migrationConfig(z, CATALOG).config, migrationConfig(modes(), CATALOG).config);
  });
});

describe('in the engine, validation mode', () => {
  // The new configuration as the user tuned it during validation: OWASP at PL1 with threshold 60 (logs nothing here).
  const tuned = (z: MigrationZone) => {
    const rules = migrationConfig(z, CATALOG).config.rules.map((r) => ({ ...r, id: undefined, version: undefined, ref: undefined }));
    return rules.map((r) =>
      (r.action_parameters as { id?: string }).id === owaspRuleset().id
        ? { ...r, action_parameters: { ...(r.action_parameters as object), overrides: { categories: [2, 3, 4].map((n) => ({ category: `paranoia-level-${n}`, enabled: false })), rules: [{ id: owaspRuleset().anomalyRuleId!, score_threshold: 60 }] } } }
        : r,
    );
  };
  const z = zone(waf('medium', 'block'));
  const compiled = (extraLegacy: Partial<{ firewallRules: MigrationZone['firewallRules'] }> = {}) =>
    compileZone(
      {
        entryPoints: { http_request_firewall_managed: { kind: 'zone', phase: 'http_request_firewall_managed', rules: tuned(z) } },
        catalog: CATALOG,
        plan: 'enterprise',
        legacy: { firewallRules: extraLegacy.firewallRules ?? [], migrated: false, validationMode: true },
      },
      { previousWaf: previousWafStandIn(z, CATALOG).previousWaf },
    );

  test('the previous WAF blocks what the tuned new configuration lets through', () => {
    const ev = compiled().evaluate(req('/', 'attack'));
    assert.deepEqual(ev.decision, { action: 'block', phase: 'previous_waf', ruleId: '981176', ref: '981176', description: 'OWASP ModSecurity Core Rule Set: Inbound Anomaly Score Exceeded (score 30 ≥ 25)', score: 30, threshold: 25 });
    // The trace entry carries the score too: the security event of this block reads it there.
    assert.deepEqual(ev.trace.filter((t) => t.phase === 'previous_waf').map((t) => [t.outcome, t.score, t.threshold]), [['terminated', 30, 25]]);
    assert.equal(ev.validation?.newDecision.action, 'allow-through');
    assert.equal(ev.validation?.previous?.action, 'block');
  });
  test('a firewall rule bypassing the WAF skips the previous WAF too', () => {
    const ev = compiled({ firewallRules: [{ id: 'fw1', action: 'bypass', products: ['waf'], filter: { expression: 'ip.src eq 192.0.2.1' } }] }).evaluate(req('/', 'attack'));
    assert.equal(ev.decision.action, 'allow-through');
    assert.equal(ev.validation?.previous, undefined);
  });
});
