// The checks `npm test` runs after the build and before the tests: the type-check (one
// `tsc` over everything tsconfig.json includes: server, client, tests, scripts) and the
// linter (eslint.config.mjs). Each can be run alone with the npm script it names.
import { spawnSync } from 'node:child_process';

// Both keep what they learnt about unchanged files in node_modules/.cache/ (a rerun takes
// seconds instead of about 45 s of CPU; npm ci wipes it).
const CACHE = 'node_modules/.cache/rulesmith';
export const GATES = [
  {
    name: 'type-check',
    args: ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.json', '--noEmit', '--incremental', '--tsBuildInfoFile', `${CACHE}/tsc.tsbuildinfo`],
    alone: 'npm run check-types',
  },
  {
    name: 'lint',
    args: ['node_modules/eslint/bin/eslint.js', '--max-warnings', '0', '--cache', '--cache-location', `${CACHE}/eslint`, '.'],
    alone: 'npm run lint',
  },
];

/**
 * Runs every gate (all of them, so that each one's findings show in one run) with node,
 * saying how long each took; returns the names of those that failed.
 */
export function runGates(gates = GATES, { cwd = process.cwd(), stdio = 'inherit', log = console.log } = {}) {
  const failed = [];
  for (const gate of gates) {
    log(`${gate.name}: node ${gate.args.join(' ')}`);
    const start = performance.now();
    const r = spawnSync(process.execPath, gate.args, { cwd, stdio });
    const seconds = ((performance.now() - start) / 1000).toFixed(1);
    if (r.status === 0) {
      log(`${gate.name}: passed in ${seconds} s`);
    } else {
      failed.push(gate.name);
      log(`${gate.name}: FAILED in ${seconds} s (${r.error?.message ?? `exit ${r.status ?? r.signal}`}): fix the findings above; rerun it alone with \`${gate.alone}\``);
    }
  }
  return failed;
}
