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
}
