// The tools npm needs to build the native SQLite binding (better-sqlite3, an optional
// dependency compiled by node-gyp): a C++ compiler, make and Python 3.
//   - present: nothing to do;
//   - missing, running as root on a system with apt-get: runs `apt-get install -y
//     --no-install-recommends g++ make python3` (and `apt-get update` first when that fails),
//     printing each command;
//   - otherwise: says so and goes on (exit code 2, so `npm test` does not reinstall a
//     module it cannot build). npm then skips the binding, and the service runs on
//     SQLite's WebAssembly build (docs/service.md, "Store"); the test of the binding fails
//     and says how to build it.
import { spawnSync } from 'node:child_process';

const TOOLS = [
  ['g++', 'g++'],
  ['make', 'make'],
  ['python3', 'python3'],
];
const missing = TOOLS.filter(([cmd]) => spawnSync(cmd, ['--version'], { stdio: 'ignore' }).status !== 0).map(([, pkg]) => pkg);
if (missing.length === 0) process.exit(0);

const INSTALL = ['apt-get', 'install', '-y', '--no-install-recommends', ...missing];
const note = (m) => console.log(`ensure-build-tools: ${m}`);
const manual = `install them (\`apt-get update && ${INSTALL.join(' ')}\` as root), then run \`npm install\` to build the native SQLite binding; until then the service uses SQLite's WebAssembly build`;
if (process.platform !== 'linux' || spawnSync('apt-get', ['--version'], { stdio: 'ignore' }).status !== 0) {
  note(`${missing.join(', ')} missing and apt-get is not available; ${manual}`);
  process.exit(2);
}
if (typeof process.getuid !== 'function' || process.getuid() !== 0) {
  note(`${missing.join(', ')} missing and this is not root, so nothing was installed; ${manual}`);
  process.exit(2);
}

function run(args) {
  note(`running: ${args.join(' ')}`);
  const r = spawnSync(args[0], args.slice(1), { stdio: 'inherit', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
  return !r.error && r.status === 0;
}

// The package lists may be missing or stale: refresh them once and retry.
if (!run(INSTALL) && !(run(['apt-get', 'update']) && run(INSTALL))) {
  note(`apt-get could not install ${missing.join(', ')}; ${manual}`);
  process.exit(2);
}
