// `npm start`: builds everything, starts the local rules service with the demo seed, and
// opens the extension in a real VS Code in the browser (code-server) on a demo workspace.
// Prints the URL to open. Ctrl-C stops both.
//
//   npm start                 the demo (code-server on 127.0.0.1:8080, service on :8787,
//                             or free ports when those are taken)
//   npm start -- --smoke      start everything, check both answer, stop (exit 0 = works)
//
// What the demo writes stays in .demo/ (gitignored) — the service's database and
// code-server's profile — except the workspace (a copy of examples/, made once so your
// edits survive restarts), which lives outside the clone (scripts/demo-workspace.mjs,
// printed at start). Delete both for a fresh demo. code-server itself is installed
// once into ~/.cache/rulesmith-e2e by scripts/e2e-setup.mjs (the e2e tests share it).
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { get as httpGet } from 'node:http';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import { demoWorkspaceDir, makeDemoWorkspace } from './demo-workspace.mjs';
import { e2ePaths } from './e2e-setup.mjs';
import { startLocalService } from './localService.mjs';

const ROOT = resolve(import.meta.dirname, '..');
const DEMO = join(ROOT, '.demo');
const smoke = process.argv.includes('--smoke');
const say = (s) => process.stdout.write(`[rulesmith] ${s}\n`);

function run(cmd, args, opts = {}) {
  say(`$ ${[cmd, ...args].join(' ')}`);
  const r = spawnSync(cmd, args, { stdio: 'inherit', cwd: ROOT, ...opts });
  if (r.status !== 0) {
    say(`failed: ${cmd} ${args.join(' ')} (exit ${r.status ?? r.signal})`);
    process.exit(r.status ?? 1);
  }
  return r;
}

function portFree(port) {
  return new Promise((res) => {
    const srv = createServer();
    srv.once('error', () => res(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => res(true)));
  });
}

async function pickPort(preferred) {
  if (await portFree(preferred)) return preferred;
  return new Promise((res) => {
    const srv = createServer();
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => res(port));
    });
  });
}

if (!existsSync(join(ROOT, 'node_modules/.package-lock.json'))) {
  // A compiler for the native SQLite binding npm builds; without one the service uses SQLite's WebAssembly build.
  spawnSync(process.execPath, ['scripts/ensure-build-tools.mjs'], { stdio: 'inherit', cwd: ROOT });
  run('npm', ['ci', '--no-audit', '--no-fund']);
}
run(process.execPath, ['scripts/crs/ensure-crs.mjs']);
run('npm', ['run', 'build', '--silent']);
const setup = spawnSync(process.execPath, ['scripts/e2e-setup.mjs'], { stdio: 'inherit', cwd: ROOT });
if (setup.status !== 0) {
  say('code-server is not available here (see above). The service and the CLI still work: `node server/out/cli.js serve --seed demo`.');
  process.exit(setup.status ?? 1);
}
const paths = e2ePaths();

// The demo folder: profile dirs, the workspace (once), the extension package.
for (const d of ['home', 'tmp', 'xdg-config', 'xdg-data', 'xdg-cache', 'user-data/User', 'extensions']) mkdirSync(join(DEMO, d), { recursive: true });
// Outside the clone (see demo-workspace.mjs); an older demo's .demo/workspace is carried over once.
const workspace = makeDemoWorkspace(demoWorkspaceDir(), join(DEMO, 'workspace'));
const vsix = join(DEMO, 'rulesmith.vsix');
run(process.execPath, ['scripts/package.mjs', '-o', vsix]);

const env = { ...process.env };
for (const k of Object.keys(env)) if (k.startsWith('VSCODE_') || k === 'ELECTRON_RUN_AS_NODE') delete env[k];
Object.assign(env, {
  HOME: join(DEMO, 'home'),
  TMPDIR: join(DEMO, 'tmp'),
  XDG_CONFIG_HOME: join(DEMO, 'xdg-config'),
  XDG_DATA_HOME: join(DEMO, 'xdg-data'),
  XDG_CACHE_HOME: join(DEMO, 'xdg-cache'),
});
run(paths.node, [paths.codeServerEntry, '--user-data-dir', join(DEMO, 'user-data'), '--extensions-dir', join(DEMO, 'extensions'), '--install-extension', vsix, '--force'], { env, stdio: ['ignore', 'ignore', 'inherit'] });

// The token the extension uses against the demo service: made once, kept private in .demo/.
const tokenFile = join(DEMO, 'service-token');
if (!existsSync(tokenFile)) writeFileSync(tokenFile, randomBytes(30).toString('base64url'), { mode: 0o600 });
chmodSync(tokenFile, 0o600);
const token = readFileSync(tokenFile, 'utf8').trim();

const children = [];
let stopping = false;
function stopAll(code) {
  if (stopping) return;
  stopping = true;
  process.exitCode = code;
  for (const c of children) if (c.exitCode === null) c.kill('SIGTERM');
  setTimeout(() => process.exit(code), 1500).unref();
}
process.on('SIGINT', () => stopAll(0));
process.on('SIGTERM', () => stopAll(0));

try {
  // The demo app, which the service's WAF proxy fronts for the zone pro.example.com (docs/proxy.md).
  const demoApp = spawn(process.execPath, ['scripts/demo-app.mjs', '0'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(demoApp);
  const demoAppUrl = await new Promise((res, rej) => {
    demoApp.stdout.once('data', (b) => res(/listening on (\S+)/.exec(b.toString())?.[1]));
    demoApp.once('exit', (code) => rej(new Error(`the demo app exited with ${code}`)));
  });
  const proxyPort = await pickPort(8081);
  const servicePort = await pickPort(8787);
  const { child: service, ready } = startLocalService(['--port', String(servicePort), '--db', join(DEMO, 'rules-service.db'), '--seed', 'demo', '--proxy', `pro.example.com=${demoAppUrl}`, '--proxy-listen', `127.0.0.1:${proxyPort}`], {
    env: { ...process.env, RULESMITH_SERVICE_TOKEN: token },
    timeoutMs: 120_000,
    onLine: (line) => line && process.stdout.write(`[service] ${line}\n`),
  });
  children.push(service);
  const { apiUrl: serviceUrl } = await ready;
  // Either one stopping later leaves the demo without its service or its app: everything stops.
  for (const [what, child] of [['the rules service', service], ['the demo app', demoApp]]) {
    child.once('exit', (code, signal) => {
      if (stopping) return;
      say(`${what} stopped (${signal ?? `code ${code}`}); stopping the demo`);
      stopAll(1);
    });
  }

  const headers = { authorization: `Bearer ${token}` };
  const accounts = await (await fetch(`${serviceUrl}/accounts`, { headers })).json();
  const zones = await (await fetch(`${serviceUrl}/zones?name=pro.example.com`, { headers })).json();
  mkdirSync(join(workspace, '.vscode'), { recursive: true });
  const settingsFile = join(workspace, '.vscode/settings.json');
  const settings = existsSync(settingsFile) ? JSON.parse(readFileSync(settingsFile, 'utf8')) : {};
  Object.assign(settings, {
    'rulesmith.api.baseUrl': serviceUrl,
    'rulesmith.api.accountId': accounts.result[0].id,
    'rulesmith.api.zoneId': zones.result[0].id,
    'rulesmith.proxy.url': `http://127.0.0.1:${proxyPort}`,
  });
  writeFileSync(settingsFile, `${JSON.stringify(settings, null, 2)}\n`);
  writeFileSync(
    join(DEMO, 'user-data/User/settings.json'),
    JSON.stringify(
      {
        'workbench.startupEditor': 'none',
        'workbench.secondarySideBar.defaultVisibility': 'hidden',
        'chat.disableAIFeatures': true,
        'telemetry.telemetryLevel': 'off',
        'extensions.autoCheckUpdates': false,
        'extensions.autoUpdate': false,
        'update.mode': 'none',
        'security.workspace.trust.enabled': false,
      },
      null,
      2,
    ),
  );

  const csPort = await pickPort(8080);
  writeFileSync(join(DEMO, 'config.yaml'), `bind-addr: 127.0.0.1:${csPort}\nauth: none\ncert: false\n`);
  const codeServer = spawn(
    paths.node,
    [
      paths.codeServerEntry,
      '--config', join(DEMO, 'config.yaml'),
      '--bind-addr', `127.0.0.1:${csPort}`,
      '--auth', 'none',
      '--user-data-dir', join(DEMO, 'user-data'),
      '--extensions-dir', join(DEMO, 'extensions'),
      '--disable-telemetry',
      '--disable-update-check',
      '--disable-workspace-trust',
      '--disable-getting-started-override',
    ],
    // The extension signs in to the demo service with this token (see README, "Demo").
    { cwd: DEMO, env: { ...env, RULESMITH_API_TOKEN: token }, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  children.push(codeServer);
  codeServer.once('exit', (code) => {
    if (code !== null && code !== 0) say(`code-server exited with ${code}`);
    stopAll(code ?? 0);
  });

  const url = `http://127.0.0.1:${csPort}/?folder=${encodeURIComponent(workspace)}`;
  for (let i = 0; ; i++) {
    try {
      if ((await fetch(`http://127.0.0.1:${csPort}/healthz`)).ok) break;
    } catch {}
    if (i > 240) {
      say('code-server did not start within 60 s');
      stopAll(1);
    }
    await new Promise((r) => setTimeout(r, 250));
  }

  say(`rules service: ${serviceUrl} (database .demo/rules-service.db; seeded credentials are printed above on first start)`);
  say(`demo workspace: ${workspace}`);
  say(`VS Code with Rulesmith: ${url}`);
  say(`demo app behind the WAF proxy (zone pro.example.com): http://pro.example.com.localhost:${proxyPort}/ (click the attack links)`);
  if (smoke) {
    const check = await fetch(`${serviceUrl}/zones`, { headers });
    // fetch() does not send a Host header of its own choosing: node:http does.
    const proxied = await new Promise((res) => {
      const r = httpGet({ host: '127.0.0.1', port: proxyPort, path: '/', headers: { host: 'pro.example.com', accept: 'text/html', 'user-agent': 'Mozilla/5.0' } }, (x) => {
        x.resume();
        res({ ok: x.statusCode === 200, status: x.statusCode });
      });
      r.on('error', () => res({ ok: false, status: 0 }));
    });
    say(`smoke check: service ${check.status}, demo app through the proxy ${proxied.status}, code-server up`);
    stopAll(check.ok && proxied.ok ? 0 : 1);
  } else say('open the URL above in a browser; Ctrl-C stops the demo');
} catch (e) {
  // A step that failed leaves nothing running behind it (the service would hold the port and the database).
  say(`npm start failed: ${e instanceof Error ? e.message : String(e)}`);
  stopAll(1);
}
