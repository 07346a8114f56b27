/**
 * The security events' thread (writer.ts starts it): it owns the events file
 * (eventsDb.ts) and answers writer.ts's messages in the order they came.
 *
 * writer.ts hands rows over every HAND_OVER_MS, so that they die young on the proxy's
 * thread instead of living through garbage collections there; this thread gathers them
 * and commits every COMMIT_MS (or COMMIT_ROWS rows), answering each write once its rows
 * are committed. Any other message commits what is gathered first, so a read sees every
 * row handed over before it.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { runInBackground } from '../backgroundThread';
import { answer, EventsDb, PRUNE_MS, type EventRow, type Retention, type ToEvents } from './eventsDb';

runInBackground();

const COMMIT_MS = 200;
const COMMIT_ROWS = 2_000;

const { file, retention } = workerData as { file: string; retention: Retention };
let db: EventsDb | undefined;
let failed: string | undefined;
try {
  db = new EventsDb(file, retention);
} catch (e) {
  failed = `cannot open ${file}: ${(e as Error).message}`;
}

let gathered: EventRow[] = [];
let writes = 0;
let now = 0;
let timer: NodeJS.Timeout | undefined;

function reply(m: ToEvents): void {
  parentPort!.postMessage(db ? answer(db, m) : { ok: false, error: failed });
}

/** Commits the gathered rows in one transaction and answers each write that brought them. */
function commit(): void {
  if (timer) clearTimeout(timer);
  timer = undefined;
  if (writes === 0) return;
  const result = db ? answer(db, { op: 'write', rows: gathered, now }) : { ok: false, error: failed };
  for (let i = 0; i < writes; i++) parentPort!.postMessage(result);
  gathered = [];
  writes = 0;
}

// Expired events go even while nothing is recorded (a pass after a write does it otherwise).
// The time is the writer's (its last write's `now`, moved on by the time since), so a
// clock the writer was given is the one retention is judged by.
let nowAt = 0;
const pruner = setInterval(() => {
  const failed = db?.pruneIfDue(now === 0 ? Date.now() : now + (Date.now() - nowAt));
  if (failed !== undefined) console.error(`security events: pruning ${file} failed: ${failed}`);
}, PRUNE_MS);
pruner.unref();

// After `close`, writer.ts ends the thread once the answer is in.
parentPort!.on('message', (m: ToEvents) => {
  if (m.op !== 'write') {
    commit();
    if (m.op === 'close') clearInterval(pruner);
    reply(m);
    return;
  }
  for (const row of m.rows) gathered.push(row);
  writes++;
  now = m.now;
  nowAt = Date.now();
  if (gathered.length >= COMMIT_ROWS) commit();
  else timer ??= setTimeout(commit, COMMIT_MS);
});
