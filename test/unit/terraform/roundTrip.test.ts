// Export -> import gives the rulesets back: over the demo zones of the local rules service
// (their entry points and the custom rulesets they execute, read over HTTP as
// `rulesmith terraform export` does) and over 200 generated rulesets, for both provider
// versions, read back through HashiCorp's parser. Golden files pin the text of each version,
// and the text is what `terraform fmt` leaves unchanged (terraformFmt.ts).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, test } from 'node:test';
import fc from 'fast-check';
import { fetchZoneRulesets } from '../../../server/src/cli/terraform';
import { exportTerraform, type ExportedRuleset, type ProviderVersion } from '../../../server/src/terraform/export';
import { parseHcl } from '../../../server/src/terraform/hcl';
import { importIds, resourcesOf, toRuleset } from '../../../server/src/terraform/rulesetJson';
import { startService, type TestService } from '../../service/harness';
import { terraformFmt } from './terraformFmt';

const fixtures = new URL('../../fixtures/terraform/', import.meta.url).pathname;

/**
 * What a ruleset is once the service's computed fields are gone, and what neither provider
 * can write: an execute's `action_parameters.version`, and (v4) an empty `rules`.
 */
function withoutComputed(r: Readonly<Record<string, unknown>>, provider: ProviderVersion): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of ['id', 'name', 'description', 'kind', 'phase', 'rules']) if (r[k] !== undefined) out[k] = r[k];
  if (Array.isArray(out.rules)) {
    out.rules = (out.rules as Record<string, unknown>[]).map((rule) => {
      const kept = Object.fromEntries(Object.entries(rule).filter(([k]) => k !== 'id' && k !== 'version' && k !== 'last_updated'));
      const ap = kept.action_parameters as Record<string, unknown> | undefined;
      if (ap && 'version' in ap) kept.action_parameters = Object.fromEntries(Object.entries(ap).filter(([k]) => k !== 'version'));
      return kept;
    });
    if (provider === 4 && (out.rules as unknown[]).length === 0) delete out.rules;
  }
  return out;
}

async function roundTrip(rulesets: readonly ExportedRuleset[], provider: ProviderVersion): Promise<Record<string, unknown>[]> {
  const text = exportTerraform(rulesets, provider);
  const parsed = await parseHcl(text);
  assert.ok(parsed.ok, parsed.ok ? '' : `${parsed.error.message}\n${text.slice(Math.max(0, parsed.error.start - 200), parsed.error.end + 200)}`);
  const ids = importIds(parsed.json);
  const byId = new Map(resourcesOf(parsed.json, 'cloudflare_ruleset').map((r) => toRuleset(r, ids)).map((i) => [i.ruleset.id, i]));
  return rulesets.map((r) => {
    const back = byId.get(r.ruleset.id);
    assert.ok(back, `ruleset ${String(r.ruleset.id)} was not exported`);
    assert.deepEqual(back.unresolved, []);
    return back.ruleset;
  });
}

let service: TestService;
before(async () => {
  service = await startService();
});
after(async () => {
  await service?.close();
});

test('the demo zones: export -> import gives their rulesets back (v5 and v4)', async () => {
  const zones = (await service.call('GET', '/zones?per_page=50')).body.result as { id: string; name: string }[];
  assert.ok(zones.length >= 3);
  let seen = 0;
  for (const zone of zones) {
    const rulesets = await fetchZoneRulesets(service.url, zone.id, service.adminToken);
    seen += rulesets.length;
    for (const provider of [5, 4] as const) {
      const back = await roundTrip(rulesets, provider);
      assert.deepEqual(back, rulesets.map((r) => withoutComputed(r.ruleset, provider)), `${zone.name}, provider ${provider}`);
    }
  }
  assert.ok(seen > 0, 'the demo zones have rulesets to export');
});

const hex32 = fc.stringMatching(/^[0-9a-f]{32}$/);
// Text that exercises the escapes: quotes, backslashes, template sequences, newlines, non-ASCII.
const tricky = fc.array(fc.constantFrom('a', 'Z', ' ', '"', '\\', '${', '%{', '$${', '}', '\n', '\t', 'é', '😀', '<<EOT', '#', '//', '/*', 'ip.src', ','), { maxLength: 12 }).map((parts) => parts.join(''));
const name = fc.stringMatching(/^[a-z][a-z0-9 _-]{0,15}$/);
const overrides = fc.record(
  {
    action: fc.constantFrom('log', 'block'),
    enabled: fc.boolean(),
    categories: fc.array(fc.record({ category: name, action: fc.constantFrom('log', 'block'), enabled: fc.boolean() }, { requiredKeys: ['category'] }), { maxLength: 3 }),
    rules: fc.array(fc.record({ id: hex32, action: fc.constantFrom('log', 'block'), enabled: fc.boolean(), score_threshold: fc.integer({ min: 1, max: 100 }) }, { requiredKeys: ['id'] }), { maxLength: 3 }),
  },
  { requiredKeys: [] },
);
const rule = fc.oneof(
  fc.record({ action: fc.constant('block'), action_parameters: fc.record({ response: fc.record({ status_code: fc.integer({ min: 400, max: 499 }), content: tricky, content_type: fc.constant('text/plain') }) }) }, { requiredKeys: ['action'] }),
  fc.record({ action: fc.constant('execute'), action_parameters: fc.record({ id: hex32, version: fc.constant('latest'), overrides }, { requiredKeys: ['id'] }) }),
  fc.record({ action: fc.constant('skip'), action_parameters: fc.record({ ruleset: fc.constant('current'), phases: fc.array(fc.constantFrom('http_ratelimit', 'http_request_firewall_managed'), { minLength: 1, maxLength: 2 }), rules: fc.dictionary(hex32, fc.array(hex32, { minLength: 1, maxLength: 3 }), { maxKeys: 2 }) }, { requiredKeys: [] }), logging: fc.record({ enabled: fc.boolean() }) }, { requiredKeys: ['action'] }),
  fc.record({ action: fc.constant('score'), action_parameters: fc.record({ increment: fc.integer({ min: 1, max: 10 }) }) }),
  fc.record({ action: fc.constantFrom('log', 'managed_challenge'), ratelimit: fc.record({ characteristics: fc.constant(['ip.src', 'cf.colo.id']), period: fc.constantFrom(10, 60), requests_per_period: fc.integer({ min: 1, max: 1000 }), mitigation_timeout: fc.constantFrom(0, 600) }, { requiredKeys: ['characteristics', 'period'] }) }, { requiredKeys: ['action'] }),
);
const generated = fc
  .record({
    id: hex32,
    name,
    description: fc.option(tricky, { nil: undefined }),
    kind: fc.constantFrom('zone', 'custom'),
    phase: fc.constantFrom('http_request_firewall_custom', 'http_request_firewall_managed', 'http_ratelimit'),
    rules: fc.array(
      fc.tuple(rule, fc.record({ ref: name, expression: tricky, description: tricky, enabled: fc.boolean() }, { requiredKeys: ['expression'] })).map(([a, b]) => ({ ...b, ...a })),
      { maxLength: 5 },
    ),
  })
  // Plain JSON, as the API gives (fast-check's records have no prototype; undefined keys go).
  .map((r) => JSON.parse(JSON.stringify(r)) as Record<string, unknown>);

test('200 generated rulesets: export -> import deep-equal, v5 and v4', async () => {
  const samples = fc.sample(generated, { numRuns: 200, seed: 18 });
  const rulesets: ExportedRuleset[] = samples.map((r) => ({ ruleset: r, scope: r.kind === 'custom' ? { accountId: 'acc' } : { zoneId: 'zone' } }));
  for (const provider of [5, 4] as const) {
    // In batches of 20 files, as a repository holds them.
    for (let i = 0; i < rulesets.length; i += 20) {
      const batch = rulesets.slice(i, i + 20);
      assert.deepEqual(await roundTrip(batch, provider), batch.map((r) => withoutComputed(r.ruleset, provider)), `provider ${provider}, batch ${i / 20}`);
    }
  }
});

const GOLDEN: ExportedRuleset[] = JSON.parse(readFileSync(`${fixtures}export-source.json`, 'utf8'));

for (const provider of [5, 4] as const) {
  test(`golden: provider v${provider}`, async () => {
    assert.equal(exportTerraform(GOLDEN, provider), readFileSync(`${fixtures}export-v${provider}.tf`, 'utf8'));
    assert.deepEqual(await roundTrip(GOLDEN, provider), GOLDEN.map((r) => withoutComputed(r.ruleset, provider)));
  });
}

test('control characters: a backspace and a form feed are written as \\u0008 and \\u000c (HCL has no \\b, \\f) and read back', async () => {
  const expression = 'http.request.uri.path eq "/a\bb\fc" and http.host eq "\\\\b\\\\f\t"';
  const ruleset = { id: 'cccccccccccccccccccccccccccccccc', name: 'ctl', kind: 'zone', phase: 'http_request_firewall_custom', rules: [{ expression, action: 'block', description: '\b\f' }] };
  for (const provider of [5, 4] as const) {
    const text = exportTerraform([{ ruleset, scope: { zoneId: 'zone' } }], provider);
    assert.ok(text.includes('"/a\\u0008b\\u000cc\\"'), text);
    assert.ok(!/\\[bf]/.test(text.replace(/\\\\/g, '')), text);
    assert.deepEqual(await roundTrip([{ ruleset, scope: { zoneId: 'zone' } }], provider), [withoutComputed(ruleset, provider)], `provider ${provider}`);
  }
});

test('what the providers cannot take: no action_parameters.version (a pinned one is said in a comment), and for v4 no `rules = []`', () => {
  const execute = (version: string) => ({ ref: `run-${version}`, expression: 'true', action: 'execute', action_parameters: { id: 'efb7b8c949ac4650a09736fc376e9aee', version } });
  const managed = { id: 'dddddddddddddddddddddddddddddddd', name: 'm', kind: 'zone', phase: 'http_request_firewall_managed', rules: [execute('latest'), execute('3')] };
  const empty = { id: 'eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee', name: 'e', kind: 'zone', phase: 'http_request_firewall_custom', rules: [] };
  for (const provider of [5, 4] as const) {
    const text = exportTerraform([{ ruleset: managed, scope: { zoneId: 'zone' } }, { ruleset: empty, scope: { zoneId: 'zone' } }], provider);
    assert.ok(!/\bversion\s*=/.test(text.replace(/version = "~> [45]"/, '')), text);
    assert.ok(text.includes('  # rule 2 (run-3) runs version 3 of its ruleset; the provider has no attribute for that, so after an apply it runs the latest.\n'), text);
    assert.equal(/rules\s*=\s*\[\]/.test(text), provider === 5, text);
  }
});

test('a key that is an HCL keyword (a header named for or if) is quoted: bare, `{ for = … }` would be a for expression', async () => {
  const ruleset = { id: 'abababababababababababababababab', name: 'kw', kind: 'zone', phase: 'http_request_late_transform', rules: [{ expression: 'true', action: 'rewrite', action_parameters: { headers: { for: { operation: 'set', value: '1' }, if: { operation: 'remove' } } } }] };
  const text = exportTerraform([{ ruleset, scope: { zoneId: 'zone' } }], 5);
  assert.ok(text.includes('"for" = {') && text.includes('"if" = {'), text);
  assert.deepEqual(await roundTrip([{ ruleset, scope: { zoneId: 'zone' } }], 5), [withoutComputed(ruleset, 5)]);
});

test('provider v4 writes the rulesets whose blocks are the API shapes, and names the others in a comment (a transform\'s headers are blocks of their own there)', async () => {
  const transform = { id: 'ffffffffffffffffffffffffffffffff', name: 't', kind: 'zone', phase: 'http_request_late_transform', rules: [{ expression: 'true', action: 'rewrite', action_parameters: { headers: { 'x-env': { operation: 'set', value: 'prod' } } } }] };
  const custom = { id: 'cccccccccccccccccccccccccccccccc', name: 'c', kind: 'zone', phase: 'http_request_firewall_custom', rules: [{ expression: 'true', action: 'block', action_parameters: { response: { status_code: 403, content: 'no', content_type: 'text/plain' } } }] };
  const both: ExportedRuleset[] = [{ ruleset: transform, scope: { zoneId: 'zone' } }, { ruleset: custom, scope: { zoneId: 'zone' } }];
  const text = exportTerraform(both, 4);
  assert.ok(text.includes('\n# Left out: the http_request_late_transform ruleset ffffffffffffffffffffffffffffffff: its rules\' parameters have block shapes of their own in provider v4; export it with --provider 5.\n'), text);
  assert.ok(!text.includes('headers'), text);
  assert.deepEqual(await roundTrip([both[1]!], 4), [withoutComputed(custom, 4)]);
  // v5 writes both.
  assert.deepEqual(await roundTrip(both, 5), [withoutComputed(transform, 5), withoutComputed(custom, 5)]);
});

test('terraformFmt, the test\'s reading of terraform fmt: indents by bracket, aligns the = of adjacent single-line attributes', () => {
  const messy = ['resource "cloudflare_ruleset" "x" {', 'zone_id = "z"', '      name = "n"', '  rules = [', '{', 'ref = "a"', 'expression = "true"', 'action_parameters = {', 'ids = ["a","b"]', '}', 'enabled = true', '},', ']', '}', ''].join('\n');
  const formatted = [
    'resource "cloudflare_ruleset" "x" {',
    '  zone_id = "z"',
    '  name    = "n"',
    '  rules = [',
    '    {',
    '      ref        = "a"',
    '      expression = "true"',
    '      action_parameters = {',
    '        ids = ["a", "b"]',
    '      }',
    '      enabled = true',
    '    },',
    '  ]',
    '}',
    '',
  ].join('\n');
  assert.equal(terraformFmt(messy), formatted);
  assert.equal(terraformFmt(formatted), formatted);
  // Widths in grapheme clusters (not bytes, not code points), a quoted key's quotes counted: 1, 3 and 4 columns.
  assert.equal(terraformFmt('a = 1\n"é" = 2\n"e\u0301😀" = 3\n'), 'a    = 1\n"é"  = 2\n"e\u0301😀" = 3\n');
});

test('terraform fmt layout: the export is as terraform fmt writes it (the golden files, 200 generated rulesets, keys that need quotes or are not ASCII)', () => {
  const samples = fc.sample(generated, { numRuns: 200, seed: 18 });
  const rulesets: ExportedRuleset[] = samples.map((r) => ({ ruleset: r, scope: r.kind === 'custom' ? { accountId: 'acc' } : { zoneId: 'zone' } }));
  const keys: ExportedRuleset = {
    scope: { accountId: 'fedcba9876543210fedcba9876543210' },
    ruleset: {
      id: 'dddddddddddddddddddddddddddddddd',
      name: 'keys',
      description: 'keys of every width',
      kind: 'custom',
      phase: 'http_request_late_transform',
      rules: [{ ref: 'h', expression: 'true', action: 'rewrite', action_parameters: { headers: { 'x-a': { operation: 'set', value: '1' } }, extra: { a: 1, é: 2, 'e\u0301😀': 3, 'with space': 4, '9lives': 5, 'x': [], 'y': {} } } }],
    },
  };
  for (const provider of [5, 4] as const) {
    for (const text of [exportTerraform(GOLDEN, provider), exportTerraform(rulesets, provider), exportTerraform([keys], provider)]) {
      const formatted = terraformFmt(text);
      if (formatted !== text) {
        const [a, b] = [text.split('\n'), formatted.split('\n')];
        const at = a.findIndex((l, i) => l !== b[i]);
        assert.fail(`provider ${provider}, line ${at + 1}: terraform fmt writes\n${b.slice(Math.max(0, at - 3), at + 2).join('\n')}\nnot\n${a.slice(Math.max(0, at - 3), at + 2).join('\n')}`);
      }
    }
  }
  // The rule's header attributes and its `=` runs, as terraform fmt aligns them.
  assert.match(exportTerraform(GOLDEN, 5), /\n {2}zone_id = "0123456789abcdef0123456789abcdef"\n {2}name {4}= "zone custom rules"\n {2}kind {4}= "zone"\n {2}phase {3}= "http_request_firewall_custom"\n {2}rules = \[\n/);
});
