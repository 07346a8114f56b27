// The rule-check worker's deadline (ruleChecker.ts): a message of jobs the worker does not
// answer in time fails its writes with a 503 (code 10030) and nothing written, the worker
// is replaced, and the jobs behind it are checked by the new worker, never on the
// service's thread. The worker here is the real one, wrapped so that a rule whose
// expression names hang.example spins forever; the deadline is judged by a clock the test
// moves, so nothing depends on how fast this machine is.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Worker } from 'node:worker_threads';
import type { Phase } from '../../server/src/language/scheme/types';
import { ApiError } from '../../server/src/service/api';
import type { JsonObject } from '../../server/src/service/body';
import { RuleChecker, ruleCheckWorkerFile } from '../../server/src/service/ruleChecker';
import type { RuleTarget } from '../../server/src/service/ruleProblems';
import { DEMO_ACCOUNT } from '../../server/src/service/seed';
import { startService, type TestService } from './harness';

const DEADLINE_MS = 20;
const MESSAGE = 'the rules of this write were not checked: the rule checker gave no answer within 0.02 s and was restarted. Nothing was written; send the request again';
const target: RuleTarget = { kind: 'custom', phase: 'http_request_firewall_custom' };
const none: ReadonlyMap<string, Phase> = new Map();
const hangs: JsonObject = { action: 'block', expression: 'http.host eq "hang.example"' };
const fine = (n: number): JsonObject => ({ action: 'block', expression: `http.host eq "h${n}.example.com"` });
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
const on = parentPort.on.bind(parentPort);
parentPort.on = (event, listener) =>
  on(event, event !== 'message' ? listener : (jobs) => {
    if (jobs.some((j) => j.rules.some((r) => String(r.expression).includes('hang.example')))) for (;;);
    listener(jobs);
  });
require(${JSON.stringify(real)});
`,
  );
});
after(() => rmSync(dir, { recursive: true, force: true }));

interface Internals {
  ready: boolean;
  worker: Worker | undefined;
}

async function loaded(c: RuleChecker): Promise<Worker> {
  const i = c as unknown as Internals;
  for (let n = 0; n < 400 && !i.ready; n++) await new Promise((r) => setTimeout(r, 25));
  assert.equal(i.ready, true, 'the worker loads');
  return i.worker!;
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
      assert.notEqual(internals.worker, first, 'a new worker was started');
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
});

describe('in the service: a write whose rules are not checked in time', () => {
  let svc: TestService;
  const clock = testClock();
  const path = `/accounts/${DEMO_ACCOUNT.id}/rulesets`;
  before(async () => {
    svc = await startService();
    const service = svc.running.service as { ruleChecks: RuleChecker };
    await service.ruleChecks.close();
    // The service's close() closes this one.
    service.ruleChecks = new RuleChecker(hangingWorker, { deadlineMs: DEADLINE_MS, clock: clock.now });
    await loaded(service.ruleChecks);
  });
  after(() => svc.close());

  it('is answered 503, code 10030, in the hosted shape, with nothing written; the next write is checked by the new worker', { timeout: 30_000 }, async () => {
    const made = await svc.call('POST', path, { body: { name: 'deadline', kind: 'custom', phase: 'http_request_firewall_custom', rules: [{ ...fine(1), ref: 'one' }] } });
    assert.equal(made.status, 200, JSON.stringify(made.body));
    const rs = made.body.result;
    const rows = () => svc.store.all('SELECT * FROM ruleset_rules WHERE ruleset_id = ? ORDER BY from_version, rule_id', [rs.id]);
    const before = rows();

    const answer = svc.call('PATCH', `${path}/${rs.id}/rules/${rs.rules[0].id}`, { body: hangs });
    // Once the PATCH's rule is out to the worker (which spins on it), the deadline passes.
    const out = svc.running.service.ruleChecks as unknown as { inFlight: unknown[] };
    while (out.inFlight.length === 0) await turn();
    clock.pass(DEADLINE_MS);
    const r = await answer;
    assert.equal(r.status, 503);
    assert.deepEqual(r.body, { result: null, success: false, errors: [{ code: 10030, message: MESSAGE }], messages: [] });
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
