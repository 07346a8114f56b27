// SIGKILL while the events thread writes: the events file opens again intact (SQLite's
// integrity check), the hourly counts agree with the events, and every event whose batch
// was reported written is there — what is lost is at most what was not yet written.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { Store } from '../../../server/src/service/store';
import { SecurityEvents } from '../../../server/src/service/events/writer';

const dir = mkdtempSync(join(tmpdir(), 'rulesmith-events-kill-'));
after(() => rmSync(dir, { recursive: true, force: true }));

test('SIGKILL mid-write loses at most the batch in flight and never corrupts the store', async () => {
  const db = join(dir, 'events.db');
  const child = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'writerChild.ts'), db], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  // Wait for several batches, then kill without warning.
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the writer did not write 10 batches:\n${out}`)), 60_000);
    child.stdout!.on('data', () => {
      if ((out.match(/written [1-9]/g) ?? []).length >= 10) {
        clearTimeout(timer);
        resolve();
      }
    });
  });
  child.kill('SIGKILL');
  await new Promise((r) => child.on('exit', r));
  const reported = Math.max(...[...out.matchAll(/written (\d+)/g)].map((m) => Number(m[1])));
  const store = new Store(db);
  const sink = new SecurityEvents(store);
  try {
    assert.deepEqual(await sink.all('PRAGMA integrity_check'), [{ integrity_check: 'ok' }]);
    const events = Number((await sink.all('SELECT COUNT(*) AS n FROM security_events'))[0]!.n);
    const counted = Number((await sink.all('SELECT COALESCE(SUM(count), 0) AS n FROM security_events_hourly'))[0]!.n);
    assert.equal(counted, events, 'the hourly counts agree with the events');
    assert.ok(events >= reported, `every reported batch is stored (${events} events, ${reported} reported)`);
  } finally {
    await sink.close();
    store.close();
  }
});
