/**
 * The floor service.bench.ts measures the rules service against, in the same run: plain
 * node:http on loopback answering the same GET body, and for a write one durable SQLite
 * insert per request with the service's library and pragmas (node-sqlite3-wasm, WAL,
 * synchronous=FULL, exclusive locking; one commit, one fsync, per request) — none of the service's own work (credentials,
 * routing, validation with the core, versions). With `grouped`, the writes that arrive in one
 * turn of the event loop are committed together (one commit, one fsync) and each answered
 * after that commit, as the service groups its commits; the fsync here is SQLite's own, on
 * the event loop, where the service's runs on libuv's thread pool (store.ts). A POST is
 * answered with every body POSTed to its path so far (postedTo), as big as the service's
 * answer, the ruleset with all its rules.
 *
 *   node --import tsx test/bench/service-floor.ts DB_FILE GET_BODY_FILE TOKEN [grouped]
 *
 * Prints `listening on http://127.0.0.1:PORT/client/v4` when ready.
 */
import { readFileSync } from 'node:fs';
import { createServer, type ServerResponse } from 'node:http';
import { Database } from 'node-sqlite3-wasm';

const [dbFile, getBodyFile, token, mode] = process.argv.slice(2);
if (!dbFile || !getBodyFile || !token) throw new Error('usage: service-floor.ts DB_FILE GET_BODY_FILE TOKEN [grouped]');
const getBody = readFileSync(getBodyFile);
const db = new Database(dbFile);
db.exec('PRAGMA locking_mode = EXCLUSIVE');
db.exec('PRAGMA journal_mode = WAL');
db.exec('PRAGMA synchronous = FULL');
db.exec('CREATE TABLE IF NOT EXISTS edits (id INTEGER PRIMARY KEY, path TEXT NOT NULL, body TEXT NOT NULL)');

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    if (req.headers.authorization !== `Bearer ${token}`) {
      res.writeHead(403, { 'content-type': 'application/json' }).end('{"success":false}');
      return;
    }
    if (req.method === 'GET') {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': getBody.length }).end(getBody);
      return;
    }
    const text = Buffer.concat(chunks).toString();
    const rule = JSON.parse(text) as unknown;
    const answer =
      req.method === 'POST'
        ? () => answerList(res, postedTo(req.url ?? '', text))
        : () => {
            const out = JSON.stringify({ result: rule, success: true, errors: [], messages: [] });
            res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(out) }).end(out);
          };
    if (mode !== 'grouped') {
      db.run('INSERT INTO edits (path, body) VALUES (?, ?)', [req.url ?? '', text]);
      answer();
      return;
    }
    if (pending.length === 0) setImmediate(commitPending);
    pending.push({ path: req.url ?? '', text, answer });
  });
});

/**
 * A POST adds its body to the list of its path, and is answered with the whole list, as the
 * service answers a POST of a rule with the ruleset and all its rules: the answer grows as
 * the service's does. The list's bytes grow in place (doubling), so an answer costs no copy
 * of them here: what it costs is the machine's, sending that many bytes.
 */
const posted = new Map<string, { bytes: Buffer; length: number }>();
function postedTo(path: string, text: string): Buffer {
  let list = posted.get(path);
  if (!list) posted.set(path, (list = { bytes: Buffer.allocUnsafe(4096), length: 0 }));
  const need = list.length + 1 + Buffer.byteLength(text);
  if (need > list.bytes.length) {
    const bigger = Buffer.allocUnsafe(Math.max(need, 2 * list.bytes.length));
    list.bytes.copy(bigger, 0, 0, list.length);
    list.bytes = bigger;
  }
  if (list.length > 0) list.bytes[list.length++] = 0x2c; // ,
  list.length += list.bytes.write(text, list.length);
  return list.bytes.subarray(0, list.length);
}

const LIST_HEAD = Buffer.from('{"result":{"rules":[');
const LIST_TAIL = Buffer.from(']},"success":true,"errors":[],"messages":[]}');
function answerList(res: ServerResponse, items: Buffer): void {
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': LIST_HEAD.length + items.length + LIST_TAIL.length });
  res.cork();
  res.write(LIST_HEAD);
  res.write(items);
  res.end(LIST_TAIL);
}

const pending: { path: string; text: string; answer: () => void }[] = [];
function commitPending(): void {
  const batch = pending.splice(0);
  db.exec('BEGIN');
  for (const w of batch) db.run('INSERT INTO edits (path, body) VALUES (?, ?)', [w.path, w.text]);
  db.exec('COMMIT');
  for (const w of batch) w.answer();
}
server.listen(0, '127.0.0.1', () => {
  const a = server.address();
  if (a && typeof a === 'object') console.log(`listening on http://127.0.0.1:${a.port}/client/v4`);
});
const stop = () => server.close(() => {
  db.close();
  process.exit(0);
});
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
