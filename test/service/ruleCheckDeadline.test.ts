// The rule-check worker's deadline (ruleChecker.ts): a worker that posts nothing for the
// deadline while it has jobs fails the job it is on with a 503 (code 10030) and nothing
// written, is replaced, and the other jobs are checked by the new worker, never on the
// service's thread; a job that takes longer than the deadline but posts its progress is
// not failed. The worker here is the real one, wrapped so that checking a rule whose
// expression names hang.example spins forever, and one that names slow.example takes a
// few ms; the deadline is judged by a clock the test moves, so nothing depends on how fast
// this machine is.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Worker } from 'node:worker_threads';
import type { Phase } from '../../server/src/language/scheme/types';
import { ApiError } from '../../server/src/service/api';
import { RulesetWriteLimiter } from '../../server/src/service/rateLimit';
import type { JsonObject } from '../../server/src/service/body';
import { RuleChecker, ruleCheckWorkerFile } from '../../server/src/service/ruleChecker';
import type { RuleTarget } from '../../server/src/service/ruleProblems';
import { DEMO_ACCOUNT } from '../../server/src/service/seed';
import { startService, type TestService } from './harness';

const DEADLINE_MS = 20;
const MESSAGE =
  'the rules of this write were not checked: the rule checker made no progress for 0.02 s and was restarted. Nothing was written; send the request again';
const target: RuleTarget = { kind: 'custom', phase: 'http_request_firewall_custom' };
const none: ReadonlyMap<string, Phase> = new Map();
const hangs: JsonObject = { action: 'block', expression: 'http.host eq "hang.example"' };
const fine = (n: number): JsonObject => ({ action: 'block', expression: `http.host eq "h${n}.example.com"` });
const slow = (n: number): JsonObject => ({ action: 'block', expression: `http.host eq "${n}.slow.example"` });
const badRule: JsonObject = { action: 'block', expression: 'http.host eq' };

let dir: string;
let hangingWorker: string;
before(() => {
  const real = ruleCheckWorkerFile();
  assert.ok(real, 'the worker is built (npm run build)');
  dir = mkdtempSync(join(tmpdir(), 'rulesmith-hang-'));
  hangingWorker = join(dir, 'hangingWorker.js');
  writeFileSync(
    hangingWorker,
    `const { parentPort } = require('node:worker_threads');
const nap = new Int32Array(new SharedArrayBuffer(4));
const on = parentPort.on.bind(parentPort);
// The spin and the naps are in reading the rule's expression: inside the job's check.
parentPort.on = (event, listener) =>
  on(event, event !== 'message' ? listener : (jobs) => {
    for (const j of jobs) for (const r of j.rules) {
      const e = String(r.expression);
      if (e.includes('hang.example')) Object.defineProperty(r, 'expression', { enumerable: true, get() { for (;;); } });
      else if (e.includes('slow.example')) Object.defineProperty(r, 'expression', { enumerable: true, get() { Atomics.wait(nap, 0, 0, 2); return e; } });
    }
    listener(jobs);
  });
require(${JSON.stringify(real)});
`,
  );
});
after(() => rmSync(dir, { recursive: true, force: true }));

/** The checker's worker (orderedWorker.ts): its thread, the jobs out to it, when it last posted, the job it marked. */
interface Link {
  thread: Worker;
  pending: readonly { id: number }[];
  heardAt: number;
  marker: Int32Array;
}
interface Internals {
  loaded: boolean;
  link: Link | undefined;
}

async function loaded(c: RuleChecker): Promise<Worker> {
  const i = c as unknown as Internals;
  for (let n = 0; n < 400 && !i.loaded; n++) await new Promise((r) => setTimeout(r, 25));
  assert.equal(i.loaded, true, 'the worker loads');
  return i.link!.thread;
}

const turn = () => new Promise<void>((r) => setImmediate(r));

/** A clock the test moves; the real timer only asks it. */
function testClock(): { now: () => number; pass: (ms: number) => void } {
  let t = 0;
  return { now: () => t, pass: (ms) => void (t += ms) };
}

function timedOut(e: unknown): boolean {
  assert.ok(e instanceof ApiError, String(e));
  assert.equal(e.status, 503);
  assert.deepEqual(e.errors, [{ code: 10030, message: MESSAGE }]);
  return true;
}

describe('a rule check the worker never answers', () => {
  // A check that hangs would hang the run: each test has a limit of its own.
  it('fails by the deadline; the worker is replaced; the jobs behind it are checked by the new one', { timeout: 30_000 }, async () => {
    const clock = testClock();
    const c = new RuleChecker(hangingWorker, { deadlineMs: DEADLINE_MS, clock: clock.now });
    try {
      const first = await loaded(c);
      const expected = await new RuleChecker(undefined).check(target, none, [fine(1), badRule]);
      const stuck = c.check(target, none, [hangs]);
      await turn(); // sent alone: the worker spins on it
      const behind = c.check(target, none, [fine(1), badRule]);
      await turn();
      // The real timer fires every 20 ms but the test's clock has not moved: nothing fails.
      await new Promise((r) => setTimeout(r, 3 * DEADLINE_MS));
      assert.equal(c.timedOut, 0);

      const exited = once(first, 'exit');
      clock.pass(DEADLINE_MS);
      await assert.rejects(stuck, timedOut);
      await exited; // the spinning thread was terminated
      const internals = c as unknown as Internals;
      assert.notEqual(internals.link?.thread, first, 'a new worker was started');
      // Asked while the new worker loads: waits for it rather than run on this thread.
      const whileLoading = c.check(target, none, [fine(2)]);
      assert.deepEqual(await behind, expected, 'the job behind the hung one, checked again');
      assert.deepEqual(await whileLoading, [{ errors: [], warnings: [] }]);
      assert.equal(c.timedOut, 1);
      assert.deepEqual(c.stats, { inWorker: 2, inThread: 0 });
    } finally {
      await c.close();
    }
  });

  it('fails again each time it is sent again, past the three stops after which a crashed worker is given up, and never runs on the service thread', { timeout: 30_000 }, async () => {
    const clock = testClock();
    const c = new RuleChecker(hangingWorker, { deadlineMs: DEADLINE_MS, clock: clock.now });
    try {
      for (let n = 0; n < 4; n++) {
        await loaded(c);
        const stuck = c.check(target, none, [hangs]);
        await turn();
        clock.pass(DEADLINE_MS);
        await assert.rejects(stuck, timedOut);
      }
      await loaded(c);
      assert.deepEqual(await c.check(target, none, [fine(3)]), [{ errors: [], warnings: [] }]);
      assert.equal(c.timedOut, 4);
      assert.deepEqual(c.stats, { inWorker: 1, inThread: 0 });
    } finally {
      await c.close();
    }
  });

  it('fails only the job the worker is on: the jobs before and behind it in the same message are checked by the new worker', { timeout: 30_000 }, async () => {
    const clock = testClock();
    const c = new RuleChecker(hangingWorker, { deadlineMs: DEADLINE_MS, clock: clock.now });
    try {
      await loaded(c);
      const internals = c as unknown as Internals;
      const expected = await new RuleChecker(undefined).check(target, none, [fine(1), badRule]);
      // One turn: one message of three jobs.
      const before = c.check(target, none, [fine(1), badRule]);
      const stuck = c.check(target, none, [fine(2), hangs]);
      const behind = c.check(target, none, [badRule, fine(1)]);
      await turn();
      const link = internals.link!;
      assert.equal(link.pending.length, 3, 'sent together');
      const stuckId = link.pending[1]!.id;
      // The worker is on the second job (the first's answer waits for the message's end).
      while (Atomics.load(link.marker, 0) !== stuckId) await new Promise((r) => setTimeout(r, 5));
      clock.pass(DEADLINE_MS);
      await assert.rejects(stuck, timedOut);
      assert.deepEqual(await before, expected);
      assert.deepEqual(await behind, [...expected].reverse());
      assert.equal(c.timedOut, 1);
      assert.deepEqual(c.stats, { inWorker: 2, inThread: 0 });
    } finally {
      await c.close();
    }
  });
});

describe('a rule check that takes longer than the deadline', () => {
  it('is not failed while the worker posts its progress', { timeout: 30_000 }, async () => {
    const clock = testClock();
    // progressMs 0: the worker posts its progress at each look at its clock (every 8 rules, ruleCheckWorker.ts PROGRESS_STRIDE).
    const c = new RuleChecker(hangingWorker, { deadlineMs: DEADLINE_MS, clock: clock.now, progressMs: 0 });
    try {
      await loaded(c);
      const internals = c as unknown as Internals;
      const rules = Array.from({ length: 32 }, (_, n) => slow(n));
      const expected = await new RuleChecker(undefined).check(target, none, rules);
      let settled = false;
      const job = c.check(target, none, rules);
      job.then(
        () => (settled = true),
        () => (settled = true),
      );
      await turn(); // sent
      // Each time the worker has posted since the clock last moved, the clock moves by
      // most of the deadline: in all, by more than the deadline, never by the deadline
      // without a post.
      let passed = 0;
      const step = (DEADLINE_MS * 3) / 5;
      // (Bounded: a worker that never answers fails the test, not hangs it.)
      for (let n = 0; n < 20_000; n++) {
        if (internals.link!.heardAt === clock.now()) {
          clock.pass(step);
          passed += step;
        }
        if (settled) break;
        await new Promise((r) => setTimeout(r, 1));
      }
      assert.deepEqual(await job, expected);
      assert.ok(passed > DEADLINE_MS, `the clock moved ${passed} ms during the job`);
      assert.equal(c.timedOut, 0);
      assert.deepEqual(c.stats, { inWorker: 1, inThread: 0 });
    } finally {
      await c.close();
    }
  });
});

describe('in the service: a write whose rules are not checked in time', () => {
  let svc: TestService;
  const clock = testClock();
  const path = `/accounts/${DEMO_ACCOUNT.id}/rulesets`;
  before(async () => {
    svc = await startService();
    const service = svc.running.service as { ruleChecks: RuleChecker; writeLimiter: RulesetWriteLimiter };
    // One write per ruleset, never refilled (the clock stands still): a second write to it passes only if the failed one was given back.
    service.writeLimiter = new RulesetWriteLimiter(1, () => 0);
    await service.ruleChecks.close();
    // The service's close() closes this one.
    service.ruleChecks = new RuleChecker(hangingWorker, { deadlineMs: DEADLINE_MS, clock: clock.now });
    await loaded(service.ruleChecks);
  });
  after(() => svc.close());

  it('is answered 503, code 10030, in the hosted shape, with nothing written and its write allowance given back; the next write is checked by the new worker', { timeout: 30_000 }, async () => {
    const made = await svc.call('POST', path, { body: { name: 'deadline', kind: 'custom', phase: 'http_request_firewall_custom', rules: [{ ...fine(1), ref: 'one' }] } });
    assert.equal(made.status, 200, JSON.stringify(made.body));
    const rs = made.body.result;
    const rows = () => svc.store.all('SELECT * FROM ruleset_rules WHERE ruleset_id = ? ORDER BY from_version, rule_id', [rs.id]);
    const before = rows();

    const answer = svc.call('PATCH', `${path}/${rs.id}/rules/${rs.rules[0].id}`, { body: hangs });
    // Once the PATCH's rule is out to the worker (which spins on it), the deadline passes.
    const out = svc.running.service.ruleChecks as unknown as Internals;
    while (!out.link?.pending.length) await turn();
    clock.pass(DEADLINE_MS);
    const r = await answer;
    assert.equal(r.status, 503);
    assert.deepEqual(r.body, { result: null, success: false, errors: [{ code: 10030, message: MESSAGE }], messages: [] });
    assert.equal(r.headers.get('ratelimit'), '"ruleset-writes";r=1;t=0', 'the allowance is whole again');
    assert.deepEqual(rows(), before, 'nothing written');
    assert.deepEqual((await svc.call('GET', `${path}/${rs.id}`)).body.result, rs);

    await loaded(svc.running.service.ruleChecks);
    const next = await svc.call('PATCH', `${path}/${rs.id}/rules/${rs.rules[0].id}`, { body: fine(2) });
    assert.equal(next.status, 200, JSON.stringify(next.body));
    assert.equal(next.body.result.version, '2');
    // The POST's rule and this one: both in a worker, none on the service's thread.
    assert.deepEqual(svc.running.service.ruleChecks.stats, { inWorker: 2, inThread: 0 });
  });
});
