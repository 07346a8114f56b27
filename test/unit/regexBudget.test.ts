// regexBudget.ts: past V8's backtrack budget a regex finishes on the linear-time engine
// instead of backtracking for ever (the canonical catastrophic pattern; without the
// fallback this runs for longer than the universe has existed).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
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

// Every bundle that evaluates starts the safeguards when it loads: the CLI (and the service
// it serves), the language server, and the worker threads of traces, evaluations and the
// paranoia preview. The extension's main module evaluates nothing itself (its preview runs
// in previewWorker), and it shares the extension host with other extensions; the security
// events' thread and the store's checkpoint thread only write and read SQLite.
test('every built entry point that evaluates calls boundRegexBacktracking() when it loads', async () => {
  const { ENTRY_POINTS } = (await import('../../scripts/entry-points.mjs')) as { ENTRY_POINTS: { entryPoints: string[] }[] };
  const evaluateNothing = ['client/src/extension.ts', 'server/src/service/events/eventsWorker.ts', 'server/src/service/checkpointWorker.ts'];
  const sources = ENTRY_POINTS.flatMap((e) => e.entryPoints).filter((p) => !evaluateNothing.includes(p));
  assert.deepEqual(sources, [
    'server/src/cli/main.ts',
    'server/src/lsp/server.ts',
    'server/src/service/traceWorker.ts',
    'server/src/service/ruleCheckWorker.ts',
    'server/src/proxy/proxyWorker.ts',
    'server/src/lsp/evaluationWorker.ts',
    'client/src/preview/worker.ts',
  ]);
  const ts = (await import('typescript')).default;
  const without = sources.filter((file) => {
    const sf = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
    let found = false;
    const visit = (node: import('typescript').Node, inFunction: boolean): void => {
      const fnLike = inFunction || ts.isFunctionLike(node);
      if (!fnLike && ts.isCallExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === 'boundRegexBacktracking') found = true;
      ts.forEachChild(node, (c) => visit(c, fnLike));
    };
    visit(sf, false);
    return !found;
  });
  assert.deepEqual(without, [], 'these entry points do not call boundRegexBacktracking() at load (server/src/regexBudget.ts)');
});
