// Override edits on ruleset JSON text: the paranoia level and the anomaly threshold of the
// execute rule deploying the OWASP-based ruleset, as minimal edits that keep the rest.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { defaultCatalog } from '../../../server/src/managed/catalog';
import { OWASP_ANOMALY_RULE_ID, OWASP_RULESET_ID, VENDOR_RULESET_ID } from '../../../server/src/rulesets/managedIds';
import { managedExecuteRules, setParanoiaLevelInText, setScoreThresholdInText } from '../../../server/src/managed/editOverrides';

const catalog = defaultCatalog;
const doc = (overrides?: unknown) =>
  JSON.stringify(
    {
      name: 'default',
      phase: 'http_request_firewall_managed',
      rules: [
        { ref: 'vendor', action: 'execute', expression: 'true', action_parameters: { id: VENDOR_RULESET_ID } },
        { ref: 'owasp', action: 'execute', expression: 'true', action_parameters: { id: OWASP_RULESET_ID, ...(overrides ? { overrides } : {}) } },
      ],
    },
    null,
    4,
  ) + '\n';

describe('managedExecuteRules', () => {
  test('lists the execute rules with their level and threshold', () => {
    const { rules } = managedExecuteRules(doc(), catalog);
    assert.deepEqual(
      rules.map((r) => [r.index, r.scored, r.level, r.threshold]),
      [
        [0, false, 0, undefined],
        [1, true, 4, 40],
      ],
    );
  });
  test('says what is wrong with a file it cannot read', () => {
    assert.match(managedExecuteRules('{"rules": [', catalog).error ?? '', /not valid JSON/);
    assert.match(managedExecuteRules('{"name": "x"}', catalog).error ?? '', /no "rules" array/);
  });
});

describe('setParanoiaLevelInText', () => {
  test('PL2 disables levels 3 and 4, keeps the 4-space indentation and the other rule', () => {
    const before = doc();
    const r = setParanoiaLevelInText(before, 2, { catalog });
    assert.equal(r.error, undefined);
    assert.equal(r.ruleIndex, 1);
    const parsed = JSON.parse(r.text);
    assert.deepEqual(parsed.rules[1].action_parameters.overrides, {
      categories: [
        { category: 'paranoia-level-3', enabled: false },
        { category: 'paranoia-level-4', enabled: false },
      ],
    });
    assert.deepEqual(parsed.rules[0], JSON.parse(before).rules[0]);
    assert.match(r.text, /\n {20}"categories": \[\n {24}\{/, r.text);
    assert.equal(managedExecuteRules(r.text, catalog).rules[1].level, 2);
    // Back to PL4: the level overrides go, and with them the empty overrides object.
    const back = setParanoiaLevelInText(r.text, 4, { catalog });
    assert.deepEqual(JSON.parse(back.text), JSON.parse(before));
  });
  test('keeps other overrides as they are', () => {
    const r = setParanoiaLevelInText(doc({ action: 'log', rules: [{ id: OWASP_ANOMALY_RULE_ID, score_threshold: 25 }] }), 1, { catalog });
    const o = JSON.parse(r.text).rules[1].action_parameters.overrides;
    assert.equal(o.action, 'log');
    assert.deepEqual(o.rules, [{ id: OWASP_ANOMALY_RULE_ID, score_threshold: 25 }]);
    assert.equal(o.categories.length, 3);
  });
  test('no scored execute rule: an error that says what to add', () => {
    const text = JSON.stringify({ rules: [{ action: 'execute', expression: 'true', action_parameters: { id: VENDOR_RULESET_ID } }] });
    const r = setParanoiaLevelInText(text, 1, { catalog });
    assert.match(r.error ?? '', /no execute rule .* scored managed ruleset/);
    assert.equal(r.text, text);
    assert.match(setParanoiaLevelInText(text, 1, { catalog, ruleIndex: 0 }).error ?? '', /has no anomaly score/);
  });
});

describe('setScoreThresholdInText', () => {
  test('sets the threshold and action on the anomaly rule override', () => {
    const r = setScoreThresholdInText(doc(), 25, 'managed_challenge', { catalog });
    const o = JSON.parse(r.text).rules[1].action_parameters.overrides;
    assert.deepEqual(o, { rules: [{ id: OWASP_ANOMALY_RULE_ID, score_threshold: 25, action: 'managed_challenge' }] });
    const again = setScoreThresholdInText(r.text, 60, undefined, { catalog });
    assert.deepEqual(JSON.parse(again.text).rules[1].action_parameters.overrides.rules, [{ id: OWASP_ANOMALY_RULE_ID, score_threshold: 60, action: 'managed_challenge' }]);
    assert.equal(managedExecuteRules(again.text, catalog).rules[1].threshold, 60);
  });
});
