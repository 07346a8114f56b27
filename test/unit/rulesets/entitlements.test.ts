// Managed-ruleset entitlements in the ruleset validator: deploying the Cloudflare Managed
// Ruleset or the OWASP Core Ruleset needs Pro or above (rules-api §2.2: the hosted
// service fails the whole entry-point write). The core reports `plan-required` at the
// execute rule's `action_parameters.id`, with the plan needed; the rules service turns
// it into its error.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { defaultCatalog, MANAGED_RULESET_PLANS } from '../../../server/src/managed/catalog';
import { validateRulesetJson } from '../../../server/src/rulesets/validate';

const V = 'efb7b8c949ac4650a09736fc376e9aee';
const O = '4814384a9e5d4991b9815dcfc25d2f1f';
const F = '77454fe2d30c4220b5701f6fdfb893ba';

const entryPoint = (...ids: string[]) =>
  JSON.stringify({ kind: 'zone', phase: 'http_request_firewall_managed', rules: ids.map((id) => ({ action: 'execute', action_parameters: { id }, expression: 'true' })) }, null, 2);

test('the entitlement table: the Managed and OWASP rulesets from Pro up, the Free Managed Ruleset on every plan', () => {
  assert.deepEqual(MANAGED_RULESET_PLANS, { [V]: 'pro', [O]: 'pro', [F]: 'free' });
});

test('a Free zone deploying the Free Managed Ruleset: no plan finding', () => {
  const found = validateRulesetJson(entryPoint(F), { catalog: defaultCatalog, plan: 'free', expressions: false });
  assert.deepEqual(found.map((p) => p.code), ['missing-ref']);
});

test('a Free zone deploying either managed ruleset: plan-required at the id, with the plan needed', () => {
  const text = entryPoint(V, O);
  const found = validateRulesetJson(text, { catalog: defaultCatalog, plan: 'free', expressions: false }).filter((p) => p.code === 'plan-required');
  assert.deepEqual(
    found.map((p) => ({ severity: p.severity, at: text.slice(p.start, p.end), message: p.message, hint: p.hint, rule: p.rule, data: p.data })),
    [
      {
        severity: 'warning',
        at: `"${V}"`,
        message: `Cloudflare Managed Ruleset (${V}) requires the Pro plan or above; this zone is on the Free plan`,
        hint: 'The API refuses the whole write of a ruleset that deploys it on the Free plan: upgrade the zone to Pro, or remove the rule.',
        rule: 0,
        data: { plan: 'pro', rulesetId: V },
      },
      {
        severity: 'warning',
        at: `"${O}"`,
        message: `Cloudflare OWASP Core Ruleset (${O}) requires the Pro plan or above; this zone is on the Free plan`,
        hint: 'The API refuses the whole write of a ruleset that deploys it on the Free plan: upgrade the zone to Pro, or remove the rule.',
        rule: 1,
        data: { plan: 'pro', rulesetId: O },
      },
    ],
  );
});

test('Pro, Business, Enterprise, or no plan known: nothing', () => {
  const text = entryPoint(V, O);
  for (const plan of ['pro', 'business', 'enterprise', undefined] as const) {
    const found = validateRulesetJson(text, { catalog: defaultCatalog, ...(plan ? { plan } : {}), expressions: false }).filter((p) => p.code === 'plan-required');
    assert.deepEqual(found, [], String(plan));
  }
});

test('a disabled execute rule is still a deployment: reported too', () => {
  const text = JSON.stringify({ kind: 'zone', phase: 'http_request_firewall_managed', rules: [{ action: 'execute', action_parameters: { id: V }, expression: 'true', enabled: false }] });
  const found = validateRulesetJson(text, { catalog: defaultCatalog, plan: 'free', expressions: false }).filter((p) => p.code === 'plan-required');
  assert.equal(found.length, 1);
});
