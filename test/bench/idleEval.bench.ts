/**
 * The OWASP-based ruleset at PL1 and ModSecurity with CRS 3.3.4 at PL1 on requests that come
 * one at a time with the thread idle in between, as a WAF sees them at a fixed rate: the
 * same request + evaluation as crs.bench.ts's "request+eval" (the core bundled as it ships;
 * ModSecurity through the same harness and config), every request of the CRS regression
 * corpus timed on its own after a gap of G ms.
 *
 *   node --import tsx test/bench/idleEval.bench.ts
 *   RULESMITH_BENCH_GAPS=0,0.25,1,4 RULESMITH_BENCH_IDLE=spin node --import tsx test/bench/idleEval.bench.ts
 *   RULESMITH_BENCH_GAPS=0 RULESMITH_BENCH_IDLE=evict RULESMITH_BENCH_EVICT_MB=4 node --import tsx test/bench/idleEval.bench.ts
 *   RULESMITH_BENCH_GAPS=0 RULESMITH_BENCH_FIELDS=all node --import tsx test/bench/idleEval.bench.ts   (every field built, as eval and the trace)
 *
 * The gap is a sleep of the thread (Atomics.wait here, nanosleep in the harness); with
 * RULESMITH_BENCH_IDLE=spin, Rulesmith's gap is a busy loop that touches no memory instead
 * (if only sleeping slowed the next request, through the CPU's idle states, a busy gap would
 * not); with RULESMITH_BENCH_IDLE=evict, before each of Rulesmith's requests the thread
 * writes one byte in every cache line of RULESMITH_BENCH_EVICT_MB (default 4) MB of its own,
 * then sleeps the gap: what the request costs once that much else has gone through the
 * CPU's caches (the size of this machine's L2 is the interesting one). Rulesmith's figures include its process's CPU time per request (p50), so a request
 * that is slower without having been preempted shows as more CPU, not only more wall time.
 * Gap 0 is the tight loop that every other engine bench measures. The two sides alternate
 * gap by gap, so that both share whatever else the machine is doing.
 *
 * Why this exists: at a fixed rate the proxy's time in the WAF per request (its own
 * histogram, docs/proxy.md) was 2–3× the tight loop's on this machine, with the WAF on one
 * thread. This bench measures how much of that the gap alone explains, in one process with
 * nothing else running, for both engines.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { yamlFiles } from '../../server/src/corpusFiles';
import { boundRegexBacktracking } from '../../server/src/regexBudget';
import type { SampleRequest } from '../../server/src/requests/types';
import type { Rule } from '../../server/src/rulesets/model';
import { quantile, row } from './measure';
import { corpusBytes, harness, Harness, modsecConfig } from './modsec/modsec';
import { BENCH_CACHE, loadCore } from './modsec/shippedCore';

const here = dirname(fileURLToPath(import.meta.url));
const TESTS_DIR = process.env.CRS_TESTS ?? join(here, '../../test/fixtures/crs-3.3.4-regression-tests');
const CRS_RULES = process.env.CRS_RULES ?? '/usr/share/modsecurity-crs/rules';
const GAPS = (process.env.RULESMITH_BENCH_GAPS ?? '0,1,4').split(',').map((g) => {
  const n = Number(g);
  if (!Number.isFinite(n) || n < 0) throw new Error(`RULESMITH_BENCH_GAPS: '${g}' is not a gap in ms (a number ≥ 0)`);
  return n;
});
const IDLE = process.env.RULESMITH_BENCH_IDLE ?? 'sleep';
if (!['sleep', 'spin', 'evict'].includes(IDLE)) throw new Error(`RULESMITH_BENCH_IDLE: '${IDLE}' is not sleep, spin or evict`);
const SPIN = IDLE === 'spin';
const EVICT_MB = Number(process.env.RULESMITH_BENCH_EVICT_MB ?? 4);
if (!(EVICT_MB > 0 && EVICT_MB <= 1024)) throw new Error(`RULESMITH_BENCH_EVICT_MB: '${process.env.RULESMITH_BENCH_EVICT_MB}' is not a size in MB from 1 to 1024`);
const evicted = IDLE === 'evict' ? new Uint8Array(EVICT_MB * 1024 * 1024) : undefined;
const FIELDS = process.env.RULESMITH_BENCH_FIELDS ?? 'read';
if (FIELDS !== 'read' && FIELDS !== 'all') throw new Error(`RULESMITH_BENCH_FIELDS: '${FIELDS}' is not read (the fields the zone reads, as the proxy) or all`);
const THRESHOLD = 5;

const sleeper = new Int32Array(new SharedArrayBuffer(4));
function idle(ms: number): void {
  if (evicted) for (let i = 0; i < evicted.length; i += 64) evicted[i]!++;
  if (ms <= 0) return;
  if (!SPIN) {
    Atomics.wait(sleeper, 0, 0, ms);
    return;
  }
  const end = performance.now() + ms;
  while (performance.now() < end);
}

const us = (ms: number) => `${Math.round(ms * 1000)} µs`;

async function main(): Promise<void> {
  boundRegexBacktracking();
  const { core, how } = await loadCore();
  if (!existsSync(TESTS_DIR)) {
    console.log(`no CRS regression tests at ${TESTS_DIR} (set CRS_TESTS): nothing to measure`);
    return;
  }
  const requests: SampleRequest[] = [];
  for (const file of yamlFiles(TESTS_DIR)) {
    for (const t of core.parseFtwFile(readFileSync(file, 'utf8')).tests) if (t.enabled !== false) for (const s of t.stages) requests.push(s.request);
  }
  const catalog = core.defaultCatalog;
  let execute: Rule = { ref: 'deploy-owasp', expression: 'true', action: 'execute', action_parameters: { id: core.OWASP_RULESET_ID } };
  execute = core.setScoreThreshold(core.setParanoiaLevel(execute, 1), THRESHOLD, undefined, { catalog });
  const zone = core.compileZone({ catalog, entryPoints: { http_request_firewall_managed: { id: 'e'.repeat(32), phase: 'http_request_firewall_managed', rules: [execute] } } });
  // As the proxy evaluates (evaluateLive.ts): no trace entries for rules that did not act, and only
  // the fields the zone reads (RULESMITH_BENCH_FIELDS=all: every field, as eval and the trace build them).
  const hooks = { omitIdleRules: true };
  const only = FIELDS === 'all' ? undefined : zone.fieldsRead;
  let sink = 0;
  const one = (r: SampleRequest) => (sink += zone.evaluate(core.requestValues(r, { only }).values, undefined, hooks).trace.length);
  // Warm-up: the JIT has seen every request before anything is timed.
  for (let i = 0; i < 2; i++) for (const r of requests) one(r);

  const h = harness(BENCH_CACHE, CRS_RULES);
  let modsec: Harness | undefined;
  if (h.bin) {
    const corpusFile = join(BENCH_CACHE, 'idle-corpus.bin');
    writeFileSync(corpusFile, corpusBytes(requests, core.DEFAULT_CLIENT_IP));
    const conf = join(BENCH_CACHE, 'idle-pl1.conf');
    writeFileSync(conf, modsecConfig(CRS_RULES, 1, THRESHOLD));
    modsec = new Harness(h.bin, conf, corpusFile);
    await modsec.verdicts(requests.length);
  }

  console.log(`${requests.length} requests of the CRS 3.3.4 regression tests, each timed alone after the gap; PL1, anomaly threshold ${THRESHOLD}; Rulesmith: ${how}, ${FIELDS === 'all' ? 'every field built' : 'the fields the zone reads'}, gap = ${SPIN ? 'busy loop' : evicted ? `${EVICT_MB} MB written, then sleep` : 'sleep'}; ModSecurity: libmodsecurity3 (crs.bench.ts's harness), gap = sleep`);
  if (!modsec) console.log(`ModSecurity: not measured — ${h.why}`);
  const widths = [9, 22, 11, 11, 11, 11, 11];
  console.log(row(['gap', 'engine', 'p50', 'p99', 'max', 'CPU p50', '× gap 0'], widths));
  const base = new Map<string, number>();
  const report = (gap: number, engine: string, wall: readonly number[], cpu?: readonly number[]) => {
    const p50 = quantile(wall, 0.5);
    if (gap === 0) base.set(engine, p50);
    const b = base.get(engine);
    console.log(row([`${gap} ms`, engine, us(p50), us(quantile(wall, 0.99)), us(Math.max(...wall)), cpu ? us(quantile(cpu, 0.5)) : '', b ? `${(p50 / b).toFixed(1)}×` : ''], widths));
  };
  for (const gap of GAPS) {
    const wall: number[] = [];
    const cpu: number[] = [];
    for (const r of requests) {
      idle(gap);
      const c0 = process.cpuUsage();
      const t0 = performance.now();
      one(r);
      wall.push(performance.now() - t0);
      const c = process.cpuUsage(c0);
      cpu.push((c.user + c.system) / 1000);
    }
    report(gap, 'Rulesmith', wall, cpu);
    if (modsec) report(gap, 'ModSecurity + CRS', (await modsec.round(gap * 1000)).map((ns) => ns / 1e6));
  }
  modsec?.end();
  if (sink < 0) console.log(sink);
}

void main();
