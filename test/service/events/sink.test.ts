// The security-events sink: which rules of an evaluation become events and with what
// fields; record() only queues (nothing is written until the batch flushes); batches,
// the hourly counts, retention and the row limit.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { Store } from '../../../server/src/service/store';
import { Database } from 'node-sqlite3-wasm';
import { serveArgs, serveOptions } from '../../../server/src/cli/serve';
import { eventEvaluation, eventsOf } from '../../../server/src/service/events/fromEvaluation';
import { SecurityEvents } from '../../../server/src/service/events/writer';
import { eventsOn, parseMaxRows, parseRetention } from '../../../server/src/service/events/options';
import { EVENT_COLUMNS, EVENTS_SCHEMA } from '../../../server/src/service/events/schema';
import { traceBudget } from '../../../server/src/service/events/eventsDb';
import { ANOMALY_RULE, BLOCK_ADMIN, CATALOG, CUSTOM_EP, evaluated, LOG_CURL, SCORED, SKIP_HEALTH, SQLI_RULE, XSS_RULE } from './fixture';

const ZONE_ID = 'f'.repeat(32);
const dir = mkdtempSync(join(tmpdir(), 'rulesmith-events-'));
after(() => rmSync(dir, { recursive: true, force: true }));
let dbs = 0;
const newStore = () => new Store(join(dir, `events-${++dbs}.db`));

const brief = (r: ReturnType<typeof evaluated>) => eventsOf(r).map((e) => `${e.source}:${e.ruleId.slice(0, 4)}:${e.action}:${e.outcome}`);

describe('events of an evaluation', () => {
  test('a block writes one event with the request fields', () => {
    const [e, ...rest] = eventsOf(evaluated(ZONE_ID, { path: '/admin', ray: 'ray-1', query: 'a=1' }));
    assert.deepEqual(rest, []);
    assert.deepEqual(e, {
      rayId: 'ray-1', time: Date.UTC(2026, 10, 26, 3), zoneId: ZONE_ID, action: 'block', outcome: 'terminated', ruleAction: 'block',
      source: 'firewallCustom', phase: 'http_request_firewall_custom', rulesetId: CUSTOM_EP, ruleId: BLOCK_ADMIN, ref: 'block-admin', description: 'no admin',
      clientIp: '203.0.113.7', country: 'NL', asn: 64500, method: 'GET', host: 'enterprise.example.com', path: '/admin', query: 'a=1',
      userAgent: 'Mozilla/5.0', httpVersion: 'HTTP/1.1', responseStatus: 403, anomalyScore: 0, anomalyScores: {}, defaultedFields: ['ip.src.city'],
      bodyTruncated: false, origin: 'proxy',
    });
  });

  test('a log and a block on one request are two events; a request nothing acts on is none', () => {
    assert.deepEqual(brief(evaluated(ZONE_ID, { path: '/admin', ua: 'curl/8.5' })), ['firewallCustom:b2b2:log:logged', 'firewallCustom:b1b1:block:terminated']);
    assert.deepEqual(brief(evaluated(ZONE_ID, { path: '/home' })), []);
  });

  test('a skip is an event when it logs, not when logging is off', () => {
    assert.deepEqual(brief(evaluated(ZONE_ID, { path: '/health' })), ['firewallCustom:b3b3:skip:skip']);
    assert.deepEqual(brief(evaluated(ZONE_ID, { path: '/quiet' })), []);
  });

  test('score rules that added points are events, with the total and the per-category scores', () => {
    const one = eventsOf(evaluated(ZONE_ID, { query: 'q=union' }), (rs, rule) => CATALOG.rulesets[0]!.versions[0]!.rules.find((r) => rs === SCORED && r.id === rule)?.categories?.filter((c) => c.startsWith('attack-')));
    assert.deepEqual(one.map((e) => [e.ruleId, e.action, e.anomalyScore, e.anomalyScores]), [[SQLI_RULE, 'score', 5, { 'attack-sqli': 5 }]]);
    const both = eventsOf(evaluated(ZONE_ID, { query: 'q=union<script' }), (rs, rule) => CATALOG.rulesets[0]!.versions[0]!.rules.find((r) => rs === SCORED && r.id === rule)?.categories?.filter((c) => c.startsWith('attack-')));
    assert.deepEqual(
      both.map((e) => [e.ruleId, e.action, e.source, e.anomalyScore, e.anomalyScores]),
      [
        [SQLI_RULE, 'score', 'firewallManaged', 10, { 'attack-sqli': 5, 'attack-xss': 5 }],
        [XSS_RULE, 'score', 'firewallManaged', 10, { 'attack-sqli': 5, 'attack-xss': 5 }],
        [ANOMALY_RULE, 'block', 'firewallManaged', 10, { 'attack-sqli': 5, 'attack-xss': 5 }],
      ],
    );
  });

  test("the part of an evaluation the trace worker sends back gives the same events, without the rules that did not act", () => {
    for (const options of [{ path: '/admin', ua: 'curl/8.5' }, { path: '/health' }, { query: 'q=union<script' }, { path: '/home' }]) {
      const full = evaluated(ZONE_ID, options);
      const slim = { ...full, evaluation: eventEvaluation(full.evaluation) };
      assert.deepEqual(eventsOf(slim), eventsOf(full), JSON.stringify(options));
      assert.ok(slim.evaluation.trace.every((e) => e.outcome !== 'not-matched'), JSON.stringify(options));
    }
    assert.deepEqual(eventEvaluation(evaluated(ZONE_ID, { path: '/home' }).evaluation).trace, []);
  });
});

describe('the sink', () => {
  test('record() only queues (a request no rule acted on not even that); the batch is written by the events thread after the flush interval, with the hourly counts', async () => {
    const store = newStore();
    const sink = new SecurityEvents(store, { catalog: CATALOG, flushMs: 20 });
    sink.record(evaluated(ZONE_ID, { path: '/admin', ua: 'curl/8' }));
    sink.record(evaluated(ZONE_ID, { path: '/health' }));
    sink.record(evaluated(ZONE_ID, { path: '/home' }));
    assert.deepEqual(sink.stats, { written: 0, dropped: 0, queued: 2 });
    // No flush(): the timer hands the batch over (the thread's start takes a moment).
    for (let i = 0; i < 100 && sink.stats.written === 0; i++) await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(sink.stats, { written: 3, dropped: 0, queued: 0 });
    assert.deepEqual(
      (await sink.all('SELECT rule_id, action, count FROM security_events_hourly ORDER BY rule_id')).map((r) => [r.rule_id, r.action, r.count]),
      [[BLOCK_ADMIN, 'block', 1], [LOG_CURL, 'log', 1], [SKIP_HEALTH, 'skip', 1]],
    );
    await sink.close();
    // In their own file beside the store's, not in the store.
    assert.equal(sink.file, `${store.realFile}-events`);
    assert.equal(store.get("SELECT COUNT(*) AS n FROM sqlite_master WHERE name LIKE 'security_events%'")!.n, 0);
    store.close();
  });

  test('without the built events thread the same batches are written on this thread', async () => {
    const store = newStore();
    const sink = new SecurityEvents(store, { catalog: CATALOG, workerFile: undefined });
    sink.record(evaluated(ZONE_ID, { path: '/admin', ua: 'curl/8' }));
    await sink.flush();
    assert.deepEqual((await sink.all('SELECT action, origin FROM security_events ORDER BY seq')).map((r) => [r.action, r.origin]), [['log', 'proxy'], ['block', 'proxy']]);
    await sink.close();
    store.close();
  });

  test('a text with a NUL is stored with U+FFFD instead of failing the batch', async () => {
    const store = newStore();
    const sink = new SecurityEvents(store, { catalog: CATALOG });
    sink.record({ ...evaluated(ZONE_ID, { path: '/admin' }), userAgent: 'a\u0000b' });
    await sink.flush();
    assert.equal((await sink.all('SELECT user_agent FROM security_events'))[0]!.user_agent, 'a\uFFFDb');
    await sink.close();
    store.close();
  });

  test('a query the events file refuses rejects with its error, and the thread goes on', async () => {
    const store = newStore();
    const sink = new SecurityEvents(store, { catalog: CATALOG });
    await assert.rejects(sink.all('SELECT nope FROM security_events'), /no such column: nope/);
    sink.record(evaluated(ZONE_ID, { path: '/admin' }));
    await sink.flush();
    assert.deepEqual(sink.stats, { written: 1, dropped: 0, queued: 0 });
    await sink.close();
    store.close();
  });

  test('retention deletes events older than it and takes them out of the hourly counts', async () => {
    const store = newStore();
    const now = Date.UTC(2026, 10, 26, 12);
    const sink = new SecurityEvents(store, { catalog: CATALOG, retentionMs: 2 * 3_600_000, now: () => now });
    for (const hoursAgo of [5, 3, 1.5, 1, 0]) sink.record(evaluated(ZONE_ID, { path: '/admin', time: now - hoursAgo * 3_600_000 }));
    await sink.flush();
    assert.deepEqual((await sink.all('SELECT time FROM security_events ORDER BY time')).map((r) => (now - Number(r.time)) / 3_600_000), [1.5, 1, 0]);
    assert.deepEqual((await sink.all('SELECT hour, count FROM security_events_hourly ORDER BY hour')).map((r) => [(now - Number(r.hour)) / 3_600_000, r.count]), [[2, 1], [1, 1], [0, 1]]);
    await sink.close();
    store.close();
  });

  test('the row limit keeps the newest events', async () => {
    const store = newStore();
    let now = Date.UTC(2026, 10, 26, 12);
    const sink = new SecurityEvents(store, { catalog: CATALOG, maxRows: 3, now: () => now });
    for (let i = 0; i < 5; i++) sink.record(evaluated(ZONE_ID, { path: '/admin', ray: `r${i}`, time: now - 1000 + i }));
    await sink.flush();
    assert.deepEqual((await sink.all('SELECT ray_id FROM security_events ORDER BY seq')).map((r) => r.ray_id), ['r2', 'r3', 'r4']);
    assert.equal((await sink.all('SELECT SUM(count) AS n FROM security_events_hourly'))[0]!.n, 3);
    // A reopened file counts its rows again.
    await sink.close();
    store.close();
    const again = new Store(store.file);
    now += 60_000;
    const sink2 = new SecurityEvents(again, { catalog: CATALOG, maxRows: 3, now: () => now });
    sink2.record(evaluated(ZONE_ID, { path: '/admin', ray: 'r5', time: now }));
    await sink2.flush();
    assert.deepEqual((await sink2.all('SELECT ray_id FROM security_events ORDER BY seq')).map((r) => r.ray_id), ['r3', 'r4', 'r5']);
    await sink2.close();
    again.close();
  });
});

describe("traces' own row budget", () => {
  test('is a tenth of the row limit, at least 1 and at most 10,000', () => {
    assert.deepEqual([3, 20, 50_000, 100_000, 5_000_000].map(traceBudget), [1, 2, 5_000, 10_000, 10_000]);
  });

  test('any number of trace events (a read-only token tracing in a loop) leaves every proxy event in place', async () => {
    const store = newStore();
    let now = Date.UTC(2026, 10, 26, 12);
    // A row limit of 20: the proxy keeps 20 events, traces 2 of their own.
    const sink = new SecurityEvents(store, { catalog: CATALOG, maxRows: 20, now: () => now });
    for (let i = 0; i < 20; i++) sink.record(evaluated(ZONE_ID, { path: '/admin', ray: `p${i}`, time: now - 1000 + i }));
    await sink.flush();
    // 300 traces in three batches, a prune after each (they run at most every 10 s).
    for (let round = 0; round < 3; round++) {
      now += 10_000;
      for (let i = 0; i < 100; i++) sink.recordTrace(evaluated(ZONE_ID, { path: '/admin', ray: `t${round * 100 + i}`, time: now - 1000 + i }));
      await sink.flush();
    }
    const rays = async (origin: string) => (await sink.all('SELECT ray_id FROM security_events WHERE origin = ? ORDER BY seq', [origin])).map((r) => r.ray_id);
    const hourly = async () => (await sink.all('SELECT origin, SUM(count) AS n FROM security_events_hourly GROUP BY origin ORDER BY origin')).map((r) => [r.origin, r.n]);
    assert.deepEqual(await rays('proxy'), Array.from({ length: 20 }, (_, i) => `p${i}`));
    assert.deepEqual(await rays('trace'), ['t298', 't299']);
    assert.deepEqual(await hourly(), [['proxy', 20], ['trace', 2]]);
    // The proxy's own events still take turns against the row limit, and traces keep their budget.
    now += 10_000;
    for (let i = 20; i < 25; i++) sink.record(evaluated(ZONE_ID, { path: '/admin', ray: `p${i}`, time: now - 1000 + i }));
    await sink.flush();
    assert.deepEqual(await rays('proxy'), Array.from({ length: 20 }, (_, i) => `p${i + 5}`));
    assert.deepEqual(await rays('trace'), ['t298', 't299']);
    assert.deepEqual(await hourly(), [['proxy', 20], ['trace', 2]]);
    // A reopened file counts its traces again.
    await sink.close();
    store.close();
    const again = new Store(store.file);
    now += 10_000;
    const sink2 = new SecurityEvents(again, { catalog: CATALOG, maxRows: 20, now: () => now });
    sink2.recordTrace(evaluated(ZONE_ID, { path: '/admin', ray: 't300', time: now }));
    await sink2.flush();
    const all = await sink2.all('SELECT origin, COUNT(*) AS n, MIN(ray_id) AS first FROM security_events GROUP BY origin ORDER BY origin');
    assert.deepEqual(all.map((r) => [r.origin, r.n, r.first]), [['proxy', 20, 'p10'], ['trace', 2, 't299']]);
    await sink2.close();
    again.close();
  });
});

describe('a store from before the events file', () => {
  test('has its events moved into the events file when it opens, once, seq and hourly counts included', async () => {
    const file = join(dir, 'before-events-file.db');
    // The old layout: the events' tables in the store's own file (events of a minute ago: retention keeps them).
    const t = Date.now() - 60_000;
    const raw = new Database(file);
    raw.exec(EVENTS_SCHEMA);
    raw.exec(`INSERT INTO security_events (seq, ${EVENT_COLUMNS.join(', ')}) VALUES
      (7, 'ray-a', ${t}, '${ZONE_ID}', 'block', 'terminated', 'block', 'firewallCustom', 'http_request_firewall_custom', 'rs', 'r1', 'block-admin', 'no admin',
       '203.0.113.7', 'NL', 64500, 'GET', 'h', '/admin', '', 'curl/8', 'HTTP/1.1', 403, 0, '{}', '[]', 0, 'proxy'),
      (9, 'ray-b', ${t + 1}, '${ZONE_ID}', 'log', 'logged', 'log', 'firewallCustom', 'http_request_firewall_custom', 'rs', 'r2', 'log-curl', 'curl',
       '203.0.113.7', 'NL', 64500, 'GET', 'h', '/', '', 'curl/8', 'HTTP/1.1', 200, 0, '{}', '[]', 0, 'trace')`);
    raw.close();
    const store = new Store(file);
    assert.equal(store.get("SELECT COUNT(*) AS n FROM sqlite_master WHERE name LIKE 'security_events%'")!.n, 0, 'the store keeps no events');
    const sink = new SecurityEvents(store, { catalog: CATALOG });
    assert.deepEqual((await sink.all('SELECT seq, ray_id, origin FROM security_events ORDER BY seq')).map((r) => [r.seq, r.ray_id, r.origin]), [[7, 'ray-a', 'proxy'], [9, 'ray-b', 'trace']]);
    assert.deepEqual((await sink.all('SELECT action, origin, count FROM security_events_hourly ORDER BY action')).map((r) => [r.action, r.origin, r.count]), [['block', 'proxy', 1], ['log', 'trace', 1]]);
    // New events follow the moved ones.
    sink.record(evaluated(ZONE_ID, { path: '/admin', ray: 'ray-c' }));
    await sink.flush();
    assert.deepEqual((await sink.all('SELECT seq, ray_id FROM security_events WHERE seq > 9')).map((r) => [r.seq, r.ray_id]), [[10, 'ray-c']]);
    await sink.close();
    store.close();
    // Opened again: nothing to move, nothing lost.
    const again = new Store(file);
    const sink2 = new SecurityEvents(again, { catalog: CATALOG });
    assert.equal((await sink2.all('SELECT COUNT(*) AS n FROM security_events'))[0]!.n, 3);
    await sink2.close();
    again.close();
  });

  test('a move a kill cut short between its copy and its drop is finished at the next open: nothing copied twice, no stale lock', async () => {
    const file = join(dir, 'move-cut-short.db');
    const t = Date.now() - 60_000;
    const row = (seq: number, ray: string) => `(${seq}, '${ray}', ${t}, '${ZONE_ID}', 'block', 'terminated', 'block', 'firewallCustom', 'http_request_firewall_custom', 'rs', 'r1', 'block-admin', 'no admin',
       '203.0.113.7', 'NL', 64500, 'GET', 'h', '/admin', '', 'curl/8', 'HTTP/1.1', 403, 0, '{}', '[]', 0, 'proxy')`;
    const raw = new Database(file);
    raw.exec(EVENTS_SCHEMA);
    raw.exec(`INSERT INTO security_events (seq, ${EVENT_COLUMNS.join(', ')}) VALUES ${row(7, 'ray-a')}, ${row(9, 'ray-b')}`);
    raw.close();
    // The copy had committed into the events file; the store's tables were not dropped yet,
    // and the WebAssembly build's lock folder stayed behind on the events file.
    const eventsFile = `${file}-events`;
    const copied = new Database(eventsFile);
    copied.exec(EVENTS_SCHEMA);
    copied.exec(`INSERT INTO security_events (seq, ${EVENT_COLUMNS.join(', ')}) VALUES ${row(7, 'ray-a')}, ${row(9, 'ray-b')}`);
    copied.close();
    mkdirSync(`${eventsFile}.lock`, { recursive: true });
    const store = new Store(file);
    assert.equal(store.get("SELECT COUNT(*) AS n FROM sqlite_master WHERE name LIKE 'security_events%'")!.n, 0);
    const sink = new SecurityEvents(store, { catalog: CATALOG });
    assert.equal(sink.file, eventsFile);
    assert.deepEqual((await sink.all('SELECT seq, ray_id FROM security_events ORDER BY seq')).map((r) => [r.seq, r.ray_id]), [[7, 'ray-a'], [9, 'ray-b']]);
    assert.deepEqual((await sink.all('SELECT SUM(count) AS n FROM security_events_hourly'))[0]!.n, 2);
    await sink.close();
    store.close();
  });

  test('an hourly table from before `origin` is rebuilt from the events when the events file opens', async () => {
    const store = newStore();
    const sink = new SecurityEvents(store, { catalog: CATALOG });
    sink.record(evaluated(ZONE_ID, { path: '/admin' }));
    sink.recordTrace(evaluated(ZONE_ID, { path: '/admin' }));
    sink.recordTrace(evaluated(ZONE_ID, { path: '/health' }));
    await sink.close();
    // The table as it was before origin joined its key (with a count that is wrong on purpose).
    const raw = new Database(sink.file);
    raw.exec('PRAGMA locking_mode = EXCLUSIVE'); // the file's WAL has no shared memory (eventsDb.ts)
    raw.exec(`DROP TABLE security_events_hourly;
      CREATE TABLE security_events_hourly (zone_id TEXT NOT NULL, hour INTEGER NOT NULL, action TEXT NOT NULL, source TEXT NOT NULL,
        ruleset_id TEXT NOT NULL, rule_id TEXT NOT NULL, description TEXT NOT NULL, count INTEGER NOT NULL,
        PRIMARY KEY (zone_id, hour, action, source, ruleset_id, rule_id, description)) WITHOUT ROWID;
      INSERT INTO security_events_hourly VALUES ('${ZONE_ID}', 0, 'block', 'firewallCustom', '', '', '', 99);`);
    raw.close();
    const reopened = new SecurityEvents(store, { catalog: CATALOG });
    assert.deepEqual(
      (await reopened.all('SELECT action, origin, count FROM security_events_hourly ORDER BY origin, action')).map((r) => [r.action, r.origin, r.count]),
      [['block', 'proxy', 1], ['block', 'trace', 1], ['skip', 'trace', 1]],
    );
    await reopened.close();
    // Opened again: nothing to rebuild, the counts stay.
    const third = new SecurityEvents(store, { catalog: CATALOG });
    assert.equal((await third.all('SELECT SUM(count) AS n FROM security_events_hourly'))[0]!.n, 3);
    await third.close();
    store.close();
  });
});

describe('the flags', () => {
  test('--events on|off', () => {
    assert.deepEqual([eventsOn(undefined), eventsOn('on'), eventsOn('off')], [{ on: true }, { on: true }, { on: false }]);
    assert.deepEqual(eventsOn('no'), { error: '--events takes on or off, got "no"' });
    assert.equal(serveOptions(serveArgs(['--events', 'off'])).eventsOff, true);
    assert.equal(serveOptions(serveArgs([])).eventsOff, undefined);
    assert.throws(() => serveOptions(serveArgs(['--events', 'false'])), { message: '--events takes on or off, got "false"' });
  });

  test('--events-retention and --events-max-rows', () => {
    assert.deepEqual(parseRetention('7d'), { ms: 7 * 86_400_000 });
    assert.deepEqual(parseRetention('90m'), { ms: 90 * 60_000 });
    assert.deepEqual(parseRetention('7 days'), { error: '--events-retention takes a positive duration with a unit: s, m, h or d (e.g. 7d, 12h), got "7 days"' });
    assert.deepEqual(parseRetention('0d'), { error: '--events-retention takes a positive duration with a unit: s, m, h or d (e.g. 7d, 12h), got "0d"' });
    assert.deepEqual(parseMaxRows('1000000'), { rows: 1_000_000 });
    assert.deepEqual(parseMaxRows('1e6'), { error: '--events-max-rows takes a whole number of events of at least 1, got "1e6"' });
  });
});
