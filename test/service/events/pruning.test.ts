// The events file's upkeep: pruning (eventsDb.ts) with more than one chunk to delete (a
// burst over the row limit, or a limit lowered on a full file, is caught up with in one
// pass, so the limit holds as documented), expired events going on a pass with no write
// before it (an idle proxy still lets them go), and a file that cannot be opened said once.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { answer, EventsDb, type EventRow } from '../../../server/src/service/events/eventsDb';
import { EVENT_COLUMNS } from '../../../server/src/service/events/schema';
import { SecurityEvents } from '../../../server/src/service/events/writer';
import { Store } from '../../../server/src/service/store';
import { CATALOG, evaluated } from './fixture';

const dir = mkdtempSync(join(tmpdir(), 'rulesmith-pruning-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const NOW = Date.UTC(2026, 10, 26, 12);
const HOUR = 3_600_000;

/** An event row at `time` (the columns' values in EVENT_COLUMNS order). */
function row(i: number, time: number): EventRow {
  const values: Record<(typeof EVENT_COLUMNS)[number], string | number> = {
    ray_id: `r${i}`, time, zone_id: 'f'.repeat(32), action: 'block', outcome: 'terminated', rule_action: 'block', source: 'firewallCustom',
    phase: 'http_request_firewall_custom', ruleset_id: 'c'.repeat(32), rule_id: 'b'.repeat(32), ref: 'r', description: 'd', client_ip: '203.0.113.7',
    country: 'NL', asn: 64500, method: 'GET', host: 'example.com', path: '/', query: '', user_agent: 'ua', http_version: 'HTTP/1.1', response_status: 403,
    anomaly_score: 0, anomaly_scores: '{}', defaulted_fields: '[]', body_truncated: 0, origin: 'proxy',
  };
  return EVENT_COLUMNS.map((c) => values[c]);
}

/** A SecurityEvents on this thread (no events thread) over a new store named `name`, its log lines kept; closed after `fn`. */
async function withSink(name: string, fn: (sink: SecurityEvents, logs: string[]) => Promise<void>): Promise<void> {
  const store = new Store(join(dir, name));
  const logs: string[] = [];
  const sink = new SecurityEvents(store, { catalog: CATALOG, workerFile: undefined, log: (l) => logs.push(l) });
  try {
    await fn(sink, logs);
  } finally {
    await sink.close();
    store.close();
  }
}

const count = (db: EventsDb) => Number(db.all('SELECT COUNT(*) AS n FROM security_events')[0]!.n);
const hourly = (db: EventsDb) => Number(db.all('SELECT SUM(count) AS n FROM security_events_hourly')[0]!.n ?? 0);

test('a burst of 130,000 events over a limit of 10,000: one pass keeps exactly the newest 10,000', () => {
  const db = new EventsDb(join(dir, 'burst.db-events'), { maxRows: 10_000 });
  try {
    db.insert(Array.from({ length: 130_000 }, (_, i) => row(i, NOW - 1_000 + (i % 1_000))), NOW);
    assert.equal(count(db), 10_000);
    assert.equal(hourly(db), 10_000);
    assert.deepEqual(db.all('SELECT MIN(ray_id) AS first FROM security_events WHERE seq = (SELECT MIN(seq) FROM security_events)')[0], { first: 'r120000' });
  } finally {
    db.close();
  }
});

test('expired events go on a pass that no write brought (an idle proxy), chunk after chunk', () => {
  const db = new EventsDb(join(dir, 'idle.db-events'), { retentionMs: 2 * HOUR });
  try {
    // 120,000 events of 3 hours ago, then 5 of now.
    db.insert([...Array.from({ length: 120_000 }, (_, i) => row(i, NOW - 3 * HOUR)), ...Array.from({ length: 5 }, (_, i) => row(200_000 + i, NOW))], NOW - 3 * HOUR);
    assert.equal(count(db), 120_005);
    db.pruneIfDue(NOW);
    assert.equal(count(db), 5);
    assert.equal(hourly(db), 5);
    // Not again before PRUNE_MS: a pass a second later deletes nothing more, and costs nothing.
    db.pruneIfDue(NOW + 1_000);
    assert.equal(count(db), 5);
  } finally {
    db.close();
  }
});

test('an events file that cannot be opened: one log line naming the file and what to do, not one per batch', () =>
  withSink('unopenable.db', async (sink, logs) => {
    // A folder where the events file would be: SQLite cannot open it.
    mkdirSync(sink.file);
    for (let i = 0; i < 3; i++) {
      sink.record(evaluated('f'.repeat(32), { path: '/admin', ray: `r${i}` }));
      await sink.flush();
    }
    assert.equal(logs.length, 1, logs.join('\n'));
    assert.match(logs[0]!, new RegExp(`^security events: a batch of 1 requests was not written: cannot open ${sink.file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: .*; move ${sink.file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} aside \\(or free its disk\\) and restart serve: the events start over in a new file$`));
    assert.equal(sink.stats.dropped, 3);
  }));

test('a pruning that fails after a batch is committed leaves the batch stored and says so, not that it was dropped', () => {
  const db = new EventsDb(join(dir, 'prune-fails.db-events'), { maxRows: 10 });
  try {
    db.prune = () => {
      throw new Error('disk I/O error');
    };
    assert.deepEqual(answer(db, { op: 'write', rows: [row(1, NOW), row(2, NOW)], now: NOW }), { ok: true, pruneError: 'disk I/O error' });
    assert.equal(count(db), 2);
  } finally {
    db.close();
  }
});

test('a full queue drops only requests that had events, says so once, and says how many when it catches up', () =>
  withSink('overflow.db', async (sink, logs) => {
    // All in one turn: nothing is written before the queue is full.
    for (let i = 0; i < 20_005; i++) sink.record(evaluated('f'.repeat(32), { path: '/admin', ray: `r${i}` }));
    sink.record(evaluated('f'.repeat(32), { path: '/quiet', ray: 'no-events' }));
    await sink.flush();
    assert.deepEqual([sink.stats.dropped, logs], [5, ['security events: 20000 requests wait for the events file; events are dropped until it catches up', 'security events: caught up; the events of 5 requests were dropped while the events file was behind']]);
  }));

test('the waiting events are bounded by their memory too: long queries fill it before the request count does', async () => {
  const store = new Store(join(dir, 'overflow-bytes.db'));
  const logs: string[] = [];
  // Each request's one event repeats its 100,000-character query: some 200 KB as estimated (two bytes a character).
  const sink = new SecurityEvents(store, { catalog: CATALOG, workerFile: undefined, log: (l) => logs.push(l), maxQueuedBytes: 1_000_000 });
  try {
    const query = 'q='.padEnd(100_000, 'a');
    for (let i = 0; i < 10; i++) sink.record(evaluated('f'.repeat(32), { path: '/admin', query, ray: `r${i}` }));
    assert.deepEqual(sink.stats, { written: 0, dropped: 6, queued: 4 });
    await sink.flush();
    assert.deepEqual(sink.stats, { written: 4, dropped: 6, queued: 0 });
    // Written, the memory is free again.
    sink.record(evaluated('f'.repeat(32), { path: '/admin', query, ray: 'after' }));
    await sink.flush();
    assert.deepEqual([sink.stats, logs], [
      { written: 5, dropped: 6, queued: 0 },
      ['security events: 1 MiB of events wait for the events file; events are dropped until it catches up', 'security events: caught up; the events of 6 requests were dropped while the events file was behind'],
    ]);
  } finally {
    await sink.close();
    store.close();
  }
});

test('close writes the events recorded while it flushes, instead of refusing them as closed', () =>
  withSink('closing.db', async (sink, logs) => {
    sink.record(evaluated('f'.repeat(32), { path: '/admin', ray: 'before' }));
    const closing = sink.close();
    sink.record(evaluated('f'.repeat(32), { path: '/admin', ray: 'during' }));
    await closing;
    assert.deepEqual([sink.stats.dropped, logs], [0, []]);
    const db = new EventsDb(sink.file, {});
    try {
      assert.deepEqual(db.all('SELECT ray_id FROM security_events ORDER BY ray_id').map((r) => r.ray_id), ['before', 'during']);
    } finally {
      db.close();
    }
  }));
