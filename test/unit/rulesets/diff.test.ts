// The deploy diff: rule-aligned by ref/id, data-driven (a before, an after, the summary).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { canonicalJson, diffDetails, diffRulesets, diffSummary, entryPointBody } from '../../../server/src/rulesets/diff';
import type { Rule, Ruleset } from '../../../server/src/rulesets/model';

const r = (ref: string, extra: Partial<Rule> = {}): Rule => ({ ref, action: 'block', expression: `http.host eq "${ref}"`, description: ref, ...extra });
const rs = (...rules: Rule[]): Ruleset => ({ name: 'default', rules });

describe('diffRulesets', () => {
  const cases: { name: string; before?: Ruleset; after: Ruleset; summary: string; details?: string[] }[] = [
    { name: 'identical', before: rs(r('a'), r('b')), after: rs(r('a'), r('b')), summary: 'no changes' },
    { name: 'no entry point yet', after: rs(r('a')), summary: '1 rule added', details: ['+ a'] },
    { name: 'insert in the middle is one addition', before: rs(r('a'), r('b'), r('c')), after: rs(r('a'), r('x'), r('b'), r('c')), summary: '1 rule added', details: ['+ x'] },
    { name: 'removal', before: rs(r('a'), r('b')), after: rs(r('a')), summary: '1 rule removed', details: ['− b'] },
    {
      name: 'changed expression and enabled',
      before: rs(r('a'), r('b')),
      after: rs(r('a', { expression: 'true', enabled: false }), r('b')),
      summary: '1 rule changed (enabled, expression)',
      details: ['~ a: enabled, expression'],
    },
    { name: 'moved', before: rs(r('a'), r('b'), r('c')), after: rs(r('c'), r('a'), r('b')), summary: '1 rule moved', details: ['↕ c: position 3 → 1'] },
    { name: 'read-only fields and default values are not changes', before: rs({ ...r('a'), id: 'f'.repeat(32), version: '3', last_updated: 'x', enabled: true }), after: rs(r('a')), summary: 'no changes' },
    { name: 'description of the ruleset', before: { ...rs(r('a')), description: 'old' }, after: { ...rs(r('a')), description: 'new' }, summary: 'ruleset description changed' },
    {
      name: 'rules without ref are matched by id, then by position',
      before: rs({ id: '1'.repeat(32), action: 'log', expression: 'true' }, { action: 'block', expression: 'a' }),
      after: rs({ id: '1'.repeat(32), action: 'block', expression: 'true' }, { action: 'block', expression: 'b' }),
      summary: '2 rules changed (action, expression)',
    },
    {
      name: 'a rule without description or readable ref is named by its position and what it does, never by its 32-hex id',
      before: rs({ id: 'a'.repeat(32), ref: 'a'.repeat(32), action: 'log', expression: 'http.request.uri.path contains "/admin"' }),
      after: rs({ id: 'a'.repeat(32), ref: 'a'.repeat(32), action: 'block', expression: 'http.request.uri.path contains "/admin"' }),
      summary: '1 rule changed (action)',
      details: ['~ rule 1 (block when http.request.uri.path contains "/admin"): action'],
    },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const d = diffRulesets(c.before, c.after);
      assert.equal(diffSummary(d), c.summary);
      if (c.details) assert.deepEqual(diffDetails(d), c.details);
    });
  }
});

describe('entryPointBody / canonicalJson', () => {
  test('drops read-only fields and the empty id/version/ref of a migration config', () => {
    const body = entryPointBody({
      id: 'a'.repeat(32),
      name: 'default',
      kind: 'zone',
      phase: 'http_request_firewall_managed',
      version: '4',
      last_updated: 'x',
      rules: [{ id: '', version: '', ref: '', action: 'execute', expression: 'true', enabled: true, action_parameters: { id: 'b'.repeat(32) }, last_updated: 'y' }],
    });
    assert.deepEqual(body, { name: 'default', rules: [{ action: 'execute', expression: 'true', enabled: true, action_parameters: { id: 'b'.repeat(32) } }] });
  });
  test('canonical text sorts keys, puts rules last and leaves ids out when a ref names the rule', () => {
    const text = canonicalJson({ rules: [{ ref: 'x', id: 'c'.repeat(32), expression: 'true', action: 'log' }], description: 'd', name: 'n' });
    assert.equal(text, '{\n  "description": "d",\n  "name": "n",\n  "rules": [\n    {\n      "action": "log",\n      "expression": "true",\n      "ref": "x"\n    }\n  ]\n}\n');
    assert.equal(canonicalJson(undefined), '{\n  "rules": []\n}\n');
  });
});

test('a change carries the rule id for a tooltip', () => {
  const d = diffRulesets(rs({ ...r('a'), id: '1'.repeat(32) }), rs({ ...r('a', { action: 'log' }), id: '1'.repeat(32) }, r('b')));
  assert.deepEqual(d.changed.map((c) => [c.label, c.id]), [['a', '1'.repeat(32)]]);
  assert.deepEqual(d.added.map((c) => [c.label, c.id]), [['b', undefined]]);
});
