// An execute rule that pins `action_parameters.version` of a custom ruleset of the account
// (rules-api.md §2.5, execute): the version must exist, as a managed ruleset's must (400,
// 20021 at the pin, in the core's words "… has no version N"), and it is that version the
// zone runs (the trace and the WAF proxy build the zone from rulesetStore.ts zoneRulesets,
// which gives the pinned version besides the current one; engine.ts runs it), the version
// the store refuses to delete because it is deployed.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DEMO_ACCOUNT, demoZoneId } from '../../server/src/service/seed';
import { startService, type TestService } from './harness';
import { duringTurns } from './putTurns';

const ACCOUNT = DEMO_ACCOUNT.id;
const ENT = demoZoneId('enterprise.example.com');
const CUSTOM = 'http_request_firewall_custom';
const TRACE = `/accounts/${ACCOUNT}/request-tracer/trace`;
const ZONE_ENTRY = `/zones/${ENT}/rulesets/phases/${CUSTOM}/entrypoint`;
const ACCOUNT_ENTRY = `/accounts/${ACCOUNT}/rulesets/phases/${CUSTOM}/entrypoint`;

let svc: TestService;
/** A custom ruleset whose version 1 blocks /one and version 2 blocks /two (one rule, ref `r`, the same id in both). */
let id: string;
before(async () => {
  svc = await startService();
  const made = await svc.call('POST', `/accounts/${ACCOUNT}/rulesets`, { body: { name: 'versioned', kind: 'custom', phase: CUSTOM, rules: [{ action: 'block', expression: 'http.request.uri.path eq "/one"', ref: 'r' }] } });
  assert.equal(made.status, 200, JSON.stringify(made.body));
  id = made.body.result.id;
  const v2 = await svc.call('PUT', `/accounts/${ACCOUNT}/rulesets/${id}`, { body: { rules: [{ action: 'block', expression: 'http.request.uri.path eq "/two"', ref: 'r' }] } });
  assert.equal(v2.body.result.version, '2');
});
after(() => svc.close());

const execute = (version?: string) => ({ action: 'execute', expression: 'true', action_parameters: { id, ...(version !== undefined ? { version } : {}) } });

describe('an execute rule that pins a version of a custom ruleset the ruleset does not have', () => {
  it('is refused at the pin, 400 and 20021, as a managed ruleset version is, and nothing is written', async () => {
    const before = await svc.call('GET', ACCOUNT_ENTRY);
    for (const dry of ['', '?dry_run=true']) {
      const r = await svc.call('PUT', `${ACCOUNT_ENTRY}${dry}`, { body: { rules: [execute('latest'), execute('99')] } });
      assert.equal(r.status, 400, JSON.stringify(r.body));
      assert.deepEqual(r.body.errors, [{ code: 20021, message: `custom ruleset 'versioned' (${id}) has no version 99 (its newest is 2)`, source: { pointer: '/rules/1/action_parameters/version' } }]);
    }
    assert.deepEqual((await svc.call('GET', ACCOUNT_ENTRY)).body, before.body);
  });

  it('is refused in a rule written alone (POST and PATCH of a rule), at its pin', async () => {
    const entry = await svc.call('PUT', ACCOUNT_ENTRY, { body: { rules: [execute('1')] } });
    assert.equal(entry.status, 200, JSON.stringify(entry.body));
    const rs = entry.body.result;
    const added = await svc.call('POST', `/accounts/${ACCOUNT}/rulesets/${rs.id}/rules`, { body: execute('3') });
    const patched = await svc.call('PATCH', `/accounts/${ACCOUNT}/rulesets/${rs.id}/rules/${rs.rules[0].id}`, { body: execute('0') });
    for (const [r, v] of [[added, '3'], [patched, '0']] as const) {
      assert.deepEqual([r.status, r.body.errors], [400, [{ code: 20021, message: `custom ruleset 'versioned' (${id}) has no version ${v} (its newest is 2)`, source: { pointer: '/action_parameters/version' } }]]);
    }
    assert.equal((await svc.call('GET', ACCOUNT_ENTRY)).body.result.version, rs.version);
  });

  it('is refused when that version is deleted while the write is checked: the last check is in the turn that writes', async () => {
    const made = await svc.call('POST', `/accounts/${ACCOUNT}/rulesets`, { body: { name: 'short-lived', kind: 'custom', phase: CUSTOM, rules: [{ action: 'block', expression: 'true' }] } });
    const other: string = made.body.result.id;
    assert.equal((await svc.call('PUT', `/accounts/${ACCOUNT}/rulesets/${other}`, { body: { rules: [{ action: 'log', expression: 'true' }] } })).status, 200);
    let deleted: number | undefined;
    // The PUT's rules are checked, then it lets other requests in (call 1) before the turn that writes.
    const r = await duringTurns(
      svc,
      async (call) => {
        if (call === 1) deleted = (await svc.call('DELETE', `/accounts/${ACCOUNT}/rulesets/${other}/versions/1`)).status;
      },
      () => svc.call('PUT', ACCOUNT_ENTRY, { body: { rules: [{ action: 'execute', expression: 'true', action_parameters: { id: other, version: '1' } }] } }),
    );
    assert.equal(deleted, 204);
    assert.deepEqual([r.status, r.body.errors], [400, [{ code: 20021, message: `custom ruleset 'short-lived' (${other}) has no version 1 (its newest is 2)`, source: { pointer: '/rules/0/action_parameters/version' } }]]);
  });

  it('takes a version it has, "latest" and no version; a version is its number as written ("01" is none)', async () => {
    const ok = await svc.call('PUT', ACCOUNT_ENTRY, { body: { rules: [execute('1')] } });
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    for (const v of ['2', 'latest', undefined]) {
      const r = await svc.call('PUT', ACCOUNT_ENTRY, { body: { rules: [execute(v)] } });
      assert.equal(r.status, 200, `${v}: ${JSON.stringify(r.body)}`);
    }
    const padded = await svc.call('PUT', ACCOUNT_ENTRY, { body: { rules: [execute('01')] } });
    assert.deepEqual([padded.status, padded.body.errors[0].message], [400, `custom ruleset 'versioned' (${id}) has no version 01 (its newest is 2)`]);
  });
});

/** The decision of a trace of `path` on the zone, and the executed rule's step (its expression and ruleset). */
async function trace(path: string): Promise<{ action: string; expression?: string; ruleset?: string }> {
  const t = await svc.call('POST', TRACE, { body: { url: `https://enterprise.example.com${path}`, method: 'GET' } });
  assert.equal(t.status, 200, JSON.stringify(t.body));
  type Step = { type: string; name: string; step_name: string; expression?: string; trace?: Step[] };
  const inside = (steps: Step[], parent?: Step): { step: Step; ruleset?: Step } | undefined => {
    for (const s of steps) {
      if (s.type === 'rule' && s.name === 'r') return { step: s, ...(parent ? { ruleset: parent } : {}) };
      const found = inside(s.trace ?? [], s.type === 'ruleset' ? s : parent);
      if (found) return found;
    }
    return undefined;
  };
  const r = inside(t.body.result.trace);
  return { action: t.body.result.decision.action, ...(r?.step.expression !== undefined ? { expression: r.step.expression } : {}), ...(r?.ruleset ? { ruleset: r.ruleset.step_name } : {}) };
}

describe('an execute rule that pins a version of a custom ruleset it has', () => {
  it('runs that version in the trace, the version the store will not delete because it is deployed', async () => {
    const entry = await svc.call('PUT', ZONE_ENTRY, { body: { rules: [execute('1')] } });
    assert.equal(entry.status, 200, JSON.stringify(entry.body));
    const deleteV1 = await svc.call('DELETE', `/accounts/${ACCOUNT}/rulesets/${id}/versions/1`);
    assert.deepEqual([deleteV1.status, deleteV1.body.errors[0].code], [400, 20030], 'version 1 is deployed');
    const one = { expression: 'http.request.uri.path eq "/one"', ruleset: id };
    assert.deepEqual(await trace('/one'), { action: 'block', ...one });
    // The trace shows the rule of the version that ran, not the current version's.
    assert.deepEqual(await trace('/two'), { action: 'allow-through', ...one });
  });

  it('the zone follows the pin when it changes, and runs the newest without one', async () => {
    const two = { expression: 'http.request.uri.path eq "/two"', ruleset: id };
    for (const pin of ['2', 'latest', undefined]) {
      const entry = await svc.call('PUT', ZONE_ENTRY, { body: { rules: [execute(pin)] } });
      assert.equal(entry.status, 200, JSON.stringify(entry.body));
      assert.deepEqual([await trace('/one'), await trace('/two')], [{ action: 'allow-through', ...two }, { action: 'block', ...two }], String(pin));
    }
    // Back to version 1: the compiled zone of before is not reused for what changed since.
    assert.equal((await svc.call('PUT', ZONE_ENTRY, { body: { rules: [execute('1')] } })).status, 200);
    assert.equal((await trace('/one')).action, 'block');
  });

  it('two execute rules of the zone may run two versions of it', async () => {
    const entry = await svc.call('PUT', ZONE_ENTRY, { body: { rules: [{ ...execute('1'), expression: 'http.request.method eq "GET"' }, execute('2')] } });
    assert.equal(entry.status, 200, JSON.stringify(entry.body));
    assert.equal((await trace('/one')).action, 'block');
    assert.equal((await trace('/two')).action, 'block');
    assert.equal((await trace('/three')).action, 'allow-through');
  });
});
