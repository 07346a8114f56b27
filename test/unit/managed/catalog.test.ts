// The managed-ruleset catalog: lookups by id and version, tags with counts, paranoia
// levels, and the OWASP-based slot (its stand-in score rules and the 949110 rule).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { checkExpression, compileExpression, prepareFields } from '../../../server/src/language/index';
import { defaultCatalog, findManagedRuleset, managedRuleById, paranoiaLevelOf, paranoiaTag, tagsOf } from '../../../server/src/managed/catalog';
import { isRuleId, mintId, OWASP_ANOMALY_RULE_ID, OWASP_RULESET_ID, VENDOR_RULESET_ID } from '../../../server/src/managed/ids';
import { OWASP_ANOMALY_RULE, OWASP_SAMPLE_RULES, owaspRuleset } from '../../../server/src/managed/owasp';
import { rulesetVersion, type ManagedRule } from '../../../server/src/managed/types';
import { VENDOR_RULES, vendorRuleset } from '../../../server/src/managed/vendor';

const CHECK = { allowManaged: true, plan: 'enterprise', phase: 'http_request_firewall_managed' } as const;
const owasp = findManagedRuleset(defaultCatalog, OWASP_RULESET_ID)!;
const v2Only = VENDOR_RULES.find((r) => r.version === '2')!;
const v1Rule = VENDOR_RULES.find((r) => r.version === '1')!;

describe('catalog: lookups', () => {
  test('the default catalog: the vendor ruleset and the OWASP-based slot', () => {
    assert.deepEqual(defaultCatalog.rulesets.map((r) => [r.id, r.name]), [
      ['efb7b8c949ac4650a09736fc376e9aee', 'Cloudflare Managed Ruleset'],
      ['4814384a9e5d4991b9815dcfc25d2f1f', 'Cloudflare OWASP Core Ruleset'],
    ]);
    for (const r of defaultCatalog.rulesets) {
      assert.equal(r.kind, 'managed');
      assert.equal(r.phase, 'http_request_firewall_managed');
    }
  });

  test('findManagedRuleset', () => {
    assert.equal(findManagedRuleset(defaultCatalog, VENDOR_RULESET_ID), vendorRuleset);
    assert.equal(findManagedRuleset(defaultCatalog, VENDOR_RULESET_ID.toUpperCase()), vendorRuleset);
    assert.equal(findManagedRuleset(defaultCatalog, OWASP_RULESET_ID)?.anomalyRuleId, OWASP_ANOMALY_RULE_ID);
    assert.equal(findManagedRuleset(defaultCatalog, '77454fe2d30c4220b5701f6fdfb893ba'), undefined);
    assert.equal(findManagedRuleset(defaultCatalog, ''), undefined);
    assert.equal(findManagedRuleset({ rulesets: [] }, VENDOR_RULESET_ID), undefined);
  });

  const ruleCases: [name: string, version: string | undefined, id: string, expected: ManagedRule | undefined][] = [
    ['latest, a version-1 rule', 'latest', v1Rule.id, v1Rule],
    ['no version = latest', undefined, v2Only.id, v2Only],
    ['"2", a version-2 rule', '2', v2Only.id, v2Only],
    ['"1", a version-1 rule', '1', v1Rule.id, v1Rule],
    ['"1", a rule added in version 2', '1', v2Only.id, undefined],
    ['unknown version', '7', v1Rule.id, undefined],
    ['ids compare case-insensitively', 'latest', v1Rule.id.toUpperCase(), v1Rule],
    ['unknown rule', 'latest', mintId('vendor:no-such-rule'), undefined],
    ['an OWASP rule id in the vendor ruleset', 'latest', OWASP_ANOMALY_RULE_ID, undefined],
  ];
  for (const [name, version, id, expected] of ruleCases) {
    test(`managedRuleById: ${name}`, () => {
      assert.equal(managedRuleById(vendorRuleset, version, id), expected);
    });
  }

  test('managedRuleById in the OWASP slot: the anomaly rule and a sample rule', () => {
    assert.equal(managedRuleById(owasp, 'latest', OWASP_ANOMALY_RULE_ID), OWASP_ANOMALY_RULE);
    assert.equal(managedRuleById(owasp, '1', OWASP_SAMPLE_RULES[0].id), OWASP_SAMPLE_RULES[0]);
    assert.equal(managedRuleById(owasp, '2', OWASP_ANOMALY_RULE_ID), undefined);
  });

  test('versions: latest, "1", unknown', () => {
    assert.equal(rulesetVersion(vendorRuleset, 'latest')?.version, '2');
    assert.equal(rulesetVersion(vendorRuleset, '1')?.version, '1');
    assert.equal(rulesetVersion(vendorRuleset, '0'), undefined);
    assert.equal(rulesetVersion(vendorRuleset, 'LATEST'), undefined);
    assert.equal(rulesetVersion(owasp, 'latest')?.version, '1');
  });
});

describe('catalog: tags', () => {
  test('every category with its rule count and enabled count, in order of first use', () => {
    const tags = tagsOf(vendorRuleset, 'latest');
    const expected = new Map<string, { count: number; enabled: number }>();
    for (const r of VENDOR_RULES) {
      for (const c of r.categories) {
        const e = expected.get(c) ?? { count: 0, enabled: 0 };
        e.count++;
        if (r.enabled) e.enabled++;
        expected.set(c, e);
      }
    }
    assert.deepEqual(tags, [...expected].map(([tag, e]) => ({ tag, ...e })));
    assert.deepEqual(tags.slice(0, 4).map((t) => t.tag), ['java', 'log4j', 'rce', 'cve-2021-44228']);
    const byTag = new Map(tags.map((t) => [t.tag, t]));
    assert.deepEqual(byTag.get('log4j'), { tag: 'log4j', count: 3, enabled: 3 });
    assert.deepEqual(byTag.get('drupal'), { tag: 'drupal', count: 2, enabled: 2 });
    const wordpress = byTag.get('wordpress')!;
    assert.ok(wordpress.count >= 8 && wordpress.enabled === wordpress.count - 1, JSON.stringify(wordpress));
    const sqli = byTag.get('sqli')!;
    assert.equal(sqli.count - sqli.enabled, 1);
  });

  test('tags of an older version count only its rules; an unknown version has none', () => {
    const v1 = new Map(tagsOf(vendorRuleset, '1').map((t) => [t.tag, t.count]));
    const latest = new Map(tagsOf(vendorRuleset).map((t) => [t.tag, t.count]));
    assert.equal(v1.get('cve-2023-23752'), undefined);
    assert.equal(latest.get('cve-2023-23752'), 1);
    assert.ok(v1.get('wordpress')! < latest.get('wordpress')!);
    assert.deepEqual(tagsOf(vendorRuleset, '9'), []);
  });

  test('the OWASP slot: paranoia levels and attack classes', () => {
    const counts = Object.fromEntries(tagsOf(owasp).map((t) => [t.tag, t.count]));
    assert.equal(counts['paranoia-level-1'], 2);
    assert.equal(counts['paranoia-level-2'], 2);
    assert.equal(counts['paranoia-level-3'], 2);
    assert.equal(counts['paranoia-level-4'], undefined);
    assert.equal(counts['attack-sqli'], 3);
    assert.equal(counts['attack-xss'], 3);
  });
});

describe('catalog: paranoia levels', () => {
  const cases: [name: string, categories: readonly string[], level: number | undefined][] = [
    ['PL1', ['paranoia-level-1', 'attack-sqli'], 1],
    ['PL4', ['attack-xss', 'paranoia-level-4'], 4],
    ['several tags: the lowest', ['paranoia-level-3', 'paranoia-level-2'], 2],
    ['no tag', ['wordpress'], undefined],
    ['out of range', ['paranoia-level-5', 'paranoia-level-0'], undefined],
    ['not the exact form', ['paranoia-level-1x', 'paranoia_level_1', 'Paranoia-Level-1'], undefined],
  ];
  for (const [name, categories, level] of cases) {
    test(`paranoiaLevelOf: ${name}`, () => assert.equal(paranoiaLevelOf({ categories }), level));
  }

  test('the sample rules are PL1, PL1, PL2, PL2, PL3, PL3; 949110 and vendor rules have none', () => {
    assert.deepEqual(OWASP_SAMPLE_RULES.map(paranoiaLevelOf), [1, 1, 2, 2, 3, 3]);
    assert.equal(paranoiaLevelOf(OWASP_ANOMALY_RULE), undefined);
    assert.ok(VENDOR_RULES.every((r) => paranoiaLevelOf(r) === undefined));
    assert.equal(paranoiaTag(2), 'paranoia-level-2');
  });
});

describe('catalog: the OWASP-based slot', () => {
  test('the last rule is 949110, with the documented id and ref, block, threshold 40, `true`', () => {
    const rules = rulesetVersion(owasp)!.rules;
    const last = rules[rules.length - 1];
    assert.equal(owasp.anomalyRuleId, last.id);
    assert.deepEqual(
      { id: last.id, ref: last.ref, description: last.description, action: last.action, enabled: last.enabled, score_threshold: last.score_threshold, expression: last.expression },
      {
        id: '6179ae15870a4bb7b2d480d4843b323c',
        ref: 'ad0beb2fce9f149e565ee78d6e659d47',
        description: '949110: Inbound Anomaly Score Exceeded',
        action: 'block',
        enabled: true,
        score_threshold: 40,
        expression: 'true',
      },
    );
    assert.equal(rules.filter((r) => r.score_threshold !== undefined).length, 1);
  });

  test('owaspRuleset wraps any rules and always ends with 949110 once', () => {
    const empty = owaspRuleset();
    assert.deepEqual(rulesetVersion(empty)!.rules, [OWASP_ANOMALY_RULE]);
    assert.equal(empty.id, OWASP_RULESET_ID);
    const again = owaspRuleset([...OWASP_SAMPLE_RULES, OWASP_ANOMALY_RULE]);
    assert.deepEqual(rulesetVersion(again)!.rules.map((r) => r.id), [...OWASP_SAMPLE_RULES.map((r) => r.id), OWASP_ANOMALY_RULE_ID]);
  });

  test('the stand-in score rules: CRS-style descriptions, score action with an increment, clean expressions', () => {
    assert.deepEqual(OWASP_SAMPLE_RULES.map((r) => r.description.slice(0, 7)), ['942100:', '941100:', '942430:', '941320:', '942490:', '941380:']);
    assert.equal(OWASP_SAMPLE_RULES[0].description, '942100: SQL Injection Attack Detected via libinjection');
    for (const r of OWASP_SAMPLE_RULES) {
      assert.ok(isRuleId(r.id), r.id);
      assert.equal(r.id, mintId(`owasp:${r.ref}`));
      assert.equal(r.action, 'score');
      const increment = (r.action_parameters as { increment?: number }).increment;
      assert.ok(increment === 5 || increment === 3, `${r.ref}: ${increment}`);
      assert.deepEqual(checkExpression(r.expression, CHECK).diagnostics, [], r.ref);
    }
    assert.equal(new Set(OWASP_SAMPLE_RULES.map((r) => r.id)).size, 6);
  });

  test('the stand-in rules detect what they say', () => {
    const fire = (query: string) =>
      OWASP_SAMPLE_RULES.filter((r) => {
        const { values } = prepareFields({ 'raw.http.request.uri.query': query, 'raw.http.request.uri.args.values': query.split('&').map((p) => p.slice(p.indexOf('=') + 1)) });
        return compileExpression(r.expression, CHECK).filter!.matches(values);
      }).map((r) => r.ref);
    assert.deepEqual(fire("id=1'+or+'1'='1"), ['942100']);
    assert.deepEqual(fire('q=%3Cscript%3Ealert(1)%3C/script%3E'), ['941100']);
    assert.deepEqual(fire('q=%3Cdiv+class%3Dx%3E'), ['941320']);
    assert.deepEqual(fire('q={{constructor.constructor(1)}}'), ['941380']);
    assert.deepEqual(fire("name=o''neil"), ['942490']);
    assert.deepEqual(fire('q=((a))||[b]{c}<d>;e:f~g!h'), ['942430']);
    assert.deepEqual(fire('q=hello+world&page=2'), []);
  });
});
