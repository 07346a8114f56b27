// Starts `rulesmith serve` (seeded with the demo data, on a free port, its database in `dir`)
// or, with `floor`, the bare node:http baseline of service-floor.ts, for the benchmarks that
// load the service: its URL, the admin token, its pid, and a stop that waits for the exit.
// The service is the built CLI (server/out/cli.js), the code `npm start` and the extension
// run, not the sources through tsx (whose transform differs: keepNames, no bundling).
import { spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { join } from 'node:path';
import { SERVE_NODE_FLAGS } from '../../server/src/serveNodeFlags';
import { builtCli } from './measure';

export interface Service {
  readonly url: URL;
  readonly token: string;
  readonly pid: number;
  stop(): Promise<void>;
}

/** `rulesmith serve`, or with `floor` the baseline server of service-floor.ts. */
export async function startService(dir: string, floor?: { getBodyFile: string; token: string; grouped?: boolean }): Promise<Service> {
  const args = floor
    ? ['--import', 'tsx', 'test/bench/service-floor.ts', join(dir, floor.grouped ? 'floor-grouped.db' : 'floor.db'), floor.getBodyFile, floor.token, ...(floor.grouped ? ['grouped'] : [])]
    : [...SERVE_NODE_FLAGS, process.env.RULESMITH_BENCH_CLI ?? builtCli(), 'serve', '--port', '0', '--db', join(dir, 'bench.db'), '--seed', 'demo'];
  // RULESMITH_BENCH_CLI=<another build's cli.js beside this one, e.g. server/out/cli.old.js>: that build is the service (A/B).
  // RULESMITH_BENCH_CPU_PROF=<dir>: the service (not the floor) writes a V8 CPU profile there on exit.
  const prof = process.env.RULESMITH_BENCH_CPU_PROF;
  if (prof && !floor) args.unshift('--cpu-prof', `--cpu-prof-dir=${prof}`);
  // RULESMITH_BENCH_NODE_ARGS: more node flags for the service and the floors (e.g. `--trace-gc --trace-gc-nvp`).
  args.unshift(...(process.env.RULESMITH_BENCH_NODE_ARGS ?? '').split(/\s+/).filter(Boolean));
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let started = false;
  // RULESMITH_BENCH_SERVICE_OUT=<file>: keep the service's output there (e.g. what --trace-gc
  // prints; gcSummary.ts reads it) and each floor's in <file>.floor or <file>.floor-grouped.
  const keep = process.env.RULESMITH_BENCH_SERVICE_OUT;
  if (keep) child.stdout.pipe(createWriteStream(floor ? `${keep}.floor${floor.grouped ? '-grouped' : ''}` : keep));
  const onData = (d: Buffer) => {
    // Keep only what the start needs; the request log is drained and dropped.
    if (!started) out += d.toString();
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`rulesmith serve did not start:\n${out}`)), 30_000);
    const check = () => {
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        started = true;
        resolve(m[1]!);
      }
    };
    child.stdout.on('data', check);
    child.on('exit', (code) => reject(new Error(`rulesmith serve exited with ${code}:\n${out}`)));
  });
  const token = floor ? floor.token : /^\s+demo admin\s+.*\s(\S+)$/m.exec(out)?.[1];
  if (!token) throw new Error(`no admin token in the seed output:\n${out}`);
  return {
    url: new URL(`${url}/`),
    token,
    pid: child.pid!,
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}
