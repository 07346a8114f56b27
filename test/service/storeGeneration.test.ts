// Store.generation: what lets the WAF proxy skip the deployment key's SQL between writes
// (proxy/zones.ts LiveZones). Every write statement and every rollback moves it; reads do not.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { Store } from '../../server/src/service/store';

test('the store generation moves with every write and rollback, not with reads', () => {
  const dir = mkdtempSync(join(tmpdir(), 'rulesmith-generation-'));
  const store = new Store(join(dir, 'g.db'));
  try {
    const g0 = store.generation;
    store.get('SELECT COUNT(*) AS n FROM zones');
    store.all('SELECT * FROM meta');
    assert.equal(store.generation, g0, 'reads leave it');
    store.setMeta('k', 'v1');
    const g1 = store.generation;
    assert.ok(g1 > g0, 'a write moves it');
    assert.throws(() =>
      store.write(() => {
        store.setMeta('k', 'v2');
        throw new Error('undo');
      }),
    );
    assert.equal(store.meta('k'), 'v1');
    assert.ok(store.generation > g1 + 1, 'the write and its rollback both moved it');
  } finally {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
