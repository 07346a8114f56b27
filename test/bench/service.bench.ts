/**
 * Rules service throughput and latency on loopback (figures, not assertions):
 *
 *   node --import tsx test/bench/service.bench.ts
 *
 * The service runs as `rulesmith serve --seed demo` in a child process (from source
 * through tsx: the same code as the built CLI, with its request log on stdout and its
 * SQLite file in a temporary folder, `synchronous=FULL`), so the load generator in this
 * process does not share the service's event loop. 32 clients, each with its own
 * keep-alive connection, send requests back to back for a fixed time after a warm-up:
 *
 *   - GET  /zones/{id}/rulesets/phases/http_request_firewall_custom/entrypoint
 *     (an entry point of 20 rules);
 *   - PATCH /zones/{id}/rulesets/{ruleset}/rules/{rule} — each client edits its own rule,
 *     changing its expression every time, so every request validates the rule with the
 *     core, writes a new version of the whole ruleset and commits it durably.
 *
 * Then the same load against a floor in the same run (service-floor.ts: node:http with
 * the same GET body; one durable SQLite insert per PATCH), so the figures read as a share
 * of what this machine can do at all. Printed: requests, throughput, p50/p99/max latency,
 * any non-2xx answers (which should be none), and throughput as a share of the floor's.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { demoZoneId } from '../../server/src/service/seed';
import { row } from './measure';
import { startService, type Service } from './serviceProcess';

const CLIENTS = 32;
const WARMUP_MS = 1_500;
const RUN_MS = 6_000;
const RULES = 20;
const ZONE = demoZoneId('enterprise.example.com');

interface Answer {
  readonly status: number;
  readonly body: string;
}

function call(agent: Agent, svc: Service, method: string, path: string, body?: unknown): Promise<Answer> {
  const text = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request(
      new URL(path.replace(/^\//, ''), svc.url),
      {
        method,
        agent,
        headers: {
          authorization: `Bearer ${svc.token}`,
          ...(text !== undefined ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) } : {}),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(text);
  });
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

interface Figures {
  readonly requests: number;
  readonly perSecond: number;
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
  readonly failures: number;
  readonly firstFailure?: string;
}

/** `CLIENTS` loops sending `next(client, i)` back to back; latencies after the warm-up only. */
async function load(svc: Service, next: (client: number, i: number) => { method: string; path: string; body?: unknown }): Promise<Figures> {
  const latencies: number[] = [];
  let failures = 0;
  let firstFailure: string | undefined;
  const t0 = performance.now();
  const measureFrom = t0 + WARMUP_MS;
  const end = measureFrom + RUN_MS;
  await Promise.all(
    Array.from({ length: CLIENTS }, async (_, client) => {
      // One keep-alive connection per client, as 32 independent API clients would have.
      const agent = new Agent({ keepAlive: true, maxSockets: 1 });
      for (let i = 0; ; i++) {
        const start = performance.now();
        if (start >= end) break;
        const r = next(client, i);
        const answer = await call(agent, svc, r.method, r.path, r.body);
        const done = performance.now();
        if (start >= measureFrom && done <= end) {
          latencies.push(done - start);
          if (answer.status >= 300) {
            failures++;
            firstFailure ??= `${answer.status} ${answer.body.slice(0, 300)}`;
          }
        }
      }
      agent.destroy();
    }),
  );
  latencies.sort((a, b) => a - b);
  return {
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

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'rulesmith-bench-service-'));
  const svc = await startService(dir);
  try {
    const agent = new Agent({ keepAlive: true });
    const entry = `/zones/${ZONE}/rulesets/phases/http_request_firewall_custom/entrypoint`;
    const put = await call(agent, svc, 'PUT', entry, { rules: Array.from({ length: RULES }, (_, i) => ruleFor(i, 0)) });
    if (put.status !== 200) throw new Error(`entry point PUT failed: ${put.status} ${put.body}`);
    const rs = JSON.parse(put.body).result as { id: string; rules: { id: string }[] };

    const getBody = await call(agent, svc, 'GET', entry);
    agent.destroy();
    const patchOf = (client: number, i: number) => {
      const rule = client % RULES;
      // Clients sharing a rule (32 clients, 20 rules) still change it every time.
      return { method: 'PATCH', path: `/zones/${ZONE}/rulesets/${rs.id}/rules/${rs.rules[rule]!.id}`, body: ruleFor(rule, client * 100_000 + i + 1) };
    };
    const get = await load(svc, () => ({ method: 'GET', path: entry }));
    const patch = await load(svc, patchOf);
    await svc.stop();

    // The baseline, same run, same clients: what node:http and a durable SQLite write cost alone.
    const getBodyFile = join(dir, 'get.json');
    writeFileSync(getBodyFile, getBody.body);
    const floor = await startService(dir, { getBodyFile, token: 'floor-token' });
    const floorGet = await load(floor, () => ({ method: 'GET', path: entry }));
    const floorPatch = await load(floor, patchOf);
    await floor.stop();

    const widths = [44, 9, 8, 9, 9, 9, 7, 14];
    console.log(`rules service on loopback, ${CLIENTS} concurrent keep-alive clients, ${RUN_MS / 1000} s after ${WARMUP_MS / 1000} s warm-up; entry point of ${RULES} rules (${getBody.body.length} bytes)`);
    console.log(row(['request', 'requests', 'req/s', 'p50', 'p99', 'max', 'errors', 'req/s of floor'], widths));
    const f = (ms: number) => `${ms.toFixed(1)} ms`;
    for (const [name, r, base] of [
      ['GET entry point', get, floorGet],
      ['  floor: node:http, same body', floorGet, undefined],
      ['PATCH rule (new version, durable)', patch, floorPatch],
      ['  floor: one durable SQLite insert', floorPatch, undefined],
    ] as const) {
      const share = base ? `${((100 * r.perSecond) / base.perSecond).toFixed(0)}%` : '';
      console.log(row([name, String(r.requests), r.perSecond.toFixed(0), f(r.p50), f(r.p99), f(r.max), String(r.failures), share], widths));
      if (r.firstFailure) console.log(`  first failure: ${r.firstFailure}`);
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
