// "Pull and re-apply my edits": the three-way merge of rules, one case per situation,
// with the exact merged list (by ref) and the conflicts.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { mergedText, mergeRules, ruleLabel } from '../../../server/src/rulesets/ruleMerge';
import type { Rule } from '../../../server/src/rulesets/model';

const r = (ref: string, extra: Partial<Rule> = {}): Rule => ({ ref, action: 'block', expression: `http.host eq "${ref}.example"`, description: ref, ...extra });
const refs = (rules: readonly Rule[] | undefined) => rules?.map((x) => `${x.ref ?? '?'}${x.action === 'block' ? '' : `:${x.action}`}`);

describe('mergeRules', () => {
  const base = [r('a'), r('b'), r('c')];
  const cases: { name: string; mine: Rule[]; theirs: Rule[]; merged?: string[]; conflicts?: string[]; reapplied?: number; fromZone?: number }[] = [
    { name: 'nothing changed anywhere', mine: base, theirs: base, merged: ['a', 'b', 'c'], reapplied: 0, fromZone: 0 },
    { name: 'my edit, zone unchanged', mine: [r('a'), r('b', { action: 'log' }), r('c')], theirs: base, merged: ['a', 'b:log', 'c'], reapplied: 1, fromZone: 0 },
    { name: 'zone edit, mine unchanged', mine: base, theirs: [r('a', { action: 'challenge' }), r('b'), r('c')], merged: ['a:challenge', 'b', 'c'], reapplied: 0, fromZone: 1 },
    { name: 'edits of different rules on both sides', mine: [r('a'), r('b', { action: 'log' }), r('c')], theirs: [r('a'), r('b'), r('c', { action: 'skip' })], merged: ['a', 'b:log', 'c:skip'], reapplied: 1, fromZone: 1 },
    { name: 'the same edit on both sides is taken once', mine: [r('a', { action: 'log' }), r('b'), r('c')], theirs: [r('a', { action: 'log' }), r('b'), r('c')], merged: ['a:log', 'b', 'c'], reapplied: 1, fromZone: 0 },
    { name: 'a rule added on the zone goes after the rule it follows there', mine: [r('a'), r('b', { action: 'log' }), r('c')], theirs: [r('a'), r('z'), r('b'), r('c')], merged: ['a', 'z', 'b:log', 'c'] },
    { name: 'a rule added in the file without ref or id goes after the rule it follows in the file', mine: [r('a'), { action: 'log', expression: 'true', description: 'new' }, r('b'), r('c')], theirs: [r('a'), r('b'), r('c', { action: 'skip' })], merged: ['a', '?:log', 'b', 'c:skip'], reapplied: 1, fromZone: 1 },
    { name: 'removed in the file, unchanged on the zone: removed', mine: [r('a'), r('c')], theirs: base, merged: ['a', 'c'], reapplied: 1 },
    { name: 'removed on the zone, unchanged in the file: removed', mine: base, theirs: [r('a'), r('b')], merged: ['a', 'b'], fromZone: 1 },
    { name: 'the file reordered: its order wins, the zone\'s edit is kept', mine: [r('c'), r('a'), r('b')], theirs: [r('a', { action: 'log' }), r('b'), r('c')], merged: ['c', 'a:log', 'b'] },
    { name: 'the zone reordered, the file did not: the zone\'s order', mine: [r('a'), r('b', { action: 'log' }), r('c')], theirs: [r('c'), r('a'), r('b')], merged: ['c', 'a', 'b:log'] },
    { name: 'both changed the same rule differently: a conflict', mine: [r('a'), r('b', { action: 'log' }), r('c')], theirs: [r('a'), r('b', { action: 'challenge' }), r('c')], conflicts: ['b both-changed'] },
    { name: 'changed in the file, removed on the zone: a conflict', mine: [r('a'), r('b', { action: 'log' }), r('c')], theirs: [r('a'), r('c')], conflicts: ['b changed-here-removed-on-zone'] },
    { name: 'removed in the file, changed on the zone: a conflict', mine: [r('a'), r('c')], theirs: [r('a'), r('b', { enabled: false }), r('c')], conflicts: ['b removed-here-changed-on-zone'] },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const m = mergeRules(base, c.mine, c.theirs);
      assert.deepEqual(m.conflicts.map((x) => `${x.label} ${x.kind}`), c.conflicts ?? []);
      if (c.merged) assert.deepEqual(refs(m.rules), c.merged);
      else assert.equal(m.rules, undefined);
      if (c.reapplied !== undefined) assert.equal(m.reapplied, c.reapplied);
      if (c.fromZone !== undefined) assert.equal(m.fromZone, c.fromZone);
    });
  }

  test('read-only fields and API defaults are not edits', () => {
    const zone = [{ ...r('a'), id: 'a'.repeat(32), version: '2', last_updated: 'later', enabled: true }, r('b'), r('c')];
    const m = mergeRules(base, base, zone);
    assert.equal(m.fromZone, 0);
    assert.deepEqual(refs(m.rules), ['a', 'b', 'c']);
  });

  test('rules pulled without ref are matched by id', () => {
    const id = (n: string) => n.repeat(32);
    const b = [{ id: id('1'), action: 'block', expression: 'a' }, { id: id('2'), action: 'block', expression: 'b' }];
    const m = mergeRules(b, [b[0], { ...b[1], action: 'log' }], [{ ...b[0], expression: 'x' }, b[1]]);
    assert.deepEqual(m.rules?.map((x) => `${x.expression}:${x.action}`), ['x:block', 'b:log']);
  });
});

describe('ruleLabel', () => {
  test('the description, else a readable ref, else the action and the expression (never a 32-hex id)', () => {
    assert.equal(ruleLabel({ description: ' Block admin ', ref: 'x', action: 'block', expression: 'true' }), 'Block admin');
    assert.equal(ruleLabel({ ref: 'block-admin', action: 'block', expression: 'true' }), 'block-admin');
    assert.equal(ruleLabel({ ref: 'f'.repeat(32), id: 'f'.repeat(32), action: 'log', expression: 'http.request.uri.path contains "/admin"' }), 'log when http.request.uri.path contains "/admin"');
  });
});

describe('mergedText', () => {
  test('a conflict is written with Git\'s markers, both sides with their commas', () => {
    const m = mergeRules([r('a'), r('b')], [r('a', { action: 'log' }), r('b')], [r('a', { action: 'skip' }), r('b')]);
    const text = mergedText({ name: 'default', version: '3' }, m, { mine: 'Your edits', theirs: 'Zone version 3' });
    const mine = JSON.stringify(r('a', { action: 'log' }), null, 2).split('\n').map((l) => `    ${l}`).join('\n');
    const zone = JSON.stringify(r('a', { action: 'skip' }), null, 2).split('\n').map((l) => `    ${l}`).join('\n');
    const b = JSON.stringify(r('b'), null, 2).split('\n').map((l) => `    ${l}`).join('\n');
    assert.equal(text, `{\n  "name": "default",\n  "version": "3",\n  "rules": [\n<<<<<<< Your edits\n${mine},\n=======\n${zone},\n>>>>>>> Zone version 3\n${b}\n  ]\n}\n`);
  });

  test('without conflicts it is the JSON of the merged ruleset', () => {
    const m = mergeRules([r('a')], [r('a', { action: 'log' })], [r('a')]);
    const text = mergedText({ name: 'default' }, m, { mine: 'x', theirs: 'y' });
    assert.deepEqual(JSON.parse(text), { name: 'default', rules: [r('a', { action: 'log' })] });
    assert.equal(mergedText({ name: 'default' }, mergeRules([], [], []), { mine: 'x', theirs: 'y' }), '{\n  "name": "default",\n  "rules": []\n}\n');
  });
});
