// Issue 20: a request's cost over the OWASP-based ruleset (PL4: every rule) grows linearly
// with its size. CPU time of a request of 9,600 bytes against one of 1,200 (test/cpuTime.ts):
// linear work is ~8x, quadratic ~64x. op.rx's search-equivalent rewrites and required-literal
// prefilter (runtime/crs/rxSearch.ts) made the runs of spaces, `%20` and `"` linear; the run
// of `'` is still quadratic (942180, 942260, 942330, 942340: SQL patterns whose every
// alternative starts at a quote and some need no letters): it is left out here until it is
// fixed (issue 20 stays open for it); docs/benchmarks.md has the figures.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { defaultCatalog } from '../../../server/src/managed/catalog';
import { setParanoiaLevel } from '../../../server/src/managed/preview';
import { boundRegexBacktracking } from '../../../server/src/regexBudget';
import { requestValues } from '../../../server/src/requests/fields';
import { compileZone } from '../../../server/src/rulesets/engine';
import { OWASP_RULESET_ID } from '../../../server/src/rulesets/managedIds';
import { GROWTH_BOUND, minCpuTime } from '../../cpuTime';
import { HOSTILE } from '../../hostileRequests';

boundRegexBacktracking();
const execute = setParanoiaLevel({ ref: 'owasp', expression: 'true', action: 'execute', action_parameters: { id: OWASP_RULESET_ID } }, 4);
const zone = compileZone({ catalog: defaultCatalog, entryPoints: { http_request_firewall_managed: { id: 'e'.repeat(32), phase: 'http_request_firewall_managed', rules: [execute] } } });

/** Still quadratic (see the header); every other request must stay linear. */
const QUADRATIC = new Set<string>([]);

for (const { name, make } of HOSTILE.filter((h) => !QUADRATIC.has(h.name))) {
  test(`the OWASP-based ruleset's time on a ${name} grows linearly with its size`, () => {
    const cost = (n: number) => {
      const req = make(n);
      return minCpuTime(() => assert.ok(zone.evaluate(requestValues(req).values).trace.length > 0), 3, 1);
    };
    const t1 = cost(1200);
    const t8 = cost(9600);
    assert.ok(t8 / t1 < GROWTH_BOUND, `1,200 bytes: ${t1} us, 9,600 bytes: ${t8} us (${(t8 / t1).toFixed(1)}x)`);
  });
}
