/**
 * What V8's `--trace-gc --trace-gc-nvp` printed, per isolate (a process's main thread and
 * each of its worker threads, the most collections first — normally the main thread): how
 * many scavenges and mark-compacts, their pauses (p50, p99, max) and, per scavenge, the bytes allocated since
 * the last one, the bytes that survived it and the bytes it promoted to the old generation.
 * Survivors are what a scavenge copies, so they set its pause; a server whose requests are
 * done in milliseconds should have next to none.
 *
 *   RULESMITH_BENCH_NODE_ARGS="--trace-gc --trace-gc-nvp" RULESMITH_BENCH_SERVICE_OUT=/tmp/gc.out \
 *     node --import tsx test/bench/service.bench.ts --load-only --only get
 *   node --import tsx test/bench/gcSummary.ts /tmp/gc.out /tmp/gc.out.floor
 */
import { readFileSync } from 'node:fs';
import { collections, type Collection } from './gcTrace';
import { median, quantile } from './measure';

const files = process.argv.slice(2);
if (files.length === 0) {
  console.error('usage: node --import tsx test/bench/gcSummary.ts <file printed with --trace-gc --trace-gc-nvp> …');
  process.exit(2);
}
const kb = (b: number) => `${(b / 1024).toFixed(0)} KB`;
for (const file of files) {
  const isolates = collections(readFileSync(file, 'utf8'));
  if (isolates.length === 0) console.log(`${file}: no --trace-gc-nvp lines`);
  for (const [isolate, all] of isolates) {
    const s = all.filter((c) => c.kind === 's');
    // Full collections (mark-compact, mark-sweep); `mmc`, the young generation's mark-compact, is neither.
    const mc = all.filter((c) => c.kind === 'mc' || c.kind === 'ms');
    const pauses = (list: readonly Collection[]) => list.map((c) => c.pause);
    const pauseText = (list: readonly Collection[]) =>
      list.length ? `pause p50 ${median(pauses(list)).toFixed(1)} ms, p99 ${quantile(pauses(list), 0.99).toFixed(1)} ms, max ${Math.max(...pauses(list)).toFixed(1)} ms` : '';
    console.log(`${file} (isolate ${isolate}): ${s.length} scavenges, ${pauseText(s)}; ${mc.length} mark-compacts${mc.length ? `, ${pauseText(mc)}` : ''}`);
    if (s.length) {
      const med = (f: (c: Collection) => number) => median(s.map(f));
      console.log(`  per scavenge (median): allocated ${kb(med((c) => c.allocated))}, survived ${kb(med((c) => c.survived))}, promoted ${kb(med((c) => c.promoted))}`);
    }
  }
}
