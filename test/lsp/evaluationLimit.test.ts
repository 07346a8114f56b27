// Evaluate's time limit over the wire: the built server runs evaluations in its worker
// thread (server/out/evaluationWorker.js) and stops one that takes longer than the limit
// (here 3 s, through the initialization option `evaluationTimeout`), saying which request
// and why, while the server goes on answering; the next evaluation runs in a new thread.
// The slow request: no real request is reliably slow any more (issue 20: cost linear in
// size), so the server runs with RULESMITH_TEST_SLOW_REQUEST=1 (timedWorker.ts
// slowForTests): the worker spins before evaluating request 2, as an evaluation that does
// not end would.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, test } from 'node:test';
import { EvaluateRequestsRequest, EvaluationTraceRequest, HttpRequestsRequest, type EvaluateRequestsResult, type EvaluationTraceResult, type HttpRequestInfo } from '../../server/src/protocol';
import { LspClient } from './client';

const DIR = mkdtempSync(join(tmpdir(), 'rulesmith-limit-'));
const HTTP = pathToFileURL(join(DIR, 'requests.http')).href;
const RULESET = pathToFileURL(join(DIR, 'owasp.ruleset.json')).href;
const STOPPED =
  'Request 2 "Slow" did not finish within 3 s and was stopped: evaluating it against the ruleset takes too long (a large URL, header or body can make the OWASP-based ruleset\'s regular expressions backtrack). Shorten the request.';

let client: LspClient;

before(async () => {
  const entry = { name: 'z', kind: 'zone', phase: 'http_request_firewall_managed', rules: [{ ref: 'deploy-owasp', expression: 'true', action: 'execute', action_parameters: { id: '4814384a9e5d4991b9815dcfc25d2f1f' } }] };
  writeFileSync(join(DIR, 'owasp.ruleset.json'), JSON.stringify(entry, null, 2));
  writeFileSync(join(DIR, 'requests.http'), `### Home\nGET https://example.com/ HTTP/1.1\nAccept: */*\nUser-Agent: t\n\n### Slow\nGET https://example.com/?q=slow HTTP/1.1\n\n### Home again\nGET https://example.com/ HTTP/1.1\nAccept: */*\nUser-Agent: t\n`);
  process.env['RULESMITH_TEST_SLOW_REQUEST'] = '1'; // the server process inherits it
  try {
    client = await LspClient.start({ initializationOptions: { evaluationTimeout: 3000 } });
  } finally {
    delete process.env['RULESMITH_TEST_SLOW_REQUEST'];
  }
  client.connection.onRequest('workspace/workspaceFolders', () => [{ uri: pathToFileURL(DIR).href, name: 'limit' }]);
});
after(async () => {
  await client?.close();
  rmSync(DIR, { recursive: true, force: true });
});

test('a request that takes too long is stopped and named; those before keep their verdicts; the server answers meanwhile; the next evaluation runs', { timeout: 180_000 }, async () => {
  let finished = false;
  const slow = client.request<EvaluateRequestsResult>(EvaluateRequestsRequest.method, { httpUri: HTTP }, 120_000).finally(() => (finished = true));
  // The server's own thread is free: listing the requests answers while the evaluation runs.
  const { requests } = await client.request<{ requests: HttpRequestInfo[] }>(HttpRequestsRequest.method, { httpUri: HTTP });
  assert.deepEqual(requests.map((r) => r.name), ['Home', 'Slow', 'Home again']);
  assert.equal(finished, false, 'the listing answered before the evaluation ended');

  const r = await slow;
  assert.deepEqual(r.error, { code: 'timeout', message: STOPPED, details: [], rulesetUri: RULESET, index: 1 });
  assert.deepEqual(
    r.requests.map((x) => x.verdict?.title ?? null),
    ['Passed — no rule acted', null, null],
  );

  // A new worker thread: the zone is compiled again and a normal request answers.
  const next = await client.request<EvaluateRequestsResult>(EvaluateRequestsRequest.method, { httpUri: HTTP, index: 2 }, 120_000);
  assert.equal(next.error, undefined, JSON.stringify(next.error));
  assert.deepEqual(next.requests.map((x) => x.verdict?.title ?? null), [null, null, 'Passed — no rule acted']);
});

test('the trace of that request is stopped the same way, and says why', { timeout: 180_000 }, async () => {
  const t = await client.request<EvaluationTraceResult>(EvaluationTraceRequest.method, { httpUri: HTTP, index: 1 }, 120_000);
  assert.equal(t.error?.code, 'timeout');
  assert.equal(t.error?.message, STOPPED);
  assert.equal(t.markdown, `# Slow — requests.http\n\n${STOPPED}\n`);
});
