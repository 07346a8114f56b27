// One SQLite binding's cost for the store's operations, run by sqliteBindings.bench.ts in a
// process of its own (plain JavaScript: node:sqlite needs a newer Node than the project's).
//
//   node sqliteOps.mjs <wasm|better|node> <dir> <json spec>
//
// Prints one JSON line: per operation, the wall time samples' p50/p99/max (µs) and the
// CPU time per operation (µs). The spec gives the events table's schema, columns and a
// row (from server/src/service/events/schema.ts), and better-sqlite3's folder.
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';

const [binding, dir, specText] = process.argv.slice(2);
const spec = JSON.parse(specText);
const require = createRequire(import.meta.url);

/** The three bindings behind one shape: exec(sql), prepare(sql) → { run(values), get(values), close() }. */
function open(file) {
  if (binding === 'wasm') {
    const { Database } = require('node-sqlite3-wasm');
    const db = new Database(file);
    return {
      exec: (sql) => db.exec(sql),
      prepare: (sql) => {
        const st = db.prepare(sql);
        return { run: (v) => st.run(v), get: (v) => st.get(v), close: () => st.finalize() };
      },
      close: () => db.close(),
    };
  }
  const db = binding === 'better' ? new (require(spec.betterSqlite3))(file) : new (require('node:sqlite').DatabaseSync)(file);
  return {
    exec: (sql) => db.exec(sql),
    prepare: (sql) => {
      const st = db.prepare(sql);
      return { run: (v) => st.run(...v), get: (v) => st.get(...v), close: () => {} };
    },
    close: () => db.close(),
  };
}

function figures(samples, cpuUs, ops) {
  const s = samples.sort((a, b) => a - b);
  const at = (q) => s[Math.min(s.length - 1, Math.floor(q * s.length))];
  return { p50: at(0.5), p99: at(0.99), max: s[s.length - 1], cpu: cpuUs / ops };
}

/** Runs `op(i)` n times, each timed; the first `warm` runs are not counted. */
function timed(n, warm, op) {
  for (let i = 0; i < warm; i++) op(i);
  const samples = [];
  const cpu0 = process.cpuUsage();
  for (let i = warm; i < warm + n; i++) {
    const t = performance.now();
    op(i);
    samples.push((performance.now() - t) * 1000);
  }
  const cpu = process.cpuUsage(cpu0);
  return figures(samples, cpu.user + cpu.system, n);
}

const db = open(join(dir, `${binding}.db`));
// As the store: WAL with the lock held (node-sqlite3-wasm's VFS has no shared memory).
db.exec('PRAGMA locking_mode = EXCLUSIVE; PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL');
db.exec('CREATE TABLE rules (id TEXT PRIMARY KEY, ruleset TEXT NOT NULL, pos INTEGER NOT NULL, body TEXT NOT NULL); CREATE INDEX rules_at ON rules (ruleset, pos)');
db.exec(spec.eventsSchema);
const body = JSON.stringify({ action: 'block', expression: 'http.request.uri.path contains "/admin" and not ip.src in {192.0.2.0/24}', description: 'x'.repeat(150) });
const id = (i) => `${(i * 2654435761) % 4294967296}`.padStart(32, '0');
const N = 20_000;
const WARM = 2_000;
const result = {};

// A rule's row, inside transactions of 100 (as a PUT of many rules writes them).
const insert = db.prepare('INSERT INTO rules (id, ruleset, pos, body) VALUES (?, ?, ?, ?)');
result.insert = timed(N, WARM, (i) => {
  if (i % 100 === 0) db.exec('BEGIN');
  insert.run([id(i), `rs${i % 50}`, i, body]);
  if (i % 100 === 99) db.exec('COMMIT');
});
// A rule by its key (the store's most common read).
const select = db.prepare('SELECT body FROM rules WHERE id = ?');
result.select = timed(N, WARM, (i) => select.get([id((i * 7919) % (N + WARM))]));
// A security event: 27 values, the table and its two indexes, transactions of 500.
const eventInsert = db.prepare(`INSERT INTO security_events (${spec.eventColumns.join(', ')}) VALUES (${spec.eventColumns.map(() => '?').join(', ')})`);
result.event = timed(N, WARM, (i) => {
  if (i % 500 === 0) db.exec('BEGIN');
  const row = [...spec.eventRow];
  row[0] = `ray${i}`;
  row[1] = 1_700_000_000_000 + i;
  eventInsert.run(row);
  if (i % 500 === 499) db.exec('COMMIT');
});
// One row committed durably on its own: the fsync of the log (synchronous = FULL).
db.exec('PRAGMA synchronous = FULL');
result.commit = timed(300, 20, (i) => insert.run([`c${i}`, 'durable', i, body]));
for (const st of [insert, select, eventInsert]) st.close();
db.close();
console.log(JSON.stringify({ binding, node: process.version, result }));
