// A trace whose client disconnects while it waits for its turn behind another is dropped
// without being evaluated (docs/service.md: "A trace whose client disconnects is cancelled:
// not started if it waited"). limits.test.ts covers a trace stopped while it runs.
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { DEMO_ACCOUNT } from '../../server/src/service/seed';
import { startService, type TestService } from './harness';

const TRACE = `/accounts/${DEMO_ACCOUNT.id}/request-tracer/trace`;

describe('a trace whose client leaves while it waits', () => {
  let svc: TestService;
  before(async () => {
    svc = await startService();
  });
  after(() => svc.close());

  const send = (body: string, abortAfterMs?: number) =>
    new Promise<number | 'gone'>((resolve) => {
      const req = request(new URL(`${svc.url}${TRACE}`), { method: 'POST', headers: { authorization: `Bearer ${svc.adminToken}`, 'content-type': 'application/json' } }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode!));
      });
      req.on('error', () => resolve('gone'));
      req.end(body);
      if (abortAfterMs !== undefined) {
        setTimeout(() => {
          req.destroy();
          resolve('gone');
        }, abortAfterMs);
      }
    });

  it('is never evaluated: its turn comes after the running one and it is dropped', async () => {
    const slow = send(JSON.stringify({ url: `https://migrated.example.com/?q=${"'".repeat(16_000)}x`, method: 'GET' }));
    // The first trace of a fresh service compiles the zone in the trace worker (most of a second
    // on a fast machine): the second comes, and leaves, while the first holds the worker.
    await new Promise((r) => setTimeout(r, 100));
    const waiting = await send(JSON.stringify({ url: 'https://migrated.example.com/', method: 'GET' }), 200);
    assert.equal(waiting, 'gone');
    assert.equal(await slow, 200);
    await svc.logLine((l) => l.includes('request-tracer') && l.includes('aborted by the client'), 20_000);
    const { compiles, hits, cancelled } = svc.running.service.traces.stats;
    assert.deepEqual({ evaluated: compiles + hits, cancelled }, { evaluated: 1, cancelled: 1 });
  });
});
