/**
 * Security events (figures, not assertions):
 *
 *   node --import tsx test/bench/events.bench.ts [EVENTS]      (default 1,000,000)
 *   node --import tsx test/bench/events.bench.ts proxy         (section 3 only)
 *
 * 1. The sink's cost on the request path: `record()` per evaluated request (it only
 *    queues), handing a batch to the events thread, then the thread's write per event
 *    (one transaction per batch, each event one row plus its share of the hourly counts).
 * 2. The GraphQL queries over EVENTS stored events of one zone spread over 7 days (40 rules
 *    with a skewed share, 4 actions, 2,000 client IPs, 500 paths), run in-process through
 *    the same `runGraphql` the endpoint calls (no HTTP): top rules over the 7 days (the
 *    hourly counts serve it; target < 200 ms), top rules with a path filter (no hourly
 *    counts: every matching event is read), top IPs over one day, events per hour by
 *    action, and the 100 newest events.
 * 3. The WAF proxy's throughput with events on and off, side by side (eventsProxy.ts; needs
 *    `npm run build`): RULESMITH_BENCH_SECONDS (default 1) per round and side,
 *    RULESMITH_BENCH_ROUNDS (default 30) interleaved rounds. Many short rounds, because this
 *    machine's speed drifts over seconds: two identical services (RULESMITH_BENCH_NOISE_FLOOR=1)
 *    differed by 0.5% over 30 rounds of 1 s, and by up to 6% over 6 rounds of 4 s.
 * The events file is a temporary one, written by the events thread as `serve` writes it.
 * Wall times swing with the load of a shared machine; the least CPU time of the runs (this
 * process's, all threads) is what load disturbs least.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Database } from 'node-sqlite3-wasm';
import { runGraphql } from '../../server/src/service/events/graphql';
import { eventsFileOf, eventsSchema, HOURLY_REBUILD } from '../../server/src/service/events/schema';
import { SecurityEvents } from '../../server/src/service/events/writer';
import { DEMO_ACCOUNT, demoZoneId, seedDemo } from '../../server/src/service/seed';
import { demoSeedSteps } from '../../server/src/service/routes/index';
import { Store } from '../../server/src/service/store';
import { CATALOG, evaluated } from '../service/events/fixture';
import { proxyEventsCost } from './eventsProxy';
import { row } from './measure';

const ONLY_PROXY = process.argv[2] === 'proxy';
const EVENTS = ONLY_PROXY ? 0 : Number(process.argv[2] ?? 1_000_000);
const PROXY_SECONDS = Math.max(1, Number(process.env.RULESMITH_BENCH_SECONDS ?? 1));
const PROXY_ROUNDS = Math.max(1, Number(process.env.RULESMITH_BENCH_ROUNDS ?? 30));
const ZONE = demoZoneId('enterprise.example.com');
const NOW = Date.UTC(2026, 10, 26, 12, 30);
const DAY = 86_400_000;

function stats(samples: number[]): string[] {
  const s = [...samples].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
  return [at(0.5), at(0.99), s[s.length - 1]!].map((v) => (v < 1 ? `${(v * 1000).toFixed(1)} µs` : `${v.toFixed(1)} ms`));
}

async function main(): Promise<void> {
  if (!ONLY_PROXY) await sinkAndQueries();
  await proxyEventsCost(PROXY_SECONDS, PROXY_ROUNDS);
}

async function sinkAndQueries(): Promise<void> {
const dir = mkdtempSync(join(tmpdir(), 'rulesmith-events-bench-'));
try {
  const store = new Store(join(dir, 'events.db'));
  seedDemo(store, demoSeedSteps);

  // --- 1. The sink ---------------------------------------------------------------------
  const requests = Array.from({ length: 20_000 }, (_, i) =>
    evaluated(ZONE, { path: i % 3 === 0 ? '/admin' : i % 3 === 1 ? '/health' : '/search', ua: i % 5 === 0 ? 'curl/8' : 'Mozilla/5.0', query: i % 7 === 0 ? 'q=union' : '', time: NOW - DAY + i }),
  );
  const sink = new SecurityEvents(store, { catalog: CATALOG, flushMs: 60_000 });
  await sink.flush(); // the thread started and the file open, before anything is timed
  const recordUs: number[] = [];
  const handOverUs: number[] = [];
  const flushMs: number[] = [];
  let written = 0;
  let flushCpuUs = 0;
  for (let b = 0; b < requests.length; b += 500) {
    for (const r of requests.slice(b, b + 500)) {
      const t = performance.now();
      sink.record(r);
      recordUs.push(performance.now() - t);
    }
    const before = sink.stats.written;
    const t = performance.now();
    const cpu0 = process.cpuUsage();
    const flushed = sink.flush();
    handOverUs.push(performance.now() - t);
    await flushed;
    const cpu = process.cpuUsage(cpu0);
    flushCpuUs += cpu.user + cpu.system;
    flushMs.push(performance.now() - t);
    written += sink.stats.written - before;
  }
  const perEventUs = (flushMs.reduce((a, b) => a + b, 0) * 1000) / written;
  console.log(`sink: ${requests.length} requests, ${written} events, batches of 500 requests`);
  console.log(row(['', 'p50', 'p99', 'max'], [34, 10, 10, 10]));
  console.log(row(['record() per request (request path)', ...stats(recordUs)], [34, 10, 10, 10]));
  console.log(row(['hand-over per batch (request thread)', ...stats(handOverUs)], [34, 10, 10, 10]));
  console.log(row(['written per batch (events thread)', ...stats(flushMs)], [34, 10, 10, 10]));
  console.log(`write cost per event: ${perEventUs.toFixed(1)} µs wall, ${(flushCpuUs / written).toFixed(1)} µs CPU of all threads (amortized over the batches)`);
  await sink.close();

  // --- 2. The queries over EVENTS events -----------------------------------------------
  // Filled straight into the events file (one statement), then read through the events thread.
  let t = performance.now();
  const raw = new Database(eventsFileOf(store.realFile));
  raw.exec('PRAGMA locking_mode = EXCLUSIVE');
  raw.exec('PRAGMA journal_mode = WAL');
  eventsSchema(raw);
  raw.exec('BEGIN; DELETE FROM security_events; DELETE FROM security_events_hourly');
  raw.run(
    `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ?),
       m AS (SELECT i, CAST(40 * ((i % 1000) / 1000.0) * ((i % 1000) / 1000.0) AS INT) AS k,
                    CASE i % 10 WHEN 0 THEN 'log' WHEN 1 THEN 'managed_challenge' WHEN 2 THEN 'skip' ELSE 'block' END AS action FROM n)
     INSERT INTO security_events (ray_id, time, zone_id, action, outcome, rule_action, source, phase, ruleset_id, rule_id, ref, description,
       client_ip, country, asn, method, host, path, query, user_agent, http_version, response_status, anomaly_score, anomaly_scores, defaulted_fields, body_truncated, origin)
     SELECT printf('%016x', i), ? - 7 * ? + i * (7 * ? / ?), ?, action, 'terminated', action, 'firewallCustom', 'http_request_firewall_custom',
       'cccccccccccccccccccccccccccccccc', printf('%032x', k), 'rule-' || k, 'rule number ' || k,
       '198.51.' || (i % 2000 / 250) || '.' || (i % 250), 'NL', 64500, 'GET', 'enterprise.example.com', '/p/' || (i % 500), '', 'Mozilla/5.0', 'HTTP/1.1', 403, 0, '{}', '[]', 0, 'proxy'
     FROM m`,
    [EVENTS - 1, NOW, DAY, DAY, EVENTS, ZONE],
  );
  raw.exec(`${HOURLY_REBUILD}; COMMIT`);
  const stored = Number((raw.get('SELECT COUNT(*) AS n FROM security_events') as { n: number }).n);
  const hourly = Number((raw.get('SELECT COUNT(*) AS n FROM security_events_hourly') as { n: number }).n);
  raw.close();
  console.log(`\nstored ${stored} events (${hourly} hourly counts) in ${((performance.now() - t) / 1000).toFixed(1)} s`);
  const reader = new SecurityEvents(store, { catalog: CATALOG });

  const principal = { kind: 'key' as const, userId: 'bench', accounts: new Set([DEMO_ACCOUNT.id]) };
  const iso = (ms: number) => new Date(ms).toISOString();
  const week = `datetime_geq: "${iso(NOW - 7 * DAY)}", datetime_leq: "${iso(NOW)}"`;
  const day = `datetime_geq: "${iso(NOW - DAY)}", datetime_leq: "${iso(NOW)}"`;
  const zone = (inner: string) => `{ viewer { zones(filter: {zoneTag: "${ZONE}"}) { ${inner} } } }`;
  const queries: [string, string][] = [
    ['top rules, 7 days', zone(`firewallEventsAdaptiveGroups(limit: 10, filter: {${week}}, orderBy: [count_DESC]) { count dimensions { ruleId description } }`)],
    ['top rules, 7 days, path filter', zone(`firewallEventsAdaptiveGroups(limit: 10, filter: {${week}, clientRequestPath_like: "/p/1%"}, orderBy: [count_DESC]) { count dimensions { ruleId } }`)],
    ['top IPs, 1 day', zone(`firewallEventsAdaptiveGroups(limit: 10, filter: {${day}}, orderBy: [count_DESC]) { count dimensions { clientIP } }`)],
    ['per hour by action, 7 days', zone(`firewallEventsAdaptiveGroups(limit: 1000, filter: {${week}}, orderBy: [datetimeHour_ASC]) { count dimensions { datetimeHour action } }`)],
    ['100 newest events', zone(`firewallEventsAdaptive(limit: 100, filter: {${day}}) { datetime action ruleId clientIP clientRequestPath rayName }`)],
  ];
  console.log(row(['query (wall: p50, p99, max; least CPU)', 'p50', 'p99', 'max', 'CPU min', 'rows'], [34, 10, 10, 10, 12, 6]));
  for (const [name, query] of queries) {
    const samples: number[] = [];
    let cpuMin = Infinity;
    let rows = 0;
    const runs = name.includes('path filter') || name.includes('IPs') ? 5 : 20;
    for (let i = 0; i < runs + 2; i++) {
      t = performance.now();
      const cpu0 = process.cpuUsage();
      const r = (await runGraphql(store, reader, principal, { query }, undefined, NOW)) as { data?: any; errors?: unknown[] };
      const took = performance.now() - t;
      const cpu = process.cpuUsage(cpu0);
      if (i >= 2) cpuMin = Math.min(cpuMin, (cpu.user + cpu.system) / 1000);
      if (r.errors) throw new Error(`${name}: ${JSON.stringify(r.errors)}`);
      rows = (Object.values(r.data.viewer.zones[0])[0] as unknown[]).length;
      if (i >= 2) samples.push(took);
    }
    console.log(row([name, ...stats(samples), `${cpuMin.toFixed(1)} ms`, String(rows)], [34, 10, 10, 10, 12, 6]));
  }
  await reader.close();
  store.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
}

void main();
