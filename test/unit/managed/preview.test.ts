// Paranoia/threshold preview and the override-editing helpers, on a small in-test scored
// ruleset whose scores are easy to add up by hand.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { prepareFields } from '../../../server/src/language/index';
import type { FieldValues } from '../../../server/src/language/evaluate';
import { defaultCatalog } from '../../../server/src/managed/catalog';
import { OWASP_ANOMALY_RULE_ID, OWASP_RULESET_ID } from '../../../server/src/rulesets/managedIds';
import {
  currentParanoiaLevel,
  currentThreshold,
  previewParanoia,
  setParanoiaLevel,
  setScoreThreshold,
} from '../../../server/src/managed/preview';
import { parseHttpFile } from '../../../server/src/requests/http';
import { requestFields } from '../../../server/src/requests/fields';
import type { ManagedCatalog, ManagedRule } from '../../../server/src/rulesets/catalog';
import type { ExecuteParameters, Rule } from '../../../server/src/rulesets/model';

const RS = '1'.repeat(32);
const ANOMALY = '2'.repeat(32);
const id = (s: string) => s.padEnd(32, '0');
const score = (ref: string, inc: number, level: number, expression: string, extra: string[] = []): ManagedRule => ({
  id: id(ref),
  ref,
  description: `${ref} rule`,
  expression,
  action: 'score',
  action_parameters: { increment: inc },
  enabled: true,
  categories: [`paranoia-level-${level}`, ...extra],
});
const O1 = score('01', 5, 1, 'http.request.uri.query contains "union"', ['attack-sqli']);
const O2 = score('02', 5, 1, 'http.request.uri.query contains "select"', ['attack-sqli']);
const O3 = score('03', 3, 2, 'http.request.uri.query contains "--"', ['attack-sqli']);
const O4 = score('04', 3, 3, 'http.user_agent contains "curl"');
const O5 = score('05', 2, 4, 'http.request.uri.path contains ";"', ['language-php']);
const OA: ManagedRule = { id: ANOMALY, ref: 'anomaly', description: '949110: Inbound Anomaly Score Exceeded', expression: 'true', action: 'block', enabled: true, categories: [], score_threshold: 10 };
const CATALOG: ManagedCatalog = {
  rulesets: [{ id: RS, name: 'Scored', description: '', kind: 'managed', phase: 'http_request_firewall_managed', anomalyRuleId: ANOMALY, versions: [{ version: '1', last_updated: '', rules: [O1, O2, O3, O4, O5, OA] }] }],
};

const exec = (overrides?: ExecuteParameters['overrides'], rulesetId = RS): Rule => ({
  id: id('e1'),
  ref: 'deploy',
  action: 'execute',
  expression: 'true',
  action_parameters: { id: rulesetId, ...(overrides ? { overrides } : {}) },
});

function req(path: string, query: string, ua = 'Mozilla/5.0'): FieldValues {
  const { values, errors } = prepareFields({ 'http.request.uri.path': path, 'http.request.uri.query': query, 'http.user_agent': ua });
  assert.deepEqual(errors, []);
  return values;
}
const REQUESTS = [
  req('/', ''), // 0 at every level
  req('/', 'union'), // 5
  req('/', 'union select'), // 10
  req('/a;b', 'union select --', 'curl/8'), // PL1 10, PL2 13, PL3 16, PL4 18
  req('/', 'x=--'), // PL1 0, then 3
];

/** Requests through the real pipeline: .http text -> SampleRequest -> field values. */
function httpRequests(lines: string[]): FieldValues[] {
  const { requests, problems } = parseHttpFile(lines.join('\n###\n'));
  assert.deepEqual(problems, []);
  return requests.map((r) => {
    const f = requestFields(r);
    assert.deepEqual(f.problems, []);
    const { values, errors } = prepareFields(f.fields);
    assert.deepEqual(errors, []);
    return values;
  });
}

function deepFreeze<T>(x: T): T {
  if (x && typeof x === 'object') {
    Object.freeze(x);
    for (const v of Object.values(x)) deepFreeze(v);
  }
  return x;
}
const overridesOf = (r: Rule) => (r.action_parameters as ExecuteParameters).overrides;

describe('setParanoiaLevel', () => {
  const pl = (n: number) => ({ category: `paranoia-level-${n}`, enabled: false });
  test('from no overrides: the levels above are disabled by category overrides', () => {
    assert.deepEqual(overridesOf(setParanoiaLevel(deepFreeze(exec()), 1)), { categories: [pl(2), pl(3), pl(4)] });
    assert.deepEqual(overridesOf(setParanoiaLevel(exec(), 3)), { categories: [pl(4)] });
  });
  test('PL4 needs no override at all, and leaves no empty overrides behind', () => {
    const r = setParanoiaLevel(deepFreeze(exec({ categories: [pl(2), pl(3), pl(4)] })), 4);
    assert.deepEqual(r.action_parameters, { id: RS });
    assert.equal(r.ref, 'deploy');
  });
  test('raising the level removes only what is needed; other overrides are kept in place', () => {
    const before = exec({ action: 'log', categories: [{ category: 'attack-sqli', action: 'block' }, pl(2), pl(3), pl(4)], rules: [{ id: ANOMALY, score_threshold: 25 }] });
    assert.deepEqual(overridesOf(setParanoiaLevel(deepFreeze(before), 2)), {
      action: 'log',
      categories: [{ category: 'attack-sqli', action: 'block' }, pl(3), pl(4)],
      rules: [{ id: ANOMALY, score_threshold: 25 }],
    });
  });
  test('an override of a level category with other properties is edited, not dropped', () => {
    assert.deepEqual(overridesOf(setParanoiaLevel(exec({ categories: [{ category: 'paranoia-level-2', action: 'log', enabled: false }] }), 2)), {
      categories: [{ category: 'paranoia-level-2', action: 'log' }, pl(3), pl(4)],
    });
    assert.deepEqual(overridesOf(setParanoiaLevel(exec({ categories: [{ category: 'paranoia-level-2', action: 'log' }] }), 1)), {
      categories: [{ category: 'paranoia-level-2', action: 'log', enabled: false }, pl(3), pl(4)],
    });
  });
  test('a level override that a later enabling category would beat is moved after it', () => {
    const r = setParanoiaLevel(exec({ categories: [pl(4), { category: 'language-php', enabled: true }] }), 3);
    assert.deepEqual(overridesOf(r)?.categories, [{ category: 'language-php', enabled: true }, pl(4)]);
  });
  test('currentParanoiaLevel reads the level back', () => {
    assert.equal(currentParanoiaLevel(exec()), 4);
    for (const n of [1, 2, 3, 4] as const) assert.equal(currentParanoiaLevel(setParanoiaLevel(exec(), n)), n);
    assert.equal(currentParanoiaLevel(exec({ enabled: false })), 0);
    // With the catalog, levels without rules are passed over.
    const noPl4: ManagedCatalog = { rulesets: [{ ...CATALOG.rulesets[0], versions: [{ version: '1', last_updated: '', rules: [O1, O2, O3, O4, OA] }] }] };
    assert.equal(currentParanoiaLevel(exec(), noPl4), 3);
    assert.equal(currentParanoiaLevel(exec({ categories: [{ category: 'paranoia-level-3', enabled: false }] }), noPl4), 2);
    assert.equal(currentParanoiaLevel(exec({ categories: [{ category: 'paranoia-level-3', enabled: false }] })), 4);
  });
});

describe('setScoreThreshold', () => {
  test('appends a rule override on the anomaly rule', () => {
    const r = setScoreThreshold(deepFreeze(exec()), 25, undefined, { catalog: CATALOG });
    assert.deepEqual(overridesOf(r), { rules: [{ id: ANOMALY, score_threshold: 25 }] });
  });
  test('edits the existing override, keeping its other properties; sets the action when given', () => {
    const r = setScoreThreshold(deepFreeze(exec({ rules: [{ id: O1.id, enabled: false }, { id: ANOMALY, enabled: true, action: 'log', score_threshold: 40 }] })), 60, 'managed_challenge', { catalog: CATALOG });
    assert.deepEqual(overridesOf(r)?.rules, [
      { id: O1.id, enabled: false },
      { id: ANOMALY, enabled: true, action: 'managed_challenge', score_threshold: 60 },
    ]);
  });
  test('without a catalog the OWASP-based anomaly rule (949110) is meant', () => {
    assert.deepEqual(overridesOf(setScoreThreshold(exec(undefined, OWASP_RULESET_ID), 40)), { rules: [{ id: OWASP_ANOMALY_RULE_ID, score_threshold: 40 }] });
  });
  test('currentThreshold reads it back, with the default from the rule', () => {
    assert.equal(currentThreshold(exec(), CATALOG).threshold, 10);
    assert.deepEqual(currentThreshold(setScoreThreshold(exec(), 33, 'log', { catalog: CATALOG }), CATALOG).threshold, 33);
    assert.equal(currentThreshold(setScoreThreshold(exec(), 33, 'log', { catalog: CATALOG }), CATALOG).action, 'log');
  });
});

describe('previewParanoia', () => {
  test('per-request scores per level', () => {
    const p = previewParanoia({ execute: exec(), catalog: CATALOG }, REQUESTS, [5, 10, 15]);
    assert.equal(p.error, undefined);
    assert.deepEqual(
      p.requests.map((r) => r.scores),
      [
        [0, 0, 0, 0],
        [5, 5, 5, 5],
        [10, 10, 10, 10],
        [10, 13, 16, 18],
        [0, 3, 3, 3],
      ],
    );
  });

  test('the matrix: acted on per level and threshold (>=), with the deciding rules', () => {
    const p = previewParanoia({ execute: exec(), catalog: CATALOG }, REQUESTS, [5, 15]);
    assert.deepEqual(p.thresholds, [5, 10, 15]); // the current threshold (10) joins
    assert.equal(p.currentThreshold, 10);
    assert.equal(p.currentLevel, 4);
    assert.deepEqual(
      p.levels.map((l) => [l.level, l.enabledRules, ...l.cells.map((c) => c.actedOn)]),
      [
        [1, 3, 3, 2, 0],
        [2, 4, 3, 2, 0],
        [3, 5, 3, 2, 1],
        [4, 6, 3, 2, 1],
      ],
    );
    const pl1at10 = p.levels[0].cells[1];
    assert.deepEqual(
      pl1at10.deciders.map((d) => [d.ref, d.count]),
      [
        ['01', 2],
        ['02', 2],
      ],
    );
    assert.equal(pl1at10.byAnomaly, 2);
    assert.deepEqual(
      p.levels[2].cells[2].deciders.map((d) => [d.ref, d.count]),
      [
        ['01', 1],
        ['02', 1],
        ['03', 1],
        ['04', 1],
      ],
    );
  });

  test('default thresholds 25, 40, 60 plus the current one, sorted', () => {
    const p = previewParanoia({ execute: exec(), catalog: CATALOG }, REQUESTS);
    assert.deepEqual(p.thresholds, [10, 25, 40, 60]);
    const q = previewParanoia({ execute: setScoreThreshold(exec(), 40, undefined, { catalog: CATALOG }), catalog: CATALOG }, REQUESTS);
    assert.deepEqual(q.thresholds, [25, 40, 60]);
  });

  test('the effective rule set per level keeps the deployment’s other overrides', () => {
    const p = previewParanoia({ execute: exec({ rules: [{ id: O2.id, enabled: false }] }), catalog: CATALOG }, REQUESTS, [10]);
    const pl1 = p.levels[0];
    assert.deepEqual(
      pl1.rules.map((r) => [r.ref, r.level ?? null, r.enabled, r.action, r.increment ?? null]),
      [
        ['01', 1, true, 'score', 5],
        ['02', 1, false, 'score', 5],
        ['03', 2, false, 'score', 3],
        ['04', 3, false, 'score', 3],
        ['05', 4, false, 'score', 2],
        ['anomaly', null, true, 'block', null],
      ],
    );
    assert.deepEqual(pl1.rules[2].overriddenBy, ['category:paranoia-level-2']);
    // 02 is off: 'union select' scores 5 only; at PL4 request 3 scores 13.
    assert.deepEqual(p.requests.map((r) => r.scores[3]), [0, 5, 5, 13, 3]);
    // At 10: PL2 gives request 3 only 5 + 3; PL3 adds 3 (11), PL4 2 more (13).
    assert.deepEqual(p.levels.map((l) => l.cells[0].actedOn), [0, 0, 1, 1]);
  });

  test('a zone: other rules that act count at every cell, and name themselves', () => {
    const zone = {
      catalog: CATALOG,
      entryPoints: {
        http_request_firewall_custom: { phase: 'http_request_firewall_custom' as const, rules: [{ ref: 'no-dashes', action: 'block', expression: 'http.request.uri.query eq "x=--"' }] },
        http_request_firewall_managed: { phase: 'http_request_firewall_managed' as const, rules: [exec()] },
      },
    };
    const p = previewParanoia(zone, REQUESTS, [100]);
    assert.deepEqual(p.thresholds, [10, 100]);
    assert.deepEqual(
      p.levels.map((l) => l.cells.map((c) => c.actedOn)),
      [
        [3, 1],
        [3, 1],
        [3, 1],
        [3, 1],
      ],
    );
    assert.deepEqual(p.levels[0].cells[1].deciders, [{ ruleId: undefined, ref: 'no-dashes', description: undefined, count: 1 }]);
  });

  test('nothing to preview: an error, not a throw', () => {
    assert.match(previewParanoia({ execute: { action: 'block', expression: 'true' }, catalog: CATALOG }, REQUESTS).error ?? '', /scored managed ruleset/);
    assert.match(previewParanoia({ entryPoints: {}, catalog: CATALOG }, REQUESTS).error ?? '', /no execute rule/);
  });

  test('the default catalog’s OWASP-based ruleset previews', () => {
    const p = previewParanoia(
      { execute: { action: 'execute', expression: 'true', action_parameters: { id: OWASP_RULESET_ID } }, catalog: defaultCatalog },
      httpRequests(['GET https://example.com/item?id=1%27%20or%20%271%27%3D%271', 'GET https://example.com/']),
    );
    assert.equal(p.error, undefined);
    assert.deepEqual(p.problems, []);
    assert.equal(p.levels.length, 4);
    assert.ok(p.thresholds.includes(40));
    // The SQL injection: 942100 alone at PL1 (5); PL2-4 add the SQLi rules of those levels.
    assert.deepEqual(p.requests[0].scores, [5, 32, 37, 45]);
    // A bare GET: nothing at PL1; at PL2 the NOTICE-level header checks add 2.
    assert.deepEqual(p.requests[1].scores, [0, 2, 2, 2]);
    // Enabled rules per level: 124 / 173 / 192 / 199 CRS rules, plus 949110.
    assert.deepEqual(p.levels.map((l) => l.enabledRules), [125, 174, 193, 200]);
  });
});
