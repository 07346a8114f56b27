// The trace views: matched only (default) or all rules; crs.* fields hidden unless asked.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { visibleEntries, visibleFields, visibleSteps } from '../../../server/src/rulesets/traceView';
import type { TraceStep } from '../../../server/src/rulesApi';

describe('trace view', () => {
  const trace = [
    { id: 'a', matched: false, outcome: 'not-matched' },
    { id: 'b', matched: true, outcome: 'logged' },
    { id: 'c', matched: undefined, outcome: 'disabled' },
    { id: 'd', matched: undefined, outcome: 'skipped' },
    { id: 'e', matched: undefined, outcome: 'invalid' },
    { id: 'f', matched: true, outcome: 'below-threshold' },
  ] as const;

  test('matched only keeps what did something (and a rule that could not run)', () => {
    const v = visibleEntries(trace);
    assert.deepEqual(v.shown.map((t) => t.id), ['b', 'e', 'f']);
    assert.equal(v.hidden, 3);
  });

  test('all rules keeps everything', () => {
    assert.deepEqual(visibleEntries(trace, { allRules: true }), { shown: [...trace], hidden: 0 });
  });

  test('crs.* fields are hidden unless asked', () => {
    const fields = [['http.host', 'a'], ['crs.args', 'x'], ['crs.request_headers', 'y'], ['http.request.uri.path', '/']] as const;
    assert.deepEqual(visibleFields(fields), { shown: [['http.host', 'a'], ['http.request.uri.path', '/']], hidden: 2 });
    assert.equal(visibleFields(fields, { internals: true }).shown.length, 4);
  });

  test("the service's step tree: unmatched rules dropped, empty rulesets dropped, matched kept", () => {
    const steps: TraceStep[] = [
      {
        step_name: 'p1',
        type: 'phase',
        matched: false,
        trace: [
          { step_name: 'rs', type: 'ruleset', matched: false, trace: [{ step_name: 'r1', type: 'rule', matched: false }, { step_name: 'r2', type: 'rule', matched: true, outcome: 'logged' }] },
          { step_name: 'rs2', type: 'ruleset', matched: false, trace: [{ step_name: 'r3', type: 'rule', matched: false }] },
        ],
      },
      { step_name: 'p2', type: 'phase', matched: false, trace: [{ step_name: 'r4', type: 'rule', matched: false, outcome: 'not-matched' }] },
    ];
    const v = visibleSteps(steps);
    assert.equal(v.hidden, 3);
    assert.deepEqual(JSON.parse(JSON.stringify(v.shown)), [{ step_name: 'p1', type: 'phase', matched: false, trace: [{ step_name: 'rs', type: 'ruleset', matched: false, trace: [{ step_name: 'r2', type: 'rule', matched: true, outcome: 'logged' }] }] }]);
    assert.deepEqual(visibleSteps(steps, { allRules: true }), { shown: steps, hidden: 0 });
  });
});
