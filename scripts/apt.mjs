// Installs Debian packages for the scripts that set up what the build and the tests need
// (ensure-crs.mjs, ensure-build-tools.mjs). Never uses sudo: a non-root user is told.
import { spawnSync } from 'node:child_process';

/** The commands that install `packages`, for a message to a user who must run them. */
export const aptCommand = (packages) => `apt-get update && apt-get install -y --no-install-recommends ${packages.join(' ')}`;

/**
 * Installs `packages` (and runs `apt-get update` once when the install fails: the package
 * lists may be missing or stale), printing each command with `tag`. Returns undefined
 * when installed, else why not: 'no apt-get here', 'not root', or 'apt-get failed'.
 */
export function aptInstall(packages, tag) {
  if (process.platform !== 'linux' || spawnSync('apt-get', ['--version'], { stdio: 'ignore' }).status !== 0) return 'no apt-get here';
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return 'not root';
  const run = (args) => {
    console.log(`${tag}: running: apt-get ${args.join(' ')}`);
    const r = spawnSync('apt-get', args, { stdio: 'inherit', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
    return !r.error && r.status === 0;
  };
  const install = ['install', '-y', '--no-install-recommends', ...packages];
  return run(install) || (run(['update']) && run(install)) ? undefined : 'apt-get failed';
}
