/**
 * The OWASP-based ruleset on hostile requests — long runs of one character, invalid UTF-8,
 * many arguments, deep JSON, a large multipart part — at two sizes, paranoia levels 1–4,
 * side by side with libmodsecurity3 running CRS 3.3.4 (when installed; see crs.bench.ts for
 * the config and modsec/harness.c). What it shows: how each request's cost grows with its
 * size (linear work is ~10× for 10× the size, quadratic ~100×) and where Rulesmith is
 * slower than ModSecurity on the same request.
 *
 *   node --import tsx test/bench/hostile.bench.ts
 *   RULESMITH_HOSTILE_SIZES=10000,100000 RULESMITH_BENCH_ROUNDS=1 node --import tsx test/bench/hostile.bench.ts
 *   RULESMITH_HOSTILE_ONLY='<a%20' …: only the requests whose name contains the text
 *   RULESMITH_HOSTILE_LEVELS=1,4 …: only those paranoia levels
 *   RULESMITH_BENCH_ORDER=interleaved …: alternate the sides' rounds (default: ModSecurity's
 *     rounds, then ours back to back; see main for why)
 *
 * Each request is a full request (sample request -> field values -> engine), with the
 * process's regex safeguards on as in every Rulesmith process; the core is bundled by esbuild
 * as the CLI ships it. Per request the median over R rounds (RULESMITH_BENCH_ROUNDS, default
 * 3) after untimed ones (RULESMITH_BENCH_WARMUP rounds, default 3, and at least
 * RULESMITH_BENCH_WARMUP_MS, default 3000, so that V8 has optimized the zone's generated
 * code, as in a proxy that has served a few requests); per level the p50,
 * p99 and max of those over the set.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { boundRegexBacktracking } from '../../server/src/regexBudget';
import type { SampleRequest } from '../../server/src/requests/types';
import { HOSTILE } from '../hostileRequests';
import type { Rule } from '../../server/src/rulesets/model';
import { median, row } from './measure';
import { corpusBytes, harness, Harness, modsecConfig } from './modsec/modsec';

const here = dirname(fileURLToPath(import.meta.url));
const ROUNDS = Math.max(1, Number(process.env.RULESMITH_BENCH_ROUNDS ?? 3) | 0);
/** Untimed rounds of ours first (RULESMITH_BENCH_WARMUP, default 3), and at least WARMUP_MS of them: see main. */
const WARMUP = Math.max(1, Number(process.env.RULESMITH_BENCH_WARMUP ?? 3) | 0);
const WARMUP_MS = Math.max(0, Number(process.env.RULESMITH_BENCH_WARMUP_MS ?? 3000));
const SIZES = (process.env.RULESMITH_HOSTILE_SIZES ?? '2000,20000').split(',').map(Number);
/** Only the requests whose name contains this (e.g. `<a%20`). */
const ONLY = process.env.RULESMITH_HOSTILE_ONLY ?? '';
/** Paranoia levels to run (RULESMITH_HOSTILE_LEVELS, e.g. `1,4`; default all four). */
const LEVELS = (process.env.RULESMITH_HOSTILE_LEVELS ?? '1,2,3,4').split(',').map(Number);
/** RULESMITH_BENCH_ORDER=interleaved: a round of ours, then one of ModSecurity's, and so on (default: each side's rounds back to back). */
const INTERLEAVED = process.env.RULESMITH_BENCH_ORDER === 'interleaved';
const CRS_RULES = process.env.CRS_RULES ?? '/usr/share/modsecurity-crs/rules';
const CACHE = join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'rulesmith-bench');
const THRESHOLD = 5;

type Core = typeof import('./modsec/rulesmith-core');

function loadCore(): Core {
  // Bundled with scripts/build.mjs's options (tsx's keepNames would slow the engine).
  const { buildSync } = createRequire(import.meta.url)('esbuild') as typeof import('esbuild');
  const outfile = join(CACHE, 'rulesmith-core.cjs');
  mkdirSync(CACHE, { recursive: true });
  buildSync({ entryPoints: [join(here, 'modsec/rulesmith-core.ts')], outfile, bundle: true, platform: 'node', target: 'node20', format: 'cjs', logLevel: 'warning', mainFields: ['module', 'main'] });
  return createRequire(import.meta.url)(outfile) as Core;
}

const pct = (xs: readonly number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)];
};
const msText = (ns: number | undefined): string => (ns === undefined ? '-' : `${(ns / 1e6).toFixed(ns < 1e7 ? 2 : 0)} ms`);

async function main(): Promise<void> {
  boundRegexBacktracking();
  const core = loadCore();
  const catalog = core.defaultCatalog;
  const requests: { name: string; size: number; request: SampleRequest }[] = [];
  for (const h of HOSTILE.filter((x) => x.name.includes(ONLY))) for (const size of SIZES) requests.push({ name: h.name, size, request: h.make(size) });
  const h = harness(CACHE, CRS_RULES);
  const corpusFile = join(CACHE, 'hostile-corpus.bin');
  if (h.bin) writeFileSync(corpusFile, corpusBytes(requests.map((r) => r.request), core.DEFAULT_CLIENT_IP));
  console.log(`node ${process.version}; ${requests.length} hostile requests (sizes ${SIZES.join(', ')} bytes); ${ROUNDS} timed rounds per side after ${WARMUP} untimed one(s) of ours and one of ModSecurity's; anomaly threshold ${THRESHOLD}`);
  if (!h.bin) console.log(`ModSecurity: not measured — ${h.why}`);
  const widths = [30, 7, 11, 11, 8, 9];
  const [small, large] = [SIZES[0], SIZES[SIZES.length - 1]];
  for (const level of core.PARANOIA_LEVELS.filter((l) => LEVELS.includes(l))) {
    let execute: Rule = { ref: 'deploy-owasp', expression: 'true', action: 'execute', action_parameters: { id: core.OWASP_RULESET_ID } };
    execute = core.setScoreThreshold(core.setParanoiaLevel(execute, level), THRESHOLD, undefined, { catalog });
    const z = core.compileZone({ catalog, entryPoints: { http_request_firewall_managed: { id: 'e'.repeat(32), phase: 'http_request_firewall_managed', rules: [execute] } } });
    let run: Harness | undefined;
    if (h.bin) {
      const conf = join(CACHE, `hostile-pl${level}.conf`);
      writeFileSync(conf, modsecConfig(CRS_RULES, level, THRESHOLD));
      run = new Harness(h.bin, conf, corpusFile);
    }
    let sink = 0;
    const one = (i: number): number => {
      const t = process.hrtime.bigint();
      sink += z.evaluate(core.requestValues(requests[i].request).values).trace.length;
      return Number(process.hrtime.bigint() - t);
    };
    const ours: number[][] = requests.map(() => []);
    const theirs: number[][] = requests.map(() => []);
    // Untimed rounds: the zone's generated code is new, and V8 optimizes it only after some
    // calls; a proxy's engine is warm after its first requests. Rounds, and time as well: a
    // set of a few small requests makes few calls per round, and a process that has just
    // waited for ModSecurity's rounds runs slower for a while (docs/benchmarks.md).
    const warmUp = () => {
      const until = performance.now() + WARMUP_MS;
      for (let r = 0; r < WARMUP || performance.now() < until; r++) requests.forEach((_, i) => one(i));
    };
    if (INTERLEAVED) {
      warmUp();
      if (run) await run.verdicts(requests.length);
      for (let r = 0; r < ROUNDS; r++) {
        requests.forEach((_, i) => ours[i].push(one(i)));
        if (run) (await run.round()).forEach((ns, i) => theirs[i].push(ns));
      }
    } else {
      // ModSecurity's rounds, then ours back to back: this process sits idle while
      // ModSecurity works (tens of seconds per round at 100 KB), and a V8 process that was
      // idle that long runs these requests 2-3x slower for a while (docs/benchmarks.md).
      if (run) {
        await run.verdicts(requests.length);
        for (let r = 0; r < ROUNDS; r++) (await run.round()).forEach((ns, i) => theirs[i].push(ns));
      }
      warmUp();
      for (let r = 0; r < ROUNDS; r++) requests.forEach((_, i) => ours[i].push(one(i)));
    }
    run?.end();
    if (sink < 0) console.log(sink);
    const oursMed = ours.map(median);
    const theirsMed = run ? theirs.map(median) : undefined;
    console.log(`\nPL${level}`);
    console.log(row(['request', 'bytes', 'Rulesmith', 'ModSec', 'ratio', 'growth'], widths));
    requests.forEach((q, i) => {
      const growth = q.size === large && large !== small ? `${(oursMed[i] / oursMed[requests.findIndex((p) => p.name === q.name && p.size === small)]).toFixed(1)}×` : '';
      const ratio = theirsMed ? `${(theirsMed[i] / oursMed[i]).toFixed(2)}×` : '-';
      console.log(row([q.name, String(q.size), msText(oursMed[i]), msText(theirsMed?.[i]), ratio, growth], widths));
    });
    const summary = (xs: readonly number[] | undefined) => (xs ? `p50 ${msText(pct(xs, 50))}, p99 ${msText(pct(xs, 99))}, max ${msText(Math.max(...xs))}` : '-');
    console.log(`  over the set: Rulesmith ${summary(oursMed)}; ModSecurity ${summary(theirsMed)}`);
  }
  console.log(`\n  ratio = ModSecurity ÷ Rulesmith (below 1: Rulesmith slower); growth = Rulesmith's time at ${large} bytes ÷ at ${small} (linear ≈ ${(large / small).toFixed(0)}×).`);
}

main().catch((e: unknown) => {
  console.error(e);
  process.exitCode = 1;
});
