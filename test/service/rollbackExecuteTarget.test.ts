// Deleting a ruleset's newest version makes the version before it current: a rollback
// (docs/service.md "Deleting the newest version"). A ruleset still run by an execute rule
// cannot be deleted (rules-api.md §2), and a rule is never saved running a ruleset that was
// deleted; so a rollback to a version whose execute rule runs a custom ruleset, or a pinned
// version of one, deleted since is refused (400, 20021, naming the rule and what is gone),
// and the ruleset is left as it was. Otherwise the entry point would hold an execute rule of
// nothing, which the API refuses when it is sent back as it is (GET then PUT: Terraform).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DEMO_ACCOUNT, demoZoneId } from '../../server/src/service/seed';
import { startService, type TestService } from './harness';

const ACCOUNT = DEMO_ACCOUNT.id;
const BIZ = demoZoneId('business.example.com');
const CUSTOM = 'http_request_firewall_custom';
const ZONE_ENTRY = `/zones/${BIZ}/rulesets/phases/${CUSTOM}/entrypoint`;
const ACCOUNT_ENTRY = `/accounts/${ACCOUNT}/rulesets/phases/${CUSTOM}/entrypoint`;

let svc: TestService;
before(async () => {
  svc = await startService();
});
after(() => svc.close());

async function custom(name: string): Promise<string> {
  const r = await svc.call('POST', `/accounts/${ACCOUNT}/rulesets`, { body: { name, kind: 'custom', phase: CUSTOM, rules: [{ action: 'block', expression: 'http.request.uri.path eq "/x"' }] } });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body.result.id as string;
}

async function put(path: string, rules: unknown[]): Promise<{ id: string; version: string; rules: { id: string }[] }> {
  const r = await svc.call('PUT', path, { body: { rules } });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body.result;
}

const execute = (id: string, version?: string) => ({ action: 'execute', expression: 'true', action_parameters: { id, ...(version ? { version } : {}) } });

describe("deleting an entry point's newest version", () => {
  it('is refused when the version it would make current executes a custom ruleset deleted since', async () => {
    // v1 executes C1; v2 does not; C1 is deleted (nothing deploys it now); then v2 is deleted.
    const c1 = await custom('gone');
    const v1 = await put(ZONE_ENTRY, [{ action: 'log', expression: 'true' }, execute(c1)]);
    const v2 = await put(ZONE_ENTRY, []);
    assert.equal((await svc.call('DELETE', `/accounts/${ACCOUNT}/rulesets/${c1}`)).status, 204);
    for (const dry of ['?dry_run=true', '']) {
      const r = await svc.call('DELETE', `/zones/${BIZ}/rulesets/${v2.id}/versions/${v2.version}${dry}`);
      assert.deepEqual([r.status, r.body.errors], [
        400,
        [
          {
            code: 20021,
            message: `version ${v2.version} of ruleset 'default' (${v2.id}) cannot be deleted: it would make version ${v1.version} current, whose rule 2 (${v1.rules[1]!.id}) executes ruleset '${c1}', and no managed ruleset nor custom ruleset of the account has this id (deleted since). PUT the rules you want as a new version instead`,
          },
        ],
      ]);
    }
    const now = (await svc.call('GET', ZONE_ENTRY)).body.result;
    assert.deepEqual([now.version, now.rules.length], [v2.version, 0]);
    // An older version is no one's current: deleting it stays allowed.
    assert.equal((await svc.call('DELETE', `/zones/${BIZ}/rulesets/${v1.id}/versions/${v1.version}`)).status, 204);
  });

  it('is refused when the version it would make current pins a version of a custom ruleset deleted since', async () => {
    // v1 pins version 1 of C2, v2 pins version 2; version 1 of C2 is deleted; then v2 is deleted.
    const c2 = await custom('pinned');
    assert.equal((await svc.call('PUT', `/accounts/${ACCOUNT}/rulesets/${c2}`, { body: { rules: [{ action: 'block', expression: 'true' }] } })).status, 200);
    const v1 = await put(ACCOUNT_ENTRY, [execute(c2, '1')]);
    const v2 = await put(ACCOUNT_ENTRY, [execute(c2, '2')]);
    assert.equal((await svc.call('DELETE', `/accounts/${ACCOUNT}/rulesets/${c2}/versions/1`)).status, 204);
    const r = await svc.call('DELETE', `/accounts/${ACCOUNT}/rulesets/${v2.id}/versions/${v2.version}`);
    assert.deepEqual([r.status, r.body.errors], [
      400,
      [
        {
          code: 20021,
          message: `version ${v2.version} of ruleset 'default' (${v2.id}) cannot be deleted: it would make version ${v1.version} current, whose rule 1 (${v1.rules[0]!.id}) executes version 1 of custom ruleset 'pinned' (${c2}), deleted since: custom ruleset 'pinned' (${c2}) has no version 1 (its newest is 2). PUT the rules you want as a new version instead`,
        },
      ],
    ]);
    const now = (await svc.call('GET', ACCOUNT_ENTRY)).body.result;
    assert.deepEqual([now.version, now.rules.map((x: { action_parameters: { version: string } }) => x.action_parameters.version)], [v2.version, ['2']]);
  });

  it('goes through when what that version executes is all there: the previous version is current again', async () => {
    const c3 = await custom('kept');
    const v1 = await put(ZONE_ENTRY, [execute(c3, '1'), execute(c3)]);
    const v2 = await put(ZONE_ENTRY, []);
    assert.equal((await svc.call('DELETE', `/zones/${BIZ}/rulesets/${v2.id}/versions/${v2.version}`)).status, 204);
    const now = (await svc.call('GET', ZONE_ENTRY)).body.result;
    assert.deepEqual([now.version, now.rules.length], [v1.version, 2]);
  });
});
