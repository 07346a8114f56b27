// Timing helpers for the benchmarks. Figures, not assertions.
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** Runs `fn` in batches after a warm-up; the median time per call of the batches, in nanoseconds. */
export function medianNs(fn: () => void, { batches = 31, minBatchNs = 10_000_000, warmupNs = 300_000_000 } = {}): number {
  // Warm up so that the JIT has optimised the code before we measure.
  const warmEnd = process.hrtime.bigint() + BigInt(warmupNs);
  while (process.hrtime.bigint() < warmEnd) fn();
  let perBatch = 1;
  for (;;) {
    const t = process.hrtime.bigint();
    for (let i = 0; i < perBatch; i++) fn();
    if (Number(process.hrtime.bigint() - t) >= minBatchNs || perBatch >= 1 << 20) break;
    perBatch *= 2;
  }
  const samples: number[] = [];
  for (let b = 0; b < batches; b++) {
    const t = process.hrtime.bigint();
    for (let i = 0; i < perBatch; i++) fn();
    samples.push(Number(process.hrtime.bigint() - t) / perBatch);
  }
  samples.sort((a, b) => a - b);
  return samples[Math.floor(samples.length / 2)];
}

/** The median (of an even count, the mean of the middle two). */
export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

/** The value at quantile `q` (0–1): the sample at rank floor(q × count), so p99 of 1,000 samples is the 991st smallest. */
export function quantile(xs: readonly number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? NaN;
}

export function ms(ns: number): string {
  return `${(ns / 1e6).toFixed(3)} ms`;
}

export function row(cells: readonly string[], widths: readonly number[]): string {
  return cells.map((c, i) => c.padEnd(widths[i])).join('  ');
}

/** CPU time (user + system, ms) the processes have used so far: /proc/<pid>/stat, Linux only (undefined elsewhere). */
export function cpuMs(pids: readonly number[]): number | undefined {
  return ticksMs(pids.map((pid) => `/proc/${pid}/stat`));
}

/**
 * The same for each process's main thread only (/proc/<pid>/task/<pid>/stat): the JavaScript
 * thread, without V8's helper threads and libuv's pool. A Node server saturates when this
 * reaches the wall time, whatever its other threads do.
 */
export function mainThreadCpuMs(pids: readonly number[]): number | undefined {
  return ticksMs(pids.map((pid) => `/proc/${pid}/task/${pid}/stat`));
}

function ticksMs(files: readonly string[]): number | undefined {
  let ticks = 0;
  for (const file of files) {
    try {
      const f = readFileSync(file, 'utf8');
      // After the command's closing parenthesis: utime and stime are fields 14 and 15 (man proc).
      const rest = f.slice(f.lastIndexOf(')') + 2).split(' ');
      ticks += Number(rest[11]) + Number(rest[12]);
    } catch {
      return undefined;
    }
  }
  return ticks * 10; // USER_HZ is 100 on Linux
}

/** The built CLI (server/out/cli.js) the benches run as users do, or an error saying to build it. */
export function builtCli(): string {
  const cli = fileURLToPath(new URL('../../server/out/cli.js', import.meta.url));
  if (!existsSync(cli)) throw new Error('server/out/cli.js is missing: run `npm run build` first');
  return cli;
}
