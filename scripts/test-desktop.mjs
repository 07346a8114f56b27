// `npm run test:desktop`: the in-host suite (test/e2e/suite/, the same one the code-server
// e2e runs) in a desktop VS Code, through @vscode/test-electron. CI keeps code-server
// (test/e2e/vscode.test.ts); this is for a machine with a desktop VS Code.
//
// Which VS Code: VSCODE_EXECUTABLE_PATH when set, else one @vscode/test-electron downloads
// (stable, cached in .vscode-test/). When neither is possible it says why and exits 0 with
// "skipped", so that it never passes silently nor fails for want of a VS Code:
//   - @vscode/test-electron is not installed (it is not a dependency yet: npm i -D it);
//   - no VSCODE_EXECUTABLE_PATH and the download failed (e.g. a network that reaches only
//     the npm registry and Debian's mirrors).
// Like the code-server run, it packages the extension into a .vsix, installs it into a
// fresh profile, starts the local rules service with the demo seed and a random token, and
// runs the suite in a window on a copy of test/fixtures/e2e/workspace. Exit 1 when a test fails.
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startLocalService } from './localService.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SUITE = join(ROOT, 'test/e2e/suite');
const CRS_CORPUS = join(ROOT, 'test/fixtures/crs-3.3.4-regression-tests');

function skip(reason) {
  process.stdout.write(`test:desktop skipped: ${reason}\n`);
  process.exit(0);
}

let electron;
try {
  electron = createRequire(import.meta.url)('@vscode/test-electron');
} catch {
  skip('@vscode/test-electron is not installed (npm i -D @vscode/test-electron), so no desktop VS Code can be started. The code-server e2e (npm run test:e2e) runs the same suite.');
}

let executable = process.env.VSCODE_EXECUTABLE_PATH;
if (executable && !existsSync(executable)) skip(`VSCODE_EXECUTABLE_PATH names ${executable}, which does not exist.`);
if (!executable) {
  try {
    executable = await electron.downloadAndUnzipVSCode({ version: 'stable', cachePath: join(ROOT, '.vscode-test') });
  } catch (e) {
    skip(
      `no VSCODE_EXECUTABLE_PATH, and downloading a desktop VS Code failed (${e instanceof Error ? e.message : String(e)}). ` +
        'On a network that reaches only the npm registry and Debian, set VSCODE_EXECUTABLE_PATH to an installed VS Code (the `code` binary of a .tar.gz build).',
    );
  }
}

const dir = mkdtempSync(join(tmpdir(), 'rulesmith-desktop-'));
const userData = join(dir, 'user-data');
const extensions = join(dir, 'extensions');
const workspace = join(dir, 'workspace');
mkdirSync(join(userData, 'User'), { recursive: true });
cpSync(join(ROOT, 'test/fixtures/e2e/workspace'), workspace, { recursive: true });
writeFileSync(
  join(userData, 'User/settings.json'),
  JSON.stringify({ 'workbench.startupEditor': 'none', 'telemetry.telemetryLevel': 'off', 'update.mode': 'none', 'extensions.autoUpdate': false, 'security.workspace.trust.enabled': false, 'rulesmith.preview.attackCorpus': CRS_CORPUS, 'rulesmith.preview.maxCorpusRequests': 300 }, null, 2),
);

const build = spawnSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'inherit' });
if (build.status !== 0) {
  process.stderr.write('test:desktop: npm run build failed\n');
  process.exit(1);
}
const vsix = join(dir, 'rulesmith.vsix');
const pack = spawnSync(process.execPath, [join(ROOT, 'scripts/package.mjs'), '-o', vsix], { cwd: ROOT, stdio: 'inherit' });
if (pack.status !== 0) {
  process.stderr.write('test:desktop: packaging the extension failed (npm run package)\n');
  process.exit(1);
}
const [cli, ...cliArgs] = electron.resolveCliArgsFromVSCodeExecutablePath(executable);
const install = spawnSync(cli, [...cliArgs, '--user-data-dir', userData, '--extensions-dir', extensions, '--install-extension', vsix], { stdio: 'inherit', shell: process.platform === 'win32' });
if (install.status !== 0) {
  process.stderr.write('test:desktop: installing the .vsix failed\n');
  process.exit(1);
}

// The local rules service the suite signs in to (as the code-server run starts it).
const token = `desktop_${randomBytes(24).toString('base64url')}`;
const { child: rules, ready } = startLocalService(['--host', '127.0.0.1', '--port', '0', '--db', join(dir, 'rules-service.db'), '--seed', 'demo', '--proxy-listen', '127.0.0.1:0'], {
  env: { ...process.env, RULESMITH_SERVICE_TOKEN: token },
  timeoutMs: 30_000,
});
const { apiUrl: baseUrl, proxyUrl, printed: rulesLog } = await ready;
const key = /X-Auth-Email:\s*(\S+@\S+)\s+(\S+)/.exec(rulesLog);
mkdirSync(join(workspace, '.rulesmith-e2e'), { recursive: true });
writeFileSync(join(workspace, '.rulesmith-e2e', 'service.json'), JSON.stringify({ baseUrl, token, proxyUrl, crsCorpus: CRS_CORPUS, ...(key ? { email: key[1], key: key[2] } : {}) }));

let code = 0;
try {
  await electron.runTests({
    vscodeExecutablePath: executable,
    extensionDevelopmentPath: SUITE,
    extensionTestsPath: join(SUITE, 'index.js'),
    launchArgs: [workspace, '--user-data-dir', userData, '--extensions-dir', extensions, '--disable-workspace-trust'],
    extensionTestsEnv: { RULESMITH_TEST_HOOKS: '1' },
  });
} catch (e) {
  process.stderr.write(`test:desktop: ${e instanceof Error ? e.message : String(e)}\n`);
  code = 1;
} finally {
  rules.kill('SIGTERM');
}
process.exit(code);
