/**
 * CRS's patterns are PCRE-style and, run as JavaScript regexes, can backtrack for minutes
 * on long input (ModSecurity bounds this with PCRE's match limits; JS has none). V8 can
 * hand a regex that exceeds its backtrack budget (50,000) to its linear-time engine, which
 * gives the same result for every pattern it supports: 16,000 spaces in a query took
 * 93 s over the OWASP-based ruleset, 0.6 s with it. Each bundle that runs the engine (the
 * CLI with `serve`, the service's trace worker, the language server and its evaluation
 * worker, the paranoia preview's worker: scripts/entry-points.mjs, checked by
 * test/unit/regexBudget.test.ts) turns it on when it loads; the flag is process-wide and
 * changes nothing below the budget.
 */
import { setFlagsFromString } from 'node:v8';

export function boundRegexBacktracking(): void {
  setFlagsFromString('--enable-experimental-regexp-engine-on-excessive-backtracks');
  // Tells the language (regex.ts) that user regexes may now run on irregexp too.
  (globalThis as Record<symbol, unknown>)[Symbol.for('rulesmith.regexLinearFallback')] = true;
  (globalThis as Record<symbol, unknown>)[Symbol.for('rulesmith.roomyRegex')] = roomyRegex;
}

/** A subject this long makes V8 compile a regex to native code on its first run. */
const TIER_UP_LENGTH = 1000;
/** V8's default budget, which the process keeps for every other regex. */
const DEFAULT_BACKTRACKS = 50_000;

/**
 * A regex whose budget before the fallback is `backtracks` instead of 50,000. The budget
 * counts over all start positions of one search, so a pattern that does a few backtracks
 * per position (linear work) passes 50,000 on a value of some 30 KB and then runs on the
 * linear engine at 10–30 µs per byte; op.rx uses this copy for long values
 * (runtime/crs/operators.ts). V8 reads the flag when it compiles the regex to native
 * code, which a first run on a long subject forces; if V8 ever compiles it again the default applies
 * (slower past the budget, same answers).
 */
function roomyRegex(source: string, flags: string, backtracks: number): RegExp {
  setFlagsFromString(`--regexp-backtracks-before-fallback=${backtracks}`);
  try {
    // V8 shares compiled code between regexes of the same source and flags: an empty
    // group in front (no change to what matches) keeps this one's code its own.
    const re = new RegExp(`(?:)${source}`, flags);
    const warm = '\0'.repeat(TIER_UP_LENGTH);
    re.test(warm);
    re.test(warm);
    return re;
  } finally {
    setFlagsFromString(`--regexp-backtracks-before-fallback=${DEFAULT_BACKTRACKS}`);
  }
}
