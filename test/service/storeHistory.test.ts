// The store at team scale, in-process: ruleset versions as rule rows (a PATCH costs the
// rule, not the ruleset; every version comes back exactly as it was answered), the
// versions list paged, a database of schema 1 migrated, writes of concurrent requests
// committed together, and the limits on what a rule may hold.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Database } from 'node-sqlite3-wasm';
import { MIGRATION_PAGE, readRules } from '../../server/src/service/rulesetHistory';
import { deleteVersion, latestRuleset, saveRuleset, storedVersion } from '../../server/src/service/rulesetStore';
import { SCHEMA } from '../../server/src/service/schema';
import { DEMO_ACCOUNT, demoZoneId } from '../../server/src/service/seed';
import { Store } from '../../server/src/service/store';
import { startService, type TestService } from './harness';
import { duringTurns, rule } from './putTurns';

const ENT = demoZoneId('enterprise.example.com');
const CUSTOM = 'http_request_firewall_custom';
const entry = (zone: string) => `/zones/${zone}/rulesets/phases/${CUSTOM}/entrypoint`;

let svc: TestService;
before(async () => {
  svc = await startService();
});
after(async () => {
  await svc.close();
});

describe('ruleset versions as rule rows', () => {
  it('a PATCH of one rule in a 500-rule ruleset adds about the rule, not a copy of the ruleset; every version reads back as answered', async () => {
    const put = await svc.call('PUT', entry(ENT), { body: { rules: Array.from({ length: 500 }, (_, i) => rule(i)) } });
    assert.equal(put.status, 200, JSON.stringify(put.body));
    const rs = put.body.result;
    const answers = [rs];
    const bytesBefore = svc.store.usedBytes();
    const PATCHES = 20;
    for (let k = 1; k <= PATCHES; k++) {
      const i = (k * 37) % 500;
      const r = await svc.call('PATCH', `/zones/${ENT}/rulesets/${rs.id}/rules/${rs.rules[i].id}`, { body: rule(i, k) });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      answers.push(r.body.result);
    }
    const perPatch = (svc.store.usedBytes() - bytesBefore) / PATCHES;
    // The whole ruleset is about 100 KB; a rule about 200 bytes (and a page is 4 KB, so allow the rows' overhead).
    assert.ok(perPatch <= 4096, `${perPatch} bytes per PATCH`);
    for (const answer of answers) {
      const got = await svc.call('GET', `/zones/${ENT}/rulesets/${rs.id}/versions/${answer.version}`);
      assert.deepEqual(got.body.result, answer, `version ${answer.version}`);
    }
  });

  it('a rule moved by position keeps every other rule as it was, and both versions read back in their order', async () => {
    const put = await svc.call('PUT', entry(ENT), { body: { rules: [0, 1, 2, 3].map((i) => rule(i)) } });
    const rs = put.body.result;
    const moved = await svc.call('PATCH', `/zones/${ENT}/rulesets/${rs.id}/rules/${rs.rules[3].id}`, { body: { position: { before: rs.rules[1].id } } });
    assert.deepEqual(
      moved.body.result.rules.map((r: { ref: string }) => r.ref),
      ['rule-0', 'rule-3', 'rule-1', 'rule-2'],
    );
    const old = await svc.call('GET', `${entry(ENT)}/versions/${rs.version}`);
    assert.deepEqual(old.body.result, rs);
    const added = await svc.call('POST', `/zones/${ENT}/rulesets/${rs.id}/rules`, { body: { ...rule(9), position: { index: 1 } } });
    assert.deepEqual(
      added.body.result.rules.map((r: { ref: string }) => r.ref),
      ['rule-9', 'rule-0', 'rule-3', 'rule-1', 'rule-2'],
    );
    assert.deepEqual((await svc.call('GET', `${entry(ENT)}/versions/${moved.body.result.version}`)).body.result, moved.body.result);
  });

  it('rules added, edited, moved and deleted one at a time, then a PUT that drops some: every version reads back as answered', async () => {
    const made = await svc.call('POST', `/accounts/${DEMO_ACCOUNT.id}/rulesets`, { body: { name: 'one at a time', kind: 'custom', phase: CUSTOM, rules: [] } });
    const id = made.body.result.id;
    const base = `/accounts/${DEMO_ACCOUNT.id}/rulesets/${id}`;
    const answers = [made.body.result];
    const step = async (method: string, path: string, body?: unknown) => {
      const r = await svc.call(method, path, body === undefined ? {} : { body });
      assert.equal(r.status, 200, `${method} ${path}: ${JSON.stringify(r.body)}`);
      answers.push(r.body.result);
      return r.body.result as { version: string; rules: { id: string; ref: string; version: string }[] };
    };
    for (const i of [1, 2, 3]) await step('POST', `${base}/rules`, rule(i));
    let rs = await step('POST', `${base}/rules`, { ...rule(4), position: { index: 2 } });
    assert.deepEqual(rs.rules.map((r) => r.ref), ['rule-1', 'rule-4', 'rule-2', 'rule-3']);
    rs = await step('PATCH', `${base}/rules/${rs.rules[2]!.id}`, rule(2, 1));
    assert.deepEqual(rs.rules.map((r) => `${r.ref}@${r.version}`), ['rule-1@1', 'rule-4@1', 'rule-2@2', 'rule-3@1']);
    rs = await step('PATCH', `${base}/rules/${rs.rules[3]!.id}`, { ...rule(3, 1), position: { index: 1 } });
    assert.deepEqual(rs.rules.map((r) => `${r.ref}@${r.version}`), ['rule-3@2', 'rule-1@1', 'rule-4@1', 'rule-2@2']);
    const gone = await svc.call('DELETE', `${base}/rules/${rs.rules[1]!.id}`);
    assert.equal(gone.status, 200);
    answers.push(gone.body.result);
    assert.deepEqual(gone.body.result.rules.map((r: { ref: string }) => r.ref), ['rule-3', 'rule-4', 'rule-2']);
    rs = await step('PUT', base, { rules: [rule(2, 1), rule(5)] });
    assert.deepEqual(rs.rules.map((r) => r.ref), ['rule-2', 'rule-5']);
    rs = await step('POST', `${base}/rules`, rule(6));
    assert.deepEqual(rs.rules.map((r) => r.ref), ['rule-2', 'rule-5', 'rule-6']);
    for (const answer of answers) {
      assert.deepEqual((await svc.call('GET', `${base}/versions/${answer.version}`)).body.result, answer, `version ${answer.version}`);
    }
  });

  it('one-rule writes beside the rules written last: the store holds each version in the order answered, and drops a rule a PUT replaced', async () => {
    const made = await svc.call('POST', `/accounts/${DEMO_ACCOUNT.id}/rulesets`, { body: { name: 'beside', kind: 'custom', phase: CUSTOM, rules: [rule(1), rule(2)] } });
    const id = made.body.result.id;
    const base = `/accounts/${DEMO_ACCOUNT.id}/rulesets/${id}`;
    const answers = [made.body.result];
    const step = async (method: string, path: string, body: unknown, refs: string[]) => {
      const r = await svc.call(method, path, { body });
      assert.equal(r.status, 200, `${method} ${path}: ${JSON.stringify(r.body)}`);
      const rs = r.body.result as { version: string; rules: { id: string; ref: string }[] };
      assert.deepEqual(rs.rules.map((x) => x.ref), refs, `${method} ${path}`);
      // The newest version as the store holds it (a GET answers it from memory until the ruleset is read again).
      assert.deepEqual(readRules(svc.store, id, Number(rs.version), true), rs.rules, `version ${rs.version} as stored`);
      answers.push(rs);
      return rs;
    };
    const idOf = (rs: { rules: { id: string; ref: string }[] }, ref: string) => rs.rules.find((x) => x.ref === ref)!.id;
    // A rule put between two, then the one before it edited (its new row must still sort before the new rule).
    let rs = await step('POST', `${base}/rules`, { ...rule(3), position: { index: 2 } }, ['rule-1', 'rule-3', 'rule-2']);
    rs = await step('PATCH', `${base}/rules/${idOf(rs, 'rule-1')}`, rule(1, 1), ['rule-1', 'rule-3', 'rule-2']);
    // At the start, then the rule after it edited; then the last rule edited.
    rs = await step('POST', `${base}/rules`, { ...rule(4), position: { index: 1 } }, ['rule-4', 'rule-1', 'rule-3', 'rule-2']);
    rs = await step('PATCH', `${base}/rules/${idOf(rs, 'rule-1')}`, rule(1, 2), ['rule-4', 'rule-1', 'rule-3', 'rule-2']);
    rs = await step('PATCH', `${base}/rules/${idOf(rs, 'rule-2')}`, rule(2, 1), ['rule-4', 'rule-1', 'rule-3', 'rule-2']);
    // A PUT that replaces one rule by another in its place, the others unchanged: the one replaced is gone.
    rs = await step('PUT', base, { rules: [rule(4), rule(1, 2), rule(5), rule(2, 1)] }, ['rule-4', 'rule-1', 'rule-5', 'rule-2']);
    // Rules put at one place until the sort keys there run out (the rules are renumbered).
    const refs = rs.rules.map((x) => x.ref);
    for (let i = 10; i < 60; i++) {
      refs.splice(1, 0, `rule-${i}`);
      rs = await step('POST', `${base}/rules`, { ...rule(i), position: { index: 2 } }, [...refs]);
    }
    for (const answer of answers) {
      assert.deepEqual((await svc.call('GET', `${base}/versions/${answer.version}`)).body.result, answer, `version ${answer.version}`);
    }
  });

  it('PUTs that change, move, drop and add dozens of rules at once: every version reads back as answered, and only the newest is live', async () => {
    const made = await svc.call('POST', `/accounts/${DEMO_ACCOUNT.id}/rulesets`, { body: { name: 'many at once', kind: 'custom', phase: CUSTOM, rules: Array.from({ length: 45 }, (_, i) => rule(i)) } });
    assert.equal(made.status, 200, JSON.stringify(made.body));
    const id = made.body.result.id;
    const base = `/accounts/${DEMO_ACCOUNT.id}/rulesets/${id}`;
    const answers = [made.body.result];
    const put = async (rules: Record<string, unknown>[]) => {
      const r = await svc.call('PUT', base, { body: { rules } });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      answers.push(r.body.result);
      assert.deepEqual(readRules(svc.store, id, Number(r.body.result.version), true), r.body.result.rules, `version ${r.body.result.version} as stored`);
      const live = svc.store.get<{ n: number }>('SELECT COUNT(*) AS n FROM ruleset_rules WHERE ruleset_id = ? AND to_version IS NULL', [id])!.n;
      assert.equal(live, rules.length, `live rows of version ${r.body.result.version}`);
    };
    // Every rule edited (45 new rows: 32 + 8 + 5 one at a time).
    await put(Array.from({ length: 45 }, (_, i) => rule(i, 1)));
    // Reversed, ten dropped and twelve added, every third edited.
    await put([...Array.from({ length: 35 }, (_, i) => rule(34 - i, (34 - i) % 3 === 0 ? 2 : 1)), ...Array.from({ length: 12 }, (_, i) => rule(100 + i))]);
    // Unchanged: no row is written, and the version still reads back.
    await put(answers.at(-1).rules.map(({ action, expression, description, ref }: Record<string, unknown>) => ({ action, expression, description, ref })));
    for (const answer of answers) {
      assert.deepEqual((await svc.call('GET', `${base}/versions/${answer.version}`)).body.result, answer, `version ${answer.version}`);
    }
  });

  /** Runs `put` with `during` run once, in the turn a PUT of a whole list lets other requests in before it writes. */
  const duringPutsTurn = <T>(during: () => Promise<void>, put: () => Promise<T>) =>
    duringTurns(svc, async (call) => {
      if (call === 1) await during();
    }, put);

  it('a PATCH that lands while a PUT of all the rules is about to be written: the PUT merges with it, each rule one version past the PUT and the PATCH', async () => {
    const made = await svc.call('POST', `/accounts/${DEMO_ACCOUNT.id}/rulesets`, { body: { name: 'together', kind: 'custom', phase: CUSTOM, rules: Array.from({ length: 300 }, (_, i) => rule(i)) } });
    const id = made.body.result.id;
    const base = `/accounts/${DEMO_ACCOUNT.id}/rulesets/${id}`;
    const ids: string[] = made.body.result.rules.map((r: { id: string }) => r.id);
    let patch: Awaited<ReturnType<typeof svc.call>> | undefined;
    const put = await duringPutsTurn(
      async () => {
        patch = await svc.call('PATCH', `${base}/rules/${ids[7]}`, { body: rule(7, 9) });
      },
      () => svc.call('PUT', base, { body: { rules: Array.from({ length: 300 }, (_, i) => ({ ...rule(i, 1), id: ids[i] })) } }),
    );
    assert.deepEqual([patch?.status, patch?.body.result.version, put.status, put.body.result.version], [200, '2', 200, '3']);
    // The PUT was merged with the ruleset as the PATCH left it: rule 7 is at its third version, the others at their second.
    assert.deepEqual(put.body.result.rules.map((r: { version: string }) => r.version), Array.from({ length: 300 }, (_, i) => (i === 7 ? '3' : '2')));
    for (const a of [patch!.body.result, put.body.result]) assert.deepEqual((await svc.call('GET', `${base}/versions/${a.version}`)).body.result, a, `version ${a.version}`);
  });

  it('a custom ruleset deleted while a PUT that executes it is about to be written: the PUT is refused, nothing runs a ruleset that is gone', async () => {
    const acc = `/accounts/${DEMO_ACCOUNT.id}/rulesets`;
    const shared = await svc.call('POST', acc, { body: { name: 'deleted meanwhile', kind: 'custom', phase: CUSTOM, rules: [rule(1)] } });
    const sharedId: string = shared.body.result.id;
    const root = `${acc}/phases/${CUSTOM}/entrypoint`;
    const before = await svc.call('GET', root);
    let deleted: number | undefined;
    const put = await duringPutsTurn(
      async () => {
        deleted = (await svc.call('DELETE', `${acc}/${sharedId}`)).status;
      },
      () => svc.call('PUT', root, { body: { rules: [{ action: 'execute', expression: 'true', action_parameters: { id: sharedId }, ref: 'run-deleted' }] } }),
    );
    assert.deepEqual([deleted, put.status], [204, 400]);
    assert.match(put.body.errors[0].message, /^'[0-9a-f]{32}' is not a valid value for id because no managed ruleset nor custom ruleset of the account has this id/);
    assert.equal(put.body.errors[0].source.pointer, '/rules/0/action_parameters/id');
    const after = await svc.call('GET', root);
    assert.deepEqual([after.status, after.body.result?.version], [before.status, before.body.result?.version]);
  });

  /** Runs `put` with `during` run in the turns a PUT lets others in while it stages its rows (the first comes before staging). */
  const whileStaging = <T>(during: (turn: number) => Promise<void>, put: () => Promise<T>) =>
    duringTurns(svc, async (call) => {
      if (call >= 2) await during(call - 1);
    }, put);

  it('a PUT that changes hundreds of rules stages its rows over several turns: meanwhile a GET answers the version before, exactly, and a write of the ruleset gets 429 with Retry-After', async () => {
    const made = await svc.call('POST', `/accounts/${DEMO_ACCOUNT.id}/rulesets`, { body: { name: 'staged', kind: 'custom', phase: CUSTOM, rules: Array.from({ length: 400 }, (_, i) => rule(i)) } });
    const id = made.body.result.id;
    const base = `/accounts/${DEMO_ACCOUNT.id}/rulesets/${id}`;
    const ids: string[] = made.body.result.rules.map((r: { id: string }) => r.id);
    const seen: { turn: number; get: unknown; patch: [number, string | null, string, string]; del: number }[] = [];
    const put = await whileStaging(async (turn) => {
      // The cache of the ruleset is dropped, so the GET reads the store, where the staged rows are.
      svc.store.rollbackHooks.forEach((h) => h());
      const get = (await svc.call('GET', base)).body.result;
      const patch = await svc.call('PATCH', `${base}/rules/${ids[3]}`, { body: rule(3, 9) });
      const del = (await svc.call('DELETE', base)).status;
      seen.push({ turn, get, patch: [patch.status, patch.headers.get('retry-after'), patch.body.errors?.[0]?.message ?? '', patch.body.messages?.[0]?.message ?? ''], del });
    }, () => svc.call('PUT', base, { body: { rules: Array.from({ length: 400 }, (_, i) => ({ ...rule(i, 1), id: ids[i] })) } }));
    assert.deepEqual([put.status, put.body.result.version], [200, '2']);
    // 400 rows at 2 ms a turn: more than one turn of staging, then the turn before the write.
    assert.ok(seen.length >= 2, `turns seen while staging: ${seen.length}`);
    for (const s of seen) {
      assert.deepEqual(s.get, made.body.result, `GET in staging turn ${s.turn}`);
      assert.deepEqual(s.patch, [429, '1', 'Please wait and consider throttling your request speed', `Ruleset ${id} is being updated by another request (a large write of its rules, which takes a few milliseconds). Retry after 1 s (the Retry-After header).`], `PATCH in staging turn ${s.turn}`);
      assert.equal(s.del, 429, `DELETE in staging turn ${s.turn}`);
    }
    // Once written, the ruleset takes writes again, and both versions read back as answered.
    svc.store.rollbackHooks.forEach((h) => h());
    assert.deepEqual((await svc.call('GET', base)).body.result, put.body.result);
    assert.deepEqual(readRules(svc.store, id, 2, true), put.body.result.rules);
    assert.deepEqual((await svc.call('GET', `${base}/versions/1`)).body.result, made.body.result);
    const patched = await svc.call('PATCH', `${base}/rules/${ids[3]}`, { body: rule(3, 9) });
    assert.deepEqual([patched.status, patched.body.result.version], [200, '3']);
  });

  it('a staged PUT whose rows were lost before its write is refused, leaves the ruleset as it was and no rows behind, and the next PUT is written', async () => {
    const made = await svc.call('POST', `/accounts/${DEMO_ACCOUNT.id}/rulesets`, { body: { name: 'lost', kind: 'custom', phase: CUSTOM, rules: Array.from({ length: 100 }, (_, i) => rule(i)) } });
    const id = made.body.result.id;
    const base = `/accounts/${DEMO_ACCOUNT.id}/rulesets/${id}`;
    const rowsOf = () => svc.store.get<{ n: number }>('SELECT COUNT(*) AS n FROM ruleset_rules WHERE ruleset_id = ?', [id])!.n;
    // As a batch lost to an I/O error would: staged rows of version 2 gone before the write that makes it current.
    const put = await whileStaging(async () => {
      svc.store.run('DELETE FROM ruleset_rules WHERE ruleset_id = ? AND from_version = 2 AND rule_id IN (SELECT rule_id FROM ruleset_rules WHERE ruleset_id = ? AND from_version = 2 LIMIT 1)', [id, id]);
    }, () => svc.call('PUT', base, { body: { rules: Array.from({ length: 100 }, (_, i) => rule(i, 1)) } }));
    assert.equal(put.status, 500);
    assert.equal(rowsOf(), 100);
    svc.store.rollbackHooks.forEach((h) => h());
    assert.deepEqual((await svc.call('GET', base)).body.result, made.body.result);
    const again = await svc.call('PUT', base, { body: { rules: Array.from({ length: 100 }, (_, i) => rule(i, 1)) } });
    assert.deepEqual([again.status, again.body.result.version, rowsOf()], [200, '2', 200]);
  });

  it('custom rulesets deleted while a PUT stages: the one it will execute is deleted (nothing runs it yet), the one it stops executing is still in use; the PUT is refused and leaves the rows as they were', async () => {
    const acc = `/accounts/${DEMO_ACCOUNT.id}/rulesets`;
    const shared = await svc.call('POST', acc, { body: { name: 'deleted while staged', kind: 'custom', phase: CUSTOM, rules: [rule(1)] } });
    const sharedId: string = shared.body.result.id;
    // The account's entry point, which may execute it (a custom ruleset may not).
    const root = `${acc}/phases/${CUSTOM}/entrypoint`;
    // An entry point runs each ruleset once: 69 more to run (rule 68 only before the PUT), so the PUT stages (64 rows or more).
    const others: string[] = [];
    for (let i = 0; i < 70; i++) others.push((await svc.call('POST', acc, { body: { name: `run ${i}`, kind: 'custom', phase: CUSTOM, rules: [rule(i)] } })).body.result.id);
    const logged = (i: number) => ({ action: 'execute', expression: `http.host eq "h${i}.example.com"`, action_parameters: { id: others[i] }, ref: `run-${i}` });
    const before = await svc.call('PUT', root, { body: { rules: [logged(68)] } });
    assert.equal(before.status, 200, JSON.stringify(before.body));
    const rowsOf = () => svc.store.get<{ n: number }>('SELECT COUNT(*) AS n FROM ruleset_rules WHERE ruleset_id = ?', [before.body.result.id])!.n;
    const rows = rowsOf();
    let deleted: number | undefined;
    let stillUsed: [number, number] | undefined;
    const put = await whileStaging(async () => {
      deleted ??= (await svc.call('DELETE', `${acc}/${sharedId}`)).status;
      const used = await svc.call('DELETE', `${acc}/${others[68]}`);
      stillUsed ??= [used.status, used.body.errors?.[0]?.code];
    }, () => svc.call('PUT', root, { body: { rules: [{ action: 'execute', expression: 'true', action_parameters: { id: sharedId }, ref: 'run-it' }, ...Array.from({ length: 68 }, (_, i) => logged(i)), logged(69)] } }));
    assert.deepEqual([deleted, stillUsed, put.status, put.body.errors?.[0]?.source?.pointer], [204, [400, 20030], 400, '/rules/0/action_parameters/id']);
    assert.equal(rowsOf(), rows);
    assert.deepEqual((await svc.call('GET', root)).body.result, before.body.result);
  });

  it('rows a staging left behind (a crash between its turns) are read by nobody, and the next write of that version drops them', async () => {
    const made = await svc.call('POST', `/accounts/${DEMO_ACCOUNT.id}/rulesets`, { body: { name: 'crashed', kind: 'custom', phase: CUSTOM, rules: [rule(1), rule(2)] } });
    const id = made.body.result.id;
    const base = `/accounts/${DEMO_ACCOUNT.id}/rulesets/${id}`;
    const [r1, r2] = made.body.result.rules as { id: string }[];
    for (const [rid, pos] of [[r1!.id, 1024], [r2!.id, 2048], ['f'.repeat(32), 3072]] as const) {
      svc.store.run('INSERT INTO ruleset_rules (ruleset_id, rule_id, pos, hash, body, from_version, to_version) VALUES (?, ?, ?, ?, ?, 2, NULL)', [id, rid, pos, 'left', JSON.stringify({ id: rid, left: true })]);
    }
    // …and the row of rule 2 it had closed at version 2.
    assert.equal(svc.store.run('UPDATE ruleset_rules SET to_version = 2 WHERE ruleset_id = ? AND rule_id = ? AND from_version = 1', [id, r2!.id]), 1);
    svc.store.rollbackHooks.forEach((h) => h());
    assert.deepEqual((await svc.call('GET', base)).body.result, made.body.result);
    const deployed = await svc.call('GET', `/accounts/${DEMO_ACCOUNT.id}/rulesets/${id}/versions/1`);
    assert.deepEqual(deployed.body.result, made.body.result);
    // A dry run first: it drops them too, and is rolled back, so the write after it must drop them again.
    const dry = await svc.call('PATCH', `${base}/rules/${r1!.id}?dry_run=true`, { body: rule(1, 5) });
    assert.deepEqual([dry.status, dry.body.result], [200, null]);
    const patched = await svc.call('PATCH', `${base}/rules/${r1!.id}`, { body: rule(1, 5) });
    assert.deepEqual([patched.status, patched.body.result.version, patched.body.result.rules.map((r: { ref: string }) => r.ref)], [200, '2', ['rule-1', 'rule-2']]);
    assert.equal(svc.store.get<{ n: number }>("SELECT COUNT(*) AS n FROM ruleset_rules WHERE ruleset_id = ? AND hash = 'left'", [id])!.n, 0);
    svc.store.rollbackHooks.forEach((h) => h());
    assert.deepEqual((await svc.call('GET', base)).body.result, patched.body.result);
  });

  it('deleting the newest version makes the one before current, and the next write builds on it', async () => {
    const made = await svc.call('POST', `/accounts/${DEMO_ACCOUNT.id}/rulesets`, { body: { name: 'history', kind: 'custom', phase: CUSTOM, rules: [rule(1)] } });
    const id = made.body.result.id;
    const v2 = await svc.call('PUT', `/accounts/${DEMO_ACCOUNT.id}/rulesets/${id}`, { body: { rules: [rule(1), rule(2)] } });
    assert.equal(v2.body.result.version, '2');
    assert.equal((await svc.call('DELETE', `/accounts/${DEMO_ACCOUNT.id}/rulesets/${id}/versions/2`)).status, 204);
    const current = await svc.call('GET', `/accounts/${DEMO_ACCOUNT.id}/rulesets/${id}`);
    assert.deepEqual(current.body.result, made.body.result);
    const v3 = await svc.call('POST', `/accounts/${DEMO_ACCOUNT.id}/rulesets/${id}/rules`, { body: rule(3) });
    assert.equal(v3.body.result.version, '3');
    assert.deepEqual(v3.body.result.rules.map((r: { ref: string }) => r.ref), ['rule-1', 'rule-3']);
    assert.deepEqual((await svc.call('GET', `/accounts/${DEMO_ACCOUNT.id}/rulesets/${id}/versions/1`)).body.result, made.body.result);
  });
});

describe('the versions list', () => {
  it('is paged with per_page and the cursor of result_info, oldest first; the pages add up to every version', async () => {
    const made = await svc.call('POST', `/accounts/${DEMO_ACCOUNT.id}/rulesets`, { body: { name: 'paged', kind: 'custom', phase: CUSTOM, rules: [rule(1)] } });
    const id = made.body.result.id;
    for (let k = 1; k <= 4; k++) await svc.call('PATCH', `/accounts/${DEMO_ACCOUNT.id}/rulesets/${id}/rules/${made.body.result.rules[0].id}`, { body: rule(1, k) });
    const seen: string[] = [];
    let cursor = '';
    for (let page = 0; page < 5; page++) {
      const r = await svc.call('GET', `/accounts/${DEMO_ACCOUNT.id}/rulesets/${id}/versions?per_page=2${cursor ? `&cursor=${cursor}` : ''}`);
      assert.equal(r.status, 200);
      seen.push(...r.body.result.map((h: { version: string }) => h.version));
      assert.equal(r.body.result_info.count, r.body.result.length);
      if (!r.body.result_info.cursor) break;
      cursor = r.body.result_info.cursor;
    }
    assert.deepEqual(seen, ['1', '2', '3', '4', '5']);
    const bad = await svc.call('GET', `/accounts/${DEMO_ACCOUNT.id}/rulesets/${id}/versions?cursor=nonsense`);
    assert.deepEqual([bad.status, bad.body.errors[0].message], [400, "'nonsense' is not a valid value for cursor: pass the cursor of the previous page's result_info"]);
  });

  it("of a managed ruleset and of an entry point not created yet take and check per_page and cursor as a stored ruleset's", async () => {
    const managed = `/accounts/${DEMO_ACCOUNT.id}/rulesets/efb7b8c949ac4650a09736fc376e9aee/versions`;
    const first = await svc.call('GET', `${managed}?per_page=1`);
    assert.deepEqual([first.status, first.body.result.map((h: { version: string }) => h.version), first.body.result_info], [200, ['1'], { per_page: 1, count: 1, cursor: 'djE', cursors: { after: 'djE' } }]);
    const second = await svc.call('GET', `${managed}?per_page=1&cursor=djE`);
    assert.deepEqual([second.status, second.body.result.map((h: { version: string }) => h.version), second.body.result_info], [200, ['2'], { per_page: 1, count: 1 }]);
    const none = await svc.call('GET', `/zones/${ENT}/rulesets/phases/http_request_late_transform/entrypoint/versions`);
    assert.deepEqual([none.status, none.body.result, none.body.result_info], [200, [], { per_page: 1000, count: 0 }]);
    for (const path of [managed, `/zones/${ENT}/rulesets/phases/http_request_late_transform/entrypoint/versions`]) {
      const perPage = await svc.call('GET', `${path}?per_page=0`);
      assert.deepEqual([perPage.status, perPage.body.errors[0].message], [400, "'0' is not a valid value for per_page: expected an integer from 1 to 1000"], path);
      const cursor = await svc.call('GET', `${path}?cursor=garbage`);
      assert.deepEqual([cursor.status, cursor.body.errors[0].message], [400, "'garbage' is not a valid value for cursor: pass the cursor of the previous page's result_info"], path);
    }
  });
});

/**
 * 32 clients with their connections open (keep-alive, as team tools keep them) sending a
 * request each at the same moment: the service reads them in one turn of its event loop.
 */
async function burst(requests: readonly { method: string; path: string; body: unknown }[]): Promise<{ status: number; body: any }[]> {
  const agent = new Agent({ keepAlive: true, maxSockets: requests.length });
  const call = (method: string, path: string, body?: unknown) =>
    new Promise<{ status: number; body: any }>((resolve, reject) => {
      const text = body === undefined ? undefined : JSON.stringify(body);
      const req = request(`${svc.url}${path}`, { method, agent, headers: { authorization: `Bearer ${svc.adminToken}`, ...(text ? { 'content-type': 'application/json' } : {}) } }, (res) => {
        let t = '';
        res.on('data', (d: Buffer) => (t += d.toString()));
        res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(t) }));
      });
      req.on('error', reject);
      req.end(text);
    });
  try {
    // Open the connections first: a connection's first request waits for it to be accepted.
    await Promise.all(requests.map(() => call('GET', '/zones')));
    return await Promise.all(requests.map((r) => call(r.method, r.path, r.body)));
  } finally {
    agent.destroy();
  }
}

describe('group commit', () => {
  it('a burst of 32 PATCHes: all acknowledged, all kept, committed together (fewer commits than writes)', async () => {
    const put = await svc.call('PUT', entry(ENT), { body: { rules: Array.from({ length: 32 }, (_, i) => rule(i)) } });
    const rs = put.body.result;
    const commits = svc.store.commits;
    const answers = await burst(rs.rules.map((r: { id: string }, i: number) => ({ method: 'PATCH', path: `/zones/${ENT}/rulesets/${rs.id}/rules/${r.id}`, body: rule(i, 100) })));
    assert.deepEqual(answers.map((a) => a.status), Array(32).fill(200));
    const used = svc.store.commits - commits;
    assert.ok(used < 16, `${used} commits for 32 writes`);
    const final = await svc.call('GET', entry(ENT));
    assert.deepEqual(final.body.result.rules.map((r: { description: string }) => r.description), Array.from({ length: 32 }, (_, i) => `Rule ${i} (edit 100)`));
    // Each answer is the version it wrote: 32 distinct, consecutive versions.
    const versions = answers.map((a) => Number(a.body.result.version)).sort((a, b) => a - b);
    assert.deepEqual(versions, Array.from({ length: 32 }, (_, i) => Number(rs.version) + 1 + i));
  });
});

describe('what a rule may hold', () => {
  it('a description or ref over 500 characters is refused with the filters wording; 500 is accepted', async () => {
    const rs = (await svc.call('GET', entry(ENT))).body.result;
    const long = await svc.call('POST', `/zones/${ENT}/rulesets/${rs.id}/rules`, { body: { ...rule(700), description: 'd'.repeat(501) } });
    assert.deepEqual([long.status, long.body.errors], [400, [{ code: 20021, message: "'description' is too long: at most 500 characters, got 501", source: { pointer: '/description' } }]]);
    const ref = await svc.call('PUT', entry(ENT), { body: { rules: [{ ...rule(1), ref: 'r'.repeat(7_900_000) }] } });
    assert.deepEqual([ref.status, ref.body.errors], [400, [{ code: 20021, message: "'ref' is too long: at most 500 characters, got 7900000", source: { pointer: '/rules/0/ref' } }]]);
    const ok = await svc.call('POST', `/zones/${ENT}/rulesets/${rs.id}/rules`, { body: { ...rule(701), description: 'd'.repeat(500) } });
    assert.equal(ok.status, 200);
    // Characters, not UTF-16 units: 500 emoji fit, 501 are counted as 501.
    const emoji = await svc.call('POST', `/zones/${ENT}/rulesets/${rs.id}/rules`, { body: { ...rule(702), description: '😀'.repeat(500) } });
    assert.equal(emoji.status, 200);
    const over = await svc.call('POST', `/zones/${ENT}/rulesets/${rs.id}/rules`, { body: { ...rule(703), description: '😀'.repeat(501) } });
    assert.deepEqual(over.body.errors, [{ code: 20021, message: "'description' is too long: at most 500 characters, got 501", source: { pointer: '/description' } }]);
  });

  it("a ruleset's name or description over 500 characters is refused: every version keeps them", async () => {
    const put = (body: object) => svc.call('PUT', entry(ENT), { body: { rules: [rule(1)], ...body } });
    const name = await put({ name: 'n'.repeat(501) });
    assert.deepEqual([name.status, name.body.errors], [400, [{ code: 20021, message: "'name' is too long: at most 500 characters, got 501", source: { pointer: '/name' } }]]);
    const description = await put({ description: 'd'.repeat(1_000_000) });
    assert.deepEqual([description.status, description.body.errors], [400, [{ code: 20021, message: "'description' is too long: at most 500 characters, got 1000000", source: { pointer: '/description' } }]]);
    assert.equal((await put({ description: 'd'.repeat(500) })).status, 200);
  });

  it('a description stored before the cap round-trips: sent back unchanged it is taken, changed it is refused', async () => {
    const long = 'd'.repeat(600);
    const id = svc.store.write(() => saveRuleset(svc.store, 'account', DEMO_ACCOUNT.id, { name: 'from an older store', description: long, kind: 'custom', phase: CUSTOM, rules: [] })).id;
    const path = `/accounts/${DEMO_ACCOUNT.id}/rulesets/${id}`;
    const same = await svc.call('PUT', path, { body: { name: 'from an older store', description: long, rules: [rule(1)] } });
    assert.deepEqual([same.status, same.body.result.description], [200, long]);
    const changed = await svc.call('PUT', path, { body: { description: `${long}!`, rules: [rule(1)] } });
    assert.deepEqual([changed.status, changed.body.errors[0].message], [400, "'description' is too long: at most 500 characters, got 601"]);
  });

  it('a NUL character anywhere in a rule is refused where it is, and nothing is stored', async () => {
    const rs = (await svc.call('GET', entry(ENT))).body.result;
    for (const [body, pointer] of [
      [{ ...rule(800), description: 'a\u0000b' }, '/description'],
      [{ ...rule(800), ref: 'a\u0000b' }, '/ref'],
      [{ ...rule(800), action: 'skip', action_parameters: { ruleset: 'current\u0000' } }, '/action_parameters/ruleset'],
    ] as const) {
      const r = await svc.call('POST', `/zones/${ENT}/rulesets/${rs.id}/rules`, { body });
      assert.deepEqual([r.status, r.body.errors], [400, [{ code: 20021, message: `the value at ${pointer} must not contain a NUL character (U+0000)`, source: { pointer } }]]);
    }
    assert.equal((await svc.call('GET', entry(ENT))).body.result.version, rs.version);
  });
});

/** A database that `fill` gives an older schema's tables and rows, opened as a Store (which migrates it) for `check`, then removed. */
function migrated(fill: (raw: Database) => void, check: (store: Store) => void): void {
  const dir = mkdtempSync(join(tmpdir(), 'rulesmith-old-schema-'));
  try {
    const file = join(dir, 'old.db');
    const raw = new Database(file);
    raw.exec(SCHEMA[0] as string);
    fill(raw);
    raw.close();
    const store = new Store(file);
    try {
      assert.equal(store.schemaVersion, SCHEMA.length);
      check(store);
    } finally {
      store.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('a database of schema 1', () => {
  it('is migrated: every retained version reads back exactly as it was stored', () => {
    const r = (id: string, v: string, expr: string) => ({ id, version: v, action: 'block', expression: expr, description: '', last_updated: `t${v}`, ref: id, enabled: true });
    const bodies = [
      { id: 'r1', name: 'old', description: 'd1', kind: 'custom', version: '1', last_updated: 't1', phase: CUSTOM, rules: [r('x', '1', 'true'), r('y', '1', 'false')] },
      // version 2 was deleted; version 3 changed y and dropped x
      { id: 'r1', name: 'old', description: 'd2', kind: 'custom', version: '3', last_updated: 't3', phase: CUSTOM, rules: [r('y', '2', 'not false')] },
    ];
    migrated(
      (raw) => {
        raw.exec('PRAGMA user_version = 1');
        raw.exec("INSERT INTO accounts VALUES ('a', 'A', 't')");
        raw.run("INSERT INTO rulesets VALUES ('r1', 'account', 'a', 'custom', ?, 'old', 'd2', 3, 't3')", [CUSTOM]);
        for (const b of bodies) raw.run('INSERT INTO ruleset_versions VALUES (?, ?, ?, ?)', ['r1', Number(b.version), b.last_updated, JSON.stringify(b)]);
      },
      (store) => {
        const read = (v: number) => {
          const h = store.get<{ name: string; description: string; last_updated: string }>('SELECT * FROM ruleset_versions WHERE ruleset_id = ? AND version = ?', ['r1', v]);
          const rules = store.all<{ body: string }>(
            'SELECT body FROM ruleset_rules WHERE ruleset_id = ? AND from_version <= ? AND (to_version IS NULL OR to_version > ?) ORDER BY pos',
            ['r1', v, v],
          );
          return { id: 'r1', name: h!.name, description: h!.description, kind: 'custom', version: String(v), last_updated: h!.last_updated, phase: CUSTOM, rules: rules.map((x) => JSON.parse(x.body)) };
        };
        assert.deepEqual(read(1), bodies[0]);
        assert.deepEqual(read(3), bodies[1]);
        assert.equal(store.get('SELECT 1 AS x FROM ruleset_versions WHERE version = 2'), undefined);
        // Schema 4: the row keeps what never changes, and the number versions go above.
        assert.deepEqual(store.all('SELECT * FROM rulesets'), [{ id: 'r1', scope: 'account', scope_id: 'a', kind: 'custom', phase: CUSTOM, version_floor: 3 }]);
        const v4 = store.write(() => saveRuleset(store, 'account', 'a', { id: 'r1', name: 'new', description: 'd4', kind: 'custom', phase: CUSTOM, rules: [] }));
        assert.deepEqual([v4.version, v4.name, v4.description], ['4', 'new', 'd4']);
      },
    );
  });

  it('is migrated a page of versions at a time: histories longer than a page, in two rulesets, all read back', () => {
    // r1's history spans pages, and a page ends inside it; r2 starts on the last page.
    const versions = [...Array.from({ length: MIGRATION_PAGE + 50 }, (_, i) => ['r1', i + 1] as const), ...Array.from({ length: 60 }, (_, i) => ['r2', i + 1] as const)];
    const body = (id: string, v: number) => ({ id, name: `${id} v${v}`, description: '', kind: 'custom', version: String(v), last_updated: `t${v}`, phase: CUSTOM, rules: [{ id: `${id}-rule`, version: String(v), action: 'block', expression: `http.request.uri.path eq "/${v}"`, description: '', last_updated: `t${v}`, ref: 'x', enabled: true }] });
    migrated(
      (raw) => {
        raw.exec('PRAGMA user_version = 1');
        raw.exec("INSERT INTO accounts VALUES ('a', 'A', 't')");
        raw.run("INSERT INTO rulesets VALUES ('r1', 'account', 'a', 'custom', ?, 'r1', '', ?, 't')", [CUSTOM, MIGRATION_PAGE + 50]);
        raw.run("INSERT INTO rulesets VALUES ('r2', 'account', 'a', 'custom', ?, 'r2', '', 60, 't')", [CUSTOM]);
        for (const [id, v] of versions) raw.run('INSERT INTO ruleset_versions VALUES (?, ?, ?, ?)', [id, v, `t${v}`, JSON.stringify(body(id, v))]);
      },
      (store) => {
        const got = versions.filter(([id, v]) => {
          const r = storedVersion(store, 'account', 'a', id, v);
          return r?.name === `${id} v${v}` && r.rules[0]?.expression === `http.request.uri.path eq "/${v}"`;
        });
        assert.equal(got.length, versions.length);
        assert.deepEqual(store.all('SELECT ruleset_id, count(*) AS n FROM ruleset_versions GROUP BY ruleset_id ORDER BY ruleset_id'), [{ ruleset_id: 'r1', n: MIGRATION_PAGE + 50 }, { ruleset_id: 'r2', n: 60 }]);
      },
    );
  });
});

describe('version numbers', () => {
  it('a deleted newest version is not numbered again, also once the store is opened again; a write leaves the ruleset row as it was', () => {
    const dir = mkdtempSync(join(tmpdir(), 'rulesmith-versions-'));
    const file = join(dir, 'v.db');
    const save = (store: Store, id: string | undefined, name: string) => store.write(() => saveRuleset(store, 'account', 'a', { ...(id ? { id } : {}), name, description: '', kind: 'custom', phase: CUSTOM, rules: [] }));
    try {
      let store = new Store(file);
      const v1 = save(store, undefined, 'one');
      const row = store.all('SELECT * FROM rulesets');
      save(store, v1.id, 'two');
      save(store, v1.id, 'three');
      assert.deepEqual(store.all('SELECT * FROM rulesets'), row);
      store.write(() => deleteVersion(store, v1.id, 3));
      assert.deepEqual([latestRuleset(store, 'account', 'a', v1.id)!.version, latestRuleset(store, 'account', 'a', v1.id)!.name], ['2', 'two']);
      store.close();
      store = new Store(file);
      try {
        assert.deepEqual([latestRuleset(store, 'account', 'a', v1.id)!.version, latestRuleset(store, 'account', 'a', v1.id)!.name], ['2', 'two']);
        assert.equal(save(store, v1.id, 'four').version, '4');
        assert.equal(save(store, v1.id, 'five').version, '5');
      } finally {
        store.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('a database of schema 2', () => {
  it('is migrated: each rule row takes its body, every version reads back exactly, and the ruleset takes writes', () => {
    const r = (id: string, v: string, expr: string) => ({ id, version: v, action: 'block', expression: expr, description: 'règle ☕', last_updated: `t${v}`, ref: id, enabled: true });
    migrated(
      (raw) => {
        // Schema 2's history tables, as that version made them.
        raw.exec(`DROP TABLE ruleset_versions;
          CREATE TABLE ruleset_versions (ruleset_id TEXT NOT NULL REFERENCES rulesets(id) ON DELETE CASCADE, version INTEGER NOT NULL,
            last_updated TEXT NOT NULL, name TEXT NOT NULL, description TEXT NOT NULL, PRIMARY KEY (ruleset_id, version));
          CREATE TABLE rule_bodies (hash TEXT PRIMARY KEY, body TEXT NOT NULL);
          CREATE TABLE ruleset_rules (ruleset_id TEXT NOT NULL REFERENCES rulesets(id) ON DELETE CASCADE, rule_id TEXT NOT NULL,
            pos REAL NOT NULL, hash TEXT NOT NULL, from_version INTEGER NOT NULL, to_version INTEGER, PRIMARY KEY (ruleset_id, rule_id, from_version));
          CREATE INDEX ruleset_rules_live ON ruleset_rules (ruleset_id, to_version, pos);
          PRAGMA user_version = 2;`);
        raw.exec("INSERT INTO accounts VALUES ('a', 'A', 't')");
        raw.run("INSERT INTO rulesets VALUES ('r1', 'account', 'a', 'custom', ?, 'two', '', 2, 't2')", [CUSTOM]);
        const rows: [string, number, string, number, number | null][] = [
          // [rule, pos, body, from, to]: x stays, y changes at version 2, z is added at version 2
          ['x', 1024, JSON.stringify(r('x', '1', 'true')), 1, null],
          ['y', 2048, JSON.stringify(r('y', '1', 'false')), 1, 2],
          ['y', 2048, JSON.stringify(r('y', '2', 'not false')), 2, null],
          ['z', 3072, JSON.stringify(r('z', '2', 'true')), 2, null],
        ];
        for (const [id, pos, body, from, to] of rows) {
          raw.run('INSERT OR IGNORE INTO rule_bodies VALUES (?, ?)', [`h-${id}-${from}`, body]);
          raw.run('INSERT INTO ruleset_rules VALUES (?, ?, ?, ?, ?, ?)', ['r1', id, pos, `h-${id}-${from}`, from, to]);
        }
        raw.run("INSERT INTO ruleset_versions VALUES ('r1', 1, 't1', 'two', ''), ('r1', 2, 't2', 'two', '')");
      },
      (store) => {
        assert.equal(store.get("SELECT 1 AS y FROM sqlite_master WHERE name = 'rule_bodies'"), undefined);
        const v1 = storedVersion(store, 'account', 'a', 'r1', 1)!;
        const v2 = latestRuleset(store, 'account', 'a', 'r1')!;
        assert.deepEqual(JSON.parse(JSON.stringify(v1.rules)), [r('x', '1', 'true'), r('y', '1', 'false')]);
        assert.deepEqual(JSON.parse(JSON.stringify(v2.rules)), [r('x', '1', 'true'), r('y', '2', 'not false'), r('z', '2', 'true')]);
        const v3 = store.write(() => saveRuleset(store, 'account', 'a', { id: 'r1', name: 'two', description: '', kind: 'custom', phase: CUSTOM, rules: [v2.rules[0]!, v2.rules[2]!] }));
        assert.deepEqual(JSON.parse(JSON.stringify(latestRuleset(store, 'account', 'a', 'r1')!.rules)), [r('x', '1', 'true'), r('z', '2', 'true')]);
        assert.equal(v3.version, '3');
        assert.deepEqual(JSON.parse(JSON.stringify(storedVersion(store, 'account', 'a', 'r1', 2)!.rules)), JSON.parse(JSON.stringify(v2.rules)));
      },
    );
  });
});
