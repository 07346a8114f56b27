// The legacy Firewall Rules API through the official SDK. Its firewall.rules request types
// are not the API's (they borrow rate limiting's): create, bulkEdit and bulkUpdate send one
// object, update sends no id, an action is `{mode}`. The hosted API refused those bodies, so
// the service does too — faithfully, so that code tried here does not fail on Cloudflare —
// and each error says what the SDK sent and what to send; the array form works.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import Cloudflare from 'cloudflare';
import { demoZoneId } from '../../server/src/service/seed';
import { legacySnapshot, startService, type TestService } from './harness';

let svc: TestService;
let cf: Cloudflare;
let filterId: string;
let ruleId: string;
before(async () => {
  svc = await startService();
  cf = svc.sdk();
  const f = await svc.call('POST', `/zones/${ENT}/filters`, { body: [{ expression: 'http.host eq "a.example.com"' }] });
  filterId = f.body.result[0].id;
  const r = await svc.call('POST', `/zones/${ENT}/firewall/rules`, { body: [{ action: 'block', filter: { id: filterId } }] });
  ruleId = r.body.result[0].id;
});
after(() => svc.close());

const ENT = demoZoneId('enterprise.example.com');
/** What a collection write with one object instead of an array is told, by method (the official SDK sends one; firewallRulesSdk.test.ts). */
const ONE_OBJECT = {
  post: `invalid JSON: expected an array of firewall rules at the top level, got one object: send it as [{…}] (the official SDK's firewall.rules.create sends one object, which the API refuses; call the endpoint with an array body instead: client.post(path, { body: [rule] }))`,
  put: `invalid JSON: expected an array of firewall rules at the top level, got one object: send it as [{…}] (the official SDK's firewall.rules.bulkUpdate sends one object, which the API refuses; call the endpoint with an array body instead: client.put(path, { body: [{ id, …rule }] }))`,
  patch: `invalid JSON: expected an array of firewall rules at the top level, got one object: send it as [{…}] (the official SDK's firewall.rules.bulkEdit sends one object, which the API refuses; call the endpoint with an array body instead: client.patch(path, { body: [{ id, priority }] }))`,
};

/** The API error a refused SDK call carries, after checking that nothing was stored. */
async function refused(call: () => Promise<unknown>): Promise<{ code: number; message: string; source?: { pointer: string } }[]> {
  const snapshot = legacySnapshot(svc);
  const e = await call().then(
    () => assert.fail('the call was taken'),
    (x: unknown) => x,
  );
  assert.ok(e instanceof Cloudflare.BadRequestError, String(e));
  assert.deepEqual(legacySnapshot(svc), snapshot, 'nothing stored');
  return (e.error as { errors: { code: number; message: string; source?: { pointer: string } }[] }).errors;
}

// The SDK's types do not take what it sends at run time; the calls go through `any` as a user's would through a cast.
const rules = () => cf.firewall.rules as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;

describe('firewall rules through the official SDK', () => {
  it('create, bulkEdit and bulkUpdate send one object, edit no priority: refused, each saying which raw call to make', async () => {
    const create = await refused(() => rules().create!({ zone_id: ENT, action: { mode: 'block' }, filter: { expression: 'http.host eq "b.example.com"' } }));
    const bulkEdit = await refused(() => rules().bulkEdit!({ zone_id: ENT, body: { id: ruleId, priority: 1 } }));
    const bulkUpdate = await refused(() => rules().bulkUpdate!({ zone_id: ENT, body: { id: ruleId, action: 'block', filter: { id: filterId } } }));
    assert.deepEqual([create, bulkUpdate, bulkEdit], (['post', 'put', 'patch'] as const).map((m) => [{ code: 10026, message: ONE_OBJECT[m], source: { pointer: '/' } }]));
    // edit sends no priority at all, the one thing a PATCH of a rule changes.
    assert.deepEqual(await refused(() => rules().edit!(ruleId, { zone_id: ENT })), [
      { code: 20021, message: "priority is required (a number from 0 to 2147483647, or null); the official SDK's firewall.rules.edit sends none: call client.patch(path, { body: { priority } })", source: { pointer: '/priority' } },
    ]);
  });

  it('update sends no id and the action as {mode}: refused, each saying what to send', async () => {
    assert.deepEqual(await refused(() => rules().update!(ruleId, { zone_id: ENT, action: { mode: 'block' }, filter: { id: filterId } })), [
      { code: 20021, message: "id is required: the body of a PUT of one firewall rule names the rule's id too (the official SDK's firewall.rules.update sends none; send the rule with its id)", source: { pointer: '/id' } },
    ]);
    const put = (body: unknown) => svc.call('PUT', `/zones/${ENT}/firewall/rules/${ruleId}`, { body });
    const mode = await put({ id: ruleId, action: { mode: 'block' }, filter: { id: filterId } });
    assert.deepEqual([mode.status, mode.body.errors], [
      400,
      [{ code: 10026, message: 'invalid JSON: field "action" must be a string, got object ({"mode": …}, as the official SDK\'s firewall.rules types have it: the API takes the action\'s name, e.g. "action": "block")', source: { pointer: '/action' } }],
    ]);
    // A rule's update links a filter by id; it does not rewrite the filter.
    const inline = await put({ id: ruleId, action: 'block', filter: { expression: 'http.host eq "c.example.com"' } });
    assert.deepEqual([inline.status, inline.body.errors], [
      400,
      [{ code: 20021, message: 'filter.id is required: an update links the rule to an existing filter by its id ({"id": "<filter id>"}); change the filter\'s expression with PUT /zones/{zone_id}/filters/{filter_id}', source: { pointer: '/filter/id' } }],
    ]);
  });

  it('the array form, sent through the client as the errors say, is taken', async () => {
    const made = (await cf.post(`/zones/${ENT}/firewall/rules`, { body: [{ action: 'challenge', filter: { expression: 'http.host eq "d.example.com"' }, description: 'from the SDK' }] })) as { result: { id: string; action: string; description: string; filter: { expression: string } }[] };
    const [rule] = made.result;
    assert.deepEqual([rule!.action, rule!.description, rule!.filter.expression], ['challenge', 'from the SDK', 'http.host eq "d.example.com"']);
    const listed = await svc.call('GET', `/zones/${ENT}/firewall/rules/${rule!.id}`);
    assert.equal(listed.body.result.description, 'from the SDK');
  });
});
