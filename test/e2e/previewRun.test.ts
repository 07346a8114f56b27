// The paranoia preview's worker run (client/src/previewRun.ts) in plain Node, on the built
// worker (client/out/previewWorker.js; `npm test` builds it): it computes both sets, and
// Cancel stops it — no result, no progress after the cancel.
import assert from 'node:assert/strict';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { before, describe, it } from 'node:test';
import type { Worker } from 'node:worker_threads';
import { OWASP_RULESET_ID } from '../../server/src/managed/ids';
import type { PreviewInput } from '../../client/src/previewCompute';
import { runPreviewWorker } from '../../client/src/previewRun';

const ROOT = resolve(__dirname, '../..');
const WORKER = resolve(ROOT, 'client/out/previewWorker.js');
const CORPUS = resolve(ROOT, 'test/fixtures/crs-3.3.4-regression-tests');

const input = (maxCorpusRequests: number): PreviewInput => ({
  execute: { action: 'execute', expression: 'true', action_parameters: { id: OWASP_RULESET_ID } },
  thresholds: [5, 25, 40],
  corpusDir: CORPUS,
  corpusLabel: 'crs-3.3.4-regression-tests',
  maxCorpusRequests,
  httpTexts: ['GET https://example.com/search?q=shoes\n', 'GET https://example.com/?id=1%27%20OR%20%271%27%3D%271\n'],
});

describe('paranoia preview worker', () => {
  before(() => {
    if (!existsSync(WORKER)) throw new Error(`${WORKER} is missing: run \`npm run build\` first (\`npm test\` does)`);
  });

  it('computes the attack corpus and your requests', async () => {
    const steps: string[] = [];
    const sets = await runPreviewWorker(WORKER, input(40), (m) => steps.push(m));
    assert.ok(sets);
    assert.deepEqual(sets.map((s) => [s.name, s.total]), [
      ['Attacks', 40],
      ['Your requests', 2],
    ]);
    assert.equal(steps[0], 'reading the attack corpus…');
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
