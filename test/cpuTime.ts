// How tests bound cost without a wall clock: they compare this process's CPU time for two
// runs (an input and 8x it, or a cheap path and the costly one it must avoid), never
// elapsed milliseconds against a constant, which load on a shared machine breaks.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

// A full collection before each timed run: otherwise a major GC that earlier work made due
// (the compiled rulesets of the whole file are in this heap) can land in any one run and
// adds tens of milliseconds that have nothing to do with the input's size.
setFlagsFromString('--expose-gc');
/** A full collection now (V8's gc(), exposed here once for the tests and benchmarks that measure the heap). */
export const collectGarbage = runInNewContext('gc') as () => void;

/**
 * The least CPU time (µs) of several runs of `fn`: other test files run in parallel, and
 * the minimum of this process's own CPU time is what load disturbs least.
 */
export function minCpuTime(fn: () => void, runs = 15, warmups = 5): number {
  for (let i = 0; i < warmups; i++) fn(); // warm up the JIT
  let best = Infinity;
  for (let i = 0; i < runs; i++) {
    collectGarbage();
    const t0 = process.cpuUsage();
    fn();
    const d = process.cpuUsage(t0);
    best = Math.min(best, d.user + d.system);
  }
  return best;
}

/** 8x the input: linear work is ~8x the time, quadratic ~64x. The bound sits between. */
export const GROWTH_BOUND = 24;
