/**
 * Does `--proxy-workers` pay on this machine? Two `rulesmith serve --proxy` processes of one
 * build, one evaluating on the proxy's thread and one with N evaluation workers
 * (RULESMITH_BENCH_PROXY_WORKERS, default 2), at the same OWASP level, loaded in turn for
 * RULESMITH_BENCH_SECONDS (default 5) each, RULESMITH_BENCH_ROUNDS (default 4) rounds, with
 * the request mix and clients of proxy.bench.ts. Interleaving the rounds lets both see the
 * same background load; prints each round's requests/s and CPU ms per request, and the
 * median workers/inline ratio.
 *
 *   RULESMITH_BENCH_LEVEL=4 node --import tsx test/bench/proxyWorkers.bench.ts
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deployOwasp, load, mix, nodeChild, rulesmith, UPSTREAM } from './proxy.bench';

async function main(): Promise<void> {
  const level = Number(process.env.RULESMITH_BENCH_LEVEL ?? 1) as 1 | 4;
  const workers = process.env.RULESMITH_BENCH_PROXY_WORKERS ?? '2';
  const rounds = Number(process.env.RULESMITH_BENCH_ROUNDS ?? 4);
  const dir = mkdtempSync(join(tmpdir(), 'rulesmith-proxy-workers-'));
  const { all } = mix();
  const up = await nodeChild(UPSTREAM);
  const token = randomBytes(24).toString('hex');
  const inline = await rulesmith(up.port, mkdtempSync(join(dir, 'inline-')), token, { workers: '0', label: 'inline' });
  const pooled = await rulesmith(up.port, mkdtempSync(join(dir, 'pooled-')), token, { workers, label: 'pooled' });
  try {
    await deployOwasp(inline.api, token, level);
    await deployOwasp(pooled.api, token, level);
    // Warm-up: the first requests compile regexes for long values.
    await load(all, inline.port, [inline.child.pid!]);
    await load(all, pooled.port, [pooled.child.pid!]);
    console.log(`OWASP PL${level}: on the proxy's thread vs ${workers} evaluation workers, ${rounds} interleaved rounds`);
    const ratios: number[] = [];
    for (let r = 0; r < rounds; r++) {
      const a = await load(all, inline.port, [inline.child.pid!]);
      const b = await load(all, pooled.port, [pooled.child.pid!]);
      ratios.push(b.rps / a.rps);
      console.log(`  round ${r + 1}: inline ${a.rps.toFixed(0)} req/s (cpu ${a.cpuMsPerRequest?.toFixed(2)} ms/req), workers ${b.rps.toFixed(0)} req/s (cpu ${b.cpuMsPerRequest?.toFixed(2)} ms/req), ratio ${(b.rps / a.rps).toFixed(2)}`);
    }
    ratios.sort((x, y) => x - y);
    console.log(`  median workers/inline throughput ${ratios[Math.floor(ratios.length / 2)]!.toFixed(2)}× (min ${ratios[0]!.toFixed(2)}, max ${ratios[ratios.length - 1]!.toFixed(2)})`);
  } finally {
    for (const c of [inline.child, pooled.child, up.child]) c.kill('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  }
}

void main().catch((e) => {
  console.error(e);
  process.exitCode = 1;
});
