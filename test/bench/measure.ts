// Timing helper for the benchmarks: runs `fn` in batches after a warm-up and returns
// the median time per call of the batches, in nanoseconds. Figures, not assertions.
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

export function ms(ns: number): string {
  return `${(ns / 1e6).toFixed(3)} ms`;
}

export function row(cells: readonly string[], widths: readonly number[]): string {
  return cells.map((c, i) => c.padEnd(widths[i])).join('  ');
}
