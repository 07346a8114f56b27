// The paranoia preview's worker run (client/src/preview/run.ts) in plain Node, on the built
// worker (client/out/previewWorker.js) and the built-in attack corpus
// (server/out/crs-attack-corpus.json; `npm test` builds both): it computes both sets from
// the built-in corpus or the setting's folder, says when the folder is unusable, and Cancel
// stops it — no result, no progress after the cancel.
import assert from 'node:assert/strict';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { before, describe, it } from 'node:test';
import type { Worker } from 'node:worker_threads';
import { OWASP_RULESET_ID } from '../../server/src/rulesets/managedIds';
import type { CorpusChoice, PreviewInput } from '../../client/src/preview/compute';
import { runPreviewWorker } from '../../client/src/preview/run';

const ROOT = resolve(__dirname, '../..');
const WORKER = resolve(ROOT, 'client/out/previewWorker.js');
const BUILT_IN: CorpusChoice = { builtIn: resolve(ROOT, 'server/out/crs-attack-corpus.json') };
const CRS_FOLDER: CorpusChoice = { folder: resolve(ROOT, 'test/fixtures/crs-3.3.4-regression-tests'), label: 'crs-3.3.4-regression-tests' };

const input = (maxCorpusRequests: number, corpus: CorpusChoice = BUILT_IN): PreviewInput => ({
  execute: { action: 'execute', expression: 'true', action_parameters: { id: OWASP_RULESET_ID } },
  thresholds: [5, 25, 40],
  corpus,
  maxCorpusRequests,
  httpTexts: ['GET https://example.com/search?q=shoes\n', 'GET https://example.com/?id=1%27%20OR%20%271%27%3D%271\n'],
});

describe('paranoia preview worker', () => {
  before(() => {
    for (const f of [WORKER, (BUILT_IN as { builtIn: string }).builtIn]) {
      if (!existsSync(f)) throw new Error(`${f} is missing: run \`npm run build\` first (\`npm test\` does)`);
    }
  });

  it('no setting: the built-in corpus (the CRS 3.3.4 regression requests, sampled) and your requests', async () => {
    const steps: string[] = [];
    const sets = await runPreviewWorker(WORKER, input(40), (m) => steps.push(m));
    assert.ok(sets);
    assert.deepEqual(sets.map((s) => [s.name, s.source, s.builtIn, s.total, s.available]), [
      ['Attacks', 'built-in: OWASP CRS 3.3.4 regression tests', true, 40, 2169],
      ['Your requests', '2 .http files in the workspace', undefined, 2, 2],
    ]);
    // The SQL injection of the second request scores 5 at PL1 (942100): acted on at 5 only.
    assert.deepEqual(sets[1].preview!.levels[0].cells.map((c) => c.actedOn), [1, 0, 0]);
    assert.deepEqual(steps, ['reading the attack corpus…', 'evaluating 40 attack requests at 4 levels…', 'evaluating the workspace .http requests…']);
  });

  it('the setting\'s folder replaces it: the same attack stages as the built-in corpus', async () => {
    const sets = await runPreviewWorker(WORKER, input(40, CRS_FOLDER), () => undefined);
    assert.ok(sets);
    assert.deepEqual([sets[0].source, sets[0].builtIn, sets[0].total, sets[0].available], ['178 ftw files in crs-3.3.4-regression-tests', false, 40, 2169]);
    const builtIn = await runPreviewWorker(WORKER, input(40), () => undefined);
    assert.deepEqual(sets[0].preview!.requests, builtIn![0].preview!.requests);
  });

  it('a setting naming a missing folder: the attacks say so, your requests are still computed', async () => {
    const sets = await runPreviewWorker(WORKER, input(40, { folder: resolve(ROOT, 'no-such-folder'), label: 'no-such-folder' }), () => undefined);
    assert.ok(sets);
    assert.deepEqual(sets[0], { name: 'Attacks', source: 'no-such-folder', total: 0, available: 0, builtIn: false, error: 'the attack corpus folder no-such-folder does not exist' });
    assert.equal(sets[1].total, 2);
  });

  it('Cancel: resolves with no result at once, stops the worker and reports no progress after it', async () => {
    const abort = new AbortController();
    const after: string[] = [];
    // The worker thread, from Node's 'worker_threads' diagnostics channel: its exit is the
    // event after which no message (no progress) can arrive.
    let worker: Worker | undefined;
    const created = (m: unknown) => (worker = (m as { worker: Worker }).worker);
    subscribe('worker_threads', created);
    const run = runPreviewWorker(WORKER, input(2000), (m) => {
      if (abort.signal.aborted) after.push(m);
      else abort.abort();
    }, abort.signal);
    unsubscribe('worker_threads', created);
    assert.ok(worker, 'a worker thread started');
    const exited = once(worker, 'exit');
    assert.equal(await run, undefined);
    // Exit code 1: terminated, not finished (a finished worker exits with 0).
    assert.deepEqual(await exited, [1]);
    assert.deepEqual(after, []);
  });

  it('an already cancelled run does not start', async () => {
    const abort = new AbortController();
    abort.abort();
    let called = false;
    assert.equal(await runPreviewWorker(WORKER, input(10), () => (called = true), abort.signal), undefined);
    assert.equal(called, false);
  });
});
