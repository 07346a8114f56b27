// The legacy Firewall Rules API over real HTTP (rules-api §4.1–4.2): list with filters and
// pages, create as an array (single-call with inline filters, two-call with filter.id),
// get, PUT (one and bulk), PATCH priorities, DELETE (one and bulk), the single-call cases
// (invalid or over the quota → nothing; plan → the filter only, with the two-call advice), bad
// bodies with no change to the store, permissions, and `--legacy sunset`. Raw calls: the
// SDK's request types for firewall rules are wrong (rules-api §6.2).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { demoZoneId, seedId } from '../../server/src/service/seed';
import { startService, type TestService, firstError, legacySnapshot, refusedUnchanged } from './harness';

let svc: TestService;
before(async () => {
  svc = await startService();
});
after(() => svc.close());

const ENT = demoZoneId('enterprise.example.com');
const FW = demoZoneId('firewall.example.com');
const PRO = demoZoneId('pro.example.com');
const BIZ = demoZoneId('business.example.com');
const OVR = demoZoneId('overrides.example.com');
const MISSING = 'f'.repeat(32);
/** What a collection write with one object instead of an array is told (the official SDK sends one; firewallRulesSdk.test.ts). */
/** What a collection write with one object instead of an array is told, by method (the official SDK sends one; firewallRulesSdk.test.ts). */
const ONE_OBJECT = {
  post: `invalid JSON: expected an array of firewall rules at the top level, got one object: send it as [{…}] (the official SDK's firewall.rules.create sends one object, which the API refuses; call the endpoint with an array body instead: client.post(path, { body: [rule] }))`,
  put: `invalid JSON: expected an array of firewall rules at the top level, got one object: send it as [{…}] (the official SDK's firewall.rules.bulkUpdate sends one object, which the API refuses; call the endpoint with an array body instead: client.put(path, { body: [{ id, …rule }] }))`,
  patch: `invalid JSON: expected an array of firewall rules at the top level, got one object: send it as [{…}] (the official SDK's firewall.rules.bulkEdit sends one object, which the API refuses; call the endpoint with an array body instead: client.patch(path, { body: [{ id, priority }] }))`,
};

const rules = (zone: string) => `/zones/${zone}/firewall/rules`;

const snapshot = () => legacySnapshot(svc);
const err = firstError;
const refused = (method: string, path: string, options: Parameters<TestService['call']>[2], status: number, expected: ReturnType<typeof firstError>) =>
  refusedUnchanged(svc, method, path, options, status, expected);

const seededFilter = (zone: string, i: number) => seedId(`filter:${zone}:${i}`);
const seededRule = (zone: string, i: number) => seedId(`firewall-rule:${zone}:${i}`);

describe('firewall rules: reading', () => {
  it('lists the seeded rules with their filters, in order, with page info', async () => {
    const res = await svc.call('GET', rules(ENT));
    assert.equal(res.status, 200);
    assert.deepEqual(res.body.result[0], {
      id: seededRule(ENT, 0),
      filter: {
        id: seededFilter(ENT, 0),
        expression: '(http.request.uri.path eq "/admin/health" and ip.src in {192.0.2.0/24})',
        paused: false,
        description: 'Health checks skip the WAF',
        ref: '',
      },
      action: 'bypass',
      priority: 1,
      paused: false,
      description: 'Health checks skip the WAF',
      ref: '',
      products: ['waf'],
    });
    assert.deepEqual(
      res.body.result.map((r: any) => [r.action, r.priority, r.description]),
      [
        ['bypass', 1, 'Health checks skip the WAF'],
        ['managed_challenge', 2, 'Challenge Tor exit nodes'],
        ['block', null, 'Block retired endpoint 2'],
      ],
    );
    assert.equal('products' in res.body.result[2], false);
    assert.deepEqual(res.body.result_info, { page: 1, per_page: 25, count: 3, total_count: 3, total_pages: 1 });
  });

  it('pages the 201-rule zone (per_page 5–100, default 25) and answers [] beyond the last page', async () => {
    const first = await svc.call('GET', rules(FW));
    assert.deepEqual(first.body.result_info, { page: 1, per_page: 25, count: 25, total_count: 201, total_pages: 9 });
    const seen: string[] = [];
    for (let page = 1; ; page++) {
      const res = await svc.call('GET', `${rules(FW)}?per_page=100&page=${page}`);
      assert.equal(res.status, 200);
      if (res.body.result.length === 0) {
        assert.equal(page, 4);
        break;
      }
      seen.push(...res.body.result.map((r: any) => r.id));
    }
    assert.deepEqual(seen, Array.from({ length: 201 }, (_, i) => seededRule(FW, i)));
    const small = await svc.call('GET', `${rules(FW)}?per_page=4`);
    assert.deepEqual([small.status, err(small.body)], [400, { code: 20021, message: "'4' is not a valid value for per_page: expected an integer from 5 to 100" }]);
    const big = await svc.call('GET', `${rules(FW)}?per_page=101`);
    assert.equal(big.status, 400);
    const page0 = await svc.call('GET', `${rules(FW)}?page=0`);
    assert.deepEqual(err(page0.body), { code: 20021, message: "'0' is not a valid value for page: expected an integer from 1 to 9007199254740991" });
  });

  it('filters the list by id, description (case-insensitive substring), action and paused', async () => {
    const byDescription = await svc.call('GET', `${rules(FW)}?description=RETIRED%20endpoint%2020`);
    assert.deepEqual(
      byDescription.body.result.map((r: any) => r.description),
      ['Block retired endpoint 20', 'Block retired endpoint 200'],
    );
    const byAction = await svc.call('GET', `${rules(FW)}?action=managed_challenge`);
    assert.deepEqual(byAction.body.result.map((r: any) => r.id), [seededRule(FW, 1)]);
    const byId = await svc.call('GET', `${rules(FW)}?id=${seededRule(FW, 7)}`);
    assert.deepEqual(byId.body.result.map((r: any) => r.description), ['Block retired endpoint 7']);
    const paused = await svc.call('GET', `${rules(FW)}?paused=true`);
    assert.deepEqual([paused.body.result, paused.body.result_info.total_count], [[], 0]);
    const notPaused = await svc.call('GET', `${rules(FW)}?paused=false&per_page=5`);
    assert.equal(notPaused.body.result_info.total_count, 201);
    const bad = await svc.call('GET', `${rules(FW)}?paused=yes`);
    assert.deepEqual([bad.status, err(bad.body)], [400, { code: 20021, message: "'yes' is not a valid value for paused: expected true or false" }]);
  });

  it('gets one rule; an unknown id is 404, a malformed one the routing error', async () => {
    const one = await svc.call('GET', `${rules(ENT)}/${seededRule(ENT, 1)}`);
    assert.equal(one.status, 200);
    assert.equal(one.body.result.filter.expression, '(ip.geoip.country in {"T1"})');
    const missing = await svc.call('GET', `${rules(ENT)}/${MISSING}`);
    assert.deepEqual([missing.status, err(missing.body)], [404, { code: 10007, message: `firewall rule ${MISSING} not found` }]);
    const other = await svc.call('GET', `${rules(PRO)}/${seededRule(ENT, 1)}`);
    assert.equal(other.status, 404, 'a rule of another zone is not found');
    const malformed = await svc.call('GET', `${rules(ENT)}/nope`);
    assert.equal(malformed.status, 400);
    assert.deepEqual(
      malformed.body.errors.map((e: any) => e.code),
      [7003, 7000],
    );
  });
});

describe('firewall rules: create', () => {
  it('single call: creates the rule and its inline filter, marked as the rule\'s own', async () => {
    const res = await svc.call('POST', rules(PRO), {
      body: [{ filter: { expression: 'http.request.uri.path eq "/wp-login.php"', description: 'WordPress login' }, action: 'managed_challenge', priority: 10, description: 'Protect login', ref: 'WP-1' }],
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const [rule] = res.body.result;
    assert.match(rule.id, /^[0-9a-f]{32}$/);
    assert.match(rule.filter.id, /^[0-9a-f]{32}$/);
    assert.deepEqual(rule, {
      id: rule.id,
      filter: { id: rule.filter.id, expression: 'http.request.uri.path eq "/wp-login.php"', paused: false, description: 'WordPress login', ref: '' },
      action: 'managed_challenge',
      priority: 10,
      paused: false,
      description: 'Protect login',
      ref: 'WP-1',
    });
    assert.deepEqual(svc.store.get('SELECT single_call FROM filters WHERE id = ?', [rule.filter.id]), { single_call: 1 });
    const got = await svc.call('GET', `${rules(PRO)}/${rule.id}`);
    assert.deepEqual(got.body.result, rule);
  });

  it('two calls: a filter from the Filters API, shared by several rules', async () => {
    const f = await svc.call('POST', `/zones/${PRO}/filters`, { body: [{ expression: 'ip.src in {198.51.100.0/24}' }] });
    assert.equal(f.status, 200);
    const filterId = f.body.result[0].id;
    const res = await svc.call('POST', rules(PRO), {
      body: [
        { filter: { id: filterId }, action: 'block', description: 'Block the lab' },
        { filter: { id: filterId }, action: 'bypass', products: ['waf', 'rateLimit', 'waf'], description: 'Lab skips WAF' },
      ],
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(
      res.body.result.map((r: any) => [r.filter.id, r.filter.expression, r.action, r.products]),
      [
        [filterId, 'ip.src in {198.51.100.0/24}', 'block', undefined],
        [filterId, 'ip.src in {198.51.100.0/24}', 'bypass', ['waf', 'rateLimit']],
      ],
    );
    assert.deepEqual(svc.store.get('SELECT single_call FROM filters WHERE id = ?', [filterId]), { single_call: 0 });
  });

  it('is transactional: one invalid expression in a batch and nothing is created', async () => {
    await refused(
      'POST',
      rules(PRO),
      {
        body: [
          { filter: { expression: 'http.host eq "a.example"' }, action: 'block' },
          { filter: { expression: 'ip.src eq 1.2.3' }, action: 'block' },
        ],
      },
      400,
      {
        code: 20021,
        message:
          "'ip.src eq 1.2.3' is not a valid value for expression because could not parse filter expression: Filter parsing error (1:11):\nip.src eq 1.2.3\n          ^^^^^ couldn't parse address in network: invalid IP address syntax\n",
        pointer: '/1/filter/expression',
      },
    );
  });

  it('refuses invalid rules with the field at fault, creating nothing', async () => {
    const f = { expression: 'http.host eq "x.example"' };
    const cases: Array<[unknown, ReturnType<typeof err>, number?]> = [
      [[{ filter: f, action: 'allow2' }], { code: 20021, message: "'allow2' is not a valid value for action: expected one of block, challenge, js_challenge, managed_challenge, allow, log, bypass", pointer: '/0/action' }],
      [[{ filter: f }], { code: 20021, message: 'action is required', pointer: '/0/action' }],
      [[{ action: 'block' }], { code: 20021, message: 'filter is required: an inline filter {"expression": …} or an existing one {"id": "<filter id>"}', pointer: '/0/filter' }],
      [[{ filter: {}, action: 'block' }], { code: 20021, message: 'expression is required', pointer: '/0/filter/expression' }],
      [[{ filter: { id: MISSING }, action: 'block' }], { code: 10007, message: `filter ${MISSING} not found`, pointer: '/0/filter/id' }, 404],
      [[{ filter: { id: MISSING, expression: 'true' }, action: 'block' }], { code: 10026, message: 'invalid JSON: unknown field "expression"', pointer: '/0/filter/expression' }],
      [[{ filter: { id: 'abc' }, action: 'block' }], { code: 20021, message: "'abc' is not a valid value for filter.id: expected 32 hexadecimal digits", pointer: '/0/filter/id' }],
      [[{ filter: f, action: 'block', products: ['waf'] }], { code: 20021, message: "products are only allowed with the 'bypass' action, not 'block'", pointer: '/0/products' }],
      [[{ filter: f, action: 'bypass' }], { code: 20021, message: "products must be specified for the 'bypass' action", pointer: '/0/products' }],
      [[{ filter: f, action: 'bypass', products: ['cdn'] }], { code: 20021, message: "'cdn' is not a valid value for products: expected one of zoneLockdown, uaBlock, bic, hot, securityLevel, rateLimit, waf", pointer: '/0/products/0' }],
      [[{ filter: f, action: 'block', priority: -1 }], { code: 20021, message: "'-1' is not a valid value for priority: expected 0 to 2147483647", pointer: '/0/priority' }],
      [[{ filter: f, action: 'block', priority: 2147483648 }], { code: 20021, message: "'2147483648' is not a valid value for priority: expected 0 to 2147483647", pointer: '/0/priority' }],
      [[{ filter: f, action: 'block', priority: 1.5 }], { code: 10026, message: 'invalid JSON: field "priority" must be an integer, got number', pointer: '/0/priority' }],
      [[{ filter: f, action: 'block', description: 'd'.repeat(501) }], { code: 20021, message: "'description' is too long: at most 500 characters, got 501", pointer: '/0/description' }],
      [[{ filter: f, action: 'block', ref: 'r'.repeat(51) }], { code: 20021, message: "'ref' is too long: at most 50 characters, got 51", pointer: '/0/ref' }],
      [[{ filter: f, action: 'block', paused: 'yes' }], { code: 10026, message: 'invalid JSON: field "paused" must be true or false, got string', pointer: '/0/paused' }],
      [[{ filter: f, action: 'block', name: 'x' }], { code: 10026, message: 'invalid JSON: unknown field "name"', pointer: '/0/name' }],
      [[{ filter: { ...f, enabled: true }, action: 'block' }], { code: 10026, message: 'invalid JSON: unknown field "enabled"', pointer: '/0/filter/enabled' }],
      [[{ filter: f, action: 7 }], { code: 10026, message: 'invalid JSON: field "action" must be a string, got number', pointer: '/0/action' }],
      [{ filter: f, action: 'block' }, { code: 10026, message: ONE_OBJECT.post, pointer: '/' }],
      [['block'], { code: 10026, message: 'invalid JSON: expected an object at /0, got string', pointer: '/0' }],
      [[{ filter: { expression: '' }, action: 'block' }], { code: 20125, message: "'' is not a valid value for expression because the expression cannot be blank", pointer: '/0/filter/expression' }],
      [
        [{ filter: { expression: 'http.response.code eq 403' }, action: 'block' }],
        {
          code: 20021,
          message:
            "'http.response.code eq 403' is not a valid value for expression because could not parse filter expression: Filter parsing error (1:1):\nhttp.response.code eq 403\n^^^^^^^^^^^^^^^^^^ the field `http.response.code` is not available in phase http_request_firewall_custom\n",
          pointer: '/0/filter/expression',
        },
      ],
    ];
    for (const [body, expected, status] of cases) await refused('POST', rules(PRO), { body }, status ?? 400, expected);
  });

  it('refuses malformed JSON and a huge body, changing nothing', async () => {
    const before = snapshot();
    const bad = await svc.call('POST', rules(PRO), { rawBody: '[{"action": "block",' });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.errors[0].code, 10026);
    assert.match(bad.body.errors[0].message, /^invalid JSON: .*; send a JSON document with Content-Type: application\/json$/);
    const huge = await svc.call('POST', rules(PRO), { rawBody: JSON.stringify([{ filter: { expression: 'true' }, action: 'block', description: 'x'.repeat(9 * 1024 * 1024) }]) });
    assert.deepEqual([huge.status, err(huge.body)], [413, { code: 10027, message: 'The request body is larger than 8388608 bytes; split the change into smaller requests' }]);
    const empty = await svc.call('POST', rules(PRO));
    assert.deepEqual([empty.status, err(empty.body)], [400, { code: 10026, message: 'invalid JSON: expected an array at the top level, got nothing', pointer: '/' }]);
    assert.deepEqual(snapshot(), before);
  });

  it('an inline filter that duplicates an existing one: 10202 with the existing id, nothing created', async () => {
    const existing = svc.store.get<{ id: string }>("SELECT id FROM filters WHERE expression = 'ip.src in {198.51.100.0/24}'")!.id;
    await refused('POST', rules(PRO), { body: [{ filter: { expression: 'ip.src in {198.51.100.0/24}' }, action: 'block' }] }, 400, {
      code: 10202,
      message: `filter at index 0 duplicates an already existing filter (config duplicates an already existing config): to share it, use "filter": {"id": "${existing}"}`,
      pointer: '/0/filter/expression',
      meta: { id: existing },
    });
    await refused(
      'POST',
      rules(PRO),
      { body: [{ filter: { expression: 'ip.src eq 203.0.113.9' }, action: 'block' }, { filter: { expression: 'ip.src eq 203.0.113.9' }, action: 'allow' }] },
      400,
      { code: 10202, message: 'filter at index 1 duplicates the filter at index 0: create the filter once and share it with "filter": {"id": …}', pointer: '/1/filter/expression' },
    );
  });

  it('a feature the plan lacks (log below Enterprise): the filter is created, the rule is not, and the error says how to finish', async () => {
    const count = (zone: string) => svc.store.get<{ n: number }>('SELECT COUNT(*) AS n FROM firewall_rules WHERE zone_id = ?', [zone])!.n;
    const before = count(PRO);
    const res = await svc.call('POST', rules(PRO), { body: [{ filter: { expression: 'http.request.uri.path eq "/debug"' }, action: 'log' }] });
    assert.equal(res.status, 400);
    const filterId = svc.store.get<{ id: string }>(`SELECT id FROM filters WHERE expression = 'http.request.uri.path eq "/debug"'`)!.id;
    assert.deepEqual(err(res.body), {
      code: 10208,
      message: `'log' is not a valid value for action because the log action needs an Enterprise plan; this zone is on the Pro plan. The filter was created (id ${filterId}) but the rule was not: fix the rule and finish with the two-call flow, POST /zones/${PRO}/firewall/rules with "filter": {"id": "${filterId}"}.`,
      pointer: '/0/action',
      meta: { filter_id: filterId, filter_ids: [filterId] },
    });
    assert.equal(count(PRO), before, 'no rule');
    // The two-call finish.
    const finish = await svc.call('POST', rules(PRO), { body: [{ filter: { id: filterId }, action: 'block', description: 'Debug path' }] });
    assert.equal(finish.status, 200);
    assert.equal(finish.body.result[0].filter.id, filterId);
    // The same on Enterprise is fine.
    const ent = await svc.call('POST', rules(ENT), { body: [{ filter: { expression: 'http.request.uri.path eq "/debug"' }, action: 'log' }] });
    assert.equal(ent.status, 200);
  });

  it('an expression using a field of a higher plan: the filter is created, the rule is not', async () => {
    const res = await svc.call('POST', rules(BIZ), { body: [{ filter: { expression: 'cf.waf.score lt 20' }, action: 'block' }] });
    assert.equal(res.status, 400);
    const filterId = svc.store.get<{ id: string }>("SELECT id FROM filters WHERE expression = 'cf.waf.score lt 20'")!.id;
    assert.deepEqual(err(res.body), {
      code: 10208,
      message: `the filter's expression uses a feature this zone's Business plan lacks: \`cf.waf.score\` requires the Enterprise plan or above. The filter was created (id ${filterId}) but the rule was not: fix the rule and finish with the two-call flow, POST /zones/${BIZ}/firewall/rules with "filter": {"id": "${filterId}"}.`,
      pointer: '/0/filter/expression',
      meta: { filter_id: filterId, filter_ids: [filterId] },
    });
    // Referring to that filter by id is refused the same way (nothing is created).
    await refused('POST', rules(BIZ), { body: [{ filter: { id: filterId }, action: 'block' }] }, 400, {
      code: 10208,
      message: "the filter's expression uses a feature this zone's Business plan lacks: `cf.waf.score` requires the Enterprise plan or above",
      pointer: '/0/filter/id',
      meta: { filter_id: filterId, filter_ids: [filterId] },
    });
  });

  it('the rule quota (Business: 100): a create beyond it is refused before anything is read, and stores nothing, not even its filters', async () => {
    const batch = Array.from({ length: 100 }, (_, i) => ({ filter: { expression: `http.request.uri.path eq "/q/${i}"` }, action: 'block' }));
    const ok = await svc.call('POST', rules(OVR), { body: batch });
    assert.equal(ok.status, 200, JSON.stringify(ok.body).slice(0, 500));
    assert.equal(ok.body.result.length, 100);
    const over = [
      { filter: { expression: 'http.request.uri.path eq "/q/100"' }, action: 'block' },
      { filter: { expression: 'http.request.uri.path eq "/q/101"' }, action: 'challenge' },
    ];
    await refused('POST', rules(OVR), { body: over }, 400, {
      code: 10207,
      message: 'exceeded the maximum number of firewall rules for the Business plan (100): the zone has 100 and the request adds 2; nothing was created',
    });
    // The quota comes first: invalid items over the quota are not even decoded.
    await refused('POST', rules(OVR), { body: [{ filter: { expression: 'not an expression (' }, action: 'nope' }] }, 400, {
      code: 10207,
      message: 'exceeded the maximum number of firewall rules for the Business plan (100): the zone has 100 and the request adds 1; nothing was created',
    });
    assert.equal((await svc.call('GET', rules(OVR))).body.result_info.total_count, 100);
    // Making room lets the same request through.
    const del = await svc.call('DELETE', `${rules(OVR)}?id=${ok.body.result[0].id}&id=${ok.body.result[1].id}`);
    assert.equal(del.status, 200);
    const finish = await svc.call('POST', rules(OVR), { body: over });
    assert.equal(finish.status, 200, JSON.stringify(finish.body));
    assert.equal((await svc.call('GET', rules(OVR))).body.result_info.total_count, 100);
  });

  it('a body of thousands of rules (1,900 × 4 KB expressions) is refused for the quota at once, without checking an expression, and stores nothing', async () => {
    const expression = (i: number) => {
      let e = `http.host eq "h${i}x0"`;
      for (let j = 1; e.length < 4000; j++) e += ` or http.host eq "h${i}x${j}"`;
      return e;
    };
    // The last one is invalid: had the items been decoded, that would be the error.
    const body = [...Array.from({ length: 1899 }, (_, i) => ({ filter: { expression: expression(i) }, action: 'block' })), { filter: { expression: 'http.host eq' }, action: 'block' }];
    const has = (await svc.call('GET', rules(ENT))).body.result_info.total_count;
    await refused('POST', rules(ENT), { body }, 400, {
      code: 10207,
      message: `exceeded the maximum number of firewall rules for the Enterprise plan (1000): the zone has ${has} and the request adds 1900; nothing was created`,
    });
  });
});

describe('firewall rules: update', () => {
  let ruleId: string;
  let oldFilter: string;
  let newFilter: string;
  before(async () => {
    const created = await svc.call('POST', rules(PRO), {
      body: [{ filter: { expression: 'http.request.uri.path eq "/old"' }, action: 'challenge', priority: 5, paused: true, description: 'to replace', ref: 'R1' }],
    });
    ruleId = created.body.result[0].id;
    oldFilter = created.body.result[0].filter.id;
    newFilter = (await svc.call('POST', `/zones/${PRO}/filters`, { body: [{ expression: 'http.request.uri.path eq "/new"' }] })).body.result[0].id;
  });

  it('PUT replaces the whole rule: omitted fields are erased, the filter is re-linked by id and not modified', async () => {
    const res = await svc.call('PUT', `${rules(PRO)}/${ruleId}`, {
      body: { id: ruleId, filter: { id: newFilter, expression: 'ignored: only the id counts' }, action: 'block' },
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(res.body.result, {
      id: ruleId,
      filter: { id: newFilter, expression: 'http.request.uri.path eq "/new"', paused: false, description: '', ref: '' },
      action: 'block',
      priority: null,
      paused: false,
      description: '',
      ref: '',
    });
    const old = await svc.call('GET', `/zones/${PRO}/filters/${oldFilter}`);
    assert.equal(old.body.result.expression, 'http.request.uri.path eq "/old"', 'the old filter stays');
  });

  it('PUT refuses a wrong id, a missing filter and a plan feature, changing nothing', async () => {
    const path = `${rules(PRO)}/${ruleId}`;
    await refused('PUT', path, { body: { id: MISSING, filter: { id: newFilter }, action: 'block' } }, 400, {
      code: 20021,
      message: `the id in the body (${MISSING}) is not the firewall rule's id in the path (${ruleId})`,
      pointer: '/id',
    });
    await refused('PUT', path, { body: { filter: { id: newFilter }, action: 'block' } }, 400, { code: 20021, message: "id is required: the body of a PUT of one firewall rule names the rule's id too (the official SDK's firewall.rules.update sends none; send the rule with its id)", pointer: '/id' });
    await refused('PUT', path, { body: { id: ruleId, action: 'block' } }, 400, { code: 20021, message: 'filter is required: give {"id": "<filter id>"}', pointer: '/filter' });
    await refused('PUT', path, { body: { id: ruleId, filter: { id: MISSING }, action: 'block' } }, 404, { code: 10007, message: `filter ${MISSING} not found`, pointer: '/filter/id' });
    await refused('PUT', path, { body: { id: ruleId, filter: { id: newFilter }, action: 'log' } }, 400, {
      code: 10208,
      message: "'log' is not a valid value for action because the log action needs an Enterprise plan; this zone is on the Pro plan",
      pointer: '/action',
    });
    await refused('PUT', `${rules(PRO)}/${MISSING}`, { body: { id: MISSING, filter: { id: newFilter }, action: 'block' } }, 404, { code: 10007, message: `firewall rule ${MISSING} not found` });
    await refused('PUT', path, { body: [{ id: ruleId }] }, 400, { code: 10026, message: 'invalid JSON: expected an object at the top level, got array', pointer: '/' });
  });

  it('bulk PUT updates all or none: every rule must exist', async () => {
    const second = (await svc.call('POST', rules(PRO), { body: [{ filter: { id: newFilter }, action: 'allow' }] })).body.result[0].id;
    await refused(
      'PUT',
      rules(PRO),
      { body: [{ id: ruleId, filter: { id: newFilter }, action: 'js_challenge' }, { id: MISSING, filter: { id: newFilter }, action: 'block' }] },
      404,
      { code: 10007, message: `firewall rule ${MISSING} not found`, pointer: '/1/id' },
    );
    await refused('PUT', rules(PRO), { body: { id: ruleId } }, 400, { code: 10026, message: ONE_OBJECT.put, pointer: '/' });
    const res = await svc.call('PUT', rules(PRO), {
      body: [
        { id: ruleId, filter: { id: oldFilter }, action: 'js_challenge', description: 'back to old' },
        { id: second, filter: { id: newFilter }, action: 'block', priority: 3 },
      ],
    });
    assert.equal(res.status, 200);
    assert.deepEqual(
      res.body.result.map((r: any) => [r.id, r.filter.id, r.action, r.priority, r.description]),
      [
        [ruleId, oldFilter, 'js_challenge', null, 'back to old'],
        [second, newFilter, 'block', 3, ''],
      ],
    );
  });

  it('PATCH sets priorities (one → an array with the rule; bulk), nothing else', async () => {
    const one = await svc.call('PATCH', `${rules(PRO)}/${ruleId}`, { body: { id: ruleId, priority: 42 } });
    assert.equal(one.status, 200);
    assert.deepEqual(
      one.body.result.map((r: any) => [r.id, r.priority, r.action, r.description]),
      [[ruleId, 42, 'js_challenge', 'back to old']],
    );
    const bulk = await svc.call('PATCH', rules(PRO), { body: [{ id: ruleId, priority: null }] });
    assert.deepEqual(bulk.body.result.map((r: any) => [r.id, r.priority]), [[ruleId, null]]);
    await refused('PATCH', `${rules(PRO)}/${ruleId}`, { body: { id: ruleId } }, 400, { code: 20021, message: "priority is required (a number from 0 to 2147483647, or null); the official SDK's firewall.rules.edit sends none: call client.patch(path, { body: { priority } })", pointer: '/priority' });
    await refused('PATCH', `${rules(PRO)}/${ruleId}`, { body: { priority: 1, action: 'block' } }, 400, { code: 10026, message: 'invalid JSON: unknown field "action"', pointer: '/action' });
    await refused('PATCH', rules(PRO), { body: [{ id: ruleId, priority: 1 }, { id: MISSING, priority: 2 }] }, 404, { code: 10007, message: `firewall rule ${MISSING} not found`, pointer: '/1/id' });
    await refused('PATCH', `${rules(PRO)}/${MISSING}`, { body: { priority: 1 } }, 404, { code: 10007, message: `firewall rule ${MISSING} not found` });
  });
});

describe('firewall rules: delete', () => {
  it('DELETE one answers {id}; with delete_filter_if_unused the filter goes when no other rule uses it', async () => {
    const shared = (await svc.call('POST', `/zones/${PRO}/filters`, { body: [{ expression: 'http.user_agent contains "bot-x"' }] })).body.result[0].id;
    const [a, b] = (await svc.call('POST', rules(PRO), { body: [{ filter: { id: shared }, action: 'block' }, { filter: { id: shared }, action: 'challenge' }] })).body.result.map((r: any) => r.id);
    const first = await svc.call('DELETE', `${rules(PRO)}/${a}`, { body: { delete_filter_if_unused: true } });
    assert.deepEqual([first.status, first.body.result], [200, { id: a }]);
    assert.equal((await svc.call('GET', `/zones/${PRO}/filters/${shared}`)).status, 200, 'still used by the other rule');
    const second = await svc.call('DELETE', `${rules(PRO)}/${b}`, { body: { delete_filter_if_unused: true } });
    assert.deepEqual(second.body.result, { id: b });
    assert.equal((await svc.call('GET', `/zones/${PRO}/filters/${shared}`)).status, 404, 'the filter went with its last rule');
    const again = await svc.call('DELETE', `${rules(PRO)}/${b}`);
    assert.deepEqual([again.status, err(again.body)], [404, { code: 10007, message: `firewall rule ${b} not found` }]);
  });

  it('DELETE one without the flag keeps the filter; a bad body changes nothing', async () => {
    const created = (await svc.call('POST', rules(PRO), { body: [{ filter: { expression: 'http.request.uri.path eq "/keep"' }, action: 'block' }] })).body.result[0];
    await refused('DELETE', `${rules(PRO)}/${created.id}`, { body: { delete_filter: true } }, 400, { code: 10026, message: 'invalid JSON: unknown field "delete_filter"', pointer: '/delete_filter' });
    await refused('DELETE', `${rules(PRO)}/${created.id}`, { body: { delete_filter_if_unused: 'yes' } }, 400, {
      code: 10026,
      message: 'invalid JSON: field "delete_filter_if_unused" must be true or false, got string',
      pointer: '/delete_filter_if_unused',
    });
    const res = await svc.call('DELETE', `${rules(PRO)}/${created.id}`);
    assert.deepEqual(res.body.result, { id: created.id });
    const filter = await svc.call('GET', `/zones/${PRO}/filters/${created.filter.id}`);
    assert.equal(filter.status, 200, 'the filter stays');
    // Unused now, the single-call filter is an ordinary filter again.
    assert.equal((await svc.call('DELETE', `/zones/${PRO}/filters/${created.filter.id}`)).status, 200);
  });

  it('bulk DELETE takes repeated id parameters, answers every id (unknown ones too) and keeps filters', async () => {
    const created = (
      await svc.call('POST', rules(PRO), {
        body: [
          { filter: { expression: 'http.request.uri.path eq "/bulk/1"' }, action: 'block' },
          { filter: { expression: 'http.request.uri.path eq "/bulk/2"' }, action: 'block' },
        ],
      })
    ).body.result;
    const res = await svc.call('DELETE', `${rules(PRO)}?id=${created[0].id}&id=${MISSING}&id=${created[1].id}`);
    assert.deepEqual([res.status, res.body.result], [200, [{ id: created[0].id }, { id: MISSING }, { id: created[1].id }]]);
    for (const r of created) {
      assert.equal((await svc.call('GET', `${rules(PRO)}/${r.id}`)).status, 404);
      assert.equal((await svc.call('GET', `/zones/${PRO}/filters/${r.filter.id}`)).status, 200);
    }
    const none = await svc.call('DELETE', rules(PRO));
    assert.deepEqual([none.status, none.body.result], [200, []]);
    await refused('DELETE', `${rules(PRO)}?id=nope`, {}, 400, { code: 20021, message: "'nope' is not a valid value for id: expected 32 hexadecimal digits" });
    await refused('DELETE', rules(PRO), { body: [{ id: seededRule(ENT, 0) }] }, 400, {
      code: 20021,
      message: 'give the firewall rules to delete as repeated id query parameters (?id=…&id=…), not in a body',
    });
  });

  it('a rule whose filter was deleted shows filter {id, deleted: true}', async () => {
    const created = (await svc.call('POST', rules(PRO), { body: [{ filter: { expression: 'http.request.uri.path eq "/orphan"' }, action: 'block' }] })).body.result[0];
    // The Filters API refuses to delete a filter in use; an older store may still hold such rules.
    svc.store.write(() => svc.store.run('DELETE FROM filters WHERE id = ?', [created.filter.id]));
    const res = await svc.call('GET', `${rules(PRO)}/${created.id}`);
    assert.deepEqual(res.body.result.filter, { id: created.filter.id, deleted: true });
  });
});

describe('firewall rules: permissions and sunset', () => {
  it('reading needs Firewall Services Read, writing Write, on the zone', async () => {
    const readOnly = svc.credentials.get('demo read-only')!;
    assert.equal((await svc.call('GET', rules(ENT), { token: readOnly })).status, 200);
    await refused('POST', rules(ENT), { token: readOnly, body: [{ filter: { expression: 'true' }, action: 'block' }] }, 403, { code: 10000, message: 'Authentication error' });
    const proToken = svc.credentials.get('pro.example.com WAF')!;
    await refused('GET', rules(ENT), { token: proToken }, 403, { code: 10000, message: 'Authentication error' });
    await refused('GET', rules(ENT), { token: null }, 400, { code: 9106, message: 'Missing X-Auth-Key, X-Auth-Email or Authorization headers' });
  });

  it('with --legacy sunset every firewall-rules route answers 410 Gone', async () => {
    const sunset = await startService({ legacy: 'sunset' });
    try {
      const message =
        'The firewall rules API is no longer available (sunset on 2025-06-15). Use the Rulesets API: custom rules in the http_request_firewall_custom phase, managed rules in http_request_firewall_managed.';
      for (const [method, path] of [
        ['GET', rules(ENT)],
        ['POST', rules(ENT)],
        ['PUT', rules(ENT)],
        ['PATCH', rules(ENT)],
        ['DELETE', rules(ENT)],
        ['GET', `${rules(ENT)}/${seededRule(ENT, 0)}`],
        ['PUT', `${rules(ENT)}/${seededRule(ENT, 0)}`],
        ['PATCH', `${rules(ENT)}/${seededRule(ENT, 0)}`],
        ['DELETE', `${rules(ENT)}/${seededRule(ENT, 0)}`],
      ] as const) {
        const res = await sunset.call(method, path, { token: sunset.adminToken });
        assert.deepEqual([method, path, res.status, err(res.body)], [method, path, 410, { code: 10410, message }]);
      }
      assert.equal(sunset.store.get<{ n: number }>('SELECT COUNT(*) AS n FROM firewall_rules WHERE zone_id = ?', [ENT])!.n, 3);
    } finally {
      await sunset.close();
    }
  });
});

describe('firewall rules: requests at the edges of the legacy API', () => {
  it('a bulk update carries at most 25 rules (the hosted limit), refused before anything is read', async () => {
    const body = Array.from({ length: 26 }, () => ({ id: MISSING, action: 'block', filter: { id: MISSING } }));
    await refused('PUT', rules(ENT), { body }, 400, { code: 20021, message: 'a request may carry at most 25 firewall rules in a bulk update, got 26: send them in several requests' });
  });

  it('a new rule whose filter has "id": null gets the inline filter beside it', async () => {
    const res = await svc.call('POST', rules(ENT), { body: [{ action: 'block', description: 'null id', filter: { id: null, expression: 'http.request.uri.path eq "/null-id"' } }] });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.result[0].filter.expression, 'http.request.uri.path eq "/null-id"');
    assert.match(res.body.result[0].filter.id, /^[0-9a-f]{32}$/);
    await svc.call('DELETE', `${rules(ENT)}/${res.body.result[0].id}`, { body: { delete_filter_if_unused: true } });
  });

  it('bulk delete refuses a comma-separated list of ids, deleting nothing', async () => {
    const [a, b] = [seededRule(ENT, 0), seededRule(ENT, 1)];
    await refused('DELETE', `${rules(ENT)}?id=${a},${b}`, {}, 400, {
      code: 20021,
      message: `'${a},${b}' is not a valid value for id: send each id as a parameter of its own (?id=<a>&id=<b>), not a comma-separated list`,
    });
  });
});
