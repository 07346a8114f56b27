// The legacy Firewall Rules API through the official SDK (`cloudflare` 7.x), over real HTTP
// on 127.0.0.1: one test per write the SDK has (create, update, edit, bulkEdit, bulkUpdate,
// bulkDelete, delete), each sending the body the SDK sends for it (one rule object for
// create / bulkUpdate / bulkEdit; the rate-limit-shaped action {mode}; an update without ids;
// bulkDelete's ids in the request options' query), asserting the exact answer in the shape
// the SDK reads (a page of rules, or one rule) and that the store holds the rule as sent.
// Then bad input through the SDK: the service's clear errors, and no change to the store.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import Cloudflare from 'cloudflare';
import type { RuleBulkEditParams, RuleBulkUpdateParams, RuleCreateParams, RuleEditParams, RuleUpdateParams } from 'cloudflare/resources/firewall/rules';
import { demoZoneId, seedId } from '../../server/src/service/seed';
import { startService, type TestService, legacySnapshot } from './harness';

let svc: TestService;
let cf: Cloudflare;
before(async () => {
  svc = await startService();
  cf = svc.sdk();
});
after(() => svc.close());

const ENT = demoZoneId('enterprise.example.com');
const PRO = demoZoneId('pro.example.com');
const MISSING = 'f'.repeat(32);
const ID = /^[0-9a-f]{32}$/;

/** A rule's row and its filter's row, as the store holds them. */
function stored(ruleId: string): unknown {
  const rule = svc.store.get<{ filter_id: string }>(
    'SELECT zone_id, filter_id, action, priority, paused, description, ref, products FROM firewall_rules WHERE id = ?',
    [ruleId],
  );
  if (!rule) return undefined;
  const filter = svc.store.get('SELECT zone_id, expression, paused, description, ref, single_call FROM filters WHERE id = ?', [rule.filter_id]);
  return { ...rule, filter };
}

function storedFilter(filterId: string): unknown {
  return svc.store.get('SELECT zone_id, expression, paused, description, ref, single_call FROM filters WHERE id = ?', [filterId]);
}

/** The SDK's error for a refused call: status and every error; the store must be unchanged. */
async function refusedBySdk(call: () => Promise<unknown>): Promise<{ status: number; errors: unknown[] }> {
  const before = legacySnapshot(svc);
  try {
    await call();
  } catch (e) {
    assert.ok(e instanceof Cloudflare.APIError, String(e));
    assert.deepEqual(legacySnapshot(svc), before, 'the store is unchanged');
    return { status: e.status as number, errors: e.errors as unknown[] };
  }
  assert.fail('expected the SDK to throw');
}

/** A rule made with a raw call (the API's array form), for the tests of the other writes. */
async function makeRule(zone: string, body: Record<string, unknown>): Promise<any> {
  const res = await svc.call('POST', `/zones/${zone}/firewall/rules`, { body: [body] });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.result[0];
}

describe('firewall rules through the SDK', () => {
  it('create: one rule object with the action as {mode} and an inline filter → a page with the rule, stored as sent', async () => {
    // The SDK's type has action {mode} and filter; the rest of the rule rides along in the body.
    const params: RuleCreateParams & { priority: number; description: string; ref: string } = {
      zone_id: ENT,
      action: { mode: 'managed_challenge' },
      filter: { expression: 'http.request.uri.path eq "/sdk/login"', description: 'SDK login path', ref: 'SDK-F', paused: true },
      priority: 50,
      description: 'Challenge the SDK login',
      ref: 'SDK-1',
    };
    const page = await cf.firewall.rules.create(params);
    assert.equal(page.result.length, 1);
    const rule = page.result[0]!;
    assert.match(rule.id!, ID);
    assert.match(rule.filter!.id!, ID);
    const expected = {
      id: rule.id,
      filter: { id: rule.filter!.id, expression: 'http.request.uri.path eq "/sdk/login"', paused: true, description: 'SDK login path', ref: 'SDK-F' },
      action: 'managed_challenge',
      priority: 50,
      paused: false,
      description: 'Challenge the SDK login',
      ref: 'SDK-1',
    };
    assert.deepEqual(rule, expected);
    assert.deepEqual(stored(rule.id!), {
      zone_id: ENT,
      filter_id: rule.filter!.id,
      action: 'managed_challenge',
      priority: 50,
      paused: 0,
      description: 'Challenge the SDK login',
      ref: 'SDK-1',
      products: '[]',
      filter: { zone_id: ENT, expression: 'http.request.uri.path eq "/sdk/login"', paused: 1, description: 'SDK login path', ref: 'SDK-F', single_call: 1 },
    });
    assert.deepEqual(await cf.firewall.rules.get(rule.id!, { zone_id: ENT }), expected);

    // The modes that are not a rule action's name, and the name itself (the API's form).
    const ban = (await cf.firewall.rules.create({ zone_id: ENT, action: { mode: 'ban' }, filter: { expression: 'ip.src eq 192.0.2.201' } })).result[0]!;
    const simulate = (await cf.firewall.rules.create({ zone_id: ENT, action: { mode: 'simulate' }, filter: { expression: 'ip.src eq 192.0.2.202' } })).result[0]!;
    const named = (
      await cf.firewall.rules.create({
        zone_id: ENT,
        action: 'bypass',
        products: ['waf'],
        filter: { expression: 'ip.src eq 192.0.2.203' },
      } as unknown as RuleCreateParams)
    ).result[0]!;
    assert.deepEqual(
      [ban, simulate, named].map((r) => [r.action, (r.filter as { expression?: string }).expression, r.products]),
      [
        ['block', 'ip.src eq 192.0.2.201', undefined],
        ['log', 'ip.src eq 192.0.2.202', undefined],
        ['bypass', 'ip.src eq 192.0.2.203', ['waf']],
      ],
    );
    assert.deepEqual(
      [ban, simulate, named].map((r) => svc.store.get('SELECT action, products FROM firewall_rules WHERE id = ?', [r.id!])),
      [
        { action: 'block', products: '[]' },
        { action: 'log', products: '[]' },
        { action: 'bypass', products: '["waf"]' },
      ],
    );
  });

  it('update: no ids in the body, the action as {mode}, an inline filter: the rule\'s own filter is rewritten in place; omitted fields are erased', async () => {
    const made = await makeRule(ENT, {
      filter: { expression: 'http.request.uri.path eq "/sdk/old"', description: 'old', ref: 'OLD' },
      action: 'block',
      priority: 9,
      paused: true,
      description: 'to update',
      ref: 'U-1',
    });
    const params: RuleUpdateParams & { description: string } = {
      zone_id: ENT,
      action: { mode: 'js_challenge' },
      filter: { expression: 'http.request.uri.path eq "/sdk/new"', paused: true, description: 'new' },
      description: 'updated by the SDK',
    };
    const updated = await cf.firewall.rules.update(made.id, params);
    const expected = {
      id: made.id,
      filter: { id: made.filter.id, expression: 'http.request.uri.path eq "/sdk/new"', paused: true, description: 'new', ref: '' },
      action: 'js_challenge',
      priority: null,
      paused: false,
      description: 'updated by the SDK',
      ref: '',
    };
    assert.deepEqual(updated, expected);
    assert.deepEqual(stored(made.id), {
      zone_id: ENT,
      filter_id: made.filter.id,
      action: 'js_challenge',
      priority: null,
      paused: 0,
      description: 'updated by the SDK',
      ref: '',
      products: '[]',
      filter: { zone_id: ENT, expression: 'http.request.uri.path eq "/sdk/new"', paused: 1, description: 'new', ref: '', single_call: 1 },
    });
    assert.deepEqual(await cf.firewall.rules.get(made.id, { zone_id: ENT }), expected);
    assert.equal(svc.store.get<{ n: number }>('SELECT COUNT(*) AS n FROM filters WHERE expression = ?', ['http.request.uri.path eq "/sdk/old"'])!.n, 0, 'no filter is left behind');

    // The same filter again: nothing to change on it.
    const again = await cf.firewall.rules.update(made.id, { ...params, action: { mode: 'challenge' } });
    assert.deepEqual(again, { ...expected, action: 'challenge' });

    // A filter made with the Filters API (not the rule's own) is left as it is: the rule gets a new one of its own.
    const shared = (await cf.filters.create({ zone_id: ENT, body: [{ expression: 'http.request.uri.path eq "/sdk/shared"', description: 'shared' }] })).result[0]!;
    const linked = await makeRule(ENT, { filter: { id: shared.id }, action: 'block' });
    const moved = await cf.firewall.rules.update(linked.id, { zone_id: ENT, action: { mode: 'managed_challenge' }, filter: { expression: 'http.request.uri.path eq "/sdk/mine"' } });
    const mine = moved.filter!.id!;
    assert.notEqual(mine, shared.id);
    assert.match(mine, ID);
    assert.deepEqual(moved, {
      id: linked.id,
      filter: { id: mine, expression: 'http.request.uri.path eq "/sdk/mine"', paused: false, description: '', ref: '' },
      action: 'managed_challenge',
      priority: null,
      paused: false,
      description: '',
      ref: '',
    });
    assert.deepEqual(storedFilter(mine), { zone_id: ENT, expression: 'http.request.uri.path eq "/sdk/mine"', paused: 0, description: '', ref: '', single_call: 1 });
    assert.deepEqual(storedFilter(shared.id!), { zone_id: ENT, expression: 'http.request.uri.path eq "/sdk/shared"', paused: 0, description: 'shared', ref: '', single_call: 0 });

    // A filter given by id (a rule from a GET, sent back) re-links the rule, as before.
    const back = await cf.firewall.rules.update(linked.id, { zone_id: ENT, action: 'allow', filter: shared } as unknown as RuleUpdateParams);
    assert.deepEqual([back.action, back.filter], ['allow', { id: shared.id, expression: 'http.request.uri.path eq "/sdk/shared"', paused: false, description: 'shared', ref: '' }]);
    assert.deepEqual(svc.store.get('SELECT filter_id, action FROM firewall_rules WHERE id = ?', [linked.id]), { filter_id: shared.id, action: 'allow' });
  });

  it('edit: {priority} for the rule in the path → a page with the rule; only the priority changes', async () => {
    const made = await makeRule(ENT, { filter: { expression: 'http.request.uri.path eq "/sdk/edit"' }, action: 'challenge', priority: 1, description: 'to edit' });
    const before = stored(made.id) as Record<string, unknown>;
    // The SDK's type has no priority; it sends whatever params it is given as the body.
    const page = await cf.firewall.rules.edit(made.id, { zone_id: ENT, priority: 77 } as RuleEditParams);
    assert.deepEqual(page.result, [{ ...made, priority: 77 }]);
    assert.deepEqual(stored(made.id), { ...before, priority: 77 });
    const cleared = await cf.firewall.rules.edit(made.id, { zone_id: ENT, priority: null } as RuleEditParams);
    assert.deepEqual(cleared.result, [{ ...made, priority: null }]);
    assert.deepEqual(stored(made.id), { ...before, priority: null });
  });

  it('bulkEdit: one {id, priority} object → a page with the rule; only the priority changes', async () => {
    const made = await makeRule(ENT, { filter: { expression: 'http.request.uri.path eq "/sdk/bulk-edit"' }, action: 'block', description: 'to bulk edit' });
    const before = stored(made.id) as Record<string, unknown>;
    const page = await cf.firewall.rules.bulkEdit({ zone_id: ENT, id: made.id, priority: 12 } as RuleBulkEditParams);
    assert.deepEqual(page.result, [{ ...made, priority: 12 }]);
    assert.deepEqual(stored(made.id), { ...before, priority: 12 });
  });

  it('bulkUpdate: one full rule object with its id → a page with the rule, stored as sent (by filter id, or inline)', async () => {
    const made = await makeRule(ENT, { filter: { expression: 'http.request.uri.path eq "/sdk/bulk-update"' }, action: 'block', priority: 4, description: 'to bulk update' });
    const other = (await cf.filters.create({ zone_id: ENT, body: [{ expression: 'http.request.uri.path eq "/sdk/bulk-other"' }] })).result[0]!;
    const page = await cf.firewall.rules.bulkUpdate({
      zone_id: ENT,
      id: made.id,
      filter: { id: other.id },
      action: 'bypass',
      products: ['waf', 'rateLimit'],
      paused: true,
      ref: 'BU-1',
    } as RuleBulkUpdateParams);
    const expected = {
      id: made.id,
      filter: { id: other.id, expression: 'http.request.uri.path eq "/sdk/bulk-other"', paused: false, description: '', ref: '' },
      action: 'bypass',
      priority: null,
      paused: true,
      description: '',
      ref: 'BU-1',
      products: ['waf', 'rateLimit'],
    };
    assert.deepEqual(page.result, [expected]);
    assert.deepEqual(stored(made.id), {
      zone_id: ENT,
      filter_id: other.id,
      action: 'bypass',
      priority: null,
      paused: 1,
      description: '',
      ref: 'BU-1',
      products: '["waf","rateLimit"]',
      filter: { zone_id: ENT, expression: 'http.request.uri.path eq "/sdk/bulk-other"', paused: 0, description: '', ref: '', single_call: 0 },
    });
    assert.deepEqual(await cf.firewall.rules.get(made.id, { zone_id: ENT }), expected);

    // Inline: the rule's filter is the Filters API's now, so the rule gets a new one of its own.
    const inline = await cf.firewall.rules.bulkUpdate({
      zone_id: ENT,
      id: made.id,
      filter: { expression: 'http.request.uri.path eq "/sdk/bulk-inline"', ref: 'BI' },
      action: { mode: 'challenge' },
      priority: 8,
    } as RuleBulkUpdateParams);
    const rule = inline.result[0]!;
    assert.deepEqual(inline.result, [
      {
        id: made.id,
        filter: { id: rule.filter!.id, expression: 'http.request.uri.path eq "/sdk/bulk-inline"', paused: false, description: '', ref: 'BI' },
        action: 'challenge',
        priority: 8,
        paused: false,
        description: '',
        ref: '',
      },
    ]);
    assert.deepEqual(storedFilter(rule.filter!.id!), { zone_id: ENT, expression: 'http.request.uri.path eq "/sdk/bulk-inline"', paused: 0, description: '', ref: 'BI', single_call: 1 });
    assert.deepEqual(storedFilter(other.id!), { zone_id: ENT, expression: 'http.request.uri.path eq "/sdk/bulk-other"', paused: 0, description: '', ref: '', single_call: 0 });
  });

  it('bulkDelete: the ids in the request options\' query → a page of {id}; the rules are gone, their filters stay', async () => {
    const a = await makeRule(ENT, { filter: { expression: 'http.request.uri.path eq "/sdk/delete/1"' }, action: 'block' });
    const b = await makeRule(ENT, { filter: { expression: 'http.request.uri.path eq "/sdk/delete/2"' }, action: 'block' });
    const page = await cf.firewall.rules.bulkDelete({ zone_id: ENT }, { query: { id: [a.id, MISSING, b.id] } });
    assert.deepEqual(page.result, [{ id: a.id }, { id: MISSING }, { id: b.id }]);
    for (const r of [a, b]) {
      assert.equal(stored(r.id), undefined);
      assert.deepEqual(storedFilter(r.filter.id), { zone_id: ENT, expression: r.filter.expression, paused: 0, description: '', ref: '', single_call: 1 });
    }
    // Without ids (the SDK's params carry none): nothing is deleted.
    const rules = svc.store.get<{ n: number }>('SELECT COUNT(*) AS n FROM firewall_rules')!.n;
    assert.deepEqual((await cf.firewall.rules.bulkDelete({ zone_id: ENT })).result, []);
    assert.equal(svc.store.get<{ n: number }>('SELECT COUNT(*) AS n FROM firewall_rules')!.n, rules);
  });

  it('delete: the rule in the path → {id}; the rule is gone, its filter stays', async () => {
    const made = await makeRule(ENT, { filter: { expression: 'http.request.uri.path eq "/sdk/delete-one"' }, action: 'block' });
    assert.deepEqual(await cf.firewall.rules.delete(made.id, { zone_id: ENT }), { id: made.id });
    assert.equal(stored(made.id), undefined);
    assert.deepEqual(storedFilter(made.filter.id), { zone_id: ENT, expression: 'http.request.uri.path eq "/sdk/delete-one"', paused: 0, description: '', ref: '', single_call: 1 });
    // The seeded rules are untouched by all of the above.
    assert.deepEqual(
      (await cf.firewall.rules.list({ zone_id: ENT, per_page: 100 })).result.slice(0, 3).map((r) => r.id),
      [0, 1, 2].map((i) => seedId(`firewall-rule:${ENT}:${i}`)),
    );
  });

  it('bad input through the SDK: the service\'s errors, at the field of the one-object body, and nothing stored', async () => {
    const f = { expression: 'http.request.uri.path eq "/sdk/bad"' };
    const login = svc.store.get<{ id: string }>('SELECT id FROM filters WHERE expression = ?', ['http.request.uri.path eq "/sdk/login"'])!.id;
    const cases: Array<[() => Promise<unknown>, number, unknown]> = [
      [
        () => cf.firewall.rules.create({ zone_id: ENT, action: { mode: 'ban', timeout: 60 }, filter: f }),
        400,
        { code: 20021, message: 'a firewall rule\'s action has no timeout (that is a rate limit\'s): give the action alone, as its name ("action": "block") or {"mode": …}', source: { pointer: '/action/timeout' } },
      ],
      [
        () => cf.firewall.rules.create({ zone_id: ENT, action: { mode: 'ban', response: { body: 'no' } }, filter: f }),
        400,
        { code: 20021, message: 'a firewall rule\'s action has no response (that is a rate limit\'s): give the action alone, as its name ("action": "block") or {"mode": …}', source: { pointer: '/action/response' } },
      ],
      [() => cf.firewall.rules.create({ zone_id: ENT, action: {}, filter: f }), 400, { code: 20021, message: 'action.mode is required when the action is an object', source: { pointer: '/action/mode' } }],
      [
        () => cf.firewall.rules.create({ zone_id: ENT, action: { mode: 'throttle' }, filter: f } as unknown as RuleCreateParams),
        400,
        { code: 20021, message: "'throttle' is not a valid value for action.mode: expected one of block, challenge, js_challenge, managed_challenge, allow, log, bypass, ban, simulate", source: { pointer: '/action/mode' } },
      ],
      [() => cf.firewall.rules.create({ zone_id: ENT, action: { mode: 'challenge' }, filter: {} }), 400, { code: 20021, message: 'expression is required', source: { pointer: '/filter/expression' } }],
      [
        () => cf.firewall.rules.create({ zone_id: ENT, action: { mode: 'challenge' }, filter: { expression: 'ip.src eq 1.2.3' } }),
        400,
        {
          code: 20021,
          message:
            "'ip.src eq 1.2.3' is not a valid value for expression because could not parse filter expression: Filter parsing error (1:11):\nip.src eq 1.2.3\n          ^^^^^ couldn't parse address in network: invalid IP address syntax\n",
          source: { pointer: '/filter/expression' },
        },
      ],
      [
        () => cf.firewall.rules.create({ zone_id: ENT, action: { mode: 'challenge' }, filter: { expression: 'http.request.uri.path eq "/sdk/login"' } }),
        400,
        {
          code: 10202,
          message: `the filter duplicates an already existing filter (config duplicates an already existing config): to share it, use "filter": {"id": "${login}"}`,
          source: { pointer: '/filter/expression' },
          meta: { id: login },
        },
      ],
      [() => cf.firewall.rules.update(MISSING, { zone_id: ENT, action: { mode: 'challenge' }, filter: f }), 404, { code: 10007, message: `firewall rule ${MISSING} not found` }],
      [() => cf.firewall.rules.edit(seedId(`firewall-rule:${ENT}:2`), { zone_id: ENT }), 400, { code: 20021, message: 'priority is required (a number from 0 to 2147483647, or null)', source: { pointer: '/priority' } }],
      [() => cf.firewall.rules.bulkEdit({ zone_id: ENT, id: seedId(`firewall-rule:${ENT}:2`) }), 400, { code: 20021, message: 'priority is required (a number from 0 to 2147483647, or null)', source: { pointer: '/priority' } }],
      [() => cf.firewall.rules.bulkEdit({ zone_id: ENT, id: MISSING, priority: 1 } as RuleBulkEditParams), 404, { code: 10007, message: `firewall rule ${MISSING} not found`, source: { pointer: '/id' } }],
      [() => cf.firewall.rules.bulkUpdate({ zone_id: ENT, id: seedId(`firewall-rule:${ENT}:2`) }), 400, { code: 20021, message: 'action is required', source: { pointer: '/action' } }],
      [() => cf.firewall.rules.bulkUpdate({ zone_id: ENT, id: 'abc', action: 'block', filter: f } as RuleBulkUpdateParams), 400, { code: 20021, message: "'abc' is not a valid value for id: expected 32 hexadecimal digits", source: { pointer: '/id' } }],
    ];
    for (const [call, status, first] of cases) {
      const got = await refusedBySdk(call);
      assert.deepEqual([got.status, got.errors[0]], [status, first]);
    }

    // A feature the plan lacks (rate limiting's `simulate` is `log`: Enterprise only): no
    // rule, and the inline filter is kept for the two-call flow, as at every single-call create.
    let refused: InstanceType<typeof Cloudflare.APIError> | undefined;
    try {
      await cf.firewall.rules.create({ zone_id: PRO, action: { mode: 'simulate' }, filter: f });
    } catch (e) {
      assert.ok(e instanceof Cloudflare.APIError);
      refused = e;
    }
    assert.ok(refused, 'expected the SDK to throw');
    const error = (refused.errors as any[])[0];
    const filterId = error.meta.filter_id;
    assert.deepEqual([refused.status, error], [
      400,
      {
        code: 10208,
        message: `'log' is not a valid value for action because the log action needs an Enterprise plan; this zone is on the Pro plan. The filter was created (id ${filterId}) but the rule was not: fix the rule and finish with the two-call flow, POST /zones/${PRO}/firewall/rules with "filter": {"id": "${filterId}"}.`,
        source: { pointer: '/action' },
        meta: { filter_id: filterId, filter_ids: [filterId] },
      },
    ]);
    assert.equal(svc.store.get<{ n: number }>('SELECT COUNT(*) AS n FROM firewall_rules WHERE zone_id = ?', [PRO])!.n, 0);
    assert.deepEqual(storedFilter(filterId), { zone_id: PRO, expression: f.expression, paused: 0, description: '', ref: '', single_call: 1 });
  });
});
