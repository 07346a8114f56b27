/**
 * The one line that says what happened to a request, as the CodeLens, the local trace and
 * the zone trace word it. A request that passed still names every rule that logged it,
 * skipped something for it or scored it ("Passed — logged by log-admin · anomaly score 2
 * < 25 from 920350"): "no rule acted" only when none did. Pure wording; the adapters turn
 * the engine's Evaluation (lsp/evaluationTrace.ts) or the service's Trace (the client's
 * zoneTrace.ts) into these facts.
 */

/** What happened besides the decision, each rule named as people read it. */
export interface VerdictFacts {
  /** Rules whose action logged the request (log, validation-only, counted). */
  readonly logged: readonly string[];
  /** Skip rules (and legacy bypasses) that matched, with what each skips: `health-check skips waf`. */
  readonly skipped: readonly { readonly by: string; readonly what: string }[];
  /** An anomaly score the request reached, with the rules that added to it. */
  readonly score?: { readonly total: number; readonly threshold?: number; readonly reached: boolean; readonly by: readonly string[] };
}

/** How many names a list shows before "and N more". */
export const MAX_NAMES = 3;

/** `a`, `a and b`, `a, b and c`, `a, b, c and 2 more`. */
export function nameList(names: readonly string[], max = MAX_NAMES): string {
  const unique = [...new Set(names)];
  if (unique.length <= 1) return unique[0] ?? '';
  if (unique.length > max) return `${unique.slice(0, max).join(', ')} and ${unique.length - max} more`;
  return `${unique.slice(0, -1).join(', ')} and ${unique[unique.length - 1]}`;
}

/** The facts as clauses, in the order they read: skips, logs, the score. */
export function factClauses(f: VerdictFacts): string[] {
  const out: string[] = [];
  const skips = f.skipped.slice(0, MAX_NAMES).map((s) => `${s.by} ${s.what}`);
  if (f.skipped.length > MAX_NAMES) skips.push(`${f.skipped.length - MAX_NAMES} more skip rules`);
  out.push(...skips);
  if (f.logged.length > 0) out.push(`logged by ${nameList(f.logged)}`);
  if (f.score) {
    const cmp = f.score.threshold === undefined ? '' : ` ${f.score.reached ? '≥' : '<'} ${f.score.threshold}`;
    out.push(`anomaly score ${f.score.total}${cmp}${f.score.by.length > 0 ? ` from ${nameList(f.score.by)}` : ''}`);
  }
  return out;
}

/** The title of a request that passed: what happened, or "no rule acted" when nothing did. */
export function passedTitle(f: VerdictFacts): string {
  const clauses = factClauses(f);
  return clauses.length === 0 ? 'Passed — no rule acted' : `Passed — ${clauses.join(' · ')}`;
}

/** The title of a request a rule stopped: `Blocked by x (phase)`, then what else happened. */
export function actedTitle(acted: string, f: VerdictFacts): string {
  const clauses = factClauses(f);
  return clauses.length === 0 ? acted : `${acted} · ${clauses.join(' · ')}`;
}
