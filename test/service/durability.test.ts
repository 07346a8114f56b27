// The store's promises, tested on the built CLI (`rulesmith serve` as a child process):
//   - every write acknowledged to a client is durable: a burst of concurrent writes from
//     32 clients (filters, firewall rules, and a third of them rules added to or edited in
//     one ruleset, so writes are group-committed), SIGKILL in the middle, restart on the same database, and every write that
//     got a 200 is there with exactly the content it was answered with;
//   - no partial state: a bulk filter create is all-or-nothing, a single-call firewall
//     rule create leaves its rule and its filter together or neither, no rule lacks its
//     filter; the schema version and SQLite's integrity check are intact;
//   - concurrent writes are serialized: N parallel rule creates on one zone give N
//     distinct, consistent rows with `seq` values without gaps.
// Needs the build (`npm run build`; `npm test` builds first).
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { SCHEMA } from '../../server/src/service/schema';
import { Store } from '../../server/src/service/store';
import { demoZoneId } from '../../server/src/service/seed';
import { spawnService as spawnWith, type SpawnedService } from './harness';

const CLI = 'server/out/cli.js';
const SOURCES = ['server/src/service/store.ts', 'server/src/service/service.ts', 'server/src/service/legacyStore.ts', 'server/src/service/routes/filters.ts', 'server/src/service/routes/firewallRules.ts'];

before(() => {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npm run build\` first (\`npm test\` does)`);
  const built = statSync(CLI).mtimeMs;
  const newer = SOURCES.filter((s) => statSync(s).mtimeMs > built);
  if (newer.length > 0) throw new Error(`${CLI} is older than ${newer.join(', ')}: run \`npm run build\` first (\`npm test\` does)`);
});

const dir = mkdtempSync(join(tmpdir(), 'rulesmith-durability-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const ENT = demoZoneId('enterprise.example.com');
const BIZ = demoZoneId('business.example.com');

function exited(child: ChildProcess): Promise<unknown> {
  return new Promise((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve(null) : child.on('exit', resolve)));
}

interface Op {
  readonly kind: 'filter' | 'filters' | 'rule' | 'rules' | 'ruleset rule' | 'ruleset edit';
  readonly method: 'POST' | 'PATCH';
  readonly path: string;
  readonly body: unknown;
}

/** The ruleset of the burst's ruleset operations and the rules its PATCHes edit (one each), set before the burst. */
const custom = { id: '', rules: [] as string[] };

/** Operation i of the burst: a marker in every expression ties stored rows back to it. */
function op(i: number): Op {
  if (i % 3 === 2) {
    // Ruleset writes, a third of the burst: a rule added, or a rule of its own edited.
    const k = Math.floor(i / 3);
    if (k % 2 === 0) {
      return { kind: 'ruleset rule', method: 'POST', path: `/zones/${ENT}/rulesets/${custom.id}/rules`, body: { action: 'block', expression: `http.request.uri.path eq "/rs/${i}"`, description: `op ${i}`, ref: `op-${i}` } };
    }
    return { kind: 'ruleset edit', method: 'PATCH', path: `/zones/${ENT}/rulesets/${custom.id}/rules/${custom.rules[k]}`, body: { action: 'log', expression: `http.request.uri.path eq "/edit/${i}"`, description: `op ${i}`, ref: `edit-${k}` } };
  }
  return legacyOp(i);
}

function legacyOp(i: number): Op & { body: unknown[] } {
  const base = { method: 'POST' as const };
  switch (i % 4) {
    case 0:
      return { ...base, kind: 'filter', path: `/zones/${ENT}/filters`, body: [{ expression: `http.request.uri.path eq "/f/${i}"`, description: `op ${i}` }] };
    case 1:
      return {
        ...base,
        kind: 'filters',
        path: `/zones/${ENT}/filters`,
        body: [0, 1, 2].map((k) => ({ expression: `http.request.uri.path eq "/b/${i}/${k}"`, description: `op ${i}`, ref: `b${k}` })),
      };
    case 2:
      return { ...base, kind: 'rule', path: `/zones/${ENT}/firewall/rules`, body: [{ filter: { expression: `http.request.uri.path eq "/r/${i}"` }, action: 'block', description: `op ${i}` }] };
    default:
      return {
        ...base,
        kind: 'rules',
        path: `/zones/${ENT}/firewall/rules`,
        body: [0, 1].map((k) => ({ filter: { expression: `http.request.uri.path eq "/rr/${i}/${k}"` }, action: 'challenge', priority: k, description: `op ${i}` })),
      };
  }
}

async function listAll(base: string, token: string, path: string): Promise<any[]> {
  const out: any[] = [];
  for (let page = 1; ; page++) {
    const res = await fetch(`${base}${path}?per_page=100&page=${page}`, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(res.status, 200);
    const body = (await res.json()) as { result: any[] };
    if (body.result.length === 0) return out;
    out.push(...body.result);
  }
}

// Both SQLite bindings (sqlite.ts): the native one this Node loads, and the WebAssembly
// build the editor's service falls back to.
for (const binding of ['native', 'wasm'] as const) describe(`store durability (the built CLI, SIGKILL; SQLite ${binding})`, () => {
  const db = join(dir, `burst-${binding}.db`);
  const spawnService = (args: readonly string[]) => spawnWith(args, { RULESMITH_SQLITE: binding });
  let token = '';
  let second: SpawnedService | undefined;
  after(async () => {
    if (second && second.child.exitCode === null) {
      const done = exited(second.child);
      second.child.kill('SIGTERM');
      await done;
    }
  });

  it('keeps every acknowledged write of a burst killed mid-way, and nothing partial', async (t) => {
    const first = await spawnService(['--db', db, '--seed', 'demo']);
    assert.match(first.output(), binding === 'native' ? /\(SQLite, native binding\)/ : /\(SQLite, WebAssembly build\)/);
    token = /demo admin +every zone, read and write +(\S+)/.exec(first.output())![1]!;
    const TOTAL = 240;
    const CLIENTS = 32;
    const KILL_AFTER = 100;
    // The custom rules entry point the ruleset operations write, with one rule per PATCH of the burst.
    const made = await fetch(`${first.url}/zones/${ENT}/rulesets/phases/http_request_firewall_custom/entrypoint`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ rules: Array.from({ length: TOTAL / 3 }, (_, k) => ({ action: 'block', expression: `http.request.uri.path eq "/before/${k}"`, ref: `edit-${k}` })) }),
    });
    const ep = ((await made.json()) as { result: { id: string; rules: { id: string }[] } }).result;
    custom.id = ep.id;
    custom.rules = ep.rules.map((r) => r.id);
    const acked = new Map<number, any>();
    const failed = new Set<number>();
    let next = 0;
    let killed = false;
    const dead = exited(first.child);
    const client = async () => {
      while (next < TOTAL && !killed) {
        const i = next++;
        const o = op(i);
        try {
          const res = await fetch(`${first.url}${o.path}`, {
            method: o.method,
            headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
            body: JSON.stringify(o.body),
          });
          const body = (await res.json()) as { result: any[] };
          assert.equal(res.status, 200, JSON.stringify(body));
          acked.set(i, body.result);
          if (acked.size === KILL_AFTER && !killed) {
            killed = true;
            first.child.kill('SIGKILL');
          }
        } catch (e) {
          if (!killed) throw e;
          failed.add(i);
        }
      }
    };
    await Promise.all(Array.from({ length: CLIENTS }, client));
    await dead;
    assert.equal(first.child.signalCode, 'SIGKILL');
    assert.ok(acked.size >= KILL_AFTER, `acknowledged ${acked.size}`);
    assert.ok(failed.size > 0, 'the kill came in the middle of the burst');
    t.diagnostic(`${acked.size} writes acknowledged, ${failed.size} in flight when killed (their outcome unknown), ${TOTAL - acked.size - failed.size} never sent`);

    second = await spawnService(['--db', db, '--seed', 'demo']);
    assert.match(second.output(), /was seeded before; keeping its data/);
    const filters = await listAll(second.url, token, `/zones/${ENT}/filters`);
    const rules = await listAll(second.url, token, `/zones/${ENT}/firewall/rules`);
    const filterById = new Map(filters.map((f) => [f.id, f]));
    const ruleById = new Map(rules.map((r) => [r.id, r]));

    const entry = await fetch(`${second.url}/zones/${ENT}/rulesets/phases/http_request_firewall_custom/entrypoint`, { headers: { authorization: `Bearer ${token}` } });
    const current = ((await entry.json()) as { result: { rules: any[] } }).result;
    const currentRule = new Map(current.rules.map((r) => [r.id, r]));

    // Every acknowledged write is there, exactly as it was answered.
    for (const [i, result] of acked) {
      const kind = op(i).kind;
      if (kind === 'ruleset rule' || kind === 'ruleset edit') {
        const mine = result.rules.find((r: { description: string }) => r.description === `op ${i}`);
        assert.ok(mine, `op ${i}: the answer has the rule`);
        assert.deepEqual(currentRule.get(mine.id), mine, `op ${i}`);
        continue;
      }
      for (const obj of result) {
        if (kind === 'filter' || kind === 'filters') assert.deepEqual(filterById.get(obj.id), obj, `op ${i}`);
        else assert.deepEqual(ruleById.get(obj.id), obj, `op ${i}`);
      }
    }
    // Nothing partial: per operation all of its rows or none; no rule without its filter.
    for (let i = 0; i < TOTAL; i++) {
      const o = op(i);
      if (o.kind === 'ruleset rule' || o.kind === 'ruleset edit') continue;
      // Filters of rule operations are found by the marker in their expression.
      const marker = o.kind === 'rule' ? `"/r/${i}"` : o.kind === 'rules' ? `"/rr/${i}/` : undefined;
      const mine = filters.filter((f) => (marker === undefined ? f.description === `op ${i}` : f.expression.includes(marker)));
      const myRules = rules.filter((r) => r.description === `op ${i}`);
      const want = o.kind === 'filters' ? 3 : o.kind === 'rules' ? 2 : 1;
      if (o.kind === 'filter' || o.kind === 'filters') {
        assert.ok(mine.length === 0 || mine.length === want, `op ${i}: ${mine.length} of ${want} filters`);
        if (acked.has(i)) assert.equal(mine.length, want);
      } else {
        assert.ok(myRules.length === 0 || myRules.length === want, `op ${i}: ${myRules.length} of ${want} rules`);
        assert.equal(mine.length, myRules.length, `op ${i}: filters and rules together`);
        for (const r of myRules) assert.deepEqual(filterById.get(r.filter.id), r.filter, `op ${i}: the rule's filter exists`);
        if (acked.has(i)) assert.equal(myRules.length, want);
      }
    }
    assert.ok(rules.every((r) => r.filter.deleted !== true));
  });

  it('serializes concurrent writes: N parallel rule creates give N distinct rows and gap-free seq values', async () => {
    assert.ok(second, 'the restarted service');
    const N = 48;
    const results = await Promise.all(
      Array.from({ length: N }, async (_, i) => {
        const res = await fetch(`${second!.url}/zones/${BIZ}/firewall/rules`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify([{ filter: { expression: `http.request.uri.path eq "/par/${i}"` }, action: 'block', description: `par ${i}` }]),
        });
        const body = (await res.json()) as { result: any[] };
        assert.equal(res.status, 200, JSON.stringify(body));
        return body.result[0];
      }),
    );
    assert.equal(new Set(results.map((r) => r.id)).size, N);
    assert.equal(new Set(results.map((r) => r.filter.id)).size, N);
    const done = exited(second!.child);
    second!.child.kill('SIGTERM');
    await done;

    const store = new Store(db);
    try {
      assert.equal(store.schemaVersion, SCHEMA.length);
      assert.deepEqual(store.get('PRAGMA integrity_check'), { integrity_check: 'ok' });
      const rows = store.all<{ id: string; seq: number; description: string; expression: string | null }>(
        'SELECT r.id, r.seq, r.description, f.expression FROM firewall_rules r LEFT JOIN filters f ON f.id = r.filter_id WHERE r.zone_id = ? ORDER BY r.seq',
        [BIZ],
      );
      const mine = rows.filter((r) => r.description.startsWith('par '));
      assert.equal(mine.length, N);
      const first = mine[0]!.seq;
      assert.deepEqual(
        mine.map((r) => r.seq),
        Array.from({ length: N }, (_, k) => first + k),
        'seq values without gaps',
      );
      assert.equal(first, rows.length - N, 'after the rules that were there');
      for (const r of mine) {
        const i = r.description.slice(4);
        assert.equal(r.expression, `http.request.uri.path eq "/par/${i}"`, 'each rule with its own filter');
      }
      // The first test's kill left SQLite's journal consistent: the enterprise zone's rules all have filters.
      const orphans = store.all('SELECT r.id FROM firewall_rules r LEFT JOIN filters f ON f.id = r.filter_id WHERE f.id IS NULL');
      assert.deepEqual(orphans, []);
    } finally {
      store.close();
    }
  });

  it('restarts after a crash that left SQLite\'s lock behind', async () => {
    // node-sqlite3-wasm locks with a `<db>.lock` directory, which a killed process leaves
    // behind (the store holds it for its lifetime: exclusive locking mode); the store clears
    // a lock whose owner is dead (store.ts claim).
    const file = join(dir, `stale-lock-${binding}.db`);
    const s1 = await spawnService(['--db', file, '--seed', 'demo']);
    const stopped = exited(s1.child);
    s1.child.kill('SIGKILL');
    await stopped;
    if (!existsSync(`${file}.lock`)) mkdirSync(`${file}.lock`);
    const s2 = await spawnService(['--db', file]);
    const res = await fetch(`${s2.url}/user/tokens/verify`);
    assert.equal(res.status, 400, 'serving');
    const done = exited(s2.child);
    s2.child.kill('SIGTERM');
    await done;
  });
});
