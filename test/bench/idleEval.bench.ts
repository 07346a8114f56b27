/**
 * The OWASP-based ruleset at PL1 on requests that come one at a time with the thread idle
 * in between, as the WAF proxy sees them at a fixed rate: the same request + evaluation as
 * crs.bench.ts's "request+eval" (the core bundled as it ships), timed per request, with a
 * gap of G ms before each request.
 *
 *   node --import tsx test/bench/idleEval.bench.ts
 *   RULESMITH_BENCH_GAPS=0,0.25,1,4 RULESMITH_BENCH_IDLE=spin node --import tsx test/bench/idleEval.bench.ts
 *
 * The gap is a sleep of the thread (Atomics.wait), or with RULESMITH_BENCH_IDLE=spin a busy
 * loop that touches no memory: if only the sleep slowed the next request (the CPU's idle
 * states), the busy gap would not. The figures are per request: wall time (p50, p99, max)
 * and the process's CPU time (p50; the engine's thread and V8's helpers), so a slower request that was not preempted shows as more
 * CPU, not only more wall time. Gap 0 is the tight loop every other engine bench measures.
 *
 * Why this exists: the proxy's time in the WAF per request at a fixed rate (its own
 * histogram, docs/proxy.md) was 2–3× the tight loop's on the same machine, with both on
 * one thread. This bench shows how much of that the gap alone explains, in one process
 * with nothing else running.
 */
import { readFileSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { yamlFiles } from '../../server/src/corpusFiles';
import { boundRegexBacktracking } from '../../server/src/regexBudget';
import type { SampleRequest } from '../../server/src/requests/types';
import type { Rule } from '../../server/src/rulesets/model';
import { quantile, row } from './measure';
import { loadCore } from './modsec/shippedCore';

const here = dirname(fileURLToPath(import.meta.url));
const TESTS_DIR = process.env.CRS_TESTS ?? join(here, '../../test/fixtures/crs-3.3.4-regression-tests');
const GAPS = (process.env.RULESMITH_BENCH_GAPS ?? '0,1,4').split(',').map((g) => {
  const n = Number(g);
  if (!Number.isFinite(n) || n < 0) throw new Error(`RULESMITH_BENCH_GAPS: '${g}' is not a gap in ms (a number ≥ 0)`);
  return n;
});
const SPIN = process.env.RULESMITH_BENCH_IDLE === 'spin';
/** Every third request of the corpus per pass, three passes per gap: about 2,400 requests per gap. */
const STRIDE = 3;
const PASSES = 3;

const sleeper = new Int32Array(new SharedArrayBuffer(4));
function idle(ms: number): void {
  if (ms <= 0) return;
  if (!SPIN) {
    Atomics.wait(sleeper, 0, 0, ms);
    return;
  }
  const end = performance.now() + ms;
  while (performance.now() < end);
}

async function main(): Promise<void> {
boundRegexBacktracking();
const { core, how } = await loadCore();

const requests: SampleRequest[] = [];
for (const file of yamlFiles(TESTS_DIR)) {
  for (const t of core.parseFtwFile(readFileSync(file, 'utf8')).tests) if (t.enabled !== false) for (const s of t.stages) requests.push(s.request);
}
const catalog = core.defaultCatalog;
let execute: Rule = { ref: 'deploy-owasp', expression: 'true', action: 'execute', action_parameters: { id: core.OWASP_RULESET_ID } };
execute = core.setScoreThreshold(core.setParanoiaLevel(execute, 1), 5, undefined, { catalog });
const zone = core.compileZone({ catalog, entryPoints: { http_request_firewall_managed: { id: 'e'.repeat(32), phase: 'http_request_firewall_managed', rules: [execute] } } });
// As the proxy evaluates (evaluateLive.ts): no trace entries for rules that did not act.
const HOOKS = { omitIdleRules: true };
let sink = 0;
const one = (r: SampleRequest) => (sink += zone.evaluate(core.requestValues(r).values, undefined, HOOKS).trace.length);


// Warm-up: the JIT has seen every request before anything is timed.
for (let i = 0; i < 2; i++) for (const r of requests) one(r);

console.log(`${requests.length} requests of the CRS 3.3.4 regression tests, every ${STRIDE}rd × ${PASSES} passes per gap; OWASP-based ruleset at PL1, threshold 5; ${how}; gap = ${SPIN ? 'busy loop' : 'sleep'}`);
const widths = [10, 10, 12, 12, 12, 12];
console.log(row(['gap', 'requests', 'wall p50', 'wall p99', 'wall max', 'CPU p50'], widths));
for (const gap of GAPS) {
  const wall: number[] = [];
  const cpu: number[] = [];
  for (let pass = 0; pass < PASSES; pass++) {
    for (let i = pass; i < requests.length; i += STRIDE) {
      idle(gap);
      const c0 = process.cpuUsage();
      const t0 = performance.now();
      one(requests[i]!);
      wall.push(performance.now() - t0);
      const c = process.cpuUsage(c0);
      cpu.push((c.user + c.system) / 1000);
    }
  }
  const us = (v: number) => `${Math.round(v * 1000)} µs`;
  console.log(row([`${gap} ms`, String(wall.length), us(quantile(wall, 0.5)), us(quantile(wall, 0.99)), us(Math.max(...wall)), us(quantile(cpu, 0.5))], widths));
}
if (sink < 0) console.log(sink);
}

void main();
