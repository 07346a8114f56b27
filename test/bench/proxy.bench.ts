/**
 * The WAF proxy under load: throughput and latency of `rulesmith serve --proxy` in front of
 * a small app, beside a bare node:http reverse proxy (the floor) and nginx with ModSecurity
 * 3 and CRS 3.3.4 (the anchor), at OWASP paranoia levels 1 and 4, with the verdicts of both
 * WAFs compared request by request.
 *
 *   node --import tsx test/bench/proxy.bench.ts              (20 s per column)
 *   RULESMITH_BENCH_SECONDS=3 node --import tsx test/bench/proxy.bench.ts
 *
 * - Upstream: a node:http app in its own process answering every request with 1 KB.
 * - Request mix: every stage of the CRS 3.3.4 regression tests
 *   (test/fixtures/crs-3.3.4-regression-tests, read by requests/ftw.ts) that node:http can
 *   send, plus as many benign browser-like requests; sent round-robin by 32 keep-alive
 *   clients for RULESMITH_BENCH_SECONDS (default 20) per column.
 * - Floor: a bare node:http reverse proxy (its own process, request piped to the upstream).
 * - Rulesmith: the built CLI (`npm run build`), `serve --seed demo --proxy
 *   migrated.example.com=<upstream>`, whose managed entry point is set through the API to the
 *   OWASP-based ruleset at PL N with anomaly threshold 5 (CRS's default, which the
 *   regression tests assume) and nothing else.
 * - Anchor: nginx + libnginx-mod-http-modsecurity + modsecurity-crs (Debian), configured as
 *   test/bench/modsec/modsec.ts configures libmodsecurity for the CRS bench. Installed with
 *   apt-get when running as root and missing; else that column is skipped with a message.
 * - Verdicts: each request of the mix once through each WAF before the timed run; a 403
 *   is "block", anything else "pass".
 * Each column prints requests/s and p50/p99/max latency (ms, measured by the client). The
 * machine is shared: compare columns of one run, not runs.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { randomBytes } from 'node:crypto';
import { parseFtwFile } from '../../server/src/requests/ftw';
import type { SampleRequest } from '../../server/src/requests/types';
import { setParanoiaLevel, setScoreThreshold } from '../../server/src/managed/preview';
import { defaultCatalog } from '../../server/src/managed/catalog';
import { OWASP_RULESET_ID } from '../../server/src/rulesets/managedIds';
import { demoZoneId } from '../../server/src/service/seed';
import type { Rule } from '../../server/src/rulesets/model';
import { modsecConfig } from './modsec/modsec';

const here = dirname(fileURLToPath(import.meta.url));
const repo = join(here, '../..');
const SECONDS = Math.max(1, Number(process.env.RULESMITH_BENCH_SECONDS ?? 20));
const CLIENTS = 32;
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

async function rulesmith(upstreamPort: number, dir: string, token: string): Promise<{ child: ChildProcess; port: number; api: string }> {
  const cli = join(repo, 'server/out/cli.js');
  if (!existsSync(cli)) throw new Error('server/out/cli.js is missing: run `npm run build` first');
  // RULESMITH_BENCH_NODE_ARGS: node flags for the proxy's process (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`).
  const nodeArgs = (process.env.RULESMITH_BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const child = spawn(process.execPath, [...nodeArgs, cli, 'serve', '--port', '0', '--db', join(dir, 'bench.db'), '--seed', 'demo', '--proxy', `${ZONE}=http://127.0.0.1:${upstreamPort}`, '--proxy-listen', '127.0.0.1:0'], {
    env: { ...process.env, RULESMITH_SERVICE_TOKEN: token },
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  let out = '';
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const api = /rulesmith serve: listening on (\S+)/.exec(out);
      const proxy = /rulesmith proxy: listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(out);
      if (api && proxy) {
        child.stdout!.removeAllListeners('data');
        child.stdout!.resume();
        resolve({ child, port: Number(proxy[1]), api: api[1]! });
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
  const port = 20000 + Math.floor(Math.random() * 20000);
  writeFileSync(join(dir, `modsec-pl${level}.conf`), modsecConfig(CRS_RULES, level, 5));
  const conf = join(dir, `nginx-pl${level}.conf`);
  writeFileSync(
    conf,
    `include ${NGINX_MODULE};
worker_processes 1; daemon off; pid ${join(dir, `nginx-pl${level}.pid`)}; error_log ${join(dir, 'nginx-error.log')} error;
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
  for (let i = 0; i < 200; i++) {
    await new Promise((r) => setTimeout(r, 100));
    try {
      await send({ method: 'GET', path: '/', headers: { host: ZONE } }, port, new Agent());
      return { child, port };
    } catch {
      // not yet listening
    }
  }
  throw new Error(`nginx did not start; see ${join(dir, 'nginx-error.log')}`);
}

// --- Requests --------------------------------------------------------------------------

function yamlFiles(d: string): string[] {
  return readdirSync(d)
    .sort()
    .flatMap((n) => (statSync(join(d, n)).isDirectory() ? yamlFiles(join(d, n)) : /\.ya?ml$/.test(n) ? [join(d, n)] : []));
}

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
    // What node's client refuses (bad characters in the path or a header) is left out.
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

function send(r: Req, port: number, agent: Agent): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method: r.method, path: r.path, headers: { ...r.headers, ...(r.body ? { 'content-length': String(r.body.length) } : {}) }, agent, timeout: 10_000 }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error('no answer within 10 s')));
    req.on('error', reject);
    req.end(r.body);
  });
}

async function verdicts(reqs: readonly Req[], port: number): Promise<boolean[]> {
  const agent = new Agent({ keepAlive: true, maxSockets: 8 });
  const out: boolean[] = new Array(reqs.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (next < reqs.length) {
        const i = next++;
        out[i] = (await send(reqs[i]!, port, agent).catch(() => 0)) === 403;
      }
    }),
  );
  agent.destroy();
  return out;
}

async function load(reqs: readonly Req[], port: number): Promise<{ rps: number; p50: number; p99: number; max: number; errors: number }> {
  const agent = new Agent({ keepAlive: true, maxSockets: CLIENTS });
  const times: number[] = [];
  let errors = 0;
  let next = 0;
  const end = Date.now() + SECONDS * 1000;
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      while (Date.now() < end) {
        const r = reqs[next++ % reqs.length]!;
        const t = process.hrtime.bigint();
        try {
          await send(r, port, agent);
          times.push(Number(process.hrtime.bigint() - t) / 1e6);
        } catch {
          errors++;
        }
      }
    }),
  );
  agent.destroy();
  times.sort((a, b) => a - b);
  const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))] ?? NaN;
  return { rps: times.length / SECONDS, p50: at(0.5), p99: at(0.99), max: times[times.length - 1] ?? NaN, errors };
}

function line(name: string, r: Awaited<ReturnType<typeof load>>): string {
  return `  ${name.padEnd(34)} ${r.rps.toFixed(0).padStart(7)} req/s   p50 ${r.p50.toFixed(2).padStart(7)} ms   p99 ${r.p99.toFixed(2).padStart(7)} ms   max ${r.max.toFixed(1).padStart(7)} ms${r.errors ? `   (${r.errors} errors)` : ''}`;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'rulesmith-proxy-bench-'));
  const children: ChildProcess[] = [];
  try {
    const { attacks, all } = mix();
    console.log(`request mix: ${attacks.length} CRS regression requests + ${attacks.length} benign; ${CLIENTS} keep-alive clients, ${SECONDS} s per column`);
    const up = await nodeChild(UPSTREAM);
    children.push(up.child);
    const floor = await nodeChild(FLOOR(up.port));
    children.push(floor.child);
    const token = randomBytes(24).toString('hex');
    const rs = await rulesmith(up.port, dir, token);
    children.push(rs.child);
    const noNginx = nginxAvailable();
    if (noNginx) console.log(`anchor skipped: ${noNginx}`);

    const floorRun = await load(all, floor.port);
    console.log(line('floor: bare node:http proxy', floorRun));
    for (const level of [1, 4] as const) {
      await deployOwasp(rs.api, token, level);
      const ours = await verdicts(all, rs.port);
      const ourRun = await load(all, rs.port);
      console.log(line(`rulesmith proxy PL${level}`, ourRun));
      console.log(`    added p99 over the floor: ${(ourRun.p99 - floorRun.p99).toFixed(2)} ms; blocked ${ours.filter(Boolean).length} of ${all.length}`);
      if (noNginx) continue;
      const ng = await nginx(up.port, dir, level);
      children.push(ng.child);
      const theirs = await verdicts(all, ng.port);
      const ngRun = await load(all, ng.port);
      console.log(line(`nginx + ModSecurity 3 + CRS PL${level}`, ngRun));
      const agree = ours.filter((v, i) => v === theirs[i]).length;
      console.log(`    throughput ratio rulesmith/nginx ${(ourRun.rps / ngRun.rps).toFixed(2)}×; verdicts agree on ${agree} of ${all.length} (${((100 * agree) / all.length).toFixed(1)}%); nginx blocked ${theirs.filter(Boolean).length}`);
      ng.child.kill('SIGQUIT');
    }
  } finally {
    for (const c of children) c.kill('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  }
}

void main().catch((e) => {
  console.error(e);
  process.exitCode = 1;
});
