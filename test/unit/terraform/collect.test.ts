// What a Terraform export reads of a zone (server/src/terraform/collect.ts), over a fake
// reader: managed rulesets are not read, each custom ruleset is read once by its id, a 404
// leaves the rule's id as written, and a refusal says which rule needs which permission.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { defaultCatalog } from '../../../server/src/managed/catalog';
import { collectZoneRulesets, ZoneReadRefused, type RulesetBody, type RulesetSummary, type ZoneRulesetReader } from '../../../server/src/terraform/collect';

const ZONE = '0123456789abcdef0123456789abcdef';
const ACCOUNT = 'fedcba9876543210fedcba9876543210';
const CATALOG_ID = defaultCatalog.rulesets[0].id;

/** An error as the fake API answers it. */
class Answer extends Error {
  constructor(
    readonly path: string,
    readonly status: number,
  ) {
    super(`GET ${path}: ${status} ${status === 403 ? 'Authentication error (10000)' : status === 404 ? 'not found' : 'failed'}`);
  }
}

interface Fake {
  readonly list: readonly RulesetSummary[];
  readonly zone: Readonly<Record<string, RulesetBody>>;
  readonly account: Readonly<Record<string, RulesetBody | number>>;
  /** The zone's account, or the status its read fails with. */
  readonly accountId?: string | number;
}

/** A reader over `fake` that records each read as its path. */
function reader(fake: Fake): ZoneRulesetReader & { reads: string[] } {
  const reads: string[] = [];
  const read = <T>(path: string, value: T | number | undefined): Promise<T> => {
    reads.push(path);
    if (value === undefined) return Promise.reject(new Answer(path, 404));
    return typeof value === 'number' ? Promise.reject(new Answer(path, value)) : Promise.resolve(value);
  };
  return {
    reads,
    listZoneRulesets: (z) => read(`/zones/${z}/rulesets`, fake.list),
    getZoneRuleset: (z, id) => read(`/zones/${z}/rulesets/${id}`, fake.zone[id]),
    zoneAccountId: (z) => read(`/zones/${z}`, fake.accountId ?? ACCOUNT),
    getAccountRuleset: (a, id) => read(`/accounts/${a}/rulesets/${id}`, fake.account[id]),
    classify: (e) => (e instanceof Answer && (e.status === 401 || e.status === 403) ? 'denied' : e instanceof Answer && e.status === 404 ? 'missing' : 'other'),
    describe: (e) => (e as Error).message,
  };
}

const execute = (ref: string, id: string) => ({ ref, expression: 'true', action: 'execute', action_parameters: { id } });
const entry = (id: string, phase: string, rules: readonly Record<string, unknown>[]): RulesetBody => ({ id, kind: 'zone', phase, rules });
const custom = (id: string): RulesetBody => ({ id, kind: 'custom', phase: 'http_request_firewall_custom', name: id, rules: [{ expression: 'true', action: 'block' }] });

test('managed rulesets (the zone list marks them, the catalog knows them) are not read, and nothing of the account is', async () => {
  const r = reader({
    list: [{ id: 'e1', kind: 'zone', phase: 'http_request_firewall_managed' }, { id: 'm1', kind: 'managed', phase: 'http_request_firewall_managed' }],
    zone: { e1: entry('e1', 'http_request_firewall_managed', [execute('listed', 'm1'), execute('catalog', CATALOG_ID), { expression: 'true', action: 'skip' }]) },
    account: {},
  });
  const out = await collectZoneRulesets(r, ZONE);
  assert.deepEqual(
    out.map((o) => [o.ruleset.id, o.scope]),
    [['e1', { zoneId: ZONE }]],
  );
  assert.deepEqual(r.reads, [`/zones/${ZONE}/rulesets`, `/zones/${ZONE}/rulesets/e1`]);
});

test('each custom ruleset executed is read once, by its id from the zone\'s account, after the entry points', async () => {
  const r = reader({
    list: [{ id: 'e1', kind: 'zone', phase: 'http_request_firewall_custom' }, { id: 'e2', kind: 'zone', phase: 'http_ratelimit' }, { id: 'm1', kind: 'managed' }],
    zone: {
      e1: entry('e1', 'http_request_firewall_custom', [execute('a', 'c1'), execute('b', 'c2'), execute('again', 'c1')]),
      e2: entry('e2', 'http_ratelimit', [execute('c', 'c2')]),
    },
    account: { c1: custom('c1'), c2: custom('c2') },
  });
  const out = await collectZoneRulesets(r, ZONE);
  assert.deepEqual(
    out.map((o) => [o.ruleset.id, o.scope]),
    [
      ['e1', { zoneId: ZONE }],
      ['e2', { zoneId: ZONE }],
      ['c1', { accountId: ACCOUNT }],
      ['c2', { accountId: ACCOUNT }],
    ],
  );
  assert.deepEqual(r.reads, [`/zones/${ZONE}/rulesets`, `/zones/${ZONE}/rulesets/e1`, `/zones/${ZONE}/rulesets/e2`, `/zones/${ZONE}`, `/accounts/${ACCOUNT}/rulesets/c1`, `/accounts/${ACCOUNT}/rulesets/c2`]);
});

test('a custom ruleset the account does not have (404) is left out: the rule keeps its id; one that is not custom is not exported', async () => {
  const r = reader({
    list: [{ id: 'e1', kind: 'zone', phase: 'http_request_firewall_custom' }],
    zone: { e1: entry('e1', 'http_request_firewall_custom', [execute('gone', 'c404'), execute('root', 'root1'), execute('kept', 'c1')]) },
    account: { c1: custom('c1'), root1: { id: 'root1', kind: 'root', phase: 'http_request_firewall_custom' } },
  });
  const out = await collectZoneRulesets(r, ZONE);
  assert.deepEqual(
    out.map((o) => o.ruleset.id),
    ['e1', 'c1'],
  );
  assert.equal((out[0].ruleset.rules as { action_parameters: { id: string } }[])[0].action_parameters.id, 'c404');
});

test('a zone that does not say its account: only its entry points', async () => {
  const r = reader({ list: [{ id: 'e1', kind: 'zone' }], zone: { e1: entry('e1', 'http_request_firewall_custom', [execute('a', 'c1')]) }, account: { c1: custom('c1') }, accountId: '' });
  assert.deepEqual(
    (await collectZoneRulesets(r, ZONE)).map((o) => o.ruleset.id),
    ['e1'],
  );
});

test('a custom ruleset the token may not read (403): the refused request, the rule that runs it, the permission and the fix', async () => {
  const r = reader({
    list: [{ id: 'e1', kind: 'zone', phase: 'http_request_firewall_custom' }],
    zone: { e1: entry('e1', 'http_request_firewall_custom', [{ expression: 'true', action: 'block' }, execute('run-shop', 'c1')]) },
    account: { c1: 403 },
  });
  const e = await collectZoneRulesets(r, ZONE).then(
    () => assert.fail('the export should stop'),
    (err: unknown) => err,
  );
  assert.ok(e instanceof ZoneReadRefused);
  assert.ok(e.refusal instanceof Answer && e.refusal.status === 403);
  assert.equal(
    e.message,
    `GET /accounts/${ACCOUNT}/rulesets/c1: 403 Authentication error (10000). Rule 2 "run-shop" of the zone's http_request_firewall_custom ruleset executes custom ruleset c1, which belongs to account ${ACCOUNT}, and the API token may not read that account's rulesets: that needs the account-level permission "Account Rulesets Read" (or "Account WAF Read"), which a token scoped to the zone alone lacks. Export with a token that also has that permission on account ${ACCOUNT}.`,
  );
});

test('the zone itself refused (401), when its account is needed: the permission to read it; without a ref the rule is named by its number, the ruleset by its id when it has no phase', async () => {
  const r = reader({ list: [{ id: 'e1', kind: 'zone' }], zone: { e1: { id: 'e1', kind: 'zone', rules: [{ expression: 'true', action: 'execute', action_parameters: { id: 'c1' } }] } }, account: {}, accountId: 401 });
  await assert.rejects(collectZoneRulesets(r, ZONE), (e: unknown) => {
    assert.ok(e instanceof ZoneReadRefused);
    assert.equal(
      e.message,
      `GET /zones/${ZONE}: 401 failed. Rule 1 of the zone's e1 ruleset executes custom ruleset c1, and finding the account it belongs to needs the zone itself, which the API token may not read. Export with a token that also has the "Zone Read" permission on the zone.`,
    );
    return true;
  });
});

test('other failures are the reader\'s, thrown as they came: the zone list refused, an account read that failed', async () => {
  const refusedList = reader({ list: [], zone: {}, account: {} });
  refusedList.listZoneRulesets = () => Promise.reject(new Answer(`/zones/${ZONE}/rulesets`, 403));
  await assert.rejects(collectZoneRulesets(refusedList, ZONE), (e: unknown) => e instanceof Answer && !(e instanceof ZoneReadRefused) && e.status === 403);
  const failed = reader({ list: [{ id: 'e1', kind: 'zone' }], zone: { e1: entry('e1', 'http_request_firewall_custom', [execute('a', 'c1')]) }, account: { c1: 500 } });
  await assert.rejects(collectZoneRulesets(failed, ZONE), (e: unknown) => e instanceof Answer && e.status === 500);
});
