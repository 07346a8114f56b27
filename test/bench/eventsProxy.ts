/**
 * What writing security events costs the WAF proxy at full load: two `rulesmith serve
 * --proxy` processes (the built CLI), one recording events (the default) and one with
 * `--events off`, the same zone configuration and the same request mix, loaded one at a
 * time by 32 keep-alive clients in interleaved rounds (on/off, off/on, …, so a change of
 * the machine's load falls on both). Target (issue 16): events cost < 10% of throughput.
 *
 * Three configurations of migrated.example.com:
 * - custom rules only: a `log` rule on every request and a block of /admin, so every
 *   request writes at least one event (the most events per unit of proxy work);
 * - the same plus the OWASP-based managed ruleset at PL1 (threshold 25), as a zone runs it:
 *   the attack quarter of the mix also writes score and block events;
 * - the proxy issue's load (proxy.bench.ts), which the target is stated for: OWASP PL1 at
 *   threshold 5, no custom rules, the CRS 3.3.4 regression requests and as many benign ones.
 * Mix of the first two: browser-like GETs and form POSTs over 8 paths, 1 in 8 to /admin,
 * 1 in 4 with an attack in the query (SQLi, XSS, path traversal, command injection).
 * RULESMITH_BENCH_ONLY=<text> runs only the configurations whose name contains it.
 *
 * Prints per configuration: requests/s with events on and off (over all rounds), the
 * ratio and each pair of rounds' ratio with their median, p50/p99/max latency (ms, measured by the client) of each, the events stored, and
 * the serve process's CPU time per request on and off (Linux /proc): on a shared machine
 * throughput swings with the neighbours' load, CPU time per request much less.
 * The upstream is a node:http app in its own process answering 1 KB.
 * RULESMITH_BENCH_NOISE_FLOOR=1 runs both sides with events on: how far two identical
 * services differ on this machine (on a shared one, easily ±20%).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultCatalog } from '../../server/src/managed/catalog';
import { setParanoiaLevel, setScoreThreshold } from '../../server/src/managed/preview';
import { OWASP_RULESET_ID } from '../../server/src/rulesets/managedIds';
import type { Rule } from '../../server/src/rulesets/model';
import { SERVE_NODE_FLAGS } from '../../server/src/serveNodeFlags';
import { PROXY_READY, SERVE_READY } from '../../server/src/serveReady';
import { demoZoneId } from '../../server/src/service/seed';
import { builtCli, cpuMs, median, quantile } from './measure';
import { closedLoop, mix as proxyMix, type Req } from './proxy.bench';

const ZONE = 'migrated.example.com';
const CLIENTS = 32;


interface Served {
  readonly child: ChildProcess;
  readonly api: string;
  readonly proxyPort: number;
  /** Everything the process printed (the writer's "dropped" line would be here). */
  output(): string;
}

const UPSTREAM = `const body = Buffer.alloc(1024, 'x');
require('node:http').createServer((req, res) => { req.resume(); req.on('end', () => { res.writeHead(200, { 'content-type': 'text/plain', 'content-length': 1024 }); res.end(body); }); })
  .listen(0, '127.0.0.1', function () { console.log(this.address().port); });`;

function upstream(): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(process.execPath, ['-e', UPSTREAM], { stdio: ['ignore', 'pipe', 'ignore'] });
  return new Promise((resolve, reject) => {
    child.stdout!.once('data', (d: Buffer) => resolve({ child, port: Number(d.toString().trim()) }));
    child.once('exit', (c) => reject(new Error(`the upstream exited with ${c}`)));
  });
}

function serve(upstreamPort: number, db: string, token: string, extra: readonly string[]): Promise<Served> {
  const cli = builtCli();
  const args = [...SERVE_NODE_FLAGS, cli, 'serve', '--port', '0', '--db', db, '--seed', 'demo', '--proxy', `${ZONE}=http://127.0.0.1:${upstreamPort}`, '--proxy-listen', '127.0.0.1:0', ...extra];
  // RULESMITH_BENCH_CPU_PROF=<dir>: each serve writes a V8 CPU profile there on exit (named by its events side: see the file's pid in the output).
  const prof = process.env.RULESMITH_BENCH_CPU_PROF;
  if (prof) args.unshift('--cpu-prof', `--cpu-prof-dir=${prof}/${extra.join('_').replace(/\W+/g, '') || 'on'}`);
  const child = spawn(process.execPath, args, { env: { ...process.env, RULESMITH_SERVICE_TOKEN: token }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  // Only the lines that are not one per request are kept (the service logs every API call).
  child.stdout!.on('data', (d: Buffer) => (out += d.toString().split('\n').filter((l) => !/^(GET|POST|PUT|PATCH|DELETE) /.test(l)).join('\n')));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  return new Promise((resolve, reject) => {
    const timer = setInterval(() => {
      const api = SERVE_READY.exec(out);
      const proxy = PROXY_READY.exec(out);
      if (api && proxy) {
        clearInterval(timer);
        resolve({ child, api: api[1]!, proxyPort: Number(new URL(proxy[1]!).port), output: () => out });
      }
    }, 50);
    child.once('exit', (c) => {
      clearInterval(timer);
      reject(new Error(`rulesmith serve exited with ${c}:\n${out}`));
    });
  });
}

async function put(s: Served, token: string, phase: string, rules: readonly Rule[]): Promise<void> {
  const res = await fetch(`${s.api}/zones/${demoZoneId(ZONE)}/rulesets/phases/${phase}/entrypoint`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ rules }),
  });
  if (!res.ok) throw new Error(`PUT ${phase}: ${res.status} ${await res.text()}`);
}

const CUSTOM: readonly Rule[] = [
  { ref: 'log-all', description: 'log every request', action: 'log', expression: 'true' },
  { ref: 'block-admin', description: 'no admin', action: 'block', expression: 'starts_with(http.request.uri.path, "/admin")' },
];

function owaspPl1(threshold: number): Rule {
  const execute: Rule = { expression: 'true', action: 'execute', action_parameters: { id: OWASP_RULESET_ID }, description: 'OWASP PL1' };
  return setScoreThreshold(setParanoiaLevel(execute, 1), threshold, undefined, { catalog: defaultCatalog });
}

function mix(): Req[] {
  const pages = ['/', '/index.html', '/products?id=42&sort=price', '/search?q=blue+shoes', '/static/app.js', '/api/items/17', '/blog/2024/05/hello-world', '/account/settings'];
  const attacks = ['?id=1%27%20UNION%20SELECT%20password%20FROM%20users--', '?q=%3Cscript%3Ealert(1)%3C%2Fscript%3E', '?file=..%2F..%2F..%2Fetc%2Fpasswd', '?cmd=%3Bcat%20%2Fetc%2Fpasswd'];
  const headers = {
    host: ZONE,
    'user-agent': 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0',
    accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8',
    'accept-language': 'en-US,en;q=0.5',
  };
  return Array.from({ length: 64 }, (_, i): Req => {
    if (i % 8 === 7) return { method: 'GET', path: '/admin/users', headers };
    if (i % 4 === 1) return { method: 'GET', path: `/search${attacks[(i >> 2) % attacks.length]!}`, headers };
    if (i % 10 === 9) {
      return { method: 'POST', path: '/comments', headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded' }, body: Buffer.from('name=Ada&email=ada%40example.com&comment=Nice+post') };
    }
    return { method: 'GET', path: pages[i % pages.length]!, headers };
  });
}


interface Load {
  requests: number;
  seconds: number;
  errors: number;
  /** CPU time the serve process spent (ms, Linux /proc; NaN elsewhere). */
  cpuMs: number;
  readonly times: number[];
}

const newLoad = (): Load => ({ requests: 0, seconds: 0, errors: 0, cpuMs: 0, times: [] });

function addLoad(into: Load, l: Load): void {
  into.requests += l.requests;
  into.seconds += l.seconds;
  into.errors += l.errors;
  into.cpuMs += l.cpuMs;
  for (const t of l.times) into.times.push(t);
}

/** `seconds` of the proxy bench's closed-loop clients sending the mix round-robin. */
async function load(reqs: readonly Req[], s: Served, seconds: number): Promise<Load> {
  const pids = s.child.pid === undefined ? [] : [s.child.pid];
  const cpu0 = cpuMs(pids);
  const started = Date.now();
  const { times, errors } = await closedLoop(reqs, s.proxyPort, seconds);
  const elapsed = (Date.now() - started) / 1000;
  // The writer's last batch of this round (FLUSH_MS) is counted in this round too.
  await new Promise((r) => setTimeout(r, 250));
  const cpu1 = cpuMs(pids);
  return { requests: times.length, seconds: elapsed, errors, cpuMs: cpu0 !== undefined && cpu1 !== undefined ? cpu1 - cpu0 : NaN, times };
}

async function storedEvents(s: Served, token: string, since: string): Promise<number> {
  const query = `{ viewer { zones(filter: {zoneTag: "${demoZoneId(ZONE)}"}) { firewallEventsAdaptiveGroups(limit: 1, filter: {datetime_geq: "${since}"}) { count } } } }`;
  const res = await fetch(`${s.api}/graphql`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ query }) });
  const body = (await res.json()) as { data?: { viewer: { zones: { firewallEventsAdaptiveGroups: { count: number }[] }[] } }; errors?: unknown };
  if (!body.data) throw new Error(`GraphQL: ${JSON.stringify(body.errors)}`);
  return body.data.viewer.zones[0]!.firewallEventsAdaptiveGroups[0]?.count ?? 0;
}

function latency(l: Load): string {
  const at = (q: number) => quantile(l.times, q);
  return `p50 ${at(0.5).toFixed(2).padStart(6)} ms   p99 ${at(0.99).toFixed(2).padStart(6)} ms   max ${at(1).toFixed(1).padStart(6)} ms${l.errors ? `   (${l.errors} errors)` : ''}`;
}

/** The section: prints the figures; `seconds` per round and side, `rounds` pairs. */
export async function proxyEventsCost(seconds: number, rounds: number): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'rulesmith-events-proxy-bench-'));
  const children: ChildProcess[] = [];
  try {
    const token = randomBytes(24).toString('hex');
    const up = await upstream();
    children.push(up.child);
    const on = await serve(up.port, join(dir, 'on.db'), token, []);
    children.push(on.child);
    // RULESMITH_BENCH_NOISE_FLOOR=1: both with events on, to see how far two identical sides differ on this machine.
    const floor = process.env.RULESMITH_BENCH_NOISE_FLOOR === '1';
    const off = await serve(up.port, join(dir, 'off.db'), token, floor ? [] : ['--events', 'off']);
    if (floor) console.log('noise floor: both sides record events (the "off" rows are a second events-on service)');
    children.push(off.child);
    const reqs = mix();
    console.log(`\nthe proxy with events on and off: ${CLIENTS} keep-alive clients, ${rounds} interleaved rounds of ${seconds} s per side`);
    const configs = [
      { name: `custom rules only (every request logged); ${reqs.length} requests round-robin (1 in 8 to /admin, 1 in 4 with an attack)`, custom: CUSTOM, managed: [], reqs },
      { name: 'the same + OWASP PL1 (threshold 25)', custom: CUSTOM, managed: [owaspPl1(25)], reqs },
      // The load of the proxy issue (proxy.bench.ts), which issue 16's target is about.
      { name: `the proxy benchmark's load: OWASP PL1 (threshold 5), no custom rules; the ${proxyMix().all.length} CRS regression and benign requests of proxy.bench.ts`, custom: [], managed: [owaspPl1(5)], reqs: proxyMix().all },
    ];
    // RULESMITH_BENCH_ONLY=<text>: only the configurations whose name contains it (e.g. `proxy benchmark`).
    const only = process.env.RULESMITH_BENCH_ONLY ?? '';
    for (const { name, custom, managed, reqs } of configs.filter((c) => c.name.includes(only))) {
      for (const s of [on, off]) {
        await put(s, token, 'http_request_firewall_custom', custom);
        await put(s, token, 'http_request_firewall_managed', managed);
      }
      const since = new Date(Date.now() - 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
      // A warm-up of each (the zone compiles, the JIT settles): with 1 s the first pair of
      // rounds still measured it (on/off 0.74-0.81 where the later pairs gave 0.9-1.0).
      await load(reqs, on, 3);
      await load(reqs, off, 3);
      const results = { on: newLoad(), off: newLoad() };
      // Each pair's on/off ratio too: the machine's load drifts between pairs, and the
      // spread of the ratios says how far one run's total can be trusted.
      const ratios: number[] = [];
      for (let r = 0; r < rounds; r++) {
        const order = r % 2 === 0 ? (['on', 'off'] as const) : (['off', 'on'] as const);
        const pair = { on: newLoad(), off: newLoad() };
        for (const side of order) pair[side] = await load(reqs, side === 'on' ? on : off, seconds);
        addLoad(results.on, pair.on);
        addLoad(results.off, pair.off);
        ratios.push(pair.on.requests / pair.on.seconds / (pair.off.requests / pair.off.seconds));
      }
      // The writer flushes within 200 ms; then the stored count is final.
      await new Promise((r) => setTimeout(r, 500));
      const [onEvents, offEvents] = [await storedEvents(on, token, since), await storedEvents(off, token, since)];
      const rps = (l: Load) => l.requests / l.seconds;
      console.log(`  ${name}`);
      const [onName, offName] = floor ? ['side A    ', 'side B    '] : ['events on ', 'events off'];
      console.log(`    ${onName}  ${rps(results.on).toFixed(0).padStart(6)} req/s   ${latency(results.on)}   ${onEvents} events stored`);
      console.log(`    ${offName}  ${rps(results.off).toFixed(0).padStart(6)} req/s   ${latency(results.off)}   ${offEvents} events stored`);
      const cpu = (l: Load) => l.cpuMs / l.requests;
      console.log(`    on/off throughput ${(rps(results.on) / rps(results.off)).toFixed(3)} (cost ${(100 * (1 - rps(results.on) / rps(results.off))).toFixed(1)}%; target < 10%)`);
      const mid = median(ratios);
      console.log(`    per pair of rounds (${ratios.length}): on/off median ${mid.toFixed(3)} (cost ${(100 * (1 - mid)).toFixed(1)}%), middle half ${quantile(ratios, 0.25).toFixed(2)}–${quantile(ratios, 0.75).toFixed(2)}`);
      console.log(`    serve's CPU per request: on ${cpu(results.on).toFixed(2)} ms, off ${cpu(results.off).toFixed(2)} ms (events ${(100 * (cpu(results.on) / cpu(results.off) - 1)).toFixed(1)}% more; what load disturbs least)`);
    }
    const dropped = /security events: .*dropped[^\n]*/.exec(on.output());
    if (dropped) console.log(`  note: the events-on service said: ${dropped[0]}`);
  } finally {
    for (const c of children) c.kill('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  }
}
