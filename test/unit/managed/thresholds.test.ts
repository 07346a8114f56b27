// One wording of the anomaly score threshold (the hosted dashboard's), used by the picker,
// the execute rule's CodeLens and hover, and the migration review; the pickers mark the
// value in effect and name the action kept.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { executeSummary } from '../../../server/src/lsp/executeLens';
import { defaultCatalog } from '../../../server/src/managed/catalog';
import { NAMED_THRESHOLDS, thresholdText } from '../../../server/src/managed/thresholds';
import { keepActionLabel, levelItems, thresholdItems } from '../../../server/src/managed/tuningChoices';
import { sensitivityMigrationText } from '../../../server/src/migration/sensitivityWording';
import { OWASP_RULESET_ID } from '../../../server/src/rulesets/managedIds';

test('the table: High 25, Medium 40, Low 60, in the dashboard’s words', () => {
  assert.deepEqual(
    NAMED_THRESHOLDS.map((n) => [n.threshold, n.name, n.label]),
    [
      [25, 'High', 'High – 25 and higher'],
      [40, 'Medium', 'Medium – 40 and higher'],
      [60, 'Low', 'Low – 60 and higher'],
    ],
  );
  assert.equal(thresholdText(25), 'High – 25 and higher');
  assert.equal(thresholdText(30), '30 and higher (custom)');
});

test('the threshold picker: the table, the current one marked (also a custom one), then Other…', () => {
  assert.deepEqual(
    thresholdItems(25).map((i) => [i.label, i.description, i.detail, i.value]),
    [
      ['High – 25 and higher', 'current', 'acts on the most requests (more false positives)', 25],
      ['Medium – 40 and higher', '', 'between the two; the default', 40],
      ['Low – 60 and higher', '', 'acts on the fewest requests (attacks may pass)', 60],
      ['Other…', 'any whole number', undefined, -1],
    ],
  );
  assert.deepEqual(thresholdItems(33).map((i) => i.description), ['', '', '', 'current: 33 and higher']);
  assert.deepEqual(thresholdItems(undefined).map((i) => i.description), ['', '', '', 'any whole number']);
});

test('the paranoia picker marks the level in effect; "Keep the current action" names it', () => {
  assert.deepEqual(levelItems(2).map((i) => [i.label, i.description]), [
    ['Paranoia level 1', ''],
    ['Paranoia level 2', 'current'],
    ['Paranoia level 3', ''],
    ['Paranoia level 4', ''],
  ]);
  assert.deepEqual(levelItems(0).map((i) => i.description), ['', '', '', '']);
  assert.equal(levelItems(1)[0].detail, 'PL1: the fewest false positives');
  assert.equal(keepActionLabel('block'), 'Keep the current action (block)');
  assert.equal(keepActionLabel(undefined), 'Keep the current action');
});

test('the CodeLens of an execute rule says the threshold the same way', () => {
  const ruleset = defaultCatalog.rulesets.find((r) => r.id === OWASP_RULESET_ID)!;
  const rule = { action: 'execute', expression: 'true', action_parameters: { id: OWASP_RULESET_ID, overrides: { rules: [{ id: ruleset.anomalyRuleId!, score_threshold: 25, action: 'log' }] } } };
  const version = ruleset.versions[ruleset.versions.length - 1];
  const text = executeSummary({ rule: rule as never, ruleset, version });
  assert.match(text, /^Cloudflare OWASP Core Ruleset · (PL\d|no paranoia level) · threshold High – 25 and higher · log · \d+ of \d+ rules on$/);
});

test('the migration review: previous sensitivity beside what it becomes', () => {
  assert.equal(sensitivityMigrationText('medium', 'simulate'), 'sensitivity Medium, action simulate → PL1, threshold High – 25 and higher, log');
  assert.equal(sensitivityMigrationText('high', 'block'), 'sensitivity High, action block → PL2, threshold Medium – 40 and higher, block');
  assert.equal(sensitivityMigrationText('low', 'challenge'), 'sensitivity Low, action challenge → PL1, threshold Medium – 40 and higher, challenge');
  assert.equal(sensitivityMigrationText(undefined, undefined), 'sensitivity Default, action challenge → PL2, threshold Medium – 40 and higher, challenge');
  assert.equal(sensitivityMigrationText('off', 'block'), 'sensitivity Off, action block → no OWASP rule after the migration');
});
