// The checks of the rules a write brings, off the service's thread (service/ruleChecker.ts
// and the built worker, server/out/ruleCheckWorker.js): the same findings as on the
// service's thread, whatever the worker does.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { after, describe, it } from 'node:test';
import { Worker } from 'node:worker_threads';
import type { Phase } from '../../../server/src/language/scheme/types';
import type { JsonObject } from '../../../server/src/service/body';
import { RuleChecker, ruleCheckWorkerFile } from '../../../server/src/service/ruleChecker';
import type { RuleTarget } from '../../../server/src/service/ruleProblems';
import { WorkerCancelled } from '../../../server/src/timedWorker';

const target: RuleTarget = { kind: 'zone', phase: 'http_request_firewall_custom', plan: 'enterprise' };
const CUSTOM_ID = 'a'.repeat(32);
const phases = (ids: readonly string[]): ReadonlyMap<string, Phase> => new Map(ids.map((id) => [id, 'http_request_firewall_custom' as Phase]));
const execute = (id: string): JsonObject => ({ expression: 'true', action: 'execute', action_parameters: { id } });
const RULES: JsonObject[] = [
  { expression: 'http.host eq "a.example.com"', action: 'block' },
  { expression: 'http.host eq', action: 'block' },
  { expression: 'ip.geoip.country eq "GB"', action: 'block' },
  execute(CUSTOM_ID),
  execute('b'.repeat(32)),
];
const PARSE_ERROR = {
  code: 20021,
  message: `'http.host eq' is not a valid value for expression because could not parse filter expression: Filter parsing error (1:13):\nhttp.host eq\n            ^ expected " or r\n`,
  source: { pointer: '/expression' },
};

/** A checker whose worker has loaded. */
async function started(): Promise<RuleChecker> {
  const file = ruleCheckWorkerFile();
  assert.ok(file, 'the worker is built (npm run build)');
  const c = new RuleChecker(file);
  for (let i = 0; i < 200 && !(c as unknown as { loaded: boolean }).loaded; i++) await new Promise((r) => setTimeout(r, 25));
  assert.equal((c as unknown as { loaded: boolean }).loaded, true, 'the worker loads');
  return c;
}

describe('rule checks in the worker', () => {
  const checkers: RuleChecker[] = [];
  after(() => Promise.all(checkers.map((c) => c.close())));

  it('find what the service thread finds, rule by rule', async () => {
    const inThread = new RuleChecker(undefined);
    const worker = await started();
    checkers.push(worker);
    const custom = phases([CUSTOM_ID]);
    const here = await inThread.check(target, custom, RULES);
    const there = await worker.check(target, custom, RULES);
    assert.deepEqual(there, here);
    assert.deepEqual(worker.stats, { inWorker: 1, inThread: 0 });
    assert.deepEqual(inThread.stats, { inWorker: 0, inThread: 1 });
    // Not vacuous: a valid rule, a parse error, a warning, an execute of the account's ruleset, one of no ruleset.
    assert.deepEqual(there[0], { errors: [], warnings: [] });
    assert.deepEqual(
      there[1]!.errors.map((f) => f.message),
      [PARSE_ERROR],
    );
    assert.equal(there[2]!.errors.length, 0);
    assert.match(there[2]!.warnings[0]!.message.message, /`ip\.geoip\.country` is deprecated; use `ip\.src\.country`/);
    assert.deepEqual(there[3], { errors: [], warnings: [] });
    assert.match(there[4]!.errors[0]!.message.message, /^'b{32}' is not a valid value for id because no managed ruleset nor custom ruleset of the account has this id/);
  });

  it("use each version of the account's custom rulesets, however many there were", async () => {
    const worker = await started();
    checkers.push(worker);
    // More lists than the worker keeps (32): each job is judged against its own list.
    for (let i = 0; i < 40; i++) {
      const id = i.toString(16).padStart(32, '0');
      const [has, lacks] = await worker.check(target, phases([id]), [execute(id), execute(CUSTOM_ID)]);
      assert.deepEqual(has, { errors: [], warnings: [] }, `list ${i}`);
      assert.equal(lacks!.errors.length, 1, `list ${i}`);
    }
    // An old list again, after it was forgotten: sent again.
    const [again] = await worker.check(target, phases(['0'.repeat(32)]), [execute('0'.repeat(32))]);
    assert.deepEqual(again, { errors: [], warnings: [] });
    assert.equal(worker.stats.inThread, 0);
  });

  it('answer on the service thread what a worker that stopped had not answered, then start another', async () => {
    const worker = await started();
    checkers.push(worker);
    const custom = phases([CUSTOM_ID]);
    const expected = await new RuleChecker(undefined).check(target, custom, RULES);
    const pending = worker.check(target, custom, RULES);
    await (worker as unknown as { link: { thread: { terminate(): Promise<number> } } }).link.thread.terminate();
    assert.deepEqual(await pending, expected);
    assert.equal(worker.stats.inThread, 1);
    // The next job starts a new worker; until it has loaded, jobs are checked here.
    assert.deepEqual(await worker.check(target, custom, RULES), expected);
    const internals = worker as unknown as { loaded: boolean; link: unknown };
    assert.ok(internals.link, 'a new worker is starting');
    for (let i = 0; i < 200 && !internals.loaded; i++) await new Promise((r) => setTimeout(r, 25));
    assert.deepEqual(await worker.check(target, custom, RULES), expected);
    assert.equal(worker.stats.inWorker, 1);
  });

  it('cancel what was asked before close(), and what is asked after it (the service is closing its store)', async () => {
    const worker = await started();
    const custom = phases([CUSTOM_ID]);
    const pending = assert.rejects(worker.check(target, custom, RULES), WorkerCancelled);
    await worker.close();
    await pending;
    await assert.rejects(worker.check(target, custom, RULES), WorkerCancelled);
    assert.deepEqual(worker.stats, { inWorker: 0, inThread: 2 });
  });

  it('cancel a check on the service thread between its slices when closed', async () => {
    const inThread = new RuleChecker(undefined);
    // Enough rules for more than one 2 ms slice.
    const many = Array.from({ length: 3000 }, (_, i) => ({ expression: `http.host eq "h${i}.example.com"`, action: 'block' }));
    const pending = assert.rejects(inThread.check(target, phases([]), many), WorkerCancelled);
    await inThread.close();
    await pending;
  });

  it('answer a job that fails with its error, stack included, and go on with the next', async () => {
    const w = new Worker(ruleCheckWorkerFile()!);
    try {
      assert.deepEqual((await once(w, 'message'))[0], { ready: true });
      // Key 7 was never sent: the worker cannot know the account's custom rulesets.
      w.postMessage([
        { id: 1, target, customKey: 7, rules: [RULES[0]] },
        { id: 2, target, customKey: 8, custom: [], rules: [RULES[1]] },
      ]);
      // The message's answers, in one message, in order (no progress: it took well under a second).
      const [{ answers, ...rest }] = (await once(w, 'message')) as [{ answers: [{ id: number; error: Error }, { id: number; found: { errors: { message: unknown }[] }[] }] }];
      assert.deepEqual(rest, {});
      const [failed, next] = answers;
      assert.equal(failed.id, 1);
      assert.ok(failed.error instanceof Error);
      assert.equal(failed.error.message, 'the rule-check worker has no custom rulesets under key 7');
      assert.match(failed.error.stack ?? '', /ruleCheckWorker/);
      assert.equal(next.id, 2);
      assert.deepEqual(next.found[0]!.errors.map((f) => f.message), [PARSE_ERROR]);
    } finally {
      await w.terminate();
    }
  });

  it('stay on the service thread after the worker stopped three times', async () => {
    const worker = await started();
    checkers.push(worker);
    const internals = worker as unknown as { loaded: boolean; link: { thread: { terminate(): Promise<number> } } | undefined };
    for (let stop = 0; stop < 3; stop++) {
      for (let i = 0; i < 200 && !internals.loaded; i++) await new Promise((r) => setTimeout(r, 25));
      await internals.link!.thread.terminate();
      await worker.check(target, phases([]), [RULES[0]!]);
    }
    assert.equal(internals.link, undefined);
    const [found] = await worker.check(target, phases([]), [RULES[1]!]);
    assert.deepEqual(found!.errors.map((f) => f.message), [PARSE_ERROR]);
  });
});
