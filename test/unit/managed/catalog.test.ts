// The managed-ruleset catalog: lookups by id and version, tags with counts, paranoia
// levels, and the OWASP-based ruleset (the converted CRS 3.3.4 rules and 949110).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { checkExpression } from '../../../server/src/language/index';
import { defaultCatalog } from '../../../server/src/managed/catalog';
import { isRuleId, mintId, OWASP_ANOMALY_RULE_ID, OWASP_RULESET_ID, VENDOR_RULESET_ID } from '../../../server/src/rulesets/managedIds';
import { OWASP_ANOMALY_RULE, owaspRuleset } from '../../../server/src/managed/owasp';
import { OWASP_CRS_RULES, OWASP_UNCONVERTED_RULES } from '../../../server/src/managed/owaspCrs';
import { parseHttpFile } from '../../../server/src/requests/http';
import { requestValues } from '../../../server/src/requests/fields';
import { compileZone } from '../../../server/src/rulesets/engine';
import { setParanoiaLevel } from '../../../server/src/managed/preview';
import { findManagedRuleset, managedRuleById, paranoiaLevelOf, paranoiaTag, rulesetVersion, tagsOf, type ManagedRule } from '../../../server/src/rulesets/catalog';
import { VENDOR_RULES, vendorRuleset } from '../../../server/src/managed/vendor';

const CHECK = { allowManaged: true, plan: 'enterprise', phase: 'http_request_firewall_managed' } as const;
const owasp = findManagedRuleset(defaultCatalog, OWASP_RULESET_ID)!;
const v2Only = VENDOR_RULES.find((r) => r.version === '2')!;
const v1Rule = VENDOR_RULES.find((r) => r.version === '1')!;

describe('catalog: lookups', () => {
  test('the default catalog: the vendor ruleset, the OWASP-based ruleset and the Free Managed Ruleset', () => {
    assert.deepEqual(defaultCatalog.rulesets.map((r) => [r.id, r.name]), [
      ['efb7b8c949ac4650a09736fc376e9aee', 'Cloudflare Managed Ruleset'],
      ['4814384a9e5d4991b9815dcfc25d2f1f', 'Cloudflare OWASP Core Ruleset'],
      ['77454fe2d30c4220b5701f6fdfb893ba', 'Cloudflare Free Managed Ruleset'],
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
    assert.equal(findManagedRuleset(defaultCatalog, '77454fe2d30c4220b5701f6fdfb893ba')?.name, 'Cloudflare Free Managed Ruleset');
    assert.equal(findManagedRuleset(defaultCatalog, 'c2e184081120413c86c3ab7e14069605'), undefined);
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

  test('managedRuleById in the OWASP ruleset: the anomaly rule and 942100', () => {
    assert.equal(managedRuleById(owasp, 'latest', OWASP_ANOMALY_RULE_ID), OWASP_ANOMALY_RULE);
    const r942100 = managedRuleById(owasp, '1', '2379c3c6e6195a713487ca228d7452f0');
    assert.equal(r942100?.ref, '942100');
    assert.equal(r942100?.description, '942100: SQL Injection Attack Detected via libinjection');
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

  test('the OWASP ruleset: paranoia levels and CRS tags (199 converted CRS 3.3.4 rules)', () => {
    const counts = Object.fromEntries(tagsOf(owasp).map((t) => [t.tag, t.count]));
    assert.equal(counts['paranoia-level-1'], 124);
    assert.equal(counts['paranoia-level-2'], 49);
    assert.equal(counts['paranoia-level-3'], 19);
    assert.equal(counts['paranoia-level-4'], 7);
    assert.equal(counts['attack-sqli'], 49);
    assert.equal(counts['attack-xss'], 30);
    assert.equal(counts['attack-rce'], 25);
    assert.equal(counts['attack-protocol'], 59);
    assert.equal(counts['language-php'], 16);
    assert.equal(counts['platform-unix'], 9);
    assert.equal(tagsOf(owasp)[0].tag, 'paranoia-level-1');
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

  test('CRS rules take the level of their paranoia-level/N tag; 949110 and vendor rules have none', () => {
    const level = (ref: string) => paranoiaLevelOf(OWASP_CRS_RULES.find((r) => r.ref === ref)!);
    assert.deepEqual(['942100', '941100', '942130', '913101', '942490', '920272', '920273', '942421'].map(level), [1, 1, 2, 2, 3, 3, 4, 4]);
    assert.equal(paranoiaLevelOf(OWASP_ANOMALY_RULE), undefined);
    assert.ok(VENDOR_RULES.every((r) => paranoiaLevelOf(r) === undefined));
    assert.equal(paranoiaTag(2), 'paranoia-level-2');
  });
});

describe('catalog: the OWASP-based ruleset', () => {
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
    assert.equal(rules.length, 200);
  });

  test('owaspRuleset wraps any rules and always ends with 949110 once', () => {
    const empty = owaspRuleset();
    assert.deepEqual(rulesetVersion(empty)!.rules, [OWASP_ANOMALY_RULE]);
    assert.equal(empty.id, OWASP_RULESET_ID);
    const two = OWASP_CRS_RULES.slice(0, 2);
    const again = owaspRuleset([...two, OWASP_ANOMALY_RULE]);
    assert.deepEqual(rulesetVersion(again)!.rules.map((r) => r.ref), ['911100', '913100', 'ad0beb2fce9f149e565ee78d6e659d47']);
  });

  test('the CRS score rules: stable ids, CRS id as ref, "id: msg" descriptions, severity increments, enabled, clean expressions', () => {
    assert.equal(OWASP_CRS_RULES.length, 199);
    const byRef = new Map(OWASP_CRS_RULES.map((r) => [r.ref, r]));
    assert.equal(byRef.get('942100')!.description, '942100: SQL Injection Attack Detected via libinjection');
    assert.equal(byRef.get('941100')!.description, '941100: XSS Attack Detected via libinjection');
    assert.equal(byRef.get('920350')!.description, '920350: Host header is a numeric IP address');
    const increment = (ref: string) => (byRef.get(ref)!.action_parameters as { increment: number }).increment;
    // CRITICAL 5, WARNING 3, NOTICE 2 (no request rule of CRS 3.3.4 is ERROR).
    assert.deepEqual(['942100', '920350', '920320'].map(increment), [5, 3, 2]);
    const counts: Record<number, number> = {};
    for (const r of OWASP_CRS_RULES) counts[(r.action_parameters as { increment: number }).increment] = (counts[(r.action_parameters as { increment: number }).increment] ?? 0) + 1;
    assert.deepEqual(counts, { 2: 6, 3: 22, 5: 171 });
    assert.deepEqual(byRef.get('942100')!.categories, ['paranoia-level-1', 'application-multi', 'language-multi', 'platform-multi', 'attack-sqli', 'owasp_crs', 'capec-1000-152-248-66', 'pci-6.5.2']);
    for (const r of OWASP_CRS_RULES) {
      assert.ok(isRuleId(r.id), r.id);
      assert.equal(r.id, mintId(`owasp:${r.ref}`));
      assert.match(r.ref, /^9\d{5}$/);
      assert.ok(r.description.startsWith(`${r.ref}: `) && r.description.length > 9, r.description);
      assert.equal(r.action, 'score');
      assert.equal(r.enabled, true);
      assert.equal(r.categories.filter((c) => /^paranoia-level-[1-4]$/.test(c)).length, 1, r.ref);
      assert.deepEqual(checkExpression(r.expression, CHECK).diagnostics, [], r.ref);
    }
    assert.equal(new Set(OWASP_CRS_RULES.map((r) => r.id)).size, 199);
    assert.deepEqual(OWASP_CRS_RULES.map((r) => Number(r.ref)), OWASP_CRS_RULES.map((r) => Number(r.ref)).sort((a, b) => a - b));
  });

  test("the 13 CRS detection rules left out (all never match with CRS's default settings) are listed with their reason, none also converted", () => {
    assert.equal(OWASP_UNCONVERTED_RULES.length, 13);
    assert.equal(OWASP_UNCONVERTED_RULES.length + OWASP_CRS_RULES.length, 212);
    const converted = new Set(OWASP_CRS_RULES.map((r) => r.ref));
    for (const u of OWASP_UNCONVERTED_RULES) {
      assert.ok(!converted.has(u.ref), u.ref);
      assert.ok(u.reason.length > 0, u.ref);
    }
    // IP reputation (910: needs a reputation list or a country list) and the limits CRS
    // leaves unset by default (920250 UTF-8 validation, 920360–920410 argument and file sizes).
    assert.deepEqual(OWASP_UNCONVERTED_RULES.map((u) => u.ref), ['910000', '910100', '910150', '910160', '910170', '910180', '920250', '920360', '920370', '920380', '920390', '920400', '920410']);
    assert.ok(OWASP_UNCONVERTED_RULES.every((u) => u.reason.startsWith('never matches with the 901 defaults')));
    assert.deepEqual(OWASP_UNCONVERTED_RULES.find((u) => u.ref === '920380'), {
      ref: '920380',
      file: 'REQUEST-920-PROTOCOL-ENFORCEMENT.conf',
      paranoiaLevel: 1,
      message: 'Too many arguments in request',
      reason: 'never matches with the 901 defaults: `&TX:MAX_NUM_ARGS @eq 1`',
    });
  });

  test('the rules detect what CRS detects: requests at paranoia level 1 and 4', () => {
    const execute = { action: 'execute', expression: 'true', action_parameters: { id: OWASP_RULESET_ID } };
    const zoneAt = (pl: 1 | 4) => compileZone({ entryPoints: { http_request_firewall_managed: { phase: 'http_request_firewall_managed', rules: [setParanoiaLevel(execute, pl)] } }, catalog: defaultCatalog });
    const pl1 = zoneAt(1);
    const pl4 = zoneAt(4);
    const fire = (zone: ReturnType<typeof zoneAt>, http: string) => {
      const req = parseHttpFile(http).requests[0];
      const ev = zone.evaluate(requestValues(req).values);
      return { refs: ev.trace.filter((t) => t.outcome === 'scored').map((t) => t.ref), score: Object.values(ev.scores)[0], action: ev.decision.action };
    };
    const UA = 'Host: example.com\nUser-Agent: Mozilla/5.0\nAccept: text/html\n';
    assert.deepEqual(fire(pl1, `GET http://example.com/?id=1%27%20or%20%271%27%3D%271\n${UA}`), { refs: ['942100'], score: 5, action: 'allow-through' });
    assert.deepEqual(fire(pl1, `GET http://example.com/?q=%3Cscript%3Ealert(1)%3C/script%3E\n${UA}`), { refs: ['941100', '941110', '941160'], score: 15, action: 'allow-through' });
    assert.deepEqual(fire(pl1, `GET http://example.com/?file=../../etc/passwd\n${UA}`), { refs: ['930100', '930110', '930120', '932160'], score: 20, action: 'allow-through' });
    assert.deepEqual(fire(pl1, `GET http://example.com/?q=hello+world&page=2\n${UA}`), { refs: [], score: 0, action: 'allow-through' });
    assert.deepEqual(fire(pl1, `GET http://192.0.2.7/\nHost: 192.0.2.7\nUser-Agent: Mozilla/5.0\nAccept: text/html\n`), { refs: ['920350'], score: 3, action: 'allow-through' });
    assert.deepEqual(fire(pl1, `GET http://example.com/\nHost: example.com\nUser-Agent: sqlmap/1.5\nAccept: */*\n`), { refs: ['913100'], score: 5, action: 'allow-through' });
    // At PL4 more rules run; the default threshold (40) is reached by a classic attack.
    const r = fire(pl4, `GET http://example.com/?id=1%27%20union%20select%20password%20from%20users--\n${UA}`);
    assert.deepEqual(r, { refs: ['920273', '942100', '942190', '942200', '942260', '942270', '942360', '942361', '942432', '942480'], score: 48, action: 'block' });
    // The same request at PL1: 942100, 942190, 942270 and 942360 (PL1 rules) only, 20 < 40.
    assert.deepEqual(fire(pl1, `GET http://example.com/?id=1%27%20union%20select%20password%20from%20users--\n${UA}`), { refs: ['942100', '942190', '942270', '942360'], score: 20, action: 'allow-through' });
  });
});
