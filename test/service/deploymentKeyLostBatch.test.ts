// A group-commit batch whose COMMIT fails is rolled back whole, and the version numbers it
// used are given out again. The WAF proxy and the trace may have compiled the batch's rules
// while it was open (they read between turns), under a key made of (ruleset, version): the
// next write with the same number must not get the same key, or the proxy keeps enforcing
// rules that were never committed (Store.batchesLost in zoneConfig.ts deploymentKey).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { putEntryPoint, zoneRulesets, type RuleInput } from '../../server/src/service/rulesetStore';
import { DEMO_ZONES, demoZoneId, seedDemo } from '../../server/src/service/seed';
import { deploymentKey } from '../../server/src/service/zoneConfig';
import { turn, withStore } from './storeHarness';

const PHASE = 'http_request_firewall_custom';
const block = (host: string) => [{ action: 'block', expression: `http.host eq "${host}"` } as RuleInput];

test(
  'a lost batch: the next write under the same version number gets another deployment key',
  { timeout: 10_000 },
  withStore(async (store) => {
    seedDemo(store);
    const zoneId = demoZoneId(DEMO_ZONES[0]!.name);
    putEntryPoint(store, 'zone', zoneId, PHASE, block('a'));
    store.groupCommit();
    // The disk refuses the next COMMIT once (a full disk), as SQLite reports it.
    const db = (store as unknown as { db: { exec(sql: string): void } }).db;
    const exec = db.exec.bind(db);
    let failNext = true;
    db.exec = (sql: string) => {
      if (sql === 'COMMIT' && failNext) {
        failNext = false;
        throw new Error('SQLITE_FULL: database or disk is full');
      }
      exec(sql);
    };
    const version = () => zoneRulesets(store, zoneId).find((r) => r.phase === PHASE)!.version;

    putEntryPoint(store, 'zone', zoneId, PHASE, block('b'));
    // Read while the batch is open, as the proxy does between turns.
    const openKey = deploymentKey(store, zoneId);
    const openVersion = version();
    const lost = store.durable()!;
    await assert.rejects(lost, /SQLITE_FULL/);
    assert.equal(store.batchesLost, 1);

    putEntryPoint(store, 'zone', zoneId, PHASE, block('c'));
    await turn();
    await store.durable();
    assert.equal(version(), openVersion, 'the lost version number is given out again');
    assert.notEqual(deploymentKey(store, zoneId), openKey);
  }),
);
