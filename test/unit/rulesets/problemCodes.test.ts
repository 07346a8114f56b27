// Problems the rules service answers by their code (never by their text): a missing
// expression, set_config without parameters, and what an execute rule may run when the
// caller knows every custom ruleset of the account (`executeTargets`).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { defaultCatalog } from '../../../server/src/managed/catalog';
import { FREE_RULESET_ID, OWASP_RULESET_ID, VENDOR_RULESET_ID } from '../../../server/src/rulesets/managedIds';
import { ACTION_PARAMETERS_REQUIRED, MISSING_EXPRESSION, validateRulesetJson, type ValidateOptions } from '../../../server/src/rulesets/validate';

const SELF = 'a'.repeat(32);
const RATELIMIT_RS = 'b'.repeat(32);
const CUSTOM_RS = 'c'.repeat(32);
const UNKNOWN = 'd'.repeat(32);

function problems(rules: unknown[], options: Partial<ValidateOptions> = {}, phase = 'http_request_firewall_custom') {
  const text = JSON.stringify({ kind: 'zone', phase, rules });
  return validateRulesetJson(text, { catalog: defaultCatalog, expressions: false, ...options })
    .filter((p) => p.severity === 'error' || p.severity === 'warning')
    .map((p) => ({ code: p.code, severity: p.severity, message: p.message, data: p.data }));
}

test('a rule without expression and set_config without parameters have their own codes', () => {
  assert.deepEqual(problems([{ action: 'block' }]), [{ code: MISSING_EXPRESSION, severity: 'error', message: 'a rule needs an "expression"', data: undefined }]);
  assert.deepEqual(problems([{ action: 'set_config', expression: 'true' }], {}, 'http_config_settings'), [
    { code: ACTION_PARAMETERS_REQUIRED, severity: 'error', message: 'action parameters are required for the set_config action', data: undefined },
  ]);
  assert.deepEqual([MISSING_EXPRESSION, ACTION_PARAMETERS_REQUIRED], ['missing-expression', 'action-parameters-required']);
});

test('execute targets: itself, an unknown id and a custom ruleset of another phase are refused', () => {
  const executeTargets = { custom: new Map([[RATELIMIT_RS, 'http_ratelimit' as const], [CUSTOM_RS, 'http_request_firewall_custom' as const], [SELF, 'http_request_firewall_custom' as const]]), self: SELF };
  const run = (id: string) => ({ action: 'execute', expression: 'true', action_parameters: { id } });
  assert.deepEqual(problems([run(SELF), run(UNKNOWN), run(RATELIMIT_RS), run(CUSTOM_RS)], { executeTargets }), [
    { code: 'execute-self', severity: 'error', message: 'a ruleset cannot execute itself', data: { rulesetId: SELF } },
    {
      code: 'execute-target-unknown',
      severity: 'error',
      message: `no managed ruleset nor custom ruleset of the account has this id; managed rulesets: Cloudflare Managed Ruleset (${VENDOR_RULESET_ID}), Cloudflare OWASP Core Ruleset (${OWASP_RULESET_ID}), Cloudflare Free Managed Ruleset (${FREE_RULESET_ID})`,
      data: { rulesetId: UNKNOWN },
    },
    { code: 'execute-target-phase', severity: 'error', message: 'that custom ruleset is in phase http_ratelimit, not http_request_firewall_custom', data: { rulesetId: RATELIMIT_RS } },
  ]);
});

test('without executeTargets an unknown id outside the managed phases stays a warning (an editor cannot know the account)', () => {
  const found = problems([{ action: 'execute', expression: 'true', action_parameters: { id: UNKNOWN } }]);
  assert.deepEqual(
    found.map((p) => [p.code, p.severity]),
    [['unknown-managed-ruleset', 'warning']],
  );
});
