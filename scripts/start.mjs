// `npm start`: builds everything and runs the demo. Until the extension's views and the
// local rules service land, the demo is the CLI on the example workspace: a check (with
// the mistakes it finds), an evaluation of one expression, the managed rulesets
// evaluated on sample requests, and the paranoia/threshold preview.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

function run(cmd, args, { allowFail = false } = {}) {
  console.log(`\n$ ${[cmd, ...args].join(' ')}`);
  const r = spawnSync(cmd, args, { stdio: 'inherit' });
  if (r.status !== 0 && !allowFail) process.exit(r.status ?? 1);
}

if (!existsSync('node_modules/.package-lock.json')) run('npm', ['ci', '--no-audit', '--no-fund']);
run('npm', ['run', 'build', '--silent']);
const cli = ['server/out/cli.js'];
run('node', [...cli, 'check', 'examples/admin-paths.cfrule', 'examples/zone.ruleset.json', 'examples/mistakes.cfrule', 'examples/broken.cfrule', '--plan', 'pro', '--phase', 'http_request_firewall_custom'], { allowFail: true });
run('node', [...cli, 'eval', '--config', 'examples/managed.ruleset.json', '--requests', 'examples/requests.http']);
run('node', [...cli, 'preview', '--config', 'examples/managed.ruleset.json', '--requests', 'examples/requests.http']);
run('node', [...cli, 'eval', '--expr', 'http.request.uri.path contains "/admin" and not ip.src in {192.0.2.0/24}', '--fields', 'examples/request.fields.json']);
run('node', [...cli, 'format', '--check', 'examples/admin-paths.cfrule', 'examples/mistakes.cfrule'], { allowFail: true });
