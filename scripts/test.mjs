// `npm test`: installs what is missing, builds, then runs every test with node's test
// runner. Exits non-zero when anything fails.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { stdio: 'inherit', ...opts });
  if (r.status !== 0) process.exit(r.status ?? 1);
}

if (!existsSync('node_modules/.package-lock.json')) run('npm', ['ci', '--no-audit', '--no-fund']);
// Debian's modsecurity-crs (CRS 3.3.4), the source of the OWASP-based ruleset.
run(process.execPath, ['scripts/crs/ensure-crs.mjs']);
run('npm', ['run', 'build', '--silent']);

function find(dir, out = []) {
  if (!existsSync(dir)) return out;
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) {
      if (name !== 'fixtures' && name !== 'bench') find(p, out);
    } else if (name.endsWith('.test.ts')) out.push(p);
  }
  return out;
}

// A folder name may be given to run a subset: `npm test -- test/unit`.
const roots = process.argv.slice(2);
const files = (roots.length ? roots : ['test']).flatMap((r) => (r.endsWith('.ts') ? [r] : find(r)));
if (files.length === 0) {
  console.error('no test files found');
  process.exit(1);
}
run(process.execPath, ['--import', 'tsx', '--test', '--test-reporter=spec', ...files]);
