import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { Worker } from 'node:worker_threads';
import { BACKGROUND_NICE, threadId } from '../../../server/src/service/backgroundThread';

/** A thread's nice value, as Linux reports it (field 19 of /proc/<pid>/task/<tid>/stat). */
function niceOf(tid: number): number {
  const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
}

// The worker runs the module from source through tsx, as the events and checkpoint threads run it bundled.
const WORKER = `
const { parentPort } = require('node:worker_threads');
require('tsx/cjs/api').register();
const { runInBackground, threadId } = require(${JSON.stringify(require.resolve('../../../server/src/service/backgroundThread'))});
const lowered = runInBackground();
parentPort.postMessage({ lowered, tid: threadId() });
parentPort.once('message', () => process.exit(0));
`;

test('a background thread runs 5 nice levels below the thread that started it, which keeps its priority (Linux)', { skip: process.platform !== 'linux' && 'Linux only: other systems have no per-thread nice value' }, async () => {
  const before = niceOf(threadId()!);
  const worker = new Worker(WORKER, { eval: true });
  const { lowered, tid } = await new Promise<{ lowered: boolean; tid: number }>((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
  });
  try {
    assert.equal(lowered, before < 19);
    assert.equal(BACKGROUND_NICE, 5);
    assert.equal(niceOf(tid), Math.min(19, before + 5));
    assert.equal(niceOf(threadId()!), before);
  } finally {
    worker.postMessage('done');
    await new Promise((r) => worker.once('exit', r));
  }
});
