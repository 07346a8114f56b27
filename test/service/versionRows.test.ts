// Deleting a version that is not the newest (DELETE …/rulesets/{id}/versions/{v}) drops
// the rule rows only that version used (rulesetHistory.ts dropRowsBetween): a row spans
// from_version..to_version and is kept while any retained version falls in its span. The
// other versions read back byte for byte as before.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DEMO_ACCOUNT } from '../../server/src/service/seed';
import { startService, type TestService } from './harness';

const path = `/accounts/${DEMO_ACCOUNT.id}/rulesets`;
const rule = (ref: string, host = ref) => ({ action: 'block', expression: `http.host eq "${host}.example.com"`, ref });

let svc: TestService;
before(async () => {
  svc = await startService();
});
after(() => svc.close());

/** The exact bytes of a version's answer. */
async function versionText(id: string, v: number): Promise<string> {
  const res = await fetch(`${svc.url}${path}/${id}/versions/${v}`, { headers: { authorization: `Bearer ${svc.adminToken}` } });
  assert.equal(res.status, 200, `version ${v}`);
  return res.text();
}

function rows(id: string): { rule: string; from: number; to: number | null }[] {
  return svc.store.all<{ rule: string; from: number; to: number | null }>(
    `SELECT json_extract(body, '$.ref') AS rule, from_version AS "from", to_version AS "to" FROM ruleset_rules WHERE ruleset_id = ? ORDER BY from_version, rule`,
    [id],
  );
}

describe('deleting a version that is not the newest', () => {
  it('drops the rows only it used, and every other version reads back byte for byte', async () => {
    // v1: a, b, c.
    const made = await svc.call('POST', path, { body: { name: 'history', kind: 'custom', phase: 'http_request_firewall_custom', rules: [rule('a'), rule('b'), rule('c')] } });
    assert.equal(made.status, 200, JSON.stringify(made.body));
    const id: string = made.body.result.id;
    const [a, b, c] = made.body.result.rules as { id: string }[];
    const patch = async (r: { id: string }, ref: string, host: string) => {
      const res = await svc.call('PATCH', `${path}/${id}/rules/${r.id}`, { body: rule(ref, host) });
      assert.equal(res.status, 200, JSON.stringify(res.body));
    };
    await patch(b!, 'b', 'b2'); // v2: b changed
    await patch(b!, 'b', 'b3'); // v3: b changed again
    await patch(c!, 'c', 'c4'); // v4: c changed
    await patch(b!, 'b', 'b5'); // v5: b changed again
    assert.deepEqual(rows(id), [
      { rule: 'a', from: 1, to: null },
      { rule: 'b', from: 1, to: 2 },
      { rule: 'c', from: 1, to: 4 },
      { rule: 'b', from: 2, to: 3 },
      { rule: 'b', from: 3, to: 5 },
      { rule: 'c', from: 4, to: null },
      { rule: 'b', from: 5, to: null },
    ]);
    const texts = new Map<number, string>();
    for (const v of [1, 2, 3, 4, 5]) texts.set(v, await versionText(id, v));

    // v2 alone used b's row 2..3: that one row goes.
    assert.equal((await svc.call('DELETE', `${path}/${id}/versions/2`)).status, 204);
    assert.deepEqual(rows(id), [
      { rule: 'a', from: 1, to: null },
      { rule: 'b', from: 1, to: 2 },
      { rule: 'c', from: 1, to: 4 },
      { rule: 'b', from: 3, to: 5 },
      { rule: 'c', from: 4, to: null },
      { rule: 'b', from: 5, to: null },
    ]);
    for (const v of [1, 3, 4, 5]) assert.equal(await versionText(id, v), texts.get(v), `version ${v} after deleting 2`);

    // v1 (the oldest) alone used b's row 1..2; c's row 1..4 is v3's too.
    assert.equal((await svc.call('DELETE', `${path}/${id}/versions/1`)).status, 204);
    assert.deepEqual(rows(id), [
      { rule: 'a', from: 1, to: null },
      { rule: 'c', from: 1, to: 4 },
      { rule: 'b', from: 3, to: 5 },
      { rule: 'c', from: 4, to: null },
      { rule: 'b', from: 5, to: null },
    ]);
    for (const v of [3, 4, 5]) assert.equal(await versionText(id, v), texts.get(v), `version ${v} after deleting 1`);

    // v4 sits between v3 and v5: b's row 3..5 is v3's, c's rows are v3's and v5's. None goes.
    assert.equal((await svc.call('DELETE', `${path}/${id}/versions/4`)).status, 204);
    assert.equal(rows(id).length, 5);
    for (const v of [3, 5]) assert.equal(await versionText(id, v), texts.get(v), `version ${v} after deleting 4`);

    // Now v3 (the oldest, before v5): c 1..4 and b 3..5 were only its.
    assert.equal((await svc.call('DELETE', `${path}/${id}/versions/3`)).status, 204);
    assert.deepEqual(rows(id), [
      { rule: 'a', from: 1, to: null },
      { rule: 'c', from: 4, to: null },
      { rule: 'b', from: 5, to: null },
    ]);
    assert.equal(await versionText(id, 5), texts.get(5));

    // The ruleset takes writes as before, numbered above every version given.
    const next = await svc.call('PATCH', `${path}/${id}/rules/${a!.id}`, { body: rule('a', 'a6') });
    assert.equal(next.status, 200, JSON.stringify(next.body));
    assert.equal(next.body.result.version, '6');
    assert.equal(await versionText(id, 5), texts.get(5));
  });

  it('a dry run of the delete drops nothing', async () => {
    const made = await svc.call('POST', path, { body: { name: 'dry', kind: 'custom', phase: 'http_request_firewall_custom', rules: [rule('x')] } });
    const id: string = made.body.result.id;
    const x = made.body.result.rules[0];
    for (const host of ['x2', 'x3']) assert.equal((await svc.call('PATCH', `${path}/${id}/rules/${x.id}`, { body: rule('x', host) })).status, 200);
    const before = rows(id);
    const text = await versionText(id, 2);
    assert.equal((await svc.call('DELETE', `${path}/${id}/versions/2?dry_run=true`)).status, 204);
    assert.deepEqual(rows(id), before);
    assert.equal(await versionText(id, 2), text);
  });
});
