// The Rulesets API over real HTTP: the official SDK for rulesets, phases (entry points),
// rules and versions; raw calls for every error (status, code, message, pointer) and for
// bad bodies, each of which must leave the store as it was.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { FREE_RULESET_ID, OWASP_RULESET_ID, VENDOR_RULESET_ID } from '../../server/src/rulesets/managedIds';
import { DEMO_ACCOUNT, demoZoneId } from '../../server/src/service/seed';
import { startService, type TestService } from './harness';

let svc: TestService;
before(async () => {
  svc = await startService();
});
after(() => svc.close());

const ACCOUNT = DEMO_ACCOUNT.id;
const ENT = demoZoneId('enterprise.example.com');
const BIZ = demoZoneId('business.example.com');
const PRO = demoZoneId('pro.example.com');
const CUSTOM = 'http_request_firewall_custom';
const MANAGED = 'http_request_firewall_managed';
const HEX32 = /^[0-9a-f]{32}$/;
const STAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/;

type AnyRuleset = { id: string; version: string; last_updated: string; rules: any[]; [k: string]: unknown };

/** Every row of both ruleset tables: a bad request must not change any. */
function storeSnapshot(): string {
  return JSON.stringify([svc.store.all('SELECT * FROM rulesets ORDER BY id'), svc.store.all('SELECT * FROM ruleset_versions ORDER BY ruleset_id, version'), svc.store.all('SELECT * FROM ruleset_rules ORDER BY ruleset_id, rule_id, from_version')]);
}

/** A raw call expected to fail: checks the whole error list and that the store did not change. */
async function refused(
  method: string,
  path: string,
  options: { body?: unknown; rawBody?: string; token?: string; headers?: Record<string, string> },
  status: number,
  errors: readonly { code: number; message: string; source?: { pointer: string } }[],
): Promise<void> {
  const before = storeSnapshot();
  const r = await svc.call(method, path, options);
  assert.equal(r.status, status, JSON.stringify(r.body));
  assert.deepEqual(r.body, { result: null, success: false, errors, messages: [] });
  assert.equal(storeSnapshot(), before, 'the store changed');
}

const zonePath = (zone: string, rest = '') => `/zones/${zone}/rulesets${rest}`;
const entry = (zone: string, phase = CUSTOM) => zonePath(zone, `/phases/${phase}/entrypoint`);

describe('entry points with the SDK (phases)', () => {
  it('GET of a missing entry point is 404 with 10003; its versions list is empty', async () => {
    await refused('GET', entry(BIZ, 'http_ratelimit'), {}, 404, [{ code: 10003, message: 'could not find entrypoint ruleset in the http_ratelimit phase' }]);
    const versions = await svc.call('GET', `${entry(BIZ, 'http_ratelimit')}/versions`);
    assert.deepEqual([versions.status, versions.body.result], [200, []]);
    const cf = svc.sdk();
    const list = [];
    for await (const v of cf.rulesets.phases.versions.list('http_ratelimit', { zone_id: BIZ })) list.push(v);
    assert.deepEqual(list, []);
  });

  it('PUT creates the entry point ("default"), then keeps ids by ref and bumps only changed rules', async () => {
    const cf = svc.sdk();
    const first = (await cf.rulesets.phases.update(CUSTOM, {
      zone_id: ENT,
      rules: [
        { action: 'block', expression: '(http.request.uri.path eq "/admin")', description: 'Block admin', ref: 'admin' },
        { action: 'managed_challenge', expression: '(ip.src.country in {"T1"})', ref: 'tor' },
      ],
    })) as unknown as AnyRuleset;
    assert.equal(first.name, 'default');
    assert.equal(first.kind, 'zone');
    assert.equal(first.phase, CUSTOM);
    assert.equal(first.version, '1');
    assert.equal(first.description, '');
    assert.match(first.id, HEX32);
    assert.match(first.last_updated, STAMP);
    assert.deepEqual(Object.keys(first.rules[0]), ['id', 'version', 'action', 'expression', 'description', 'last_updated', 'ref', 'enabled']);
    assert.deepEqual(
      first.rules.map((r) => [r.action, r.ref, r.version, r.enabled, r.description]),
      [
        ['block', 'admin', '1', true, 'Block admin'],
        ['managed_challenge', 'tor', '1', true, ''],
      ],
    );

    const second = (await cf.rulesets.phases.update(CUSTOM, {
      zone_id: ENT,
      description: 'Custom rules',
      rules: [
        { action: 'managed_challenge', expression: '(ip.src.country in {"T1"})', ref: 'tor' },
        { action: 'block', expression: '(http.request.uri.path eq "/admin") or (http.request.uri.path eq "/wp-admin")', description: 'Block admin', ref: 'admin' },
        { action: 'log', expression: 'true' },
      ],
    })) as unknown as AnyRuleset;
    assert.equal(second.id, first.id);
    assert.equal(second.version, '2');
    assert.equal(second.description, 'Custom rules');
    assert.ok(second.last_updated > first.last_updated);
    const [tor, admin, log] = second.rules;
    // Moved but unchanged: same id, version and last_updated.
    assert.deepEqual([tor.id, tor.version, tor.last_updated], [first.rules[1].id, '1', first.rules[1].last_updated]);
    // Changed: same id, version 2, new last_updated.
    assert.deepEqual([admin.id, admin.version, admin.last_updated], [first.rules[0].id, '2', second.last_updated]);
    // New, without ref: the ref is its id.
    assert.equal(log.ref, log.id);
    assert.equal(log.version, '1');

    const got = (await cf.rulesets.phases.get(CUSTOM, { zone_id: ENT })) as unknown as AnyRuleset;
    assert.deepEqual(got, second);

    const versions = [];
    for await (const v of cf.rulesets.phases.versions.list(CUSTOM, { zone_id: ENT })) versions.push(v);
    assert.deepEqual(
      versions.map((v) => [v.id, v.version, v.name, v.kind, v.phase, v.last_updated, (v as { rules?: unknown }).rules]),
      [
        [first.id, '1', 'default', 'zone', CUSTOM, first.last_updated, undefined],
        [first.id, '2', 'default', 'zone', CUSTOM, second.last_updated, undefined],
      ],
    );
    const v1 = (await cf.rulesets.phases.versions.get('1', { zone_id: ENT, ruleset_phase: CUSTOM })) as unknown as AnyRuleset;
    assert.deepEqual(v1, first);
    await refused('GET', `${entry(ENT)}/versions/9`, {}, 404, [{ code: 10007, message: `version 9 of the ${CUSTOM} entry point not found` }]);
  });

  it('tolerates "id": "", "version": "" and "ref": "" on rules (as the migration config sends them)', async () => {
    const r = await svc.call('PUT', entry(ENT, 'http_request_sbfm'), {
      body: { rules: [{ id: '', version: '', ref: '', action: 'log', expression: 'true', enabled: false, description: 'x' }] },
    });
    assert.equal(r.status, 200);
    const rule = r.body.result.rules[0];
    assert.match(rule.id, HEX32);
    assert.deepEqual([rule.ref, rule.version, rule.enabled], [rule.id, '1', false]);
  });

  it('takes the version and last_updated a GET returned (read-only, ignored) so GET-edit-PUT works', async () => {
    const cf = svc.sdk();
    const got = (await cf.rulesets.phases.get(CUSTOM, { zone_id: ENT })) as unknown as AnyRuleset;
    const put = await svc.call('PUT', entry(ENT), { body: { rules: got.rules } });
    assert.equal(put.status, 200);
    assert.equal(put.body.result.version, String(Number(got.version) + 1));
    assert.deepEqual(put.body.result.rules, got.rules);
  });

  it('a rule id that is not in the ruleset is not taken: the rule is new', async () => {
    const id = 'ab'.repeat(16);
    const r = await svc.call('PUT', entry(ENT, 'http_ratelimit'), {
      body: { rules: [{ id, action: 'block', expression: 'true', ratelimit: { characteristics: ['ip.src', 'cf.colo.id'], period: 60, requests_per_period: 100, mitigation_timeout: 600 } }] },
    });
    assert.equal(r.status, 200);
    assert.notEqual(r.body.result.rules[0].id, id);
    assert.deepEqual(r.body.result.rules[0].ratelimit, { characteristics: ['ip.src', 'cf.colo.id'], period: 60, requests_per_period: 100, mitigation_timeout: 600 });
  });
});

describe('rulesets with the SDK', () => {
  let custom: AnyRuleset;

  it('creates an account custom ruleset and gets it', async () => {
    const cf = svc.sdk();
    custom = (await cf.rulesets.create({
      account_id: ACCOUNT,
      name: 'Shared blocks',
      kind: 'custom',
      phase: CUSTOM,
      description: 'Blocks shared by every zone',
      rules: [{ action: 'block', expression: 'http.request.uri.path contains "/.env"', ref: 'env' }],
    })) as unknown as AnyRuleset;
    assert.deepEqual(
      [custom.name, custom.kind, custom.phase, custom.version, custom.description, custom.rules.length],
      ['Shared blocks', 'custom', CUSTOM, '1', 'Blocks shared by every zone', 1],
    );
    const got = await cf.rulesets.get(custom.id, { account_id: ACCOUNT });
    assert.deepEqual(got, custom);
  });

  it('lists managed and custom rulesets without rules, page by page with the cursor', async () => {
    const cf = svc.sdk();
    await cf.rulesets.create({ account_id: ACCOUNT, name: 'Another', kind: 'custom', phase: CUSTOM });
    const seen: string[] = [];
    for await (const r of cf.rulesets.list({ account_id: ACCOUNT, per_page: 1 })) {
      assert.equal((r as { rules?: unknown }).rules, undefined);
      seen.push(`${r.kind} ${r.name}`);
    }
    assert.deepEqual(seen, ['custom Another', 'managed Cloudflare Free Managed Ruleset', 'managed Cloudflare Managed Ruleset', 'managed Cloudflare OWASP Core Ruleset', 'custom Shared blocks']);
    const page = await svc.call('GET', `/accounts/${ACCOUNT}/rulesets?per_page=4`);
    assert.equal(page.body.result.length, 4);
    assert.equal(page.body.result_info.per_page, 4);
    assert.equal(page.body.result_info.count, 4);
    assert.equal(page.body.result_info.cursor, page.body.result_info.cursors.after);
    const last = await svc.call('GET', `/accounts/${ACCOUNT}/rulesets?per_page=4&cursor=${page.body.result_info.cursor}`);
    assert.deepEqual(last.body.result.map((r: { name: string }) => r.name), ['Shared blocks']);
    assert.deepEqual(last.body.result_info, { per_page: 4, count: 1 });
    assert.deepEqual(Object.keys(last.body.result[0]), ['id', 'name', 'description', 'kind', 'version', 'last_updated', 'phase']);
  });

  it('update replaces the rules; versions list/get/delete; numbers are not reused', async () => {
    const cf = svc.sdk();
    const v2 = (await cf.rulesets.update(custom.id, {
      account_id: ACCOUNT,
      rules: [
        { action: 'block', expression: 'http.request.uri.path contains "/.env"', ref: 'env' },
        { action: 'block', expression: 'http.request.uri.path contains "/.git"', ref: 'git' },
      ],
    })) as unknown as AnyRuleset;
    assert.equal(v2.version, '2');
    assert.equal(v2.description, 'Blocks shared by every zone');
    assert.deepEqual([v2.rules[0].id, v2.rules[0].version], [custom.rules[0].id, '1']);
    const v3 = (await cf.rulesets.update(custom.id, { account_id: ACCOUNT, rules: [{ action: 'block', expression: 'true', ref: 'env' }], description: 'All' })) as unknown as AnyRuleset;
    assert.deepEqual([v3.version, v3.description, v3.rules[0].id, v3.rules[0].version], ['3', 'All', custom.rules[0].id, '2']);

    const headers = [];
    for await (const v of cf.rulesets.versions.list(custom.id, { account_id: ACCOUNT })) headers.push(v.version);
    assert.deepEqual(headers, ['1', '2', '3']);
    const got2 = await cf.rulesets.versions.get('2', { account_id: ACCOUNT, ruleset_id: custom.id });
    assert.deepEqual(got2, v2);

    await cf.rulesets.versions.delete('2', { account_id: ACCOUNT, ruleset_id: custom.id });
    const after = [];
    for await (const v of cf.rulesets.versions.list(custom.id, { account_id: ACCOUNT })) after.push(v.version);
    assert.deepEqual(after, ['1', '3']);
    await refused('GET', `/accounts/${ACCOUNT}/rulesets/${custom.id}/versions/2`, {}, 404, [{ code: 10007, message: `version 2 of ruleset '${custom.id}' not found` }]);
    const v4 = (await cf.rulesets.update(custom.id, { account_id: ACCOUNT, rules: v3.rules as never })) as unknown as AnyRuleset;
    assert.equal(v4.version, '4');
    custom = v4;
  });

  it('the SDK, which reads a versions list as one page, sees every version past the 50th, the current one included', async () => {
    const cf = svc.sdk();
    const made = (await cf.rulesets.create({ account_id: ACCOUNT, name: 'many versions', kind: 'custom', phase: CUSTOM, rules: [] })) as unknown as AnyRuleset;
    for (let i = 0; i < 59; i++) await cf.rulesets.update(made.id, { account_id: ACCOUNT, rules: [{ action: 'block', expression: `http.host eq "h${i}.example.com"` }] });
    const versions = [];
    for await (const v of cf.rulesets.versions.list(made.id, { account_id: ACCOUNT })) versions.push(Number(v.version));
    assert.deepEqual(versions, Array.from({ length: 60 }, (_, i) => i + 1));
    await cf.rulesets.delete(made.id, { account_id: ACCOUNT });
  });

  it('a custom ruleset deployed by an execute rule cannot be deleted; then it can (204)', async () => {
    const cf = svc.sdk();
    const root = await svc.call('PUT', `/accounts/${ACCOUNT}/rulesets/phases/${CUSTOM}/entrypoint`, {
      body: { rules: [{ action: 'execute', expression: 'true', action_parameters: { id: custom.id }, ref: 'deploy' }] },
    });
    assert.equal(root.status, 200, JSON.stringify(root.body));
    assert.equal(root.body.result.kind, 'root');
    const ruleId = root.body.result.rules[0].id;
    const used = `ruleset 'Shared blocks' (${custom.id}) is deployed by rule ${ruleId} of ruleset 'default' (${root.body.result.id}: the http_request_firewall_custom entry point of the account); change or delete that execute rule first`;
    await refused('DELETE', `/accounts/${ACCOUNT}/rulesets/${custom.id}`, {}, 400, [{ code: 20030, message: used }]);
    await refused('DELETE', `/accounts/${ACCOUNT}/rulesets/${custom.id}/versions/4`, {}, 400, [
      { code: 20030, message: `version 4 of ruleset 'Shared blocks' (${custom.id}) is deployed by rule ${ruleId} of ruleset 'default' (${root.body.result.id}: the http_request_firewall_custom entry point of the account); change or delete that execute rule first` },
    ]);
    // An older version is not deployed: it can go.
    const old = await svc.call('DELETE', `/accounts/${ACCOUNT}/rulesets/${custom.id}/versions/1`);
    assert.deepEqual([old.status, old.body], [204, undefined]);

    await cf.rulesets.phases.update(CUSTOM, { account_id: ACCOUNT, rules: [] });
    // dry_run: 204, nothing deleted.
    const dry = await svc.call('DELETE', `/accounts/${ACCOUNT}/rulesets/${custom.id}?dry_run=true`);
    assert.deepEqual([dry.status, dry.body], [204, undefined]);
    assert.equal(((await cf.rulesets.get(custom.id, { account_id: ACCOUNT })) as unknown as AnyRuleset).version, '4');
    await cf.rulesets.delete(custom.id, { account_id: ACCOUNT });
    await refused('GET', `/accounts/${ACCOUNT}/rulesets/${custom.id}`, {}, 404, [{ code: 10007, message: `could not find ruleset '${custom.id}'` }]);
    await refused('GET', `/accounts/${ACCOUNT}/rulesets/${custom.id}/versions`, {}, 404, [{ code: 10007, message: `could not find ruleset '${custom.id}'` }]);
  });

  it('zone entry points via POST: one per phase (20217 on /kind)', async () => {
    const cf = svc.sdk();
    const created = (await cf.rulesets.create({ zone_id: BIZ, name: 'Zone custom rules', kind: 'zone', phase: CUSTOM, rules: [] })) as unknown as AnyRuleset;
    assert.deepEqual([created.kind, created.name, created.version, created.rules], ['zone', 'Zone custom rules', '1', []]);
    await refused('POST', zonePath(BIZ), { body: { name: 'again', kind: 'zone', phase: CUSTOM } }, 400, [
      { code: 20217, message: `'zone' is not a valid value for kind because exceeded maximum number of zone rulesets for phase ${CUSTOM}`, source: { pointer: '/kind' } },
    ]);
    await refused('POST', `/accounts/${ACCOUNT}/rulesets`, { body: { name: 'again', kind: 'root', phase: CUSTOM } }, 400, [
      { code: 20217, message: `'root' is not a valid value for kind because exceeded maximum number of root rulesets for phase ${CUSTOM}`, source: { pointer: '/kind' } },
    ]);
    const got = (await cf.rulesets.phases.get(CUSTOM, { zone_id: BIZ })) as unknown as AnyRuleset;
    assert.equal(got.id, created.id);
  });

  it('managed rulesets are listed at zone level, show categories and no expression, and cannot be changed', async () => {
    const cf = svc.sdk();
    const names = [];
    for await (const r of cf.rulesets.list({ zone_id: PRO })) names.push(`${r.kind} ${r.id}`);
    assert.deepEqual(names, [`managed ${FREE_RULESET_ID}`, `managed ${VENDOR_RULESET_ID}`, `managed ${OWASP_RULESET_ID}`]);
    const owasp = (await cf.rulesets.get(OWASP_RULESET_ID, { zone_id: PRO })) as unknown as AnyRuleset;
    assert.equal(owasp.kind, 'managed');
    assert.equal(owasp.phase, MANAGED);
    assert.ok(owasp.rules.length > 100);
    for (const r of owasp.rules) {
      assert.equal(r.expression, undefined);
      // Every rule carries its categories (managedRulesets.test.ts checks the anomaly rule's).
      assert.ok(Array.isArray(r.categories) && r.categories.length > 0, r.id);
    }
    const tagged = await svc.call('GET', `/accounts/${ACCOUNT}/rulesets/${OWASP_RULESET_ID}/versions/${owasp.version}/by_tag/paranoia-level-4`);
    assert.ok(tagged.body.result.rules.length > 0);
    assert.ok(tagged.body.result.rules.every((r: { categories: string[] }) => r.categories.includes('paranoia-level-4')));
    const vendorVersions = [];
    for await (const v of cf.rulesets.versions.list(VENDOR_RULESET_ID, { zone_id: PRO })) vendorVersions.push(v.version);
    assert.deepEqual(vendorVersions, ['1', '2']);
    const readOnly = `Cloudflare OWASP Core Ruleset (${OWASP_RULESET_ID}) is a managed ruleset: it cannot be changed or deleted. Deploy it with an execute rule in a ${MANAGED} entry point and tune it with overrides.`;
    await refused('PUT', zonePath(PRO, `/${OWASP_RULESET_ID}`), { body: { rules: [] } }, 403, [{ code: 20031, message: readOnly }]);
    await refused('DELETE', zonePath(PRO, `/${OWASP_RULESET_ID}`), {}, 403, [{ code: 20031, message: readOnly }]);
    await refused('POST', zonePath(PRO, `/${OWASP_RULESET_ID}/rules`), { body: { action: 'log', expression: 'true' } }, 403, [{ code: 20031, message: readOnly }]);
    await refused('DELETE', zonePath(PRO, `/${OWASP_RULESET_ID}/versions/1`), {}, 403, [{ code: 20031, message: readOnly }]);
  });
});

describe('rules with the SDK: create with position, edit, delete', () => {
  let rs: AnyRuleset;
  const ids = () => rs.rules.map((r) => r.ref);

  before(async () => {
    const cf = svc.sdk();
    rs = (await cf.rulesets.phases.update(CUSTOM, {
      zone_id: PRO,
      rules: [
        { action: 'block', expression: 'http.host eq "a.example"', ref: 'a' },
        { action: 'block', expression: 'http.host eq "b.example"', ref: 'b' },
      ],
    })) as unknown as AnyRuleset;
  });

  it('appends by default and places with before / after / index', async () => {
    const cf = svc.sdk();
    const add = async (ref: string, position?: object) =>
      (rs = (await cf.rulesets.rules.create(rs.id, { zone_id: PRO, action: 'managed_challenge', expression: `http.host eq "${ref}.example"`, ref, ...(position ? { position } : {}) } as never)) as unknown as AnyRuleset);
    const v = Number(rs.version);
    await add('end');
    assert.deepEqual(ids(), ['a', 'b', 'end']);
    await add('first', { before: '' });
    assert.deepEqual(ids(), ['first', 'a', 'b', 'end']);
    await add('last', { after: '' });
    assert.deepEqual(ids(), ['first', 'a', 'b', 'end', 'last']);
    const b = rs.rules.find((r) => r.ref === 'b')!.id;
    await add('before-b', { before: b });
    assert.deepEqual(ids(), ['first', 'a', 'before-b', 'b', 'end', 'last']);
    await add('after-b', { after: b });
    assert.deepEqual(ids(), ['first', 'a', 'before-b', 'b', 'after-b', 'end', 'last']);
    await add('second', { index: 2 });
    assert.deepEqual(ids(), ['first', 'second', 'a', 'before-b', 'b', 'after-b', 'end', 'last']);
    await add('ninth', { index: 9 });
    assert.deepEqual(ids(), ['first', 'second', 'a', 'before-b', 'b', 'after-b', 'end', 'last', 'ninth']);
    assert.equal(rs.version, String(v + 7));
    // Rules already there keep their version and last_updated.
    assert.equal(rs.rules.find((r) => r.ref === 'a')!.version, '1');
  });

  it('PATCH replaces the rule (version +1); a position-only PATCH moves it and keeps its version', async () => {
    const cf = svc.sdk();
    const a = rs.rules.find((r) => r.ref === 'a')!;
    rs = (await cf.rulesets.rules.edit(a.id, { zone_id: PRO, ruleset_id: rs.id, action: 'block', expression: 'http.host eq "a.example.org"', enabled: false } as never)) as unknown as AnyRuleset;
    const edited = rs.rules.find((r) => r.id === a.id)!;
    assert.deepEqual(
      [edited.ref, edited.version, edited.enabled, edited.expression, edited.description, edited.last_updated],
      ['a', '2', false, 'http.host eq "a.example.org"', '', rs.last_updated],
    );
    const before = rs.version;
    rs = (await cf.rulesets.rules.edit(a.id, { zone_id: PRO, ruleset_id: rs.id, position: { index: 1 } } as never)) as unknown as AnyRuleset;
    assert.equal(rs.version, String(Number(before) + 1));
    assert.equal(ids()[0], 'a');
    assert.deepEqual(rs.rules[0], edited);
    const last = rs.rules[rs.rules.length - 1]!.id;
    rs = (await cf.rulesets.rules.edit(a.id, { zone_id: PRO, ruleset_id: rs.id, position: { after: last } } as never)) as unknown as AnyRuleset;
    assert.equal(ids()[ids().length - 1], 'a');
    // The same rule with a position and a new definition.
    rs = (await cf.rulesets.rules.edit(a.id, { zone_id: PRO, ruleset_id: rs.id, action: 'block', expression: 'true', ref: 'a2', position: { before: '' } } as never)) as unknown as AnyRuleset;
    assert.deepEqual([rs.rules[0].id, rs.rules[0].ref, rs.rules[0].version, rs.rules[0].enabled], [a.id, 'a2', '3', true]);
  });

  it('a description in any script comes back as sent, its answer measured in bytes', async () => {
    const description = 'Règle ☕ 規則 😀';
    const made = await svc.call('POST', `${zonePath(PRO)}/${rs.id}/rules`, { body: { action: 'block', expression: 'http.host eq "u.example"', description, ref: 'unicode' } });
    assert.equal(made.status, 200, JSON.stringify(made.body));
    const got = await svc.call('GET', entry(PRO));
    const rule = (got.body.result as AnyRuleset).rules.find((r) => r.ref === 'unicode');
    assert.equal(rule.description, description);
    // The ruleset's bytes are sent between the envelope's two ends: the length counts all three.
    assert.equal(Number(got.headers.get('content-length')), Buffer.byteLength(JSON.stringify(got.body)));
    rs = (await svc.call('DELETE', `${zonePath(PRO)}/${rs.id}/rules/${rule.id}`)).body.result as AnyRuleset;
  });

  it('DELETE removes a rule and returns the whole ruleset (new version)', async () => {
    const cf = svc.sdk();
    const b = rs.rules.find((r) => r.ref === 'b')!;
    const before = rs.version;
    rs = (await cf.rulesets.rules.delete(b.id, { zone_id: PRO, ruleset_id: rs.id })) as unknown as AnyRuleset;
    assert.equal(rs.version, String(Number(before) + 1));
    assert.ok(!rs.rules.some((r) => r.id === b.id));
    await refused('DELETE', zonePath(PRO, `/${rs.id}/rules/${b.id}`), {}, 404, [{ code: 10007, message: `rule '${b.id}' in ruleset '${rs.id}' not found` }]);
  });

  it('position errors', async () => {
    const base = zonePath(PRO, `/${rs.id}/rules`);
    const rule = { action: 'block', expression: 'true' };
    const n = rs.rules.length;
    await refused('POST', base, { body: { ...rule, position: { index: n + 2 } } }, 400, [
      { code: 20021, message: `'${n + 2}' is not a valid value for index: the ruleset has ${n} other rules, so the index goes from 1 to ${n + 1}`, source: { pointer: '/position/index' } },
    ]);
    await refused('POST', base, { body: { ...rule, position: { index: 0 } } }, 400, [{ code: 20021, message: "'0' is not a valid value for index: positions start at 1", source: { pointer: '/position/index' } }]);
    await refused('POST', base, { body: { ...rule, position: { before: '', after: '' } } }, 400, [
      { code: 20021, message: 'position needs exactly one of "before", "after" or "index", got "before" and "after"', source: { pointer: '/position' } },
    ]);
    await refused('POST', base, { body: { ...rule, position: { before: 'nope' } } }, 400, [
      { code: 20021, message: `'nope' is not a valid value for before: expected a rule id (32 lowercase hexadecimal characters) or ""`, source: { pointer: '/position/before' } },
    ]);
    const missing = 'cd'.repeat(16);
    await refused('POST', base, { body: { ...rule, position: { after: missing } } }, 400, [
      { code: 20021, message: `'${missing}' is not a valid value for after: the ruleset has no rule with this id`, source: { pointer: '/position/after' } },
    ]);
    await refused('POST', base, { body: { ...rule, position: { top: true } } }, 400, [{ code: 10026, message: 'invalid JSON: unknown field "top"', source: { pointer: '/position/top' } }]);
    await refused('POST', base, { body: { ...rule, position: { index: '1' } } }, 400, [{ code: 10026, message: 'invalid JSON: field "index" must be an integer, got string', source: { pointer: '/position/index' } }]);
    const first = rs.rules[0]!.id;
    await refused('PATCH', `${base}/${first}`, { body: { position: { before: first } } }, 400, [
      { code: 20021, message: `'${first}' is not a valid value for before: a rule cannot be placed relative to itself`, source: { pointer: '/position/before' } },
    ]);
  });

  it('refs are unique; PATCH of an unknown rule is 404', async () => {
    const base = zonePath(PRO, `/${rs.id}/rules`);
    const taken = rs.rules[1]!;
    await refused('POST', base, { body: { action: 'block', expression: 'true', ref: taken.ref } }, 400, [
      { code: 20021, message: `'${taken.ref}' is not a valid value for ref because rule 2 (${taken.id}) already has it: a ref is unique within a ruleset`, source: { pointer: '/ref' } },
    ]);
    await refused('PATCH', `${base}/${rs.rules[0]!.id}`, { body: { action: 'block', expression: 'true', ref: taken.ref } }, 400, [
      { code: 20021, message: `'${taken.ref}' is not a valid value for ref because rule 1 (${taken.id}) already has it: a ref is unique within a ruleset`, source: { pointer: '/ref' } },
    ]);
    await refused('PUT', entry(PRO), { body: { rules: [{ action: 'block', expression: 'true', ref: 'x' }, { action: 'log', expression: 'true', ref: 'x' }] } }, 400, [
      { code: 20021, message: "'x' is not a valid value for ref because rule 1 already has it: a ref is unique within a ruleset", source: { pointer: '/rules/1/ref' } },
    ]);
    const missing = 'ef'.repeat(16);
    await refused('PATCH', `${base}/${missing}`, { body: { action: 'block', expression: 'true' } }, 404, [{ code: 10007, message: `rule '${missing}' in ruleset '${rs.id}' not found` }]);
  });
});

describe('dry_run', () => {
  it('validates everything, answers null (or 204) and changes nothing', async () => {
    const cf = svc.sdk();
    const rs = (await cf.rulesets.phases.get(CUSTOM, { zone_id: PRO })) as unknown as AnyRuleset;
    const before = storeSnapshot();
    assert.equal(await cf.rulesets.phases.update(CUSTOM, { zone_id: PRO, rules: [], dry_run: true }), null);
    assert.equal(await cf.rulesets.rules.create(rs.id, { zone_id: PRO, action: 'block', expression: 'true', dry_run: true } as never), null);
    assert.equal(await cf.rulesets.rules.edit(rs.rules[0].id, { zone_id: PRO, ruleset_id: rs.id, action: 'log', expression: 'true', dry_run: true } as never), null);
    assert.equal(await cf.rulesets.rules.delete(rs.rules[0].id, { zone_id: PRO, ruleset_id: rs.id, dry_run: true }), null);
    assert.equal(await cf.rulesets.create({ account_id: ACCOUNT, name: 'dry', kind: 'custom', phase: CUSTOM, dry_run: true }), null);
    assert.equal(await cf.rulesets.update(rs.id, { zone_id: PRO, rules: [], dry_run: true }), null);
    const del = await svc.call('DELETE', zonePath(PRO, `/${rs.id}?dry_run=true`));
    assert.equal(del.status, 204);
    assert.equal(storeSnapshot(), before);
  });

  it('still refuses what is invalid; dry_run takes only true or false', async () => {
    await refused('PUT', `${entry(PRO)}?dry_run=true`, { body: { rules: [{ action: 'allow', expression: 'true' }] } }, 400, [
      { code: 20021, message: 'unknown variant for action: allow', source: { pointer: '/rules/0/action' } },
    ]);
    await refused('PUT', `${entry(PRO)}?dry_run=yes`, { body: { rules: [] } }, 400, [{ code: 20021, message: "'yes' is not a valid value for dry_run: expected true or false" }]);
  });

  it('runs the WAF migration hook without keeping its state change', async () => {
    const before = storeSnapshot();
    const migrationBefore = svc.store.all('SELECT * FROM waf_migration');
    const r = await svc.call('PUT', `${entry(BIZ, MANAGED)}?waf_migration=pending&phase_two=1&dry_run=true`, {
      body: { rules: [{ action: 'execute', expression: 'true', action_parameters: { id: VENDOR_RULESET_ID } }] },
    });
    assert.deepEqual([r.status, r.body.result], [200, null]);
    assert.equal(storeSnapshot(), before);
    assert.deepEqual(svc.store.all('SELECT * FROM waf_migration'), migrationBefore);
  });
});

describe('the WAF migration hook on the managed entry point', () => {
  it('a Business zone before migrating may save only disabled rules without waf_migration', async () => {
    const rule = { action: 'execute', expression: 'true', action_parameters: { id: VENDOR_RULESET_ID } };
    const refusedPut = await svc.call('PUT', entry(BIZ, MANAGED), { body: { rules: [rule] } });
    assert.equal(refusedPut.status, 400);
    assert.equal(refusedPut.body.errors[0].code, 20616);
    assert.equal(refusedPut.body.errors[0].source.pointer, '/rules/0/enabled');
    const ok = await svc.call('PUT', entry(BIZ, MANAGED), { body: { rules: [{ ...rule, enabled: false }] } });
    assert.equal(ok.status, 200);
    assert.equal(ok.body.result.rules[0].enabled, false);
  });
});

describe('validation errors, in the engine wording', () => {
  const put = (rules: unknown[], zone = ENT, phase = CUSTOM) => ({ path: entry(zone, phase), body: { rules } });

  it('expressions: parse errors with line:column and carets, blank, plan and phase', async () => {
    let p = put([{ action: 'block', expression: 'http.host eq "a" and\nhttp.request.uri.path matches "(a"' }]);
    await refused('PUT', p.path, { body: p.body }, 400, [
      {
        code: 20021,
        message:
          '\'http.host eq "a" and\nhttp.request.uri.path matches "(a"\' is not a valid value for expression because could not parse filter expression: Filter parsing error (2:31):\nhttp.request.uri.path matches "(a"\n                              ^^^^ unclosed group\n',
        source: { pointer: '/rules/0/expression' },
      },
    ]);
    p = put([{ action: 'block', expression: 'http.host eq 80' }]);
    await refused('PUT', p.path, { body: p.body }, 400, [
      {
        code: 20021,
        message: "'http.host eq 80' is not a valid value for expression because could not parse filter expression: Filter parsing error (1:16):\nhttp.host eq 80\n               ^ expected 1 characters, but found 0\n",
        source: { pointer: '/rules/0/expression' },
      },
    ]);
    p = put([{ action: 'block', expression: 'true' }, { action: 'block', expression: '' }, { action: 'block' }]);
    await refused('PUT', p.path, { body: p.body }, 400, [
      { code: 20125, message: "'' is not a valid value for expression because the expression cannot be blank", source: { pointer: '/rules/1/expression' } },
      { code: 20125, message: "'' is not a valid value for expression because the expression cannot be blank", source: { pointer: '/rules/2/expression' } },
    ]);
    p = put([{ action: 'block', expression: 'cf.waf.score lt 20' }], PRO);
    await refused('PUT', p.path, { body: p.body }, 400, [
      {
        code: 20021,
        message: "'cf.waf.score lt 20' is not a valid value for expression because it uses what this ruleset cannot: Filter error (1:1):\ncf.waf.score lt 20\n^^^^^^^^^^^^ `cf.waf.score` requires the Enterprise plan or above\n",
        source: { pointer: '/rules/0/expression' },
      },
    ]);
    p = put([{ action: 'block', expression: 'http.response.code eq 403' }]);
    await refused('PUT', p.path, { body: p.body }, 400, [
      {
        code: 20021,
        message:
          "'http.response.code eq 403' is not a valid value for expression because it uses what this ruleset cannot: Filter error (1:1):\nhttp.response.code eq 403\n^^^^^^^^^^^^^^^^^^ the field `http.response.code` is not available in phase http_request_firewall_custom\n",
        source: { pointer: '/rules/0/expression' },
      },
    ]);
  });

  it('actions: unknown variant, not in the phase, parameters per action, logging only with skip', async () => {
    let p = put([{ action: 'allow', expression: 'true' }]);
    await refused('PUT', p.path, { body: p.body }, 400, [{ code: 20021, message: 'unknown variant for action: allow', source: { pointer: '/rules/0/action' } }]);
    p = put([{ action: 'block', expression: 'true' }], ENT, MANAGED);
    await refused('PUT', p.path, { body: p.body }, 400, [
      {
        code: 20021,
        message: "'block' is not a valid value for Action because it is not possible to use the block action in a ruleset with phase http_request_firewall_managed and kind zone",
        source: { pointer: '/rules/0/action' },
      },
    ]);
    p = put([{ action: 'block', expression: 'true', logging: { enabled: false } }]);
    await refused('PUT', p.path, { body: p.body }, 400, [{ code: 20018, message: 'logging options only allowed in the skip action', source: { pointer: '/rules/0/logging' } }]);
    p = put([{ action: 'block', expression: 'true', action_parameters: { ruleset: 'current' } }]);
    await refused('PUT', p.path, { body: p.body }, 400, [{ code: 10026, message: 'invalid JSON: unknown field "ruleset"', source: { pointer: '/rules/0/action_parameters/ruleset' } }]);
    p = put([{ action_parameters: { ruleset: 'current' }, expression: 'true' }]);
    await refused('PUT', p.path, { body: p.body }, 400, [{ code: 20021, message: 'action is required for action parameters', source: { pointer: '/rules/0' } }]);
    p = put([{ action: 'block', expression: 'true', action_parameters: { response: { status_code: 200, content: 'no', content_type: 'text/plain' } } }]);
    await refused('PUT', p.path, { body: p.body }, 400, [
      { code: 20021, message: "'200' is not a valid value for status_code: a block response uses a status code from 400 to 499", source: { pointer: '/rules/0/action_parameters/response/status_code' } },
    ]);
    // A block response's content: at most 2 KB (the hosted limit for custom rules), in bytes, not quoted back.
    p = put([{ action: 'block', expression: 'true', action_parameters: { response: { status_code: 403, content: 'x'.repeat(7 * 1024 * 1024), content_type: 'text/plain' } } }]);
    await refused('PUT', p.path, { body: p.body }, 400, [
      {
        code: 20021,
        message: "a content of 7340032 bytes is not a valid value for content: a block response's content is at most 2048 bytes (2 KB) in custom rules",
        source: { pointer: '/rules/0/action_parameters/response/content' },
      },
    ]);
    p = put([{ action: 'block', expression: 'true', action_parameters: { response: { status_code: 403, content: 'é'.repeat(1025), content_type: 'text/plain' } } }]);
    await refused('PUT', p.path, { body: p.body }, 400, [
      {
        code: 20021,
        message: "a content of 2050 bytes is not a valid value for content: a block response's content is at most 2048 bytes (2 KB) in custom rules",
        source: { pointer: '/rules/0/action_parameters/response/content' },
      },
    ]);
    p = put([{ action: 'block', expression: 'true', action_parameters: { response: { status_code: 403, content: 'a'.repeat(2048), content_type: 'text/plain' } } }]);
    const atLimit = await svc.call('PUT', p.path, { body: p.body });
    assert.equal(atLimit.status, 200, JSON.stringify(atLimit.body).slice(0, 300));
    assert.equal(atLimit.body.result.rules[0].action_parameters.response.content.length, 2048);
    p = put([{ action: 'skip', expression: 'true', action_parameters: { products: ['WAF', 'ratelimit'] }, logging: { enabled: true } }]);
    const skip = await svc.call('PUT', p.path, { body: p.body });
    assert.equal(skip.status, 200);
    assert.deepEqual(skip.body.result.rules[0].action_parameters, { products: ['waf', 'rateLimit'] });
  });

  it('execute: the ruleset must exist, in the same phase; overrides checked against the managed ruleset', async () => {
    const missing = '12'.repeat(16);
    let p = put([{ action: 'execute', expression: 'true', action_parameters: { id: missing } }], ENT, MANAGED);
    await refused('PUT', p.path, { body: p.body }, 400, [
      {
        code: 20021,
        message: `'${missing}' is not a valid value for id because no managed ruleset nor custom ruleset of the account has this id; managed rulesets: Cloudflare Managed Ruleset (${VENDOR_RULESET_ID}), Cloudflare OWASP Core Ruleset (${OWASP_RULESET_ID}), Cloudflare Free Managed Ruleset (${FREE_RULESET_ID})`,
        source: { pointer: '/rules/0/action_parameters/id' },
      },
    ]);
    p = put([{ action: 'execute', expression: 'true', action_parameters: { id: OWASP_RULESET_ID, overrides: { categories: [{ category: 'paranoia-level-9', enabled: false }] } } }], ENT, MANAGED);
    await refused('PUT', p.path, { body: p.body }, 400, [
      { code: 20021, message: "'paranoia-level-9' is not a category of Cloudflare OWASP Core Ruleset (version 1)", source: { pointer: '/rules/0/action_parameters/overrides/categories/0/category' } },
    ]);
    const shared = await svc.call('POST', `/accounts/${ACCOUNT}/rulesets`, { body: { name: 'Rate limits', kind: 'custom', phase: 'http_ratelimit', rules: [] } });
    p = put([{ action: 'execute', expression: 'true', action_parameters: { id: shared.body.result.id } }]);
    await refused('PUT', p.path, { body: p.body }, 400, [
      { code: 20021, message: `'${shared.body.result.id}' is not a valid value for id because that custom ruleset is in phase http_ratelimit, not ${CUSTOM}`, source: { pointer: '/rules/0/action_parameters/id' } },
    ]);
  });

  it('a rule checked before is placed where each body has it, and checked again when the custom rulesets change', async () => {
    const bad = { action: 'block', expression: 'http.host eq' };
    const ok = { action: 'log', expression: 'true' };
    let p = put([ok, ok, bad], BIZ);
    const first = await svc.call('PUT', p.path, { body: p.body });
    const message: string = first.body.errors[0].message;
    assert.match(message, /^'http\.host eq' is not a valid value for expression because could not parse filter expression/);
    assert.deepEqual([first.status, first.body.errors], [400, [{ code: 20021, message, source: { pointer: '/rules/2/expression' } }]]);
    p = put([bad], BIZ);
    await refused('PUT', p.path, { body: p.body }, 400, [{ code: 20021, message, source: { pointer: '/rules/0/expression' } }]);
    // An execute rule accepted while its custom ruleset exists is refused once it is gone.
    const acc = `/accounts/${ACCOUNT}/rulesets`;
    const shared = await svc.call('POST', acc, { body: { name: 'Shared blocks', kind: 'custom', phase: CUSTOM, rules: [] } });
    const run = { action: 'execute', expression: 'true', action_parameters: { id: shared.body.result.id } };
    p = put([run], BIZ);
    assert.equal((await svc.call('PUT', p.path, { body: p.body })).status, 200);
    assert.equal((await svc.call('PUT', p.path, { body: { rules: [] } })).status, 200);
    assert.equal((await svc.call('DELETE', `${acc}/${shared.body.result.id}`)).status, 204);
    const again = await svc.call('PUT', p.path, { body: p.body });
    assert.equal(again.status, 400);
    assert.match(again.body.errors[0].message, /^'[0-9a-f]{32}' is not a valid value for id because no managed ruleset nor custom ruleset of the account has this id/);
    assert.equal(again.body.errors[0].source.pointer, '/rules/0/action_parameters/id');
  });

  it('create: kinds by scope, required fields; update: name, kind and phase are immutable', async () => {
    const acc = `/accounts/${ACCOUNT}/rulesets`;
    await refused('POST', acc, { body: { name: 'z', kind: 'zone', phase: CUSTOM } }, 400, [
      { code: 20021, message: "'zone' is not a valid value for kind because an account can create custom rulesets and its root entry points; zone entry points are created at zone level", source: { pointer: '/kind' } },
    ]);
    await refused('POST', zonePath(ENT), { body: { name: 'z', kind: 'custom', phase: CUSTOM } }, 400, [
      { code: 20021, message: "'custom' is not a valid value for kind because a zone can create only its entry points (kind zone); custom rulesets belong to the account", source: { pointer: '/kind' } },
    ]);
    await refused('POST', acc, { body: { name: 'm', kind: 'managed', phase: CUSTOM } }, 400, [
      { code: 20021, message: "'managed' is not a valid value for kind because managed rulesets are provided by Cloudflare; create a custom ruleset, or deploy a managed one with an execute rule", source: { pointer: '/kind' } },
    ]);
    await refused('POST', acc, { body: { kind: 'custom', phase: CUSTOM } }, 400, [{ code: 20021, message: 'name is required', source: { pointer: '/name' } }]);
    await refused('POST', acc, { body: { name: 'x', kind: 'custom', phase: 'http_request_nope' } }, 400, [{ code: 20021, message: "'http_request_nope' is not a valid value for phase", source: { pointer: '/phase' } }]);
    const ep = await svc.call('GET', entry(ENT));
    const path = zonePath(ENT, `/${ep.body.result.id}`);
    await refused('PUT', path, { body: { name: 'renamed', rules: [] } }, 400, [
      { code: 20021, message: "'renamed' is not a valid value for name because the name of a ruleset cannot be changed (it is 'default')", source: { pointer: '/name' } },
    ]);
    await refused('PUT', path, { body: { phase: 'http_ratelimit', rules: [] } }, 400, [
      { code: 20021, message: "'http_ratelimit' is not a valid value for phase because the phase of a ruleset cannot be changed (it is 'http_request_firewall_custom')", source: { pointer: '/phase' } },
    ]);
    await refused('PUT', path, { body: { description: 'no rules' } }, 400, [
      { code: 20021, message: 'rules is required: the whole list of rules the ruleset will have ([] for none)', source: { pointer: '/rules' } },
    ]);
  });

  it('paths: unknown phase, bad version, unknown ruleset, bad ids', async () => {
    await refused('GET', zonePath(ENT, '/phases/http_request_nope/entrypoint'), {}, 400, [
      { code: 20021, message: "'http_request_nope' is not a valid value for ruleset_phase: expected a phase such as http_request_firewall_custom or http_request_firewall_managed" },
    ]);
    const ep = await svc.call('GET', entry(ENT));
    await refused('GET', zonePath(ENT, `/${ep.body.result.id}/versions/latest`), {}, 400, [
      { code: 20021, message: "'latest' is not a valid value for ruleset_version: expected a version number such as 1" },
    ]);
    const missing = '34'.repeat(16);
    await refused('GET', zonePath(ENT, `/${missing}`), {}, 404, [{ code: 10007, message: `could not find ruleset '${missing}'` }]);
    // A zone's ruleset is not another zone's.
    await refused('GET', zonePath(BIZ, `/${ep.body.result.id}`), {}, 404, [{ code: 10007, message: `could not find ruleset '${ep.body.result.id}'` }]);
    await refused('GET', zonePath(ENT, '/not-an-id'), {}, 400, [
      { code: 7003, message: `Could not route to /zones/${ENT}/rulesets/not-an-id, perhaps your object identifier is invalid?` },
      { code: 7000, message: 'No route for that URI' },
    ]);
  });
});

describe('rule checks off the service thread (service/ruleChecker.ts)', () => {
  it('answer every write as the service thread does without the worker', async () => {
    const own = await startService({ ruleCheckWorker: false });
    try {
      // Dry runs: validated in full, nothing written (this file's other tests use these rulesets).
      const ep = `${entry(PRO)}?dry_run=true`;
      const writes: [string, string, object][] = [
        ['PUT', ep, { rules: [{ expression: 'ip.geoip.country eq "GB"', action: 'block', ref: 'geo' }, { expression: 'http.host eq "x"', action: 'log', ref: 'x' }] }],
        ['POST', `/accounts/${ACCOUNT}/rulesets?dry_run=true`, { name: 'n', kind: 'custom', phase: CUSTOM, rules: [{ expression: 'http.host eq', action: 'block' }] }],
        ['PUT', ep, { rules: [{ expression: 'http.host eq "a"', action: 'block', ref: 'a' }, { expression: 'http.host eq', action: 'block', ref: 'b' }, { expression: 'http.request.method eq "get"', action: 'block', ref: 'c' }] }],
      ];
      const answers = async (s: TestService) => {
        const out = [];
        for (const [method, path, body] of writes) {
          const r = await s.call(method, path, { body });
          out.push([r.status, r.body.errors, r.body.messages]);
        }
        return out;
      };
      const checks = svc.running.service.ruleChecks as unknown as { ready: boolean };
      for (let i = 0; i < 200 && !checks.ready; i++) await new Promise((r) => setTimeout(r, 25));
      const withWorker = await answers(svc);
      assert.ok(svc.running.service.ruleChecks.stats.inWorker > 0, "this file's service checked them in its worker");
      assert.deepEqual(await answers(own), withWorker);
      assert.equal(own.running.service.ruleChecks.stats.inWorker, 0);
      assert.deepEqual(withWorker.map(([status]) => status), [200, 400, 400]);
      assert.match((withWorker[0]![2] as { message: string }[])[0]!.message, /`ip\.geoip\.country` is deprecated/);
      assert.match((withWorker[1]![1] as { message: string }[])[0]!.message, /^'http\.host eq' is not a valid value for expression because could not parse filter expression/);
      assert.deepEqual((withWorker[2]![1] as { source: { pointer: string } }[]).map((e) => e.source.pointer), ['/rules/1/expression']);
    } finally {
      await own.close();
    }
  });
});

describe('checks across rules, and the size of an answer', () => {
  const vendor = (extra: object = {}) => ({ action: 'execute', expression: 'true', action_parameters: { id: VENDOR_RULESET_ID }, ...extra });
  const owasp = { action: 'execute', expression: 'true', action_parameters: { id: OWASP_RULESET_ID }, ref: 'owasp' };
  const repeated = (n: number) => `Cloudflare Managed Ruleset is already executed by rule ${n}; a zone can deploy each managed ruleset once`;

  it('a zone entry point may run each managed ruleset once: PUT, POST and PATCH of a rule', async () => {
    await refused('PUT', entry(ENT, MANAGED), { body: { rules: [vendor(), owasp, vendor()] } }, 400, [
      { code: 20021, message: repeated(1), source: { pointer: '/rules/2/action_parameters/id' } },
    ]);
    // A disabled one does not run, so it does not count.
    assert.equal((await svc.call('PUT', `${entry(ENT, MANAGED)}?dry_run=true`, { body: { rules: [vendor(), vendor({ enabled: false })] } })).status, 200);
    const before = await svc.call('GET', entry(ENT, MANAGED));
    const put = await svc.call('PUT', entry(ENT, MANAGED), { body: { rules: [vendor({ ref: 'once' }), owasp] } });
    assert.equal(put.status, 200);
    try {
      const rules = `/zones/${ENT}/rulesets/${put.body.result.id}/rules`;
      await refused('POST', rules, { body: vendor() }, 400, [{ code: 20021, message: `${repeated(1).replace('rule 1', 'rule 1 of the ruleset')}`, source: { pointer: '/action_parameters/id' } }]);
      await refused('POST', rules, { body: { ...vendor(), position: { index: 1 } } }, 400, [
        { code: 20021, message: repeated(2).replace('rule 2', 'rule 2 of the ruleset'), source: { pointer: '/action_parameters/id' } },
      ]);
      const owaspId = put.body.result.rules[1].id;
      await refused('PATCH', `${rules}/${owaspId}`, { body: vendor() }, 400, [{ code: 20021, message: repeated(1).replace('rule 1', 'rule 1 of the ruleset'), source: { pointer: '/action_parameters/id' } }]);
      assert.equal((await svc.call('POST', `${rules}?dry_run=true`, { body: vendor({ enabled: false }) })).status, 200);
    } finally {
      const restored = await svc.call('PUT', entry(ENT, MANAGED), { body: { rules: before.status === 200 ? before.body.result.rules : [] } });
      assert.equal(restored.status, 200);
    }
  });

  it('lists at most 10 warnings per rule and 100 per write, and counts the rest', async () => {
    // Twelve deprecated fields: twelve warnings, each quoting the whole expression.
    const expression = Array.from({ length: 12 }, (_, i) => `ip.geoip.country eq "G${String.fromCharCode(65 + i)}"`).join(' or ');
    const one = await svc.call('PUT', `${entry(PRO)}?dry_run=true`, { body: { rules: [{ expression, action: 'block' }] } });
    assert.equal(one.status, 200);
    assert.equal(one.body.messages.length, 11);
    const many = await svc.call('PUT', entry(PRO), { body: { rules: Array.from({ length: 11 }, (_, i) => ({ expression, action: 'block', ref: `r${i}` })) } });
    try {
      assert.equal(many.status, 200);
      const messages = many.body.messages as { code: number; message: string; source?: { pointer: string } }[];
      assert.equal(messages.length, 101);
      assert.deepEqual(messages.slice(0, 11).map((m) => m.source?.pointer ?? null), [...Array(10).fill('/rules/0/expression'), null]);
      assert.deepEqual(messages[10], { code: 20040, message: '2 more warnings about this rule are not listed (the service lists at most 10 per rule); `rulesmith check` on the ruleset lists them all' });
      assert.match(messages[0]!.message, /`ip\.geoip\.country` is deprecated/);
      // 11 rules × 11 messages: the first 100, then one counting the other 21.
      assert.deepEqual(messages[100], { code: 20040, message: '21 more warnings are not listed (a write\'s answer lists at most 100); `rulesmith check` on the ruleset lists them all' });
    } finally {
      assert.equal((await svc.call('PUT', entry(PRO), { body: { rules: [] } })).status, 200);
    }
  });

  it("a rule's findings are kept when a ruleset is created or deleted elsewhere (the account's custom rulesets did not change)", async () => {
    const rules = [{ expression: 'http.host eq "kept.example.com"', action: 'block' }];
    const path = `${entry(BIZ)}?dry_run=true`;
    assert.equal((await svc.call('PUT', path, { body: { rules } })).status, 200);
    const stats = { ...svc.running.service.ruleChecks.stats };
    // An entry point created (and deleted) in another zone.
    const other = await svc.call('PUT', entry(PRO, 'http_ratelimit'), { body: { rules: [] } });
    assert.equal(other.status, 200);
    assert.equal((await svc.call('DELETE', zonePath(PRO, `/${other.body.result.id}`))).status, 204);
    assert.equal((await svc.call('PUT', path, { body: { rules } })).status, 200);
    assert.deepEqual(svc.running.service.ruleChecks.stats, stats, 'checked again');
  });
});

describe('bad bodies: a clear error and no change to the store', () => {
  it('invalid JSON, wrong types, unknown fields, a 9 MiB body', async () => {
    const ep = await svc.call('GET', entry(ENT));
    const rs = ep.body.result;
    const rulePath = zonePath(ENT, `/${rs.id}/rules`);
    await refused('PUT', entry(ENT), { rawBody: '{"rules": [' }, 400, [
      { code: 10026, message: 'invalid JSON: Unexpected end of JSON input; send a JSON document with Content-Type: application/json' },
    ]);
    await refused('PUT', entry(ENT), { body: [] }, 400, [{ code: 10026, message: 'invalid JSON: expected an object at the top level, got array', source: { pointer: '/' } }]);
    await refused('PUT', entry(ENT), { body: { rules: {} } }, 400, [{ code: 10026, message: 'invalid JSON: expected an array at /rules, got object', source: { pointer: '/rules' } }]);
    await refused('PUT', entry(ENT), { body: { rules: ['block'] } }, 400, [{ code: 10026, message: 'invalid JSON: expected an object at /rules/0, got string', source: { pointer: '/rules/0' } }]);
    await refused('PUT', entry(ENT), { body: { rules: [], description: 5 } }, 400, [{ code: 10026, message: 'invalid JSON: field "description" must be a string, got number', source: { pointer: '/description' } }]);
    await refused('PUT', entry(ENT), { body: { rules: [{ action: 'block', expression: 'true', enabled: 'yes' }] } }, 400, [
      { code: 10026, message: 'invalid JSON: "enabled" must be a boolean, not a string', source: { pointer: '/rules/0/enabled' } },
    ]);
    await refused('PUT', entry(ENT), { body: { rules: [{ action: 'block', expression: 5 }] } }, 400, [
      { code: 10026, message: 'invalid JSON: "expression" must be a string, not an integer', source: { pointer: '/rules/0/expression' } },
    ]);
    await refused('PUT', entry(ENT), { body: { kind: 'zone', rules: [] } }, 400, [{ code: 10026, message: 'invalid JSON: unknown field "kind"', source: { pointer: '/kind' } }]);
    await refused('PUT', entry(ENT), { body: { rules: [{ action: 'block', expression: 'true', cache: true }] } }, 400, [
      { code: 10026, message: 'invalid JSON: unknown field "cache"', source: { pointer: '/rules/0/cache' } },
    ]);
    await refused('POST', rulePath, { body: { action: 'block', expression: 'true', kind: 'x' } }, 400, [{ code: 10026, message: 'invalid JSON: unknown field "kind"', source: { pointer: '/kind' } }]);
    // An unknown field is refused whatever its value, null too (Go's decoder does; a known one that is null is no value).
    await refused('PUT', entry(ENT), { body: { kind: null, rules: [] } }, 400, [{ code: 10026, message: 'invalid JSON: unknown field "kind"', source: { pointer: '/kind' } }]);
    await refused('PUT', entry(ENT), { body: { rules: [{ action: 'block', expression: 'true', bogus: null }] } }, 400, [
      { code: 10026, message: 'invalid JSON: unknown field "bogus"', source: { pointer: '/rules/0/bogus' } },
    ]);
    await refused('POST', rulePath, { body: { action: 'block', expression: 'true', bogus: null } }, 400, [{ code: 10026, message: 'invalid JSON: unknown field "bogus"', source: { pointer: '/bogus' } }]);
    await refused('PATCH', `${rulePath}/${rs.rules[0].id}`, { body: { action: 'block', expression: 'true', enabled: 1 } }, 400, [
      { code: 10026, message: 'invalid JSON: "enabled" must be a boolean, not an integer', source: { pointer: '/enabled' } },
    ]);
    // JSON.parse reads 1e400 as Infinity, which JSON.stringify writes as null.
    await refused('PUT', entry(ENT), { rawBody: '{"rules": [{"action": "block", "expression": "true", "action_parameters": {"products": [1e400]}}]}' }, 400, [
      { code: 10026, message: 'invalid JSON: the number at /rules/0/action_parameters/products/0 is too large: a JSON number must fit in a 64-bit float', source: { pointer: '/rules/0/action_parameters/products/0' } },
    ]);
    const huge = JSON.stringify({ rules: [{ action: 'block', expression: 'true', description: 'x'.repeat(9 * 1024 * 1024) }] });
    await refused('PUT', entry(ENT), { rawBody: huge }, 413, [{ code: 10027, message: 'The request body is larger than 8388608 bytes; split the change into smaller requests' }]);
    // Nothing above changed the entry point.
    const again = await svc.call('GET', entry(ENT));
    assert.deepEqual([again.body.result.version, again.body.result.last_updated], [rs.version, rs.last_updated]);
  });
});

describe('permissions', () => {
  it('read-only tokens read and cannot write; a zone token cannot touch another zone', async () => {
    const readOnly = svc.credentials.get('demo read-only')!;
    const read = await svc.call('GET', entry(ENT), { token: readOnly });
    assert.equal(read.status, 200);
    await refused('PUT', entry(ENT), { token: readOnly, body: { rules: [] } }, 403, [{ code: 10000, message: 'Authentication error' }]);
    await refused('POST', `/accounts/${ACCOUNT}/rulesets`, { token: readOnly, body: { name: 'x', kind: 'custom', phase: CUSTOM } }, 403, [{ code: 10000, message: 'Authentication error' }]);
    const proToken = svc.credentials.get('pro.example.com WAF')!;
    assert.equal((await svc.call('GET', entry(PRO), { token: proToken })).status, 200);
    await refused('GET', entry(ENT), { token: proToken }, 403, [{ code: 10000, message: 'Authentication error' }]);
    await refused('GET', `/accounts/${ACCOUNT}/rulesets`, { token: proToken }, 403, [{ code: 10000, message: 'Authentication error' }]);
  });
});

describe('more edges', () => {
  it('list parameters: per_page 1–50, a cursor from a previous page', async () => {
    const base = `/accounts/${ACCOUNT}/rulesets`;
    await refused('GET', `${base}?per_page=0`, {}, 400, [{ code: 20021, message: "'0' is not a valid value for per_page: expected an integer from 1 to 50" }]);
    await refused('GET', `${base}?per_page=51`, {}, 400, [{ code: 20021, message: "'51' is not a valid value for per_page: expected an integer from 1 to 50" }]);
    await refused('GET', `${base}?cursor=nonsense`, {}, 400, [{ code: 20021, message: "'nonsense' is not a valid value for cursor: pass the cursor of the previous page's result_info" }]);
  });

  it('rules of an account custom ruleset with the SDK; the only version cannot be deleted; version delete takes dry_run', async () => {
    const cf = svc.sdk();
    const rs = (await cf.rulesets.create({ account_id: ACCOUNT, name: 'Edge rules', kind: 'custom', phase: CUSTOM })) as unknown as AnyRuleset;
    await refused('DELETE', `/accounts/${ACCOUNT}/rulesets/${rs.id}/versions/1`, {}, 400, [
      { code: 20021, message: `version 1 is the only version of ruleset 'Edge rules' (${rs.id}); delete the ruleset instead` },
    ]);
    const v2 = (await cf.rulesets.rules.create(rs.id, { account_id: ACCOUNT, action: 'block', expression: 'http.request.uri.query contains "union select"', description: 'SQLi' } as never)) as unknown as AnyRuleset;
    assert.deepEqual([v2.version, v2.rules.length, v2.rules[0].description], ['2', 1, 'SQLi']);
    const before = storeSnapshot();
    const dry = await svc.call('DELETE', `/accounts/${ACCOUNT}/rulesets/${rs.id}/versions/1?dry_run=true`);
    assert.deepEqual([dry.status, dry.body], [204, undefined]);
    assert.equal(storeSnapshot(), before);
    await cf.rulesets.versions.delete('1', { account_id: ACCOUNT, ruleset_id: rs.id });
    const v3 = (await cf.rulesets.rules.edit(v2.rules[0].id, { account_id: ACCOUNT, ruleset_id: rs.id, action: 'block', expression: 'true', ref: 'all' } as never)) as unknown as AnyRuleset;
    assert.deepEqual([v3.version, v3.rules[0].id, v3.rules[0].ref, v3.rules[0].version, v3.rules[0].description], ['3', v2.rules[0].id, 'all', '2', '']);
    await refused('PATCH', `/accounts/${ACCOUNT}/rulesets/${rs.id}/rules/${v2.rules[0].id}`, { body: { id: '56'.repeat(16), action: 'block', expression: 'true' } }, 400, [
      { code: 20021, message: `'${'56'.repeat(16)}' is not a valid value for id because the rule edited is ${v2.rules[0].id}`, source: { pointer: '/id' } },
    ]);
    const missing = '78'.repeat(16);
    await refused('POST', `/accounts/${ACCOUNT}/rulesets/${missing}/rules`, { body: { action: 'block', expression: 'true' } }, 404, [{ code: 10007, message: `could not find ruleset '${missing}'` }]);
    const v4 = (await cf.rulesets.rules.delete(v2.rules[0].id, { account_id: ACCOUNT, ruleset_id: rs.id })) as unknown as AnyRuleset;
    assert.deepEqual([v4.version, v4.rules], ['4', []]);
  });

  it('a zone entry point may execute an account custom ruleset of its phase, which then cannot be deleted', async () => {
    const cf = svc.sdk();
    const shared = (await cf.rulesets.create({ account_id: ACCOUNT, name: 'Shared for zones', kind: 'custom', phase: CUSTOM, rules: [{ action: 'block', expression: 'true' }] })) as unknown as AnyRuleset;
    const ep = (await cf.rulesets.phases.get(CUSTOM, { zone_id: BIZ })) as unknown as AnyRuleset;
    const next = (await cf.rulesets.rules.create(ep.id, { zone_id: BIZ, action: 'execute', expression: 'http.host eq "shop.example.com"', action_parameters: { id: shared.id } } as never)) as unknown as AnyRuleset;
    const rule = next.rules[next.rules.length - 1];
    assert.deepEqual(rule.action_parameters, { id: shared.id, version: 'latest' });
    await refused('DELETE', `/accounts/${ACCOUNT}/rulesets/${shared.id}`, {}, 400, [
      { code: 20030, message: `ruleset 'Shared for zones' (${shared.id}) is deployed by rule ${rule.id} of ruleset 'Zone custom rules' (${ep.id}: the http_request_firewall_custom entry point of zone business.example.com); change or delete that execute rule first` },
    ]);
    // A ruleset cannot run itself (an account custom ruleset cannot execute at all: custom rulesets do not nest).
    await refused('POST', `/accounts/${ACCOUNT}/rulesets/${shared.id}/rules`, { body: { action: 'execute', expression: 'true', action_parameters: { id: shared.id } } }, 400, [
      {
        code: 20021,
        message: "'execute' is not a valid value for Action because it is not possible to use the execute action in a ruleset with phase http_request_firewall_custom and kind custom",
        source: { pointer: '/action' },
      },
      { code: 20021, message: `'${shared.id}' is not a valid value for id because a ruleset cannot execute itself`, source: { pointer: '/action_parameters/id' } },
    ]);
  });
});

describe('concurrent writes', () => {
  it('32 rule creates at once on one ruleset: all kept, one version each, none lost', async () => {
    const cf = svc.sdk();
    const rs = (await cf.rulesets.phases.update('http_request_sbfm', { zone_id: ENT, rules: [] })) as unknown as AnyRuleset;
    const answers = await Promise.all(
      Array.from({ length: 32 }, (_, i) => svc.call('POST', zonePath(ENT, `/${rs.id}/rules`), { body: { action: 'log', expression: `http.host eq "c${i}.example.com"`, ref: `c${i}` } })),
    );
    assert.deepEqual(answers.map((a) => a.status), Array(32).fill(200));
    const versions = answers.map((a) => Number(a.body.result.version)).sort((a, b) => a - b);
    assert.deepEqual(versions, Array.from({ length: 32 }, (_, i) => Number(rs.version) + i + 1));
    const final = (await cf.rulesets.phases.get('http_request_sbfm', { zone_id: ENT })) as unknown as AnyRuleset;
    assert.equal(final.rules.length, 32);
    assert.deepEqual(new Set(final.rules.map((r) => r.ref)), new Set(Array.from({ length: 32 }, (_, i) => `c${i}`)));
  });

  it('a rule that executes a custom ruleset deleted while the rule was checked is refused, or the delete is', async () => {
    // The rule is checked in the worker; the DELETE is answered meanwhile.
    const checks = svc.running.service.ruleChecks as unknown as { ready: boolean };
    for (let i = 0; i < 200 && !checks.ready; i++) await new Promise((r) => setTimeout(r, 25));
    const ep = await svc.call('PUT', entry(ENT, 'http_request_firewall_custom'), { body: { rules: [] } });
    for (let i = 0; i < 3; i++) {
      const x = await svc.call('POST', `/accounts/${ACCOUNT}/rulesets`, { body: { name: `racy ${i}`, kind: 'custom', phase: CUSTOM, rules: [{ action: 'block', expression: 'true' }] } });
      const xid = x.body.result.id as string;
      const post = svc.call('POST', zonePath(ENT, `/${ep.body.result.id}/rules`), { body: { action: 'execute', expression: `http.host eq "racy${i}.example.com"`, action_parameters: { id: xid } } });
      await new Promise((r) => setImmediate(r));
      const del = svc.call('DELETE', `/accounts/${ACCOUNT}/rulesets/${xid}`);
      const [p, d] = await Promise.all([post, del]);
      assert.deepEqual([p.status, d.status], [400, 204], `round ${i}: the rule may not run a ruleset that is gone`);
      assert.match(p.body.errors[0].message, new RegExp(`^'${xid}' is not a valid value for id because no managed ruleset nor custom ruleset of the account has this id`));
    }
    const after = await svc.call('GET', entry(ENT, 'http_request_firewall_custom'));
    assert.deepEqual(after.body.result.rules, []);
  });
});

describe('a NUL character in a stored string', () => {
  it('is refused in a ruleset name (its column would cut it), with nothing stored', async () => {
    await refused('POST', `/accounts/${ACCOUNT}/rulesets`, { body: { name: 'a\u0000b', kind: 'custom', phase: CUSTOM, rules: [] } }, 400, [
      { code: 20021, message: "'name' must not contain a NUL character (U+0000)", source: { pointer: '/name' } },
    ]);
  });
});

describe('answers to reads', () => {
  it('a GET answers the same ruleset until it changes, and the change at once after', async () => {
    const entry = `/zones/${BIZ}/rulesets/phases/${CUSTOM}/entrypoint`;
    const put = await svc.call('PUT', entry, { body: { rules: [{ action: 'block', expression: 'http.host eq "one.example"', ref: 'one' }] } });
    assert.equal(put.status, 200);
    const first = await svc.call('GET', entry);
    const again = await svc.call('GET', entry);
    assert.deepEqual(again.body, first.body);
    assert.equal(again.headers.get('content-length'), first.headers.get('content-length'));
    const rs = (first.body as { result: AnyRuleset }).result;
    assert.deepEqual([(first.body as { success: boolean }).success, (first.body as { messages: unknown[] }).messages], [true, []]);
    const patched = await svc.call('PATCH', `/zones/${BIZ}/rulesets/${rs.id}/rules/${rs.rules[0].id}`, { body: { action: 'block', expression: 'http.host eq "two.example"' } });
    assert.equal(patched.status, 200);
    const after = (await svc.call('GET', entry)).body as { result: AnyRuleset };
    assert.deepEqual([after.result.version, after.result.rules[0].expression], [String(Number(rs.version) + 1), 'http.host eq "two.example"']);
    assert.deepEqual(after.result, (patched.body as { result: AnyRuleset }).result);
  });
});
