import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { checkExpression, compileExpression, prepareFields } from '../../../server/src/language/index';
import { mintId, OWASP_ANOMALY_RULE_ID, OWASP_RULESET_ID, VENDOR_RULESET_ID } from '../../../server/src/rulesets/managedIds';
import { defaultCatalog } from '../../../server/src/managed/catalog';
import { compileZone } from '../../../server/src/rulesets/engine';
import { validateRulesetJson } from '../../../server/src/rulesets/validate';
import type { LegacyFirewallRule } from '../../../server/src/rulesets/legacy';
import type { ExecuteParameters, Rule } from '../../../server/src/rulesets/model';
import {
  ACTION_MODES,
  CLOUDFLARE_PACKAGE_ID,
  MAGENTO_GROUP_ID,
  migrationConfig,
  notMigratedSummary,
  OWASP_PACKAGE_ID,
  reviewRulesetJson,
  owaspMapping,
  SENSITIVITIES,
  urlPatternExpression,
  validateConfig,
  withoutEmptyIds,
  type ActionMode,
  type MigrationZone,
  type Sensitivity,
  type ZoneWafSettings,
} from '../../../server/src/migration/index';

const ZONE_ID = '023e105f4ecef8ad9ca31a8372d0c353';
const waf = (extra: Partial<ZoneWafSettings> = {}): ZoneWafSettings => ({ zoneId: ZONE_ID, enabled: true, ...extra });
const zone = (extra: Partial<MigrationZone> = {}): MigrationZone => ({ plan: 'business', waf: waf(), ...extra });
const owasp = (sensitivity?: Sensitivity, action_mode?: ActionMode) => waf({ packages: { [OWASP_PACKAGE_ID]: { ...(sensitivity ? { sensitivity } : {}), ...(action_mode ? { action_mode } : {}) } } });

const PL_OFF = (level: number) => [2, 3, 4].filter((n) => n > level).map((n) => ({ category: `paranoia-level-${n}`, enabled: false }));

const hosted = (action: string, expression: string, action_parameters: object, enabled = true, description = ''): Rule => ({
  id: '',
  version: '',
  action,
  expression,
  description,
  ref: '',
  enabled,
  action_parameters,
});
const vendorExec = (enabled = true, expression = 'true') => hosted('execute', expression, { id: VENDOR_RULESET_ID }, enabled);
const owaspExec = (pl: number, threshold: number, action: string, enabled = true, expression = 'true') =>
  hosted('execute', expression, { id: OWASP_RULESET_ID, overrides: { categories: PL_OFF(pl), rules: [{ id: OWASP_ANOMALY_RULE_ID, score_threshold: threshold, action }] } }, enabled);

describe('sensitivity and action mapping (upgrade guide table)', () => {
  const PL = { high: [2, 40], medium: [1, 25], low: [1, 40], default: [2, 40] } as const;
  const ACT = { simulate: 'log', block: 'block', challenge: 'challenge' } as const;
  const cases: { sensitivity?: Sensitivity; action_mode?: ActionMode; pl?: number; threshold?: number; action?: string }[] = [];
  for (const s of [undefined, ...SENSITIVITIES]) {
    for (const a of [undefined, ...ACTION_MODES]) {
      if (s === 'off') cases.push({ sensitivity: s, action_mode: a });
      else {
        const [pl, threshold] = PL[s ?? 'default'];
        cases.push({ sensitivity: s, action_mode: a, pl, threshold, action: ACT[a ?? 'challenge'] });
      }
    }
  }
  assert.equal(cases.length, 20);
  for (const c of cases) {
    test(`sensitivity ${c.sensitivity ?? '(default)'}, action_mode ${c.action_mode ?? '(default)'} → ${c.pl ? `PL${c.pl}/${c.threshold} ${c.action}` : 'no OWASP rule'}`, () => {
      const r = migrationConfig(zone({ waf: owasp(c.sensitivity, c.action_mode) }));
      const expected = c.pl ? [vendorExec(), owaspExec(c.pl, c.threshold!, c.action!)] : [vendorExec()];
      assert.deepEqual(r.config, { name: 'default', rules: expected });
      assert.deepEqual(r.problems, []);
      assert.deepEqual(r.notMigrated, []);
      assert.deepEqual(owaspMapping(c.sensitivity, c.action_mode), c.pl ? { row: c.sensitivity ?? 'default', paranoiaLevel: c.pl, threshold: c.threshold, action: c.action } : undefined);
    });
  }

  test('the JSON is the hosted shape: key order and empty-string id/version/ref', () => {
    const json = JSON.stringify(migrationConfig(zone()).config.rules[0]);
    assert.equal(json, '{"id":"","version":"","action":"execute","expression":"true","description":"","ref":"","enabled":true,"action_parameters":{"id":"efb7b8c949ac4650a09736fc376e9aee"}}');
  });
});

describe('package and zone switches', () => {
  test('CloudFlare package off → its execute rule disabled', () => {
    const r = migrationConfig(zone({ waf: waf({ packages: { [CLOUDFLARE_PACKAGE_ID]: { enabled: false } } }) }));
    assert.deepEqual(r.config.rules, [vendorExec(false), owaspExec(2, 40, 'challenge')]);
  });
  test('zone WAF off → both execute rules kept, disabled', () => {
    const r = migrationConfig(zone({ waf: waf({ enabled: false }) }));
    assert.deepEqual(r.config.rules, [vendorExec(false), owaspExec(2, 40, 'challenge', false)]);
  });
  test('zone WAF off with a page rule turning it on → execute rules enabled for those URLs only', () => {
    // Each page rule where it is the first match (only the first Page Rule for a URL applies).
    const expression = 'http.request.full_uri wildcard "http*://shop.example.com/*" or (http.request.full_uri wildcard "https://example.com/checkout" and not http.request.full_uri wildcard "http*://shop.example.com/*")';
    const r = migrationConfig(
      zone({
        waf: waf({ enabled: false }),
        pageRules: [
          { id: 'p1', targets: ['shop.example.com/*'], waf: 'on' },
          { id: 'p2', targets: ['https://example.com/checkout'], waf: 'on' },
          { id: 'p3', targets: ['example.com/old/*'], waf: 'on', status: 'disabled' },
        ],
      }),
    );
    assert.deepEqual(r.config.rules, [vendorExec(true, expression), owaspExec(2, 40, 'challenge', true, expression)]);
    assert.deepEqual(r.problems, []);
  });
  test('a page rule of higher priority keeps its URLs from a lower one: /admin/* stays protected under an "Off" for example.com/*', () => {
    const r = migrationConfig(zone({ pageRules: [{ id: 'p1', targets: ['example.com/admin/*'], waf: 'on' }, { id: 'p2', targets: ['example.com/*'], disable_security: true }] }));
    const skipRule = r.config.rules[0]!;
    assert.equal(skipRule.expression, 'http.request.full_uri wildcard "http*://example.com/*" and not http.request.full_uri wildcard "http*://example.com/admin/*"');
    const { filter } = compileExpression(skipRule.expression!);
    assert.ok(filter);
    const skips = (uri: string) => filter.matches(prepareFields({ 'http.request.full_uri': uri }).values);
    assert.deepEqual([skips('https://example.com/admin/login'), skips('https://example.com/blog')], [false, true]);
  });

  test('page rules turning the WAF on change nothing when the WAF is on', () => {
    const r = migrationConfig(zone({ pageRules: [{ id: 'p1', targets: ['shop.example.com/*'], waf: 'on' }] }));
    assert.deepEqual(r.config.rules, [vendorExec(), owaspExec(2, 40, 'challenge')]);
  });
});

describe('exceptions', () => {
  const fr = (id: string, extra: Partial<LegacyFirewallRule> = {}): LegacyFirewallRule => ({ id, action: 'bypass', products: ['waf'], filter: { id: `f${id}`, expression: `ip.src eq 192.0.2.${id.length}` }, ...extra });
  const skip = (expression: string, description: string, enabled = true) => hosted('skip', expression, { ruleset: 'current' }, enabled, description);

  test('firewall rules bypassing the WAF → skip rules before the execute rules, in firewall-rule order', () => {
    const r = migrationConfig(
      zone({
        firewallRules: [
          fr('b', { priority: 20, description: 'office', filter: { expression: 'ip.src in {198.51.100.0/24}' } }),
          fr('a', { priority: 10, products: ['rateLimit', 'waf'], filter: { expression: 'http.request.uri.path eq "/health"' } }),
          fr('c', { products: ['uaBlock'] }),
          { id: 'd', action: 'block', filter: { expression: 'ip.src eq 203.0.113.9' } },
          fr('e', { paused: true, priority: 30, filter: { expression: 'http.host eq "api.example.com"' } }),
          fr('f', { priority: 40, filter: { expression: 'http.host eq "dev.example.com"', paused: true } }),
        ],
      }),
    );
    assert.deepEqual(r.config.rules, [
      skip('http.request.uri.path eq "/health"', 'Migrated from firewall rule a (Bypass > WAF Managed Rules)'),
      skip('ip.src in {198.51.100.0/24}', 'Migrated from firewall rule b "office" (Bypass > WAF Managed Rules)'),
      skip('http.host eq "api.example.com"', 'Migrated from firewall rule e (Bypass > WAF Managed Rules), paused', false),
      skip('http.host eq "dev.example.com"', 'Migrated from firewall rule f (Bypass > WAF Managed Rules), paused', false),
      vendorExec(),
      owaspExec(2, 40, 'challenge'),
    ]);
    assert.deepEqual(r.problems, []);
    assert.deepEqual(r.notMigrated, []);
  });

  test('a bypass whose filter was deleted or does not parse is listed as not migrated', () => {
    const r = migrationConfig(zone({ firewallRules: [fr('g', { filter: { id: 'x', deleted: true } }), fr('h', { filter: { expression: 'http.nope eq 1' } })] }));
    assert.deepEqual(r.config.rules, [vendorExec(), owaspExec(2, 40, 'challenge')]);
    assert.deepEqual(
      r.notMigrated.map((n) => [n.kind, n.id, n.was]),
      [
        ['firewall-rule', 'g', 'Bypass > WAF Managed Rules'],
        ['firewall-rule', 'h', 'Bypass > WAF Managed Rules'],
      ],
    );
    assert.match(r.notMigrated[0].reason, /filter was deleted/);
    assert.match(r.notMigrated[1].reason, /not valid in the http_request_firewall_managed phase: .*unknown/i);
  });

  test('page rules with WAF off or Disable Security → skip rules after the firewall-rule exceptions', () => {
    const r = migrationConfig(
      zone({
        firewallRules: [fr('a')],
        pageRules: [
          { id: 'p1', targets: ['example.com/admin/*'], waf: 'off' },
          { id: 'p2', targets: ['*example.com/wp-json/*', 'example.com/feed'], disable_security: true },
          { id: 'p3', targets: ['example.com/static/*'], waf: 'off', status: 'disabled' },
          { id: 'p4', targets: ['example.com/cache/*'] },
        ],
      }),
    );
    assert.deepEqual(r.config.rules, [
      skip('ip.src eq 192.0.2.1', 'Migrated from firewall rule a (Bypass > WAF Managed Rules)'),
      skip('http.request.full_uri wildcard "http*://example.com/admin/*"', 'Migrated from page rule p1 (Web Application Firewall: Off: example.com/admin/*)'),
      skip(
        '(http.request.full_uri wildcard "http*://*example.com/wp-json/*" or http.request.full_uri wildcard "http*://example.com/feed") and not http.request.full_uri wildcard "http*://example.com/admin/*"',
        'Migrated from page rule p2 (Disable Security: *example.com/wp-json/*, example.com/feed)',
      ),
      skip(
        'http.request.full_uri wildcard "http*://example.com/static/*" and not (http.request.full_uri wildcard "http*://example.com/admin/*" or (http.request.full_uri wildcard "http*://*example.com/wp-json/*" or http.request.full_uri wildcard "http*://example.com/feed"))',
        'Migrated from page rule p3 (Web Application Firewall: Off: example.com/static/*), disabled',
        false,
      ),
      vendorExec(),
      owaspExec(2, 40, 'challenge'),
    ]);
    assert.deepEqual(r.problems, []);
  });

  test('a page rule without targets is listed as not migrated', () => {
    const r = migrationConfig(zone({ pageRules: [{ id: 'p9', targets: [], waf: 'off' }] }));
    assert.deepEqual(r.notMigrated, [{ kind: 'page-rule', id: 'p9', name: 'page rule p9', was: 'Web Application Firewall: Off', reason: 'the page rule has no URL pattern' }]);
  });

  test('a WAF: On page rule (WAF off) that cannot be carried over is listed too: the managed rules stay off there', () => {
    const r = migrationConfig(zone({ waf: waf({ enabled: false }), pageRules: [{ id: 'p8', targets: ['  '], waf: 'on' }] }));
    assert.deepEqual(r.notMigrated, [{ kind: 'page-rule', id: 'p8', name: 'page rule p8', was: 'Web Application Firewall: On', reason: 'the page rule has no URL pattern' }]);
    assert.deepEqual(r.config.rules.map((x) => [x.action, x.expression, x.enabled]).filter(([a]) => a === 'execute').map(([, e, on]) => [e, on]), [['true', false], ['true', false]]);
  });
});

describe('URL patterns as expressions', () => {
  const cases: [string, string, string[], string[]][] = [
    // pattern, expression, full URIs that match, that do not
    ['example.com/*', 'http.request.full_uri wildcard "http*://example.com/*"', ['https://example.com/', 'http://example.com/a/b?c=d'], ['https://www.example.com/', 'https://example.com.evil/']],
    ['example.com', 'http.request.full_uri wildcard "http*://example.com/"', ['https://example.com/', 'http://EXAMPLE.com/'], ['https://example.com/a', 'https://example.com/?q=1']],
    ['*example.com/*', 'http.request.full_uri wildcard "http*://*example.com/*"', ['https://a.b.example.com/x', 'http://example.com/'], ['https://example.org/']],
    ['https://example.com/t*st', 'http.request.full_uri wildcard "https://example.com/t*st"', ['https://example.com/toast', 'https://example.com/test'], ['http://example.com/test', 'https://example.com/tests']],
    ['example.com/foo*', 'http.request.full_uri wildcard "http*://example.com/foo*"', ['https://example.com/foo', 'https://example.com/foo/bar?x=1'], ['https://example.com/fo']],
    ['example.com/a**b', 'http.request.full_uri wildcard "http*://example.com/a*b"', ['https://example.com/axxb'], ['https://example.com/a']],
    ['example.com/back\\slash/"q"', 'http.request.full_uri wildcard "http*://example.com/back\\\\\\\\slash/\\"q\\""', ['https://example.com/back\\slash/"q"'], ['https://example.com/backslash/"q"']],
  ];
  for (const [pattern, expression, yes, no] of cases) {
    test(`${pattern} → ${expression}`, () => {
      assert.equal(urlPatternExpression(pattern), expression);
      assert.deepEqual(checkExpression(expression, { phase: 'http_request_firewall_managed' }).diagnostics, []);
      const { filter } = compileExpression(expression);
      assert.ok(filter);
      for (const uri of yes) assert.equal(filter.matches(prepareFields({ 'http.request.full_uri': uri }).values), true, `${uri} matches`);
      for (const uri of no) assert.equal(filter.matches(prepareFields({ 'http.request.full_uri': uri }).values), false, `${uri} does not match`);
    });
  }
});

describe('not migrated: group and rule overrides, URI-based overrides', () => {
  test('every changed group and rule of both packages, with what it was and why', () => {
    const r = migrationConfig(
      zone({
        waf: waf({
          groupModes: { [MAGENTO_GROUP_ID]: 'on', [groupId('OWASP XSS Attacks')]: 'off', [groupId('OWASP Bad Robots')]: 'on' },
          ruleModes: { '100015': 'disable', '100016': 'block', '100048': 'off', '950001': 'off', '973338': 'on', '100038': 'default' },
          overrides: [{ id: 'a27cece9ec0e4af39ae9c58e3326e2b6', description: 'Enable Magento for the shop', urls: ['shop.example.com/*'], priority: 1, paused: false, groups: {}, rules: {}, rewrite_action: {} }],
        }),
      }),
    );
    assert.deepEqual(
      r.notMigrated.map((n) => [n.kind, n.id, n.name, n.was]),
      [
        ['rule', '100015', 'CloudFlare › Cloudflare Specials › 100015 Anomaly:URL:Query String - Multiple Slashes, Relative Paths, CR, LF or NULL', 'mode disable (default challenge)'],
        ['rule', '100048', 'CloudFlare › Cloudflare WordPress › 100048 WordPress - Allow requests to the admin area from logged-in users', 'mode off (default on)'],
        ['group', MAGENTO_GROUP_ID, 'CloudFlare › Cloudflare Magento', 'mode on (default off)'],
        ['rule', '950001', 'OWASP ModSecurity Core Rule Set › OWASP SQL Injection Attacks › 950001 SQL Injection Attack', 'mode off (default on)'],
        ['group', groupId('OWASP XSS Attacks'), 'OWASP ModSecurity Core Rule Set › OWASP XSS Attacks', 'mode off (default on)'],
        ['rule', '973338', 'OWASP ModSecurity Core Rule Set › OWASP Uri XSS Attacks › 973338 XSS Filter - Category 3: Javascript URI Vector', 'mode on (default off)'],
        ['uri-override', 'a27cece9ec0e4af39ae9c58e3326e2b6', 'Enable Magento for the shop', 'URI-based override for shop.example.com/*'],
      ],
    );
    const reasons = new Map(r.notMigrated.map((n) => [`${n.kind}:${n.id}`, n.reason]));
    assert.match(reasons.get('rule:950001')!, /^OWASP rule overrides are not migrated/);
    assert.match(reasons.get(`group:${groupId('OWASP XSS Attacks')}`)!, /^OWASP group overrides are not migrated.*CRS 3\.x/);
    assert.match(reasons.get('rule:100015')!, /^Rule modes of the CloudFlare package are carried as rule overrides of their counterparts in the Cloudflare Managed Ruleset, and this rule has none there/);
    assert.match(reasons.get(`group:${MAGENTO_GROUP_ID}`)!, /^Group modes of the CloudFlare package are not migrated.*category override/);
    assert.match(reasons.get('uri-override:a27cece9ec0e4af39ae9c58e3326e2b6')!, /cannot migrate: delete them first/);
    // Nothing of this changes the rules.
    assert.deepEqual(r.config.rules, [vendorExec(), owaspExec(2, 40, 'challenge')]);
  });
});

describe('CloudFlare-package rule modes the user set', () => {
  test('carried as rule overrides of their counterparts in the Cloudflare Managed Ruleset; a rule without one stays listed', () => {
    // 100001 (XSS - Script Tag - URI) simulate, 100008 (SQLi - Tautology - URI) disable,
    // 100005 block (its counterpart blocks already: nothing to override), 100015 (no counterpart) disable.
    const r = migrationConfig(zone({ waf: waf({ ruleModes: { '100008': 'disable', '100001': 'simulate', '100005': 'block', '100015': 'disable' } }) }));
    assert.deepEqual(r.config.rules[0]!.action_parameters, {
      id: VENDOR_RULESET_ID,
      overrides: { rules: [{ id: '96cd2b6bf72a09f3302826975b8cb41b', action: 'log', enabled: true }, { id: 'a6c3d93378e577242db4136aebf4b63d', enabled: false }] },
    });
    assert.deepEqual(r.notMigrated.map((n) => [n.kind, n.id]), [['rule', '100015']]);
    assert.deepEqual(r.problems, []);
  });

  test('a rule of a group that is off is not carried (it ran nowhere)', () => {
    const r = migrationConfig(zone({ waf: waf({ groupModes: { [groupId('Cloudflare Specials')]: 'off' }, ruleModes: { '100008': 'disable' } }) }));
    assert.deepEqual(r.config.rules[0]!.action_parameters, { id: VENDOR_RULESET_ID });
  });
});

describe('validation of the produced config', () => {
  test('every config of this file passes validateRulesetJson (empty id/version/ref aside)', () => {
    const r = migrationConfig(zone({ waf: owasp('low', 'simulate'), firewallRules: [{ id: 'x', action: 'bypass', products: ['waf'], filter: { expression: 'cf.client.bot' } }] }));
    assert.deepEqual(r.problems, []);
  });
  test('validateConfig reports a broken rule', () => {
    const bad = { name: 'default' as const, rules: [{ ...vendorExec(), action_parameters: { id: '0'.repeat(32) } }] };
    const problems = validateConfig(bad, 'business');
    assert.deepEqual(problems.map((p) => p.code), ['unknown-managed-ruleset']);
  });
  test('the execute rules read back with the catalog helpers', () => {
    const r = migrationConfig(zone({ waf: owasp('medium', 'block') }));
    const p = r.config.rules[1].action_parameters as ExecuteParameters;
    assert.deepEqual(p.overrides?.rules, [{ id: OWASP_ANOMALY_RULE_ID, score_threshold: 25, action: 'block' }]);
  });
});

function groupId(name: string): string {
  return mintId(`previous-waf:group:${name}`);
}

describe('review document', () => {
  test('a *.ruleset.json with kind and phase, without empty ids, that validates', () => {
    const r = migrationConfig(zone({ waf: owasp('low', 'block'), pageRules: [{ id: 'p1', targets: ['example.com/admin/*'], waf: 'off' }] }));
    const text = reviewRulesetJson(r.config);
    const doc = JSON.parse(text);
    assert.deepEqual(Object.keys(doc), ['name', 'kind', 'phase', 'rules']);
    assert.deepEqual([doc.kind, doc.phase], ['zone', 'http_request_firewall_managed']);
    assert.deepEqual(doc.rules[1], { action: 'execute', expression: 'true', description: '', enabled: true, action_parameters: { id: VENDOR_RULESET_ID } });
    assert.deepEqual(
      validateRulesetJson(text, { catalog: defaultCatalog, plan: 'business' }).filter((p) => p.severity === 'error' || p.severity === 'warning'),
      [],
    );
  });
  test('notMigratedSummary', () => {
    const r = migrationConfig(zone({ waf: waf({ ruleModes: { '950001': 'off' } }) }));
    assert.equal(
      notMigratedSummary(r.notMigrated),
      '- OWASP ModSecurity Core Rule Set › OWASP SQL Injection Attacks › 950001 SQL Injection Attack: mode off (default on). OWASP rule overrides are not migrated: there is no direct equivalence between rules of the two versions (upgrade guide). Recreate it with a rule override on the OWASP execute rule if needed.',
    );
    assert.equal(notMigratedSummary([]), '');
  });
});

describe('every combination validates and compiles', () => {
  test('sensitivity × action_mode × CloudFlare on/off × WAF on/off × exceptions: no validation problem, no engine problem', () => {
    let n = 0;
    for (const sensitivity of [undefined, ...SENSITIVITIES]) {
      for (const action_mode of [undefined, ...ACTION_MODES]) {
        for (const cfOn of [true, false]) {
          for (const enabled of [true, false]) {
            for (const withExceptions of [false, true]) {
              const z = zone({
                plan: 'enterprise',
                waf: { zoneId: ZONE_ID, enabled, packages: { [OWASP_PACKAGE_ID]: { ...(sensitivity ? { sensitivity } : {}), ...(action_mode ? { action_mode } : {}) }, [CLOUDFLARE_PACKAGE_ID]: { enabled: cfOn } } },
                ...(withExceptions
                  ? {
                      firewallRules: [{ id: 'fw', action: 'bypass', products: ['waf'], filter: { expression: 'ip.src in {192.0.2.0/24}' } }],
                      pageRules: [
                        { id: 'off', targets: ['example.com/admin/*'], waf: 'off' },
                        { id: 'on', targets: ['example.com/shop/*'], waf: 'on' },
                      ],
                    }
                  : {}),
              });
              const r = migrationConfig(z);
              assert.deepEqual(r.problems, [], JSON.stringify(z));
              const rules = r.config.rules.map(withoutEmptyIds);
              const compiled = compileZone({ entryPoints: { http_request_firewall_managed: { kind: 'zone', phase: 'http_request_firewall_managed', rules } }, catalog: defaultCatalog, plan: 'enterprise' });
              assert.deepEqual(compiled.problems, []);
              n++;
            }
          }
        }
      }
    }
    assert.equal(n, 160);
  });
});
