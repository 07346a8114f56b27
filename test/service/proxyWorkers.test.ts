// The WAF proxy with evaluation worker threads (`--proxy-workers`, evaluationPool.ts) over
// real sockets: the same answers and events as evaluating on the proxy's thread, a deploy
// that reaches every worker by the next request, and rate limits counted exactly although
// two threads evaluate (a rate-limited zone's counters all in the first worker). Needs the built worker
// (server/out/proxyWorker.js, `npm run build`).
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { EvaluatedRequest } from '../../server/src/evaluatedRequest';
import { EvaluationPool, proxyWorkerFile, restartDelayMs } from '../../server/src/proxy/evaluationPool';
import type { LiveEvaluation, LiveJob } from '../../server/src/proxy/evaluateLive';
import { createProxy, type ProxyOptions, type RunningProxy } from '../../server/src/proxy/proxy';
import { entrypoint, proxyTestFile, send, listenProxy, onlyWorkers } from './proxyHarness';

const ZONE_ID = '0123456789abcdef0123456789abcdee';
const ZONE = 'workers.test';
const CUSTOM = entrypoint(ZONE_ID, 'http_request_firewall_custom');
const RATELIMIT = entrypoint(ZONE_ID, 'http_ratelimit');

const RULES = [
  { action: 'block', expression: 'http.request.uri.path eq "/teapot"', description: 'custom response', action_parameters: { response: { status_code: 418, content_type: 'text/plain', content: 'teapot' } } },
  { action: 'block', expression: 'http.request.uri.query contains "attack=1"', description: 'attack parameter' },
  { action: 'log', expression: 'http.request.uri.path eq "/logged"', description: 'log the path' },
];

const file = proxyTestFile({ zoneId: ZONE_ID, zone: ZONE, needsWorker: true, custom: RULES });
const { deploy } = file;

const startProxy = (workers: number, sink: EvaluatedRequest[], extra: Partial<ProxyOptions> = {}): Promise<RunningProxy> => file.startProxy({ workers, sink: { record: (e) => sink.push(e) }, ...extra });

describe('evaluation worker threads', () => {
  it('answer as the proxy thread does, with the same events', async () => {
    const inlineEvents: EvaluatedRequest[] = [];
    const pooledEvents: EvaluatedRequest[] = [];
    const inline = await startProxy(0, inlineEvents);
    const pooled = await startProxy(2, pooledEvents);
    try {
      const paths = ['/', '/teapot', '/search?attack=1', '/logged'];
      const answers = async (p: RunningProxy) => {
        const out: string[] = [];
        for (const path of paths) {
          const a = await send(p.url(), ZONE, path);
          out.push(`${path} ${a.status} ${a.body.startsWith('ok') || a.body === 'teapot' ? a.body : a.body.includes('attack parameter') ? 'block page: attack parameter' : a.body.slice(0, 40)}`);
        }
        return out;
      };
      const expected = ['/ 200 ok GET /', '/teapot 418 teapot', '/search?attack=1 403 block page: attack parameter', '/logged 200 ok GET /logged'];
      assert.deepEqual(await answers(inline), expected);
      assert.deepEqual(await answers(pooled), expected);
      const view = (e: EvaluatedRequest) => ({ path: e.path, status: e.responseStatus, decision: e.evaluation.decision, logs: e.evaluation.logs, trace: e.evaluation.trace.map((t) => `${t.description ?? t.ref} ${t.outcome}`) });
      assert.deepEqual(pooledEvents.map(view), inlineEvents.map(view));
      assert.deepEqual(pooledEvents.map((e) => e.evaluation.trace.map((t) => `${t.description} ${t.outcome}`)), [[], ['custom response terminated'], ['attack parameter terminated'], ['log the path logged']]);
    } finally {
      await inline.close();
      await pooled.close();
    }
  });

  it('take a deploy by the next request in every worker, never half of one', async () => {
    const pooled = await startProxy(2, []);
    try {
      const burst = async (path: string) => (await Promise.all(Array.from({ length: 8 }, () => send(pooled.url(), ZONE, path)))).map((a) => a.status);
      assert.deepEqual(await burst('/new'), [200, 200, 200, 200, 200, 200, 200, 200]);
      await deploy(CUSTOM, [...RULES, { action: 'block', expression: 'http.request.uri.path eq "/new"', description: 'new rule' }]);
      assert.deepEqual(await burst('/new'), [403, 403, 403, 403, 403, 403, 403, 403]);
      assert.deepEqual(await burst('/teapot'), [418, 418, 418, 418, 418, 418, 418, 418]);
      await deploy(CUSTOM, RULES);
      assert.deepEqual(await burst('/new'), [200, 200, 200, 200, 200, 200, 200, 200]);
    } finally {
      await pooled.close();
    }
  });

  it('count a rate limit per client exactly although two threads evaluate', async () => {
    await deploy(RATELIMIT, [
      { action: 'block', expression: 'http.request.uri.path eq "/limited"', description: 'two per hour', ratelimit: { characteristics: ['ip.src', 'cf.colo.id'], period: 3600, requests_per_period: 2, mitigation_timeout: 3600 } },
    ]);
    // Clients told apart by CF-Connecting-IP (trusted here), so their requests may go to either worker.
    const pooled = await startProxy(2, [], { trust: 'everyone' });
    try {
      const clients = ['198.51.100.1', '198.51.100.2', '198.51.100.3', '198.51.100.4'];
      const statuses = await Promise.all(clients.flatMap((ip) => Array.from({ length: 5 }, () => send(pooled.url(), ZONE, '/limited', { headers: { 'cf-connecting-ip': ip } }).then((a) => `${ip} ${a.status}`))));
      const perClient = Object.fromEntries(clients.map((ip) => [ip, statuses.filter((s) => s.startsWith(ip)).map((s) => Number(s.split(' ')[1])).sort()]));
      assert.deepEqual(perClient, Object.fromEntries(clients.map((ip) => [ip, [200, 200, 429, 429, 429]])));
      // The worker's answer carries the wait: an hour, give or take the second the test took.
      const again = await send(pooled.url(), ZONE, '/limited', { headers: { 'cf-connecting-ip': clients[0]! } });
      assert.ok(['3600', '3599'].includes(String(again.headers['retry-after'])), String(again.headers['retry-after']));
    } finally {
      await pooled.close();
      await deploy(RATELIMIT, []);
    }
  });

  it("keep a client's mitigation across a deploy that adds a rule counting by something else", async () => {
    const perClient = { action: 'block', expression: 'http.request.uri.path eq "/limited"', description: 'two per hour', ratelimit: { characteristics: ['ip.src', 'cf.colo.id'], period: 3600, requests_per_period: 2, mitigation_timeout: 3600 } };
    const written = await file.svc.call('PUT', RATELIMIT, { body: { rules: [perClient] } });
    const kept = (written.body.result as { rules: { id: string }[] }).rules[0]!;
    const pooled = await startProxy(2, [], { trust: 'everyone' });
    const limited = async () => (await send(pooled.url(), ZONE, '/limited', { headers: { 'cf-connecting-ip': '198.51.100.1' } })).status;
    try {
      assert.deepEqual([await limited(), await limited(), await limited()], [200, 200, 429]);
      const perKey = { action: 'block', expression: 'http.request.uri.path eq "/keyed"', ratelimit: { characteristics: ['cf.colo.id', 'http.request.headers["x-key"]'], period: 60, requests_per_period: 3, mitigation_timeout: 60 } };
      assert.equal((await file.svc.call('PUT', RATELIMIT, { body: { rules: [{ ...perClient, id: kept.id }, perKey] } })).status, 200);
      assert.deepEqual([await limited(), await limited()], [429, 429]);
    } finally {
      await pooled.close();
      await deploy(RATELIMIT, []);
    }
  });

  it('count a rate limit per header in one worker', async () => {
    await deploy(RATELIMIT, [
      { action: 'block', expression: 'http.request.uri.path eq "/keyed"', description: 'three per key', ratelimit: { characteristics: ['cf.colo.id', 'http.request.headers["x-key"]'], period: 3600, requests_per_period: 3, mitigation_timeout: 3600 } },
    ]);
    const pooled = await startProxy(2, []);
    try {
      const statuses = await Promise.all(Array.from({ length: 8 }, (_, i) => send(pooled.url(), ZONE, '/keyed', { headers: { 'x-key': i % 2 ? 'odd' : 'even' } }).then((a) => a.status)));
      assert.deepEqual(statuses.sort(), [200, 200, 200, 200, 200, 200, 429, 429]);
      // The status counts the counters the worker holds: one per key.
      const res = await fetch(`${pooled.url()}/.rulesmith/proxy`, { headers: { authorization: `Bearer ${file.svc.adminToken}` } });
      const status = ((await res.json()) as { result: { process: { evaluationWorkers: number; rateLimitCounters: number } } }).result.process;
      assert.deepEqual([status.evaluationWorkers, status.rateLimitCounters], [2, 2]);
    } finally {
      await pooled.close();
      await deploy(RATELIMIT, []);
    }
  });

  it('start with the first zone, not before; a zone stopped and started again is evaluated under its rules', async () => {
    const p = await listenProxy({ store: file.svc.store, routes: [], workers: 1 });
    const workers = async () => {
      const res = await fetch(`${p.url()}/.rulesmith/proxy`, { headers: { authorization: `Bearer ${file.svc.adminToken}` } });
      return ((await res.json()) as { result: { process: { evaluationWorkers: number } } }).result.process.evaluationWorkers;
    };
    try {
      assert.equal(await workers(), 0);
      assert.equal('error' in p.startZone({ zone: ZONE, upstream: file.upstream.url }), false);
      assert.deepEqual([(await send(p.url(), ZONE, '/teapot')).status, await workers()], [418, 1]);
      assert.equal(p.stopZone(ZONE), true);
      // A host the proxy no longer serves: the hosted-style page for an unknown zone.
      assert.equal((await send(p.url(), ZONE, '/teapot')).status, 530);
      p.startZone({ zone: ZONE, upstream: file.upstream.url });
      assert.deepEqual([(await send(p.url(), ZONE, '/teapot')).status, (await send(p.url(), ZONE, '/search?attack=1')).status, (await send(p.url(), ZONE, '/')).status], [418, 403, 200]);
    } finally {
      await p.close();
    }
  });

  it('refuse a fake clock (rate limits in workers run on the real one)', () => {
    assert.throws(() => createProxy({ store: file.svc.store, routes: [{ zone: ZONE, upstream: file.upstream.url }], workers: 2, now: () => 0 }), /evaluation workers count rate limits on the real clock/);
  });

  it('start a worker that keeps stopping again after a growing delay, evaluating its requests on the proxy thread meanwhile', async () => {
    const lines: string[] = [];
    const onThisThread = { decision: { action: 'fallback' }, workMs: 0 } as unknown as LiveEvaluation;
    const pool = new EvaluationPool(fixture('stoppingWorker.mjs'), 1, file.svc.store, 100, (l) => lines.push(l), { evaluate: () => onThisThread, count: () => assert.fail('no count') });
    try {
      pool.warm(ZONE_ID);
      await until(() => lines.length >= 2);
      const stopped = (n: number, ms: number) => `proxy: an evaluation worker stopped (exit code 3), ${n} time(s) in a row within 10 s of its start; starting another in ${ms} ms, evaluating its requests on the proxy's thread until then`;
      assert.deepEqual(lines.slice(0, 2), [stopped(1, 250), stopped(2, 500)]);
      assert.equal(pool.size, 0);
      assert.equal(await pool.evaluate({ zoneId: ZONE_ID } as LiveJob), onThisThread);
    } finally {
      await pool.close();
    }
  });

  it('refuse a request after they are closed (it would wait for a terminated worker for ever)', async () => {
    const pool = new EvaluationPool(proxyWorkerFile()!, 1, file.svc.store, 100, () => {}, onlyWorkers('not on the thread'));
    pool.warm(ZONE_ID);
    await pool.close();
    await assert.rejects(pool.evaluate({ zoneId: ZONE_ID } as LiveJob), { message: 'the evaluation workers are closed' });
  });

  it('log a zone that a worker cannot compile once per deployment, however many workers', async () => {
    const lines: string[] = [];
    const pool = new EvaluationPool(fixture('uncompilableWorker.mjs'), 2, file.svc.store, 100, (l) => lines.push(l), onlyWorkers('no worker stopped'));
    try {
      pool.warm(ZONE_ID);
      // One request to each worker (the least busy): each answers after its compile report.
      const job = { zoneId: ZONE_ID } as LiveJob;
      const answers = await Promise.allSettled([pool.evaluate(job), pool.evaluate(job)]);
      assert.deepEqual(answers.map((a) => a.status === 'rejected' && (a.reason as Error).message), ['regex too large', 'regex too large']);
      assert.deepEqual(lines, [`proxy: zone ${ZONE_ID} cannot be compiled (its requests get the error page until the next deploy): regex too large`]);
    } finally {
      await pool.close();
    }
  });
});

describe('restartDelayMs', () => {
  it('doubles from 250 ms with each quick stop in a row, to at most 30 s; a worker that had run long restarts at once', () => {
    assert.deepEqual([0, 1, 2, 3, 7, 8, 100].map(restartDelayMs), [0, 250, 500, 1000, 16_000, 30_000, 30_000]);
  });
});

function fixture(name: string): string {
  return join(__dirname, '../fixtures/proxy', name);
}

async function until(done: () => boolean): Promise<void> {
  for (let i = 0; !done(); i++) {
    if (i > 200) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 10));
  }
}
