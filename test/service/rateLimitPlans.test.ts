// What a zone's plan allows of its rate limiting rules (reference traffic-events-terraform.md
// §2.3): the API refuses a period, timeout, characteristic, counting expression or field above
// the plan, and more rate limiting rules than it has; and what no plan allows (§2.1): lists in
// an account's rate limiting rules, a custom list with the answer in a counting expression.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DEMO_ACCOUNT, demoZoneId } from '../../server/src/service/seed';
import { firstError, startService, type TestService } from './harness';

const entrypoint = (zone: string) => `/zones/${demoZoneId(zone)}/rulesets/phases/http_ratelimit/entrypoint`;
const rule = (n: number, ratelimit: Record<string, unknown> = {}) => ({
  action: 'block',
  expression: `http.request.uri.path eq "/r${n}"`,
  ratelimit: { characteristics: ['cf.colo.id', 'ip.src'], period: 60, requests_per_period: 5, mitigation_timeout: 60, ...ratelimit },
});

describe("a zone's rate limiting rules within its plan", () => {
  let svc: TestService;
  before(async () => {
    svc = await startService();
  });
  after(() => svc.close());

  it('refuses a setting above the plan with 400, 20021, at the field', async () => {
    const r = await svc.call('PUT', entrypoint('pro.example.com'), { body: { rules: [rule(1, { period: 600 })] } });
    assert.equal(r.status, 400);
    assert.deepEqual(firstError(r.body), {
      code: 20021,
      message: 'a counting period of 600 seconds needs the Business plan or above: the Pro plan counts over at most 60 seconds',
      pointer: '/rules/0/ratelimit/period',
    });
    // The same rule is within the Business plan.
    assert.equal((await svc.call('PUT', entrypoint('business.example.com'), { body: { rules: [rule(1, { period: 600 })] } })).status, 200);
  });

  it('refuses more rate limiting rules than the plan has (Pro: 2) with 10207; an execute rule is not one', async () => {
    assert.equal((await svc.call('PUT', entrypoint('pro.example.com'), { body: { rules: [rule(1), rule(2)] } })).status, 200);
    const r = await svc.call('POST', `/zones/${demoZoneId('pro.example.com')}/rulesets/${(await svc.call('GET', entrypoint('pro.example.com'))).body.result.id}/rules`, { body: rule(3) });
    assert.equal(r.status, 400);
    assert.deepEqual([firstError(r.body).code, firstError(r.body).message], [10207, "exceeded the maximum number of rate limiting rules for the Pro plan (2): the zone's http_ratelimit entry point would have 3 rules (it has 2)"]);
    // Two rate limiting rules and an execute rule of an account's rate limiting ruleset.
    const account = await svc.call('POST', `/accounts/${DEMO_ACCOUNT.id}/rulesets`, { body: { name: 'shared limits', kind: 'custom', phase: 'http_ratelimit', rules: [rule(9)] } });
    assert.equal(account.status, 200);
    const withExecute = [rule(1), rule(2), { action: 'execute', expression: 'true', action_parameters: { id: account.body.result.id } }];
    assert.equal((await svc.call('PUT', entrypoint('pro.example.com'), { body: { rules: withExecute } })).status, 200);
  });

  it("refuses a field the plan's rate limiting rules cannot read, at the expression", async () => {
    const headers = { ...rule(1), expression: 'http.request.headers["x-api-key"][0] eq "k"' };
    const r = await svc.call('PUT', entrypoint('business.example.com'), { body: { rules: [headers] } });
    assert.equal(r.status, 400);
    assert.deepEqual(firstError(r.body), {
      code: 20021,
      message:
        '\'http.request.headers["x-api-key"][0] eq "k"\' is not a valid value for expression because it uses what this ruleset cannot: Filter error (1:1):\nhttp.request.headers["x-api-key"][0] eq "k"\n^^^^^^^^^^^^^^^^^^^^ `http.request.headers` in a rate limiting rule requires the Enterprise plan\n',
      pointer: '/rules/0/expression',
    });
    // The method is a Business field, not a Pro one.
    const method = { ...rule(1), expression: 'http.request.method eq "POST"' };
    assert.equal((await svc.call('PUT', entrypoint('business.example.com'), { body: { rules: [method] } })).status, 200);
    const pro = await svc.call('PUT', entrypoint('pro.example.com'), { body: { rules: [method] } });
    assert.equal(pro.status, 400);
    assert.match(firstError(pro.body).message, /`http\.request\.method` in a rate limiting rule requires the Business plan or above\n$/);
    assert.equal((await svc.call('PUT', entrypoint('enterprise.example.com'), { body: { rules: [headers] } })).status, 200);
  });

  it("refuses lists in an account's rate limiting rules, and a custom list with the answer in a counting expression", async () => {
    const listed = { ...rule(1), expression: 'ip.src in $office' };
    const r = await svc.call('POST', `/accounts/${DEMO_ACCOUNT.id}/rulesets`, { body: { name: 'listed', kind: 'custom', phase: 'http_ratelimit', rules: [listed] } });
    assert.equal(r.status, 400);
    assert.deepEqual(firstError(r.body), {
      code: 20021,
      message: "'ip.src in $office' is not a valid value for expression because it uses what this ruleset cannot: Filter error (1:11):\nip.src in $office\n          ^^^^^^^ an account's rate limiting rules cannot use lists (`$office`)\n",
      pointer: '/rules/0/expression',
    });
    // A zone's rate limiting rule may use a list.
    assert.equal((await svc.call('PUT', entrypoint('enterprise.example.com'), { body: { rules: [listed] } })).status, 200);
    const both = rule(1, { counting_expression: 'ip.src in $office and http.response.code eq 401' });
    // Nor may a rule whose expression uses a custom list count only what reaches the origin.
    const toOrigin = await svc.call('PUT', entrypoint('enterprise.example.com'), { body: { rules: [{ ...listed, ratelimit: { ...listed.ratelimit, requests_to_origin: true } }] } });
    assert.equal(toOrigin.status, 400);
    assert.deepEqual([firstError(toOrigin.body).pointer, firstError(toOrigin.body).message], ['/rules/0/ratelimit/requests_to_origin', 'a rule whose expression uses a custom list ($office) counts cached assets too: requests_to_origin must be false']);
    const c = await svc.call('PUT', entrypoint('enterprise.example.com'), { body: { rules: [both] } });
    assert.equal(c.status, 400);
    assert.deepEqual([firstError(c.body).pointer, firstError(c.body).message.split('\n').at(-2)], [
      '/rules/0/ratelimit/counting_expression',
      "          ^^^^^^^ a counting expression that reads the origin's answer (`http.response.code`) cannot use custom lists (`$office`)",
    ]);
  });
});
