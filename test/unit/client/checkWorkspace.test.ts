// "Rulesmith: Check Workspace": the files it looks for and the summary it shows.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkPatterns, checkSummary } from '../../../client/src/checkPatterns';

test('patterns: .cfrule, *.ruleset.json and the rulesetFiles globs (a bare name anywhere)', () => {
  assert.deepEqual(checkPatterns([]), ['**/*.cfrule', '**/*.ruleset.json']);
  assert.deepEqual(checkPatterns(['*.rules.json', 'waf/*.json', '', 3, '**/*.ruleset.json']), ['**/*.cfrule', '**/*.ruleset.json', '**/*.rules.json', 'waf/*.json']);
});

test('summary: counts, plurals, nothing found, no problems', () => {
  assert.equal(checkSummary({ checked: 0, errors: 0, warnings: 0, withProblems: 0 }), 'Rulesmith: no .cfrule or ruleset JSON file in the workspace.');
  assert.equal(checkSummary({ checked: 1, errors: 0, warnings: 0, withProblems: 0 }), 'Rulesmith: checked 1 file: no problems.');
  assert.equal(checkSummary({ checked: 7, errors: 3, warnings: 1, withProblems: 2 }), 'Rulesmith: checked 7 files: 3 errors and 1 warning in 2 files (see Problems).');
  assert.equal(checkSummary({ checked: 2, errors: 0, warnings: 2, withProblems: 1 }), 'Rulesmith: checked 2 files: 2 warnings in 1 file (see Problems).');
});
