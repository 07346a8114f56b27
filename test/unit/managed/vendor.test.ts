// The vendor managed ruleset: every expression is clean for the language core, ids are
// stable 32-hex, and every rule has a request that triggers it and one that does not
// (test/fixtures/vendor/<ref>.http, `### match` and `### no match`), run through the real
// .http parser, the request-to-fields conversion and the evaluator.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { checkExpression, compileExpression, prepareFields } from '../../../server/src/language/index';
import { fnv1a128, isRuleId, mintId, VENDOR_RULESET_ID } from '../../../server/src/rulesets/managedIds';
import { rulesetVersion } from '../../../server/src/rulesets/catalog';
import { VENDOR_RULES, VENDOR_VERSIONS, vendorRuleset } from '../../../server/src/managed/vendor';
import { parseHttpFile } from '../../../server/src/requests/http';
import { requestFields } from '../../../server/src/requests/fields';

const FIXTURES = new URL('../../fixtures/vendor/', import.meta.url).pathname;
const CHECK = { allowManaged: true, plan: 'enterprise', phase: 'http_request_firewall_managed' } as const;

describe('vendor ruleset: rules', () => {
  test('at least 40 rules', () => {
    assert.ok(VENDOR_RULES.length >= 40, `${VENDOR_RULES.length} rules`);
  });

  test('every expression checks with no diagnostics at all', () => {
    const found: string[] = [];
    for (const r of VENDOR_RULES) {
      for (const d of checkExpression(r.expression, CHECK).diagnostics) found.push(`${r.ref}: ${d.severity} ${d.code} ${d.message}`);
    }
    assert.deepEqual(found, []);
  });

  test('ids are 32-hex, unique, and minted from the ref', () => {
    for (const r of VENDOR_RULES) {
      assert.ok(isRuleId(r.id), `${r.ref}: ${r.id}`);
      assert.equal(r.id, mintId(`vendor:${r.ref}`), r.ref);
    }
    assert.equal(new Set(VENDOR_RULES.map((r) => r.id)).size, VENDOR_RULES.length);
    assert.ok(!VENDOR_RULES.some((r) => r.id === VENDOR_RULESET_ID));
  });

  test('ids are stable (exact values)', () => {
    const byRef = new Map(VENDOR_RULES.map((r) => [r.ref, r.id]));
    assert.equal(byRef.get('log4shell-uri'), '0ff86b4e69d8bf347bfaa8d3f360acaa');
    assert.equal(byRef.get('spring4shell'), 'bf0b6bf0b498e8d83feb5601a83f4480');
    assert.equal(byRef.get('wp-xmlrpc-multicall'), '8fe5defdcaf33102fbb24629ccf57ba1');
    assert.equal(byRef.get('sqli-tautology-uri'), 'a6c3d93378e577242db4136aebf4b63d');
  });

  test('the id hash: FNV-1a 128 test vectors; minting is deterministic and spreads', () => {
    assert.equal(fnv1a128(''), '6c62272e07bb014262b821756295c58d');
    assert.equal(fnv1a128('a'), 'd228cb696f1a8caf78912b704e4a8964');
    assert.equal(fnv1a128('foobar'), '343e1662793c64bf6f0d3597ba446f18');
    assert.equal(mintId('vendor:x'), mintId('vendor:x'));
    // Similar names share no long run of digits (FNV alone would give near-identical ids).
    const a = mintId('owasp:942100');
    const b = mintId('owasp:942101');
    let same = 0;
    for (let i = 0; i < 32; i++) if (a[i] === b[i]) same++;
    assert.ok(same < 12, `${a} ${b}`);
  });

  test('refs are unique and short; descriptions, categories and defaults are well formed', () => {
    assert.equal(new Set(VENDOR_RULES.map((r) => r.ref)).size, VENDOR_RULES.length);
    for (const r of VENDOR_RULES) {
      assert.match(r.ref, /^[a-z0-9]+(?:-[a-z0-9]+)*$/, r.ref);
      assert.ok(r.ref.length <= 40, r.ref);
      assert.match(r.description, /^\S.* - \S/, r.ref);
      assert.ok(r.categories.length > 0, r.ref);
      for (const c of r.categories) assert.match(c, /^[a-z0-9]+(?:-[a-z0-9]+)*$/, `${r.ref}: ${c}`);
      assert.ok(['block', 'log'].includes(r.action), r.ref);
      // CVE tags and CVE descriptions go together.
      const cveInDescription = /CVE:(CVE-\d{4}-\d+)/.exec(r.description)?.[1].toLowerCase();
      if (cveInDescription) assert.ok(r.categories.includes(cveInDescription), `${r.ref} lacks tag ${cveInDescription}`);
    }
  });

  test('defaults: mostly block, some log, a few disabled', () => {
    const block = VENDOR_RULES.filter((r) => r.action === 'block').length;
    const log = VENDOR_RULES.filter((r) => r.action === 'log').length;
    const disabled = VENDOR_RULES.filter((r) => !r.enabled).map((r) => r.ref);
    assert.ok(block > VENDOR_RULES.length * 0.8);
    assert.ok(log >= 3);
    assert.ok(disabled.length >= 3 && disabled.length <= 8, disabled.join(' '));
  });

  test('the product, attack-class and CVE tags the brief asks for exist', () => {
    const tags = new Set(VENDOR_RULES.flatMap((r) => r.categories));
    for (const t of ['wordpress', 'drupal', 'joomla', 'php', 'java', 'apache-struts', 'log4j', 'atlassian-confluence', 'rce', 'sqli', 'xss', 'lfi', 'scanner', 'cve-2021-44228', 'cve-2022-22965', 'cve-2014-6271', 'cve-2017-5638', 'cve-2018-7600', 'cve-2023-23752', 'cve-2024-4577', 'cve-2012-1823', 'cve-2019-19781', 'cve-2022-1388']) {
      assert.ok(tags.has(t), t);
    }
  });
});

describe('vendor ruleset: versions', () => {
  test('the ruleset: hosted id, managed, http_request_firewall_managed', () => {
    assert.equal(vendorRuleset.id, 'efb7b8c949ac4650a09736fc376e9aee');
    assert.equal(vendorRuleset.kind, 'managed');
    assert.equal(vendorRuleset.phase, 'http_request_firewall_managed');
    assert.equal(vendorRuleset.anomalyRuleId, undefined);
  });

  test('version 1 is a strict subset of version 2, which is latest and has every rule', () => {
    assert.deepEqual(vendorRuleset.versions.map((v) => [v.version, v.last_updated]), VENDOR_VERSIONS.map((v) => [v.version, v.last_updated]));
    assert.deepEqual(vendorRuleset.versions.map((v) => v.version), ['1', '2']);
    const v1 = rulesetVersion(vendorRuleset, '1')!;
    const v2 = rulesetVersion(vendorRuleset, '2')!;
    assert.equal(rulesetVersion(vendorRuleset, 'latest'), v2);
    assert.equal(rulesetVersion(vendorRuleset), v2);
    assert.equal(rulesetVersion(vendorRuleset, '3'), undefined);
    assert.deepEqual(v2.rules, VENDOR_RULES);
    assert.ok(v1.rules.length >= 30 && v1.rules.length < v2.rules.length);
    const v2Ids = new Set(v2.rules.map((r) => r.id));
    for (const r of v1.rules) assert.ok(v2Ids.has(r.id), r.ref);
    for (const r of v1.rules) assert.equal(r.version, '1');
    assert.equal(v1.last_updated, '2024-03-04T10:00:00.000000Z');
    assert.equal(v2.last_updated, '2024-07-15T10:00:00.000000Z');
    // Rules keep their order across versions.
    assert.deepEqual(v1.rules.map((r) => r.ref), v2.rules.filter((r) => r.version === '1').map((r) => r.ref));
  });
});

describe('vendor ruleset: each rule against its requests', () => {
  test('every rule has a fixture and every fixture a rule', () => {
    const files = readdirSync(FIXTURES).filter((f) => f.endsWith('.http')).map((f) => f.slice(0, -5)).sort();
    assert.deepEqual(files, VENDOR_RULES.map((r) => r.ref).sort());
  });

  for (const rule of VENDOR_RULES) {
    test(`${rule.ref}: ${rule.description}`, () => {
      const file = `${FIXTURES}${rule.ref}.http`;
      assert.ok(existsSync(file), `missing ${file}`);
      const parsed = parseHttpFile(readFileSync(file, 'utf8'));
      assert.deepEqual(parsed.problems, []);
      assert.deepEqual(parsed.requests.map((r) => r.name), ['match', 'no match']);
      const { filter, diagnostics } = compileExpression(rule.expression, CHECK);
      assert.deepEqual(diagnostics, []);
      assert.ok(filter);
      for (const req of parsed.requests) {
        const { fields, problems } = requestFields(req);
        assert.deepEqual(problems, [], `${req.name}: request problems`);
        const prepared = prepareFields(fields);
        assert.deepEqual(prepared.errors, [], `${req.name}: field errors`);
        assert.equal(filter.matches(prepared.values), req.name === 'match', `${rule.ref}: "${req.name}" request ${req.name === 'match' ? 'does not match' : 'matches'}`);
      }
    });
  }
});
