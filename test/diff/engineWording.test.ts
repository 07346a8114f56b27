/**
 * Pinned cases against the engine (wirefilter, as shipped in firewalker): mistyped
 * operators and keywords glued to literals. For each, the engine's outcome is written
 * down here, and both the engine and our checker must give it: accepted, or rejected with
 * that message. Our range is the engine's span, except for a mistyped operator, where we
 * underline the whole word the engine read part of (`equals`, not its `ua`).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadWirefilter } from './wirefilter';
import { engineErrorSpan } from './known-differences';
import { checkExpression } from '../../server/src/language/index';

interface Pinned {
  readonly expr: string;
  /** undefined = accepted; else the engine's message. */
  readonly message?: string;
  /** Our range, when it differs from the engine's span. */
  readonly ours?: readonly [number, number];
}

const RADIX_16 = 'invalid digit found in string while parsing with radix 16';
const RADIX_10 = 'invalid digit found in string while parsing with radix 10';

const PINNED: readonly Pinned[] = [
  // Mistyped operators: the engine reads `eq` of `equals`, `==` of `===`, then a value.
  { expr: 'http.host equals "a"', message: RADIX_16, ours: [10, 16] },
  { expr: 'http.host === "a"', message: RADIX_16, ours: [10, 13] },
  { expr: 'http.host = "a"', message: 'expected ComparisonOp', ours: [10, 11] },
  { expr: 'ip.src.asnum equals 5', message: 'expected digit', ours: [13, 19] },
  { expr: 'ip.src.asnum === 5', message: 'expected digit', ours: [13, 16] },
  { expr: 'ip.src equals 1.2.3.4', message: 'expected IP address character', ours: [7, 13] },
  { expr: 'ip.src.asnum gte 5', message: RADIX_10, ours: [13, 16] },
  { expr: 'http.host neq "a"', message: RADIX_16, ours: [10, 13] },
  { expr: 'http.host !== "a"', message: RADIX_16, ours: [10, 13] },
  { expr: 'http.host EQ "a"', message: 'expected ComparisonOp', ours: [10, 12] },
  { expr: 'http.host contain "a"', message: 'expected ComparisonOp', ours: [10, 17] },
  { expr: 'http.host includes "a"', message: 'expected literal "{"', ours: [10, 18] },
  { expr: 'http.host equals', message: RADIX_16, ours: [10, 16] },
  // Keywords glued to literals.
  { expr: 'ip.src.asnum eq 5or ssl' },
  { expr: 'ip.src.asnum eq 5or(ssl)' },
  { expr: 'ip.src.asnum eq 5 or(ssl)' },
  { expr: 'ip.src.asnum eq 5xor ssl' },
  { expr: 'ip.src.asnum eq 0x5or ssl' },
  { expr: 'ip.src.asnum eq 5ornot ssl' },
  { expr: 'http.host eq "a"or ssl' },
  { expr: 'http.host eq 61:62or ssl' },
  { expr: 'http.host eq 61:62and ssl' },
  { expr: 'ip.src eq 1.2.3.4or ssl' },
  { expr: 'ip.src eq ::1or ssl' },
  { expr: 'ip.src.asnum in {5 6}or ssl' },
  { expr: 'ip.src.asnum eq 1and ssl', message: RADIX_10 },
  { expr: 'ip.src.asnum eq 5and(ssl)', message: RADIX_10 },
  { expr: 'ip.src.asnum eq 05and ssl', message: 'invalid digit found in string while parsing with radix 8' },
  { expr: 'ip.src.asnum eq 0x5and ssl', message: 'unrecognised input' },
  { expr: 'ip.src.asnum eq 0xor ssl', message: 'expected digit' },
  { expr: 'ip.src eq 1.2.3.4and ssl', message: "couldn't parse address in network: invalid IP address syntax" },
  { expr: 'ip.src eq fe80::1and ssl', message: 'unrecognised input' },
  { expr: 'http.host eq 61:6and ssl', message: 'unrecognised input' },
  { expr: 'http.host eq 5or(ssl)', message: RADIX_16 },
  { expr: 'ip.src.asnum eq 5notssl', message: 'unrecognised input' },
  { expr: '5or(ssl)', message: 'unknown identifier' },
  { expr: 'ssl or 5or(ssl)', message: 'unknown identifier' },
  { expr: 'any(5or(ssl))', message: 'unknown identifier' },
];

/** The message line of an engine report: `   ^^^ message`. */
function engineMessage(report: string): string {
  const lines = report.trimEnd().split('\n');
  return lines[lines.length - 1].replace(/^ *\^* ?/, '');
}

const loaded = loadWirefilter();

test('pinned cases: our checker gives the outcome written down', () => {
  for (const p of PINNED) {
    const err = checkExpression(p.expr).diagnostics.find((d) => d.severity === 'error');
    assert.equal(err?.message, p.message, p.expr);
  }
});

if ('unavailable' in loaded) {
  test.skip(`pinned cases against wirefilter (unavailable: ${loaded.unavailable})`, () => {});
} else {
  const wf = loaded;
  test(`pinned cases: wirefilter ${wf.version} gives the same outcome, over the same span`, () => {
    try {
      for (const p of PINNED) {
        const r = wf.check(p.expr);
        assert.equal(r.ok ? undefined : engineMessage(r.message), p.message, p.expr);
        if (r.ok) continue;
        const err = checkExpression(p.expr).diagnostics.find((d) => d.severity === 'error')!;
        assert.deepEqual([err.range.start, err.range.end], p.ours ?? engineErrorSpan(p.expr, r.message), p.expr);
      }
    } finally {
      wf.close();
    }
  });
}
