/**
 * Evaluation speed: our compiled filters against Cloudflare's engine (wirefilter 0.7.0,
 * the native library that the `firewalker` package ships), on the same expressions and
 * the same field values.
 *
 *   node --import tsx test/bench/evaluate.bench.ts      (RULESMITH_BENCH_ROUNDS, default 300)
 *
 * The wirefilter side is a small C program, test/bench/wirefilter/harness.c, compiled with
 * the system compiler (`cc`, or $CC) into ~/.cache/rulesmith-bench/ and run as a child
 * process: it registers firewalker's scheme, parses and compiles each expression, builds
 * an execution context with its field values, and on request times a batch of matches —
 * no FFI layer between the engine and the clock. Our side is the core bundled by esbuild
 * as the CLI ships it (RULESMITH_BENCH_TSX=1: through tsx), with field values prepared
 * once (prepareFields), so that only matching is timed on both sides.
 *
 * It then times check (our parse + type-check, what the service and the editor run on every
 * rule) against wirefilter's parse + compile of the same text, the same way.
 *
 * Rounds interleave the two engines on the same expression, batch for batch (which one
 * goes first alternates), so that load from other processes falls on both alike. Each
 * batch gives one sample: ns per match, over a batch sized to about half a millisecond of
 * wirefilter's time. Per expression it prints each side's p50 / p99 / max over the
 * samples, the ratio of the medians (ours / wirefilter: below 1 is faster), and the
 * median of the per-round ratios.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { LineChild } from './lineChild';
import { boundRegexBacktracking } from '../../server/src/regexBudget';
import { FIREWALKER_FIELDS, type FieldType } from '../diff/wirefilter';

const here = dirname(fileURLToPath(import.meta.url));
const CACHE = join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'rulesmith-bench');
const ROUNDS = Number(process.env.RULESMITH_BENCH_ROUNDS ?? 300);
/** Target wirefilter time per batch, in ns. */
const BATCH_NS = 500_000;

type Core = typeof import('./wirefilter/rulesmith-eval');

// --- The expressions -----------------------------------------------------------------------

/** The typical rule of check.bench.ts; every test in it is evaluated on BASE. */
const TYPICAL =
  'http.request.uri.path contains "/admin" and not ip.src in {192.0.2.0/24 198.51.100.0/24} and http.request.method in {"POST" "PUT"}';
let BIG = TYPICAL;
while (BIG.length + TYPICAL.length + 6 < 4096) BIG += ` or (${TYPICAL})`;
/**
 * The same size with no test repeated (a repeated test is computed once: codegen.ts); GET:
 * every disjunct is evaluated, and false. Our generated code runs the cheap tests of a
 * conjunction first (the method), so with GET it skips the searches; the POST case that
 * follows makes every disjunct's `contains` run (no path matches), wirefilter's order.
 */
const distinct = (i: number): string => TYPICAL.replace('"/admin"', `"/admin/${i}"`).replace('"PUT"', `"PUT${i}"`);
let BIG_DISTINCT = distinct(0);
for (let i = 1; BIG_DISTINCT.length + distinct(i).length + 6 < 4096; i++) BIG_DISTINCT += ` or (${distinct(i)})`;

/** One request (values within both engines' types: Int fits 32 bits). */
const BASE: Record<string, unknown> = {
  'http.host': 'example.com',
  'http.request.method': 'POST',
  'http.request.uri.path': '/api/v1/admin/users',
  'http.user_agent': 'Mozilla/5.0 (X11; Linux x86_64) curl/8.5.0',
  'ip.src': '203.0.113.9',
  'ip.src.country': 'GB',
  'ip.src.asnum': 64500,
  'cf.edge.server_port': 443,
  ssl: true,
  'http.request.headers': { 'user-agent': ['Mozilla/5.0 (X11; Linux x86_64) curl/8.5.0'], accept: ['*/*'], 'x-forwarded-proto': ['https'] },
};

interface Case {
  readonly name: string;
  readonly expr: string;
  readonly fields: Record<string, unknown>;
}

const CASES: readonly Case[] = [
  { name: `typical rule (${TYPICAL.length} chars)`, expr: TYPICAL, fields: BASE },
  // GET: the last test of every disjunct fails, so all of them are evaluated.
  { name: `4 KB expression (${BIG.length} chars)`, expr: BIG, fields: { ...BASE, 'http.request.method': 'GET' } },
  { name: `4 KB, no test repeated (${BIG_DISTINCT.length} chars)`, expr: BIG_DISTINCT, fields: { ...BASE, 'http.request.method': 'GET', 'http.request.uri.path': '/api/v1/admin/9/users' } },
  { name: `4 KB, no test repeated, every search run (POST)`, expr: BIG_DISTINCT, fields: { ...BASE, 'http.request.method': 'POST', 'http.request.uri.path': '/api/v1/admin/x/users' } },
  { name: '`matches` regex', expr: 'http.user_agent matches "(?i)(curl|wget|python-requests)/[0-9]+"', fields: BASE },
  {
    name: 'sets (139 chars)',
    expr: 'ip.src.country in {"CN" "RU" "KP" "IR"} or http.request.method in {"PUT" "DELETE" "PATCH"} or cf.edge.server_port in {8080 8443 2052..2096}',
    fields: BASE,
  },
  {
    name: 'six mixed tests',
    expr: 'http.host eq "example.com" and http.request.method eq "POST" and starts_with(http.request.uri.path, "/api/") and ip.src.asnum ne 13335 and not ip.src in {10.0.0.0/8 172.16.0.0/12} and len(http.user_agent) gt 10',
    fields: BASE,
  },
  { name: 'any(lower(…)[*] contains …)', expr: 'any(lower(http.request.headers["user-agent"][*])[*] contains "bot") and not ssl', fields: BASE },
];

// --- The wirefilter harness --------------------------------------------------------------------

/** The harness binary and the library, built (again) when the source is newer; or why not. */
function harness(): { bin: string; lib: string } | { why: string } {
  if (process.platform !== 'linux' || process.arch !== 'x64') return { why: `firewalker ships its .so for linux-x64 only (this is ${process.platform}-${process.arch})` };
  let lib: string;
  try {
    lib = join(dirname(createRequire(import.meta.url).resolve('firewalker/package.json')), 'lib', 'libwirefilter_ffi.so');
  } catch {
    return { why: 'the firewalker package is not installed' };
  }
  if (!existsSync(lib)) return { why: `${lib} is missing` };
  const src = join(here, 'wirefilter/harness.c');
  const bin = join(CACHE, 'wirefilter-harness');
  mkdirSync(CACHE, { recursive: true });
  if (!existsSync(bin) || statSync(bin).mtimeMs < statSync(src).mtimeMs) {
    const cc = spawnSync(process.env.CC ?? 'cc', ['-O2', '-o', bin, src, '-ldl'], { encoding: 'utf8' });
    if (cc.error) return { why: `no C compiler (${process.env.CC ?? 'cc'}: ${cc.error.message}); install one (apt-get install gcc) or set CC` };
    if (cc.status !== 0) return { why: `cannot build the harness: ${cc.stderr.trim().split('\n').slice(0, 3).join(' / ')}` };
  }
  return { bin, lib };
}

const hex = (s: string | Uint8Array): string => (s.length === 0 ? '-' : Buffer.from(s as string, 'utf8').toString('hex'));

/** The harness's input: firewalker's scheme, then each case's expression and values. */
function harnessInput(cases: readonly Case[]): string {
  const types = new Map<string, FieldType>(FIREWALKER_FIELDS);
  const lines = FIREWALKER_FIELDS.map(([name, type]) => `field ${name} ${type}`);
  for (const c of cases) {
    lines.push(`case ${hex(c.expr)}`);
    for (const [name, v] of Object.entries(c.fields)) {
      const type = types.get(name);
      switch (type) {
        case 'Bytes':
          lines.push(`bytes ${name} ${hex(v as string)}`);
          break;
        case 'Int':
          lines.push(`int ${name} ${v as number}`);
          break;
        case 'Bool':
          lines.push(`bool ${name} ${v ? 1 : 0}`);
          break;
        case 'Ip':
          lines.push(`ip ${name} ${v as string}`);
          break;
        case 'Array<Bytes>':
          lines.push(`array ${name} ${(v as string[]).map(hex).join(',') || '-'}`);
          break;
        case 'Map<Array<Bytes>>':
          for (const [k, items] of Object.entries(v as Record<string, string[]>)) lines.push(`key ${name} ${hex(k)} ${items.map(hex).join(',') || '-'}`);
          break;
        default:
          throw new Error(`${name}: ${type ?? 'not a field of firewalker’s scheme'} is not supported by the bench`);
      }
    }
  }
  lines.push('go');
  return lines.join('\n') + '\n';
}

class Harness extends LineChild {
  constructor(bin: string, lib: string) {
    super(bin, [lib]);
  }

  /** Reads `case` lines up to `ready`: each case's match result and parse / compile ns. */
  async loaded(): Promise<{ result: boolean; parseNs: number; compileNs: number }[]> {
    const out: { result: boolean; parseNs: number; compileNs: number }[] = [];
    for (;;) {
      const l = await this.line();
      const f = l.split(' ');
      if (f[0] === 'ready') return out;
      if (f[0] !== 'case') throw new Error(`harness: ${l}`);
      out[Number(f[1])] = { result: f[2] === '1', parseNs: Number(f[3]), compileNs: Number(f[4]) };
    }
  }

  /** Times n matches of case i in the harness (this process waits meanwhile): ns per match. */
  async batch(i: number, n: number): Promise<number> {
    this.send(`m ${i} ${n}\n`);
    const l = await this.line();
    if (!l.startsWith('t ')) throw new Error(`harness: ${l}`);
    return Number(l.split(' ')[1]) / n;
  }

  /** Times n parses + compiles of case i in the harness: ns per parse + compile. */
  async parseBatch(i: number, n: number): Promise<number> {
    this.send(`p ${i} ${n}\n`);
    const l = await this.line();
    if (!l.startsWith('t ')) throw new Error(`harness: ${l}`);
    return Number(l.split(' ')[1]) / n;
  }

  end(): void {
    this.child.stdin.end();
  }
}

// --- Our side --------------------------------------------------------------------------------

async function loadCore(): Promise<{ core: Core; how: string }> {
  if (process.env.RULESMITH_BENCH_TSX === '1') return { core: (await import('./wirefilter/rulesmith-eval')) as Core, how: 'core loaded through tsx' };
  const { buildSync } = await import('esbuild');
  const outfile = join(CACHE, 'rulesmith-eval.cjs');
  mkdirSync(CACHE, { recursive: true });
  buildSync({ entryPoints: [join(here, 'wirefilter/rulesmith-eval.ts')], outfile, bundle: true, platform: 'node', target: 'node20', format: 'cjs', logLevel: 'warning', mainFields: ['module', 'main'] });
  return { core: createRequire(import.meta.url)(outfile) as Core, how: 'core bundled by esbuild as the CLI ships' };
}

/** ns per call of `f` over n calls. */
function ourBatch(f: () => boolean, n: number): number {
  let hits = 0;
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) if (f()) hits++;
  const ns = Number(process.hrtime.bigint() - t0);
  if (hits !== 0 && hits !== n) throw new Error('a filter changed its mind');
  return ns / n;
}

/** ns per call of `check` (parse + type-check) over n calls. */
function checkBatch(check: () => boolean, n: number): number {
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) if (!check()) throw new Error('a benchmark expression stopped checking');
  return Number(process.hrtime.bigint() - t0) / n;
}

// --- Figures ---------------------------------------------------------------------------------

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

function fmt(ns: number): string {
  return ns >= 10_000 ? `${(ns / 1000).toFixed(1)} µs` : `${ns.toFixed(0)} ns`;
}

function table(rows: string[][]): void {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  for (const r of rows) console.log(r.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  '));
}

async function main(): Promise<void> {
  // As every Rulesmith process runs the engine (regexBudget.ts).
  boundRegexBacktracking();
  const { core, how } = await loadCore();
  const ours = CASES.map((c) => {
    const compiled = core.compileExpression(c.expr);
    if (!compiled.filter) throw new Error(`${c.name}: ${compiled.diagnostics.map((d) => d.message).join('; ')}`);
    const prepared = core.prepareFields(c.fields, core.httpScheme);
    if (prepared.errors.length > 0) throw new Error(`${c.name}: ${prepared.errors.map((e) => e.message).join('; ')}`);
    const filter = compiled.filter;
    const values = prepared.values;
    return () => filter.matches(values);
  });
  const checks = CASES.map((c) => () => core.checkExpression(c.expr).ir !== undefined);
  console.log(`node ${process.version}, ${process.platform}-${process.arch}, ${how}`);

  const h = harness();
  if ('why' in h) {
    console.log(`wirefilter's native harness unavailable (${h.why}): timing ours only`);
    const rows = [['expression', 'ours p50']];
    CASES.forEach((c, i) => {
      const samples = Array.from({ length: 31 }, () => ourBatch(ours[i], 20_000)).sort((a, b) => a - b);
      rows.push([c.name, fmt(percentile(samples, 50))]);
    });
    table(rows);
    return;
  }

  const wf = new Harness(h.bin, h.lib);
  wf.send(harnessInput(CASES));
  const loaded = await wf.loaded();
  CASES.forEach((c, i) => {
    const mine = ours[i]();
    if (mine !== loaded[i].result) throw new Error(`${c.name}: ours says ${mine}, wirefilter says ${loaded[i].result}`);
  });

  // Batch sizes from wirefilter's speed; a warm-up (JIT on our side, caches on both).
  const sizes: number[] = [];
  for (let i = 0; i < CASES.length; i++) {
    await wf.batch(i, 2000);
    const per = await wf.batch(i, 2000);
    sizes.push(Math.max(100, Math.round(BATCH_NS / Math.max(per, 1))));
    const warmEnd = performance.now() + 200;
    while (performance.now() < warmEnd) ourBatch(ours[i], 1000);
  }

  const theirs: number[][] = CASES.map(() => []);
  const mine: number[][] = CASES.map(() => []);
  for (let r = 0; r < ROUNDS; r++) {
    for (let i = 0; i < CASES.length; i++) {
      if (r % 2 === 0) {
        theirs[i].push(await wf.batch(i, sizes[i]));
        mine[i].push(ourBatch(ours[i], sizes[i]));
      } else {
        mine[i].push(ourBatch(ours[i], sizes[i]));
        theirs[i].push(await wf.batch(i, sizes[i]));
      }
    }
  }
  // Check (our parse + type-check) against wirefilter's parse + compile, the same way:
  // batches of about BATCH_NS of wirefilter's time, interleaved.
  const checkSizes: number[] = [];
  for (let i = 0; i < CASES.length; i++) {
    await wf.parseBatch(i, 5);
    const per = await wf.parseBatch(i, 20);
    checkSizes.push(Math.max(5, Math.round(BATCH_NS / Math.max(per, 1))));
    const warmEnd = performance.now() + 200;
    while (performance.now() < warmEnd) checkBatch(checks[i], 10);
  }
  const CHECK_ROUNDS = Math.max(20, Math.round(ROUNDS / 5));
  const theirParse: number[][] = CASES.map(() => []);
  const myCheck: number[][] = CASES.map(() => []);
  for (let r = 0; r < CHECK_ROUNDS; r++) {
    for (let i = 0; i < CASES.length; i++) {
      if (r % 2 === 0) {
        theirParse[i].push(await wf.parseBatch(i, checkSizes[i]));
        myCheck[i].push(checkBatch(checks[i], checkSizes[i]));
      } else {
        myCheck[i].push(checkBatch(checks[i], checkSizes[i]));
        theirParse[i].push(await wf.parseBatch(i, checkSizes[i]));
      }
    }
  }
  wf.end();

  console.log(`wirefilter 0.7.0 (firewalker's libwirefilter_ffi.so) called from C; ${ROUNDS} interleaved rounds, one batch per side per round`);
  console.log('ns per match over a batch; ratio = ours / wirefilter (below 1: ours is faster)\n');
  const rows = [['expression', 'match', 'wirefilter p50', 'p99', 'max', 'ours p50', 'p99', 'max', 'ratio of p50s', 'median paired ratio']];
  CASES.forEach((c, i) => {
    const paired = mine[i].map((m, k) => m / theirs[i][k]).sort((a, b) => a - b);
    const t = [...theirs[i]].sort((a, b) => a - b);
    const m = [...mine[i]].sort((a, b) => a - b);
    const ratio = percentile(m, 50) / percentile(t, 50);
    rows.push([
      c.name,
      String(loaded[i].result),
      fmt(percentile(t, 50)),
      fmt(percentile(t, 99)),
      fmt(t[t.length - 1]),
      fmt(percentile(m, 50)),
      fmt(percentile(m, 99)),
      fmt(m[m.length - 1]),
      `${ratio.toFixed(2)}×`,
      `${percentile(paired, 50).toFixed(2)}×`,
    ]);
  });
  table(rows);

  console.log(`\ncheck (our parse + type-check) against wirefilter's parse + compile; ${CHECK_ROUNDS} interleaved rounds; µs per expression`);
  const checkRows = [['expression', 'wirefilter p50', 'p99', 'max', 'ours p50', 'p99', 'max', 'ratio of p50s', 'median paired ratio']];
  CASES.forEach((c, i) => {
    const paired = myCheck[i].map((m, k) => m / theirParse[i][k]).sort((a, b) => a - b);
    const t = [...theirParse[i]].sort((a, b) => a - b);
    const m = [...myCheck[i]].sort((a, b) => a - b);
    const us = (ns: number): string => `${(ns / 1000).toFixed(1)} µs`;
    checkRows.push([c.name, us(percentile(t, 50)), us(percentile(t, 99)), us(t[t.length - 1]), us(percentile(m, 50)), us(percentile(m, 99)), us(m[m.length - 1]), `${(percentile(m, 50) / percentile(t, 50)).toFixed(2)}×`, `${percentile(paired, 50).toFixed(2)}×`]);
  });
  table(checkRows);
}

main().catch((e: unknown) => {
  console.error(e);
  process.exitCode = 1;
});
