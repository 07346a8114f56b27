/**
 * Rules service throughput, latency and store size (figures, not assertions):
 *
 *   node --import tsx test/bench/service.bench.ts            # scaled-down size part (20 zones)
 *   node --import tsx test/bench/service.bench.ts --full     # 200 zones × 500 rules, 10,000 PATCHes
 *   … --seconds N                                            # measured seconds per load (default 6)
 *   … --only get|patch|post|post-small|mixed --load-only    # one load (RULESMITH_BENCH_CPU_PROF=<dir>: profile the service)
 *   … --clients N                                            # concurrent clients (default 32, the figure)
 *   RULESMITH_BENCH_NODE_ARGS="--trace-gc --trace-gc-nvp" RULESMITH_BENCH_SERVICE_OUT=/tmp/gc.out …  # then gcSummary.ts /tmp/gc.out /tmp/gc.out.floor
 *   RULESMITH_BENCH_SPREAD=1 …                               # also each load's latency spread (p5 … p99.9), under its row
 *
 * CPU/request: the service process's CPU time (from /proc, Linux) over a whole load divided by
 * the requests answered in it: a figure other processes on a shared machine change little.
 * Thread CPU: the same for its main thread alone, the one that handles every request: the
 * service saturates when that thread is busy all the time, so 1 ÷ this figure is the most
 * requests a second it can answer.
 * Client CPU: the same for this process, the load generator (httpClient.ts: raw keep-alive
 * sockets; Node's http client took 0.15–0.28 ms a request, a core the server could not use).
 *
 * Load part: the service runs as `rulesmith serve --seed demo` in a child process (the
 * built CLI, server/out/cli.js: `npm run build` first; its SQLite file in a temporary folder), so the load generator in
 * this process does not share the service's event loop. 32 clients, each with its own
 * keep-alive connection, send requests back to back for a fixed time after a warm-up:
 *
 *   - GET   the zone's http_request_firewall_custom entry point (20 rules);
 *   - PATCH one rule of it (each client its rule, a new expression every time: the rule
 *     is validated, a new version written and committed durably before the answer);
 *   - POST  a rule to a custom ruleset of the account (one ruleset per client): the rulesets
 *     grow through the run (to about 400 rules), and so does the answer (the ruleset with all
 *     its rules, as the hosted API answers);
 *   - POST  the same, each client moving on to a new ruleset every 50 rules: answers of a
 *     steady size, as a team adding rules to rulesets of tens of rules would see;
 *   - GET   the entry point by all clients but one while that one loops PUTs of a 500-rule entry
 *     point of another Enterprise zone (each PUT changes 50 of the 500 rules, as an apply of a
 *     Terraform plan re-sends the whole list; all 500 are validated; `--put-changes N` changes
 *     N of them instead, 500 for the worst case: every rule a new row).
 *
 * Then the same loads against a floor in the same run (service-floor.ts: node:http with
 * the same GET body; for a write, one durable SQLite insert per request, WAL and
 * synchronous=FULL, without and with the service's grouping of commits; for each POST load,
 * the same insert answered with every body POSTed to that path so far, an answer that grows
 * as the service's does, also without and with grouped commits), so the figures
 * read as a share of what this machine can do at all.
 *
 * Size part (in this process, the service in-process too): bytes the store grows per
 * PATCH of one rule in a 500-rule ruleset; then Z zones × 500 rules (20 by default,
 * 200 with --full) and P PATCHes (1,000, or 10,000 with --full) spread over them, and
 * the store's size after.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createService } from '../../server/src/service/service';
import { RULESET_CACHE_BYTES, rulesetCacheSize } from '../../server/src/service/rulesetStore';
import { Store } from '../../server/src/service/store';
import { DEMO_ACCOUNT, demoZoneId, seedDemo } from '../../server/src/service/seed';
import { demoSeedSteps } from '../../server/src/service/routes/index';
import { type Answer, Connection } from './httpClient';
import { collectGarbage } from '../cpuTime';
import { cpuMs, mainThreadCpuMs, row } from './measure';
import { startService, type Service } from './serviceProcess';

const args = process.argv.slice(2);
const FULL = args.includes('--full');
const secondsAt = args.indexOf('--seconds');
const clientsAt = args.indexOf('--clients');
const CLIENTS = clientsAt >= 0 ? Number(args[clientsAt + 1]) : 32;
if (!Number.isInteger(CLIENTS) || CLIENTS < 2) throw new Error('--clients takes a whole number of at least 2 (the mixed load needs one client for the PUTs and one for GETs)');
const WARMUP_MS = 1_500;
const RUN_MS = (secondsAt >= 0 ? Number(args[secondsAt + 1]) : 6) * 1000;
const onlyAt = args.indexOf('--only');
const ONLY = onlyAt >= 0 ? args[onlyAt + 1] : undefined;
const skipped: Figures = { requests: 0, perSecond: NaN, p50: NaN, p99: NaN, max: NaN, failures: 0 };
/** Whether --only leaves one of these loads to run (a floor runs for its loads only: its GC trace is then of those alone). */
const needs = (...loads: string[]) => ONLY === undefined || loads.includes(ONLY);
/** The load named `name` unless --only names another. */
const maybe = (name: string, run: () => Promise<Figures>): Promise<Figures> => (needs(name) ? run() : Promise.resolve(skipped));
/** The steady POST load: rules per ruleset before a client moves on to its next one, and rulesets per client (a client stops after the last). */
const SMALL = 50;
const SMALL_SETS = 24;
const RULES = 20;
const BIG = 500;
const ZONE = demoZoneId('enterprise.example.com');
const BIG_ZONE = demoZoneId('firewall.example.com');
const CUSTOM = 'http_request_firewall_custom';

/** `path` under the service's API URL. */
function call(conn: Connection, svc: { url: URL; token: string }, method: string, path: string, body?: unknown): Promise<Answer> {
  const text = body === undefined ? undefined : JSON.stringify(body);
  const target = new URL(path.replace(/^\//, ''), svc.url);
  return conn.request(method, target.pathname + target.search, { authorization: `Bearer ${svc.token}`, ...(text !== undefined ? { 'content-type': 'application/json' } : {}) }, text);
}

function connection(url: URL): Connection {
  return new Connection(url.hostname, Number(url.port));
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? 0;
}

interface Figures {
  readonly requests: number;
  readonly perSecond: number;
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
  readonly failures: number;
  readonly firstFailure?: string;
  /** Mean size of the answers' bodies, in bytes. */
  readonly answerBytes?: number;
  /** The latencies' percentiles from p5 to p99.9, in ms (RULESMITH_BENCH_SPREAD). */
  readonly spread?: string;
  /** CPU time the server process spent per request of the whole load (warm-up included), when the OS tells it. */
  readonly cpuPerRequest?: number;
  /** The same for the server's main thread alone. */
  readonly threadCpuPerRequest?: number;
  /** The same for this process, the load generator: CPU the server being measured could not use. */
  readonly clientCpuPerRequest?: number;
}

/** The load's figures with the server's CPU per request (noise from other processes does not enter it). */
async function withCpu(pid: number, run: (count: () => void) => Promise<Figures>): Promise<Figures> {
  let all = 0;
  const before = cpuMs([pid]);
  const threadBefore = mainThreadCpuMs([pid]);
  const mine = process.cpuUsage();
  const r = await run(() => all++);
  const after = cpuMs([pid]);
  const threadAfter = mainThreadCpuMs([pid]);
  const own = process.cpuUsage(mine);
  if (all === 0) return r;
  return {
    ...r,
    clientCpuPerRequest: (own.user + own.system) / 1000 / all,
    ...(before !== undefined && after !== undefined ? { cpuPerRequest: (after - before) / all } : {}),
    ...(threadBefore !== undefined && threadAfter !== undefined ? { threadCpuPerRequest: (threadAfter - threadBefore) / all } : {}),
  };
}

type Next = (client: number, i: number) => { method: string; path: string; body?: unknown } | undefined;

/** `clients` loops sending `next(client, i)` back to back (undefined: that client sits out); latencies after the warm-up only. */
function load(svc: Service, next: Next, clients = CLIENTS): Promise<Figures> {
  return withCpu(svc.pid, (count) => loadCounted(svc, next, count, clients));
}

/** The loop of load(); with `apart`, client 0's latencies go there instead (the PUTs of the mixed load). */
async function loadCounted(svc: Service, next: Next, count: () => void, clients: number, apart?: number[]): Promise<Figures> {
  const latencies: number[] = [];
  let answerBytes = 0;
  let failures = 0;
  let firstFailure: string | undefined;
  const t0 = performance.now();
  const measureFrom = t0 + WARMUP_MS;
  const end = measureFrom + RUN_MS;
  await Promise.all(
    Array.from({ length: clients }, async (_, client) => {
      // One keep-alive connection per client, as independent API clients would have.
      const conn = connection(svc.url);
      for (let i = 0; ; i++) {
        const start = performance.now();
        if (start >= end) break;
        const r = next(client, i);
        if (!r) break;
        const answer = await call(conn, svc, r.method, r.path, r.body);
        count();
        const done = performance.now();
        if (start >= measureFrom && done <= end) {
          if (apart && client === 0) apart.push(done - start);
          else {
            latencies.push(done - start);
            answerBytes += answer.body.length;
          }
          if (answer.status >= 300) {
            failures++;
            firstFailure ??= `${answer.status} ${answer.body.slice(0, 300)}`;
          }
        }
      }
      conn.close();
    }),
  );
  return { ...figures(latencies, failures, firstFailure), answerBytes: answerBytes / Math.max(1, latencies.length) };
}

function figures(latencies: number[], failures = 0, firstFailure?: string): Figures {
  latencies.sort((a, b) => a - b);
  const spread = process.env.RULESMITH_BENCH_SPREAD && latencies.length > 0 ? [5, 10, 25, 50, 75, 90, 95, 99, 99.9].map((q) => `p${q} ${percentile(latencies, q).toFixed(1)}`).join(', ') : undefined;
  return {
    ...(spread ? { spread } : {}),
    requests: latencies.length,
    perSecond: latencies.length / (RUN_MS / 1000),
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    max: latencies[latencies.length - 1] ?? 0,
    failures,
    ...(firstFailure ? { firstFailure } : {}),
  };
}

function ruleFor(i: number, variant: number): Record<string, unknown> {
  return {
    action: i % 3 === 0 ? 'managed_challenge' : 'block',
    expression: `(http.request.uri.path wildcard "/app-${i}/*" and ip.src in {192.0.2.0/24 198.51.100.${variant % 250}}) or (http.host eq "h${i}.example.com" and http.request.method in {"POST" "PUT"})`,
    description: `Rule ${i} (edit ${variant})`,
    ref: `rule-${i}`,
  };
}

const changesAt = args.indexOf('--put-changes');
/** Rules each 500-rule PUT of the mixed load changes (a divisor of 500). */
const PUT_CHANGES = changesAt >= 0 ? Number(args[changesAt + 1]) : 50;
if (!Number.isInteger(PUT_CHANGES) || PUT_CHANGES < 1 || BIG % PUT_CHANGES !== 0) throw new Error(`--put-changes takes a divisor of ${BIG} (50, 100, 250, 500), got ${args[changesAt + 1]}`);

/** The 500-rule list of PUT number `n`: PUT_CHANGES rules, the n-th group of them (mod 500), changed. */
function bigRules(n: number): Record<string, unknown>[] {
  return Array.from({ length: BIG }, (_, i) => ruleFor(i, Math.floor(i / PUT_CHANGES) === n % (BIG / PUT_CHANGES) ? n : 0));
}

/** The heap in use after a full collection, in MB: what the service keeps, not what it has yet to collect. */
function heapAfterGc(): string {
  collectGarbage();
  return `${(process.memoryUsage().heapUsed / 1e6).toFixed(0)} MB`;
}

const f = (ms: number) => `${ms.toFixed(1)} ms`;
const widths = [46, 9, 8, 9, 9, 9, 7, 14, 12, 12, 12];

function print(rows: readonly (readonly [string, Figures, Figures | undefined])[]): void {
  console.log(row(['request', 'requests', 'req/s', 'p50', 'p99', 'max', 'errors', 'req/s of floor', 'CPU/request', 'thread CPU', 'client CPU'], widths));
  for (const [name, r, base] of rows) {
    const share = base ? `${((100 * r.perSecond) / base.perSecond).toFixed(0)}%` : '';
    console.log(row([name, String(r.requests), r.perSecond.toFixed(0), f(r.p50), f(r.p99), f(r.max), String(r.failures), share, r.cpuPerRequest === undefined ? '' : `${r.cpuPerRequest.toFixed(2)} ms`, r.threadCpuPerRequest === undefined ? '' : `${r.threadCpuPerRequest.toFixed(2)} ms`, r.clientCpuPerRequest === undefined ? '' : `${r.clientCpuPerRequest.toFixed(2)} ms`], widths));
    if (r.spread) console.log(`    spread: ${r.spread} ms`);
    if (r.firstFailure) console.log(`  first failure: ${r.firstFailure}`);
  }
}

async function loadPart(dir: string): Promise<void> {
  const svc = await startService(dir);
  try {
    const conn = connection(svc.url);
    const entry = (zone: string) => `/zones/${zone}/rulesets/phases/${CUSTOM}/entrypoint`;
    const put = await call(conn, svc, 'PUT', entry(ZONE), { rules: Array.from({ length: RULES }, (_, i) => ruleFor(i, 0)) });
    if (put.status !== 200) throw new Error(`entry point PUT failed: ${put.status} ${put.body}`);
    const rs = JSON.parse(put.body).result as { id: string; rules: { id: string }[] };
    /** A new empty custom ruleset of the account: its id. */
    const customRuleset = async (name: string): Promise<string> => {
      const made = await call(conn, svc, 'POST', `/accounts/${DEMO_ACCOUNT.id}/rulesets`, { name, kind: 'custom', phase: CUSTOM, rules: [] });
      if (made.status !== 200) throw new Error(`ruleset create failed: ${made.status} ${made.body}`);
      return (JSON.parse(made.body).result as { id: string }).id;
    };
    const customs: string[] = [];
    for (let c = 0; c < CLIENTS; c++) customs.push(await customRuleset(`bench ${c}`));
    // The steady POST load: each client fills its rulesets one after another, SMALL rules each.
    const smalls: string[][] = [];
    if (needs('post-small')) {
      for (let c = 0; c < CLIENTS; c++) {
        smalls.push([]);
        for (let k = 0; k < SMALL_SETS; k++) smalls[c]!.push(await customRuleset(`bench ${c}.${k}`));
      }
    }
    const big = await call(conn, svc, 'PUT', entry(BIG_ZONE), { rules: bigRules(0) });
    if (big.status !== 200) throw new Error(`500-rule PUT failed: ${big.status} ${big.body}`);
    const getBody = await call(conn, svc, 'GET', entry(ZONE));
    conn.close();

    const getOf: Next = () => ({ method: 'GET', path: entry(ZONE) });
    const patchOf: Next = (client, i) => {
      const rule = client % RULES;
      // Clients sharing a rule (32 clients, 20 rules) still change it every time.
      return { method: 'PATCH', path: `/zones/${ZONE}/rulesets/${rs.id}/rules/${rs.rules[rule]!.id}`, body: ruleFor(rule, client * 100_000 + i + 1) };
    };
    // A custom ruleset holds at most 1000 rules: a client stops there.
    const postOf: Next = (client, i) => (i < 1000 ? { method: 'POST', path: `/accounts/${DEMO_ACCOUNT.id}/rulesets/${customs[client]}/rules`, body: { ...ruleFor(i, client), ref: `c${client}-${i}` } } : undefined);
    const postSmallOf: Next = (client, i) => {
      const set = smalls[client]?.[Math.floor(i / SMALL)];
      return set === undefined ? undefined : { method: 'POST', path: `/accounts/${DEMO_ACCOUNT.id}/rulesets/${set}/rules`, body: { ...ruleFor(i, client), ref: `s${client}-${i}` } };
    };
    let puts = 0;
    const putLatencies: number[] = [];
    const mixedOf: Next = (client, i) => {
      if (client > 0) return getOf(client, i);
      puts++;
      return { method: 'PUT', path: entry(BIG_ZONE), body: { rules: bigRules(i + 1) } };
    };
    const get = await maybe('get', () => load(svc, getOf));
    const patch = await maybe('patch', () => load(svc, patchOf));
    const post = await maybe('post', () => load(svc, postOf));
    const postSmall = await maybe('post-small', () => load(svc, postSmallOf));
    const mixedGet = await maybe('mixed', () => loadCounted(svc, mixedOf, () => {}, CLIENTS, putLatencies));
    await svc.stop();

    // The floor, same run, same clients: what node:http and a durable SQLite write cost alone.
    const getBodyFile = join(dir, 'get.json');
    writeFileSync(getBodyFile, getBody.body);
    /** The write loads against a floor: one commit per request, or grouped as the service groups them. */
    const floorWrites = async (f: Service) => ({
      patch: needs('patch', 'post', 'post-small') ? await load(f, patchOf) : skipped,
      post: needs('post') ? await load(f, postOf) : skipped,
      postSmall: needs('post-small') ? await load(f, postSmallOf) : skipped,
    });
    const floor = await startService(dir, { getBodyFile, token: 'floor-token' });
    const floorGet = needs('get', 'mixed') ? await load(floor, getOf) : skipped;
    const { patch: floorPatch, post: floorPost, postSmall: floorPostSmall } = await floorWrites(floor);
    await floor.stop();
    const grouped = await startService(dir, { getBodyFile, token: 'floor-token', grouped: true });
    const { patch: groupedPatch, post: groupedPost, postSmall: groupedPostSmall } = await floorWrites(grouped);
    await grouped.stop();

    console.log(`rules service on loopback, ${CLIENTS} concurrent keep-alive clients, ${RUN_MS / 1000} s after ${WARMUP_MS / 1000} s warm-up; entry point of ${RULES} rules (${getBody.body.length} bytes)`);
    const puts500 = figures(putLatencies);
    print([
      ['GET entry point', get, floorGet],
      ['  floor: node:http, same body', floorGet, undefined],
      ['PATCH rule (new version, durable)', patch, floorPatch],
      ['POST rule (new version, durable)', post, floorPatch],
      ['  floor: the insert, answering its path\'s list', floorPost, undefined],
      ['  floor: the same, commits grouped', groupedPost, undefined],
      [`POST rule, rulesets of up to ${SMALL} rules`, postSmall, floorPatch],
      ['  floor: the insert, answering its path\'s list', floorPostSmall, undefined],
      ['  floor: the same, commits grouped', groupedPostSmall, undefined],
      ['  floor: one durable SQLite insert', floorPatch, undefined],
      ['  floor: the same, commits grouped', groupedPatch, undefined],
      [`GET entry point, ${CLIENTS - 1} clients, during 500-rule PUTs (${PUT_CHANGES} changed)`, mixedGet, floorGet],
      ['  the 500-rule PUTs of the one other client', puts500, undefined],
    ]);
    console.log(`(${puts} PUTs of 500 rules sent during that load)`);
    const kb = (r: Figures) => (r.answerBytes === undefined ? '–' : `${(r.answerBytes / 1024).toFixed(1)} KB`);
    if (needs('post', 'post-small')) console.log(`(answers averaged: POST ${kb(post)}, its floor ${kb(floorPost)}; POST to rulesets of up to ${SMALL} rules ${kb(postSmall)}, its floor ${kb(floorPostSmall)})`);
  } finally {
    await svc.stop();
  }
}

async function sizePart(dir: string): Promise<void> {
  const zones = FULL ? 200 : 20;
  const patches = FULL ? 10_000 : 1_000;
  const store = new Store(join(dir, 'size.db'));
  const seeded = seedDemo(store, demoSeedSteps)!;
  const token = seeded.credentials.find((c) => c.name === 'demo admin')!.value;
  const running = createService({ store });
  await new Promise<void>((resolve) => running.server.listen(0, '127.0.0.1', resolve));
  const svc = { url: new URL(`${running.url()}/`), token };
  const conn = connection(svc.url);
  try {
    // Zones of the demo account on the Enterprise plan (quota 1000 custom rules).
    const ids: string[] = [];
    store.write(() => {
      for (let z = 0; z < zones; z++) {
        const id = demoZoneId(`bench-${z}.example.com`);
        store.run("INSERT INTO zones (id, account_id, name, plan, status, created_on) VALUES (?, ?, ?, 'enterprise', 'active', '2024-01-01T00:00:00Z')", [id, DEMO_ACCOUNT.id, `bench-${z}.example.com`]);
        ids.push(id);
      }
    });
    const rulesets: { zone: string; id: string; rules: string[] }[] = [];
    for (const zone of ids) {
      const r = await call(conn, svc, 'PUT', `/zones/${zone}/rulesets/phases/${CUSTOM}/entrypoint`, { rules: bigRules(0) });
      if (r.status !== 200) throw new Error(`PUT failed: ${r.status} ${r.body.slice(0, 300)}`);
      const rs = JSON.parse(r.body).result as { id: string; rules: { id: string }[] };
      rulesets.push({ zone, id: rs.id, rules: rs.rules.map((x) => x.id) });
    }
    const filled = store.usedBytes();
    const heapFilled = heapAfterGc();
    // Bytes per PATCH of one rule in a 500-rule ruleset (one zone, 200 PATCHes).
    const one = rulesets[0]!;
    const before = store.usedBytes();
    const perPatchRuns = 200;
    const patchTimes: number[] = [];
    for (let i = 0; i < perPatchRuns; i++) {
      const t = performance.now();
      const r = await call(conn, svc, 'PATCH', `/zones/${one.zone}/rulesets/${one.id}/rules/${one.rules[i % BIG]}`, ruleFor(i % BIG, 1_000 + i));
      patchTimes.push(performance.now() - t);
      if (r.status !== 200) throw new Error(`PATCH failed: ${r.status} ${r.body.slice(0, 300)}`);
    }
    const perPatch = (store.usedBytes() - before) / perPatchRuns;
    const ruleBytes = JSON.stringify(ruleFor(1, 1_001)).length;
    // PATCHes spread over every zone.
    const t0 = performance.now();
    for (let i = 0; i < patches; i++) {
      const rs = rulesets[i % rulesets.length]!;
      const k = Math.floor(i / rulesets.length) % BIG;
      const r = await call(conn, svc, 'PATCH', `/zones/${rs.zone}/rulesets/${rs.id}/rules/${rs.rules[k]}`, ruleFor(k, 2_000 + i));
      if (r.status !== 200) throw new Error(`PATCH failed: ${r.status} ${r.body.slice(0, 300)}`);
    }
    const elapsed = performance.now() - t0;
    const heapPatched = heapAfterGc();
    const versions = await call(conn, svc, 'GET', `/zones/${one.zone}/rulesets/${one.id}/versions?per_page=50`);
    const list = JSON.parse(versions.body) as { result: unknown[]; result_info: { cursor?: string } };
    const p = figures(patchTimes);
    console.log(`\nstore size (in-process service, one client, ${FULL ? 'full size' : 'scaled down: --full for 200 zones and 10,000 PATCHes'})`);
    console.log(`  one rule PATCHed in a 500-rule ruleset: ${perPatch.toFixed(0)} bytes per PATCH (the rule's JSON is ${ruleBytes} bytes); PATCH p50 ${f(p.p50)}, p99 ${f(p.p99)}`);
    console.log(`  ${zones} zones × ${BIG} rules: ${(filled / 1e6).toFixed(1)} MB; after ${patches.toLocaleString('en')} more PATCHes (${((patches * 1000) / elapsed).toFixed(0)} PATCH/s, sequential): ${(store.usedBytes() / 1e6).toFixed(1)} MB`);
    const cached = rulesetCacheSize(store);
    console.log(`  the service's heap after a full collection: ${heapFilled} once filled, ${heapPatched} after the PATCHes; rulesets cached: ${cached.rulesets}, ${(cached.bytes / 1e6).toFixed(1)} MB of JSON (budget ${(RULESET_CACHE_BYTES / 1e6).toFixed(1)} MB)`);
    console.log(`  versions list of a ruleset with ${perPatchRuns + 1 + Math.ceil(patches / zones)} versions: first page of ${list.result.length}, next cursor ${list.result_info.cursor ? 'given' : 'none'}`);
  } finally {
    conn.close();
    await running.close();
    store.close();
  }
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'rulesmith-bench-service-'));
  try {
    if (!args.includes('--size-only')) await loadPart(dir);
    if (!args.includes('--load-only')) await sizePart(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(e);
  process.exitCode = 1;
});
