// The Free Managed Ruleset: a subset of the vendor ruleset under the hosted id, for every plan.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FREE_RULE_REFS, FREE_RULES, freeRuleset } from '../../../server/src/managed/free';
import { VENDOR_RULES } from '../../../server/src/managed/vendor';
import { rulesetVersion } from '../../../server/src/rulesets/catalog';
import { mintId } from '../../../server/src/rulesets/managedIds';

test('the hosted id and name, every plan, one version', () => {
  assert.deepEqual(
    { id: freeRuleset.id, name: freeRuleset.name, kind: freeRuleset.kind, phase: freeRuleset.phase, plan: freeRuleset.plan, versions: freeRuleset.versions.map((v) => v.version) },
    { id: '77454fe2d30c4220b5701f6fdfb893ba', name: 'Cloudflare Free Managed Ruleset', kind: 'managed', phase: 'http_request_firewall_managed', plan: 'free', versions: ['1'] },
  );
  assert.equal(rulesetVersion(freeRuleset)!.rules, FREE_RULES);
});

test('the rules: the vendor rules for the listed vulnerabilities, in that order', () => {
  assert.deepEqual(FREE_RULES.map((r) => r.ref), [
    'log4shell-uri',
    'log4shell-header',
    'log4shell-body',
    'shellshock-header',
    'spring4shell',
    'struts-content-type-ognl',
    'confluence-ognl-path',
    'drupalgeddon2',
    'wp-file-manager-upload',
  ]);
  assert.equal(FREE_RULE_REFS.length, FREE_RULES.length);
  assert.ok(FREE_RULES.length < VENDOR_RULES.length / 4, 'a small subset');
});

test('each rule is its vendor rule (expression, action, categories, description) under an id of its own', () => {
  for (const rule of FREE_RULES) {
    const vendor = VENDOR_RULES.find((r) => r.ref === rule.ref)!;
    assert.deepEqual(
      [rule.expression, rule.action, rule.enabled, rule.categories, rule.description],
      [vendor.expression, vendor.action, vendor.enabled, vendor.categories, vendor.description],
      rule.ref,
    );
    assert.equal(rule.id, mintId(`free:${rule.ref}`), rule.ref);
    assert.notEqual(rule.id, vendor.id, rule.ref);
    assert.equal(rule.version, '1', rule.ref);
  }
});
