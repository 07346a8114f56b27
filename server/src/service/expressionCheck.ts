/**
 * The language core's expression check as the service uses it: only its diagnostics, with
 * two guards for a server that answers everyone from one thread.
 *
 * - An expression longer than the API's limit (MAX_EXPRESSION_LENGTH, user rules only) is
 *   answered with the core's own too-long error without being parsed: parsing is linear
 *   but not cheap (a megabyte takes seconds), and the answer would be the same refusal.
 * - A regex is checked, never compiled, here (the core's checkRegex: parsed and its size
 *   estimated, linear in the pattern): a pattern near the engine's size limit takes
 *   seconds and 20 MB to compile, which only the trace worker does, under its time limit.
 * - Results are cached by (text, plan, phase, managed): they are pure functions of those,
 *   and a ruleset PUT (Terraform sends the whole list on every apply) or a firewall-rule
 *   batch re-sends mostly the expressions it sent last time.
 *
 * And the one policy of what the API refuses (`expressionVerdict`), for rulesets and the
 * legacy filters alike: the engine's errors, and the warnings an editor shows but the
 * service, which knows the zone's plan and the phase, cannot accept.
 */
import { checkExpression, type Diagnostic } from '../language/index';
import { isTooLong, tooLong } from '../language/check';
import { engineReport } from '../language/report';
import type { Phase, Plan } from '../language/scheme/types';

export interface ExpressionOptions {
  readonly plan?: Plan;
  readonly phase?: Phase;
  readonly allowManaged?: boolean;
  /** A rate limiting rule's counting expression (the response fields are available). */
  readonly countingExpression?: boolean;
  /** An account-level ruleset's rule (kind `root` or `custom`). */
  readonly account?: boolean;
}

const CACHE_SIZE = 2_000;
const cache = new Map<string, readonly Diagnostic[]>();

/** The core's diagnostics of an expression (see the file comment). */
export function expressionDiagnostics(text: string, options: ExpressionOptions): readonly Diagnostic[] {
  // Refused before the cache, so a long expression is not kept as a key.
  if (!options.allowManaged && isTooLong(text)) return [tooLong(text)];
  const key = `${options.plan ?? ''}\u0000${options.phase ?? ''}\u0000${options.allowManaged ? 1 : 0}${options.countingExpression ? 1 : 0}${options.account ? 1 : 0}\u0000${text}`;
  const hit = cache.get(key);
  if (hit) {
    // Most recently used last: Map keeps insertion order.
    cache.delete(key);
    cache.set(key, hit);
    return hit;
  }
  const diagnostics = checkExpression(text, { plan: options.plan, phase: options.phase, allowManaged: options.allowManaged, countingExpression: options.countingExpression, account: options.account }).diagnostics;
  cache.set(key, diagnostics);
  if (cache.size > CACHE_SIZE) cache.delete(cache.keys().next().value!);
  return diagnostics;
}

/**
 * Warnings of the core that the API refuses: a field or function the phase does not have,
 * what a rate limiting rule may not read there, or what the zone's plan lacks (managed-only ones are already errors outside managed rulesets).
 */
const REFUSED_WARNINGS: ReadonlySet<string> = new Set(['not-in-phase', 'plan-required', 'ratelimit-restriction']);

export interface ExpressionVerdict {
  /** The engine's first error: the expression does not parse or does not type-check. */
  readonly error?: Diagnostic;
  /** The first refused warning (REFUSED_WARNINGS), in the expression's order. */
  readonly refused?: Diagnostic;
  /** The first field or function the phase does not have (refused everywhere). */
  readonly notInPhase?: Diagnostic;
  /** The first field or function the zone's plan lacks. */
  readonly planRequired?: Diagnostic;
  /** The other warnings, reported with an accepted expression. */
  readonly warnings: readonly Diagnostic[];
}

/** What the API makes of an expression's diagnostics (see the file comment). */
export function expressionVerdict(text: string, options: ExpressionOptions): ExpressionVerdict {
  const diagnostics = expressionDiagnostics(text, options);
  const error = diagnostics.find((d) => d.severity === 'error');
  const refused = diagnostics.find((d) => REFUSED_WARNINGS.has(d.code));
  const notInPhase = diagnostics.find((d) => d.code === 'not-in-phase');
  const planRequired = diagnostics.find((d) => d.code === 'plan-required');
  return {
    ...(error ? { error } : {}),
    ...(refused ? { refused } : {}),
    ...(notInPhase ? { notInPhase } : {}),
    ...(planRequired ? { planRequired } : {}),
    warnings: diagnostics.filter((d) => d.severity === 'warning' && !REFUSED_WARNINGS.has(d.code)),
  };
}

/**
 * The API's refusal of an expression for `field` (rules-api §1.6): the expression quoted,
 * then the engine's layout of `d` under it (report.ts `engineReport`). One over the length
 * limit is measured, not quoted back: it may be megabytes.
 */
export function refusalText(text: string, field: string, because: string, d: Diagnostic, heading: string): string {
  if (d.code === 'expression-too-long') return `the value for ${field} is not valid because ${d.message}`;
  return `'${text}' is not a valid value for ${field} because ${because}: ${engineReport(text, d, heading)}`;
}
