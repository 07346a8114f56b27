// A rules service that is down: the error names the URL and what to do, and on this
// machine it fails at once (no retries with back-off: nothing will start listening by
// itself within them), in plain Node against a port nothing listens on.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { connectionErrorCode, RulesApiError, unreachableAdvice, unreachableMessage } from '../../../client/src/api/errors';
import { RulesApi } from '../../../client/src/api/rulesApi';
import { freePort } from '../../freePort';

test('nothing listens on the loopback port: one attempt, under 2 s, the URL in the message, Start/Retry advice', async () => {
  const url = `http://127.0.0.1:${await freePort()}/client/v4`;
  const lines: string[] = [];
  const api = new RulesApi({ baseUrl: url, credentials: { kind: 'token', token: 't' }, maxRetries: 2, log: (l) => lines.push(l) });
  const t0 = Date.now();
  const err = await api.listZones().then(
    () => assert.fail('listZones should fail'),
    (e: unknown) => e,
  );
  const ms = Date.now() - t0;
  assert.ok(err instanceof RulesApiError);
  assert.ok(ms < 2000, `failed after ${ms} ms`);
  assert.equal(err.status, 0);
  assert.equal(err.unreachable, url);
  assert.equal(err.message, `could not connect to ${url} (ECONNREFUSED: connection refused: nothing listens there)`);
  assert.equal(err.advice, "Start the rules service at that address (Start Local Service runs `rulesmith serve` there), or clear the setting rulesmith.api.baseUrl to use the extension's own; then Retry.");
  assert.equal(lines.filter((l) => /could not connect \(ECONNREFUSED\); not retried/.test(l)).length, 1, `one attempt only: ${lines.join(' | ')}`);
});

test('the extension’s own service down, and a remote one: the advice differs', () => {
  assert.equal(unreachableAdvice('http://127.0.0.1:9/client/v4', true), 'The local rules service is not running: start it again (Start Local Service), then Retry.');
  assert.equal(unreachableAdvice('https://api.example.com/client/v4', false), 'Check the setting rulesmith.api.baseUrl and your network connection, then Retry.');
  assert.equal(unreachableMessage('https://api.example.com/client/v4', 'ENOTFOUND'), 'could not connect to https://api.example.com/client/v4 (ENOTFOUND: no such host)');
  assert.equal(unreachableMessage('https://api.example.com/client/v4', 'EPROTO'), 'could not connect to https://api.example.com/client/v4 (EPROTO)');
  assert.equal(unreachableMessage('https://api.example.com/client/v4', undefined), 'could not connect to https://api.example.com/client/v4');
});

test('the error code is found however deep fetch nests it (TypeError → Error, AggregateError)', () => {
  const refused = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
  assert.equal(connectionErrorCode(new TypeError('fetch failed', { cause: refused })), 'ECONNREFUSED');
  assert.equal(connectionErrorCode(new Error('Connection error.', { cause: new TypeError('fetch failed', { cause: new AggregateError([refused]) }) })), 'ECONNREFUSED');
  assert.equal(connectionErrorCode(new Error('plain')), undefined);
});
