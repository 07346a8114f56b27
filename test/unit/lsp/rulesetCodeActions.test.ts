// The edits behind the ruleset quick fixes, on text: every place a score_threshold is
// put by mistake, layouts (one-line objects, tabs, CRLF), and the member helpers.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { OWASP_ANOMALY_RULE_ID as A, OWASP_RULESET_ID as O } from '../../../server/src/rulesets/managedIds';
import { defaultCatalog } from '../../../server/src/managed/catalog';
import { appendItem, formattingOf, moveToAnomalyRule, removeMember, setMember, withParanoiaLevel, withRef } from '../../../server/src/lsp/rulesetCodeActions';
import { validateRulesetJson, type MisplacedData } from '../../../server/src/rulesets/validate';

/** Applies the move of the first misplaced problem of the text. */
function move(text: string): string | undefined {
  const p = validateRulesetJson(text, { catalog: defaultCatalog, expressions: false }).find((x) => x.code === 'misplaced-score-threshold' || x.code === 'misplaced-override-action');
  assert.ok(p, 'a misplaced problem');
  return moveToAnomalyRule(text, p.data as unknown as MisplacedData);
}

test('score_threshold on the execute rule itself moves into the overrides, on one line in a one-line document', () => {
  const text = `{"rules": [{"ref": "o", "expression": "true", "action": "execute", "score_threshold": 60, "action_parameters": {"id": "${O}", "overrides": {"categories": [{"category": "paranoia-level-2", "enabled": false}]}}}]}`;
  assert.equal(
    move(text),
    `{"rules": [{"ref": "o", "expression": "true", "action": "execute", "action_parameters": {"id": "${O}", "overrides": {"categories": [{"category": "paranoia-level-2", "enabled": false}], "rules": [{ "id": "${A}", "score_threshold": 60 }]}}}]}`,
  );
});

test('score_threshold directly in action_parameters, with no overrides yet', () => {
  const text = `{\n\t"rules": [\n\t\t{\n\t\t\t"ref": "o",\n\t\t\t"expression": "true",\n\t\t\t"action": "execute",\n\t\t\t"action_parameters": {\n\t\t\t\t"id": "${O}",\n\t\t\t\t"score_threshold": 25\n\t\t\t}\n\t\t}\n\t]\n}\n`;
  assert.equal(
    move(text),
    `{\n\t"rules": [\n\t\t{\n\t\t\t"ref": "o",\n\t\t\t"expression": "true",\n\t\t\t"action": "execute",\n\t\t\t"action_parameters": {\n\t\t\t\t"id": "${O}",\n\t\t\t\t"overrides": {\n\t\t\t\t\t"rules": [\n\t\t\t\t\t\t{\n\t\t\t\t\t\t\t"id": "${A}",\n\t\t\t\t\t\t\t"score_threshold": 25\n\t\t\t\t\t\t}\n\t\t\t\t\t]\n\t\t\t\t}\n\t\t\t}\n\t\t}\n\t]\n}\n`,
  );
});

test('score_threshold on another rule\'s override: moved, and that override kept while it says something else', () => {
  const other = defaultCatalog.rulesets.find((r) => r.id === O)!.versions[0].rules[0].id;
  const text = `{"rules": [{"ref": "o", "expression": "true", "action": "execute", "action_parameters": {"id": "${O}", "overrides": {"categories": [{"category": "paranoia-level-2", "enabled": false}], "rules": [{"id": "${other}", "enabled": false, "score_threshold": 30}, {"id": "${A}", "action": "log"}]}}}]}`;
  assert.equal(move(text), text.replace(', "score_threshold": 30', '').replace('"action": "log"}', '"action": "log", "score_threshold": 30}'));
  const only = text.replace('"enabled": false, "score_threshold": 30', '"score_threshold": 30');
  assert.equal(move(only), only.replace(`{"id": "${other}", "score_threshold": 30}, `, '').replace('"action": "log"}', '"action": "log", "score_threshold": 30}'));
});

test('an existing threshold on the anomaly override is replaced; an action it cannot take stays', () => {
  const text = `{"rules": [{"ref": "o", "expression": "true", "action": "execute", "action_parameters": {"id": "${O}", "overrides": {"score_threshold": 60, "action": "score", "categories": [{"category": "paranoia-level-2", "enabled": false}], "rules": [{"id": "${A}", "score_threshold": 40}]}}}]}`;
  assert.equal(move(text), text.replace('"score_threshold": 60, ', '').replace(`"score_threshold": 40}`, `"score_threshold": 60}`));
});

test('CRLF documents keep their line ends', () => {
  const text = `{\r\n  "rules": [\r\n    {\r\n      "ref": "o",\r\n      "expression": "true",\r\n      "action": "execute",\r\n      "action_parameters": {\r\n        "id": "${O}",\r\n        "overrides": {\r\n          "score_threshold": 25,\r\n          "enabled": true\r\n        }\r\n      }\r\n    }\r\n  ]\r\n}\r\n`;
  const out = move(text)!;
  assert.ok(!/[^\r]\n/.test(out), JSON.stringify(out));
  assert.match(out, /"overrides": \{\r\n {10}"enabled": true,\r\n {10}"rules": \[/);
});

test('paranoia level: appended on one line to a one-line list, in the order setParanoiaLevel gives', () => {
  const text = `{"rules": [{"ref": "o", "expression": "true", "action": "execute", "action_parameters": {"id": "${O}", "overrides": {"categories": [{"category": "attack-sqli", "action": "log"}]}}}]}`;
  assert.equal(
    withParanoiaLevel(text, ['rules', 0, 'action_parameters'], 2),
    text.replace('"action": "log"}]', '"action": "log"}, { "category": "paranoia-level-3", "enabled": false }, { "category": "paranoia-level-4", "enabled": false }]'),
  );
});

test('ref: first member, in the rule\'s layout; an empty rule', () => {
  assert.equal(withRef('[{}]', [0], 'a'), '[{"ref": "a"}]');
  assert.equal(withRef('[\n\t{\n\t\t"action": "log"\n\t}\n]', [0], 'x'), '[\n\t{\n\t\t"ref": "x",\n\t\t"action": "log"\n\t}\n]');
  assert.equal(withRef('[1]', [0], 'x'), undefined);
});

test('member helpers', () => {
  assert.equal(removeMember('{"a": 1, "b": 2}', ['a']), '{"b": 2}');
  assert.equal(removeMember('{"a": 1, "b": 2}', ['b']), '{"a": 1}');
  assert.equal(removeMember('{"a": 1}', ['a']), '{}');
  assert.equal(removeMember('[1, 2, 3]', [1]), '[1, 3]');
  assert.equal(removeMember('{"a": 1}', ['z']), '{"a": 1}');
  const f = formattingOf('{\n    "a": 1\n}');
  assert.deepEqual(f, { insertSpaces: true, tabSize: 4, eol: '\n' });
  assert.equal(setMember('{"a": 1}', [], 'b', 2, f), '{"a": 1, "b": 2}');
  assert.equal(setMember('{"a": 1}', [], 'a', 'x', f), '{"a": "x"}');
  assert.equal(setMember('{\n    "a": 1\n}', [], 'b', true, f), '{\n    "a": 1,\n    "b": true\n}');
  assert.equal(appendItem('{"l": [1]}', ['l'], { x: 1 }, f), '{"l": [1, { "x": 1 }]}');
  assert.equal(formattingOf('{}').tabSize, 2);
});
