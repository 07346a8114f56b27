// The store runs on the native SQLite binding when this Node loads it and on the
// WebAssembly build otherwise (sqlite.ts). Both read and write the same file: a database
// moves between the CLI under the system's Node and the editor's own service.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { latestRuleset, saveRuleset } from '../../server/src/service/rulesetStore';
import { sqliteBinding } from '../../server/src/service/sqlite';
import { DEMO_ACCOUNT, seedDemo } from '../../server/src/service/seed';
import { demoSeedSteps } from '../../server/src/service/routes/index';
import { Store } from '../../server/src/service/store';

const dir = mkdtempSync(join(tmpdir(), 'rulesmith-sqlite-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** Opens `file` with the binding `binding` (RULESMITH_SQLITE is read when a store opens). */
function openWith(file: string, binding: string): Store {
  const before = process.env.RULESMITH_SQLITE;
  process.env.RULESMITH_SQLITE = binding;
  try {
    return new Store(file);
  } finally {
    if (before === undefined) delete process.env.RULESMITH_SQLITE;
    else process.env.RULESMITH_SQLITE = before;
  }
}

describe('the SQLite binding', () => {
  it('is native in this Node (npm install builds better-sqlite3), so the service tests run on it', () => {
    assert.equal(sqliteBinding(''), 'native', 'better-sqlite3 did not load: run `npm rebuild better-sqlite3` with this Node (g++, make and python3 needed)');
    assert.equal(sqliteBinding('wasm'), 'wasm');
  });

  it('a database written by either binding reads back, and takes writes, in the other', () => {
    const file = join(dir, 'shared.db');
    const rules = [{ id: 'a'.repeat(32), version: '1', action: 'block', expression: 'http.host eq "é.example"', description: 'native ☕', last_updated: '2026-11-28T00:00:00.000000Z', ref: 'n', enabled: true }];
    let store = openWith(file, 'native');
    assert.equal(store.binding, 'native');
    seedDemo(store, demoSeedSteps);
    const made = store.write(() => saveRuleset(store, 'account', DEMO_ACCOUNT.id, { name: 'shared', description: '', kind: 'custom', phase: 'http_request_firewall_custom', rules }));
    store.close();

    store = openWith(file, 'wasm');
    assert.equal(store.binding, 'wasm');
    assert.deepEqual(JSON.parse(JSON.stringify(latestRuleset(store, 'account', DEMO_ACCOUNT.id, made.id))), JSON.parse(JSON.stringify(made)));
    const more = [...rules, { ...rules[0]!, id: 'b'.repeat(32), description: 'wasm', ref: 'w' }];
    const second = store.write(() => saveRuleset(store, 'account', DEMO_ACCOUNT.id, { id: made.id, name: 'shared', description: '', kind: 'custom', phase: 'http_request_firewall_custom', rules: more }));
    store.close();

    store = openWith(file, 'native');
    assert.deepEqual(JSON.parse(JSON.stringify(latestRuleset(store, 'account', DEMO_ACCOUNT.id, made.id))), JSON.parse(JSON.stringify(second)));
    assert.equal(second.version, '2');
    store.close();
  });

  it('binds a whole number as an integer on both bindings (a TEXT column gets 7, not 7.0)', () => {
    for (const binding of ['native', 'wasm']) {
      const store = openWith(join(dir, `numbers-${binding}.db`), binding);
      try {
        assert.deepEqual(store.get("SELECT ? || '' AS t, typeof(?) AS k, ? || '' AS r", [7, 7, 2.5]), { t: '7', k: 'integer', r: '2.5' }, binding);
      } finally {
        store.close();
      }
    }
  });

  it('refuses an unknown RULESMITH_SQLITE with what to set instead', () => {
    assert.throws(() => openWith(join(dir, 'bad.db'), 'sqlite4'), /RULESMITH_SQLITE is 'sqlite4': set it to native or wasm, or leave it unset/);
  });
});
