// A ruleset's JSON bytes are written from its rules' cached texts, copying the runs of
// rules it shares with the version before it. Whatever the edit, the bytes must be those
// of JSON.stringify, and each rule's span must hold its text.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fixJson, isFixed, joinedJson, jsonText, type Joined } from '../../server/src/service/jsonText';

function ruleObject(n: number): object {
  const r = { id: `r${n}`, expression: `http.host eq "h${n}.example.com"`, description: n % 3 === 0 ? `règle ${n} ☕` : `rule ${n}` };
  fixJson(r, JSON.stringify(r));
  return r;
}

function check(j: Joined, head: string, tail: string): void {
  assert.equal(j.bytes.toString(), `${head}${j.items.map((x) => JSON.stringify(x)).join(',')}${tail}`);
  j.items.forEach((x, i) => assert.equal(j.bytes.subarray(j.spans[2 * i], j.spans[2 * i + 1]).toString(), JSON.stringify(x), `item ${i}`));
}

/** A small deterministic generator (mulberry32). */
function random(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('joinedJson: a list written from cached texts and the version before', () => {
  it('each kind of edit, one at a time, gives the bytes of JSON.stringify', () => {
    const base = joinedJson('{"v":1,"rules":[', [1, 2, 3, 4, 5].map(ruleObject), ']}');
    check(base, '{"v":1,"rules":[', ']}');
    const [a, b, c, d, e] = base.items;
    const edits: Record<string, unknown[]> = {
      'replace one': [a, b, ruleObject(30), d, e],
      'insert one': [a, b, ruleObject(31), c, d, e],
      'append': [a, b, c, d, e, ruleObject(32)],
      'prepend': [ruleObject(33), a, b, c, d, e],
      'delete one': [a, b, d, e],
      'delete the first': [b, c, d, e],
      'delete the last': [a, b, c, d],
      'move one': [a, d, b, c, e],
      'delete two in a row': [a, d, e],
      'replace a block': [a, ruleObject(34), ruleObject(35), ruleObject(36), e],
      'empty': [],
      'unchanged': [a, b, c, d, e],
    };
    for (const [name, items] of Object.entries(edits)) {
      const head = `{"v":2,"name":"${name}","rules":[`;
      check(joinedJson(head, items, ']}', base), head, ']}');
    }
  });

  it('serializes only the items that are new to the list: the others are copied from the version before', () => {
    let serialized = 0;
    /** Not fixed, so its text is made by JSON.stringify, which calls toJSON: a count of how often. */
    const counted = (n: number) => ({ toJSON: () => (serialized++, { n }) });
    const items = [1, 2, 3, 4, 5, 6].map(counted);
    const base = joinedJson('[', items, ']');
    assert.equal(serialized, 6);
    const edited = [items[0], items[1], counted(30), items[3], items[4], items[5], counted(31)];
    const next = joinedJson('[', edited, ']', base);
    assert.equal(next.bytes.toString(), '[{"n":1},{"n":2},{"n":30},{"n":4},{"n":5},{"n":6},{"n":31}]');
    assert.equal(serialized, 6 + 2);
  });

  it('a chain of 300 random edits, each version written from the one before, stays exact', () => {
    const next = random(7);
    let n = 100;
    let version = joinedJson('[', Array.from({ length: 20 }, (_, i) => ruleObject(i)), ']');
    for (let step = 0; step < 300; step++) {
      const items = [...version.items];
      const edits = 1 + Math.floor(next() * 3);
      for (let k = 0; k < edits; k++) {
        const at = Math.floor(next() * (items.length + 1));
        const what = next();
        if (what < 0.3) items.splice(at, 0, ruleObject(n++));
        else if (what < 0.55 && items.length > 0) items.splice(Math.min(at, items.length - 1), 1);
        else if (what < 0.8 && items.length > 0) items[Math.min(at, items.length - 1)] = ruleObject(n++);
        else if (items.length > 1) items.splice(Math.min(at, items.length - 1), 0, ...items.splice(Math.floor(next() * items.length), 1));
      }
      version = joinedJson(`{"step":${step},"rules":[`, items, ']}', version);
      check(version, `{"step":${step},"rules":[`, ']}');
    }
  });
});

describe('fixJson: the cached text is invisible to everything that reads the object', () => {
  it('keys, JSON, copies and deep equality see the object as it was; jsonText answers the cached text', () => {
    const r = { id: 'r1', expression: 'http.host eq "a.example"' };
    fixJson(r, '{"cached":true}');
    assert.deepEqual(Object.keys(r), ['id', 'expression']);
    assert.deepEqual(Reflect.ownKeys({ ...r }), ['id', 'expression']);
    assert.equal(JSON.stringify(r), '{"id":"r1","expression":"http.host eq \\"a.example\\""}');
    assert.deepStrictEqual(r, { id: 'r1', expression: 'http.host eq "a.example"' });
    assert.equal(isFixed(r), true);
    assert.equal(isFixed({ ...r }), false);
    assert.equal(jsonText(r), '{"cached":true}');
    // Fixed again (a rule read back from its stored body): the newer text wins.
    fixJson(r, '{"cached":2}');
    assert.equal(jsonText(r), '{"cached":2}');
  });
});
