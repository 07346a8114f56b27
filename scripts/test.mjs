// `npm test`: installs what is missing, builds, type-checks and lints (scripts/gates.mjs),
// then runs every test with node's test runner. Exits non-zero when anything fails.
//   npm test -- test/unit/language       one folder (or file) of tests; the gates still run
//   npm test -- --no-gates test/unit     without the type-check and the lint, for a quick rerun
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { runGates } from './gates.mjs';

function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { stdio: 'inherit', ...opts });
  if (r.status !== 0) process.exit(r.status ?? 1);
}

// A compiler for the native SQLite binding, which npm builds (scripts/ensure-build-tools.mjs;
// exit code 2: none here, so that optional module is not installed again on every run).
const canBuild = spawnSync(process.execPath, ['scripts/ensure-build-tools.mjs'], { stdio: 'inherit' }).status === 0;
if (!existsSync('node_modules/.package-lock.json')) run('npm', ['ci', '--no-audit', '--no-fund']);
else {
  // A checkout whose package.json gained a package since node_modules was installed (the
  // optional native binding included: the tests run the service on it).
  const pkg = JSON.parse(readFileSync('package.json', 'utf8'));
  const declared = Object.keys({ ...pkg.dependencies, ...pkg.devDependencies, ...(canBuild ? pkg.optionalDependencies : {}) });
  if (declared.some((name) => !existsSync(join('node_modules', name, 'package.json')))) run('npm', ['install', '--no-audit', '--no-fund']);
}
// Debian's modsecurity-crs (CRS 3.3.4), the source of the OWASP-based ruleset.
run(process.execPath, ['scripts/crs/ensure-crs.mjs']);
run('npm', ['run', 'build', '--silent']);

const args = process.argv.slice(2);
if (!args.includes('--no-gates')) {
  const failed = runGates();
  if (failed.length > 0) {
    console.error(`npm test: ${failed.join(' and ')} failed (see above); the tests were not run`);
    process.exit(1);
  }
}

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
const roots = args.filter((a) => a !== '--no-gates');
const files = (roots.length ? roots : ['test']).flatMap((r) => (r.endsWith('.ts') ? [r] : find(r)));
if (files.length === 0) {
  console.error('no test files found');
  process.exit(1);
}
run(process.execPath, ['--import', 'tsx', '--test', '--test-reporter=spec', ...files]);
