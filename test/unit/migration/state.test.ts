import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Plan } from '../../../server/src/language/scheme/types';
import {
  inValidationMode,
  migrationPut,
  migrationStatus,
  parseWafMigration,
  previousWafAccess,
  previousWafMigratedError,
  type MigrationErrorCode,
  type MigrationRecord,
  type MigrationZone,
  type ReasonCode,
} from '../../../server/src/migration/index';

const ZONE_ID = '023e105f4ecef8ad9ca31a8372d0c353';
const NOW = '2026-11-22T05:00:00Z';
const T0 = '2026-11-20T09:00:00Z';
const zone = (plan: Plan, migration?: MigrationRecord, extra: Partial<MigrationZone> = {}): MigrationZone => ({ plan, waf: { zoneId: ZONE_ID, enabled: true }, ...(migration ? { migration } : {}), ...extra });
const VALIDATION: MigrationRecord = { state: 'validation', created: T0, validationSince: T0 };
const COMPLETE: MigrationRecord = { state: 'complete', created: T0, completedAt: '2026-11-21T09:00:00Z' };
const enabledRules = [{ action: 'execute', expression: 'true', action_parameters: { id: 'efb7b8c949ac4650a09736fc376e9aee' } }];
const disabledRules = [{ ...enabledRules[0], enabled: false }];

describe('parseWafMigration', () => {
  const cases: [string | undefined, string | undefined][] = [
    [undefined, undefined],
    ['', undefined],
    ['pending', 'pending'],
    ['1', 'pending'],
    ['validation', 'validation'],
    ['2', 'validation'],
  ];
  for (const [raw, value] of cases) test(`${raw} → ${value}`, () => assert.deepEqual(parseWafMigration(raw), value ? { ok: true, value } : { ok: true }));
  for (const raw of ['3', 'PENDING', 'complete', 'true']) {
    test(`${raw} → error`, () =>
      assert.deepEqual(parseWafMigration(raw), {
        ok: false,
        error: { code: 'invalid-migration-parameter', message: `'${raw}' is not a valid value for waf_migration: use pending (or 1) to migrate, or validation (or 2, Enterprise only) to run both versions side by side` },
      }));
  }
});

describe('transitions', () => {
  const ok: { name: string; zone: MigrationZone; param?: string; rules?: unknown; effect: string; migration: MigrationRecord | undefined }[] = [
    { name: 'Enterprise start → validation', zone: zone('enterprise'), param: 'validation', effect: 'validation', migration: { state: 'validation', created: NOW, validationSince: NOW } },
    { name: 'Enterprise start → validation (alias 2)', zone: zone('enterprise'), param: '2', effect: 'validation', migration: { state: 'validation', created: NOW, validationSince: NOW } },
    { name: 'Enterprise validation → validation keeps its dates', zone: zone('enterprise', VALIDATION), param: 'validation', effect: 'validation', migration: VALIDATION },
    { name: 'Enterprise validation → complete', zone: zone('enterprise', VALIDATION), param: 'pending', effect: 'complete', migration: { state: 'complete', created: T0, validationSince: T0, completedAt: NOW } },
    { name: 'Enterprise start → complete', zone: zone('enterprise'), param: '1', effect: 'complete', migration: { state: 'complete', created: NOW, completedAt: NOW } },
    { name: 'Business start → complete', zone: zone('business'), param: 'pending', effect: 'complete', migration: { state: 'complete', created: NOW, completedAt: NOW } },
    { name: 'Pro start → complete (alias 1)', zone: zone('pro'), param: '1', effect: 'complete', migration: { state: 'complete', created: NOW, completedAt: NOW } },
    { name: 'without the parameter, Pro saves all-disabled rules', zone: zone('pro'), rules: disabledRules, effect: 'saved', migration: undefined },
    { name: 'without the parameter, an empty rule list is fine on Business', zone: zone('business'), rules: [], effect: 'saved', migration: undefined },
    { name: 'without the parameter, Enterprise saves enabled rules without migrating', zone: zone('enterprise'), rules: enabledRules, effect: 'saved', migration: undefined },
    { name: 'without the parameter in validation: saved, still validating', zone: zone('enterprise', VALIDATION), rules: enabledRules, effect: 'saved', migration: VALIDATION },
    { name: 'without the parameter after migrating: an ordinary update', zone: zone('business', COMPLETE), rules: enabledRules, effect: 'saved', migration: COMPLETE },
    { name: 'without the parameter on Free: an ordinary update', zone: zone('free'), rules: enabledRules, effect: 'saved', migration: undefined },
  ];
  for (const c of ok) {
    test(c.name, () => {
      const r = migrationPut(c.zone, c.param, c.rules ?? enabledRules, NOW);
      assert.ok(r.ok, JSON.stringify(r));
      assert.equal(r.effect, c.effect);
      assert.deepEqual(r.migration, c.migration);
    });
  }

  const errors: { name: string; zone: MigrationZone; param?: string; rules?: unknown; code: MigrationErrorCode; reason?: ReasonCode; message: RegExp; pointer?: string }[] = [
    {
      name: 'validation on Business → needs Enterprise',
      zone: zone('business'),
      param: 'validation',
      code: 'validation-needs-enterprise',
      message: /^Validation mode \(waf_migration=validation\) needs the Enterprise plan, and this zone is on the business plan\. Use waf_migration=pending/,
    },
    { name: 'validation on Pro (alias 2) → needs Enterprise', zone: zone('pro'), param: '2', code: 'validation-needs-enterprise', message: /^Validation mode \(waf_migration=2\) needs the Enterprise plan/ },
    ...(['pending', '1', 'validation', '2'] as const).map((param): (typeof errors)[number] => ({
      name: `complete → ${param}: irreversible`,
      zone: zone('enterprise', COMPLETE),
      param,
      code: 'not-eligible',
      reason: 'already-migrated',
      message: new RegExp(`^This zone was already migrated to the new WAF Managed Rules on 2026-11-21T09:00:00Z, and the migration is irreversible: waf_migration=${param} cannot be used again`),
    })),
    { name: 'Free → pending: nothing to migrate', zone: zone('free'), param: 'pending', code: 'not-eligible', reason: 'no-previous-waf', message: /^Migration refused: This zone is on the Free plan/ },
    {
      name: 'URI overrides → not eligible',
      zone: zone('enterprise', undefined, { waf: { zoneId: ZONE_ID, enabled: true, overrides: [{ id: 'o1', description: null, urls: ['x.example.com/*'], priority: 1, paused: false, groups: {}, rules: {}, rewrite_action: {} }] } }),
      param: 'validation',
      code: 'not-eligible', reason: 'uri-overrides',
      message: /^Migration refused: This zone has 1 URI-based WAF override, which prevents the upgrade: o1 \(x\.example\.com\/\*\)/,
    },
    {
      name: 'URI overrides added during validation → pending refused',
      zone: zone('enterprise', VALIDATION, { waf: { zoneId: ZONE_ID, enabled: true, overrides: [{ id: 'o2', description: null, urls: ['y.example.com/*'], priority: 1, paused: false, groups: {}, rules: {}, rewrite_action: {} }] } }),
      param: 'pending',
      code: 'not-eligible', reason: 'uri-overrides',
      message: /o2 \(y\.example\.com\/\*\)/,
    },
    {
      name: '201 firewall rules → support needed',
      zone: zone('business', undefined, { firewallRules: Array.from({ length: 201 }, (_, i) => ({ id: `r${i}`, action: 'block' as const, filter: { expression: 'ip.src eq 192.0.2.1' } })) }),
      param: 'pending',
      code: 'not-eligible', reason: 'too-many-firewall-rules',
      message: /^Migration refused: The number of firewall rules to migrate \(201\) exceeds 200: this migration needs support/,
    },
    {
      name: 'a 4 KB+ expression → support needed',
      zone: zone('business', undefined, { firewallRules: [{ id: 'big', action: 'block', filter: { expression: `http.request.uri.path eq "/${'a'.repeat(4100)}"` } }] }),
      param: 'pending',
      code: 'not-eligible', reason: 'expression-too-long',
      message: /firewall rule big has an expression of 4128 bytes: .*needs support/,
    },
    {
      name: 'Pro without the parameter with an enabled rule → refused, pointing at it',
      zone: zone('pro'),
      rules: [...disabledRules, ...enabledRules],
      code: 'enabled-rules-need-migration',
      pointer: '/rules/1/enabled',
      message: /^Before the WAF migration, a Pro zone can save the http_request_firewall_managed entry point only with every rule disabled \("enabled": false\), and rule 2 is enabled\. Add waf_migration=pending&phase_two=1 .*only Enterprise zones may save enabled rules without migrating\.$/,
    },
    {
      name: 'Business without the parameter, "enabled": true explicitly → refused',
      zone: zone('business'),
      rules: [{ ...enabledRules[0], enabled: true }],
      code: 'enabled-rules-need-migration',
      pointer: '/rules/0/enabled',
      message: /^Before the WAF migration, a Business zone can save/,
    },
    { name: 'an unknown waf_migration value', zone: zone('enterprise'), param: 'now', code: 'invalid-migration-parameter', message: /^'now' is not a valid value for waf_migration/ },
  ];
  for (const c of errors) {
    test(c.name, () => {
      const r = migrationPut(c.zone, c.param, c.rules ?? enabledRules, NOW);
      assert.equal(r.ok, false);
      if (r.ok) return;
      assert.equal(r.error.code, c.code);
      assert.equal(r.error.reason, c.reason);
      assert.equal(r.error.pointer, c.pointer);
      assert.match(r.error.message, c.message);
    });
  }
});

describe('status', () => {
  const cases: [string, MigrationZone, object][] = [
    ['Free', zone('free'), { migration_state: 'default', old_waf_status: 'disabled', new_waf_status: 'enabled', source: 'defaults', created: null }],
    ['Business, not started', zone('business'), { migration_state: 'start', old_waf_status: 'enabled', new_waf_status: 'disabled', source: 'defaults', created: null }],
    ['Business, previous WAF switched off', zone('business', undefined, { waf: { zoneId: ZONE_ID, enabled: false } }), { migration_state: 'start', old_waf_status: 'disabled', new_waf_status: 'disabled', source: 'defaults', created: null }],
    ['Enterprise, validation', zone('enterprise', VALIDATION), { migration_state: 'validation', old_waf_status: 'enabled', new_waf_status: 'enabled', source: 'zone', created: T0 }],
    ['migrated', zone('pro', COMPLETE), { migration_state: 'complete', old_waf_status: 'disabled', new_waf_status: 'enabled', source: 'zone', created: T0 }],
  ];
  for (const [name, z, expected] of cases) test(name, () => assert.deepEqual(migrationStatus(z), expected));

  test('the engine runs validation mode only in the validation state', () => {
    assert.deepEqual([zone('enterprise'), zone('enterprise', VALIDATION), zone('enterprise', COMPLETE), zone('free')].map(inValidationMode), [false, true, false, false]);
  });

  test('a whole Enterprise journey: start → validation → complete → refused', () => {
    let z = zone('enterprise');
    const a = migrationPut(z, 'validation', enabledRules, '2026-11-22T01:00:00Z');
    assert.ok(a.ok);
    z = { ...z, migration: a.migration };
    assert.deepEqual(migrationStatus(z), { migration_state: 'validation', old_waf_status: 'enabled', new_waf_status: 'enabled', source: 'zone', created: '2026-11-22T01:00:00Z' });
    const b = migrationPut(z, 'pending', enabledRules, '2026-11-22T02:00:00Z');
    assert.ok(b.ok);
    z = { ...z, migration: b.migration };
    assert.deepEqual(migrationStatus(z), { migration_state: 'complete', old_waf_status: 'disabled', new_waf_status: 'enabled', source: 'zone', created: '2026-11-22T01:00:00Z' });
    const c = migrationPut(z, 'validation', enabledRules, '2026-11-22T03:00:00Z');
    assert.equal(c.ok, false);
  });
});

describe('previous-version APIs', () => {
  test('after migration they answer an error that says when and what to use', () => {
    assert.deepEqual(previousWafMigratedError(ZONE_ID, '2026-11-21T09:00:00Z'), {
      code: 'previous-waf-migrated',
      message:
        'The previous version of WAF managed rules is no longer available for this zone: it was migrated to the new WAF Managed Rules on 2026-11-21T09:00:00Z. Use the managed rulesets instead: the Rulesets API\'s http_request_firewall_managed entry point (/zones/023e105f4ecef8ad9ca31a8372d0c353/rulesets/phases/http_request_firewall_managed/entrypoint).',
    });
    assert.deepEqual(previousWafAccess(zone('business', COMPLETE), 'read'), previousWafMigratedError(ZONE_ID, '2026-11-21T09:00:00Z'));
  });
  const cases: [string, MigrationZone, 'read' | 'write' | 'override-write', MigrationErrorCode | undefined][] = [
    ['Business read', zone('business'), 'read', undefined],
    ['Business write', zone('business'), 'write', undefined],
    ['Business override write → Enterprise only', zone('business'), 'override-write', 'overrides-need-enterprise'],
    ['Enterprise override write', zone('enterprise'), 'override-write', undefined],
    ['Enterprise in validation: still available', zone('enterprise', VALIDATION), 'write', undefined],
    ['Free read → never had it', zone('free'), 'read', 'no-previous-waf'],
    ['migrated write', zone('enterprise', COMPLETE), 'write', 'previous-waf-migrated'],
  ];
  for (const [name, z, op, code] of cases) test(name, () => assert.equal(previousWafAccess(z, op)?.code, code));
});
