// Makes sure the OWASP CRS 3.3.4 rules (Debian's `modsecurity-crs` package) are installed,
// for the build, the CRS tests and CI. Usage: `node scripts/crs/ensure-crs.mjs`.
//   - rules folder present (default /usr/share/modsecurity-crs/rules, or $CRS_RULES_DIR):
//     prints one line naming it (and its CRS version), exits 0;
//   - missing, running as root on a system with apt-get: installs `modsecurity-crs`
//     (scripts/apt.mjs), then checks again;
//   - otherwise: exits 1 with what to run.
// It never uses sudo: a non-root user is told the command instead.
import { existsSync, readFileSync } from 'node:fs';
import { aptCommand, aptInstall } from '../apt.mjs';

const DIR = process.env.CRS_RULES_DIR || '/usr/share/modsecurity-crs/rules';
const PACKAGE = 'modsecurity-crs';

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

if (present()) {
  report();
  process.exit(0);
}

const manual = `install Debian's ${PACKAGE} 3.3.4 as root: \`${aptCommand([PACKAGE])}\` (or set CRS_RULES_DIR to a CRS 3.3.4 rules folder)`;
if (process.env.CRS_RULES_DIR) fail(`${DIR} (CRS_RULES_DIR) has no CRS rules; unset CRS_RULES_DIR or ${manual}`);
console.log(`ensure-crs: ${DIR} is missing; installing ${PACKAGE}`);
const why = aptInstall([PACKAGE], 'ensure-crs');
if (why) fail(`${DIR} is missing and ${PACKAGE} was not installed (${why}); ${manual}`);
if (!present()) fail(`${PACKAGE} is installed but ${DIR} is still missing (a different package layout?); set CRS_RULES_DIR`);
report();
