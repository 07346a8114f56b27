// The setting rulesmith.evaluation.bodyLimit: read and validated with the other settings,
// and the evaluation job inspects that many bytes of each body (evaluationJob.ts, run
// inline here: the worker runs the same function).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { evaluationReply, type EvaluationJob } from '../../server/src/lsp/evaluationJob';
import { parseSettings } from '../../server/src/lsp/settings';

const ZONE = {
  entries: [['cut.ruleset.json', JSON.stringify({ name: 'z', kind: 'zone', phase: 'http_request_firewall_custom', rules: [{ ref: 'cut', expression: 'http.request.body.truncated', action: 'block' }] })]] as [string, string][],
  customs: [] as [string, string][],
};
const HTTP = 'POST https://example.com/ HTTP/1.1\nContent-Type: text/plain\n\n0123456789\n';

test('rulesmith.evaluation.bodyLimit: a whole number of bytes up to 64 MiB, else the default (absent)', () => {
  assert.equal(parseSettings({ evaluation: { bodyLimit: 4 } }).evaluationBodyLimit, 4);
  assert.equal(parseSettings({ 'evaluation.bodyLimit': 0 }).evaluationBodyLimit, 0);
  for (const bad of [-1, 1.5, '4', 67108865, 131072]) assert.equal(parseSettings({ evaluation: { bodyLimit: bad } }).evaluationBodyLimit, undefined, JSON.stringify(bad));
});

test('Evaluate inspects that many bytes of each body: a 10-byte body is cut at 4, not at the default', () => {
  const verdict = (limit?: number) => {
    const job: EvaluationJob = { kind: 'evaluate', zone: ZONE, httpText: HTTP, ...(limit !== undefined ? { bodyLimit: limit } : {}) };
    const r = evaluationReply(job);
    assert.ok('verdicts' in r, JSON.stringify(r));
    return r.verdicts.map(([, v]) => v.title);
  };
  assert.deepEqual(verdict(4), ['Blocked by cut (http_request_firewall_custom)']);
  assert.deepEqual(verdict(), ['Passed — no rule acted']);
});
