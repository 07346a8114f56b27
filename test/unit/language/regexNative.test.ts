// User regexes run on V8's irregexp where the pattern allows it (regex.ts, nativeTest) and
// on re2js otherwise. Both must find a match in exactly the same byte strings: a seeded
// fuzz of patterns in the engine's syntax (bytes, classes, case folding, anchors, word
// boundaries, Unicode mode, counted and lazy repetitions) against subjects drawn from the
// same alphabet plus newlines and high bytes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { regexEngines } from '../../../server/src/language/regex';
import { Rng } from '../../diff/generate';

const ATOMS = ['a', 'b', 'B', 'z', '0', '_', ' ', '.', '\\d', '\\w', '\\W', '\\s', '\\S', '[a-c]', '[^ab]', '[[:alpha:]]', '\\xff', '\\x80', '\\n', '\\.', '(?s:.)', '\\pL', '[é]'];
const ANCHORS = ['^', '$', '\\A', '\\z', '\\b', '\\B'];
const QUANTIFIERS = ['*', '+', '?', '*?', '+?', '??', '{2}', '{1,3}', '{0,2}?', '{2,}', '{3,5}', '{17}'];
const FLAGS = ['', '', '', '(?i)', '(?u)', '(?iu)', '(?m)', '(?s)'];
const SUBJECT = ['a', 'b', 'A', 'B', 'z', '0', '9', '_', ' ', '\n', '.', '\x80', '\xff', '\xc3', '\xa9', '\xc3\xa9'];

function pattern(rng: Rng, depth: number): string {
  const n = rng.range(1, 4);
  let out = '';
  for (let i = 0; i < n; i++) {
    const r = rng.next();
    let atom: string;
    if (r < 0.12) atom = rng.pick(ANCHORS);
    else if (r < 0.25 && depth < 2) atom = `(${pattern(rng, depth + 1)}|${pattern(rng, depth + 1)})`;
    else atom = rng.pick(ATOMS);
    if (!ANCHORS.includes(atom) && rng.chance(0.35)) atom += rng.pick(QUANTIFIERS);
    out += atom;
  }
  return out;
}

test('irregexp and re2js find matches in the same byte strings (2,000 fuzzed patterns)', () => {
  const rng = new Rng(0x7e57_2e2);
  let native = 0;
  let compared = 0;
  for (let i = 0; i < 2000; i++) {
    const p = rng.pick(FLAGS) + pattern(rng, 0);
    const engines = regexEngines(p);
    if (!engines?.native) continue;
    native++;
    for (let k = 0; k < 25; k++) {
      let s = '';
      const len = rng.int(8);
      for (let j = 0; j < len; j++) s += rng.pick(SUBJECT);
      compared++;
      assert.equal(engines.native(s), engines.re2(s), `pattern ${JSON.stringify(p)} on ${JSON.stringify(s)}`);
    }
  }
  // Most patterns take the irregexp path: the comparison is not vacuous.
  assert.ok(native > 1000, `only ${native} of 2000 patterns ran on irregexp`);
  assert.ok(compared > 25_000);
});

test('patterns the linear engine refuses, and multi-line anchors, stay on re2js', () => {
  for (const p of ['a{17}', '(a{4}){5}', '(?m)^a', '(?m)a$']) assert.equal(regexEngines(p)?.native, undefined, p);
  for (const p of ['a{16}', '(a{4}){3}', '^a$', '\\bab\\B', '(?i)curl/[0-9]+']) assert.notEqual(regexEngines(p)?.native, undefined, p);
});
