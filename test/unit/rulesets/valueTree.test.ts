// The rules service validates decoded rules through a tree made from the value
// (jsonTree.ts valueTree) instead of printing and parsing them: every fixture must give
// the same problems, at the same JSON paths, as the text does.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { test } from 'node:test';
import { findNodeAtOffset, getNodePath, parseTree, type Node } from 'jsonc-parser';
import { valueTree } from '../../../server/src/rulesets/jsonTree';
import type { ManagedCatalog } from '../../../server/src/rulesets/catalog';
import { validateRulesetJson, validateRulesetValue, type RulesetProblem } from '../../../server/src/rulesets/validate';

const dir = new URL('../../fixtures/rulesets/', import.meta.url).pathname;
const catalog = JSON.parse(readFileSync(`${dir}catalog.json`, 'utf8')) as ManagedCatalog;

/** What a caller reads of each problem: code, severity, message, and the path of its node. */
function seen(root: Node, problems: readonly RulesetProblem[]): [string, string, string, (string | number)[]][] {
  return problems.map((p) => {
    const node = findNodeAtOffset(root, p.start);
    return [p.code, p.severity, p.message, node ? getNodePath(node) : []];
  });
}

test('every fixture: the same problems at the same paths from the value as from its text', () => {
  let problems = 0;
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.ruleset.json'))) {
    // Printed as the service prints a decoded rule: the text and the value hold the same thing.
    const text = JSON.stringify(JSON.parse(readFileSync(`${dir}${file}`, 'utf8')));
    const fromText = seen(parseTree(text)!, validateRulesetJson(text, { catalog, expressions: false }));
    const tree = valueTree(JSON.parse(text));
    assert.deepEqual(seen(tree, validateRulesetValue(tree, { catalog })), fromText, file);
    problems += fromText.length;
  }
  assert.equal(problems, 39, "the fixtures' problems, all compared");
});

test('a misplaced property is found at its key, a missing one at its object', () => {
  const tree = valueTree({ phase: 'http_request_firewall_custom', rules: [{ ref: 'a', expression: 'true', action: 'block', logging: { enabled: false } }, { ref: 'b', expression: 'true' }] });
  const found = seen(tree, validateRulesetValue(tree, { catalog }));
  assert.deepEqual(found, [
    ['logging-not-allowed', 'error', 'logging options only allowed in the skip action', ['rules', 0, 'logging']],
    ['missing-field', 'error', 'a rule needs an "action"', ['rules', 1]],
  ]);
});

test('members left undefined are not in the tree and holes read as null, as JSON.stringify has them', () => {
  // eslint-disable-next-line no-sparse-arrays -- a hole, as a caller's array may have
  const tree = valueTree({ a: 1, b: undefined, c: [undefined, , 'x'] });
  assert.deepEqual(
    tree.children!.map((p) => p.children![0]!.value),
    ['a', 'c'],
  );
  assert.deepEqual(tree.children![1]!.children![1]!.children!.map((n) => [n.type, n.value]), [['null', null], ['null', null], ['string', 'x']]);
});
