// What a Terraform export reads of a zone (server/src/terraform/collect.ts), over a fake
// reader: managed rulesets are not read, each custom ruleset is read once by its id, a 404
// leaves the rule's id as written (and the caller is told), a refusal says what needs which
// permission, and nothing the zone runs is left out silently.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { defaultCatalog } from '../../../server/src/managed/catalog';
import { classify, collectZoneRulesets, ZoneExportStopped, ZoneReadRefused, type RulesetBody, type RulesetSummary, type ZoneRulesetReader } from '../../../server/src/terraform/collect';

const ZONE = '0123456789abcdef0123456789abcdef';

/** The error a collection that must stop rejects with. */
async function stopped(r: Parameters<typeof collectZoneRulesets>[0]): Promise<unknown> {
  return collectZoneRulesets(r, ZONE).then(
    () => assert.fail('the export should stop'),
    (err: unknown) => err,
  );
}
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
  /** The zone's rulesets, or the status a read fails with. */
  readonly zone: Readonly<Record<string, RulesetBody | number>>;
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
    status: (e) => (e instanceof Answer ? e.status : undefined),
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
  const leftOut: string[] = [];
  const out = await collectZoneRulesets(r, ZONE, (what) => leftOut.push(what));
  assert.deepEqual(
    out.map((o) => o.ruleset.id),
    ['e1', 'c1'],
  );
  assert.equal((out[0].ruleset.rules as { action_parameters: { id: string } }[])[0].action_parameters.id, 'c404');
  // Neither goes unsaid.
  assert.deepEqual(leftOut, [
    `custom ruleset c404: rule 1 "gone" of the zone's http_request_firewall_custom ruleset executes custom ruleset c404, and account ${ACCOUNT} has no ruleset with that id; the rule keeps the id as written (terraform apply fails until it exists)`,
    `ruleset root1: rule 2 "root" of the zone's http_request_firewall_custom ruleset executes custom ruleset root1, and it is a root ruleset of account ${ACCOUNT}, not a custom one; the rule keeps the id as written`,
  ]);
});

test('a zone that does not say its account, while it executes a custom ruleset: the export stops and says so, rather than leave the ruleset out', async () => {
  for (const accountId of ['', undefined as unknown as string]) {
    const r = reader({ list: [{ id: 'e1', kind: 'zone' }], zone: { e1: entry('e1', 'http_request_firewall_custom', [execute('a', 'c1'), execute('b', 'c2')]) }, account: { c1: custom('c1'), c2: custom('c2') } });
    r.zoneAccountId = (z) => (r.reads.push(`/zones/${z}`), Promise.resolve(accountId || undefined));
    const e = await stopped(r);
    assert.ok(e instanceof ZoneExportStopped && !(e instanceof ZoneReadRefused));
    assert.equal(
      e.message,
      `GET /zones/${ZONE} does not say which account the zone belongs to. Rule 1 "a" of the zone's http_request_firewall_custom ruleset executes custom ruleset c1 (and 1 more custom ruleset), which belongs to that account: without its id the export cannot read it, and would lack it. Export from an API that answers the zone with its "account" (the Cloudflare API does).`,
    );
    assert.deepEqual(r.reads, [`/zones/${ZONE}/rulesets`, `/zones/${ZONE}/rulesets/e1`, `/zones/${ZONE}`]);
  }
  // Without a custom ruleset to read, the account is not needed (nor asked for).
  const managedOnly = reader({ list: [{ id: 'e1', kind: 'zone' }], zone: { e1: entry('e1', 'http_request_firewall_managed', [execute('m', CATALOG_ID)]) }, account: {}, accountId: '' });
  assert.deepEqual(
    (await collectZoneRulesets(managedOnly, ZONE)).map((o) => o.ruleset.id),
    ['e1'],
  );
  assert.ok(!managedOnly.reads.includes(`/zones/${ZONE}`));
});

test('a custom ruleset the token may not read (403): the refused request, the rule that runs it, the permission and the fix', async () => {
  const r = reader({
    list: [{ id: 'e1', kind: 'zone', phase: 'http_request_firewall_custom' }],
    zone: { e1: entry('e1', 'http_request_firewall_custom', [{ expression: 'true', action: 'block' }, execute('run-shop', 'c1')]) },
    account: { c1: 403 },
  });
  const e = await stopped(r);
  assert.ok(e instanceof ZoneReadRefused && e.refusal instanceof Answer && e.refusal.status === 403);
  assert.equal(
    e.message,
    `GET /accounts/${ACCOUNT}/rulesets/c1: 403 Authentication error (10000). Rule 2 "run-shop" of the zone's http_request_firewall_custom ruleset executes custom ruleset c1, which belongs to account ${ACCOUNT}, and the API token may not read that account's rulesets: that needs the account-level permission "Account Rulesets Read" (or "Account WAF Read"), which a token scoped to the zone alone lacks. Export with a token that also has that permission on account ${ACCOUNT}.`,
  );
});

test('the zone itself refused (401), when its account is needed: the permission to read it and the account-level one the next read needs; without a ref the rule is named by its number, the ruleset by its id when it has no phase', async () => {
  const r = reader({ list: [{ id: 'e1', kind: 'zone' }], zone: { e1: { id: 'e1', kind: 'zone', rules: [{ expression: 'true', action: 'execute', action_parameters: { id: 'c1' } }] } }, account: {}, accountId: 401 });
  await assert.rejects(collectZoneRulesets(r, ZONE), (e: unknown) => {
    assert.ok(e instanceof ZoneReadRefused);
    assert.equal(
      e.message,
      `GET /zones/${ZONE}: 401 failed. Rule 1 of the zone's e1 ruleset executes custom ruleset c1, and finding the account it belongs to needs the zone itself, which the API token may not read. Export with a token that also has the "Zone Read" permission on the zone and, to read the custom ruleset then, the account-level permission "Account Rulesets Read" (or "Account WAF Read") on the zone's account.`,
    );
    return true;
  });
});

test('one of the zone\'s entry points refused (403): the request, the entry point and its phase, and the permission that phase needs', async () => {
  const list: RulesetSummary[] = [
    { id: 'e1', kind: 'zone', phase: 'http_request_firewall_custom' },
    { id: 'e2', kind: 'zone', phase: 'http_request_transform' },
  ];
  // A token made for the WAF, on the hosted API: another product's phase is refused.
  const transform = reader({ list, zone: { e1: entry('e1', 'http_request_firewall_custom', []), e2: 403 }, account: {} });
  const e = await stopped(transform);
  assert.ok(e instanceof ZoneReadRefused && e.refusal instanceof Answer && e.refusal.status === 403);
  assert.equal(
    e.message,
    `GET /zones/${ZONE}/rulesets/e2: 403 Authentication error (10000). The zone's http_request_transform entry point (ruleset e2) is part of the export, and the API token may not read it: the http_request_transform phase needs the read permission of the product that owns it ("Zone WAF Read" reads only the WAF's phases). Export with a token that also has that permission on the zone.`,
  );
  // A WAF phase (401), and an entry point the list gives no phase (or an unknown one).
  const waf = reader({ list, zone: { e1: 401 }, account: {} });
  await assert.rejects(collectZoneRulesets(waf, ZONE), (err: unknown) => {
    assert.ok(err instanceof ZoneReadRefused);
    assert.match(err.message, /^GET \/zones\/\w+\/rulesets\/e1: 401 failed\. The zone's http_request_firewall_custom entry point \(ruleset e1\) is part of the export, and the API token may not read it: the http_request_firewall_custom phase needs the zone-level permission "Zone WAF Read"\. Export/);
    return true;
  });
  const noPhase = reader({ list: [{ id: 'e9', kind: 'zone' }], zone: { e9: 403 }, account: {} });
  await assert.rejects(collectZoneRulesets(noPhase, ZONE), (err: unknown) => err instanceof ZoneReadRefused && err.message.includes(`The zone's entry point e9 is part of the export, and the API token may not read it: each phase's rulesets need the read permission of the product that owns the phase`));
  const newPhase = reader({ list: [{ id: 'e9', kind: 'zone', phase: 'http_request_future' }], zone: { e9: 403 }, account: {} });
  await assert.rejects(collectZoneRulesets(newPhase, ZONE), (err: unknown) => err instanceof ZoneReadRefused && err.message.includes(`the http_request_future phase needs the read permission of the product that owns it`));
  // Any other failure of an entry point is the reader's, as it came.
  const failed = reader({ list, zone: { e1: 500 }, account: {} });
  await assert.rejects(collectZoneRulesets(failed, ZONE), (err: unknown) => err instanceof Answer && !(err instanceof ZoneReadRefused) && err.status === 500);
});

test('classify: what a failed read\'s status means, for every reader (401, 403 denied; 404 missing; anything else, or no status, other)', () => {
  assert.deepEqual(
    [401, 403, 404, 400, 429, 500, 200, 0, undefined].map(classify),
    ['denied', 'denied', 'missing', 'other', 'other', 'other', 'other', 'other', 'other'],
  );
});

test('other failures are the reader\'s, thrown as they came: the zone list refused, an account read that failed', async () => {
  const refusedList = reader({ list: [], zone: {}, account: {} });
  refusedList.listZoneRulesets = () => Promise.reject(new Answer(`/zones/${ZONE}/rulesets`, 403));
  await assert.rejects(collectZoneRulesets(refusedList, ZONE), (e: unknown) => e instanceof Answer && !(e instanceof ZoneReadRefused) && e.status === 403);
  const failed = reader({ list: [{ id: 'e1', kind: 'zone' }], zone: { e1: entry('e1', 'http_request_firewall_custom', [execute('a', 'c1')]) }, account: { c1: 500 } });
  await assert.rejects(collectZoneRulesets(failed, ZONE), (e: unknown) => e instanceof Answer && e.status === 500);
});
