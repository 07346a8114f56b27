// The evaluation workers under overload and faults, over real sockets: a worker holds at most
// `--proxy-queue` requests and the next is answered 503 at once (Retry-After, the proxy's
// page, counted and logged); a request a worker works on past the deadline (a hung thread)
// gets a 503, the worker is replaced, and the requests waiting behind it are evaluated by
// the new one; an answer already queued when the deadline fires (the proxy's thread was
// busy) is used, not taken for a hang. The hang is real: a worker script that runs the built
// proxyWorker.js, but spins for ever on a request for /hang (after telling the test so on a
// BroadcastChannel).
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BroadcastChannel } from 'node:worker_threads';
import { after, describe, it } from 'node:test';
import { serveArgs, serveOptions } from '../../server/src/cli/serve';
import { UsageError } from '../../server/src/cli/input';
import { edgeFields } from '../../server/src/proxy/edgeFields';
import type { LiveJob } from '../../server/src/proxy/evaluateLive';
import { DEFAULT_QUEUE, EvaluationPool, EvaluationUnavailable, proxyWorkerFile } from '../../server/src/proxy/evaluationPool';
import type { RunningProxy } from '../../server/src/proxy/proxy';
import { entrypoint, proxyTestFile, send, onlyWorkers } from './proxyHarness';

const ZONE_ID = '0123456789abcdef0123456789abcd01';
const ZONE = 'overload.test';
const RULES = [{ action: 'block', expression: 'http.request.uri.path eq "/blocked"', description: 'blocked path' }];

/**
 * The deadline in these tests: a hung request waits this long, and each evaluation of a fresh
 * worker (a trivial zone, a few ms) must come back within it, even on a loaded machine.
 */
const DEADLINE_MS = 1_000;

const file = proxyTestFile({ zoneId: ZONE_ID, zone: ZONE, needsWorker: true, custom: RULES });

const dir = mkdtempSync(join(tmpdir(), 'rulesmith-overload-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** The channel the hanging worker says `hanging <target>` on, just before it spins. */
const CHANNEL = 'rulesmith-test-hanging-worker';

/** A worker script: the real worker, except that it hangs on a request whose path starts with /hang (`zone`: on every zone's compile; `count`: on every request's counts after it went on). */
function hangingWorker(name: string, on: 'eval' | 'zone' | 'count' = 'eval'): string {
  const path = join(dir, name);
  const hangsOn = on === 'eval' ? "m.type === 'eval' && m.job.live.target.startsWith('/hang')" : `m.type === '${on}'`;
  writeFileSync(
    path,
    `import { createRequire } from 'node:module';
import { BroadcastChannel, parentPort } from 'node:worker_threads';
const channel = new BroadcastChannel(${JSON.stringify(CHANNEL)});
channel.unref();
// First in line: the real worker's own listener never sees the message it hangs on.
parentPort.on('message', (m) => {
  if (!(${hangsOn})) return;
  channel.postMessage('hanging ' + (m.type === 'count' ? 'count' : m.job ? m.job.live.target : m.zoneId));
  for (;;);
});
createRequire(import.meta.url)(${JSON.stringify(proxyWorkerFile() ?? 'server/out/proxyWorker.js')});
`,
  );
  return path;
}

/**
 * A worker script: the real worker, except that each answer to a request, once posted, is also
 * told by writing the request's target to `flag` (synchronously: the test's thread reads it
 * while it is blocked).
 */
function flaggingWorker(name: string, flag: string): string {
  const path = join(dir, name);
  writeFileSync(
    path,
    `import { createRequire } from 'node:module';
import { writeFileSync } from 'node:fs';
import { parentPort } from 'node:worker_threads';
const targets = new Map();
// First in line: the target is known before the real worker answers.
parentPort.on('message', (m) => {
  if (m.type === 'eval') targets.set(m.id, m.job.live.target);
});
const post = parentPort.postMessage.bind(parentPort);
parentPort.postMessage = (m) => {
  post(m);
  if (m && 'evaluation' in m) writeFileSync(${JSON.stringify(flag)}, targets.get(m.id));
};
createRequire(import.meta.url)(${JSON.stringify(proxyWorkerFile() ?? 'server/out/proxyWorker.js')});
`,
  );
  return path;
}

/** The next message on the channel (the worker has begun to hang). */
function nextHang(): Promise<string> {
  const channel = new BroadcastChannel(CHANNEL);
  return new Promise((resolve) => {
    channel.onmessage = (e) => {
      channel.close();
      resolve(String((e as { data: unknown }).data));
    };
  });
}

async function counters(p: RunningProxy) {
  const c = p.counters().find((z) => z.zoneId === ZONE_ID)!;
  return { requests: c.requests, blocked: c.blocked, forwarded: c.forwarded, unavailable: c.unavailable };
}

describe('a full evaluation queue', () => {
  // A timeout: a proxy whose worker never hangs would leave the test waiting for the signal.
  it('answers the next request 503 at once, with Retry-After and the error page; counted and logged, not forwarded', { timeout: 30_000 }, async () => {
    // A deadline the test never reaches: the hung request stays in the queue.
    await file.withProxy({ workers: 1, workerFile: hangingWorker('hang.mjs'), evaluationQueue: 1, evaluationDeadlineMs: 600_000 }, async (p, logs) => {
      const hung = nextHang();
      const first = send(p.url(), ZONE, '/hang').catch(() => 'cut when the proxy closed');
      assert.equal(await hung, 'hanging /hang');
      const a = await send(p.url(), ZONE, '/next');
      assert.equal(a.status, 503);
      assert.equal(a.headers['retry-after'], '1');
      assert.equal(a.headers['content-type'], 'text/html; charset=utf-8');
      assert.match(String(a.headers['cf-ray']), /^[0-9a-f]{16}-LCL$/);
      assert.ok(a.body.includes('<title>Error 503: the WAF is overloaded</title>'), a.body);
      assert.ok(a.body.includes('now: the evaluation queue is full (--proxy-queue 1). It was not forwarded. Try again in a moment.'), a.body);
      assert.deepEqual(file.upstream.seen, []);
      assert.deepEqual(await counters(p), { requests: 1, blocked: 0, forwarded: 0, unavailable: 1 });
      assert.deepEqual(
        logs.filter((l) => l.includes(' 503 (')).map((l) => l.replace(/^proxy: \S+ /, 'proxy: RAY ')),
        [`proxy: RAY ${ZONE} GET /next 503 (the evaluation queue is full (--proxy-queue 1))`],
      );
      await p.close();
      await first;
    });
  });

  it('is 256 requests a worker by default, and --proxy-queue N sets it', () => {
    const flags = (...a: string[]) => serveOptions(serveArgs(['--proxy', `${ZONE}=http://127.0.0.1:3000`, ...a])).proxy!;
    assert.equal(DEFAULT_QUEUE, 256);
    assert.equal(flags().evaluationQueue, undefined);
    assert.equal(flags('--proxy-queue', '8').evaluationQueue, 8);
    for (const bad of ['0', '1.5', 'many', '100001']) {
      assert.throws(() => flags('--proxy-queue', bad), (e: Error) => e instanceof UsageError && e.message === `--proxy-queue takes the number of requests one evaluation worker may hold, from 1 to 100000 (default 256), got "${bad}"`);
    }
  });
});

describe('a request a worker works on past the deadline', () => {
  it('gets a 503 (not a hang); the worker is replaced and the next request is evaluated', { timeout: 30_000 }, async () => {
    await file.withProxy({ workers: 1, workerFile: hangingWorker('hang-deadline.mjs'), evaluationDeadlineMs: DEADLINE_MS }, async (p, logs) => {
      const a = await send(p.url(), ZONE, '/hang');
      assert.equal(a.status, 503);
      assert.equal(a.headers['retry-after'], '1');
      assert.ok(a.body.includes('could not evaluate this request to <code>overload.test</code> now: its evaluation did not finish within 1 s. It was not forwarded.'), a.body);
      assert.deepEqual([(await send(p.url(), ZONE, '/after')).status, (await send(p.url(), ZONE, '/blocked')).status], [200, 403]);
      assert.deepEqual(
        file.upstream.seen.map((s) => s.url),
        ['/after'],
      );
      assert.deepEqual(await counters(p), { requests: 3, blocked: 1, forwarded: 1, unavailable: 1 });
      assert.deepEqual(logs.filter((l) => l.includes('taken as hung')), ['proxy: an evaluation worker worked on one request for 1 s and is taken as hung: stopped, and another started; 1 request(s) get a 503, 0 waiting behind sent again']);
    });
  });

  it('the requests waiting behind the hung one are sent to the new worker, not lost', { timeout: 30_000 }, async () => {
    const lines: string[] = [];
    const pool = new EvaluationPool(hangingWorker('hang-queued.mjs'), 1, file.svc.store, 100, (l) => lines.push(l), onlyWorkers('not on the thread'), { deadlineMs: DEADLINE_MS });
    try {
      // Posted in one turn: the worker takes them in this order, and hangs on the first.
      const answers = await Promise.allSettled(['/hang', '/a', '/blocked', '/b'].map((path) => pool.evaluate(job(path))));
      assert.deepEqual(
        answers.map((a) => (a.status === 'fulfilled' ? a.value.decision.action : `${(a.reason as Error).constructor.name}: ${(a.reason as Error).message}`)),
        ['EvaluationUnavailable: its evaluation did not finish within 1 s', 'allow-through', 'block', 'allow-through'],
      );
      assert.deepEqual(lines, ['proxy: an evaluation worker worked on one request for 1 s and is taken as hung: stopped, and another started; 1 request(s) get a 503, 3 waiting behind sent again']);
      assert.equal(pool.size, 1);
    } finally {
      await pool.close();
    }
  });

  it('an answer already queued when the deadline fires is used: the worker is not taken as hung', { timeout: 30_000 }, async () => {
    const flag = join(dir, 'answered');
    const lines: string[] = [];
    const pool = new EvaluationPool(flaggingWorker('flagging.mjs', flag), 1, file.svc.store, 100, (l) => lines.push(l), onlyWorkers('not on the thread'), { deadlineMs: DEADLINE_MS });
    try {
      assert.equal((await pool.evaluate(job('/warm'))).decision.action, 'allow-through');
      // Out of the worker's message callback (which would read an answer queued meanwhile
      // before any timer runs) into the check phase: next come the timers, then the poll.
      await new Promise((resolve) => setImmediate(resolve));
      const posted = performance.now();
      const answer = pool.evaluate(job('/late'));
      // This thread is busy past the deadline while the worker answers: when it is free, the
      // deadline's timer runs before the poll phase that delivers the answer.
      const late = () => existsSync(flag) && readFileSync(flag, 'latin1') === '/late';
      while (!(performance.now() - posted > DEADLINE_MS + 100 && late())) if (performance.now() - posted > 20_000) assert.fail('the worker did not answer');
      assert.equal((await answer).decision.action, 'allow-through');
      assert.deepEqual(lines, []);
      assert.equal(pool.size, 1);
    } finally {
      await pool.close();
    }
  });

  it("a zone whose compile hangs: that zone's requests get a 503 past the compile deadline", { timeout: 30_000 }, async () => {
    const lines: string[] = [];
    const pool = new EvaluationPool(hangingWorker('hang-compile.mjs', 'zone'), 1, file.svc.store, 100, (l) => lines.push(l), onlyWorkers('not on the thread'), { compileDeadlineMs: 300 });
    try {
      await assert.rejects(pool.evaluate(job('/')), (e: Error) => e instanceof EvaluationUnavailable && e.message === "the zone's rules were not compiled within 0.3 s");
      assert.deepEqual(lines, [`proxy: an evaluation worker compiled zone ${ZONE_ID} for 0.3 s and is taken as hung: stopped, and another started; 1 request(s) get a 503, 0 waiting behind sent again`]);
    } finally {
      await pool.close();
    }
  });
});

describe("a request's rate-limit counts after it went on, past the deadline", () => {
  after(() => file.deploy(entrypoint(ZONE_ID, 'http_ratelimit'), []));

  it('the worker is taken as hung (the counts are lost), and the request behind them is evaluated by the new worker, not given the 503', { timeout: 30_000 }, async () => {
    await file.deploy(entrypoint(ZONE_ID, 'http_ratelimit'), [
      { action: 'block', expression: 'true', ratelimit: { characteristics: ['cf.colo.id', 'ip.src'], period: 60, requests_per_period: 5, mitigation_timeout: 600, counting_expression: 'http.response.code eq 401' } },
    ]);
    const lines: string[] = [];
    const pool = new EvaluationPool(hangingWorker('hang-count.mjs', 'count'), 1, file.svc.store, 100, (l) => lines.push(l), onlyWorkers('not on the thread'), { deadlineMs: DEADLINE_MS });
    try {
      const login = job('/login');
      const evaluation = await pool.evaluate(login);
      assert.deepEqual(evaluation.afterResponse?.map((c) => c.at), ['answer']);
      const hanging = nextHang();
      pool.countAfterResponse(evaluation, login, evaluation.afterResponse!, { status: 401, rawHeaders: [] });
      const behind = pool.evaluate(job('/behind'));
      assert.equal(await hanging, 'hanging count');
      assert.equal((await behind).decision.action, 'allow-through');
      assert.deepEqual(lines, [
        "proxy: an evaluation worker counted one request's rate limits after it went on for 1 s (those counts are lost) and is taken as hung: stopped, and another started; 0 request(s) get a 503, 1 waiting behind sent again",
      ]);
      assert.equal(pool.size, 1);
    } finally {
      await pool.close();
    }
  });
});

describe('closing the pool', () => {
  it('rejects the requests its workers hold (a hung one included), so none waits for ever', { timeout: 30_000 }, async () => {
    const pool = new EvaluationPool(hangingWorker('hang-close.mjs'), 1, file.svc.store, 100, () => {}, onlyWorkers('not on the thread'), { deadlineMs: 600_000 });
    const hanging = nextHang();
    const held = [pool.evaluate(job('/hang')), pool.evaluate(job('/behind'))];
    const outcomes = Promise.allSettled(held);
    assert.equal(await hanging, 'hanging /hang');
    await pool.close();
    const settled = await outcomes;
    assert.deepEqual(
      settled.map((r) => r.status === 'rejected' && (r.reason as Error).message),
      ['the evaluation workers are closed', 'the evaluation workers are closed'],
    );
  });
});

/** A GET of `path` on the zone, as the proxy hands it to a worker. */
function job(path: string): LiveJob {
  const headers = { host: ZONE };
  const edge = edgeFields({ remoteAddress: '192.0.2.1', headers, trust: 'nobody', now: Date.now(), rayId: '0000000000000000-LCL' });
  return { zoneId: ZONE_ID, live: { method: 'GET', target: path, httpVersion: '1.1', rawHeaders: ['Host', ZONE], body: '', bodySize: 0, edge: edge.edge }, bodyLimit: 1024, cleared: false };
}
