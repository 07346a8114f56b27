// One job at a time in a worker thread (server/src/timedWorker.ts, on orderedWorker.ts):
// close() settles the job it stops, the queue goes on after it, and a thread left idle
// without close() does not keep its process alive.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, describe, it } from 'node:test';
import { TimedWorker, WorkerCancelled } from '../../server/src/timedWorker';

const dir = mkdtempSync(join(tmpdir(), 'rulesmith-timed-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** A thread that answers `{ ms }` with `slept <ms>` after sleeping that long. */
const sleeper = join(dir, 'sleeper.mjs');
writeFileSync(
  sleeper,
  `import { parentPort } from 'node:worker_threads';
const nap = new Int32Array(new SharedArrayBuffer(4));
parentPort.on('message', ({ id, job }) => {
  Atomics.wait(nap, 0, 0, job.ms);
  parentPort.postMessage({ id, reply: 'slept ' + job.ms });
});
`,
);

describe('a TimedWorker', () => {
  it('closed while a job runs: that job is cancelled, the one queued behind it and a later one run on a new thread', { timeout: 20_000 }, async () => {
    const w = new TimedWorker<{ ms: number }, string>(sleeper, { timeoutMs: 10_000, prepareMs: 0 });
    const running = w.run({ ms: 2_000 });
    const queued = w.run({ ms: 1 });
    await new Promise((r) => setTimeout(r, 100));
    await w.close();
    await assert.rejects(running, WorkerCancelled);
    assert.equal(await queued, 'slept 1');
    assert.equal(await w.run({ ms: 2 }), 'slept 2');
    await w.close();
  });

  it('left idle without close() does not keep its process alive', { timeout: 40_000 }, () => {
    const script = join(dir, 'idle.mts');
    writeFileSync(
      script,
      `import { TimedWorker } from ${JSON.stringify(resolve('server/src/timedWorker.ts'))};
const w = new TimedWorker(${JSON.stringify(sleeper)}, { timeoutMs: 10_000, prepareMs: 0 });
console.log(await w.run({ ms: 5 }));
`,
    );
    const child = spawnSync(process.execPath, ['--import', 'tsx', script], { encoding: 'utf8', timeout: 30_000 });
    assert.deepEqual({ status: child.status, signal: child.signal, stdout: child.stdout, stderr: child.stderr }, { status: 0, signal: null, stdout: 'slept 5\n', stderr: '' });
  });
});
