// A client that leaves before its answer, over real sockets: its request was evaluated (a rule
// may have acted on it), so it still yields its security events and is counted in the
// control API's `requests`, once, with status 499 (CLIENT_CLOSED: nginx's status for a
// client that closed the connection first, the one Cloudflare's logs give it too) — whether
// it leaves while the app works on it, before the app switches protocols (a WebSocket
// handshake), or while its request is evaluated (then it is not forwarded). One that leaves
// once the app's answer has started keeps that answer's status, and a body the proxy refused
// (400) keeps the 400. Otherwise a client would keep its probes out of the security events
// by hanging up before the app answers (docs/proxy.md, Security events).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { proxyWorkerFile } from '../../server/src/proxy/evaluationPool';
import { CLIENT_CLOSED, type RunningProxy } from '../../server/src/proxy/proxy';
import { eventsOf } from '../../server/src/service/events/fromEvaluation';
import { handshake, proxyTestFile, raw, rawSocket, ZONE } from './proxyHarness';

const file = proxyTestFile({
  events: true,
  custom: [
    // The query as sent is `q=union%20select`: the rule reads it decoded.
    { action: 'log', expression: 'url_decode(http.request.uri.query) contains "union select"', description: 'sqli probe' },
    { action: 'log', expression: 'http.request.uri.path eq "/ws-slow"', description: 'socket opened' },
    { action: 'block', expression: 'http.request.uri.path eq "/delayed-blocked"', description: 'blocked path' },
  ],
  proxy: { inspectBodyLimit: 1024, upstreamTimeoutMs: 4_000, headerTimeoutMs: 5_000 },
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The hosted event actions of the requests the proxy handed its sink since `n`, one list per request. */
const actionsSince = (n: number) => file.events.slice(n).map((r) => eventsOf(r).map((e) => `${e.action}/${e.source}`));
/** The statuses the sink got since `n`. */
const statusesSince = (n: number) => file.events.slice(n).map((r) => r.responseStatus);

/** The zone's counters that tell what happened to its requests. */
function counted(p: RunningProxy) {
  const c = p.counters()[0]!;
  return { requests: c.requests, forwarded: c.forwarded, blocked: c.blocked, upstreamErrors: c.upstreamErrors };
}

/** Waits (at most 5 s) for the app to have seen `n` requests. */
async function appSaw(n: number): Promise<void> {
  for (let i = 0; i < 250 && file.upstream.seen.length < n; i++) await sleep(20);
}

const dir = mkdtempSync(join(tmpdir(), 'rulesmith-client-leaves-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** A worker script: the real worker, except that it holds a request for /delayed 500 ms before evaluating it. */
function delayingWorker(): string {
  const path = join(dir, 'delaying.mjs');
  writeFileSync(
    path,
    `import { createRequire } from 'node:module';
import { parentPort } from 'node:worker_threads';
// First in line: the real worker's listener gets the message after the wait.
parentPort.on('message', (m) => {
  if (m.type === 'eval' && m.job.live.target.startsWith('/delayed')) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 500);
});
createRequire(import.meta.url)(${JSON.stringify(proxyWorkerFile() ?? 'server/out/proxyWorker.js')});
`,
  );
  return path;
}

describe('a client that leaves before the app answers', () => {
  // The `log` rule matched (a probe the rules flagged) and the request was forwarded; the
  // client then hung up while the app was still working on it (/slow never answers).
  it('still yields its security event and is counted, with status 499', async () => {
    const n = file.events.length;
    await file.withProxy({}, async (p, logs) => {
      const socket = rawSocket(p.url(), () => socket.write(`GET /slow?q=union%20select HTTP/1.1\r\nHost: ${ZONE}\r\nUser-Agent: probe\r\n\r\n`));
      // The app has the request (it never answers /slow); the client hangs up.
      await appSaw(1);
      assert.equal(file.upstream.seen[0]?.url, '/slow?q=union%20select');
      socket.destroy();
      await sleep(300);
      const counters = p.counters()[0]!;
      assert.deepEqual(
        { events: actionsSince(n), requests: counters.requests },
        { events: [['log/firewallCustom']], requests: 1 },
      );
      assert.deepEqual(statusesSince(n), [CLIENT_CLOSED]);
      assert.equal(CLIENT_CLOSED, 499);
      // It was forwarded; no app fault is logged (the client's leaving explains the end).
      assert.deepEqual(counted(p), { requests: 1, forwarded: 1, blocked: 0, upstreamErrors: 0 });
      assert.deepEqual(logs, []);
    });
  });

  // The same for a WebSocket handshake (docs/proxy.md: "evaluated like any request"): the
  // client leaves before the app switches protocols.
  it('a WebSocket handshake still yields its security event, with status 499', async () => {
    const n = file.events.length;
    await file.withProxy({}, async (p) => {
      const socket = rawSocket(p.url(), () => socket.write(handshake('/ws-slow', ZONE)));
      // /ws-slow switches protocols after 300 ms: the client leaves before.
      for (let i = 0; i < 100 && file.upstream.seen.length === 0; i++) await sleep(10);
      assert.equal(file.upstream.seen[0]?.url, '/ws-slow');
      socket.destroy();
      await sleep(500);
      assert.deepEqual(actionsSince(n), [['log/firewallCustom']]);
      assert.deepEqual(statusesSince(n), [CLIENT_CLOSED]);
      assert.deepEqual(counted(p), { requests: 1, forwarded: 1, blocked: 0, upstreamErrors: 0 });
    });
  });
});

describe('a client that leaves while its request is evaluated', () => {
  // A worker that holds the request 500 ms: the client is gone when the verdict comes.
  it('is not forwarded, and still yields its security event and is counted, with status 499', { timeout: 30_000 }, async () => {
    assert.ok(proxyWorkerFile(), 'server/out/proxyWorker.js is built (npm run build)');
    const n = file.events.length;
    await file.withProxy({ workers: 1, workerFile: delayingWorker() }, async (p) => {
      const socket = rawSocket(p.url(), () => socket.write(`GET /delayed?q=union%20select HTTP/1.1\r\nHost: ${ZONE}\r\n\r\n`, () => setTimeout(() => socket.destroy(), 50)));
      for (let i = 0; i < 250 && file.events.length === n; i++) await sleep(20);
      assert.deepEqual(actionsSince(n), [['log/firewallCustom']]);
      assert.deepEqual(statusesSince(n), [CLIENT_CLOSED]);
      assert.deepEqual(file.upstream.seen, []);
      assert.deepEqual(counted(p), { requests: 1, forwarded: 0, blocked: 0, upstreamErrors: 0 });
    });
  });
});

describe('a request recorded once, with the status the client got', () => {
  it("a client that leaves once the app's answer has started: the app's status", async () => {
    const n = file.events.length;
    await file.withProxy({}, async (p) => {
      await new Promise<void>((resolve) => {
        let got = 0;
        const socket = rawSocket(p.url(), () => socket.write(`GET /big?mb=50&q=union%20select HTTP/1.1\r\nHost: ${ZONE}\r\n\r\n`));
        socket.on('data', (d: Buffer) => {
          got += d.length;
          if (got > 200_000) socket.destroy();
        });
        socket.on('close', () => resolve());
      });
      await sleep(300);
      assert.deepEqual(actionsSince(n), [['log/firewallCustom']]);
      assert.deepEqual(statusesSince(n), [200]);
      assert.deepEqual(counted(p), { requests: 1, forwarded: 1, blocked: 0, upstreamErrors: 0 });
    });
  });

  it('a body the proxy refuses once the request was forwarded (a bad chunk size past the part the rules read): 400', async () => {
    const n = file.events.length;
    await file.withProxy({}, async (p) => {
      const r = await raw(p.url(), [`POST /x?q=union%20select HTTP/1.1\r\nHost: ${ZONE}\r\nTransfer-Encoding: chunked\r\n\r\n7d0\r\n${'a'.repeat(2000)}\r\n`, 'zz\r\n'], { gapMs: 300, waitMs: 6_000 });
      assert.match(r.data, /^HTTP\/1\.1 400 Bad Request\r\n/);
      await sleep(100);
      assert.deepEqual(actionsSince(n), [['log/firewallCustom']]);
      assert.deepEqual(statusesSince(n), [400]);
      assert.deepEqual(counted(p), { requests: 1, forwarded: 1, blocked: 0, upstreamErrors: 0 });
    });
  });

  // The proxy's own answer is decided with the verdict: the event keeps the rule's action and that answer's status.
  it('a request blocked while its client left (during its evaluation): the block and its 403', { timeout: 30_000 }, async () => {
    assert.ok(proxyWorkerFile(), 'server/out/proxyWorker.js is built (npm run build)');
    const n = file.events.length;
    await file.withProxy({ workers: 1, workerFile: delayingWorker() }, async (p) => {
      const socket = rawSocket(p.url(), () => socket.write(`GET /delayed-blocked HTTP/1.1\r\nHost: ${ZONE}\r\n\r\n`, () => setTimeout(() => socket.destroy(), 50)));
      for (let i = 0; i < 250 && file.events.length === n; i++) await sleep(20);
      await sleep(100);
      assert.deepEqual(actionsSince(n), [['block/firewallCustom']]);
      assert.deepEqual(statusesSince(n), [403]);
      assert.deepEqual(counted(p), { requests: 1, forwarded: 0, blocked: 1, upstreamErrors: 0 });
    });
  });
});
