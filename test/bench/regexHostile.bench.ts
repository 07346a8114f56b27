/**
 * Hostile regexes against `rulesmith serve` (issue 19 §3), figures not assertions:
 *
 *   node --import tsx test/bench/regexHostile.bench.ts
 *
 * The service runs as `rulesmith serve --seed demo` in a child process (the built CLI,
 * server/out/cli.js: `npm run build` first). GET clients read an entry point back to back, first alone, then while one
 * writer PUTs another zone's entry point with 10 new patterns each time, every one near
 * the engine's size limit (`a{300000}`-like, `(.*){1,46000}`-like: seconds and ~20 MB each
 * to compile), and for comparison the same writer with small patterns. Printed: the GETs'
 * p50/p99/max latency in each phase, the writes done, and the service's resident memory
 * after each phase. A write only checks
 * its patterns (regexSize.ts), so the GET figures should not move and memory should not
 * grow; test/service/regexHostile.test.ts holds the growth ratio as a test.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { demoZoneId } from '../../server/src/service/seed';
import { row } from './measure';
import { startService, type Service } from './serviceProcess';

const GET_CLIENTS = 8;
const WARMUP_MS = 1_000;
const RUN_MS = 5_000;
const RULES_PER_WRITE = 10;
const READ = `/zones/${demoZoneId('enterprise.example.com')}/rulesets/phases/http_request_firewall_custom/entrypoint`;
const WRITE = `/zones/${demoZoneId('business.example.com')}/rulesets/phases/http_request_firewall_custom/entrypoint`;

/** Distinct patterns the engine accepts (its boundaries: `a{327679}`, `(.*){1,46812}`). */
const hostile = (k: number) => (k % 2 === 0 ? `a{${300_000 + (k % 27_000)}}z${k}` : `(.*){1,${46_000 + (k % 800)}}z${k}`);

/** The same writes with small patterns: what a PUT costs anyway (validation, a durable SQLite commit). */
const bounded = (k: number) => `bounded-${k}-[a-z]{3}`;

/** Resident memory of a process in MiB (Linux /proc), or undefined elsewhere. */
function rssMiB(pid: number): number | undefined {
  const status = `/proc/${pid}/status`;
  if (!existsSync(status)) return undefined;
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(status, 'utf8'));
  return m ? Number(m[1]) / 1024 : undefined;
}

async function call(svc: Service, method: string, path: string, body?: unknown): Promise<number> {
  const res = await fetch(new URL(path.slice(1), svc.url), {
    method,
    headers: { authorization: `Bearer ${svc.token}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  await res.arrayBuffer();
  return res.status;
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? 0;
}

interface Figures {
  readonly gets: number;
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
  readonly writes: number;
  readonly failures: number;
}

/** GET clients for the run; with `writing`, one writer PUTting new patterns (`writing.pattern(k)`) meanwhile. */
async function phase(svc: Service, writing?: { readonly pattern: (k: number) => string; readonly from: number }): Promise<Figures> {
  const latencies: number[] = [];
  let failures = 0;
  let writes = 0;
  const t0 = performance.now();
  const measureFrom = t0 + WARMUP_MS;
  const end = measureFrom + RUN_MS;
  const getter = async () => {
    while (performance.now() < end) {
      const start = performance.now();
      const status = await call(svc, 'GET', READ);
      const done = performance.now();
      if (start >= measureFrom && done <= end) {
        latencies.push(done - start);
        if (status !== 200) failures++;
      }
    }
  };
  const writer = async (pattern: (k: number) => string, from: number) => {
    for (let w = 0; performance.now() < end; w++) {
      const rules = Array.from({ length: RULES_PER_WRITE }, (_, i) => ({ action: 'block', expression: `http.user_agent matches "${pattern(from + w * RULES_PER_WRITE + i)}"` }));
      if ((await call(svc, 'PUT', WRITE, { rules })) !== 200) failures++;
      writes++;
    }
  };
  await Promise.all([...Array.from({ length: GET_CLIENTS }, getter), ...(writing ? [writer(writing.pattern, writing.from)] : [])]);
  latencies.sort((a, b) => a - b);
  return { gets: latencies.length, p50: percentile(latencies, 50), p99: percentile(latencies, 99), max: latencies[latencies.length - 1] ?? 0, writes, failures };
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'rulesmith-bench-regex-'));
  const svc = await startService(dir);
  try {
    const f = (ms: number) => `${ms.toFixed(1)} ms`;
    const mib = (v: number | undefined) => (v === undefined ? 'n/a' : `${v.toFixed(0)} MiB`);
    const widths = [34, 7, 9, 9, 9, 8, 12, 8];
    console.log(`rulesmith serve: ${GET_CLIENTS} GET clients for ${RUN_MS / 1000} s after ${WARMUP_MS / 1000} s, with and without a writer of hostile regexes (${RULES_PER_WRITE} new ones per PUT)`);
    const rules = Array.from({ length: 20 }, (_, i) => ({ action: 'block', expression: `http.host eq "h${i}.example.com" and http.user_agent matches "bot-${i}[0-9]+"` }));
    if ((await call(svc, 'PUT', READ, { rules })) !== 200) throw new Error('the entry point to read could not be written');
    await phase(svc); // warm-up of the service's code paths, not printed
    console.log(`RSS before: ${mib(rssMiB(svc.pid))}`);
    console.log(row(['phase', 'GETs', 'p50', 'p99', 'max', 'writes', 'RSS after', 'errors'], widths));
    const quiet = await phase(svc);
    console.log(row(['GETs alone', String(quiet.gets), f(quiet.p50), f(quiet.p99), f(quiet.max), '0', mib(rssMiB(svc.pid)), String(quiet.failures)], widths));
    for (const [name, writes] of [
      ['GETs + bounded PUTs', { pattern: bounded, from: 0 }],
      ['GETs + hostile PUTs', { pattern: hostile, from: 0 }],
      ['GETs + hostile PUTs, again', { pattern: hostile, from: 1_000_000 }],
    ] as const) {
      const r = await phase(svc, writes);
      console.log(row([name, String(r.gets), f(r.p50), f(r.p99), f(r.max), String(r.writes), mib(rssMiB(svc.pid)), String(r.failures)], widths));
    }
  } finally {
    await svc.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(e);
  process.exitCode = 1;
});
