// `rulesmith check main.tf` (text output), `rulesmith terraform import` and `export` on the
// command line: outputs, files written, and the exit codes (0 ok, 1 problems, 2 bad usage or input).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import type { Io } from '../../../server/src/cli/io';
import { run } from '../../../server/src/cli/main';
import { fetchZoneRulesets, runTerraformCommand } from '../../../server/src/cli/terraform';
import { startService, type TestService } from '../../service/harness';

const fixtures = new URL('../../fixtures/terraform/', import.meta.url).pathname;

function io(files: Record<string, string> = {}): Io & { out: (s: string) => void; text: () => { out: string; err: string }; written: Map<string, string> } {
  let out = '';
  let err = '';
  const written = new Map<string, string>();
  return {
    out: (s) => void (out += s),
    err: (s) => void (err += s),
    readFile: (p) => files[p] ?? readFileSync(p.startsWith('/') ? p : fixtures + p, 'utf8'),
    writeFile: (p, t) => void written.set(p, t),
    readStdin: () => '',
    text: () => ({ out, err }),
    written,
  };
}

test('check main.tf: the engine-style report, the rule and its resource', async () => {
  const o = io();
  assert.equal(await run(['check', 'v4-blocks.tf'], o), 1);
  assert.equal(
    o.text().out,
    [
      'v4-blocks.tf:17:11: error[misplaced-score-threshold] (rule 1 "cf-managed") in cloudflare_ruleset.managed',
      'score_threshold has no effect on a category: Cloudflare Managed Ruleset has no anomaly score',
      'hint: score_threshold belongs in a rule override of the anomaly-score rule of a scored managed ruleset (the OWASP-based core ruleset).',
      '',
      'v4-blocks.tf:26:18: error[unknown-action] (rule 2 "bad-action") in cloudflare_ruleset.managed',
      'unknown variant for action: blok',
      'hint: Did you mean `block` or `log`? Actions: `block`, `challenge`, `compress_response`, `ddos_dynamic`, `execute`, `force_connection_close`, `js_challenge`, `log`, `log_custom_field`, `managed_challenge`, `redirect`, `rewrite`, `route`, `score`, `serve_error`, `set_cache_control`, `set_cache_settings`, `set_cache_tags`, `set_config`, `skip`, `transform_response_html`.',
      '',
      '2 errors, 0 warnings in 2 expressions',
      '',
    ].join('\n'),
  );
});

test('check: a .tf file that does not parse is an error at the parser\'s place', async () => {
  const o = io({ 'bad.tf': 'resource "cloudflare_filter" "f" {\n  expression = \n}\n' });
  assert.equal(await run(['check', '--format', 'json', 'bad.tf'], o), 1);
  const [f] = JSON.parse(o.text().out);
  assert.deepEqual([f.code, f.origin, f.range.start, f.message], ['invalid-hcl', 'terraform', { line: 1, character: 15 }, 'Invalid expression: Expected the start of an expression, but found an invalid expression token']);
});

test('check --format json on a .tf file: each finding says what found it (Terraform, the ruleset checks, an expression)', async () => {
  const text = readFileSync(fixtures + 'problem-origins.tf', 'utf8');
  const o = io({ 'main.tf': text });
  assert.equal(await run(['check', '--format', 'json', '--plan', 'pro', 'main.tf'], o), 1);
  const findings = JSON.parse(o.text().out);
  assert.deepEqual(
    findings.map((f: { code: string; origin: string; rule: number }) => [f.code, f.origin, f.rule]),
    [
      ['interpolated-expression', 'terraform', 0],
      ['plan-required', 'ruleset', 0],
      ['plan-required', 'expression', 1],
      ['unknown-action', 'ruleset', 1],
    ],
  );
  // The one code, found by the ruleset checks (the action) and by the language (a field).
  assert.deepEqual(findings[1], {
    file: 'main.tf',
    rule: 0,
    range: { start: { line: 8, character: 17 }, end: { line: 8, character: 22 } },
    severity: 'warning',
    code: 'plan-required',
    origin: 'ruleset',
    message: 'the log action in custom rules needs an Enterprise plan',
    resource: 'cloudflare_ruleset.waf',
  });
  assert.deepEqual(findings[2], {
    file: 'main.tf',
    rule: 1,
    range: { start: { line: 12, character: 18 }, end: { line: 12, character: 41 } },
    severity: 'warning',
    code: 'plan-required',
    origin: 'expression',
    message: '`cf.bot_management.score` requires the Enterprise plan or above (Bot Management add-on)',
    hint: 'This zone is on the Pro plan; the API rejects the rule.',
    resource: 'cloudflare_ruleset.waf',
  });
});

test("check: a rate limiting rule's counting expression is checked, and may read the origin's answer", async () => {
  const tf = [
    'resource "cloudflare_ruleset" "rl" {',
    '  zone_id = "0123456789abcdef0123456789abcdef"',
    '  name    = "limits"',
    '  kind    = "zone"',
    '  phase   = "http_ratelimit"',
    '  rules = [{',
    '    ref        = "failed-logins"',
    '    action     = "block"',
    '    expression = "http.request.uri.path eq \\"/login\\""',
    '    ratelimit = {',
    '      characteristics     = ["cf.colo.id", "ip.src"]',
    '      period              = 60',
    '      requests_per_period = 5',
    '      counting_expression = "http.response.code eq 401"',
    '    }',
    '  }, {',
    '    ref        = "broken"',
    '    action     = "block"',
    '    expression = "http.response.code eq 401"',
    '    ratelimit = {',
    '      characteristics     = ["cf.colo.id", "ip.src"]',
    '      period              = 60',
    '      requests_per_period = 5',
    '      counting_expression = "http.response.code eq"',
    '    }',
    '  }]',
    '}',
    '',
  ].join('\n');
  const o = io({ 'rl.tf': tf });
  assert.equal(await run(['check', '--format', 'json', 'rl.tf'], o), 1);
  const findings = JSON.parse(o.text().out) as { code: string; severity: string; rule: number; range: { start: { line: number } } }[];
  // The first rule is clean; the second reads the answer in its expression (line 19) and has a broken counting expression (line 24).
  assert.deepEqual(
    findings.map((f) => [f.rule, f.range.start.line + 1, f.severity, f.code]),
    [
      [1, 19, 'warning', 'not-in-phase'],
      [1, 24, 'error', 'invalid-integer'],
    ],
  );
});

test("check: an account's rate limiting ruleset (kind = \"custom\", or a kind not written as a literal beside account_id) uses no list", async () => {
  const tf = (kind: string, scope = 'account_id') =>
    [
      'resource "cloudflare_ruleset" "shared" {',
      `  ${scope} = "0123456789abcdef0123456789abcdef"`,
      '  name       = "shared limits"',
      `  kind       = ${kind.startsWith('var.') ? kind : `"${kind}"`}`,
      '  phase      = "http_ratelimit"',
      '  rules = [{',
      '    ref        = "shared"',
      '    action     = "block"',
      '    expression = "ip.src in $office"',
      '    ratelimit = {',
      '      characteristics     = ["cf.colo.id", "ip.src"]',
      '      period              = 60',
      '      requests_per_period = 5',
      '    }',
      '  }]',
      '}',
      '',
    ].join('\n');
  const findings = async (kind: string, scope?: string) => {
    const o = io({ 'shared.tf': tf(kind, scope) });
    await run(['check', '--format', 'json', 'shared.tf'], o);
    return (JSON.parse(o.text().out) as { code: string; range: { start: { line: number; character: number } } }[]).map((f) => [f.code, f.range.start.line + 1, f.range.start.character]);
  };
  assert.deepEqual(await findings('custom'), [['ratelimit-restriction', 9, 28]]);
  assert.deepEqual(await findings('zone'), []);
  // Only an account's ruleset has an account_id (a zone's has a zone_id), whatever var.kind holds.
  assert.deepEqual(await findings('var.kind'), [['ratelimit-restriction', 9, 28]]);
  assert.deepEqual(await findings('var.kind', 'zone_id   '), []);
});

test('check: a rules list that mixes references (local.common_rule) and objects judges each object as the rule it is', async () => {
  const tf = (a: string, b: string) =>
    [
      'resource "cloudflare_ruleset" "mixed" {',
      '  zone_id = "0123456789abcdef0123456789abcdef"',
      '  name    = "mixed"',
      '  kind    = "zone"',
      '  phase   = "http_request_firewall_custom"',
      '  rules = [',
      '    local.common_rule,',
      `    { ref = "a", action = "block", expression = "${a}" },`,
      `    { ref = "b", action = "block", expression = "${b}" },`,
      '  ]',
      '}',
      '',
    ].join('\n');
  const findings = async (a: string, b: string) => {
    const o = io({ 'mixed.tf': tf(a, b) });
    const code = await run(['check', '--format', 'json', 'mixed.tf'], o);
    return [code, ...(JSON.parse(o.text().out) as { code: string; rule: number; range: { start: { line: number } } }[]).map((f) => [f.code, f.rule, f.range.start.line + 1])];
  };
  assert.deepEqual(await findings('http.host eq \\"a\\"', 'http.host eq \\"b\\" andd true'), [1, ['unknown-identifier', 2, 9]]);
  assert.deepEqual(await findings('http.host eq \\"a\\" andd true', 'http.host eq \\"b\\"'), [1, ['unknown-identifier', 1, 8]]);
});

test('check on an exported file: an execute rule that refers to a ruleset of the file is no unknown managed ruleset; a literal unknown id still is', async () => {
  // The export's own output (v5 and v4): `id = cloudflare_ruleset.custom_shop_rules.id`, resolved through its import block.
  for (const file of ['export-v5.tf', 'export-v4.tf']) {
    const o = io();
    await run(['check', '--format', 'json', file], o);
    const codes = JSON.parse(o.text().out).map((f: { code: string }) => f.code);
    assert.ok(!codes.includes('unknown-managed-ruleset'), `${file}: ${codes.join(', ')}`);
  }
  // References with and without an import block, to other resources and variables, and one literal id.
  const text = [
    'import {',
    '  to = cloudflare_ruleset.imported',
    '  id = "accounts/fedcba9876543210fedcba9876543210/bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"',
    '}',
    '',
    'resource "cloudflare_ruleset" "imported" {',
    '  account_id = "fedcba9876543210fedcba9876543210"',
    '  name       = "imported"',
    '  kind       = "custom"',
    '  phase      = "http_request_firewall_custom"',
    '  rules      = []',
    '}',
    '',
    'resource "cloudflare_ruleset" "created" {',
    '  account_id = "fedcba9876543210fedcba9876543210"',
    '  name       = "created"',
    '  kind       = "custom"',
    '  phase      = "http_request_firewall_custom"',
    '  rules      = []',
    '}',
    '',
    'resource "cloudflare_ruleset" "zone" {',
    '  zone_id = "0123456789abcdef0123456789abcdef"',
    '  name    = "zone"',
    '  kind    = "zone"',
    '  phase   = "http_request_firewall_custom"',
    '  rules = [',
    ...[
      ['imported', 'cloudflare_ruleset.imported.id'],
      ['created', 'cloudflare_ruleset.created.id'],
      ['elsewhere', 'data.cloudflare_rulesets.shop.rulesets[0].id'],
      ['variable', 'var.ruleset_id'],
      ['literal', '"dddddddddddddddddddddddddddddddd"'],
      // The literal id of the file's imported custom ruleset names it too.
      ['literal-of-the-file', '"bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"'],
    ].flatMap(([ref, id]) => ['    {', `      ref        = "${ref}"`, '      expression = "true"', '      action     = "execute"', '      action_parameters = {', `        id = ${id}`, '      }', '    },']),
    // A skip rule naming it, as the export writes skips: by its literal id.
    '    {',
    '      ref        = "skip-it"',
    '      expression = "true"',
    '      action     = "skip"',
    '      action_parameters = {',
    '        rulesets = ["bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"]',
    '      }',
    '    },',
    '  ]',
    '}',
    '',
  ].join('\n');
  const o = io({ 'main.tf': text });
  await run(['check', '--format', 'json', 'main.tf'], o);
  const unknown = JSON.parse(o.text().out).filter((f: { code: string }) => f.code === 'unknown-managed-ruleset');
  assert.deepEqual(
    unknown.map((f: { rule: number; severity: string; message: string; range: { start: { line: number } } }) => [f.rule, f.severity, f.range.start.line, f.message]),
    [[4, 'warning', 64, "'dddddddddddddddddddddddddddddddd' is not a known managed ruleset nor one of the account's custom rulesets"]],
  );
});

test('check: an execute rule that refers to a resource of the file that is not a custom ruleset (an entry point, itself) is reported; a custom one, or a kind Terraform computes, is not', async () => {
  const resource = (name: string, kind: string, rules: readonly [string, string][] = []) => [
    `resource "cloudflare_ruleset" "${name}" {`,
    kind === 'root' || kind === 'custom' || kind === 'var.kind' ? '  account_id = "fedcba9876543210fedcba9876543210"' : '  zone_id    = "0123456789abcdef0123456789abcdef"',
    `  name       = "${name}"`,
    `  kind       = ${kind.startsWith('var.') ? kind : `"${kind}"`}`,
    '  phase      = "http_request_firewall_custom"',
    ...(rules.length === 0
      ? ['  rules      = []']
      : ['  rules = [', ...rules.flatMap(([ref, id]) => ['    {', `      ref        = "${ref}"`, '      expression = "true"', '      action     = "execute"', '      action_parameters = {', `        id = ${id}`, '      }', '    },']), '  ]']),
    '}',
    '',
  ];
  const text = [
    'import {',
    '  to = cloudflare_ruleset.root',
    '  id = "accounts/fedcba9876543210fedcba9876543210/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"',
    '}',
    '',
    'import {',
    '  to = cloudflare_ruleset.shop',
    '  id = "accounts/fedcba9876543210fedcba9876543210/bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"',
    '}',
    '',
    ...resource('root', 'root'),
    ...resource('shop', 'custom'),
    ...resource('computed', 'var.kind'),
    ...resource('other', 'zone'),
    ...resource('zone', 'zone', [
      ['root-imported', 'cloudflare_ruleset.root.id'],
      ['entry-no-import', 'cloudflare_ruleset.other.id'],
      ['self', 'cloudflare_ruleset.zone.id'],
      ['custom', 'cloudflare_ruleset.shop.id'],
      ['computed-kind', 'cloudflare_ruleset.computed.id'],
    ]),
  ].join('\n');
  const o = io({ 'main.tf': text });
  assert.equal(await run(['check', '--format', 'json', 'main.tf'], o), 1);
  const findings = JSON.parse(o.text().out) as { code: string; rule: number; severity: string; message: string; resource: string; range: { start: { line: number; character: number } } }[];
  const line = (needle: string) => text.split('\n').findIndex((l) => l.includes(needle));
  assert.deepEqual(
    findings.filter((f) => /execute|managed-ruleset/.test(f.code)).map((f) => [f.code, f.severity, f.resource, f.rule, f.range.start.line, f.range.start.character, f.message]),
    [
      ['execute-target-unknown', 'error', 'cloudflare_ruleset.zone', 0, line('id = cloudflare_ruleset.root.id'), 13, 'cloudflare_ruleset.root is an entry point (kind = "root"), not a custom ruleset: an execute rule runs a managed ruleset or a custom ruleset of the account, and the service refuses any other id'],
      ['execute-target-unknown', 'error', 'cloudflare_ruleset.zone', 1, line('id = cloudflare_ruleset.other.id'), 13, 'cloudflare_ruleset.other is an entry point (kind = "zone"), not a custom ruleset: an execute rule runs a managed ruleset or a custom ruleset of the account, and the service refuses any other id'],
      ['execute-self', 'error', 'cloudflare_ruleset.zone', 2, line('id = cloudflare_ruleset.zone.id'), 13, 'cloudflare_ruleset.zone is this ruleset: a ruleset cannot execute itself'],
    ],
  );
  assert.equal(
    (findings.find((f) => f.code === 'execute-target-unknown') as { hint?: string }).hint,
    'An entry point runs when its phase does and cannot be executed. Point the rule at a custom ruleset (kind = "custom") or a managed ruleset, or move these rules into a custom ruleset and execute that.',
  );
});

test('terraform import: one resource is a ruleset; several a zone file; --out writes one file each', async () => {
  const one = io();
  assert.equal(await run(['terraform', 'import', 'v4-blocks.tf'], one), 0);
  const ruleset = JSON.parse(one.text().out);
  assert.equal(ruleset.phase, 'http_request_firewall_managed');
  assert.deepEqual(ruleset.rules[0].action_parameters.overrides, { categories: [{ category: 'wordpress', score_threshold: 40 }] });

  const several = io();
  assert.equal(await run(['terraform', 'import', 'export-v5.tf'], several), 0);
  const zone = JSON.parse(several.text().out);
  assert.deepEqual(Object.keys(zone.entryPoints), ['http_request_firewall_custom', 'http_request_firewall_managed']);
  assert.equal(zone.customRulesets[0].id, 'bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb');
  // The execute rule's reference to the custom ruleset resolves to its id (from the import block).
  assert.equal(zone.entryPoints.http_request_firewall_custom.rules[1].action_parameters.id, 'bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb');

  const out = io();
  assert.equal(await run(['terraform', 'import', '--out', '/tmp/x', 'export-v4.tf'], out), 0);
  assert.deepEqual([...out.written.keys()], ['/tmp/x/http_request_firewall_custom.ruleset.json', '/tmp/x/http_request_firewall_managed.ruleset.json', '/tmp/x/custom_shop_rules.ruleset.json']);
});

test('terraform import: values that depend on Terraform are kept and listed', async () => {
  const o = io();
  assert.equal(await run(['terraform', 'import', 'v5-escapes.tf'], o), 0);
  assert.equal(
    o.text().err,
    ['v5-escapes.tf: cloudflare_ruleset.custom.rules[1].expression depends on var.country: kept as written', 'v5-escapes.tf: cloudflare_ruleset.custom.rules[2].expression depends on var.blocked: kept as written', ''].join('\n'),
  );
});

test('terraform import: two entry points of one phase (two zones) are refused in one zone file; dynamic "rules" is reported as left out', async () => {
  const entry = (name: string, zone: string) =>
    [`resource "cloudflare_ruleset" "${name}" {`, `  zone_id = "${zone}"`, `  name    = "${name}"`, '  kind    = "zone"', '  phase   = "http_request_firewall_custom"', '  rules   = [{ action = "block", expression = "true" }]', '}', ''].join('\n');
  const two = io({ 'two.tf': entry('a', 'zone-a') + entry('b', 'zone-b') });
  assert.equal(await run(['terraform', 'import', 'two.tf'], two), 2);
  assert.equal(
    two.text().err,
    'rulesmith terraform import: cloudflare_ruleset.a (zone zone-a) and cloudflare_ruleset.b (zone zone-b) are both entry points of phase http_request_firewall_custom, and one zone file holds one entry point per phase; use --out DIR to write each resource to its own .ruleset.json\n',
  );
  const apart = io({ 'two.tf': entry('a', 'zone-a') + entry('b', 'zone-b') });
  assert.equal(await run(['terraform', 'import', '--out', '/tmp/two', 'two.tf'], apart), 0);
  assert.deepEqual([...apart.written.keys()], ['/tmp/two/a.ruleset.json', '/tmp/two/b.ruleset.json']);

  const dynamic = [
    'resource "cloudflare_ruleset" "managed" {',
    '  zone_id = "zone-a"',
    '  name    = "managed"',
    '  kind    = "zone"',
    '  phase   = "http_request_firewall_managed"',
    '  dynamic "rules" {',
    '    for_each = var.managed',
    '    content {',
    '      action     = "execute"',
    '      expression = "true"',
    '      action_parameters { id = rules.key }',
    '    }',
    '  }',
    '}',
    '',
  ].join('\n');
  const o = io({ 'dyn.tf': dynamic });
  assert.equal(await run(['terraform', 'import', 'dyn.tf'], o), 0);
  assert.equal(o.text().err, 'dyn.tf: cloudflare_ruleset.managed.rules depends on dynamic "rules" (its blocks are made at plan time): left out\n');
});

test('terraform: bad usage exits 2 with the reason', async () => {
  const cases: [string[], RegExp][] = [
    [['terraform'], /terraform needs a subcommand: export or import/],
    [['terraform', 'export'], /terraform export needs --zone ZONE_ID/],
    [['terraform', 'export', '--zone', 'z', '--provider', '3'], /--provider must be 4 or 5 \(got "3"\)/],
    [['terraform', 'import'], /terraform import takes one .tf file/],
  ];
  for (const [args, message] of cases) {
    const o = io();
    assert.equal(await run(args, o), 2, args.join(' '));
    assert.match(o.text().err, message);
  }
  const noTf = io({ 'x.tf': 'variable "a" {}\n' });
  assert.equal(await run(['terraform', 'import', 'x.tf'], noTf), 2);
  assert.equal(noTf.text().err, 'x.tf: no cloudflare_ruleset resource\n');
});

let service: TestService;
before(async () => {
  service = await startService();
});
after(async () => {
  await service?.close();
});

test('terraform export: a demo zone from the local service, v5 by default and v4 on request', async () => {
  const zones = (await service.call('GET', '/zones?per_page=50')).body.result as { id: string; name: string }[];
  let zone = zones[0];
  for (const z of zones) if ((await fetchZoneRulesets(service.url, z.id, service.adminToken)).length > 0) zone = z;
  const env = { RULESMITH_API_TOKEN: service.adminToken };
  const v5 = io();
  assert.equal(await runTerraformCommand(['export', '--zone', zone.id, '--api', service.url], v5, env), 0);
  assert.match(v5.text().out, /version = "~> 5"/);
  assert.match(v5.text().out, new RegExp(`import \\{\\n  to = cloudflare_ruleset\\.\\w+\\n  id = "zones/${zone.id}/[0-9a-f]{32}"\\n\\}`));
  assert.match(v5.text().out, / {2}rules = \[\n {4}\{\n/);
  const v4 = io();
  assert.equal(await runTerraformCommand(['export', '--zone', zone.id, '--api', service.url, '--provider', '4'], v4, env), 0);
  assert.match(v4.text().out, /\n {2}rules \{\n/);
  const denied = io();
  assert.equal(await runTerraformCommand(['export', '--zone', zone.id, '--api', service.url], denied, { RULESMITH_API_TOKEN: 'wrong' }), 2);
  assert.match(denied.text().err, /^rulesmith terraform export: GET \/zones\/[0-9a-f]+\/rulesets: 40[13] /);
  assert.throws(() => runTerraformCommand(['export', '--zone', zone.id], io(), {}), /set RULESMITH_API_TOKEN \(or CLOUDFLARE_API_TOKEN\) to an API token that can read the zone/);
});

test('terraform export with a token scoped to the zone: managed rulesets need nothing of the account; a custom one says which permission is missing', async () => {
  const zones = (await service.call('GET', '/zones?per_page=50')).body.result as { id: string; name: string; account: { id: string } }[];
  const exportWith = async (zone: { id: string }, token: string) => {
    const o = io();
    const code = await runTerraformCommand(['export', '--zone', zone.id, '--api', service.url], o, { RULESMITH_API_TOKEN: token });
    return { code, ...o.text() };
  };
  const accountReads = () => service.log.filter((l) => /^GET \S*\/accounts\//.test(l)).length;

  // The migrated zone's managed entry point executes two managed rulesets: nothing of the account is read.
  const migrated = zones.find((z) => z.name === 'migrated.example.com')!;
  const before = accountReads();
  const zoneOnly = await exportWith(migrated, service.credentials.get('migrated.example.com WAF')!);
  assert.equal(zoneOnly.code, 0, zoneOnly.err);
  assert.match(zoneOnly.out, /\bid += "4814384a9e5d4991b9815dcfc25d2f1f"\n/);
  assert.equal(accountReads(), before);

  // A zone that executes a custom ruleset of its account.
  const zone = zones.find((z) => z.name === 'enterprise.example.com')!;
  const account = zone.account.id;
  const custom = await service.call('POST', `/accounts/${account}/rulesets`, { token: service.adminToken, body: { name: 'Shop rules', kind: 'custom', phase: 'http_request_firewall_custom', rules: [{ ref: 'bots', expression: 'cf.client.bot', action: 'block' }] } });
  assert.equal(custom.status, 200, JSON.stringify(custom.body));
  const id = custom.body.result.id as string;
  const entry = await service.call('PUT', `/zones/${zone.id}/rulesets/phases/http_request_firewall_custom/entrypoint`, {
    token: service.adminToken,
    body: { rules: [{ ref: 'run-shop', expression: 'http.host eq "shop.example"', action: 'execute', action_parameters: { id } }] },
  });
  assert.equal(entry.status, 200, JSON.stringify(entry.body));
  // With account permissions: the custom ruleset is exported and referred to.
  const admin = await exportWith(zone, service.adminToken);
  assert.equal(admin.code, 0, admin.err);
  assert.match(admin.out, /\bid += cloudflare_ruleset\.custom_shop_rules\.id\n/);
  assert.match(admin.out, new RegExp(`id = "accounts/${account}/${id}"`));
  // With the zone's token: what was refused, which rule needs it, and the permission that would do.
  const refused = await exportWith(zone, service.credentials.get('enterprise.example.com WAF')!);
  assert.equal(refused.code, 2);
  assert.equal(refused.out, '');
  assert.equal(
    refused.err,
    `rulesmith terraform export: GET /accounts/${account}/rulesets/${id}: 403 Authentication error (10000). Rule 1 "run-shop" of the zone's http_request_firewall_custom ruleset executes custom ruleset ${id}, which belongs to account ${account}, and the API token may not read that account's rulesets: that needs the account-level permission "Account Rulesets Read" (or "Account WAF Read"), which a token scoped to the zone alone lacks. Export with a token that also has that permission on account ${account}.\n`,
  );
});

test('terraform export: the zone\'s rulesets list is read to its end, page by page (per_page, then each page\'s cursor: `cursor` or `cursors.after`)', async () => {
  const zone = '0123456789abcdef0123456789abcdef';
  const listed = [
    { id: 'm1', kind: 'managed', phase: 'http_request_firewall_managed' },
    { id: 'e1', kind: 'zone', phase: 'http_request_firewall_custom' },
    { id: 'e2', kind: 'zone', phase: 'http_ratelimit' },
    { id: 'e3', kind: 'zone', phase: 'http_request_transform' },
  ];
  const asked: string[] = [];
  // An API that serves at most 1 ruleset a page, whatever per_page asks for.
  const server = createServer((req, res) => {
    const url = new URL(req.url!, 'http://x');
    asked.push(url.pathname + url.search);
    const send = (body: unknown, status = 200) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    if (url.pathname === `/zones/${zone}/rulesets`) {
      const from = url.searchParams.has('cursor') ? Number(url.searchParams.get('cursor')!.replace(/^c/, '')) : 0;
      const next = from + 1 < listed.length ? `c${from + 1}` : undefined;
      const info = next === undefined ? {} : from % 2 === 0 ? { cursor: next } : { cursors: { after: next } };
      return send({ success: true, errors: [], result: listed.slice(from, from + 1), result_info: { per_page: 1, count: 1, ...info } });
    }
    const id = /^\/zones\/\w+\/rulesets\/(e\d)$/.exec(url.pathname)?.[1];
    if (id) return send({ success: true, errors: [], result: { id, kind: 'zone', name: id, phase: listed.find((l) => l.id === id)!.phase, rules: [{ expression: 'true', action: 'block' }] } });
    send({ success: false, errors: [{ code: 7003, message: 'Could not route' }] }, 404);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const api = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const rulesets = await fetchZoneRulesets(api, zone, 'token');
    assert.deepEqual(
      rulesets.map((r) => r.ruleset.id),
      ['e1', 'e2', 'e3'],
    );
    assert.deepEqual(
      asked.filter((a) => a.startsWith(`/zones/${zone}/rulesets?`)),
      [`/zones/${zone}/rulesets?per_page=50`, `/zones/${zone}/rulesets?per_page=50&cursor=c1`, `/zones/${zone}/rulesets?per_page=50&cursor=c2`, `/zones/${zone}/rulesets?per_page=50&cursor=c3`],
    );
    // A cursor that comes back is an error, never a list cut short (nor an endless loop).
    listed.push({ id: 'e4', kind: 'zone', phase: 'http_request_late_transform' });
    const again = createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ success: true, result: [listed[1]], result_info: { cursor: 'same' } })));
    await new Promise<void>((resolve) => again.listen(0, '127.0.0.1', resolve));
    try {
      await assert.rejects(fetchZoneRulesets(`http://127.0.0.1:${(again.address() as AddressInfo).port}`, zone, 'token'), /GET \/zones\/\w+\/rulesets: the API returned the cursor "same" twice/);
    } finally {
      again.close();
    }
  } finally {
    server.close();
  }
});

test('terraform export: an answer that is not the API\'s JSON names the URL and asks about --api; plain http goes only to this machine', async () => {
  const zone = '0123456789abcdef0123456789abcdef';
  let status = 200;
  const server = createServer((_req, res) => res.writeHead(status, { 'content-type': 'text/html' }).end('<html>Sign in to the Wi-Fi</html>'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const api = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    await assert.rejects(fetchZoneRulesets(api, zone, 'token'), {
      message: `GET /zones/${zone}/rulesets: 200 OK from ${api}/zones/${zone}/rulesets is not the API's JSON (content-type text/html): is --api the API's base URL, ending in /client/v4 (https://api.cloudflare.com/client/v4)?`,
    });
    // A refusal from a gateway's page stays a refusal (a 404 of a custom ruleset is then left out, a 403 explained).
    status = 403;
    await assert.rejects(fetchZoneRulesets(api, zone, 'token'), {
      message: `GET /zones/${zone}/rulesets: 403 Forbidden (an answer that is not the API's JSON, content-type text/html: is --api the API's base URL?)`,
    });
  } finally {
    server.close();
  }
  const o = io();
  assert.throws(() => runTerraformCommand(['export', '--zone', zone, '--api', 'http://api.cloudflare.com/client/v4'], o, { RULESMITH_API_TOKEN: 'secret-token' }), {
    message: 'rulesmith: --api http://api.cloudflare.com/client/v4 is plain http on another machine: the API token would travel unencrypted; use https (the local rules service on 127.0.0.1 or localhost may use http)',
  });
  assert.doesNotMatch(o.text().err, /secret-token/);
});
