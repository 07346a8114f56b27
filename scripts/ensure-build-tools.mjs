// The tools npm needs to build the native SQLite binding (better-sqlite3, an optional
// dependency compiled by node-gyp): a C++ compiler, make and Python 3.
//   - present: nothing to do;
//   - missing, running as root on a system with apt-get: installs them (scripts/apt.mjs);
//   - otherwise: says so and goes on (exit code 2, so `npm test` does not reinstall a
//     module it cannot build). npm then skips the binding, and the service runs on
//     SQLite's WebAssembly build (docs/service.md, "Store"); the test of the binding fails
//     and says how to build it.
import { spawnSync } from 'node:child_process';
import { aptCommand, aptInstall } from './apt.mjs';

const TOOLS = [
  ['g++', 'g++'],
  ['make', 'make'],
  ['python3', 'python3'],
];
const missing = TOOLS.filter(([cmd]) => spawnSync(cmd, ['--version'], { stdio: 'ignore' }).status !== 0).map(([, pkg]) => pkg);
if (missing.length === 0) process.exit(0);

const why = aptInstall(missing, 'ensure-build-tools');
if (why) {
  console.log(
    `ensure-build-tools: ${missing.join(', ')} missing and not installed (${why}); install them (\`${aptCommand(missing)}\` as root), ` +
      'then run `npm rebuild better-sqlite3` to build the native SQLite binding; until then the service uses SQLite\'s WebAssembly build',
  );
  process.exit(2);
}
