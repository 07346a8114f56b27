/**
 * Which part of a trace the trace views show. "Matched only" (the default) keeps the rules
 * that did something — matched, acted, logged, scored, skipped something, could not run —
 * and drops the hundreds that did not match; "all rules" keeps everything. The `crs.*`
 * fields (the managed ruleset's derived request collections) are internals: hidden unless
 * asked for. Pure; used by the local trace (lsp/evaluationTrace.ts) and the zone trace
 * (the client's zoneTrace.ts).
 */
import type { TraceEntry } from './engine';

export interface TraceViewOptions {
  /** Every rule looked at, matched or not (default: matched only). */
  readonly allRules?: boolean;
  /** Show the `crs.*` fields (default: hidden). */
  readonly internals?: boolean;
}

/** Outcomes of a rule that did nothing for this request. */
const QUIET: ReadonlySet<string> = new Set(['not-matched', 'disabled', 'skipped']);

/** Whether a trace entry is shown in "matched only". */
export function entryShown(t: Pick<TraceEntry, 'matched' | 'outcome'>): boolean {
  return t.matched === true || !QUIET.has(t.outcome);
}

/** The entries shown and how many were hidden. */
export function visibleEntries<T extends Pick<TraceEntry, 'matched' | 'outcome'>>(trace: readonly T[], o: TraceViewOptions = {}): { shown: T[]; hidden: number } {
  if (o.allRules) return { shown: [...trace], hidden: 0 };
  const shown = trace.filter(entryShown);
  return { shown, hidden: trace.length - shown.length };
}

/** Whether a field name is one of the managed ruleset's internals (`crs.args`, `crs.request_headers`, …). */
export const isInternalField = (name: string): boolean => name.startsWith('crs.');

/** The fields shown and how many internals were hidden. */
export function visibleFields<V>(fields: readonly (readonly [string, V])[], o: TraceViewOptions = {}): { shown: [string, V][]; hidden: number } {
  if (o.internals) return { shown: fields.map(([k, v]) => [k, v]), hidden: 0 };
  const shown = fields.filter(([k]) => !isInternalField(k)).map(([k, v]) => [k, v] as [string, V]);
  return { shown, hidden: fields.length - shown.length };
}

/** A step of the service's Trace (phase → ruleset → rule), as far as filtering needs it. */
export interface StepLike<S> {
  readonly type: string;
  readonly matched: boolean;
  readonly outcome?: string;
  readonly trace?: readonly S[];
}

/**
 * The service's step tree, matched only: a rule step stays when it matched or did
 * something; a phase or ruleset step stays when it matched or keeps a step below.
 * `hidden` counts the rule steps dropped.
 */
export function visibleSteps<S extends StepLike<S>>(steps: readonly S[], o: TraceViewOptions = {}): { shown: S[]; hidden: number } {
  if (o.allRules) return { shown: [...steps], hidden: 0 };
  let hidden = 0;
  const walk = (list: readonly S[]): S[] => {
    const out: S[] = [];
    for (const s of list) {
      if (s.type === 'rule') {
        if (s.matched || (s.outcome !== undefined && !QUIET.has(s.outcome))) out.push(s.trace?.length ? { ...s, trace: walk(s.trace) } : s);
        else hidden++;
        continue;
      }
      const inner = s.trace ? walk(s.trace) : [];
      if (s.matched || inner.length > 0) out.push({ ...s, trace: inner });
    }
    return out;
  };
  const shown = walk(steps);
  return { shown, hidden };
}
