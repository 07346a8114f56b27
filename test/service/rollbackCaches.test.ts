// A write rolled back alone (a refused write, a dry run) undoes only what it changed, in
// the store and in the caches over it (store.ts cacheWritten, storeCache.ts): the entries
// it set go, every other client's stay warm. Only when more than one write is rolled
// back (a batch lost) is every cache emptied.
import assert from 'node:assert/strict';
import { after, before, describe, it, test } from 'node:test';
import { SizedLru } from '../../server/src/language/sizedLru';
import { rulesetStoreReads } from '../../server/src/service/rulesetStore';
import { DEMO_ACCOUNT } from '../../server/src/service/seed';
import { StoreUnavailable } from '../../server/src/service/store';
import { storeCache } from '../../server/src/service/storeCache';
import { startService, type TestService } from './harness';
import { turn, withHeldSync, withStore } from './storeHarness';

const mapOf = storeCache(() => new Map<string, string>());
const lruOf = storeCache(() => new SizedLru<string>(1000));

describe('a write rolled back alone', () => {
  test(
    'drops the cache entries it set and no other; only the tables it wrote change version',
    withStore((store) => {
      const map = mapOf(store);
      const lru = lruOf(store);
      map.set('outside', 'read outside any write');
      store.write(() => {
        store.setMeta('k', 'v1');
        map.set('committed', 'set by a write that committed');
        map.set('overwritten', 'v1');
        lru.set('committed', 'x', 100);
      });
      const tokens = store.tableVersion('tokens');
      const meta = store.tableVersion('meta');
      const generation = store.generation;
      assert.throws(
        () =>
          store.write(() => {
            store.setMeta('k', 'v2');
            map.set('written', 'set by the refused write');
            map.set('overwritten', 'v2');
            lru.set('written', 'y', 200);
            throw new Error('refused');
          }),
        /refused/,
      );
      assert.equal(store.meta('k'), 'v1');
      assert.deepEqual(
        [...map.entries()],
        [
          ['outside', 'read outside any write'],
          ['committed', 'set by a write that committed'],
        ],
        'what the refused write set (or set again) is gone; nothing else is',
      );
      assert.deepEqual([lru.get('committed'), lru.get('written'), lru.size, lru.bytes], ['x', undefined, 1, 100]);
      assert.equal(store.tableVersion('tokens'), tokens, 'a table the write did not touch keeps its version');
      assert.equal(store.tableVersion('meta'), meta + 2, 'the table it wrote moved with the write and with its rollback');
      assert.equal(store.generation, generation + 2, 'its statement and its rollback');
    }),
  );

  test(
    'that wrote nothing changes nothing: no table version, no generation, no cache entry',
    withStore((store) => {
      const map = mapOf(store);
      map.set('a', '1');
      const versions = ['meta', 'tokens', 'rulesets'].map((t) => store.tableVersion(t));
      const generation = store.generation;
      assert.throws(() => store.write(() => { throw new Error('refused before any statement'); }), /refused/);
      assert.deepEqual(['meta', 'tokens', 'rulesets'].map((t) => store.tableVersion(t)), versions);
      assert.equal(store.generation, generation);
      assert.deepEqual([...map.entries()], [['a', '1']]);
    }),
  );

  test(
    "in a batch (group commit): the batch's earlier writes and the reads between them keep their entries",
    withStore(async (store) => {
      store.groupCommit();
      const map = mapOf(store);
      store.write(() => {
        store.setMeta('b', '1');
        map.set('first', 'first write of the batch');
      });
      map.set('between', 'read between two writes of the batch');
      assert.throws(
        () =>
          store.write(() => {
            store.setMeta('b', '2');
            map.set('second', 'the refused write');
            throw new Error('refused');
          }),
        /refused/,
      );
      assert.deepEqual([...map.keys()], ['first', 'between']);
      await store.durable();
      assert.equal(store.commits, 1);
      assert.equal(store.meta('b'), '1');
    }),
  );
});

test(
  'a batch lost (rolled back after a failed sync) empties every cache: its reads may have seen any of its writes',
  { timeout: 10_000 },
  withStore(async (store) => {
    store.groupCommit();
    const map = mapOf(store);
    map.set('before', 'read before');
    store.setMeta('k', 'v1');
    await store.durable();
    await withHeldSync(async (sync) => {
      store.setMeta('k', 'v2');
      const first = store.durable()!;
      await turn();
      assert.ok(sync.started, 'committed; its sync runs');
      store.write(() => {
        store.setMeta('open', 'in the batch still open');
        map.set('written', 'by a write of the open batch');
      });
      map.set('read', 'read from the open batch');
      const open = store.durable()!;
      sync.failEio();
      for (const w of [first, open]) await assert.rejects(w, StoreUnavailable);
      assert.equal(store.meta('open'), undefined, 'the open batch was rolled back');
      assert.equal(map.size, 0, 'every entry went, read or written');
    });
  }),
);

describe('in the service: a refused write and a dry run to ruleset B', () => {
  let svc: TestService;
  const path = `/accounts/${DEMO_ACCOUNT.id}/rulesets`;
  const rule = (ref: string) => ({ action: 'block', expression: `http.host eq "${ref}.example.com"`, ref });
  before(async () => {
    svc = await startService();
  });
  after(() => svc.close());

  it("leave ruleset A cached (and B's entry when the write did not replace it), tokens' cache valid", async () => {
    const made = async (name: string) => {
      const r = await svc.call('POST', path, { body: { name, kind: 'custom', phase: 'http_request_firewall_custom', rules: [rule(`${name}-1`), rule(`${name}-2`)] } });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      return r.body.result;
    };
    const a = await made('a');
    const b = await made('b');
    // Both are cached now: reading them reads nothing from the store.
    const reads = rulesetStoreReads(svc.store);
    assert.deepEqual((await svc.call('GET', `${path}/${a.id}`)).body.result, a);
    assert.deepEqual((await svc.call('GET', `${path}/${b.id}`)).body.result, b);
    assert.equal(rulesetStoreReads(svc.store), reads);
    const tokens = svc.store.tableVersion('tokens');
    const zones = svc.store.tableVersion('zones');

    // Refused inside its write transaction (the store's check of refs, mergeRules): rolled back.
    const refused = await svc.call('PUT', `${path}/${b.id}`, { body: { rules: [rule('same'), rule('same')] } });
    assert.equal(refused.status, 400, JSON.stringify(refused.body));
    assert.equal(refused.body.errors[0].message, "'same' is not a valid value for ref because rule 1 already has it: a ref is unique within a ruleset");
    assert.deepEqual((await svc.call('GET', `${path}/${a.id}`)).body.result, a);
    assert.deepEqual((await svc.call('GET', `${path}/${b.id}`)).body.result, b);
    assert.equal(rulesetStoreReads(svc.store), reads, 'A and B were still cached: the refused write set no entry');

    // A dry run writes B's next version, then rolls it back: B's entry (that version) goes, A's stays.
    const versionsTable = svc.store.tableVersion('ruleset_versions');
    const dry = await svc.call('PATCH', `${path}/${b.id}/rules/${b.rules[0].id}?dry_run=true`, { body: rule('edited') });
    assert.equal(dry.status, 200, JSON.stringify(dry.body));
    assert.equal(dry.body.result, null);
    assert.deepEqual((await svc.call('GET', `${path}/${a.id}`)).body.result, a);
    assert.equal(rulesetStoreReads(svc.store), reads, 'A was still cached');
    assert.deepEqual((await svc.call('GET', `${path}/${b.id}`)).body.result, b, 'B as the store holds it, not the dry run');
    assert.equal(rulesetStoreReads(svc.store), reads + 1, 'B was read from the store once');
    assert.equal(svc.store.tableVersion('tokens'), tokens, "the tokens' cache stays valid");
    assert.equal(svc.store.tableVersion('zones'), zones, "the zones' cache stays valid");
    assert.ok(svc.store.tableVersion('ruleset_versions') > versionsTable, 'the table the dry run wrote did move');

    // And writes go on from what is stored.
    const patched = await svc.call('PATCH', `${path}/${b.id}/rules/${b.rules[0].id}`, { body: rule('edited') });
    assert.equal(patched.status, 200, JSON.stringify(patched.body));
    assert.equal(patched.body.result.version, '2');
    assert.deepEqual(
      patched.body.result.rules.map((r: { ref: string; version: string }) => [r.ref, r.version]),
      [
        ['edited', '2'],
        ['b-2', '1'],
      ],
    );
  });
});
