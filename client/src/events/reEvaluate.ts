// Opening an event re-runs its request through the zone's current configuration (the
// rules service's Trace) and says whether the result still matches what the event
// recorded. No vscode import: unit-tested.
import type { TraceResult, TraceStep } from '../../../server/src/rulesApi';
import type { SecurityEvent } from './queries';

/** The Trace request for the event's request (what an event keeps of it: no body, no other headers). */
export function traceRequestOf(e: SecurityEvent): Record<string, unknown> {
  const context: Record<string, unknown> = { ip: e.clientIP };
  if (e.clientCountryName) context.country = e.clientCountryName;
  return {
    url: `https://${e.clientRequestHTTPHost}${e.clientRequestPath}${e.clientRequestQuery ? `?${e.clientRequestQuery}` : ''}`,
    method: e.clientRequestHTTPMethodName,
    protocol: e.clientRequestHTTPProtocol || 'HTTP/1.1',
    ...(e.userAgent ? { headers: { 'User-Agent': e.userAgent } } : {}),
    context,
  };
}

const TERMINATING: Readonly<Record<string, string>> = { block: 'block', challenge: 'challenge', jschallenge: 'js_challenge', managed_challenge: 'managed_challenge' };
const CHALLENGES: ReadonlySet<string> = new Set(['challenge', 'js_challenge', 'managed_challenge']);

function findRule(steps: readonly TraceStep[], ruleId: string): TraceStep | undefined {
  for (const s of steps) {
    if (s.type === 'rule' && s.step_name === ruleId) return s;
    const inner = s.trace ? findRule(s.trace, ruleId) : undefined;
    if (inner) return inner;
  }
  return undefined;
}

/** Undefined when the zone still does what the event recorded; else what differs now. */
export function differenceNow(e: SecurityEvent, r: TraceResult): string | undefined {
  // A challenge the proxy answered with the block page (--challenge block) is recorded as
  // block; the rule's own action, which the Trace decides, is its ruleAction.
  const was = e.action === 'block' && CHALLENGES.has(e.ruleAction) ? e.ruleAction : TERMINATING[e.action];
  if (was) {
    const d = r.decision;
    if (d.action === was && d.rule_id === e.ruleId) return undefined;
    const recorded = `${e.action}${was !== TERMINATING[e.action] ? ` (its ${was} answered with the block page)` : ''} by ${e.ruleId}`;
    return d.action === 'allow-through'
      ? `The request now passes: no rule acts on it (the event recorded ${recorded}).`
      : `The request is now ${d.action === was ? `${d.action}ed by another rule, ${d.rule_id ?? d.ref ?? '?'}` : `${d.action} by ${d.rule_id ?? d.ref ?? '?'}`} (the event recorded ${recorded}).`;
  }
  const step = findRule(r.trace, e.ruleId);
  if (step?.matched) return undefined;
  return `Rule ${e.ruleId} no longer ${e.action === 'score' ? 'scores' : e.action === 'skip' ? 'skips' : 'logs'} this request${step ? ` (now: ${step.outcome ?? 'not matched'})` : ' (it does not run on the zone now)'}; the decision is ${r.decision.action}.`;
}
