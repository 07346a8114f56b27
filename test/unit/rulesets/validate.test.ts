// Ruleset validation, data-driven: each fixture in test/fixtures/rulesets/ with every
// problem it gives — code, severity, the exact text of the JSON node it points at, and
// the message. Fixtures use a small test catalog (catalog.json) so that rule ids stay
// stable whatever the shipped managed rulesets become.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import type { ManagedCatalog } from '../../../server/src/rulesets/catalog';
import { defaultCatalog } from '../../../server/src/managed/catalog';
import { actionsFor } from '../../../server/src/rulesets/actions';
import { validateRulesetJson, type RulesetProblem, type ValidateOptions } from '../../../server/src/rulesets/validate';
import { ratelimitPlanProblems } from '../../../server/src/rulesets/rateLimitParams';

const dir = new URL('../../fixtures/rulesets/', import.meta.url).pathname;
const catalog = JSON.parse(readFileSync(`${dir}catalog.json`, 'utf8')) as ManagedCatalog;
const O = '4814384a9e5d4991b9815dcfc25d2f1f';
const V = 'efb7b8c949ac4650a09736fc376e9aee';
const A = '6179ae15870a4bb7b2d480d4843b323c';

/** [code, severity, covered text, message, occurrence of the covered text (default 0)] */
type Expected = [string, RulesetProblem['severity'], string, string, number?];

function validate(text: string, options: Partial<ValidateOptions> = {}): RulesetProblem[] {
  return validateRulesetJson(text, { catalog, ...options });
}

/** Asserts the problems, each at the exact node: `covered` is found at its nth occurrence. */
function expectProblems(text: string, problems: readonly RulesetProblem[], expected: readonly Expected[]): void {
  const actual = problems.map((p) => [p.code, p.severity, text.slice(p.start, p.end), p.message]);
  assert.deepEqual(actual, expected.map((e) => e.slice(0, 4)));
  expected.forEach(([, , covered, , nth = 0], i) => {
    let at = -1;
    for (let k = 0; k <= nth; k++) at = text.indexOf(covered, at + 1);
    assert.equal(problems[i].start, at, `start of ${expected[i][0]} (${covered} #${nth})`);
  });
}

const CASES: Record<string, Expected[]> = {
  'valid-managed': [],
  'wrong-type': [['wrong-type', 'error', '"yes"', '"enabled" must be a boolean, not a string']],
  'unknown-field': [['unknown-field', 'error', '"priority"', 'invalid JSON: unknown field "priority"']],
  'missing-field': [
    ['missing-field', 'error', '{', 'a rule needs an "action"', 1],
    ['missing-expression', 'error', '{', 'a rule needs an "expression"', 2],
  ],
  'invalid-value': [['invalid-value', 'error', '"zones"', "'zones' is not a valid value for kind"]],
  'unknown-action': [['unknown-action', 'error', '"allow"', 'unknown variant for action: allow']],
  'action-not-in-phase': [
    [
      'action-not-in-phase',
      'error',
      '"block"',
      "'block' is not a valid value for Action because it is not possible to use the block action in a ruleset with phase http_request_firewall_managed and kind zone",
    ],
  ],
  'block-response': [
    ['invalid-action-parameters', 'error', '302', "'302' is not a valid value for status_code: a block response uses a status code from 400 to 499"],
    ['missing-field', 'error', '"response"', 'a block response needs "content_type"', 1],
    ['invalid-action-parameters', 'error', '"text/html\\r\\nSet-Cookie: a=b"', "'text/html\r\nSet-Cookie: a=b' is not a valid value for content_type: a block response is one of application/json, text/html, text/plain, text/xml", 2],
  ],
  'skip-parameters': [
    ['invalid-action-parameters', 'error', `"rulesets": ["${V}"]`, '"rulesets" cannot be combined with "ruleset"'],
    ['invalid-action-parameters', 'warning', '"uablock"', "write the product as 'uaBlock'"],
    ['invalid-action-parameters', 'error', '"cache"', "'cache' is not a valid value for products"],
    ['invalid-action-parameters', 'error', '"action_parameters": { "response": {} }', 'the log action takes no action_parameters'],
    [
      'action-not-in-phase',
      'error',
      '"score"',
      "'score' is not a valid value for Action because it is not possible to use the score action in a ruleset with phase http_request_firewall_custom and kind custom",
    ],
    ['wrong-type', 'error', '2.5', '"increment" must be an integer, not a number'],
  ],
  'unknown-managed-ruleset': [['unknown-managed-ruleset', 'error', '"0123456789abcdef0123456789abcdef"', "'0123456789abcdef0123456789abcdef' is not a known managed ruleset"]],
  'unknown-ruleset-version': [['unknown-ruleset-version', 'error', '"7"', 'Cloudflare Managed Ruleset has no version 7']],
  'unknown-category': [['unknown-category', 'error', '"wordpres"', "'wordpres' is not a category of Cloudflare Managed Ruleset (version 2)"]],
  'unknown-rule-id': [['unknown-rule-id', 'error', '"22222222222222222222222222222203"', "'22222222222222222222222222222203' is not a rule of Cloudflare Managed Ruleset (version 1)"]],
  'misplaced-threshold-overrides': [
    ['misplaced-override-action', 'warning', '"action": "managed_challenge"', 'this action replaces the score action of every rule of Cloudflare OWASP Core Ruleset: matching rules act on their own instead of adding to the anomaly score'],
    ['misplaced-score-threshold', 'error', '"score_threshold": 25', 'score_threshold has no effect on the ruleset-wide overrides: only the anomaly-score rule "949110: Inbound Anomaly Score Exceeded" has a threshold'],
  ],
  'misplaced-threshold-category': [
    ['misplaced-score-threshold', 'error', '"score_threshold": 60', 'score_threshold has no effect on a category: only the anomaly-score rule "949110: Inbound Anomaly Score Exceeded" has a threshold'],
  ],
  'misplaced-threshold-rule': [
    ['misplaced-score-threshold', 'warning', '"score_threshold": 60', 'score_threshold has no effect on the rule itself: only the anomaly-score rule "949110: Inbound Anomaly Score Exceeded" has a threshold'],
    ['misplaced-score-threshold', 'warning', '"score_threshold": 10', 'score_threshold has no effect on this rule: only the anomaly-score rule "949110: Inbound Anomaly Score Exceeded" has a threshold'],
  ],
  'invalid-override-action': [
    ['invalid-override-action', 'error', '"score"', "'score' is not a valid action for an override"],
    ['invalid-override-action', 'error', '"allow"', "'allow' is not a valid action for an override"],
  ],
  duplicates: [
    ['duplicate-id', 'error', '"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"', "rule 1 already has the id 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa'", 1],
    ['duplicate-ref', 'error', '"one"', "rule 1 already has the ref 'one'", 1],
  ],
  'duplicate-execute': [['duplicate-execute', 'error', `"${V}"`, 'Cloudflare Managed Ruleset is already executed by rule 1; a zone can deploy each managed ruleset once', 1]],
  'duplicate-override': [['duplicate-override', 'warning', '"wordpress"', "category 'wordpress' is already overridden (item 1); the later one wins for the properties both set", 1]],
  'owasp-all-paranoia-levels': [
    ['owasp-all-paranoia-levels', 'warning', `"${O}"`, 'Cloudflare OWASP Core Ruleset is deployed with no paranoia-level override: all four paranoia levels (PL1–PL4) run'],
  ],
  'missing-ref': [
    ['missing-ref', 'information', '{', 'the rule has no "ref"', 1],
    ['missing-ref', 'information', '{', 'the rule has no "ref"', 2],
  ],
  'logging-not-allowed': [['logging-not-allowed', 'error', '"logging": { "enabled": true }', 'logging options only allowed in the skip action']],
  'execute-phase-mismatch': [
    ['execute-phase-mismatch', 'error', `"${O}"`, 'Cloudflare OWASP Core Ruleset runs in phase http_request_firewall_managed; it cannot be executed from a ruleset of phase http_request_firewall_custom'],
  ],
  expression: [['unknown-identifier', 'error', 'http.hots', 'unknown identifier']],
  'api-response': [['unknown-field', 'error', '"paused"', 'invalid JSON: unknown field "paused"']],
  'bare-array': [
    ['owasp-all-paranoia-levels', 'warning', `"${O}"`, 'Cloudflare OWASP Core Ruleset is deployed with no paranoia-level override: all four paranoia levels (PL1–PL4) run'],
    ['misplaced-score-threshold', 'error', '"score_threshold": 60', 'score_threshold has no effect on the ruleset-wide overrides: only the anomaly-score rule "949110: Inbound Anomaly Score Exceeded" has a threshold'],
  ],
};

for (const [name, expected] of Object.entries(CASES)) {
  test(`fixture ${name}.ruleset.json`, () => {
    const text = readFileSync(`${dir}${name}.ruleset.json`, 'utf8');
    expectProblems(text, validate(text), expected);
  });
}

test('every problem code has a fixture', () => {
  const codes = new Set<string>();
  for (const name of Object.keys(CASES)) {
    for (const p of validate(readFileSync(`${dir}${name}.ruleset.json`, 'utf8'))) codes.add(p.code);
  }
  for (const c of [
    'wrong-type', 'unknown-field', 'missing-field', 'invalid-value', 'unknown-action', 'action-not-in-phase', 'invalid-action-parameters', 'logging-not-allowed',
    'unknown-managed-ruleset', 'unknown-ruleset-version', 'execute-phase-mismatch', 'unknown-category', 'unknown-rule-id', 'misplaced-score-threshold',
    'misplaced-override-action', 'invalid-override-action', 'duplicate-override', 'duplicate-id', 'duplicate-ref', 'duplicate-execute', 'owasp-all-paranoia-levels', 'missing-ref',
  ]) {
    assert.ok(codes.has(c), `a fixture gives ${c}`);
  }
});

test('problems carry the rule index, hints, and quick-fix data', () => {
  const text = readFileSync(`${dir}misplaced-threshold-category.ruleset.json`, 'utf8');
  const [p] = validate(text);
  assert.equal(p.rule, 0);
  assert.match(p.hint ?? '', /^Set it in a rule override: .*25 High, 40 Medium, 60 Low/);
  assert.deepEqual(p.data, {
    anomalyRuleId: A,
    paramsPath: ['rules', 0, 'action_parameters'],
    from: ['rules', 0, 'action_parameters', 'overrides', 'categories', 0],
    fromKind: 'category',
    properties: ['score_threshold'],
  });
  const owasp = validate(readFileSync(`${dir}owasp-all-paranoia-levels.ruleset.json`, 'utf8'))[0];
  assert.deepEqual(owasp.data, { rulesetId: O, paramsPath: ['rules', 0, 'action_parameters'], level: 1 });
  assert.equal(owasp.hint, 'Higher paranoia levels catch more and block far more legitimate traffic. Start at PL1 (what the dashboard deploys): disable the categories `paranoia-level-2`, `paranoia-level-3`, `paranoia-level-4`.');
  const refs = validate(readFileSync(`${dir}missing-ref.ruleset.json`, 'utf8'));
  assert.deepEqual(refs.map((r) => r.data), [{ path: ['rules', 0], ref: 'block_bad_bots' }, { path: ['rules', 1], ref: 'rule_2' }]);
  const cat = validate(readFileSync(`${dir}unknown-category.ruleset.json`, 'utf8'))[0];
  assert.deepEqual(cat.data, { suggestions: ['wordpress'] });
  assert.equal(cat.hint, 'Did you mean `wordpress`? The category must be a tag of some rule of the ruleset; completion lists them.');
  const allow = validate(readFileSync(`${dir}unknown-action.ruleset.json`, 'utf8'))[0];
  assert.match(allow.hint ?? '', /^Rulesets have no allow action: use `skip`/);
});

test('expression problems: mapped through escapes, flagged, and skipped with expressions: false', () => {
  const text = readFileSync(`${dir}expression.ruleset.json`, 'utf8');
  const [p] = validate(text);
  assert.equal(p.expression, true);
  assert.equal(p.rule, 0);
  assert.deepEqual(validate(text, { expressions: false }), []);
  // The phase of the file reaches the language core.
  const resp = '{"phase": "http_request_firewall_custom", "rules": [{"ref": "a", "expression": "http.response.code eq 200", "action": "block"}]}';
  assert.deepEqual(validate(resp).map((x) => [x.code, x.expression]), [['not-in-phase', true]]);
  // An empty expression underlines its quotes.
  const empty = '{"rules": [{"ref": "a", "expression": "", "action": "block"}]}';
  const e = validate(empty);
  assert.deepEqual(e.map((x) => [x.code, empty.slice(x.start, x.end)]), [['empty-expression', '""']]);
});

test('the phase: the file\'s own, else the phase of the managed rulesets it deploys, else the option', () => {
  const block = '{"rules": [{"ref": "a", "expression": "true", "action": "block"}]}';
  assert.deepEqual(validate(block), []);
  assert.deepEqual(validate(block, { phase: 'http_request_firewall_managed' }).map((p) => p.code), ['action-not-in-phase']);
  // Deploys a managed ruleset: a managed entry point, whatever the option says.
  const deploy = `{"rules": [{"ref": "a", "expression": "true", "action": "execute", "action_parameters": {"id": "${V}"}}, {"ref": "b", "expression": "true", "action": "block"}]}`;
  assert.deepEqual(validate(deploy, { phase: 'http_request_firewall_custom' }).map((p) => [p.code, p.rule]), [['action-not-in-phase', 1]]);
});

test('custom rulesets: executing a known custom id is fine; overrides on it are not', () => {
  const id = 'cccccccccccccccccccccccccccccccc';
  const text = `{"phase": "http_request_firewall_custom", "kind": "root", "rules": [{"ref": "a", "expression": "true", "action": "execute", "action_parameters": {"id": "${id}"}}]}`;
  assert.deepEqual(validate(text, { customRulesetIds: [id] }), []);
  const unknown = validate(text);
  assert.deepEqual(unknown.map((p) => [p.code, p.severity]), [['unknown-managed-ruleset', 'warning']]);
  const managedPhase = text.replace('http_request_firewall_custom', 'http_request_firewall_managed');
  assert.deepEqual(validate(managedPhase, { customRulesetIds: [] }).map((p) => [p.code, p.severity]), [['unknown-managed-ruleset', 'error']]);
  const root = `{"phase": "http_request_firewall_custom", "kind": "root", "rules": [{"ref": "a", "expression": "true", "action": "block"}]}`;
  assert.deepEqual(validate(root).map((p) => p.code), ['action-not-in-phase']);
});

test('skip: rules of managed rulesets are checked against the catalog; phase needs products', () => {
  const text = `{"phase": "http_request_firewall_managed", "rules": [{"ref": "a", "expression": "true", "action": "skip", "action_parameters": {"phase": "current", "rules": {"${V}": ["22222222222222222222222222222209"], "dddddddddddddddddddddddddddddddd": ["22222222222222222222222222222201"]}}}]}`;
  expectProblems(text, validate(text), [
    ['invalid-action-parameters', 'error', '"phase": "current"', '"phase" is only valid together with "products"'],
    ['unknown-rule-id', 'error', '"22222222222222222222222222222209"', "'22222222222222222222222222222209' is not a rule of Cloudflare Managed Ruleset (version 2)"],
    ['unknown-managed-ruleset', 'warning', '"dddddddddddddddddddddddddddddddd"', "'dddddddddddddddddddddddddddddddd' is not a known managed ruleset"],
  ]);
  const empty = '{"rules": [{"ref": "a", "expression": "true", "action": "skip", "action_parameters": {}}]}';
  assert.deepEqual(validate(empty).map((p) => [p.code, empty.slice(p.start, p.end)]), [['invalid-action-parameters', '{}']]);
});

test('overrides: empty, need a second property, unknown keys, score_threshold on a ruleset without anomaly score', () => {
  const text = `{"phase": "http_request_firewall_managed", "rules": [{"ref": "a", "expression": "true", "action": "execute", "action_parameters": {"id": "${V}", "overrides": {"categories": [{"category": "wordpress"}], "rules": [{"id": "22222222222222222222222222222201", "score_threshold": 30, "mode": "x"}]}}}]}`;
  expectProblems(text, validate(text), [
    ['invalid-action-parameters', 'error', '{"category": "wordpress"}', 'a category override needs at least one of "action", "enabled" or "sensitivity_level"'],
    ['misplaced-score-threshold', 'warning', '"score_threshold": 30', 'score_threshold has no effect on this rule: Cloudflare Managed Ruleset has no anomaly score'],
    ['unknown-field', 'error', '"mode"', 'invalid JSON: unknown field "mode"'],
  ]);
  const empty = `{"rules": [{"ref": "a", "expression": "true", "action": "execute", "action_parameters": {"id": "${V}", "overrides": {}}}]}`;
  assert.deepEqual(validate(empty).map((p) => [p.code, empty.slice(p.start, p.end), p.message]), [['invalid-action-parameters', '{}', 'overrides must have at least one property']]);
});

test('the anomaly rule override takes score_threshold and the five actions; a positive threshold', () => {
  const ok = `{"rules": [{"ref": "a", "expression": "true", "action": "execute", "action_parameters": {"id": "${O}", "overrides": {"categories": [{"category": "paranoia-level-2", "enabled": false}], "rules": [{"id": "${A}", "score_threshold": 25, "action": "js_challenge"}]}}}]}`;
  assert.deepEqual(validate(ok), []);
  const zero = ok.replace('"score_threshold": 25', '"score_threshold": 0');
  assert.deepEqual(validate(zero).map((p) => [p.code, zero.slice(p.start, p.end)]), [['invalid-action-parameters', '0']]);
  const score = ok.replace('"js_challenge"', '"score"');
  assert.deepEqual(validate(score).map((p) => p.code), ['invalid-override-action']);
});

test('execute: missing id, a malformed id, a disabled duplicate is allowed, version pinned', () => {
  const noId = '{"rules": [{"ref": "a", "expression": "true", "action": "execute", "action_parameters": {"version": "latest"}}]}';
  assert.deepEqual(validate(noId).map((p) => [p.code, noId.slice(p.start, p.end), p.message]), [['missing-field', '"action_parameters"', 'execute needs the "id" of the ruleset to run']]);
  const bad = '{"rules": [{"ref": "a", "expression": "true", "action": "execute", "action_parameters": {"id": "EFB7"}}]}';
  assert.deepEqual(validate(bad).map((p) => [p.code, bad.slice(p.start, p.end)]), [['invalid-action-parameters', '"EFB7"']]);
  const noParams = '{"rules": [{"ref": "a", "expression": "true", "action": "execute"}]}';
  assert.deepEqual(validate(noParams).map((p) => [p.code, noParams.slice(p.start, p.end)]), [['missing-field', '"execute"']]);
  const disabled = `{"rules": [{"ref": "a", "expression": "true", "action": "execute", "action_parameters": {"id": "${V}"}}, {"ref": "b", "enabled": false, "expression": "true", "action": "execute", "action_parameters": {"id": "${V}", "version": "1"}}]}`;
  assert.deepEqual(validate(disabled), []);
  // An account (root) may deploy the same ruleset several times.
  const root = `{"kind": "root", "phase": "http_request_firewall_managed", "rules": [{"ref": "a", "expression": "true", "action": "execute", "action_parameters": {"id": "${V}"}}, {"ref": "b", "expression": "true", "action": "execute", "action_parameters": {"id": "${V}"}}]}`;
  assert.deepEqual(validate(root), []);
  const params = '{"rules": [{"ref": "a", "expression": "true", "action_parameters": {"id": "x"}}]}';
  assert.deepEqual(validate(params).map((p) => p.message), ['action is required for action parameters']);
});

test('plan: log in custom rules and payload logging need Enterprise', () => {
  const text = `{"phase": "http_request_firewall_custom", "rules": [{"ref": "a", "expression": "true", "action": "log"}]}`;
  assert.deepEqual(validate(text, { plan: 'pro' }).map((p) => [p.code, p.severity, text.slice(p.start, p.end)]), [['plan-required', 'warning', '"log"']]);
  assert.deepEqual(validate(text, { plan: 'enterprise' }), []);
});

test('rate limiting rules: the periods, timeouts and characteristics the hosted API allows', () => {
  const rl = (ratelimit: unknown) => `{"phase": "http_ratelimit", "rules": [{"ref": "a", "expression": "true", "action": "block", "ratelimit": ${JSON.stringify(ratelimit)}}]}`;
  const problems = (ratelimit: unknown) => {
    const text = rl(ratelimit);
    return validate(text).map((p) => [p.code, text.slice(p.start, p.end), p.message]);
  };
  const ok = ['cf.colo.id', 'lookup_json_string(http.request.body.raw, "user")', 'http.request.headers["x-api-key"]', 'http.request.body.form["user"]', 'lookup_json_integer(http.request.body.raw, "ids", 0)'];
  assert.deepEqual(problems({ characteristics: ok, period: 65535, mitigation_timeout: 0 }), []);
  assert.deepEqual(problems({ characteristics: ['cf.colo.id', 'ip.src'], period: 7, mitigation_timeout: 13 }), [
    ['invalid-value', '7', "'7' is not a valid value for period: a counting period is one of 10, 15, 20, 30, 40, 45, 60, 90, 120, 180, 240, 300, 480, 600, 900, 1200, 1800, 2400, 3600, 65535, 86400 seconds"],
    ['invalid-value', '13', "'13' is not a valid value for mitigation_timeout: a mitigation timeout (0: throttle, act only while over the limit) is one of 0, 10, 15, 20, 30, 40, 45, 60, 90, 120, 180, 240, 300, 480, 600, 900, 1200, 1800, 2400, 3600, 65535, 86400 seconds"],
  ]);
  const [unknown] = problems({ characteristics: ['cf.colo.id', 'ip.source'], period: 60 });
  assert.deepEqual(unknown!.slice(0, 2), ['invalid-value', '"ip.source"']);
  assert.match(unknown![2] as string, /^'ip\.source' is not a rate limiting characteristic this service counts by: use cf\.colo\.id, ip\.src, cf\.unique_visitor_id, /);
  assert.deepEqual(problems({ characteristics: ['cf.unique_visitor_id', 'ip.src'], period: 60 }), [
    ['invalid-value', '["cf.unique_visitor_id","ip.src"]', 'cf.unique_visitor_id (IP with NAT support) cannot be combined with ip.src: keep one of them'],
  ]);
  // An empty counting expression is the rule's own (as the hosted API answers a rule without one).
  assert.deepEqual(problems({ characteristics: ['cf.colo.id', 'ip.src'], period: 60, requests_per_period: 5, counting_expression: '' }), []);
  // Complexity-based counting: the limit and the origin's score header go together.
  assert.deepEqual(problems({ characteristics: ['cf.colo.id', 'ip.src'], period: 60, score_per_period: 400, score_response_header_name: 'x-score' }), []);
  assert.deepEqual(problems({ characteristics: ['cf.colo.id', 'ip.src'], period: 60, score_per_period: 400 }), [
    ['invalid-value', '"score_per_period":400', 'score_per_period needs score_response_header_name: the response header in which the origin gives each request its score'],
  ]);
  assert.deepEqual(problems({ characteristics: ['cf.colo.id', 'ip.src'], period: 60, requests_per_period: 5, score_response_header_name: 'x-score' }), [
    ['invalid-value', '"score_response_header_name":"x-score"', 'score_response_header_name needs score_per_period: the most score a client may add up in a period'],
  ]);
});

test('rate limiting rules: a rule whose expression uses a custom list counts cached assets too (reference §2.1)', () => {
  const rule = (expression: string, toOrigin: boolean) =>
    `{"phase": "http_ratelimit", "rules": [{"ref": "a", "expression": ${JSON.stringify(expression)}, "action": "block", "ratelimit": {"characteristics": ["cf.colo.id", "ip.src"], "period": 60, "requests_per_period": 5, "requests_to_origin": ${toOrigin}}}]}`;
  const found = (text: string) => validate(text).map((p) => [p.code, p.severity, text.slice(p.start, p.end), p.message]);
  assert.deepEqual(found(rule('ip.src in $office', true)), [['invalid-value', 'error', 'true', 'a rule whose expression uses a custom list ($office) counts cached assets too: requests_to_origin must be false']]);
  assert.deepEqual(found(rule('ip.src in $office', false)), []);
  // A managed list is not a custom one; an expression with no list is free to count only what reaches the origin.
  assert.deepEqual(found(rule('ip.src in $cf.open_proxies', true)), []);
  assert.deepEqual(found(rule('http.request.uri.path eq "/login"', true)), []);
  // A list inside `not` is still a list; outside the rate limiting phase the ratelimit is inert, and only that is said.
  assert.equal(found(rule('not ip.src in $office', true)).length, 1);
  const custom = rule('ip.src in $office', true).replace('"http_ratelimit"', '"http_request_firewall_custom"');
  assert.deepEqual(found(custom).map((p) => p[0]), ['ratelimit-not-in-phase']);
});

test("rate limiting rules: the counting expression is checked where it is, and may read the origin's answer", () => {
  const rule = (expression: string, counting: string) =>
    `{"phase": "http_ratelimit", "rules": [{"ref": "a", "expression": ${JSON.stringify(expression)}, "action": "block", "ratelimit": {"characteristics": ["cf.colo.id", "ip.src"], "period": 60, "requests_per_period": 5, "counting_expression": ${JSON.stringify(counting)}}}]}`;
  const found = (text: string) => validate(text).map((p) => [p.code, p.severity, text.slice(p.start, p.end)]);
  assert.deepEqual(found(rule('http.request.uri.path eq "/login"', 'http.response.code eq 401')), []);
  // The rule's own expression is matched before the request goes on.
  assert.deepEqual(found(rule('http.response.code eq 401', 'http.response.code eq 401')), [['not-in-phase', 'warning', 'http.response.code']]);
  // An error in the counting expression is reported on its text, not the rule's expression.
  const broken = rule('http.request.uri.path eq "/login"', 'http.response.code eq');
  const [p] = validate(broken);
  assert.deepEqual([p!.severity, p!.start > broken.indexOf('counting_expression')], ['error', true]);
});

test("rate limiting rules: what the zone's plan allows (periods, timeouts, characteristics, counting, throttling)", () => {
  const text = (action: string, ratelimit: unknown) => `{"phase": "http_ratelimit", "rules": [{"ref": "a", "expression": "true", "action": "${action}", "ratelimit": ${JSON.stringify(ratelimit)}}]}`;
  const found = (plan: 'free' | 'pro' | 'business' | 'enterprise', action: string, ratelimit: unknown) => {
    const t = text(action, ratelimit);
    return validate(t, { plan }).map((p) => [p.code, p.severity, t.slice(p.start, p.end), p.message]);
  };
  const ip = ['cf.colo.id', 'ip.src'];
  assert.deepEqual(found('free', 'block', { characteristics: ip, period: 10, requests_per_period: 5, mitigation_timeout: 10 }), []);
  assert.deepEqual(found('free', 'block', { characteristics: ip, period: 60, requests_per_period: 5, mitigation_timeout: 10 }), [
    ['plan-required', 'error', '60', 'a counting period of 60 seconds needs the Pro plan or above: the Free plan counts over at most 10 seconds'],
  ]);
  assert.deepEqual(found('pro', 'block', { characteristics: ['cf.colo.id', 'http.request.headers["x-api-key"]'], period: 60, requests_per_period: 5, mitigation_timeout: 86400, counting_expression: 'http.response.code eq 401' }), [
    ['plan-required', 'error', '["cf.colo.id","http.request.headers[\\"x-api-key\\"]"]', 'counting by http.request.headers["x-api-key"] needs the Enterprise plan: the Pro plan counts by cf.colo.id, ip.src'],
    ['plan-required', 'error', '86400', 'a mitigation timeout of 86400 seconds needs the Business plan or above: the Pro plan mitigates for at most 3600 seconds'],
    ['plan-required', 'error', '"http.response.code eq 401"', 'a counting expression needs the Business plan or above: on the Pro plan a rule counts the requests its expression matches'],
  ]);
  // Below Enterprise a challenge throttles (timeout 0), and block does not: one finding, not also "a longer timeout needs Pro".
  assert.deepEqual(found('free', 'managed_challenge', { characteristics: ip, period: 10, requests_per_period: 5, mitigation_timeout: 60 }).map((p) => p[3]), [
    'a managed_challenge rule on the Free plan throttles: set mitigation_timeout to 0 (a challenge with a timeout needs the Enterprise plan)',
  ]);
  // The plan that allows a characteristic: IP with NAT support is Business.
  assert.deepEqual(found('free', 'block', { characteristics: ['cf.colo.id', 'cf.unique_visitor_id'], period: 10, requests_per_period: 5, mitigation_timeout: 10 }).map((p) => p[3]), [
    'counting by cf.unique_visitor_id needs the Business plan or above: the Free plan counts by cf.colo.id, ip.src',
  ]);
  // 86400 is a timeout, not a period, on every plan.
  assert.deepEqual(found('enterprise', 'block', { characteristics: ip, period: 86400, requests_per_period: 5, mitigation_timeout: 86400 }).map((p) => p[3]), [
    "a counting period of 86400 seconds is longer than any plan's: at most 65535 seconds",
  ]);
  // A Terraform interpolation is not known before the plan runs: not judged.
  assert.deepEqual(ratelimitPlanProblems({ characteristics: ['cf.colo.id', '${var.key_header}'], mitigation_timeout: 60 }, 'block', 'pro'), []);
  // An inert ratelimit outside the rate limiting phase is only that.
  const custom = `{"phase": "http_request_firewall_custom", "rules": [{"ref": "a", "expression": "true", "action": "block", "ratelimit": {"characteristics": ["ip.src"], "period": 600}}]}`;
  assert.deepEqual(validate(custom, { plan: 'pro' }).map((p) => p.code), ['ratelimit-not-in-phase']);
  // An account's rate limiting ruleset is written without a plan: the zone's does not judge it.
  const account = `{"kind": "custom", "phase": "http_ratelimit", "rules": [{"ref": "a", "expression": "true", "action": "block", "ratelimit": {"characteristics": ["cf.colo.id", "ip.src"], "period": 600, "requests_per_period": 5, "mitigation_timeout": 600}}]}`;
  assert.deepEqual(validate(account, { plan: 'pro' }), []);
  assert.deepEqual(found('business', 'block', { characteristics: ip, period: 60, requests_per_period: 5, mitigation_timeout: 0 }).map((p) => p[3]), [
    "throttling with block (mitigation_timeout 0) needs the Enterprise plan: give the Business plan's rule a timeout, or a challenge action",
  ]);
  // A timeout left out is 0 (the proxy throttles with it): the same, at `ratelimit`.
  assert.deepEqual(found('free', 'block', { characteristics: ip, period: 10, requests_per_period: 5 }).map((p) => [p[2].slice(0, 1), p[3]]), [
    ['{', "throttling with block (no mitigation_timeout, which is 0) needs the Enterprise plan: give the Free plan's rule a timeout, or a challenge action"],
  ]);
  assert.deepEqual(found('business', 'block', { characteristics: ip, period: 60, score_per_period: 100, score_response_header_name: 'x-score', mitigation_timeout: 60 }).map((p) => p[3]), [
    'complexity-based counting (score_per_period) needs the Enterprise plan with Advanced Rate Limiting',
  ]);
  assert.deepEqual(found('enterprise', 'block', { characteristics: ['cf.colo.id', 'http.request.headers["x-api-key"]'], period: 65535, score_per_period: 100, score_response_header_name: 'x-score', mitigation_timeout: 0 }), []);
  // Without a plan (an account's ruleset, or the editor with none set) nothing is assumed.
  assert.deepEqual(validate(text('block', { characteristics: ip, period: 3600, requests_per_period: 5 })), []);
});

test('rate limiting rules: ratelimit required in http_ratelimit, its shape, pointless elsewhere', () => {
  const text = `{"phase": "http_ratelimit", "rules": [{"ref": "a", "expression": "true", "action": "block"}, {"ref": "b", "expression": "true", "action": "block", "ratelimit": {"characteristics": ["ip.src"], "period": "60"}}]}`;
  expectProblems(text, validate(text), [
    ['missing-field', 'error', '{', 'a rate limiting rule needs "ratelimit" (characteristics and period)', 1],
    // Counters are per data center on the hosted service, which wants cf.colo.id said.
    ['invalid-value', 'warning', '["ip.src"]', `the hosted API requires cf.colo.id among a rate limiting rule's characteristics (its counters are per data center): add "cf.colo.id"`],
    ['wrong-type', 'error', '"60"', '"period" must be an integer, not a string'],
  ]);
  const custom = `{"phase": "http_request_firewall_custom", "rules": [{"ref": "a", "expression": "true", "action": "block", "ratelimit": {"characteristics": ["ip.src"], "period": 60}}]}`;
  assert.deepEqual(validate(custom).map((p) => [p.code, custom.slice(p.start, p.end)]), [['ratelimit-not-in-phase', '"ratelimit"']]);
});

test('a block response\'s content: at most 2 KB (2,048 bytes of UTF-8) in custom rules, 30 KB in rate limiting rules', () => {
  const rule = (content: string, ratelimit = '') =>
    `{"ref": "a", "expression": "true", "action": "block"${ratelimit}, "action_parameters": {"response": {"status_code": 403, "content_type": "text/plain", "content": ${JSON.stringify(content)}}}}`;
  const custom = (content: string) => `{"phase": "http_request_firewall_custom", "rules": [${rule(content)}]}`;
  assert.deepEqual(validate(custom('a'.repeat(2048))), []);
  // Bytes, not characters: 1,025 × "é" is 2,050 bytes.
  for (const [content, bytes] of [['a'.repeat(2049), 2049], ['é'.repeat(1025), 2050], ['x'.repeat(7 * 1024 * 1024), 7 * 1024 * 1024]] as const) {
    const text = custom(content);
    const problems = validate(text);
    assert.deepEqual(
      problems.map((p) => [p.code, p.severity, p.start, p.end - p.start, p.message]),
      [['invalid-action-parameters', 'error', text.indexOf(JSON.stringify(content)), JSON.stringify(content).length, `a content of ${bytes} bytes is not a valid value for content: a block response's content is at most 2048 bytes (2 KB) in custom rules`]],
    );
  }
  const rl = ', "ratelimit": {"characteristics": ["cf.colo.id", "ip.src"], "period": 60}';
  const ratelimit = (content: string) => `{"phase": "http_ratelimit", "rules": [${rule(content, rl)}]}`;
  assert.deepEqual(validate(ratelimit('a'.repeat(30 * 1024))), []);
  assert.deepEqual(validate(ratelimit('a'.repeat(30 * 1024 + 1))).map((p) => p.message), [
    "a content of 30721 bytes is not a valid value for content: a block response's content is at most 30720 bytes (30 KB) in rate limiting rules",
  ]);
});

test('set_config needs parameters; other actions get their top-level keys checked', () => {
  const text = '{"phase": "http_config_settings", "rules": [{"ref": "a", "expression": "true", "action": "set_config"}]}';
  assert.deepEqual(validate(text).map((p) => p.message), ['action parameters are required for the set_config action']);
  const rw = '{"phase": "http_request_transform", "rules": [{"ref": "a", "expression": "true", "action": "rewrite", "action_parameters": {"url": {}}}]}';
  assert.deepEqual(validate(rw).map((p) => [p.code, rw.slice(p.start, p.end)]), [['unknown-field', '"url"']]);
});

test('invalid JSON: reported, and the partial tree is still validated', () => {
  const text = '{"rules": [{"ref": "a", "expression": "true", "action": "alow", }]';
  assert.deepEqual(
    validate(text).map((p) => [p.code, text.slice(p.start, p.end)]),
    [
      ['unknown-action', '"alow"'],
      ['invalid-json', '}'],
      ['invalid-json', '}'],
      ['invalid-json', ''],
    ],
  );
  assert.deepEqual(validate('"rules"').map((p) => p.code), ['wrong-type']);
  assert.deepEqual(validate('').map((p) => p.code), ['invalid-json']);
  // In words, not jsonc-parser's identifiers (ValueExpected, CloseBraceExpected, InvalidSymbol).
  assert.deepEqual(validate(text).filter((p) => p.code === 'invalid-json').map((p) => p.message), [
    'invalid JSON: expected a property name in double quotes',
    'invalid JSON: expected a value (a trailing comma, or nothing where a value belongs)',
    "invalid JSON: expected '}' (an object is not closed)",
  ]);
});

test('never throws on odd shapes', () => {
  for (const text of ['[]', '{}', '[1, null]', '{"rules": 3}', '{"result": []}', '{"rules": [{"action": 3, "action_parameters": []}]}', '{"rules": [{"action": "execute", "action_parameters": {"id": 1, "overrides": {"rules": [3], "categories": "x"}}}]}']) {
    assert.doesNotThrow(() => validate(text), text);
  }
});

test('the action/phase matrix', () => {
  assert.deepEqual(actionsFor('http_request_firewall_managed', 'zone'), ['execute', 'skip']);
  assert.deepEqual(actionsFor('http_request_firewall_custom', 'root'), ['execute']);
  assert.ok(!actionsFor('http_request_firewall_custom', 'custom')?.includes('execute'));
  assert.ok(actionsFor('http_request_firewall_managed', 'managed')?.includes('score'));
  assert.equal(actionsFor('magic_transit', 'zone'), undefined);
  assert.equal(actionsFor(undefined, 'zone'), undefined);
});

test('the shipped catalog: the OWASP-based ruleset deployed bare gets the paranoia lint', () => {
  const text = `{"phase": "http_request_firewall_managed", "rules": [{"ref": "a", "expression": "true", "action": "execute", "action_parameters": {"id": "${O}"}}]}`;
  const problems = validateRulesetJson(text, { catalog: defaultCatalog });
  assert.deepEqual(problems.map((p) => p.code), ['owasp-all-paranoia-levels']);
});

test('a key given twice in an object is an error on the second (the API reads the last, the editor the first)', () => {
  const text = '{"rules": [{"expression": "ssl", "action": "block"}], "rules": [{"expression": "http.hots", "action": "block"}]}';
  const dup = validate(text).filter((p) => p.code === 'duplicate-key');
  assert.deepEqual(dup.map((p) => [text.slice(p.start, p.end), p.message]), [['"rules"', 'duplicate key "rules": the API reads the last one and this editor the first; keep one']]);
  assert.equal(dup[0].start, text.lastIndexOf('"rules"'));
  const inner = '{"rules": [{"expression": "ssl", "action": "block", "action": "log"}]}';
  assert.deepEqual(validate(inner).filter((p) => p.code === 'duplicate-key').map((p) => p.start), [inner.lastIndexOf('"action"')]);
});
