// Documents past the sizes the editor usually sees: a ruleset of more expressions than the
// check cache's base limit keeps every check between passes, and JSON nested thousands deep
// is a document with no expressions (or a finding), never a handler that throws.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CheckCache } from '../../../server/src/lsp/documents';
import { rulesetSlices } from '../../../server/src/lsp/expressionSlices';
import { executeRulesOf } from '../../../server/src/lsp/executeLens';
import { parseRulesetTree } from '../../../server/src/rulesets/jsonTree';
import { defaultCatalog } from '../../../server/src/managed/catalog';

test('the check cache keeps the room it is asked for (the open documents\' expressions) above its base limit', () => {
  const pass = (cache: CheckCache, n: number) => {
    for (let i = 0; i < n; i++) cache.check(`http.host eq "h${i}"`, {});
  };
  const bare = new CheckCache(2);
  pass(bare, 5);
  pass(bare, 5);
  assert.deepEqual([bare.hits, bare.misses], [0, 10]);
  const roomy = new CheckCache(2);
  roomy.reserve(5);
  pass(roomy, 5);
  pass(roomy, 5);
  assert.deepEqual([roomy.hits, roomy.misses], [5, 5]);
});

test('JSON nested thousands deep: no expressions to check; an execute lens skips rules it cannot read', () => {
  const deep = (n: number) => `${'['.repeat(n)}${']'.repeat(n)}`;
  assert.deepEqual(rulesetSlices(`{"rules": [{"action": "block", "expression": "true", "x": ${deep(20_000)}}]}`), []);
  const text = `{"rules": [{"action": "block", "expression": "true", "x": ${deep(3_000)}}, {"action": "execute", "expression": "true", "action_parameters": {"id": "efb7b8c949ac4650a09736fc376e9aee"}}]}`;
  assert.deepEqual(executeRulesOf(parseRulesetTree(text).root, defaultCatalog).map((r) => r.index), [1]);
});
