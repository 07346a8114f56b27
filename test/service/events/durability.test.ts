// SIGKILL while the sink writes: the store opens again intact (SQLite's integrity check),
// the hourly counts agree with the events, and every event whose batch was reported
// written is there — what is lost is at most the batch being written.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { Store } from '../../../server/src/service/store';

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
  try {
    assert.equal(store.get('PRAGMA integrity_check')!.integrity_check, 'ok');
    const events = Number(store.get('SELECT COUNT(*) AS n FROM security_events')!.n);
    const counted = Number(store.get('SELECT COALESCE(SUM(count), 0) AS n FROM security_events_hourly')!.n);
    assert.equal(counted, events, 'the hourly counts agree with the events');
    assert.ok(events >= reported, `every reported batch is stored (${events} events, ${reported} reported)`);
  } finally {
    store.close();
  }
});
