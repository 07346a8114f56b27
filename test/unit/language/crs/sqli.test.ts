// libinjection SQLi: every token, folding and sqli vector of libinjection's own test suite
// (test/fixtures/libinjection/tests, vendored), plus the attack and false-positive samples.
//
// Test files are read as binary (latin1) strings: the detector works on bytes.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import {
  detectSQLi,
  fold,
  FLAG_QUOTE_NONE,
  FLAG_SQL_ANSI,
  tokenize,
  type Token,
} from '../../../../server/src/language/runtime/crs/libinjection/sqli';

const DATA = new URL('../../../fixtures/libinjection/', import.meta.url);
const TESTS = new URL('tests/', DATA);
const SAMPLES = new URL('samples/', DATA);

interface Vector {
  file: string;
  name: string;
  input: string;
  expected: string;
}

/** `--TEST-- / --INPUT-- / --EXPECTED--` blocks (one per file). */
function parseVector(file: string, text: string): Vector {
  const m = /--TEST--\n([\s\S]*?)\n--INPUT--\n([\s\S]*?)\n?--EXPECTED--\n?([\s\S]*)$/.exec(text);
  if (!m) throw new Error(`${file}: not a --TEST--/--INPUT--/--EXPECTED-- block`);
  return { file, name: m[1].trim().split('\n')[0], input: m[2], expected: normalise(m[3]) };
}

/** Trailing blanks of each line and trailing empty lines are not significant. */
function normalise(s: string): string {
  return s
    .split('\n')
    .map((l) => l.trimEnd())
    .join('\n')
    .replace(/\n+$/, '');
}

/** A token as libinjection's test driver prints it: type, space, value (quotes for strings, '@'s for variables). */
function show(t: Token): string {
  switch (t.type) {
    case 's':
      return `s ${t.strOpen}${t.val}${t.strClose}`;
    case 'v':
      return `v ${'@'.repeat(t.count)}${t.strOpen}${t.val}${t.strClose}`;
    default:
      return `${t.type} ${t.val}`;
  }
}

const ANSI = FLAG_QUOTE_NONE | FLAG_SQL_ANSI;
const RUN: Record<string, (input: string) => string> = {
  tokens: (input) => tokenize(input, ANSI).map(show).join('\n'),
  folding: (input) => fold(tokenize(input, ANSI)).map(show).join('\n'),
  sqli: (input) => {
    const r = detectSQLi(input);
    return r.isSqli ? r.fingerprint : '';
  },
};

function vectors(kind: string): Vector[] {
  return readdirSync(TESTS)
    .filter((f) => f.startsWith(`test-${kind}-`) && f.endsWith('.txt'))
    .sort()
    .map((f) => parseVector(f, readFileSync(new URL(f, TESTS), 'latin1')));
}

/** Vectors per kind, and how many there are (all of them must pass). */
const KINDS: [string, number][] = [
  ['tokens', 249],
  ['folding', 118],
  ['sqli', 50],
];

for (const [kind, count] of KINDS) {
  describe(`libinjection ${kind} vectors`, () => {
    const list = vectors(kind);
    test(`there are ${count} of them`, () => assert.equal(list.length, count));
    for (const v of list) {
      test(`${v.file}: ${v.name}`, () => {
        const got = normalise(RUN[kind](v.input));
        assert.equal(got, v.expected, `input: ${JSON.stringify(v.input)}`);
      });
    }
  });
}

// The project's own cases, each derived from the C library's published algorithm (see the
// README there): they run like the vendored vectors.
const EXTRA = new URL('../../../fixtures/libinjection-extra/', import.meta.url);
describe('libinjection cases beyond the vendored tests (test/fixtures/libinjection-extra)', () => {
  const files = readdirSync(EXTRA).filter((f) => /^test-(tokens|folding|sqli)-\d+\.txt$/.test(f)).sort();
  test('there are 4 of them', () => assert.equal(files.length, 4));
  for (const f of files) {
    const v = parseVector(f, readFileSync(new URL(f, EXTRA), 'latin1'));
    test(`${f}: ${v.name}`, () => assert.equal(normalise(RUN[/^test-(\w+)-/.exec(f)![1]](v.input)), v.expected, `input: ${JSON.stringify(v.input)}`));
  }
});

/** URL-decodes a sample line into a binary string ('+' is a space, %XX a byte). */
function urlDecode(s: string): string {
  let out = '';
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (c === '+') out += ' ';
    else if (c === '%' && i + 2 < s.length + 0 && /^[0-9a-fA-F]{2}$/.test(s.slice(i + 1, i + 3))) {
      out += String.fromCharCode(parseInt(s.slice(i + 1, i + 3), 16));
      i += 2;
    } else out += c;
  }
  return out;
}

function sampleLines(file: string): string[] {
  return readFileSync(new URL(file, SAMPLES), 'latin1')
    .split('\n')
    .map((l) => l.replace(/\r$/, ''))
    .filter((l) => l.trim() !== '' && !l.startsWith('#'))
    .map(urlDecode);
}

describe('libinjection samples', () => {
  // Figures reached by this implementation, pinned so that any change shows. The samples'
  // README expects "a few outliers". The 18 attack lines missed are double-URL-encoded
  // lines (decoded once, as libinjection's own harness does), fragments without SQL
  // structure ("limit 0,1--", "PHPX AND 1=1 AND XX=X", "; DROP table Users --") and
  // rsalgado's MySQL parser oddities ("SELECT 1 from information_schema 9.e.table_name").
  // The 21 "false positives" still flagged follow from the whitelist rules the vectors pin
  // down: e.g. "SMALL \"&\" SIGN" is sos with a quote on each side of the operator (the
  // "...foo' + 'bar..." rule), "1611-IioXXIG1ti8rspL2vbXFy--" is 1c after folding, and
  // some are plain SQL ("select x from y where").
  const ATTACKS = { lines: 17149, detected: 17131 }; // 99.9%
  const FALSE_POSITIVES = { lines: 421, flagged: 21 }; // 400 of 421 pass

  test('attack samples (sqli-*.txt) detected', () => {
    const files = readdirSync(SAMPLES).filter((f) => /^sqli-.*\.txt$/.test(f)).sort();
    let lines = 0;
    let detected = 0;
    const missed: string[] = [];
    for (const f of files) {
      for (const line of sampleLines(f)) {
        lines++;
        if (detectSQLi(line).isSqli) detected++;
        else missed.push(`${f}: ${JSON.stringify(line)}`);
      }
    }
    assert.deepEqual({ lines, detected }, ATTACKS, `missed:\n${missed.join('\n')}`);
  });

  test('false positives (false_positives.txt) not flagged', () => {
    let lines = 0;
    let flagged = 0;
    const hits: string[] = [];
    for (const line of sampleLines('false_positives.txt')) {
      lines++;
      const r = detectSQLi(line);
      if (r.isSqli) {
        flagged++;
        hits.push(`${r.fingerprint}: ${JSON.stringify(line)}`);
      }
    }
    assert.deepEqual({ lines, flagged }, FALSE_POSITIVES, `flagged:\n${hits.join('\n')}`);
  });
});
