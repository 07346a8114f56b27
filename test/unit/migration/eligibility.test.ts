import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { LegacyFirewallRule } from '../../../server/src/rulesets/legacy';
import { utf8Length } from '../../../server/src/language/bytes';
import { checkMigration, type MigrationZone, type UriOverride } from '../../../server/src/migration/index';

const ZONE_ID = '023e105f4ecef8ad9ca31a8372d0c353';
const zone = (extra: Partial<MigrationZone> = {}): MigrationZone => ({ plan: 'business', waf: { zoneId: ZONE_ID, enabled: true }, ...extra });
const fw = (n: number, expression = 'ip.src eq 192.0.2.1'): LegacyFirewallRule[] =>
  Array.from({ length: n }, (_, i) => ({ id: `r${i + 1}`, action: 'block', filter: { expression } }));
const override = (id: string, urls: string[]): UriOverride => ({ id, description: null, urls, priority: 1, paused: false, groups: {}, rules: { '100015': 'disable' }, rewrite_action: {} });
// A valid expression of exactly `bytes` bytes.
const longExpression = (bytes: number) => {
  const head = 'http.request.uri.path eq "/';
  return `${head}${'a'.repeat(bytes - head.length - 1)}"`;
};

describe('checkMigration', () => {
  const cases: { name: string; zone: MigrationZone; compatible: boolean; state: string; reasons: [string, RegExp][]; ids?: (readonly string[] | undefined)[] }[] = [
    { name: 'a Business zone with nothing in the way', zone: zone(), compatible: true, state: 'start', reasons: [] },
    { name: 'exactly 200 firewall rules and a 4096-byte expression are fine', zone: zone({ firewallRules: [...fw(199), ...fw(1, longExpression(4096))] }), compatible: true, state: 'start', reasons: [] },
    {
      name: 'URI-based overrides → not eligible, naming them',
      zone: zone({ plan: 'enterprise', waf: { zoneId: ZONE_ID, enabled: true, overrides: [override('o1', ['shop.example.com/*']), override('o2', ['example.com/a', 'example.com/b'])] } }),
      compatible: false,
      state: 'start',
      reasons: [['uri-overrides', /^This zone has 2 URI-based WAF overrides, which prevent the upgrade: o1 \(shop\.example\.com\/\*\); o2 \(example\.com\/a, example\.com\/b\)\. Delete them \(DELETE \/zones\/023e105f4ecef8ad9ca31a8372d0c353\/firewall\/waf\/overrides\/\{id\}\)/]],
      ids: [['o1', 'o2']],
    },
    {
      name: '201 firewall rules → support needed',
      zone: zone({ firewallRules: fw(201) }),
      compatible: false,
      state: 'start',
      reasons: [['too-many-firewall-rules', /^The number of firewall rules to migrate \(201\) exceeds 200: this migration needs support/]],
    },
    {
      name: 'an expression of 4097 bytes → support needed, naming the rule',
      zone: zone({ firewallRules: [...fw(1), { id: 'big', description: 'allow list', action: 'allow', filter: { expression: longExpression(4097) } }] }),
      compatible: false,
      state: 'start',
      reasons: [['expression-too-long', /^firewall rule big \("allow list"\) has an expression of 4097 bytes: a firewall rule expression longer than 4 KB \(4096 bytes\) needs support/]],
      ids: [['big']],
    },
    {
      name: 'bytes, not characters: 2,040 × "é" make 4,108 bytes in 2,068 characters',
      zone: zone({ firewallRules: [{ id: 'utf8', action: 'block', filter: { expression: `http.request.uri.path eq "/${'é'.repeat(2040)}"` } }] }),
      compatible: false,
      state: 'start',
      reasons: [['expression-too-long', /has an expression of 4108 bytes/]],
    },
    {
      name: 'Free plan → no previous WAF',
      zone: zone({ plan: 'free', waf: { zoneId: ZONE_ID, enabled: false } }),
      compatible: false,
      state: 'default',
      reasons: [['no-previous-waf', /^This zone is on the Free plan, which never had the previous version of WAF managed rules: there is nothing to migrate/]],
    },
    {
      name: 'already migrated → complete',
      zone: zone({ migration: { state: 'complete', created: '2026-11-01T10:00:00Z', completedAt: '2026-11-02T10:00:00Z' }, firewallRules: fw(201) }),
      compatible: false,
      state: 'complete',
      reasons: [['already-migrated', /^This zone was already migrated to the new WAF Managed Rules on 2026-11-02T10:00:00Z; the migration is irreversible/]],
    },
    {
      name: 'validation mode is still compatible (finish with pending)',
      zone: zone({ plan: 'enterprise', migration: { state: 'validation', created: '2026-11-01T10:00:00Z', validationSince: '2026-11-01T10:00:00Z' } }),
      compatible: true,
      state: 'validation',
      reasons: [],
    },
    {
      name: 'every reason at once',
      zone: zone({ plan: 'enterprise', waf: { zoneId: ZONE_ID, enabled: true, overrides: [override('o1', ['a.example.com/*'])] }, firewallRules: [...fw(200), ...fw(1, longExpression(5000))] }),
      compatible: false,
      state: 'start',
      reasons: [
        ['uri-overrides', /o1 \(a\.example\.com\/\*\)/],
        ['too-many-firewall-rules', /\(201\) exceeds 200/],
        ['expression-too-long', /firewall rule r1 has an expression of 5000 bytes/],
      ],
    },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const r = checkMigration(c.zone);
      assert.deepEqual(r.result, { compatible: c.compatible, migration_state: c.state });
      assert.deepEqual(
        r.reasons.map((x) => x.code),
        c.reasons.map(([code]) => code),
      );
      c.reasons.forEach(([, re], i) => assert.match(r.reasons[i].message, re));
      if (c.ids) assert.deepEqual(r.reasons.map((x) => x.ids), c.ids);
    });
  }

  test('utf8Length', () => {
    assert.deepEqual(['', 'a', 'é', '€', '😀'].map(utf8Length), [0, 1, 2, 3, 4]);
  });
});
