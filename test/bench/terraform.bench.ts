// `rulesmith check` over a repository of Terraform files holding 1,000 rules (50 files of
// 20 rules: v5 attribute syntax and v4 blocks, escapes, heredocs), in process: the first run
// includes starting HashiCorp's parser (WebAssembly), the others are warm. Target (issue #18):
// the whole check under 2 s. Prints p50/p99/max over the runs, then (when built) the
// bundled CLI end to end, one process per run, as CI runs it.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { run } from '../../server/src/cli/main';

const RULES = [
  'http.request.uri.path contains \\"/admin\\" and not ip.src in {192.0.2.0/24 198.51.100.0/24}',
  'http.host eq \\"caf\\u00e9.example\\" and http.request.method in {\\"POST\\" \\"PUT\\"}',
  'lower(http.request.uri.query) contains \\"union select\\" or http.user_agent matches \\"(?i)sqlmap\\"',
  'ip.src.country in {\\"T1\\" \\"XX\\"} and not cf.client.bot',
];

function file(i: number): string {
  const v4 = i % 2 === 1;
  let out = `resource "cloudflare_ruleset" "r${i}" {\n  zone_id = var.zone_id\n  name    = "rules ${i}"\n  kind    = "zone"\n  phase   = "http_request_firewall_custom"\n`;
  const rules: string[] = [];
  for (let k = 0; k < 20; k++) {
    const expr = k % 5 === 4 ? `<<-EOT\n        http.request.uri.path eq "/r${k}"\n          and http.host eq "${'$'}{var.host}"\n      EOT` : `"${RULES[k % RULES.length]}"`;
    const body = `ref = "r${i}-${k}"\n      expression = ${expr}\n      action = "${k % 3 ? 'block' : 'log'}"\n`;
    rules.push(v4 ? `  rules {\n      ${body}  }\n` : `    {\n      ${body}    }`);
  }
  out += v4 ? rules.join('') : `  rules = [\n${rules.join(',\n')}\n  ]\n`;
  return `${out}}\n`;
}

const dir = mkdtempSync(join(tmpdir(), 'rulesmith-tf-bench-'));
const files = Array.from({ length: 50 }, (_, i) => {
  const p = join(dir, `rules${i}.tf`);
  writeFileSync(p, file(i));
  return p;
});

async function once(): Promise<{ ms: number; cpuMs: number; code: number; summary: string }> {
  let out = '';
  const c0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  const code = await run(['check', ...files], { out: (s) => void (out += s), err: (s) => void (out += s), readFile: (p) => readFileSync(p, 'utf8'), writeFile: () => undefined, readStdin: () => '' });
  const c = process.cpuUsage(c0);
  return { ms: Number(process.hrtime.bigint() - t0) / 1e6, cpuMs: (c.user + c.system) / 1e3, code, summary: out.trimEnd().split('\n').pop() ?? '' };
}

async function main(): Promise<void> {
  const first = await once();
  if (!/in 1000 expressions$/.test(first.summary)) throw new Error(`unexpected check result: ${first.summary}`);
  const times: number[] = [];
  const cpu: number[] = [];
  for (let i = 0; i < 10; i++) {
    const r = await once();
    times.push(r.ms);
    cpu.push(r.cpuMs);
  }
  cpu.sort((a, b) => a - b);
  times.sort((a, b) => a - b);
  const pct = (p: number) => times[Math.min(times.length - 1, Math.ceil((p / 100) * times.length) - 1)];
  console.log('\ncheck over 50 .tf files, 1,000 rules (in process)');
  console.log(`  first run (HashiCorp's parser starting): ${first.ms.toFixed(0)} ms wall, ${first.cpuMs.toFixed(0)} ms CPU  [${first.summary}]`);
  console.log(`  warm, 10 runs: p50 ${pct(50).toFixed(0)} ms, p99 ${pct(99).toFixed(0)} ms, max ${times[times.length - 1].toFixed(0)} ms  (target: < 2,000 ms); CPU p50 ${cpu[Math.floor(cpu.length / 2)].toFixed(0)} ms`);
}

/** The built CLI over the same files, one process per run: wall and CPU (user + system) per run. */
function processRuns(runs: number): void {
  const cli = new URL('../../server/out/cli.js', import.meta.url).pathname;
  if (!existsSync(cli)) {
    console.log('  bundled CLI: not built (npm run build), skipped');
    return;
  }
  const wall: number[] = [];
  const cpu: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = process.hrtime.bigint();
    const r = spawnSync(process.execPath, [cli, 'check', ...files], { encoding: 'utf8' });
    wall.push(Number(process.hrtime.bigint() - t0) / 1e6);
    if (r.status !== 0) throw new Error(`bundled CLI: exit ${r.status}\n${r.stderr}`);
    cpu.push(childCpuMs());
  }
  const deltas = cpu.map((c, i) => c - (i ? cpu[i - 1] : baseCpu));
  wall.sort((a, b) => a - b);
  deltas.sort((a, b) => a - b);
  console.log(`  bundled CLI, ${runs} processes: wall p50 ${wall[Math.floor(runs / 2)].toFixed(0)} ms, max ${wall[runs - 1].toFixed(0)} ms; CPU p50 ${deltas[Math.floor(runs / 2)].toFixed(0)} ms (HashiCorp's parser's start is about 1.3 s CPU of it)`);
}

/** CPU time of this process's finished children (user + system), in ms, from /proc. */
function childCpuMs(): number {
  try {
    const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ');
    // cutime and cstime are fields 16 and 17 of stat (14 and 15 after the name), in clock ticks.
    return ((Number(fields[13]) + Number(fields[14])) * 1000) / 100;
  } catch {
    return Number.NaN;
  }
}
const baseCpu = childCpuMs();

void main().then(() => processRuns(3));
