// The deadline every worker thread of the project runs under (server/src/orderedWorker.ts):
// the task the thread marked is judged by its own limit, a shorter limit coming up is not
// left behind a longer one's timer, and a thread that stops by itself hands back what it
// had not answered. The clock is the test's, so nothing depends on this machine's speed.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { MARKER, OrderedWorker, type Task } from '../../server/src/orderedWorker';

const dir = mkdtempSync(join(tmpdir(), 'rulesmith-ordered-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/**
 * A thread that takes a message `{ tasks: [{ id, does }] }` and, in order, marks each task
 * (as taskMarker does) and then answers it (`does: 'answer'`), spins on it (`'hang'`) or
 * exits with code 3 (`'exit'`).
 */
const script = join(dir, 'tasks.mjs');
writeFileSync(
  script,
  `import { parentPort, workerData } from 'node:worker_threads';
const marker = new Int32Array(workerData[${JSON.stringify(MARKER)}]);
parentPort.on('message', ({ tasks }) => {
  for (const t of tasks) {
    Atomics.store(marker, 0, t.id);
    if (t.does === 'hang') for (;;);
    if (t.does === 'exit') process.exit(3);
    parentPort.postMessage({ answered: t.id });
  }
});
`,
);

interface Outcome {
  readonly answered: number[];
  readonly hung?: { stuck: number; rest: number[] };
  readonly stopped?: { message: string; left: number[] };
}

/** Posts `tasks` (id, limit, what the thread does) in one message; settles when the thread hangs or stops. */
function run(
  signal: AbortSignal,
  tasks: readonly { id: number; limitMs: number; does: 'answer' | 'hang' | 'exit' }[],
  clock: { now: () => number },
  onAnswer: (id: number) => void = () => {},
): Promise<Outcome> {
  // The thread and the watchdog never keep a process alive: the test does, until it settles or times out.
  const alive = setInterval(() => {}, 1000);
  let link: OrderedWorker<Task> | undefined;
  const stop = () => {
    clearInterval(alive);
    void link?.terminate();
  };
  signal.addEventListener('abort', stop);
  return new Promise<Outcome>((resolve) => {
    const answered: number[] = [];
    link = new OrderedWorker(script, {
      clock: clock.now,
      onMessage: (m) => {
        const id = (m as { answered: number }).answered;
        link!.answered(id);
        answered.push(id);
        onAnswer(id);
      },
      onHung: (stuck, rest) => resolve({ answered, hung: { stuck: stuck.id, rest: rest.map((t) => t.id) } }),
      onStopped: (e, left) => resolve({ answered, stopped: { message: e.message, left: left.map((t) => t.id) } }),
    });
    link.post(
      { tasks: tasks.map(({ id, does }) => ({ id, does })) },
      tasks.map(({ id, limitMs }) => ({ id, limitMs })),
    );
  }).finally(stop);
}

describe('a worker thread under the deadline', () => {
  it('is judged by the limit of the task it is on: a short limit after a long one is not waited out', { timeout: 10_000 }, async (test) => {
    let t = 0;
    const clock = { now: () => t };
    // The first task's limit (an hour) armed the timer; once it is answered the second's
    // 50 ms counts. The clock passes 50 ms once the answer is in: the hang is found within
    // the test's limit only if the timer was armed again for it.
    const outcome = await run(
      test.signal,
      [
        { id: 1, limitMs: 3_600_000, does: 'answer' },
        { id: 2, limitMs: 50, does: 'hang' },
        { id: 3, limitMs: 50, does: 'answer' },
      ],
      clock,
      () => (t += 50),
    );
    assert.deepEqual(outcome, { answered: [1], hung: { stuck: 2, rest: [3] } });
  });

  it('hands back, when it exits by itself, the tasks it had not answered, in order', { timeout: 10_000 }, async (test) => {
    const outcome = await run(
      test.signal,
      [
        { id: 7, limitMs: 1_000, does: 'answer' },
        { id: 8, limitMs: 1_000, does: 'exit' },
        { id: 9, limitMs: 1_000, does: 'answer' },
      ],
      { now: () => 0 },
    );
    assert.deepEqual(outcome, { answered: [7], stopped: { message: 'exit code 3', left: [8, 9] } });
  });
});
