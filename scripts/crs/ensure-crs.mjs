// Makes sure the OWASP CRS 3.3.4 rules (Debian's `modsecurity-crs` package) are installed,
// for the build, the CRS tests and CI. Usage: `node scripts/crs/ensure-crs.mjs`.
//   - rules folder present (default /usr/share/modsecurity-crs/rules, or $CRS_RULES_DIR):
//     prints one line naming it (and its CRS version), exits 0;
//   - missing, running as root on a system with apt-get: runs
//     `apt-get install -y --no-install-recommends modsecurity-crs` (and `apt-get update`
//     first when the package is unknown to apt), printing each command, then checks again;
//   - otherwise: exits 1 with what to run.
// It never uses sudo: a non-root user is told the command instead.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';

const DIR = process.env.CRS_RULES_DIR || '/usr/share/modsecurity-crs/rules';
const PACKAGE = 'modsecurity-crs';
const INSTALL = ['apt-get', 'install', '-y', '--no-install-recommends', PACKAGE];

function version() {
  try {
    const m = /SecComponentSignature\s+"OWASP_CRS\/(\d+\.\d+\.\d+)"/.exec(readFileSync(`${DIR}/REQUEST-901-INITIALIZATION.conf`, 'utf8'));
    return m ? m[1] : 'unknown';
  } catch {
    return 'unknown';
  }
}

function present() {
  return existsSync(`${DIR}/REQUEST-901-INITIALIZATION.conf`);
}

function report() {
  const v = version();
  console.log(`ensure-crs: CRS ${v} rules in ${DIR}`);
  if (v !== '3.3.4') console.warn(`ensure-crs: warning: expected CRS 3.3.4, found ${v}; rule counts in the tests will differ`);
}

function fail(message) {
  console.error(`ensure-crs: ${message}`);
  process.exit(1);
}

function run(args, env) {
  console.log(`ensure-crs: running: ${args.join(' ')}`);
  const r = spawnSync(args[0], args.slice(1), { stdio: 'inherit', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive', ...env } });
  if (r.error) return false;
  return r.status === 0;
}

if (present()) {
  report();
  process.exit(0);
}

const manual = `install Debian's ${PACKAGE} 3.3.4 as root: \`apt-get update && ${INSTALL.join(' ')}\` (or set CRS_RULES_DIR to a CRS 3.3.4 rules folder)`;
if (process.env.CRS_RULES_DIR) fail(`${DIR} (CRS_RULES_DIR) has no CRS rules; unset CRS_RULES_DIR or ${manual}`);
if (process.platform !== 'linux' || spawnSync('apt-get', ['--version'], { stdio: 'ignore' }).status !== 0)
  fail(`${DIR} is missing and apt-get is not available here; ${manual}`);
if (typeof process.getuid !== 'function' || process.getuid() !== 0)
  fail(`${DIR} is missing and this is not root, so nothing was installed; ${manual}`);

console.log(`ensure-crs: ${DIR} is missing; installing ${PACKAGE}`);
if (!run(INSTALL)) {
  // The package lists may be missing or stale: refresh them once and retry.
  if (!run(['apt-get', 'update'])) fail(`apt-get update failed; ${manual}`);
  if (!run(INSTALL)) fail(`apt-get install ${PACKAGE} failed; ${manual}`);
}
if (!present()) fail(`${PACKAGE} is installed but ${DIR} is still missing (a different package layout?); set CRS_RULES_DIR`);
report();
