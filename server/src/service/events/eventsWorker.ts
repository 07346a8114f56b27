/**
 * The security events' thread (writer.ts starts it): it owns the events file
 * (eventsDb.ts) and answers writer.ts's messages in the order they came.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { answer, EventsDb, type Retention, type ToEvents } from './eventsDb';

const { file, retention } = workerData as { file: string; retention: Retention };
let db: EventsDb | undefined;
let failed: string | undefined;
try {
  db = new EventsDb(file, retention);
} catch (e) {
  failed = `cannot open ${file}: ${(e as Error).message}`;
}
// After `close`, writer.ts ends the thread once the answer is in.
parentPort!.on('message', (m: ToEvents) => parentPort!.postMessage(db ? answer(db, m) : { ok: false, error: failed }));
