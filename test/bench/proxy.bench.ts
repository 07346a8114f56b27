/**
 * The WAF proxy under load: throughput, latency, CPU and memory of `rulesmith serve --proxy`
 * in front of a small app, beside a bare node:http reverse proxy (the floor) and nginx with
 * ModSecurity 3 and CRS 3.3.4 (the anchor), at OWASP paranoia levels 1 and 4
 * (RULESMITH_BENCH_LEVELS), with the verdicts of both WAFs compared request by request.
 *
 *   node --import tsx test/bench/proxy.bench.ts                    (20 s per column, 0.5 min of memory)
 *   RULESMITH_BENCH_SECONDS=3 node --import tsx test/bench/proxy.bench.ts
 *   RULESMITH_BENCH_LEVELS=1 RULESMITH_BENCH_B_NODE_ARGS=--max-semi-space-size=64 node --import tsx test/bench/proxy.bench.ts   (PL1, A/B column)
 *   RULESMITH_BENCH_SECONDS=0 RULESMITH_BENCH_MINUTES=10 node --import tsx test/bench/proxy.bench.ts   (memory only)
 *
 * - Upstream: a node:http app in its own process answering every request with 1 KB.
 * - Request mix: every stage of the CRS 3.3.4 regression tests
 *   (test/fixtures/crs-3.3.4-regression-tests, read by requests/ftw.ts) that node:http can
 *   send, plus as many benign browser-like requests, interleaved.
 * - Floor: a bare node:http reverse proxy (its own process, request piped to the upstream).
 * - Rulesmith: the built CLI (`npm run build`), `serve --seed demo --proxy
 *   migrated.example.com=<upstream>` (`--proxy-workers N` with
 *   RULESMITH_BENCH_PROXY_WORKERS=N, else serve's default: one evaluation thread on a
 *   machine of two cores or more), whose managed entry point is set through the API to the
 *   OWASP-based ruleset at PL N with anomaly threshold 5 (CRS's default, which the
 *   regression tests assume) and nothing else.
 * - Anchor: nginx + libnginx-mod-http-modsecurity + modsecurity-crs (Debian), one worker
 *   process as Rulesmith evaluates on one thread (its proxy thread keeps the sockets), N
 *   with RULESMITH_BENCH_PROXY_WORKERS=N, configured as test/bench/modsec/modsec.ts configures libmodsecurity for the
 *   CRS bench. Installed with apt-get when running as root and missing; else that column is
 *   skipped with a message.
 * - Verdicts: each request of the mix once through each WAF before the timed runs; a 403
 *   is "block", anything else "pass".
 *
 * Per level, each WAF's requests one at a time (RULESMITH_BENCH_ALONE_ROUNDS, default 3; 0
 * skips; right after the WAF's verdict round, which warms it up): each request of the mix
 * alone, to the WAF and to the floor, the fastest answered round kept, and the difference's
 * p50/p90/p99/max: the time a request spends in the WAF when nothing else is queued. And two
 * runs of each column:
 * - saturating (closed loop): 32 keep-alive clients, each sending its next request when the
 *   last is answered, for RULESMITH_BENCH_SECONDS (default 20). Gives the throughput
 *   (the ≥ 1× nginx target) and the CPU time the server's processes used per request
 *   (/proc, user + system). Its latency is mostly time spent queued behind the other 31
 *   clients' requests, so its "added p99 over the floor" is not the latency target;
 * - fixed rate (open loop): requests sent on a schedule, at half the slowest column's
 *   saturated throughput (RULESMITH_BENCH_RATE overrides), each timed from when it was due,
 *   in RULESMITH_BENCH_FIXED_ROUNDS (default 10) rounds that rotate through the columns.
 *   Every server runs at most half loaded, so the difference to the floor is the time a
 *   request spends in the WAF and waiting for it (behind other requests, collector pauses;
 *   the one-at-a-time figures leave the waiting out): its "added p99 over the floor" is the
 *   figure the < 2 ms target (PL1) is about; the median of the rounds' differences is the
 *   steadier one.
 * Then the memory run (RULESMITH_BENCH_MINUTES, default 0.5; 0 skips it): a fresh proxy at
 * PL1 with a rate-limit rule counting per client address, a new client on every request,
 * under the saturating load; RSS and heap every 5 s from the proxy's control API, with
 * first, last, max and the slope over the second half.
 * Each column prints requests/s and p50/p99/max latency (ms, measured by the client). The
 * machine is shared: compare columns of one run, not runs.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createWriteStream, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { randomBytes } from 'node:crypto';
import { yamlFiles } from '../../server/src/corpusFiles';
import { parseFtwFile } from '../../server/src/requests/ftw';
import type { SampleRequest } from '../../server/src/requests/types';
import { setParanoiaLevel, setScoreThreshold } from '../../server/src/managed/preview';
import { defaultCatalog } from '../../server/src/managed/catalog';
import { OWASP_RULESET_ID } from '../../server/src/rulesets/managedIds';
import { demoZoneId } from '../../server/src/service/seed';
import type { Rule } from '../../server/src/rulesets/model';
import { SERVE_NODE_FLAGS } from '../../server/src/serveNodeFlags';
import { PROXY_READY, SERVE_READY } from '../../server/src/serveReady';
import { Pool, type Answer } from './httpClient';
import { builtCli, cpuMs, median, quantile } from './measure';
import { modsecConfig } from './modsec/modsec';
import { freePort } from '../freePort';

const here = dirname(fileURLToPath(import.meta.url));
const repo = join(here, '../..');
const SECONDS = Math.max(0, Number(process.env.RULESMITH_BENCH_SECONDS ?? 20));
const MINUTES = Math.max(0, Number(process.env.RULESMITH_BENCH_MINUTES ?? 0.5));
/** Rounds of the one-at-a-time comparison (alone); 0 skips it. */
const ALONE_ROUNDS = Number(process.env.RULESMITH_BENCH_ALONE_ROUNDS ?? 3);
if (!Number.isInteger(ALONE_ROUNDS) || ALONE_ROUNDS < 0) throw new Error(`RULESMITH_BENCH_ALONE_ROUNDS: '${process.env.RULESMITH_BENCH_ALONE_ROUNDS}' is not a whole number of rounds (0 skips)`);
/** Rounds of the fixed-rate comparison (fixedRateRounds). */
const FIXED_ROUNDS = Math.max(1, Number(process.env.RULESMITH_BENCH_FIXED_ROUNDS ?? 10));
const CLIENTS = 32;
/** OWASP paranoia levels measured: RULESMITH_BENCH_LEVELS=1 for PL1 only (default 1,4). */
const LEVELS = (process.env.RULESMITH_BENCH_LEVELS ?? '1,4').split(',').map((l) => {
  const n = Number(l);
  if (n !== 1 && n !== 2 && n !== 3 && n !== 4) throw new Error(`RULESMITH_BENCH_LEVELS: '${l}' is not a paranoia level (1–4)`);
  return n as 1 | 2 | 3 | 4;
});
const ZONE = 'migrated.example.com';
const CRS_RULES = '/usr/share/modsecurity-crs/rules';
const NGINX_MODULE = '/usr/share/nginx/modules-available/mod-http-modsecurity.conf';

interface Req {
  readonly method: string;
  readonly path: string;
  readonly headers: Record<string, string>;
  readonly body?: Buffer;
}

// --- Processes -------------------------------------------------------------------------

/** Runs `node -e code` and waits for its first line (the port it listens on). */
function nodeChild(code: string): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(process.execPath, ['-e', code], { stdio: ['ignore', 'pipe', 'ignore'] });
  return new Promise((resolve, reject) => {
    child.stdout!.once('data', (d: Buffer) => resolve({ child, port: Number(d.toString().trim()) }));
    child.once('exit', (c) => reject(new Error(`child exited with ${c}`)));
  });
}

const UPSTREAM = `const body = Buffer.alloc(1024, 'x');
require('node:http').createServer((req, res) => { req.resume(); req.on('end', () => { res.writeHead(200, { 'content-type': 'text/plain', 'content-length': 1024 }); res.end(body); }); })
  .listen(0, '127.0.0.1', function () { console.log(this.address().port); });`;

const FLOOR = (upstreamPort: number) => `const http = require('node:http'); const agent = new http.Agent({ keepAlive: true });
http.createServer((req, res) => {
  const up = http.request({ host: '127.0.0.1', port: ${upstreamPort}, method: req.method, path: req.url, headers: req.headers, agent }, (r) => { res.writeHead(r.statusCode, r.headers); r.pipe(res); });
  up.on('error', () => { res.writeHead(502); res.end(); });
  req.pipe(up);
}).listen(0, '127.0.0.1', function () { console.log(this.address().port); });`;

/** How a Rulesmith column is started: the built CLI and node flags (RULESMITH_BENCH_NODE_ARGS, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`). */
interface Build {
  readonly cli: string;
  readonly nodeArgs: readonly string[];
  /** `serve` flags (RULESMITH_BENCH_SERVE_ARGS, e.g. `--events off`). */
  readonly serveArgs: readonly string[];
}

const words = (s: string | undefined) => (s ?? '').split(' ').filter(Boolean);

/**
 * The A/B column: RULESMITH_BENCH_B_CLI (another build's server/out/cli.js, e.g. a commit
 * checked out beside this one), RULESMITH_BENCH_B_NODE_ARGS and/or RULESMITH_BENCH_B_SERVE_ARGS
 * (`serve` flags instead of RULESMITH_BENCH_SERVE_ARGS, e.g. `--proxy-workers 2`) start a second Rulesmith
 * that runs beside the first in every load and fixed-rate round, so that a change is measured
 * against what it replaces in the same run, not against another run's figures.
 */
function buildB(): Build | undefined {
  const cli = process.env.RULESMITH_BENCH_B_CLI;
  const nodeArgs = process.env.RULESMITH_BENCH_B_NODE_ARGS;
  const serveArgs = process.env.RULESMITH_BENCH_B_SERVE_ARGS;
  if (cli === undefined && nodeArgs === undefined && serveArgs === undefined) return undefined;
  if (cli !== undefined && !existsSync(cli)) throw new Error(`RULESMITH_BENCH_B_CLI: ${cli} does not exist`);
  return { cli: cli ?? builtCli(), nodeArgs: words(nodeArgs), serveArgs: words(serveArgs ?? process.env.RULESMITH_BENCH_SERVE_ARGS) };
}

async function rulesmith(upstreamPort: number, dir: string, token: string, options: { build?: Build; label?: string; moreServeArgs?: readonly string[] } = {}): Promise<{ child: ChildProcess; port: number; api: string }> {
  const { cli, nodeArgs, serveArgs: given } = options.build ?? { cli: builtCli(), nodeArgs: words(process.env.RULESMITH_BENCH_NODE_ARGS), serveArgs: words(process.env.RULESMITH_BENCH_SERVE_ARGS) };
  const serveArgs = [...given, ...(options.moreServeArgs ?? [])];
  const workers = process.env.RULESMITH_BENCH_PROXY_WORKERS;
  const child = spawn(process.execPath, [...SERVE_NODE_FLAGS, ...nodeArgs, cli, 'serve', '--port', '0', '--db', join(dir, 'bench.db'), '--seed', 'demo', '--proxy', `${ZONE}=http://127.0.0.1:${upstreamPort}`, '--proxy-listen', '127.0.0.1:0', ...(workers ? ['--proxy-workers', workers] : []), ...serveArgs], {
    env: { ...process.env, RULESMITH_SERVICE_TOKEN: token },
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  let out = '';
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const api = SERVE_READY.exec(out);
      const proxy = PROXY_READY.exec(out);
      if (api && proxy) {
        child.stdout!.removeAllListeners('data');
        // RULESMITH_BENCH_PROXY_OUT=<file>: keep the proxy's output (e.g. with RULESMITH_BENCH_NODE_ARGS=--trace-gc);
        // each other process started in the run (`label`) writes to <file>.<label>.
        const keep = process.env.RULESMITH_BENCH_PROXY_OUT;
        if (keep) child.stdout!.pipe(createWriteStream(options.label ? `${keep}.${options.label}` : keep));
        else child.stdout!.resume();
        resolve({ child, port: Number(new URL(proxy[1]!).port), api: api[1]! });
      }
    });
    child.once('exit', (c) => reject(new Error(`rulesmith serve exited with ${c}:\n${out}`)));
  });
}

async function deployOwasp(api: string, token: string, level: 1 | 2 | 3 | 4): Promise<void> {
  let execute: Rule = { expression: 'true', action: 'execute', action_parameters: { id: OWASP_RULESET_ID }, description: `OWASP PL${level}` };
  execute = setScoreThreshold(setParanoiaLevel(execute, level), 5, undefined, { catalog: defaultCatalog });
  const res = await fetch(`${api}/zones/${demoZoneId(ZONE)}/rulesets/phases/http_request_firewall_managed/entrypoint`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ rules: [execute] }),
  });
  if (!res.ok) throw new Error(`deploying OWASP PL${level}: ${res.status} ${await res.text()}`);
}

/** nginx with ModSecurity, installed when possible; a reason when not. */
function nginxAvailable(): string | undefined {
  const missing = () => !existsSync('/usr/sbin/nginx') || !existsSync(NGINX_MODULE) || !existsSync(CRS_RULES);
  if (missing() && process.getuid?.() === 0) {
    console.log('installing nginx, libnginx-mod-http-modsecurity and modsecurity-crs (apt-get)…');
    spawnSync('apt-get', ['install', '-y', '--no-install-recommends', 'nginx', 'libnginx-mod-http-modsecurity', 'modsecurity-crs'], { stdio: 'ignore', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
  }
  if (missing()) return 'nginx + ModSecurity are not installed (apt-get install nginx libnginx-mod-http-modsecurity modsecurity-crs, as root)';
  return undefined;
}

async function nginx(upstreamPort: number, dir: string, level: number): Promise<{ child: ChildProcess; port: number }> {
  const port = await freePort();
  writeFileSync(join(dir, `modsec-pl${level}.conf`), modsecConfig(CRS_RULES, level, 5));
  const conf = join(dir, `nginx-pl${level}.conf`);
  writeFileSync(
    conf,
    `include ${NGINX_MODULE};
worker_processes ${Math.max(1, Number(process.env.RULESMITH_BENCH_PROXY_WORKERS ?? 0))}; daemon off; pid ${join(dir, `nginx-pl${level}.pid`)}; error_log ${join(dir, 'nginx-error.log')} error;
events { worker_connections 1024; }
http {
  access_log off; client_body_temp_path ${dir}; proxy_temp_path ${dir};
  upstream app { server 127.0.0.1:${upstreamPort}; keepalive 64; }
  server {
    listen 127.0.0.1:${port};
    modsecurity on; modsecurity_rules_file ${join(dir, `modsec-pl${level}.conf`)};
    location / { proxy_pass http://app; proxy_http_version 1.1; proxy_set_header Connection ""; proxy_set_header Host $host; }
  }
}
`,
  );
  const child = spawn('/usr/sbin/nginx', ['-c', conf, '-e', join(dir, 'nginx-error.log')], { stdio: 'ignore' });
  for (let i = 0; i < 200 && child.exitCode === null; i++) {
    await new Promise((r) => setTimeout(r, 100));
    let status: Answer;
    const probe = pool(port, 1);
    try {
      status = await probe.request('GET', '/?q=%3Cscript%3Ealert(1)%3C%2Fscript%3E', { host: ZONE, 'user-agent': 'rulesmith-bench' }, undefined, 10_000);
    } catch {
      continue; // not yet listening
    } finally {
      probe.close();
    }
    // Whatever answers must be nginx's ModSecurity blocking a script tag (its own 403 page): another server that took the port would not give that.
    if (status.status !== 403 || !status.body.includes('<center>nginx') || child.exitCode !== null) break;
    return { child, port };
  }
  child.kill();
  throw new Error(`nginx + ModSecurity did not start on port ${port} (a script tag in the query must get 403); see ${join(dir, 'nginx-error.log')}`);
}

// --- Requests --------------------------------------------------------------------------

function toReq(s: SampleRequest): Req | undefined {
  // A CONNECT is a tunnel request: node's client waits for a tunnel, not a response.
  if (s.method.toUpperCase() === 'CONNECT') return undefined;
  let path = s.url;
  if (!path.startsWith('/')) {
    try {
      const u = new URL(path);
      path = u.pathname + u.search;
    } catch {
      return undefined;
    }
  }
  const headers: Record<string, string> = {};
  for (const [n, v] of s.headers) {
    const k = n.toLowerCase();
    if (['host', 'content-length', 'transfer-encoding', 'connection', 'expect'].includes(k)) continue;
    headers[k] = headers[k] ? `${headers[k]}, ${v}` : v;
  }
  headers.host = ZONE;
  const r: Req = { method: s.method, path, headers, ...(s.body ? { body: Buffer.from(s.body, 'latin1') } : {}) };
  try {
    // What node's client refuses (bad characters in the path or a header) is left out: the
    // mix stays the one earlier runs measured when that client sent it (httpClient.ts does now).
    const probe = request({ method: r.method, path: r.path, headers: r.headers, host: '127.0.0.1', port: 9 });
    probe.on('error', () => undefined);
    probe.destroy();
  } catch {
    return undefined;
  }
  return r;
}

function mix(): { attacks: Req[]; all: Req[] } {
  const attacks: Req[] = [];
  for (const f of yamlFiles(join(repo, 'test/fixtures/crs-3.3.4-regression-tests'))) {
    for (const t of parseFtwFile(readFileSync(f, 'utf8')).tests) {
      if (t.enabled === false) continue;
      for (const st of t.stages) {
        const r = toReq(st.request);
        if (r) attacks.push(r);
      }
    }
  }
  const pages = ['/', '/index.html', '/products?id=42&sort=price', '/search?q=blue+shoes', '/static/app.js', '/api/items/17', '/blog/2024/05/hello-world', '/account/settings'];
  const benign: Req[] = attacks.map((_, i) => ({
    method: i % 10 === 9 ? 'POST' : 'GET',
    path: pages[i % pages.length]!,
    headers: {
      host: ZONE,
      'user-agent': 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0',
      accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8',
      'accept-language': 'en-US,en;q=0.5',
      ...(i % 10 === 9 ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
    },
    ...(i % 10 === 9 ? { body: Buffer.from('name=Ada&email=ada%40example.com&comment=Nice+post') } : {}),
  }));
  const all: Req[] = [];
  for (let i = 0; i < attacks.length; i++) all.push(attacks[i]!, benign[i]!);
  return { attacks, all };
}

/** Sends `r` on one of `pool`'s connections (httpClient.ts: Node's client cost the bench a core at saturation); its status. */
async function send(r: Req, pool: Pool): Promise<number> {
  return (await pool.request(r.method, r.path, r.headers, r.body, 10_000)).status;
}

/** Keep-alive connections to the server on `port`: one per client. */
function pool(port: number, connections: number): Pool {
  return new Pool('127.0.0.1', port, connections);
}

async function verdicts(reqs: readonly Req[], port: number): Promise<boolean[]> {
  const conns = pool(port, 8);
  const out: boolean[] = new Array(reqs.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (next < reqs.length) {
        const i = next++;
        out[i] = (await send(reqs[i]!, conns).catch(() => 0)) === 403;
      }
    }),
  );
  conns.close();
  return out;
}

type Run = { rps: number; p50: number; p99: number; max: number; errors: number; cpuMsPerRequest?: number };

/** A process and its children (nginx's master and its worker). */
function withChildren(pid: number): number[] {
  const out = [pid];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const f = readFileSync(`/proc/${d}/stat`, 'utf8');
      if (Number(f.slice(f.lastIndexOf(')') + 2).split(' ')[1]) === pid) out.push(Number(d));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

function summary(times: number[], seconds: number, errors: number, cpu: number | undefined): Run {
  times.sort((a, b) => a - b);
  const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))] ?? NaN;
  return { rps: times.length / seconds, p50: at(0.5), p99: at(0.99), max: times[times.length - 1] ?? NaN, errors, ...(cpu !== undefined && times.length > 0 ? { cpuMsPerRequest: cpu / times.length } : {}) };
}

/**
 * Saturating (closed loop): CLIENTS keep-alive clients for `seconds`, each sending the mix's
 * next request (round-robin, or what `reqs()` picks) when its last is answered. Each
 * answer's ms, and the failures.
 */
async function closedLoop(reqs: readonly Req[] | (() => Req), port: number, seconds: number): Promise<{ times: number[]; errors: number }> {
  let next = 0;
  const pick = typeof reqs === 'function' ? reqs : () => reqs[next++ % reqs.length]!;
  const conns = pool(port, CLIENTS);
  const times: number[] = [];
  let errors = 0;
  const end = Date.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      while (Date.now() < end) {
        const r = pick();
        const t = process.hrtime.bigint();
        try {
          await send(r, conns);
          times.push(Number(process.hrtime.bigint() - t) / 1e6);
        } catch {
          errors++;
        }
      }
    }),
  );
  conns.close();
  return { times, errors };
}

/** A closed-loop run of SECONDS with the CPU time `pids` spent in it. */
async function load(reqs: readonly Req[], port: number, pids: readonly number[]): Promise<Run> {
  const cpu0 = cpuMs(pids);
  const { times, errors } = await closedLoop(reqs, port, SECONDS);
  const cpu1 = cpuMs(pids);
  return summary(times, SECONDS, errors, cpu0 !== undefined && cpu1 !== undefined ? cpu1 - cpu0 : undefined);
}

/**
 * Fixed rate (open loop): request i is due at start + i/rate and sent then whether or not
 * earlier ones were answered; its latency counts from when it was due, so a server that
 * falls behind is charged for the wait (no coordinated omission). The requests are the mix's
 * from `from` on (wrapping), so that rounds shorter than the mix still cover all of it.
 */
async function fixedRate(reqs: readonly Req[], port: number, rate: number, seconds: number, from: number): Promise<{ times: number[]; errors: number }> {
  const conns = pool(port, 512);
  const times: number[] = [];
  let errors = 0;
  const total = Math.round(rate * seconds);
  const start = performance.now();
  const inFlight: Promise<void>[] = [];
  let i = 0;
  await new Promise<void>((resolve) => {
    const tick = () => {
      const now = performance.now();
      for (; i < total && start + (i * 1000) / rate <= now; i++) {
        const due = start + (i * 1000) / rate;
        inFlight.push(
          send(reqs[(from + i) % reqs.length]!, conns).then(
            () => void times.push(performance.now() - due),
            () => void errors++,
          ),
        );
      }
      if (i >= total) resolve();
      else setTimeout(tick, Math.max(0, start + (i * 1000) / rate - performance.now()));
    };
    tick();
  });
  await Promise.all(inFlight);
  conns.close();
  return { times, errors };
}

/**
 * One request at a time (no queue, no other load): each request of the mix sent to the
 * column and then to the floor, ALONE_ROUNDS times, the fastest answered of each kept; per
 * request the column's time minus the floor's (a request left without an answer in every
 * round on either side is left out and counted). What a request spends in the WAF when it
 * waits for nothing, to set beside the fixed-rate run's added p99 (which adds the waiting).
 */
async function alone(reqs: readonly Req[], port: number, floorPort: number): Promise<{ added: number[]; unanswered: number }> {
  const ourConn = pool(port, 1);
  const floorConn = pool(floorPort, 1);
  const ours = reqs.map(() => Infinity);
  const floors = reqs.map(() => Infinity);
  // A failed request (a reset, a timeout) is no time: it must not win the fastest-of-rounds.
  const timed = async (r: Req, conns: Pool) => {
    const t = performance.now();
    try {
      await send(r, conns);
    } catch {
      return Infinity;
    }
    return performance.now() - t;
  };
  for (let round = 0; round < ALONE_ROUNDS; round++) {
    for (let i = 0; i < reqs.length; i++) {
      ours[i] = Math.min(ours[i]!, await timed(reqs[i]!, ourConn));
      floors[i] = Math.min(floors[i]!, await timed(reqs[i]!, floorConn));
    }
  }
  ourConn.close();
  floorConn.close();
  const added = ours.map((t, i) => t - floors[i]!).filter(Number.isFinite);
  return { added, unanswered: reqs.length - added.length };
}

async function printAlone(name: string, reqs: readonly Req[], port: number, floorPort: number): Promise<void> {
  if (ALONE_ROUNDS === 0) return;
  const { added, unanswered } = await alone(reqs, port, floorPort);
  const q = (p: number) => quantile(added, p).toFixed(2);
  console.log(
    `    ${name}, one request at a time (fastest of ${ALONE_ROUNDS}), added over the floor: p50 ${q(0.5)} ms, p90 ${q(0.9)} ms, p99 ${q(0.99)} ms, max ${Math.max(...added).toFixed(2)} ms${unanswered ? `; ${unanswered} never answered, left out` : ''}`,
  );
}

/**
 * The fixed-rate comparison: FIXED_ROUNDS rounds, each giving every column SECONDS /
 * FIXED_ROUNDS at `rate`, the columns' order rotated from round to round, so that a change
 * of the machine's load falls on all of them (run one after another, 20 s each, nginx's
 * added p99 swung from 3 to 23 ms between runs). Per column, its latencies over all rounds;
 * per round, each column's p99 minus the floor's (columns[0]) in that round; and each
 * `watched` column's event-loop delay and evaluation time over its own rounds (medians of
 * the rounds' percentiles, max), in the order given.
 */
async function fixedRateRounds(
  reqs: readonly Req[],
  columns: readonly Column[],
  rate: number,
  watched: readonly { readonly column: Column; readonly timings: () => Promise<Timings> }[],
): Promise<{ runs: Run[]; addedPerRound: number[][]; watched: { delay: { p99: number; max: number }; evaluation: { p50: number; p99: number; max: number }; evaluating?: { p50: number; p99: number; max: number } }[] }> {
  const seconds = Math.max(1, SECONDS / FIXED_ROUNDS);
  const times = columns.map((): number[] => []);
  const errors = columns.map(() => 0);
  const addedPerRound = columns.map((): number[] => []);
  const seen = watched.map(() => ({ delayP99s: [] as number[], delayMax: 0, p50s: [] as number[], p99s: [] as number[], max: 0, workP50s: [] as number[], workP99s: [] as number[], workMax: 0 }));
  for (let r = 0; r < FIXED_ROUNDS; r++) {
    const roundP99 = columns.map(() => NaN);
    for (let k = 0; k < columns.length; k++) {
      const c = (k + r) % columns.length;
      const w = watched.findIndex((x) => x.column === columns[c]);
      if (w >= 0) await watched[w]!.timings();
      // Every column gets the same requests in a round; the next round goes on through the mix.
      const run = await fixedRate(reqs, columns[c]!.port, rate, seconds, r * Math.round(rate * seconds));
      if (w >= 0) {
        const t = await watched[w]!.timings();
        const o = seen[w]!;
        o.delayP99s.push(t.eventLoopDelay.p99);
        o.delayMax = Math.max(o.delayMax, t.eventLoopDelay.max);
        o.p50s.push(t.evaluation.p50);
        o.p99s.push(t.evaluation.p99);
        o.max = Math.max(o.max, t.evaluation.max);
        const work = t.evaluation.evaluating;
        if (work) {
          o.workP50s.push(work.p50);
          o.workP99s.push(work.p99);
          o.workMax = Math.max(o.workMax, work.max);
        }
      }
      times[c]!.push(...run.times);
      errors[c]! += run.errors;
      roundP99[c] = quantile(run.times, 0.99);
    }
    columns.forEach((_, c) => addedPerRound[c]!.push(roundP99[c]! - roundP99[0]!));
  }
  return {
    runs: columns.map((_, c) => summary(times[c]!, seconds * FIXED_ROUNDS, errors[c]!, undefined)),
    addedPerRound,
    watched: seen.map((o) => ({
      delay: { p99: median(o.delayP99s), max: o.delayMax },
      evaluation: { p50: median(o.p50s), p99: median(o.p99s), max: o.max },
      ...(o.workP50s.length ? { evaluating: { p50: median(o.workP50s), p99: median(o.workP99s), max: o.workMax } } : {}),
    })),
  };
}

interface Timings {
  readonly eventLoopDelay: { p50: number; p99: number; max: number };
  /** `evaluating`: the part spent evaluating, where it ran (absent from a build before session 35). */
  readonly evaluation: { requests: number; p50: number; p99: number; max: number; evaluating?: { p50: number; p99: number; max: number } };
}

/** The proxy's event-loop delay and evaluation time since the last call (GET /.rulesmith/proxy?reset=timings). */
async function timings(port: number, token: string): Promise<Timings> {
  const res = await fetch(`http://127.0.0.1:${port}/.rulesmith/proxy?reset=timings`, { headers: { authorization: `Bearer ${token}` } });
  return ((await res.json()) as { result: { process: Timings } }).result.process;
}

function line(name: string, r: Run): string {
  return `  ${name.padEnd(34)} ${r.rps.toFixed(0).padStart(7)} req/s   p50 ${r.p50.toFixed(2).padStart(7)} ms   p99 ${r.p99.toFixed(2).padStart(7)} ms   max ${r.max.toFixed(1).padStart(7)} ms${r.cpuMsPerRequest !== undefined ? `   cpu ${r.cpuMsPerRequest.toFixed(2)} ms/req` : ''}${r.errors ? `   (${r.errors} errors)` : ''}`;
}

interface Column {
  readonly name: string;
  readonly port: number;
  readonly pids: readonly number[];
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'rulesmith-proxy-bench-'));
  const children: ChildProcess[] = [];
  try {
    const { attacks, all } = mix();
    const up = await nodeChild(UPSTREAM);
    children.push(up.child);
    const token = randomBytes(24).toString('hex');
    if (SECONDS === 0) {
      await memoryRun(all, up.port, dir, token, children);
      return;
    }
    console.log(`request mix: ${attacks.length} CRS regression requests + ${attacks.length} benign; ${CLIENTS} keep-alive clients, ${SECONDS} s per column`);
    const floorChild = await nodeChild(FLOOR(up.port));
    children.push(floorChild.child);
    const floor: Column = { name: 'floor: bare node:http proxy', port: floorChild.port, pids: [floorChild.child.pid!] };
    const rs = await rulesmith(up.port, dir, token);
    children.push(rs.child);
    const b = buildB();
    const rsB = b ? await rulesmith(up.port, mkdtempSync(join(dir, 'b-')), token, { build: b, label: 'b' }) : undefined;
    if (rsB) children.push(rsB.child);
    if (b) console.log(`A/B: column "(B)" is ${b.cli}${b.nodeArgs.length ? ` with node ${b.nodeArgs.join(' ')}` : ''}${b.serveArgs.length ? `, serve ${b.serveArgs.join(' ')}` : ''}`);
    const noNginx = nginxAvailable();
    if (noNginx) console.log(`anchor skipped: ${noNginx}`);

    console.log('saturating (closed loop):');
    const floorRun = await load(all, floor.port, floor.pids);
    console.log(line(floor.name, floorRun));
    for (const level of LEVELS) {
      await deployOwasp(rs.api, token, level);
      const ours: Column = { name: `rulesmith proxy PL${level}`, port: rs.port, pids: [rs.child.pid!] };
      const ourVerdicts = await verdicts(all, ours.port);
      // The verdict round warmed it up (regexes for long values compile on first use).
      await printAlone(ours.name, all, ours.port, floor.port);
      const ourRun = await load(all, ours.port, ours.pids);
      console.log(line(ours.name, ourRun));
      console.log(`    added p99 over the floor at saturation (mostly queueing): ${(ourRun.p99 - floorRun.p99).toFixed(2)} ms; blocked ${ourVerdicts.filter(Boolean).length} of ${all.length}`);
      let oursB: Column | undefined;
      let bRun: Run | undefined;
      if (rsB) {
        await deployOwasp(rsB.api, token, level);
        oursB = { name: `rulesmith proxy PL${level} (B)`, port: rsB.port, pids: [rsB.child.pid!] };
        const bVerdicts = await verdicts(all, oursB.port);
        bRun = await load(all, oursB.port, oursB.pids);
        console.log(line(oursB.name, bRun));
        console.log(`    B's verdicts differ from A's on ${bVerdicts.filter((v, i) => v !== ourVerdicts[i]).length} of ${all.length}`);
      }
      let theirs: Column | undefined;
      let ngRun: Run | undefined;
      let ng: { child: ChildProcess; port: number } | undefined;
      if (!noNginx) {
        ng = await nginx(up.port, dir, level);
        children.push(ng.child);
        theirs = { name: `nginx + ModSecurity 3 + CRS PL${level}`, port: ng.port, pids: withChildren(ng.child.pid!) };
        const theirVerdicts = await verdicts(all, theirs.port);
        await printAlone(theirs.name, all, theirs.port, floor.port);
        ngRun = await load(all, theirs.port, theirs.pids);
        console.log(line(theirs.name, ngRun));
        const agree = ourVerdicts.filter((v, i) => v === theirVerdicts[i]).length;
        console.log(`    throughput ratio rulesmith/nginx ${(ourRun.rps / ngRun.rps).toFixed(2)}×; verdicts agree on ${agree} of ${all.length} (${((100 * agree) / all.length).toFixed(1)}%); nginx blocked ${theirVerdicts.filter(Boolean).length}`);
      }
      // The latency target is about this run: every server well under its capacity, so the
      // difference is the time a request spends in the WAF and waiting for it, not in a saturated queue.
      const rate = Number(process.env.RULESMITH_BENCH_RATE) || Math.max(1, Math.round(0.5 * Math.min(floorRun.rps, ourRun.rps, ngRun?.rps ?? Infinity, bRun?.rps ?? Infinity)));
      console.log(
        `  fixed rate ${rate} req/s (open loop; half the slowest column's saturated throughput, or RULESMITH_BENCH_RATE), PL${level}, ${FIXED_ROUNDS} rounds of ${Math.max(1, SECONDS / FIXED_ROUNDS)} s per column, order rotated:`,
      );
      const columns = [floor, ours, ...(theirs ? [theirs] : []), ...(oursB ? [oursB] : [])];
      const watched = [{ column: ours, timings: () => timings(ours.port, token), label: 'rulesmith' }, ...(oursB && rsB ? [{ column: oursB, timings: () => timings(rsB.port, token), label: 'rulesmith (B)' }] : [])];
      const fixed = await fixedRateRounds(all, columns, rate, watched);
      columns.forEach((c, i) => console.log(line(c.name, fixed.runs[i]!)));
      fixed.watched.forEach(({ delay: d, evaluation: e, evaluating: w }, i) => {
        const who = watched[i]!.label;
        console.log(`    ${who}'s event-loop delay in its rounds: p99 ${d.p99.toFixed(2)} ms (median of the rounds), max ${d.max.toFixed(2)} ms (a request waits this long for the proxy's thread)`);
        console.log(`    ${who}'s time in the WAF per request in its rounds (fields and rules, its own histogram): p50 ${e.p50.toFixed(2)} ms, p99 ${e.p99.toFixed(2)} ms (medians of the rounds), max ${e.max.toFixed(2)} ms`);
        if (w) console.log(`      of which evaluating, where it ran: p50 ${w.p50.toFixed(2)} ms, p99 ${w.p99.toFixed(2)} ms, max ${w.max.toFixed(2)} ms (the rest: the hand-over to the worker and back, and the wait in its queue)`);
      });
      const added = (i: number) => {
        const perRound = fixed.addedPerRound[i]!;
        return `${(fixed.runs[i]!.p99 - fixed.runs[0]!.p99).toFixed(2)} ms (per round: median ${median(perRound).toFixed(2)}, middle half ${quantile(perRound, 0.25).toFixed(2)}–${quantile(perRound, 0.75).toFixed(2)})`;
      };
      console.log(`    added p99 over the floor at a fixed rate: rulesmith ${added(1)}${theirs ? `; nginx + ModSecurity ${added(2)}` : ''}${oursB ? `; rulesmith (B) ${added(columns.length - 1)}` : ''}`);
      ng?.child.kill('SIGQUIT');
    }
    rs.child.kill('SIGTERM');
    rsB?.child.kill('SIGTERM');
    floorChild.child.kill('SIGTERM');
    if (MINUTES > 0) await memoryRun(all, up.port, mkdtempSync(join(dir, 'memory-')), token, children);
  } finally {
    for (const c of children) c.kill('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * RULESMITH_BENCH_MINUTES=N: the proxy at OWASP PL1 with a rate-limit rule that counts per
 * client address (`ip.src`, from `CF-Connecting-IP` under `--trust-proxy`: a new address on
 * every request, so counters keep being created and the bounded LRU must drop old ones),
 * under the saturating load for N minutes; the proxy's RSS, heap and rate-limit counters
 * (its control API) every 5 s; first, last, max and the slope.
 */
async function memoryRun(all: readonly Req[], upstreamPort: number, dir: string, token: string, children: ChildProcess[]): Promise<void> {
  // --trust-proxy: each request's CF-Connecting-IP is its client (the zone's Business plan counts by ip.src, not by a header).
  const rs = await rulesmith(upstreamPort, dir, token, { label: 'memory', moreServeArgs: ['--trust-proxy'] });
  children.push(rs.child);
  await deployOwasp(rs.api, token, 1);
  const res = await fetch(`${rs.api}/zones/${demoZoneId(ZONE)}/rulesets/phases/http_ratelimit/entrypoint`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      rules: [{ expression: 'true', action: 'block', description: 'per client', ratelimit: { characteristics: ['cf.colo.id', 'ip.src'], period: 60, requests_per_period: 1000, mitigation_timeout: 60 } }],
    }),
  });
  if (!res.ok) throw new Error(`deploying the rate-limit rule: ${res.status} ${await res.text()}`);
  // Every request a new client: counters keep being created, past the LRU's bound (100,000) in a long run.
  let sent = 0;
  const pick = (): Req => {
    const i = sent++;
    const r = all[i % all.length]!;
    return { ...r, headers: { ...r.headers, 'cf-connecting-ip': `10.${(i >>> 16) & 255}.${(i >>> 8) & 255}.${i & 255}` } };
  };
  const samples: { t: number; rss: number; heap: number; heapTotal: number; external: number; counters?: number }[] = [];
  const t0 = Date.now();
  const end = t0 + MINUTES * 60_000;
  const sample = async () => {
    const r = (await (await fetch(`http://127.0.0.1:${rs.port}/.rulesmith/proxy`, { headers: { authorization: `Bearer ${token}` } })).json()) as { result: { process: { rss: number; heapUsed: number; heapTotal: number; external: number; rateLimitCounters?: number } } };
    const p = r.result.process;
    samples.push({ t: (Date.now() - t0) / 1000, rss: p.rss / 2 ** 20, heap: p.heapUsed / 2 ** 20, heapTotal: p.heapTotal / 2 ** 20, external: p.external / 2 ** 20, ...(p.rateLimitCounters !== undefined ? { counters: p.rateLimitCounters } : {}) });
    const s = samples[samples.length - 1]!;
    console.log(`  ${s.t.toFixed(0).padStart(5)} s   rss ${s.rss.toFixed(1)} MiB   heap ${s.heap.toFixed(1)} of ${s.heapTotal.toFixed(1)} MiB   external ${s.external.toFixed(1)} MiB${s.counters !== undefined ? `   rate-limit counters ${s.counters}` : ''}`);
  };
  console.log(`memory: ${MINUTES} min under the saturating load (${CLIENTS} clients), PL1 + a per-client rate limit; a sample every 5 s`);
  let total = 0;
  while (Date.now() < end) {
    const chunk = Math.min(5_000, end - Date.now());
    const run = await closedLoop(pick, rs.port, chunk / 1000);
    total += run.times.length + run.errors;
    await sample();
  }
  const rss = samples.map((s) => s.rss);
  const heap = samples.map((s) => s.heap);
  // The slope over the second half (after warm-up: JIT, the counters' LRU filling).
  const half = samples.slice(Math.floor(samples.length / 2));
  const slope = (k: 'rss' | 'heap') => {
    if (half.length < 2) return NaN;
    const mt = half.reduce((a, s) => a + s.t, 0) / half.length;
    const mv = half.reduce((a, s) => a + s[k], 0) / half.length;
    const num = half.reduce((a, s) => a + (s.t - mt) * (s[k] - mv), 0);
    const den = half.reduce((a, s) => a + (s.t - mt) ** 2, 0);
    return (num / den) * 60;
  };
  console.log(`  ${total} requests; rss first ${rss[0]!.toFixed(1)} last ${rss[rss.length - 1]!.toFixed(1)} max ${Math.max(...rss).toFixed(1)} MiB, slope over the second half ${slope('rss').toFixed(2)} MiB/min`);
  console.log(`  heap first ${heap[0]!.toFixed(1)} last ${heap[heap.length - 1]!.toFixed(1)} max ${Math.max(...heap).toFixed(1)} MiB, slope over the second half ${slope('heap').toFixed(2)} MiB/min`);
}

// Run as a script (an A/B script may import the pieces).
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  void main().catch((e) => {
    console.error(e);
    process.exitCode = 1;
  });
}

export { closedLoop, mix, type Req };
