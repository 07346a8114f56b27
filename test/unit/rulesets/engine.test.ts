// The evaluation engine, data-driven: each case is a zone, a request and what must come
// out (the decision, some trace outcomes, scores, logs). Small in-test catalogs keep the
// cases readable; the real catalog has its own tests.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { prepareFields } from '../../../server/src/language/index';
import type { FieldValues } from '../../../server/src/language/evaluate';
import type { ManagedCatalog, ManagedRule } from '../../../server/src/rulesets/catalog';
import {
  compileZone,
  effectiveRules,
  resolveOverrides,
  type CompileZoneOptions,
  type Evaluation,
  type Outcome,
  type ZoneConfig,
} from '../../../server/src/rulesets/engine';
import type { LegacyFirewallRule } from '../../../server/src/rulesets/legacy';
import { legacyOrder } from '../../../server/src/rulesets/legacy';
import type { Overrides, Rule, Ruleset } from '../../../server/src/rulesets/model';

// --- A small catalog --------------------------------------------------------------------

const OWASP = 'a'.repeat(32);
const VENDOR = 'b'.repeat(32);
const ANOMALY = 'a0'.repeat(16);
const CUSTOM = 'c'.repeat(32);
const CUSTOM2 = 'c2'.repeat(16);

const id = (n: string) => n.padEnd(32, '0');

function mr(ref: string, action: string, expression: string, categories: string[], extra: Partial<ManagedRule> = {}): ManagedRule {
  return { id: id(ref.replace(/[^0-9a-f]/g, '')), ref, description: `${ref} rule`, expression, action, enabled: true, categories, ...extra };
}

const sc = (n: number) => ({ action_parameters: { increment: n } });
const O1 = mr('01', 'score', 'http.request.uri.query contains "union"', ['paranoia-level-1', 'attack-sqli'], sc(5));
const O2 = mr('02', 'score', 'http.request.uri.query contains "select"', ['paranoia-level-1', 'attack-sqli'], sc(5));
const O3 = mr('03', 'score', 'http.request.uri.query contains "--"', ['paranoia-level-2', 'attack-sqli'], sc(3));
const O4 = mr('04', 'score', 'http.user_agent contains "curl"', ['paranoia-level-3'], sc(3));
const O5 = mr('05', 'score', 'http.request.uri.path contains ";"', ['paranoia-level-4', 'language-php'], sc(2));
const OA: ManagedRule = { id: ANOMALY, ref: 'anomaly', description: '949110: Inbound Anomaly Score Exceeded', expression: 'true', action: 'block', enabled: true, categories: [], score_threshold: 10 };

const V_LOG4J = mr('d1', 'block', 'http.request.uri.query contains "jndi"', ['log4j', 'cve-2021-44228']);
const V_WP = mr('d2', 'log', 'starts_with(http.request.uri.path, "/wp-")', ['wordpress']);
const V_OFF = mr('d3', 'block', 'http.request.uri.path contains "xmlrpc"', ['wordpress'], { enabled: false });
const V_NEW = mr('d4', 'block', 'http.request.uri.path eq "/new"', ['misc']);

const CATALOG: ManagedCatalog = {
  rulesets: [
    {
      id: OWASP,
      name: 'Test OWASP',
      description: '',
      kind: 'managed',
      phase: 'http_request_firewall_managed',
      anomalyRuleId: ANOMALY,
      versions: [{ version: '1', last_updated: '2024-01-01T00:00:00Z', rules: [O1, O2, O3, O4, O5, OA] }],
    },
    {
      id: VENDOR,
      name: 'Test vendor',
      description: '',
      kind: 'managed',
      phase: 'http_request_firewall_managed',
      versions: [
        { version: '1', last_updated: '2024-01-01T00:00:00Z', rules: [V_LOG4J, V_WP, V_OFF] },
        { version: '2', last_updated: '2024-02-01T00:00:00Z', rules: [V_LOG4J, V_WP, V_OFF, V_NEW] },
      ],
    },
  ],
};

// --- Helpers ----------------------------------------------------------------------------

function req(r: { path?: string; query?: string; ua?: string; method?: string; ip?: string } = {}): FieldValues {
  const { values, errors } = prepareFields({
    'http.request.uri.path': r.path ?? '/',
    'http.request.uri.query': r.query ?? '',
    'http.user_agent': r.ua ?? 'Mozilla/5.0',
    'http.request.method': r.method ?? 'GET',
    'ip.src': r.ip ?? '192.0.2.1',
  });
  assert.deepEqual(errors, []);
  return values;
}

let n = 0;
function rule(action: string, expression: string, extra: Partial<Rule> = {}): Rule {
  n++;
  return { id: id(`e${n.toString(16)}`), ref: extra.ref ?? `r${n}`, action, expression, ...extra };
}

function custom(...rules: Rule[]): Ruleset {
  return { id: 'f'.repeat(32), kind: 'zone', phase: 'http_request_firewall_custom', rules };
}
function managedEp(...rules: Rule[]): Ruleset {
  return { id: 'e'.repeat(32), kind: 'zone', phase: 'http_request_firewall_managed', rules };
}
function exec(rulesetId: string, extra: { overrides?: Overrides; version?: string; ref?: string; enabled?: boolean; expression?: string } = {}): Rule {
  return rule('execute', extra.expression ?? 'true', {
    ref: extra.ref ?? `exec-${rulesetId.slice(0, 4)}`,
    enabled: extra.enabled,
    action_parameters: { id: rulesetId, ...(extra.version ? { version: extra.version } : {}), ...(extra.overrides ? { overrides: extra.overrides } : {}) },
  });
}
function zone(z: Partial<ZoneConfig>): ZoneConfig {
  return { entryPoints: {}, catalog: CATALOG, ...z };
}

/** The outcome per rule ref in trace order, e.g. ['r1:not-matched', 'r2:terminated']. */
function outcomes(ev: Evaluation): string[] {
  return ev.trace.map((t) => `${t.ref ?? t.phase}:${t.outcome}`);
}

interface Case {
  readonly name: string;
  readonly zone: ZoneConfig;
  readonly request: FieldValues;
  readonly options?: CompileZoneOptions;
  /** The final action, and optionally the deciding rule's ref. */
  readonly action: string;
  readonly ref?: string;
  /** A subset of `ref:outcome` entries that must appear in the trace, in order. */
  readonly trace?: readonly string[];
  /** Entries that must not appear. */
  readonly absent?: readonly string[];
  readonly scores?: Record<string, number>;
  readonly logs?: readonly string[];
  readonly problems?: number;
  readonly check?: (ev: Evaluation) => void;
}

function runCases(cases: readonly Case[]): void {
  for (const c of cases) {
    test(c.name, () => {
      const z = compileZone(c.zone, c.options);
      assert.equal(z.problems.filter((p) => p.severity === 'error').length, c.problems ?? 0, JSON.stringify(z.problems, null, 1));
      const ev = z.evaluate(c.request);
      const got = outcomes(ev);
      assert.equal(ev.decision.action, c.action, got.join('\n'));
      if (c.ref !== undefined) assert.equal(ev.decision.ref, c.ref);
      if (c.trace) {
        let i = 0;
        for (const want of c.trace) {
          const at = got.indexOf(want, i);
          assert.ok(at >= 0, `trace lacks ${want} (after position ${i}):\n${got.join('\n')}`);
          i = at + 1;
        }
      }
      for (const a of c.absent ?? []) assert.ok(!got.includes(a), `trace has ${a}:\n${got.join('\n')}`);
      if (c.scores) assert.deepEqual(ev.scores, c.scores);
      if (c.logs) assert.deepEqual(ev.logs.map((l) => `${l.ref}:${l.action}`), c.logs);
      c.check?.(ev);
    });
  }
}

const NEVER = 'http.request.uri.path eq "/never"';
const ATTACK = req({ path: '/a', query: 'q=union select', ua: 'curl/8' }); // O1 5 + O2 5 + O4 3 = 13

// --- Actions ----------------------------------------------------------------------------

describe('actions', () => {
  const response = { status_code: 418, content: 'no tea', content_type: 'text/plain' };
  runCases([
    {
      name: 'block with its custom response ends everything',
      zone: zone({ entryPoints: { http_request_firewall_custom: custom(rule('block', 'http.request.uri.path eq "/admin"', { ref: 'blk', action_parameters: { response } }), rule('log', 'true', { ref: 'after' })) } }),
      request: req({ path: '/admin' }),
      action: 'block',
      ref: 'blk',
      trace: ['blk:terminated'],
      absent: ['after:logged', 'after:not-matched'],
      check: (ev) => {
        assert.deepEqual(ev.decision.response, response);
        assert.equal(ev.decision.phase, 'http_request_firewall_custom');
      },
    },
    ...(['challenge', 'js_challenge', 'managed_challenge'] as const).map(
      (a): Case => ({
        name: `${a} ends everything, later phases included`,
        zone: zone({
          entryPoints: {
            http_request_firewall_custom: custom(rule(a, 'true', { ref: 'ch' }), rule('block', 'true', { ref: 'later' })),
            http_request_firewall_managed: managedEp(exec(VENDOR, { ref: 'x' })),
          },
        }),
        request: req(),
        action: a,
        ref: 'ch',
        check: (ev) => assert.equal(ev.trace.length, 1),
      }),
    ),
    {
      name: 'log records and continues',
      zone: zone({ entryPoints: { http_request_firewall_custom: custom(rule('log', 'true', { ref: 'l1' }), rule('log', NEVER, { ref: 'l2' }), rule('log', 'true', { ref: 'l3' })) } }),
      request: req(),
      action: 'allow-through',
      trace: ['l1:logged', 'l2:not-matched', 'l3:logged'],
      logs: ['l1:log', 'l3:log'],
    },
    {
      name: 'a disabled rule is skipped without evaluating it',
      zone: zone({ entryPoints: { http_request_firewall_custom: custom(rule('block', 'true', { ref: 'off', enabled: false }), rule('log', 'true', { ref: 'on' })) } }),
      request: req(),
      action: 'allow-through',
      trace: ['off:disabled', 'on:logged'],
      check: (ev) => assert.equal(ev.trace[0].matched, undefined),
    },
    {
      name: 'an expression that does not compile is a problem and never matches',
      zone: zone({ entryPoints: { http_request_firewall_custom: custom(rule('block', 'http.host eq', { ref: 'bad' }), rule('log', 'true', { ref: 'ok' })) } }),
      request: req(),
      action: 'allow-through',
      problems: 1,
      trace: ['bad:invalid', 'ok:logged'],
    },
    {
      name: 'an action outside the WAF is recorded, not applied',
      zone: zone({ entryPoints: { http_request_firewall_custom: custom(rule('rewrite', 'true', { ref: 'rw' })) } }),
      request: req(),
      action: 'allow-through',
      trace: ['rw:unsupported'],
    },
    {
      name: 'a rule with no action or no expression is a problem, not a throw',
      zone: zone({ entryPoints: { http_request_firewall_custom: custom({ ref: 'noact', expression: 'true' }, { ref: 'noexpr', action: 'block' }) } }),
      request: req(),
      action: 'allow-through',
      problems: 2,
      trace: ['noact:invalid', 'noexpr:invalid'],
    },
  ]);
});

// --- Skip -------------------------------------------------------------------------------

describe('skip scopes', () => {
  runCases([
    {
      name: 'ruleset: current skips the rest of the entry point',
      zone: zone({
        entryPoints: {
          http_request_firewall_custom: custom(rule('skip', 'true', { ref: 'sk', action_parameters: { ruleset: 'current' } }), rule('block', 'true', { ref: 'b' })),
          http_request_firewall_managed: managedEp(rule('block', 'true', { ref: 'mb' })),
        },
      }),
      request: req(),
      action: 'block',
      ref: 'mb',
      trace: ['sk:skip', 'b:skipped', 'mb:terminated'],
      check: (ev) => assert.equal(ev.trace[1].skippedBy?.ref, 'sk'),
    },
    {
      name: 'ruleset: current in an executed custom ruleset skips only the rest of that ruleset',
      zone: zone({
        entryPoints: { http_request_firewall_custom: custom(exec(CUSTOM, { ref: 'ex' }), rule('block', 'true', { ref: 'ep-block' })) },
        customRulesets: [{ id: CUSTOM, kind: 'custom', phase: 'http_request_firewall_custom', rules: [rule('skip', 'true', { ref: 'inner-skip', action_parameters: { ruleset: 'current' } }), rule('block', 'true', { ref: 'inner-block' })] }],
      }),
      request: req(),
      action: 'block',
      ref: 'ep-block',
      trace: ['ex:executed', 'inner-skip:skip', 'inner-block:skipped', 'ep-block:terminated'],
    },
    {
      name: 'phases skips a later phase',
      zone: zone({
        entryPoints: {
          http_request_firewall_custom: custom(rule('skip', 'true', { ref: 'sk', action_parameters: { phases: ['http_request_firewall_managed'] } })),
          http_request_firewall_managed: managedEp(rule('block', 'true', { ref: 'mb' })),
        },
      }),
      request: req(),
      action: 'allow-through',
      trace: ['sk:skip', 'http_request_firewall_managed:skipped'],
      absent: ['mb:terminated'],
    },
    {
      name: 'phases does not skip a phase when the rule does not match',
      zone: zone({
        entryPoints: {
          http_request_firewall_custom: custom(rule('skip', 'http.request.uri.path eq "/health"', { ref: 'sk', action_parameters: { phases: ['http_request_firewall_managed'] } })),
          http_request_firewall_managed: managedEp(rule('block', 'true', { ref: 'mb' })),
        },
      }),
      request: req({ path: '/x' }),
      action: 'block',
      ref: 'mb',
    },
    {
      name: 'rulesets skips a later execute of that ruleset',
      zone: zone({
        entryPoints: {
          http_request_firewall_managed: managedEp(rule('skip', 'true', { ref: 'sk', action_parameters: { rulesets: [VENDOR] } }), exec(VENDOR, { ref: 'ex' }), exec(OWASP, { ref: 'ex2' })),
        },
      }),
      request: req({ query: 'x=jndi:ldap' }),
      action: 'allow-through',
      trace: ['sk:skip', 'ex:skipped', 'ex2:executed'],
      absent: ['d1:terminated'],
    },
    {
      name: 'rules skips the listed rules of a ruleset; the others run',
      zone: zone({
        entryPoints: {
          http_request_firewall_managed: managedEp(rule('skip', 'true', { ref: 'sk', action_parameters: { rules: { [VENDOR]: [V_LOG4J.id] } } }), exec(VENDOR, { ref: 'ex' })),
        },
      }),
      request: req({ path: '/wp-login.php', query: 'x=jndi:ldap' }),
      action: 'allow-through',
      trace: ['sk:skip', 'ex:executed', 'd1:skipped', 'd2:logged'],
      logs: ['sk:skip', 'd2:log'],
    },
    {
      name: 'a skip rule from the custom phase reaches managed rules (rules map)',
      zone: zone({
        entryPoints: {
          http_request_firewall_custom: custom(rule('skip', 'true', { ref: 'sk', action_parameters: { rules: { [VENDOR]: [V_LOG4J.id] } } })),
          http_request_firewall_managed: managedEp(exec(VENDOR, { ref: 'ex' })),
        },
      }),
      request: req({ query: 'x=jndi:ldap' }),
      action: 'allow-through',
      trace: ['d1:skipped'],
    },
    {
      name: 'products are recorded; phase: current skips the rest of the phase only',
      zone: zone({
        entryPoints: {
          http_request_firewall_custom: custom(
            rule('skip', 'true', { ref: 'sk', action_parameters: { phase: 'current', products: ['securityLevel', 'waf'] } }),
            rule('block', 'true', { ref: 'b' }),
          ),
          http_request_firewall_managed: managedEp(rule('log', 'true', { ref: 'ml' })),
        },
      }),
      request: req(),
      action: 'allow-through',
      trace: ['sk:skip', 'b:skipped', 'ml:logged'],
      check: (ev) => assert.deepEqual(Object.keys(ev.skippedProducts).sort(), ['securityLevel', 'waf']),
    },
    {
      name: 'a skip rule with logging disabled does not log',
      zone: zone({ entryPoints: { http_request_firewall_custom: custom(rule('skip', 'true', { ref: 'quiet', logging: { enabled: false }, action_parameters: { ruleset: 'current' } }), rule('skip', 'true', { ref: 'loud', action_parameters: { ruleset: 'current' } })) } }),
      request: req(),
      action: 'allow-through',
      logs: [],
      trace: ['quiet:skip', 'loud:skipped'],
    },
  ]);
});

// --- Overrides --------------------------------------------------------------------------

describe('override precedence (rule > category, last matching category wins > ruleset)', () => {
  const jndi = req({ query: 'x=jndi:ldap' });
  const vendorWith = (overrides: Overrides) => zone({ entryPoints: { http_request_firewall_managed: managedEp(exec(VENDOR, { ref: 'ex', overrides })) } });
  const cases: { name: string; overrides: Overrides; request?: FieldValues; action: string; ref?: string; trace?: string[] }[] = [
    { name: 'no overrides: the default action', overrides: {}, action: 'block', ref: 'd1' },
    { name: 'ruleset-wide action', overrides: { action: 'log' }, action: 'allow-through', trace: ['d1:logged'] },
    { name: 'category beats ruleset', overrides: { action: 'log', categories: [{ category: 'log4j', action: 'managed_challenge' }] }, action: 'managed_challenge' },
    { name: 'rule beats category', overrides: { categories: [{ category: 'log4j', action: 'block' }], rules: [{ id: V_LOG4J.id, action: 'log' }] }, action: 'allow-through', trace: ['d1:logged'] },
    { name: 'rule beats ruleset', overrides: { action: 'log', rules: [{ id: V_LOG4J.id, action: 'js_challenge' }] }, action: 'js_challenge' },
    {
      name: 'the last matching category wins (cve last)',
      overrides: { categories: [{ category: 'log4j', action: 'challenge' }, { category: 'cve-2021-44228', action: 'managed_challenge' }] },
      action: 'managed_challenge',
    },
    {
      name: 'the last matching category wins (log4j last)',
      overrides: { categories: [{ category: 'cve-2021-44228', action: 'managed_challenge' }, { category: 'log4j', action: 'challenge' }] },
      action: 'challenge',
    },
    { name: 'a category the rule does not have does not apply', overrides: { categories: [{ category: 'wordpress', action: 'log' }] }, action: 'block', ref: 'd1' },
    {
      name: 'per property: the last category that sets enabled decides enabled',
      overrides: { categories: [{ category: 'log4j', enabled: false }, { category: 'cve-2021-44228', action: 'log' }] },
      action: 'allow-through',
      trace: ['d1:disabled'],
    },
    { name: 'ruleset-wide enabled false', overrides: { enabled: false }, action: 'allow-through', trace: ['d1:disabled', 'd2:disabled'] },
    { name: 'rule enabled beats ruleset-wide enabled false', overrides: { enabled: false, rules: [{ id: V_LOG4J.id, enabled: true }] }, action: 'block', ref: 'd1', trace: ['d1:terminated'] },
    { name: 'category enabled beats ruleset-wide enabled false', overrides: { enabled: false, categories: [{ category: 'log4j', enabled: true }] }, action: 'block', ref: 'd1' },
    { name: 'rule enabled false beats category enabled true', overrides: { categories: [{ category: 'log4j', enabled: true }], rules: [{ id: V_LOG4J.id, enabled: false }] }, action: 'allow-through', trace: ['d1:disabled'] },
    {
      name: 'a category override enables a rule that is off by default',
      overrides: { categories: [{ category: 'wordpress', enabled: true }] },
      request: req({ path: '/xmlrpc.php' }),
      action: 'block',
      ref: 'd3',
    },
    { name: 'a rule off by default stays off with only an action override', overrides: { rules: [{ id: V_OFF.id, action: 'block' }] }, request: req({ path: '/xmlrpc.php' }), action: 'allow-through', trace: ['d3:disabled'] },
  ];
  runCases(cases.map((c) => ({ name: c.name, zone: vendorWith(c.overrides), request: c.request ?? jndi, action: c.action, ref: c.ref, trace: c.trace })));

  test('resolveOverrides reports which override set each property', () => {
    const r = resolveOverrides(V_LOG4J, { action: 'log', categories: [{ category: 'log4j', enabled: false }], rules: [{ id: V_LOG4J.id, action: 'block' }] });
    assert.deepEqual(r, { enabled: false, action: 'block', scoreThreshold: undefined, overriddenBy: ['category:log4j', 'rule'] });
    assert.deepEqual(resolveOverrides(OA, { rules: [{ id: ANOMALY, score_threshold: 25 }] }, true), { enabled: true, action: 'block', scoreThreshold: 25, overriddenBy: ['rule'] });
    assert.deepEqual(resolveOverrides(OA, undefined, true).scoreThreshold, 10);
    assert.deepEqual(resolveOverrides({ ...OA, score_threshold: undefined }, undefined, true).scoreThreshold, 40);
  });

  test('the trace names the overrides that applied', () => {
    const ev = compileZone(vendorWith({ action: 'log', categories: [{ category: 'wordpress', action: 'challenge' }] })).evaluate(jndi);
    assert.deepEqual(ev.trace.find((e) => e.ref === 'd1')?.overriddenBy, ['ruleset']);
    assert.deepEqual(ev.trace.find((e) => e.ref === 'd2')?.overriddenBy, ['category:wordpress']);
    assert.equal(ev.trace.find((e) => e.ref === 'd2')?.action, 'challenge');
  });

  test('effectiveRules lists every rule of the deployed version with its settings', () => {
    const eff = effectiveRules(exec(VENDOR, { overrides: { categories: [{ category: 'wordpress', enabled: true }] } }), CATALOG);
    assert.deepEqual(
      eff.map((e) => [e.rule.ref, e.effective.enabled, e.effective.action]),
      [
        ['d1', true, 'block'],
        ['d2', true, 'log'],
        ['d3', true, 'block'],
        ['d4', true, 'block'],
      ],
    );
    assert.deepEqual(effectiveRules(rule('block', 'true'), CATALOG), []);
  });
});

// --- Scoring ----------------------------------------------------------------------------

describe('anomaly scoring and thresholds', () => {
  const owasp = (overrides?: Overrides) => zone({ entryPoints: { http_request_firewall_managed: managedEp(exec(OWASP, { ref: 'ex', overrides })) } });
  runCases([
    {
      name: 'below the threshold: scores add up, the anomaly rule does not act',
      zone: owasp(),
      request: req({ query: 'union' }),
      action: 'allow-through',
      trace: ['01:scored', '02:not-matched', 'anomaly:below-threshold'],
      scores: { [OWASP]: 5 },
    },
    {
      name: 'exactly at the threshold (>=) the anomaly rule blocks',
      zone: owasp(),
      request: req({ query: 'union select' }),
      action: 'block',
      ref: 'anomaly',
      scores: { [OWASP]: 10 },
      check: (ev) => {
        assert.equal(ev.decision.score, 10);
        assert.equal(ev.decision.threshold, 10);
        assert.equal(ev.decision.via?.ref, 'ex');
        assert.equal(ev.decision.rulesetId, OWASP);
        const a = ev.trace.find((t) => t.ref === 'anomaly');
        assert.equal(a?.score, 10);
      },
    },
    {
      name: 'the trace carries each increment and the running total',
      zone: owasp(),
      request: ATTACK,
      action: 'block',
      check: (ev) =>
        assert.deepEqual(
          ev.trace.filter((t) => t.outcome === 'scored').map((t) => [t.ref, t.scoreAdded, t.score]),
          [
            ['01', 5, 5],
            ['02', 5, 10],
            ['04', 3, 13],
          ],
        ),
    },
    { name: 'a score_threshold rule override raises the bar', zone: owasp({ rules: [{ id: ANOMALY, score_threshold: 11 }] }), request: req({ query: 'union select' }), action: 'allow-through', trace: ['anomaly:below-threshold'] },
    { name: 'and lowers it', zone: owasp({ rules: [{ id: ANOMALY, score_threshold: 5 }] }), request: req({ query: 'union' }), action: 'block', ref: 'anomaly' },
    { name: 'the anomaly rule acts with its overridden action', zone: owasp({ rules: [{ id: ANOMALY, action: 'managed_challenge' }] }), request: ATTACK, action: 'managed_challenge', ref: 'anomaly' },
    {
      name: 'an anomaly rule overridden to log logs and lets the request through',
      zone: owasp({ rules: [{ id: ANOMALY, action: 'log' }] }),
      request: ATTACK,
      action: 'allow-through',
      trace: ['anomaly:logged'],
      logs: ['anomaly:log'],
    },
    { name: 'a disabled anomaly rule never acts', zone: owasp({ rules: [{ id: ANOMALY, enabled: false }] }), request: ATTACK, action: 'allow-through', trace: ['anomaly:disabled'], scores: { [OWASP]: 13 } },
    {
      name: 'an action override on a score rule makes it act instead of scoring',
      zone: owasp({ rules: [{ id: O2.id, action: 'block' }] }),
      request: req({ query: 'union select' }),
      action: 'block',
      ref: '02',
      trace: ['01:scored', '02:terminated'],
      scores: { [OWASP]: 5 },
    },
    {
      name: 'a category action override (log) on score rules: they log, and no longer score',
      zone: owasp({ categories: [{ category: 'attack-sqli', action: 'log' }] }),
      request: req({ query: 'union select' }),
      action: 'allow-through',
      trace: ['01:logged', '02:logged', 'anomaly:below-threshold'],
      scores: { [OWASP]: 0 },
    },
    {
      name: 'a ruleset-wide action log turns the whole ruleset into logging: nothing scores, nothing blocks',
      zone: owasp({ action: 'log' }),
      request: ATTACK,
      action: 'allow-through',
      trace: ['01:logged', '02:logged', '04:logged', 'anomaly:below-threshold'],
      scores: { [OWASP]: 0 },
    },
    {
      name: 'no paranoia override: all four levels run',
      zone: owasp(),
      request: req({ path: '/a;b', query: 'x=--', ua: 'curl/8' }),
      action: 'allow-through',
      trace: ['03:scored', '04:scored', '05:scored'],
      scores: { [OWASP]: 8 },
    },
    {
      name: 'PL1: paranoia-level-2..4 disabled by category overrides',
      zone: owasp({ categories: [2, 3, 4].map((l) => ({ category: `paranoia-level-${l}`, enabled: false })) }),
      request: req({ path: '/a;b', query: 'x=--', ua: 'curl/8' }),
      action: 'allow-through',
      trace: ['03:disabled', '04:disabled', '05:disabled'],
      scores: { [OWASP]: 0 },
    },
    {
      name: 'scores of two executions of different rulesets are reported apart',
      zone: zone({
        entryPoints: {
          http_request_firewall_managed: managedEp(exec(VENDOR, { ref: 'exv' }), exec(OWASP, { ref: 'exo' })),
        },
      }),
      request: req({ query: 'union' }),
      action: 'allow-through',
      scores: { [OWASP]: 5 },
    },
    {
      name: 'a managed rule that blocks before the anomaly rule decides first',
      zone: zone({
        entryPoints: { http_request_firewall_managed: managedEp(exec(VENDOR, { ref: 'exv' }), exec(OWASP, { ref: 'exo' })) },
      }),
      request: req({ query: 'union select jndi' }),
      action: 'block',
      ref: 'd1',
      absent: ['exo:executed'],
    },
  ]);
});

// --- Rate limiting ----------------------------------------------------------------------

describe('rate limiting (no counting state)', () => {
  const rl = rule('block', 'http.request.uri.path eq "/login"', { ref: 'rl', ratelimit: { characteristics: ['ip.src'], period: 60, requests_per_period: 10 } });
  const z = zone({ entryPoints: { http_ratelimit: { id: '9'.repeat(32), phase: 'http_ratelimit', rules: [rl] } } });
  runCases([
    { name: 'a matching rate-limit rule is recorded as counted and does not act', zone: z, request: req({ path: '/login' }), action: 'allow-through', trace: ['rl:counted'] },
    { name: 'the caller can say the limit is exceeded', zone: z, request: req({ path: '/login' }), options: { rateLimitExceeded: (r) => r.ref === 'rl' }, action: 'block', ref: 'rl' },
  ]);
});

// --- Execute ----------------------------------------------------------------------------

describe('execute: custom rulesets, managed versions', () => {
  const customRs: Ruleset = { id: CUSTOM, name: 'mine', kind: 'custom', phase: 'http_request_firewall_custom', rules: [rule('log', 'true', { ref: 'c-log' }), rule('block', 'http.request.method eq "PUT"', { ref: 'c-put' })] };
  runCases([
    {
      name: 'a custom ruleset runs in place; its block decides, via the execute rule',
      zone: zone({ entryPoints: { http_request_firewall_custom: custom(exec(CUSTOM, { ref: 'run-mine' }), rule('log', 'true', { ref: 'after' })) }, customRulesets: [customRs] }),
      request: req({ method: 'PUT' }),
      action: 'block',
      ref: 'c-put',
      check: (ev) => {
        assert.equal(ev.decision.via?.ref, 'run-mine');
        assert.equal(ev.decision.rulesetId, CUSTOM);
        assert.deepEqual(
          ev.trace.map((t) => [t.ref, t.depth]),
          [
            ['run-mine', 0],
            ['c-log', 1],
            ['c-put', 1],
          ],
        );
      },
    },
    {
      name: 'after a custom ruleset, the entry point continues',
      zone: zone({ entryPoints: { http_request_firewall_custom: custom(exec(CUSTOM, { ref: 'run-mine' }), rule('log', 'true', { ref: 'after' })) }, customRulesets: [customRs] }),
      request: req(),
      action: 'allow-through',
      trace: ['run-mine:executed', 'c-log:logged', 'c-put:not-matched', 'after:logged'],
    },
    {
      name: 'an execute rule whose expression does not match runs nothing',
      zone: zone({ entryPoints: { http_request_firewall_custom: custom(exec(CUSTOM, { ref: 'run-mine', expression: NEVER })) }, customRulesets: [customRs] }),
      request: req({ method: 'PUT' }),
      action: 'allow-through',
      trace: ['run-mine:not-matched'],
      absent: ['c-log:logged'],
    },
    {
      name: 'an unknown ruleset is a problem and the execute rule is invalid',
      zone: zone({ entryPoints: { http_request_firewall_custom: custom(exec('d'.repeat(32), { ref: 'nowhere' })) } }),
      request: req(),
      action: 'allow-through',
      problems: 1,
      trace: ['nowhere:invalid'],
    },
    {
      name: 'a custom ruleset that executes itself is a problem, not an endless loop',
      zone: zone({
        entryPoints: { http_request_firewall_custom: custom(exec(CUSTOM2, { ref: 'outer' })) },
        customRulesets: [{ id: CUSTOM2, kind: 'custom', phase: 'http_request_firewall_custom', rules: [exec(CUSTOM2, { ref: 'inner' })] }],
      }),
      request: req(),
      action: 'allow-through',
      problems: 1,
      trace: ['outer:executed', 'inner:invalid'],
    },
    { name: 'latest runs the newest version', zone: zone({ entryPoints: { http_request_firewall_managed: managedEp(exec(VENDOR)) } }), request: req({ path: '/new' }), action: 'block', ref: 'd4' },
    { name: 'version "latest" explicitly', zone: zone({ entryPoints: { http_request_firewall_managed: managedEp(exec(VENDOR, { version: 'latest' })) } }), request: req({ path: '/new' }), action: 'block', ref: 'd4' },
    {
      name: 'a pinned version runs that version',
      zone: zone({ entryPoints: { http_request_firewall_managed: managedEp(exec(VENDOR, { version: '1' })) } }),
      request: req({ path: '/new' }),
      action: 'allow-through',
      absent: ['d4:not-matched'],
    },
    {
      name: 'an unknown version is a problem',
      zone: zone({ entryPoints: { http_request_firewall_managed: managedEp(exec(VENDOR, { version: '9', ref: 'v9' })) } }),
      request: req({ path: '/new' }),
      action: 'allow-through',
      problems: 1,
      trace: ['v9:invalid'],
    },
    {
      name: 'a disabled execute rule does not run its ruleset',
      zone: zone({ entryPoints: { http_request_firewall_managed: managedEp(exec(VENDOR, { ref: 'off', enabled: false })) } }),
      request: req({ path: '/new' }),
      action: 'allow-through',
      trace: ['off:disabled'],
      absent: ['d4:terminated'],
    },
  ]);

  test('problems name the stage, ruleset, rule and the expression diagnostics', () => {
    const z = compileZone(zone({ entryPoints: { http_request_firewall_custom: custom(rule('log', 'true'), rule('block', 'http.hots eq "x"', { ref: 'typo' })) } }));
    assert.equal(z.problems.length, 1);
    const p = z.problems[0];
    assert.equal(p.stage, 'http_request_firewall_custom');
    assert.equal(p.ruleIndex, 1);
    assert.equal(p.ref, 'typo');
    assert.match(p.message, /rule 2 "typo".*does not compile/);
    assert.equal(p.diagnostics?.[0].code, 'unknown-identifier');
  });

  test('warnings: overrides for unknown rules, misplaced score_threshold, other phases', () => {
    const z = compileZone(
      zone({
        entryPoints: {
          http_request_firewall_managed: managedEp(exec(OWASP, { overrides: { rules: [{ id: 'f'.repeat(32), action: 'log' }, { id: O1.id, score_threshold: 5 }] } })),
          http_request_transform: { phase: 'http_request_transform', rules: [] },
        },
      }),
    );
    const msgs = z.problems.map((p) => `${p.severity}: ${p.message}`);
    assert.equal(msgs.length, 3, msgs.join('\n'));
    assert.ok(msgs.every((m) => m.startsWith('warning')));
    assert.ok(msgs.some((m) => m.includes('no such rule')));
    assert.ok(msgs.some((m) => m.includes('only the anomaly-score rule')));
    assert.ok(msgs.some((m) => m.includes('http_request_transform entry point is not evaluated')));
  });
});

describe('execute: a pinned version of a custom ruleset', () => {
  // customRulesets may give an id more than once with distinct versions (the rules service
  // gives the versions its zone's execute rules pin, before the current one): the last one
  // is current, the others run where an execute rule pins them.
  const version = (v: string, path: string): Ruleset => ({ id: CUSTOM, name: `mine v${v}`, kind: 'custom', version: v, phase: 'http_request_firewall_custom', rules: [rule('block', `http.request.uri.path eq "${path}"`, { ref: 'r' })] });
  const both = [version('1', '/one'), version('2', '/two')];
  const warnings = (z: ReturnType<typeof compileZone>) => z.problems.filter((p) => p.severity === 'warning').map((p) => p.message);
  runCases([
    { name: 'version 1 pinned runs version 1', zone: zone({ entryPoints: { http_request_firewall_custom: custom(exec(CUSTOM, { version: '1', ref: 'pin' })) }, customRulesets: both }), request: req({ path: '/one' }), action: 'block', ref: 'r' },
    { name: 'version 1 pinned does not run the current version', zone: zone({ entryPoints: { http_request_firewall_custom: custom(exec(CUSTOM, { version: '1', ref: 'pin' })) }, customRulesets: both }), request: req({ path: '/two' }), action: 'allow-through' },
    { name: 'no version runs the current one (the last given)', zone: zone({ entryPoints: { http_request_firewall_custom: custom(exec(CUSTOM, { ref: 'run' })) }, customRulesets: both }), request: req({ path: '/two' }), action: 'block', ref: 'r' },
    { name: '"latest" runs the current one', zone: zone({ entryPoints: { http_request_firewall_custom: custom(exec(CUSTOM, { version: 'latest', ref: 'run' })) }, customRulesets: both }), request: req({ path: '/one' }), action: 'allow-through' },
    {
      name: 'two execute rules may run two versions of it',
      zone: zone({ entryPoints: { http_request_firewall_custom: custom(exec(CUSTOM, { version: '1', ref: 'old' }), exec(CUSTOM, { version: '2', ref: 'new' })) }, customRulesets: both }),
      request: req({ path: '/two' }),
      action: 'block',
      check: (ev) => assert.equal(ev.decision.via?.ref, 'new'),
    },
  ]);
  test('given versions are not a warning; a pinned version not given runs the current one, with a warning', () => {
    assert.deepEqual(warnings(compileZone(zone({ entryPoints: { http_request_firewall_custom: custom(exec(CUSTOM, { version: '1' })) }, customRulesets: both }))), []);
    const z = compileZone(zone({ entryPoints: { http_request_firewall_custom: custom(exec(CUSTOM, { version: '7', ref: 'seven' })) }, customRulesets: both }));
    assert.deepEqual(warnings(z), [`rule 1 "seven" asks for version 7 of custom ruleset ${CUSTOM}; versions 1, 2 are known, and the current one (2) runs`]);
    assert.equal(z.evaluate(req({ path: '/two' })).decision.action, 'block');
  });
  // The rate limiter is handed the rule's own settings, so a pinned version counts with its own
  // limit even where its rule has the id of the current version's (a proxy keyed by rule id did not).
  test("a pinned rate limiting ruleset's rule is counted with that version's ratelimit", () => {
    const rl = (v: string, requests: number): Ruleset => ({
      id: CUSTOM,
      kind: 'custom',
      version: v,
      phase: 'http_ratelimit',
      rules: [{ id: 'c'.repeat(32), ref: 'limit', action: 'block', expression: 'true', ratelimit: { characteristics: ['ip.src'], period: 60, requests_per_period: requests } }],
    });
    const pinned = zone({ entryPoints: { http_ratelimit: { id: 'd'.repeat(32), kind: 'zone', phase: 'http_ratelimit', rules: [exec(CUSTOM, { version: '1' })] } }, customRulesets: [rl('1', 2), rl('2', 100)] });
    const seen: unknown[] = [];
    const reached: unknown[] = [];
    compileZone(pinned).evaluate(req(), undefined, {
      rateLimitReached: (ref, _f, limit) => reached.push([ref.ruleId, limit.requests_per_period]),
      rateLimitExceeded: (ref, _f, limit) => (seen.push([ref.ruleId, limit?.requests_per_period]), false),
    });
    assert.deepEqual([reached, seen], [[['c'.repeat(32), 2]], [['c'.repeat(32), 2]]]);
  });
  test('a rate limiting rule whose counting expression does not compile is reported: it would count nothing', () => {
    const z = compileZone(
      zone({ entryPoints: { http_ratelimit: { id: 'd'.repeat(32), kind: 'zone', phase: 'http_ratelimit', rules: [{ id: 'c'.repeat(32), ref: 'limit', action: 'block', expression: 'true', ratelimit: { characteristics: ['ip.src'], period: 60, requests_per_period: 5, counting_expression: 'http.response.code eq' } }] } } }),
    );
    assert.deepEqual(
      z.problems.map((p) => [p.severity, p.message.split(':').slice(0, 2).join(':')]),
      [['error', 'rule 1 "limit": the counting expression does not compile, so the rule counts no request']],
    );
  });
  test('the same id twice without distinct versions: the last one runs, with a warning', () => {
    for (const given of [[version('1', '/one'), version('1', '/two')], [{ ...version('1', '/one'), version: undefined }, version('2', '/two')]]) {
      const z = compileZone(zone({ entryPoints: { http_request_firewall_custom: custom(exec(CUSTOM, { version: '1' })) }, customRulesets: given }));
      assert.ok(warnings(z).includes(`two custom rulesets have id ${CUSTOM}; the last one is used`), JSON.stringify(warnings(z)));
    }
  });
});

// --- Legacy firewall rules --------------------------------------------------------------

describe('legacy firewall rules', () => {
  let k = 0;
  const fw = (action: LegacyFirewallRule['action'], expression: string, extra: Partial<LegacyFirewallRule> = {}): LegacyFirewallRule => ({
    id: id(`f${(++k).toString(16)}`),
    ref: extra.ref ?? `fw${k}`,
    action,
    filter: { expression, ...(extra.filter ?? {}) },
    ...extra,
  });
  const legacyZone = (rules: LegacyFirewallRule[], extra: Partial<ZoneConfig> = {}, migrated = false) => zone({ legacy: { firewallRules: rules, migrated }, ...extra });

  test('order: priority ascending, no priority last, ties by action precedence then list order', () => {
    const rules = [
      { action: 'block', priority: null, ref: 'a' },
      { action: 'log', priority: 5, ref: 'b' },
      { action: 'block', priority: 1, ref: 'c' },
      { action: 'allow', priority: 5, ref: 'd' },
      { action: 'bypass', priority: 5, ref: 'e' },
      { action: 'log', priority: undefined, ref: 'f' },
      { action: 'js_challenge', priority: 5, ref: 'g' },
      { action: 'challenge', priority: 5, ref: 'h' },
      { action: 'managed_challenge', priority: 5, ref: 'i' },
      { action: 'block', priority: 5, ref: 'j' },
    ] as const;
    assert.deepEqual(
      legacyOrder(rules).map((r) => r.ref),
      ['c', 'b', 'e', 'd', 'h', 'i', 'g', 'j', 'f', 'a'],
    );
  });

  runCases([
    {
      name: 'priority decides: the lower number runs first',
      zone: legacyZone([fw('block', 'true', { ref: 'p2', priority: 2 }), fw('challenge', 'true', { ref: 'p1', priority: 1 })]),
      request: req(),
      action: 'challenge',
      ref: 'p1',
      check: (ev) => assert.equal(ev.decision.phase, 'legacy_firewall_rules'),
    },
    {
      name: 'equal priority: allow runs before block and stops the firewall rules; later phases still run',
      zone: legacyZone([fw('block', 'true', { ref: 'blk' }), fw('allow', 'true', { ref: 'alw' })], {
        entryPoints: { http_request_firewall_custom: custom(rule('log', 'true', { ref: 'cl' })) },
      }),
      request: req(),
      action: 'allow-through',
      trace: ['alw:allowed', 'blk:skipped', 'cl:logged'],
    },
    {
      name: 'log runs first and does not stop evaluation',
      zone: legacyZone([fw('block', 'true', { ref: 'blk' }), fw('log', 'true', { ref: 'lg' })]),
      request: req(),
      action: 'block',
      ref: 'blk',
      trace: ['lg:logged', 'blk:terminated'],
      logs: ['lg:log'],
    },
    {
      name: 'a rule with no priority runs after those with one',
      zone: legacyZone([fw('block', 'true', { ref: 'none' }), fw('js_challenge', 'true', { ref: 'p9', priority: 9 })]),
      request: req(),
      action: 'js_challenge',
      ref: 'p9',
    },
    {
      name: 'paused rules and rules with a paused filter are skipped',
      zone: legacyZone([fw('block', 'true', { ref: 'paused', paused: true, priority: 1 }), fw('block', 'true', { ref: 'fpaused', filter: { expression: 'true', paused: true }, priority: 2 }), fw('managed_challenge', 'true', { ref: 'live', priority: 3 })]),
      request: req(),
      action: 'managed_challenge',
      ref: 'live',
      trace: ['live:terminated'],
      check: (ev) => assert.deepEqual(ev.trace.filter((t) => t.outcome === 'disabled').map((t) => t.ref).sort(), ['fpaused', 'paused']),
    },
    {
      name: 'bypass waf skips the managed phase; custom rules still run',
      zone: legacyZone([fw('bypass', 'http.request.uri.path eq "/api"', { ref: 'byp', products: ['waf'] })], {
        entryPoints: {
          http_request_firewall_custom: custom(rule('log', 'true', { ref: 'cl' })),
          http_request_firewall_managed: managedEp(rule('block', 'true', { ref: 'mb' })),
        },
      }),
      request: req({ path: '/api' }),
      action: 'allow-through',
      trace: ['byp:bypassed', 'cl:logged', 'http_request_firewall_managed:skipped'],
      check: (ev) => assert.equal(ev.skippedProducts.waf?.ref, 'byp'),
    },
    {
      name: 'bypass rateLimit skips the rate-limit phase',
      zone: legacyZone([fw('bypass', 'true', { ref: 'byp', products: ['rateLimit', 'securityLevel'] })], {
        entryPoints: { http_ratelimit: { phase: 'http_ratelimit', rules: [rule('block', 'true', { ref: 'rl' })] } },
      }),
      request: req(),
      action: 'allow-through',
      trace: ['byp:bypassed', 'http_ratelimit:skipped'],
      check: (ev) => assert.deepEqual(Object.keys(ev.skippedProducts).sort(), ['rateLimit', 'securityLevel']),
    },
    {
      name: 'bypass securityLevel only records the product: the next rule still blocks',
      zone: legacyZone([fw('bypass', 'true', { ref: 'byp', products: ['securityLevel'] }), fw('block', 'true', { ref: 'blk' })]),
      request: req(),
      action: 'block',
      ref: 'blk',
    },
    {
      name: 'a blocking firewall rule ends everything: custom rules do not run',
      zone: legacyZone([fw('block', 'ip.src eq 192.0.2.1', { ref: 'blk' })], { entryPoints: { http_request_firewall_custom: custom(rule('log', 'true', { ref: 'cl' })) } }),
      request: req(),
      action: 'block',
      ref: 'blk',
      absent: ['cl:logged'],
    },
    {
      name: 'a migrated zone ignores its firewall rules',
      zone: legacyZone([fw('block', 'true', { ref: 'blk' })], {}, true),
      request: req(),
      action: 'allow-through',
      check: (ev) => assert.equal(ev.trace.length, 0),
    },
    {
      name: 'a deleted filter is a problem, not a throw',
      zone: legacyZone([fw('block', 'true', { ref: 'gone', filter: { id: '1'.repeat(32), deleted: true, expression: undefined } })]),
      request: req(),
      action: 'allow-through',
      problems: 1,
      trace: ['gone:invalid'],
    },
  ]);
});

// --- Validation mode --------------------------------------------------------------------

describe('managed-rules migration validation mode', () => {
  const z = (extra: Partial<ZoneConfig> = {}) =>
    zone({ entryPoints: { http_request_firewall_managed: managedEp(exec(VENDOR, { ref: 'ex' })) }, legacy: { firewallRules: [], migrated: true, validationMode: true }, ...extra });
  runCases([
    {
      name: 'the new rules run first and only record; no stand-in lets the request through',
      zone: z(),
      request: req({ query: 'jndi' }),
      action: 'allow-through',
      trace: ['d1:validation-only', 'previous_waf:not-matched'],
      check: (ev) => {
        assert.equal(ev.validation?.newDecision.action, 'block');
        assert.equal(ev.validation?.newDecision.ref, 'd1');
        assert.match(ev.trace[ev.trace.length - 1].note ?? '', /no previous-WAF stand-in/);
        assert.deepEqual(ev.logs.map((l) => `${l.ref}:${l.outcome}`), ['d1:validation-only']);
      },
    },
    {
      name: "the previous WAF's verdict acts",
      zone: z(),
      options: { previousWaf: (f) => (f.get('http.request.uri.query') !== undefined ? { action: 'challenge', ruleId: '100001', description: 'old rule' } : undefined) },
      request: req({ query: 'jndi' }),
      action: 'challenge',
      ref: '100001',
      trace: ['d1:validation-only', '100001:terminated'],
      check: (ev) => {
        assert.equal(ev.decision.phase, 'previous_waf');
        assert.equal(ev.validation?.previous?.action, 'challenge');
      },
    },
    {
      name: 'previous WAF in simulate mode only logs',
      zone: z(),
      options: { previousWaf: () => ({ action: 'simulate', ruleId: '100002' }) },
      request: req(),
      action: 'allow-through',
      logs: ['100002:simulate'],
    },
    {
      name: 'the previous WAF passes: the new verdict is only reported',
      zone: z(),
      options: { previousWaf: () => undefined },
      request: req({ query: 'jndi' }),
      action: 'allow-through',
      check: (ev) => assert.equal(ev.validation?.newDecision.action, 'block'),
    },
    {
      name: 'custom rules still act in validation mode',
      zone: z({ entryPoints: { http_request_firewall_custom: custom(rule('block', 'true', { ref: 'cb' })), http_request_firewall_managed: managedEp(exec(VENDOR)) } }),
      request: req(),
      action: 'block',
      ref: 'cb',
    },
    {
      name: 'a skip of product waf skips the previous WAF',
      zone: z({ entryPoints: { http_request_firewall_custom: custom(rule('skip', 'true', { ref: 'sk', action_parameters: { products: ['waf'] } })), http_request_firewall_managed: managedEp(exec(VENDOR)) } }),
      options: { previousWaf: () => ({ action: 'block' }) },
      request: req(),
      action: 'allow-through',
      trace: ['sk:skip', 'previous_waf:skipped'],
    },
  ]);

  test("a client that has solved the challenge passes the previous WAF's challenge, as a rule's; its block still blocks", () => {
    const challenge = compileZone(z(), { previousWaf: () => ({ action: 'challenge', ruleId: '100001', description: 'old rule' }) });
    const passed = challenge.evaluate(req({ query: 'jndi' }), undefined, { challengePassed: () => true });
    assert.deepEqual([passed.decision.action, passed.logs.map((l) => `${l.ref}:${l.action}:${l.outcome}`)], ['allow-through', ['d1:block:validation-only', '100001:challenge:logged']]);
    assert.equal(challenge.evaluate(req({ query: 'jndi' }), undefined, { challengePassed: () => false }).decision.action, 'challenge');
    const block = compileZone(z(), { previousWaf: () => ({ action: 'block', ruleId: '100002' }) });
    assert.equal(block.evaluate(req(), undefined, { challengePassed: () => true }).decision.action, 'block');
  });

  test("omitIdleRules: the previous WAF that let the request through (no stand-in, or it passed) leaves no entry; the rest as in the full trace", () => {
    for (const options of [{}, { previousWaf: () => undefined }]) {
      const c = compileZone(z(), options);
      const full = c.evaluate(req({ query: 'jndi' }));
      const acting = c.evaluate(req({ query: 'jndi' }), undefined, { omitIdleRules: true });
      assert.ok(full.trace.some((t) => t.phase === 'previous_waf' && t.outcome === 'not-matched'));
      assert.deepEqual(acting.trace, full.trace.filter((t) => t.outcome !== 'not-matched' && t.outcome !== 'disabled'));
      assert.deepEqual(acting.trace.map((t) => `${t.ref}:${t.outcome}`), ['ex:executed', 'd1:validation-only']);
      assert.deepEqual({ ...acting, trace: [] }, { ...full, trace: [] });
    }
  });
});

// --- The whole trace --------------------------------------------------------------------

describe('trace content', () => {
  const traced = () =>
    compileZone(
      zone({
        legacy: { firewallRules: [{ id: id('aa'), ref: 'fw-log', action: 'log', filter: { expression: 'http.request.method eq "POST"' } }], migrated: false },
        entryPoints: {
          http_request_firewall_custom: { id: 'f'.repeat(32), phase: 'http_request_firewall_custom', rules: [{ id: id('b1'), ref: 'admin', description: 'Admin area', action: 'block', expression: 'http.request.uri.path eq "/admin"' }, { id: id('b2'), ref: 'off', action: 'block', expression: 'true', enabled: false }] },
          http_request_firewall_managed: {
            id: 'e'.repeat(32),
            phase: 'http_request_firewall_managed',
            rules: [{ id: id('c1'), ref: 'owasp', action: 'execute', expression: 'true', action_parameters: { id: OWASP, overrides: { categories: [{ category: 'paranoia-level-4', enabled: false }] } } }],
          },
        },
      }),
    );

  test('every rule looked at, in order, with stage, ruleset, rule, state and outcome', () => {
    const ev = traced().evaluate(ATTACK);
    const rows = ev.trace.map((t) => [t.phase, t.rulesetId?.slice(0, 2) ?? null, t.ref, t.depth, t.enabled, t.matched ?? null, t.action, t.outcome, t.scoreAdded ?? null, t.score ?? null]);
    assert.deepEqual(rows, [
      ['legacy_firewall_rules', null, 'fw-log', 0, true, false, 'log', 'not-matched', null, null],
      ['http_request_firewall_custom', 'ff', 'admin', 0, true, false, 'block', 'not-matched', null, null],
      ['http_request_firewall_custom', 'ff', 'off', 0, false, null, 'block', 'disabled', null, null],
      ['http_request_firewall_managed', 'ee', 'owasp', 0, true, true, 'execute', 'executed', null, null],
      ['http_request_firewall_managed', 'aa', '01', 1, true, true, 'score', 'scored', 5, 5],
      ['http_request_firewall_managed', 'aa', '02', 1, true, true, 'score', 'scored', 5, 10],
      ['http_request_firewall_managed', 'aa', '03', 1, true, false, 'score', 'not-matched', null, null],
      ['http_request_firewall_managed', 'aa', '04', 1, true, true, 'score', 'scored', 3, 13],
      ['http_request_firewall_managed', 'aa', '05', 1, false, null, 'score', 'disabled', null, null],
      ['http_request_firewall_managed', 'aa', 'anomaly', 1, true, true, 'block', 'terminated', null, 13],
    ]);
    assert.equal(ev.trace[1].description, 'Admin area');
    assert.deepEqual(ev.trace[8].overriddenBy, ['category:paranoia-level-4']);
    assert.equal(ev.trace[9].threshold, 10);
    assert.deepEqual(ev.decision, {
      action: 'block',
      phase: 'http_request_firewall_managed',
      rulesetId: OWASP,
      ruleId: ANOMALY,
      ref: 'anomaly',
      description: '949110: Inbound Anomaly Score Exceeded',
      score: 13,
      threshold: 10,
      via: { phase: 'http_request_firewall_managed', rulesetId: 'e'.repeat(32), rulesetName: undefined, ruleId: id('c1'), ref: 'owasp', description: undefined },
    });
  });

  test('omitIdleRules (the WAF proxy): only the rules that acted, the same decision and scores', () => {
    const z = traced();
    const full = z.evaluate(ATTACK);
    const acting = z.evaluate(ATTACK, undefined, { omitIdleRules: true });
    assert.deepEqual(
      acting.trace.map((t) => [t.ref, t.outcome]),
      [
        ['owasp', 'executed'],
        ['01', 'scored'],
        ['02', 'scored'],
        ['04', 'scored'],
        ['anomaly', 'terminated'],
      ],
    );
    assert.deepEqual(acting.trace, full.trace.filter((t) => t.outcome !== 'not-matched' && t.outcome !== 'disabled'));
    assert.deepEqual(acting.decision, full.decision);
    assert.deepEqual(acting.scores, { [OWASP]: 13 });
  });

  test('compiled once: evaluating many requests gives independent results', () => {
    const z = compileZone(zone({ entryPoints: { http_request_firewall_managed: managedEp(exec(OWASP)) } }));
    const a = z.evaluate(ATTACK);
    const b = z.evaluate(req());
    assert.equal(a.decision.action, 'block');
    assert.equal(b.decision.action, 'allow-through');
    assert.deepEqual(b.scores, { [OWASP]: 0 });
    assert.ok(b.trace.every((t) => (t.outcome as Outcome) !== 'scored'));
  });
});

// --- Malformed input --------------------------------------------------------------------

describe('malformed configuration: problems, never a throw', () => {
  const cases: { name: string; zone: unknown; errors: number }[] = [
    { name: 'rules that are not objects', zone: { entryPoints: { http_request_firewall_custom: { rules: [1, null, 'x', { ref: 'ok', action: 'log', expression: 'true' }] } } }, errors: 3 },
    { name: 'rules that is not an array', zone: { entryPoints: { http_request_firewall_custom: { rules: 'nope' } } }, errors: 1 },
    { name: 'an entry point that is not an object', zone: { entryPoints: { http_request_firewall_custom: 7 } }, errors: 1 },
    {
      name: 'skip parameters of the wrong types',
      zone: { entryPoints: { http_request_firewall_custom: { rules: [{ ref: 's', action: 'skip', expression: 'true', action_parameters: { phases: 'http_ratelimit', rules: ['x'], ruleset: 'all', products: [1] } }] } } },
      errors: 4,
    },
    {
      name: 'overrides of the wrong types',
      zone: {
        entryPoints: {
          http_request_firewall_managed: {
            rules: [{ ref: 'x', action: 'execute', expression: 'true', action_parameters: { id: VENDOR, overrides: { categories: { category: 'log4j' }, rules: [{ action: 'log' }] } } }],
          },
        },
      },
      errors: 2,
    },
    { name: 'execute without parameters', zone: { entryPoints: { http_request_firewall_managed: { rules: [{ ref: 'x', action: 'execute', expression: 'true' }] } } }, errors: 1 },
    {
      name: 'legacy rules that are not objects, unknown actions, no filter',
      zone: { entryPoints: {}, legacy: { migrated: false, firewallRules: [null, { action: 'allow-all', filter: { expression: 'true' } }, { action: 'block' }] } },
      errors: 3,
    },
    { name: 'custom rulesets that are not objects', zone: { entryPoints: {}, customRulesets: [null] }, errors: 1 },
    { name: 'categories that are not an array on a rule', zone: { entryPoints: { http_request_firewall_custom: { rules: [{ ref: 'x', action: 'log', expression: 'true', categories: 'log4j' }] } } }, errors: 0 },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const z = compileZone({ catalog: CATALOG, ...(c.zone as object) } as ZoneConfig);
      assert.equal(z.problems.filter((p) => p.severity === 'error').length, c.errors, JSON.stringify(z.problems, null, 1));
      const ev = z.evaluate(req({ query: 'jndi' }));
      assert.ok(ev.decision.action);
    });
  }
});

describe('more skip cases', () => {
  runCases([
    {
      name: 'phase: current inside an executed custom ruleset skips the rest of the phase, entry point included',
      zone: zone({
        entryPoints: {
          http_request_firewall_custom: custom(exec(CUSTOM, { ref: 'ex' }), rule('block', 'true', { ref: 'ep-block' })),
          http_request_firewall_managed: managedEp(rule('log', 'true', { ref: 'ml' })),
        },
        customRulesets: [{ id: CUSTOM, kind: 'custom', phase: 'http_request_firewall_custom', rules: [rule('skip', 'true', { ref: 'sk', action_parameters: { phase: 'current', products: ['bic'] } }), rule('block', 'true', { ref: 'inner' })] }],
      }),
      request: req(),
      action: 'allow-through',
      trace: ['ex:executed', 'sk:skip', 'inner:skipped', 'ep-block:skipped', 'ml:logged'],
    },
    {
      name: 'rules map on a custom ruleset skips its rule where it is executed',
      zone: zone({
        entryPoints: { http_request_firewall_custom: custom(rule('skip', 'true', { ref: 'sk', action_parameters: { rules: { [CUSTOM]: [id('c0ffee')] } } }), exec(CUSTOM, { ref: 'ex' })) },
        customRulesets: [{ id: CUSTOM, kind: 'custom', phase: 'http_request_firewall_custom', rules: [{ id: id('c0ffee'), ref: 'inner', action: 'block', expression: 'true' }, rule('log', 'true', { ref: 'inner-log' })] }],
      }),
      request: req(),
      action: 'allow-through',
      trace: ['inner:skipped', 'inner-log:logged'],
    },
    {
      name: 'a skip of a phase that already ran changes nothing',
      zone: zone({
        entryPoints: {
          http_request_firewall_custom: custom(rule('log', 'true', { ref: 'cl' })),
          http_request_firewall_managed: managedEp(rule('skip', 'true', { ref: 'sk', action_parameters: { phases: ['http_request_firewall_custom'] } }), rule('block', 'true', { ref: 'mb' })),
        },
      }),
      request: req(),
      action: 'block',
      trace: ['cl:logged', 'sk:skip', 'mb:terminated'],
    },
  ]);
});

describe('override values the engine cannot use, and overrides that change the deciding rule', () => {
  const ANOMALY_TAGGED: ManagedRule = { ...OA, categories: ['attack-generic'] };
  const TAGGED: ManagedCatalog = {
    rulesets: CATALOG.rulesets.map((rs) => (rs.id === OWASP ? { ...rs, versions: rs.versions.map((v) => ({ ...v, rules: v.rules.map((r) => (r.id === ANOMALY ? ANOMALY_TAGGED : r)) })) } : rs)),
  };
  const owaspZone = (overrides: unknown, catalog = CATALOG) =>
    compileZone({ catalog, entryPoints: { http_request_firewall_managed: managedEp(exec(OWASP, { ref: 'ex', overrides: overrides as Overrides })) } });
  const messages = (z: ReturnType<typeof compileZone>) => z.problems.map((p) => `${p.severity}: ${p.message}`);

  test('a null, zero or text score_threshold is reported and dropped: the threshold stays the rule\'s own', () => {
    for (const t of [null, 0, 'abc', 2.5]) {
      const z = owaspZone({ rules: [{ id: ANOMALY, score_threshold: t }] });
      assert.deepEqual(messages(z), [`warning: overrides.rules[0].score_threshold must be a whole number of at least 1, not ${JSON.stringify(t)}; ignored`]);
      // Below the rule's own threshold of 10: let through, as with no override.
      assert.equal(z.evaluate(req({ query: 'union' })).decision.action, 'allow-through');
    }
  });

  test('an "enabled" that is not a boolean is reported and dropped, in a category or a rule override', () => {
    const z = owaspZone({ categories: [{ category: 'attack-sqli', enabled: null }], rules: [{ id: O1.id, enabled: 'false' }] });
    assert.deepEqual(messages(z), ['warning: overrides.categories[0].enabled must be true or false, not null; ignored', 'warning: overrides.rules[0].enabled must be true or false, not "false"; ignored']);
    assert.deepEqual(z.evaluate(req({ query: 'union select' })).scores, { [OWASP]: 10 });
  });

  test('a category no rule has is reported; the paranoia levels are always known', () => {
    const z = owaspZone({ categories: [{ category: 'nope', enabled: false }, { category: 'paranoia-level-4', enabled: false }] });
    assert.deepEqual(messages(z), [`warning: override for category nope: no rule of ruleset ${OWASP} has it; it has no effect`]);
  });

  test('a category override that also covers the anomaly-score rule says so, and that the ruleset then never acts', () => {
    const z = owaspZone({ categories: [{ category: 'attack-generic', enabled: false }] }, TAGGED);
    assert.deepEqual(messages(z), [
      `warning: the override of category attack-generic also applies to the anomaly-score rule ${ANOMALY} (949110: Inbound Anomaly Score Exceeded), which has that tag: it is disabled too; override rule ${ANOMALY} itself to keep it as it was`,
      `warning: the anomaly-score rule ${ANOMALY} is disabled by the overrides: the ruleset adds up scores and never acts; enable it with a rule override {"id": "${ANOMALY}", "enabled": true}`,
    ]);
    const kept = owaspZone({ categories: [{ category: 'attack-generic', enabled: false }], rules: [{ id: ANOMALY, enabled: true }] }, TAGGED);
    assert.deepEqual(messages(kept), [
      `warning: the override of category attack-generic also applies to the anomaly-score rule ${ANOMALY} (949110: Inbound Anomaly Score Exceeded), which has that tag: it is disabled too; override rule ${ANOMALY} itself to keep it as it was`,
    ]);
    assert.equal(kept.evaluate(ATTACK).decision.action, 'block');
  });

  test('the whole ruleset switched off is no dead deployment; one level switched back on under it is', () => {
    assert.deepEqual(messages(owaspZone({ enabled: false })), []);
    assert.deepEqual(messages(owaspZone({ enabled: false, categories: [{ category: 'paranoia-level-1', enabled: true }] })), [
      `warning: the anomaly-score rule ${ANOMALY} is disabled by the overrides: the ruleset adds up scores and never acts; enable it with a rule override {"id": "${ANOMALY}", "enabled": true}`,
    ]);
  });
});
