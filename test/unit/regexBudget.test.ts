// regexBudget.ts: past V8's backtrack budget a regex finishes on the linear-time engine
// instead of backtracking for ever (the canonical catastrophic pattern; without the
// fallback this runs for longer than the universe has existed).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';

test('a catastrophic regex gives its answer instead of hanging the process', () => {
  const script = [
    "require('./server/src/regexBudget').boundRegexBacktracking();",
    "process.stdout.write(String(/(a+)+$/.test('a'.repeat(60) + '!')));",
  ].join('\n');
  const r = spawnSync(process.execPath, ['--import', 'tsx', '-e', script], { encoding: 'utf8', timeout: 60_000 });
  assert.equal(r.error, undefined, 'the child finished');
  assert.equal(r.stdout, 'false');
});
