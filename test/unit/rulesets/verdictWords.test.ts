// The verdict line: every log, skip and score named; "no rule acted" only when none happened.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { actedTitle, nameList, passedTitle } from '../../../server/src/rulesets/verdictWords';

describe('verdict wording', () => {
  test('nameList', () => {
    assert.equal(nameList([]), '');
    assert.equal(nameList(['a']), 'a');
    assert.equal(nameList(['a', 'b']), 'a and b');
    assert.equal(nameList(['a', 'b', 'a', 'c']), 'a, b and c');
    assert.equal(nameList(['a', 'b', 'c', 'd', 'e']), 'a, b, c and 2 more');
  });

  const none = { logged: [], skipped: [] };
  const cases: { name: string; facts: Parameters<typeof passedTitle>[0]; title: string }[] = [
    { name: 'nothing happened', facts: none, title: 'Passed — no rule acted' },
    { name: 'a rule logged', facts: { ...none, logged: ['log-admin'] }, title: 'Passed — logged by log-admin' },
    { name: 'a skip rule matched', facts: { ...none, skipped: [{ by: 'health-check', what: 'skips http_request_firewall_managed' }] }, title: 'Passed — health-check skips http_request_firewall_managed' },
    { name: 'scored below the threshold', facts: { ...none, score: { total: 2, threshold: 25, reached: false, by: ['920350'] } }, title: 'Passed — anomaly score 2 < 25 from 920350' },
    {
      name: 'all three, in reading order',
      facts: { logged: ['log-admin', 'log-api'], skipped: [{ by: 'health-check', what: 'skips waf' }], score: { total: 7, threshold: 25, reached: false, by: ['920350', '920280'] } },
      title: 'Passed — health-check skips waf · logged by log-admin and log-api · anomaly score 7 < 25 from 920350 and 920280',
    },
  ];
  for (const c of cases) test(c.name, () => assert.equal(passedTitle(c.facts), c.title));

  test('a rule that acted comes first, then what else happened', () => {
    assert.equal(actedTitle('Blocked by block-admin (http_request_firewall_custom)', none), 'Blocked by block-admin (http_request_firewall_custom)');
    assert.equal(actedTitle('Blocked by x (p)', { ...none, logged: ['log-all'] }), 'Blocked by x (p) · logged by log-all');
  });
});
