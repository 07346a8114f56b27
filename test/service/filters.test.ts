// The legacy Filters API over real HTTP (rules-api §4.1, §4.3), with the official SDK
// (cf.filters.create/list/get/update/delete/bulkDelete/bulkUpdate) and raw calls for the
// error bodies: list filters and pages, duplicates (10102 with meta.id), expressions checked
// by the language core in the engine's wording, filters in use, filters that belong to a
// single-call firewall rule, validate-expr in the legacy layout, bad bodies with no change
// to the store, and `--legacy sunset`.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import Cloudflare from 'cloudflare';
import { demoZoneId, seedId } from '../../server/src/service/seed';
import { startService, type TestService, firstError, legacySnapshot, refusedUnchanged } from './harness';

let svc: TestService;
let cf: Cloudflare;
before(async () => {
  svc = await startService();
  cf = svc.sdk();
});
after(() => svc.close());

const ENT = demoZoneId('enterprise.example.com');
const FW = demoZoneId('firewall.example.com');
const PRO = demoZoneId('pro.example.com');
const MISSING = 'f'.repeat(32);
const filters = (zone: string) => `/zones/${zone}/filters`;

const snapshot = () => legacySnapshot(svc);
const err = firstError;
const refused = (method: string, path: string, options: Parameters<TestService['call']>[2], status: number, expected: ReturnType<typeof firstError>) =>
  refusedUnchanged(svc, method, path, options, status, expected);

/** The SDK's error for a refused call: status and the first error. */
async function sdkError(p: Promise<unknown>): Promise<{ status: number; first: any }> {
  try {
    await p;
  } catch (e) {
    const a = e as InstanceType<typeof Cloudflare.APIError>;
    return { status: a.status as number, first: (a.errors as any[])[0] };
  }
  assert.fail('expected the SDK to throw');
}

describe('filters: the SDK', () => {
  it('iterates every filter of the 201-rule zone, page by page, in order', async () => {
    const ids: string[] = [];
    for await (const f of cf.filters.list({ zone_id: FW, per_page: 50 })) ids.push(f.id!);
    assert.deepEqual(ids, Array.from({ length: 201 }, (_, i) => seedId(`filter:${FW}:${i}`)));
    const first = await cf.filters.list({ zone_id: FW });
    assert.equal(first.result.length, 25);
  });

  it('creates, gets, updates (omitted fields erased) and deletes a filter', async () => {
    const created = await cf.filters.create({
      zone_id: PRO,
      body: [
        { expression: 'http.request.uri.path ~ "^.*/wp-login.php$"', description: 'WordPress login paths', ref: 'WP' },
        { expression: 'http.request.uri.query contains "author="', paused: true },
      ],
    });
    const [a, b] = created.result;
    assert.match(a!.id!, /^[0-9a-f]{32}$/);
    assert.deepEqual(a, { id: a!.id, expression: 'http.request.uri.path ~ "^.*/wp-login.php$"', paused: false, description: 'WordPress login paths', ref: 'WP' });
    assert.deepEqual(b, { id: b!.id, expression: 'http.request.uri.query contains "author="', paused: true, description: '', ref: '' });
    assert.deepEqual(await cf.filters.get(a!.id!, { zone_id: PRO }), a);

    const updated = await cf.filters.update(a!.id!, { zone_id: PRO, expression: 'http.request.uri.path eq "/wp-login.php"', paused: true });
    assert.deepEqual(updated, { id: a!.id, expression: 'http.request.uri.path eq "/wp-login.php"', paused: true, description: '', ref: '' });
    const modified = svc.store.get<{ created_on: string; modified_on: string }>('SELECT created_on, modified_on FROM filters WHERE id = ?', [a!.id!])!;
    assert.ok(modified.modified_on > modified.created_on);

    assert.deepEqual(await cf.filters.delete(b!.id!, { zone_id: PRO }), { id: b!.id });
    const gone = await sdkError(cf.filters.get(b!.id!, { zone_id: PRO }));
    assert.deepEqual([gone.status, gone.first.code, gone.first.message], [404, 10007, `filter ${b!.id} not found`]);
  });

  it('bulk update and bulk delete (repeated id parameters)', async () => {
    const made = (await cf.filters.create({ zone_id: PRO, body: [{ expression: 'ip.src eq 192.0.2.10' }, { expression: 'ip.src eq 192.0.2.11' }] })).result;
    const updated = await cf.filters.bulkUpdate({
      zone_id: PRO,
      body: [
        { id: made[0]!.id, expression: 'ip.src eq 192.0.2.11', description: 'swapped' },
        { id: made[1]!.id, expression: 'ip.src eq 192.0.2.10', description: 'swapped' },
      ] as never,
    });
    assert.deepEqual(
      updated.result.map((f) => [f.id, f.expression, f.description]),
      [
        [made[0]!.id, 'ip.src eq 192.0.2.11', 'swapped'],
        [made[1]!.id, 'ip.src eq 192.0.2.10', 'swapped'],
      ],
    );
    const deleted = await cf.filters.bulkDelete({ zone_id: PRO, id: [made[0]!.id!, made[1]!.id!] });
    assert.deepEqual(deleted, [{ id: made[0]!.id }, { id: made[1]!.id }]);
    const list = await cf.filters.list({ zone_id: PRO, expression: '192.0.2.1' });
    assert.deepEqual(list.result, []);
  });

  it('a duplicate expression: 10102 with the existing filter id, nothing created', async () => {
    const existing = (await cf.filters.create({ zone_id: PRO, body: [{ expression: 'http.host eq "dup.example"' }] })).result[0]!.id!;
    const before = snapshot();
    const e = await sdkError(cf.filters.create({ zone_id: PRO, body: [{ expression: 'http.host eq "other.example"' }, { expression: 'http.host eq "dup.example"' }] }));
    assert.equal(e.status, 400);
    assert.deepEqual(e.first, { code: 10102, message: 'config duplicates an already existing config', source: { pointer: '/1/expression' }, meta: { id: existing } });
    const twice = await sdkError(cf.filters.create({ zone_id: PRO, body: [{ expression: 'http.host eq "twice.example"' }, { expression: 'http.host eq "twice.example"' }] }));
    // Twins within one body: no meta.id (the first twin's insert would be rolled back with the rest), the index of the first.
    assert.deepEqual(twice.first, {
      code: 10102,
      message: 'filter at index 1 duplicates the filter at index 0 (config duplicates an already existing config): send each expression once',
      source: { pointer: '/1/expression' },
    });
    assert.deepEqual(snapshot(), before);
    // An update onto another filter's expression is a duplicate too.
    const other = (await cf.filters.create({ zone_id: PRO, body: [{ expression: 'http.host eq "third.example"' }] })).result[0]!.id!;
    await refused('PUT', `${filters(PRO)}/${other}`, { body: { expression: 'http.host eq "dup.example"' } }, 400, {
      code: 10102,
      message: 'config duplicates an already existing config',
      pointer: '/expression',
      meta: { id: existing },
    });
  });
});

describe('filters: listing', () => {
  it('filters by id, expression and description (case-insensitive substrings), ref (exact) and paused', async () => {
    await svc.call('POST', filters(ENT), {
      body: [
        { expression: 'http.user_agent contains "BadBot"', description: 'Bad BOTS', ref: 'BOT-1', paused: true },
        { expression: 'http.user_agent contains "EvilBot"', description: 'evil bots', ref: 'BOT-10' },
      ],
    });
    const q = async (query: string) => (await svc.call('GET', `${filters(ENT)}?${query}`)).body.result.map((f: any) => f.ref);
    assert.deepEqual(await q('expression=BADBOT'), ['BOT-1']);
    assert.deepEqual(await q('expression=user_agent'), ['BOT-1', 'BOT-10']);
    assert.deepEqual(await q('description=bots'), ['BOT-1', 'BOT-10']);
    assert.deepEqual(await q('ref=BOT-1'), ['BOT-1']);
    assert.deepEqual(await q('paused=true'), ['BOT-1']);
    assert.equal((await q('paused=false')).length, 4);
    const id = seedId(`filter:${ENT}:1`);
    assert.deepEqual((await svc.call('GET', `${filters(ENT)}?id=${id}`)).body.result.map((f: any) => f.id), [id]);
    const page = await svc.call('GET', `${filters(ENT)}?per_page=5&page=2`);
    assert.deepEqual([page.status, page.body.result, page.body.result_info], [200, [], { page: 2, per_page: 5, count: 0, total_count: 5, total_pages: 1 }]);
  });
});

describe('filters: validation', () => {
  it('refuses invalid expressions in the engine wording, and bad bodies, changing nothing', async () => {
    const cases: Array<[string, unknown, ReturnType<typeof err>]> = [
      [
        'POST',
        [{ expression: 'http.host eq 80' }],
        {
          code: 20021,
          message: "'http.host eq 80' is not a valid value for expression because could not parse filter expression: Filter parsing error (1:16):\nhttp.host eq 80\n               ^ expected 1 characters, but found 0\n",
          pointer: '/0/expression',
        },
      ],
      [
        'POST',
        [{ expression: 'http.request.uri.path eq "/a"\nand ip.src eq 1.2.3' }],
        {
          code: 20021,
          message:
            "'http.request.uri.path eq \"/a\"\nand ip.src eq 1.2.3' is not a valid value for expression because could not parse filter expression: Filter parsing error (2:15):\nand ip.src eq 1.2.3\n              ^^^^^ couldn't parse address in network: invalid IP address syntax\n",
          pointer: '/0/expression',
        },
      ],
      ['POST', [{ expression: '   ' }], { code: 20125, message: "'   ' is not a valid value for expression because the expression cannot be blank", pointer: '/0/expression' }],
      ['POST', [{}], { code: 20021, message: 'expression is required', pointer: '/0/expression' }],
      ['POST', [{ expression: 7 }], { code: 10026, message: 'invalid JSON: field "expression" must be a string, got number', pointer: '/0/expression' }],
      ['POST', [{ expression: 'true', action: 'block' }], { code: 10026, message: 'invalid JSON: unknown field "action"', pointer: '/0/action' }],
      ['POST', [{ expression: 'true', id: MISSING }], { code: 10026, message: 'invalid JSON: unknown field "id"', pointer: '/0/id' }],
      ['POST', [{ expression: 'true', description: 'x'.repeat(501) }], { code: 20021, message: "'description' is too long: at most 500 characters, got 501", pointer: '/0/description' }],
      ['POST', [{ expression: 'true', ref: 'x'.repeat(51) }], { code: 20021, message: "'ref' is too long: at most 50 characters, got 51", pointer: '/0/ref' }],
      // SQLite would cut a stored string at a NUL: refused rather than cut.
      ['POST', [{ expression: 'http.host eq "nul\u0000tail"' }], { code: 20021, message: "'expression' must not contain a NUL character (U+0000)", pointer: '/0/expression' }],
      ['POST', [{ expression: 'true', description: 'desc\u0000hidden' }], { code: 20021, message: "'description' must not contain a NUL character (U+0000)", pointer: '/0/description' }],
      ['POST', [{ expression: 'true', paused: 1 }], { code: 10026, message: 'invalid JSON: field "paused" must be true or false, got number', pointer: '/0/paused' }],
      ['POST', { expression: 'true' }, { code: 10026, message: 'invalid JSON: expected an array at the top level, got object', pointer: '/' }],
      ['PUT', { id: MISSING, expression: 'true' }, { code: 10026, message: 'invalid JSON: expected an array at the top level, got object', pointer: '/' }],
      ['PUT', [{ expression: 'true' }], { code: 20021, message: 'id is required', pointer: '/0/id' }],
      ['PUT', [{ id: MISSING, expression: 'true' }], { code: 10007, message: `filter ${MISSING} not found`, pointer: '/0/id' }],
    ];
    for (const [method, body, expected] of cases) await refused(method, filters(PRO), { body }, expected.code === 10007 ? 404 : 400, expected);
    await refused('POST', filters(PRO), { rawBody: '[{"expression": "true"' }, 400, {
      code: 10026,
      message: "invalid JSON: Expected ',' or '}' after property value in JSON at position 22; send a JSON document with Content-Type: application/json",
    });
    await refused('POST', filters(PRO), { rawBody: JSON.stringify([{ expression: `http.host eq "${'a'.repeat(9 * 1024 * 1024)}"` }]) }, 413, {
      code: 10027,
      message: 'The request body is larger than 8388608 bytes; split the change into smaller requests',
    });
  });

  it('a filter of a higher plan is a valid filter (the plan refuses the rule, not the filter)', async () => {
    const res = await svc.call('POST', filters(PRO), { body: [{ expression: 'http.host eq "ok.example"' }, { expression: 'cf.bot_management.score lt 30' }] });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body.messages, [
      {
        code: 10208,
        message:
          "filter at index 1: `cf.bot_management.score` requires the Enterprise plan or above (Bot Management add-on); a firewall rule using this filter will be refused on this zone's Pro plan",
      },
    ]);
    const plain = await svc.call('POST', filters(PRO), { body: [{ expression: 'http.host eq "ok2.example"' }] });
    assert.deepEqual(plain.body.messages, []);
  });

  it('validate-expr (GET and POST, top level) answers in the legacy layout, only the first problem', async () => {
    const bad = await svc.call('GET', `/filters/validate-expr?expression=${encodeURIComponent('ip.src==34')}`);
    // The hosted service's layout as its docs quote it: 2 + byte offset spaces before the carets.
    assert.deepEqual([bad.status, bad.body], [
      400,
      {
        result: null,
        success: false,
        errors: [{ message: "Filter parsing error:\n`ip.src==34`\n          ^^ couldn't parse address in network: invalid IP address syntax\n" }],
        messages: null,
      },
    ]);
    const expression = 'ip.src in {2400:cb00::/32 2405:8100::/2000 2405:b500::/32 2606:4700::/32 2803:f800::/32 2c0f:f248::/32 2a06:98c0::/29}';
    const post = await svc.call('POST', '/filters/validate-expr', { body: { expression } });
    assert.equal(post.status, 400);
    // Carets as in the docs' example (40 spaces); the reason in the current engine's words.
    assert.equal(post.body.errors[0].message, `Filter parsing error:\n\`${expression}\`\n${' '.repeat(40)}^^^^ couldn't parse length in network: number too large to fit in target type\n`);
    const ok = await svc.call('GET', `/filters/validate-expr?expression=${encodeURIComponent('http.request.uri.path eq "/login"')}`);
    assert.deepEqual([ok.status, ok.body], [200, { result: null, success: true, errors: [], messages: [] }]);
    const okPost = await svc.call('POST', '/filters/validate-expr', { body: { expression: 'cf.waf.score lt 20' } });
    assert.deepEqual([okPost.status, okPost.body.success], [200, true]);
    const missing = await svc.call('GET', '/filters/validate-expr');
    assert.deepEqual([missing.status, err(missing.body)], [400, { code: 20021, message: 'expression is required', pointer: '/expression' }]);
    const unknown = await svc.call('POST', '/filters/validate-expr', { body: { expression: 'true', phase: 'x' } });
    assert.deepEqual(err(unknown.body), { code: 10026, message: 'invalid JSON: unknown field "phase"', pointer: '/phase' });
    const anonymous = await svc.call('GET', '/filters/validate-expr?expression=true', { token: null });
    assert.deepEqual([anonymous.status, err(anonymous.body)], [400, { code: 9106, message: 'Missing X-Auth-Key, X-Auth-Email or Authorization headers' }]);
  });
});

describe('filters: in use and owned by a single-call rule', () => {
  it('refuses to delete a filter a firewall rule uses, single or bulk, changing nothing', async () => {
    const used = seedId(`filter:${ENT}:2`);
    const rule = seedId(`firewall-rule:${ENT}:2`);
    const expected = {
      code: 10205,
      message: `filter ${used} is used by firewall rule ${rule}: delete that rule or point it at another filter first`,
    };
    await refused('DELETE', `${filters(ENT)}/${used}`, {}, 400, expected);
    const spare = (await svc.call('POST', filters(ENT), { body: [{ expression: 'http.host eq "spare.example"' }] })).body.result[0].id;
    await refused('DELETE', `${filters(ENT)}?id=${spare}&id=${used}`, {}, 400, expected);
    const e = await sdkError(cf.filters.delete(used, { zone_id: ENT }));
    assert.deepEqual([e.status, e.first.code], [400, 10205]);
    // Changing a filter in use is fine (rules follow it).
    const put = await svc.call('PUT', `${filters(ENT)}/${used}`, { body: { id: used, expression: '(http.request.uri.path eq "/legacy/2/")', description: 'moved' } });
    assert.equal(put.status, 200);
    const viaRule = await svc.call('GET', `/zones/${ENT}/firewall/rules/${rule}`);
    assert.equal(viaRule.body.result.filter.expression, '(http.request.uri.path eq "/legacy/2/")');
    // Bulk delete of unknown and unused ids succeeds.
    const ok = await svc.call('DELETE', `${filters(ENT)}?id=${spare}&id=${MISSING}`);
    assert.deepEqual([ok.status, ok.body.result], [200, [{ id: spare }, { id: MISSING }]]);
    await refused('DELETE', `${filters(ENT)}/${MISSING}`, {}, 404, { code: 10007, message: `filter ${MISSING} not found` });
    await refused('DELETE', `${filters(ENT)}?id=${spare}`, { body: { id: [spare] } }, 400, {
      code: 20021,
      message: 'give the filters to delete as repeated id query parameters (?id=…&id=…), not in a body',
    });
  });

  it('a filter made by a single-call rule create cannot be changed or deleted through the Filters API', async () => {
    const created = (await svc.call('POST', `/zones/${PRO}/firewall/rules`, { body: [{ filter: { expression: 'http.request.uri.path eq "/owned"' }, action: 'block' }] })).body.result[0];
    const fid = created.filter.id;
    const change = {
      code: 10206,
      message: `filter ${fid} was created together with firewall rule ${created.id} (single-call create) and belongs to it: it cannot be changed through the Filters API. To change the expression, create a new filter and point the rule at it with PUT /zones/${PRO}/firewall/rules/${created.id} and "filter": {"id": "<new filter id>"}.`,
    };
    const remove = {
      code: 10206,
      message: `filter ${fid} was created together with firewall rule ${created.id} (single-call create) and belongs to it: it cannot be deleted through the Filters API. Delete the rule with DELETE /zones/${PRO}/firewall/rules/${created.id} and {"delete_filter_if_unused": true}.`,
    };
    await refused('PUT', `${filters(PRO)}/${fid}`, { body: { expression: 'http.request.uri.path eq "/changed"' } }, 400, change);
    await refused('PUT', filters(PRO), { body: [{ id: fid, expression: 'http.request.uri.path eq "/changed"' }] }, 400, { ...change, pointer: '/0/id' });
    await refused('DELETE', `${filters(PRO)}/${fid}`, {}, 400, remove);
    await refused('DELETE', `${filters(PRO)}?id=${fid}`, {}, 400, remove);
    const viaSdk = await sdkError(cf.filters.update(fid, { zone_id: PRO, expression: 'true' }));
    assert.deepEqual([viaSdk.status, viaSdk.first.code], [400, 10206]);
    // It can be read and listed, and goes with its rule.
    assert.equal((await cf.filters.get(fid, { zone_id: PRO })).expression, 'http.request.uri.path eq "/owned"');
    const del = await svc.call('DELETE', `/zones/${PRO}/firewall/rules/${created.id}`, { body: { delete_filter_if_unused: true } });
    assert.equal(del.status, 200);
    assert.equal((await svc.call('GET', `${filters(PRO)}/${fid}`)).status, 404);
  });

  it('an update that gives a filter in use a feature of a higher plan is refused', async () => {
    const created = (await svc.call('POST', `/zones/${PRO}/filters`, { body: [{ expression: 'http.request.uri.path eq "/p"' }] })).body.result[0];
    await svc.call('POST', `/zones/${PRO}/firewall/rules`, { body: [{ filter: { id: created.id }, action: 'block' }] });
    await refused('PUT', `${filters(PRO)}/${created.id}`, { body: { expression: 'cf.waf.score lt 10' } }, 400, {
      code: 10208,
      message: `the expression uses a feature this zone's Pro plan lacks, and firewall rule ${svc.store.get<{ id: string }>('SELECT id FROM firewall_rules WHERE filter_id = ?', [created.id])!.id} uses this filter: \`cf.waf.score\` requires the Enterprise plan or above`,
      pointer: '/expression',
    });
  });
});

describe('filters: permissions and sunset', () => {
  it('read-only credentials read but do not write', async () => {
    const token = svc.credentials.get('demo read-only')!;
    assert.equal((await svc.call('GET', filters(ENT), { token })).status, 200);
    await refused('POST', filters(ENT), { token, body: [{ expression: 'true' }] }, 403, { code: 10000, message: 'Authentication error' });
    await refused('GET', filters(ENT), { token: svc.credentials.get('pro.example.com WAF')! }, 403, { code: 10000, message: 'Authentication error' });
  });

  it('with --legacy sunset the filters routes and validate-expr answer 410 Gone', async () => {
    const sunset = await startService({ legacy: 'sunset' });
    try {
      const message =
        'The filters API is no longer available (sunset on 2025-06-15). Use the Rulesets API: custom rules in the http_request_firewall_custom phase, managed rules in http_request_firewall_managed.';
      const id = seedId(`filter:${ENT}:0`);
      for (const [method, path] of [
        ['GET', filters(ENT)],
        ['POST', filters(ENT)],
        ['PUT', filters(ENT)],
        ['DELETE', filters(ENT)],
        ['GET', `${filters(ENT)}/${id}`],
        ['PUT', `${filters(ENT)}/${id}`],
        ['DELETE', `${filters(ENT)}/${id}`],
        ['GET', '/filters/validate-expr?expression=true'],
        ['POST', '/filters/validate-expr'],
      ] as const) {
        const res = await sunset.call(method, path, { token: sunset.adminToken });
        assert.deepEqual([method, path, res.status, err(res.body)], [method, path, 410, { code: 10410, message }]);
      }
      const e = await sdkError(sunset.sdk().filters.list({ zone_id: ENT }));
      assert.equal(e.status, 410);
    } finally {
      await sunset.close();
    }
  });
});

/** The engine's refusal of the 5,015-character expression below (language/check.ts `tooLong`). */
const TOO_LONG = 'expression is 5015 characters long; the limit is 4096';

describe('filters: requests at the edges of the legacy API', () => {
  it('validate-expr refuses an expression over the length limit without quoting it back', async () => {
    const expression = `http.host eq "${'a'.repeat(5_000)}"`;
    const res = await svc.call('POST', '/filters/validate-expr', { body: { expression } });
    assert.equal(res.status, 400);
    assert.deepEqual(res.body.errors, [{ message: `Filter parsing error: ${TOO_LONG}\n` }]);
  });

  it('bulk delete takes each id as a parameter of its own and refuses a comma-separated list, deleting nothing', async () => {
    const [a, b] = [seedId(`filter:${ENT}:0`), seedId(`filter:${ENT}:1`)];
    await refused('DELETE', `${filters(ENT)}?id=${a},${b}`, {}, 400, {
      code: 20021,
      message: `'${a},${b}' is not a valid value for id: send each id as a parameter of its own (?id=<a>&id=<b>), not a comma-separated list`,
    });
  });
});
