// `rulesmith serve` as a process: seeding, the ready line, usage errors, clean shutdown,
// and a database from a newer rulesmith refused with a clear message.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, linkSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { Database } from 'node-sqlite3-wasm';
import { Store } from '../../server/src/service/store';
import { SCHEMA } from '../../server/src/service/schema';
import { spawnService } from './harness';

const dir = mkdtempSync(join(tmpdir(), 'rulesmith-serve-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function exited(child: import('node:child_process').ChildProcess): Promise<number | null> {
  return new Promise((resolve) => child.on('exit', (code) => resolve(code)));
}

describe('rulesmith serve', () => {
  it('seeds a fresh database once, prints the credentials, serves, and stops cleanly on SIGTERM', async () => {
    const db = join(dir, 'demo.db');
    const first = await spawnService(['--db', db, '--seed', 'demo']);
    assert.match(first.output(), /seeded the demo into .*demo\.db; credentials \(shown once, keep them\):\n {2}global API key {20}/);
    const admin = /demo admin +every zone, read and write +(\S+)/.exec(first.output())![1]!;
    const res = await fetch(`${first.url}/zones`, { headers: { authorization: `Bearer ${admin}` } });
    assert.equal(((await res.json()) as { result: unknown[] }).result.length, 6);
    const code = exited(first.child);
    first.child.kill('SIGTERM');
    assert.equal(await code, 0);
    assert.match(first.output(), /GET \/client\/v4\/zones 200 [\d.]+ms\nrulesmith serve: stopped \(SIGTERM\)\n$/);

    const second = await spawnService(['--db', db, '--seed', 'demo']);
    assert.match(second.output(), /was seeded before; keeping its data/);
    const again = await fetch(`${second.url}/zones`, { headers: { authorization: `Bearer ${admin}` } });
    assert.equal(again.status, 200);
    const code2 = exited(second.child);
    second.child.kill('SIGINT');
    assert.equal(await code2, 0);
  });

  it('gives full access to the token in RULESMITH_SERVICE_TOKEN', async () => {
    const token = 'extension-token-0123456789abcdefghijklmnopq';
    const s = await spawnService(['--db', join(dir, 'ext.db'), '--seed', 'demo'], { RULESMITH_SERVICE_TOKEN: token });
    const res = await fetch(`${s.url}/user/tokens/verify`, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(res.status, 200);
    assert.ok(!s.output().includes(token), 'the token is never printed');
    const code = exited(s.child);
    s.child.kill('SIGTERM');
    assert.equal(await code, 0);
  });

  it('rejects bad options with exit status 2 and says what is allowed', () => {
    const r = spawnSync(process.execPath, ['server/out/cli.js', 'serve', '--legacy', 'off'], { encoding: 'utf8' });
    assert.equal(r.status, 2);
    assert.match(r.stderr, /^rulesmith: --legacy takes "on" or "sunset", got "off"/);
    const p = spawnSync(process.execPath, ['server/out/cli.js', 'serve', '--port', '70000'], { encoding: 'utf8' });
    assert.equal(p.status, 2);
    assert.match(p.stderr, /--port must be 0–65535 \(0 picks a free port\), got "70000"/);
  });

  it('refuses a database written by a newer rulesmith', () => {
    const file = join(dir, 'newer.db');
    const raw = new Database(file);
    raw.exec(`PRAGMA user_version = ${SCHEMA.length + 1}`);
    raw.close();
    assert.throws(() => new Store(file), {
      message: `the database ${file} has schema version ${SCHEMA.length + 1}, newer than this rulesmith (${SCHEMA.length}); use a newer rulesmith or another --db file`,
    });
  });

  it('a file that is not a database is refused and left as it was, with no claim left behind', () => {
    const file = join(dir, 'notes.txt');
    writeFileSync(file, 'my notes\n'.repeat(200));
    assert.throws(() => new Store(file), /file is not a database/);
    assert.equal(readFileSync(file, 'utf8'), 'my notes\n'.repeat(200));
    assert.equal(existsSync(`${file}.owner`), false);
  });

  it('never stores a text value cut at a NUL: the write is refused and nothing changes', () => {
    const store = new Store(join(dir, 'nul.db'));
    try {
      assert.throws(() => store.setMeta('k', 'before\u0000after'), { message: 'a text value with a NUL character cannot be stored' });
      assert.equal(store.meta('k'), undefined);
    } finally {
      store.close();
    }
  });

  it('creates the schema at the current version', () => {
    const store = new Store(join(dir, 'fresh.db'));
    assert.equal(store.schemaVersion, SCHEMA.length);
    store.close();
  });

  it("finds a zone's filters and a scope's rulesets by index, not by reading every zone's rows", () => {
    const store = new Store(join(dir, 'indexes.db'));
    try {
      const plan = (sql: string) => store.all<{ detail: string }>(`EXPLAIN QUERY PLAN ${sql}`, ['z']).map((r) => r.detail);
      // (The wording of a plan varies a little between SQLite builds: the index it names does not.)
      assert.match(plan('SELECT * FROM filters WHERE zone_id = ? ORDER BY rowid').join(' | '), /^SEARCH filters USING (?:COVERING )?INDEX filters_zone \(zone_id=\?\)$/);
      assert.match(plan("SELECT id FROM rulesets WHERE scope = 'zone' AND scope_id = ?").join(' | '), /^SEARCH rulesets USING (?:COVERING )?INDEX rulesets_scope \(scope=\? AND scope_id=\?\)$/);
    } finally {
      store.close();
    }
  });

  it('a statement whose step failed (a duplicate key) is not reused broken; a failed write leaves nothing', () => {
    const store = new Store(join(dir, 'statements.db'));
    try {
      const insert = 'INSERT INTO meta (key, value) VALUES (?, ?)';
      store.run(insert, ['a', '1']);
      assert.throws(() => store.write(() => {
        store.run(insert, ['b', '2']);
        store.run(insert, ['a', 'again']);
      }), /UNIQUE constraint failed: meta\.key/);
      assert.equal(store.meta('b'), undefined, 'the transaction rolled back');
      store.run(insert, ['c', '3']);
      assert.deepEqual(store.all('SELECT key, value FROM meta WHERE key IN (?, ?, ?) ORDER BY key', ['a', 'b', 'c']), [
        { key: 'a', value: '1' },
        { key: 'c', value: '3' },
      ]);
      assert.equal(store.get('SELECT value FROM meta WHERE key = ?', ['zz']), undefined);
    } finally {
      store.close();
    }
  });
});

describe('one service per database', () => {
  it('refuses the same file under another name: a symlink, a symlinked folder, a hard link (also with another TMPDIR)', async () => {
    const file = join(dir, 'identity.db');
    const s = await spawnService(['--db', file]);
    try {
      mkdirSync(join(dir, 'elsewhere'));
      symlinkSync(file, join(dir, 'elsewhere', 'link.db'));
      symlinkSync(dir, join(dir, 'folder-link'));
      linkSync(file, join(dir, 'elsewhere', 'hard.db'));
      mkdirSync(join(dir, 'other-tmp'));
      // The hard link also from a process with another TMPDIR: the claims are not kept there.
      const others = [join(dir, 'elsewhere', 'link.db'), join(dir, 'folder-link', 'identity.db'), join(dir, 'elsewhere', 'hard.db'), join(dir, 'elsewhere', 'hard.db')];
      for (const [i, other] of others.entries()) {
        const env = i === 3 ? { ...process.env, TMPDIR: join(dir, 'other-tmp') } : process.env;
        const r = spawnSync(process.execPath, ['server/out/cli.js', 'serve', '--port', '0', '--db', other], { encoding: 'utf8', timeout: 10_000, env });
        assert.equal(r.status, 1, `${other}: ${r.stdout}${r.stderr}`);
        assert.match(r.stderr, new RegExp(`the database is in use by process ${s.child.pid} \\(another rulesmith serve\\?\\)`), other);
      }
    } finally {
      const done = exited(s.child);
      s.child.kill('SIGTERM');
      await done;
    }
    // Stopped, its claims are gone: the hard link opens now.
    const again = await spawnService(['--db', join(dir, 'elsewhere', 'hard.db')]);
    const done = exited(again.child);
    again.child.kill('SIGTERM');
    assert.equal(await done, 0);
  });

  it('a claim left by a dead process: of four services started at once, one opens the database', async () => {
    const file = join(dir, 'stale.db');
    new Store(file).close();
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
    writeFileSync(`${file}.owner`, dead.stdout);
    const started = await Promise.allSettled([1, 2, 3, 4].map(() => spawnService(['--db', file])));
    const opened = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
    try {
      assert.equal(opened.length, 1, started.map((s) => (s.status === 'rejected' ? (s.reason as Error).message : 'opened')).join('\n'));
      for (const s of started) if (s.status === 'rejected') assert.match((s.reason as Error).message, new RegExp(`exited with 1:\\n.*the database is in use by process ${opened[0]!.child.pid}`, 's'));
    } finally {
      for (const s of opened) {
        const done = exited(s.child);
        s.child.kill('SIGTERM');
        await done;
      }
    }
  });

  it('refuses a database another live service holds, with the pid and how to fix it', async () => {
    const file = join(dir, 'held.db');
    const s = await spawnService(['--db', file]);
    try {
      const r = spawnSync(process.execPath, ['server/out/cli.js', 'serve', '--port', '0', '--db', file], { encoding: 'utf8', timeout: 10_000 });
      assert.equal(r.status, 1);
      assert.match(r.stderr, new RegExp(`cannot open the database .*held\\.db: the database is in use by process ${s.child.pid} \\(another rulesmith serve\\?\\); stop it, or use another --db file`));
    } finally {
      const done = exited(s.child);
      s.child.kill('SIGTERM');
      await done;
    }
  });
});
