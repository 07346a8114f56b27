/**
 * An evaluated request (evaluatedRequest.ts) as security events: one per rule that acted
 * on it or logged it, read from the evaluation's trace.
 *
 * Which trace entries are events (the engine's `outcome`):
 * - `terminated` (block, the challenges, a rate limit over its limit, the previous WAF's
 *   block), `logged` (log, managed rules in log mode, the previous WAF's simulate/log),
 *   `validation-only` (a managed rule that would have acted in validation mode),
 *   `allowed` / `bypassed` (legacy firewall rules);
 * - `skip` only when the skip rule logs (`logging.enabled` not false), as the hosted
 *   service records it;
 * - `scored` when the rule added points (an increment of 0 is not an action).
 * Not events: `counted` (a rate-limit rule under its limit), `below-threshold`, `executed`
 * (the execute rule itself: its rules' events name it), and rules that did not match.
 *
 * `action` is what happened, in the hosted event names (`jschallenge` for js_challenge);
 * a validation-only rule only logged, so its action is `log` and `ruleAction` keeps the
 * action it would have taken. Score rules get the action `score` (our extension).
 * A challenge is named for what the client got (`EvaluatedRequest.challengeMode`):
 * - served: `challenge`, `jschallenge`, `managed_challenge`;
 * - passed with the zone's clearance cookie (the engine logs the rule, outcome `logged`):
 *   the hosted "bypassed" actions, `challenge_bypassed`, `jschallenge_bypassed`,
 *   `managed_challenge_bypassed` (a valid clearance was present);
 * - passed by `--challenge pass` (taken as solved on the request itself, without a page):
 *   the hosted "solved" actions, `challenge_solved`, `jschallenge_solved`,
 *   `managed_challenge_non_interactive_solved`;
 * - solved by pressing the interstitial's button (`EvaluatedRequest.challengeSolved`
 *   `interactive`, one event for the rule that challenged, made by the proxy from what it
 *   kept of the challenged request): the hosted "solved" actions of an interactive solve,
 *   `challenge_solved`, `jschallenge_solved`, `managed_challenge_interactive_solved`;
 * - answered with the block page (`--challenge block`): `block`, as the proxy's counters
 *   count it; `ruleAction` keeps the challenge.
 *
 * `anomalyScore` is the request's total over the new managed rulesets that scored; an
 * event of the previous WAF carries the previous WAF's own score instead (its OWASP
 * package's, which the engine's trace entry carries; 0 for its CloudFlare package, which
 * does not score).
 */
import type { EvaluatedRequest } from '../../evaluatedRequest';
import type { Evaluation, Stage, TraceEntry } from '../../rulesets/engine';

export interface SecurityEvent {
  readonly rayId: string;
  readonly time: number;
  readonly zoneId: string;
  readonly action: string;
  /** The engine's outcome (`terminated`, `logged`, `scored`, `skip`, `validation-only`, …). */
  readonly outcome: string;
  /** The rule's effective action (after overrides). */
  readonly ruleAction: string;
  readonly source: EventSource;
  readonly phase: Stage;
  readonly rulesetId: string;
  readonly ruleId: string;
  readonly ref: string;
  readonly description: string;
  readonly clientIp: string;
  /** Empty when defaulted. */
  readonly country: string;
  /** 0 when unknown. */
  readonly asn: number;
  readonly method: string;
  readonly host: string;
  readonly path: string;
  readonly query: string;
  readonly userAgent: string;
  readonly httpVersion: string;
  readonly responseStatus: number;
  /** The request's total anomaly score (all scored rulesets); for an event of the previous WAF, that WAF's own score. */
  readonly anomalyScore: number;
  /** Points per rule category (attack-sqli, language-php, …) of the rules that scored. */
  readonly anomalyScores: Readonly<Record<string, number>>;
  readonly defaultedFields: readonly string[];
  readonly bodyTruncated: boolean;
  /** `proxy` (live traffic) or `trace` (the service's Trace). */
  readonly origin: 'proxy' | 'trace';
}

/** The hosted events' `source` values for the stages the engine runs. */
export type EventSource = 'firewallRules' | 'firewallCustom' | 'ratelimit' | 'firewallManaged' | 'waf';

const SOURCES: Readonly<Record<Stage, EventSource>> = {
  legacy_firewall_rules: 'firewallRules',
  http_request_firewall_custom: 'firewallCustom',
  http_ratelimit: 'ratelimit',
  http_request_firewall_managed: 'firewallManaged',
  previous_waf: 'waf',
};

/** Engine action names that the hosted events spell differently. */
const HOSTED_ACTION: Readonly<Record<string, string>> = { js_challenge: 'jschallenge' };

/** A challenge the client passed with its clearance cookie: the hosted "bypassed" actions. */
const BYPASSED: Readonly<Record<string, string>> = { challenge: 'challenge_bypassed', js_challenge: 'jschallenge_bypassed', managed_challenge: 'managed_challenge_bypassed' };
/** A challenge taken as solved (`--challenge pass`): the hosted "solved" actions (a managed challenge solved without interaction). */
const SOLVED: Readonly<Record<string, string>> = { challenge: 'challenge_solved', js_challenge: 'jschallenge_solved', managed_challenge: 'managed_challenge_non_interactive_solved' };

/** A challenge solved by pressing the interstitial's button: the hosted "solved" actions of an interactive solve. */
const SOLVED_INTERACTIVELY: Readonly<Record<string, string>> = { challenge: 'challenge_solved', js_challenge: 'jschallenge_solved', managed_challenge: 'managed_challenge_interactive_solved' };

/** What the event says happened for a trace entry that is one (see the file's comment). */
function eventAction(e: TraceEntry, ruleAction: string, request: EvaluatedRequest): string {
  const { challengeMode } = request;
  if (e.outcome === 'validation-only') return 'log';
  if (e.outcome === 'scored') return 'score';
  // The engine logs a challenge rule (action kept) only when the client has passed it
  // (RequestHooks.challengePassed); the proxy's solve of an interstitial holds it so too.
  if (e.outcome === 'logged' && BYPASSED[ruleAction]) return (request.challengeSolved === 'interactive' ? SOLVED_INTERACTIVELY : challengeMode === 'pass' ? SOLVED : BYPASSED)[ruleAction]!;
  if (e.outcome === 'terminated' && challengeMode === 'block' && BYPASSED[ruleAction]) return 'block';
  return HOSTED_ACTION[ruleAction] ?? ruleAction;
}

/** The previous WAF's anomaly score, for its own events: its OWASP package's (the engine's trace entry carries it); 0 for its CloudFlare package. */
const previousWafScore = (e: TraceEntry): number => e.score ?? 0;

/** A rule's categories, to split the anomaly score by category (undefined: none known). */
export type CategoriesOf = (rulesetId: string | undefined, ruleId: string | undefined) => readonly string[] | undefined;

export function eventsOf(request: EvaluatedRequest, categoriesOf: CategoriesOf = () => undefined, origin: 'proxy' | 'trace' = 'proxy'): SecurityEvent[] {
  const { evaluation } = request;
  const acting: TraceEntry[] = [];
  let loggedSkips: Set<string> | undefined;
  for (const e of evaluation.trace) {
    switch (e.outcome) {
      case 'terminated':
      case 'logged':
      case 'validation-only':
      case 'allowed':
      case 'bypassed':
        acting.push(e);
        break;
      case 'scored':
        if ((e.scoreAdded ?? 0) > 0) acting.push(e);
        break;
      case 'skip':
        loggedSkips ??= new Set(evaluation.logs.filter((l) => l.outcome === 'skip').map((l) => key(l.rulesetId, l.ruleId, l.ref)));
        if (loggedSkips.has(key(e.rulesetId, e.ruleId, e.ref))) acting.push(e);
        break;
      default:
        break;
    }
  }
  if (acting.length === 0) return [];
  let anomalyScore = 0;
  for (const v of Object.values(evaluation.scores)) anomalyScore += v;
  const anomalyScores: Record<string, number> = {};
  for (const e of evaluation.trace) {
    if (e.outcome !== 'scored' || !e.scoreAdded) continue;
    for (const c of categoriesOf(e.rulesetId, e.ruleId) ?? []) anomalyScores[c] = (anomalyScores[c] ?? 0) + e.scoreAdded;
  }
  return acting.map((e) => {
    const ruleAction = e.action ?? (e.outcome === 'skip' ? 'skip' : '');
    const action = eventAction(e, ruleAction, request);
    const previous = e.phase === 'previous_waf';
    return {
      rayId: request.rayId,
      time: request.time,
      zoneId: request.zoneId,
      action,
      outcome: e.outcome,
      ruleAction,
      source: SOURCES[e.phase],
      phase: e.phase,
      rulesetId: e.rulesetId ?? '',
      ruleId: e.ruleId ?? '',
      ref: e.ref ?? '',
      description: e.description ?? '',
      clientIp: request.clientIp,
      country: request.country ?? '',
      asn: request.asn ?? 0,
      method: request.method,
      host: request.host,
      path: request.path,
      query: request.query,
      userAgent: request.userAgent,
      httpVersion: request.httpVersion,
      responseStatus: request.responseStatus,
      // The previous WAF scored on its own (its split by category is not known).
      anomalyScore: previous ? previousWafScore(e) : anomalyScore,
      anomalyScores: previous ? {} : anomalyScores,
      defaultedFields: request.defaultedFields,
      bodyTruncated: request.bodyTruncated,
      origin,
    };
  });
}

/**
 * What `eventsOf` reads of an evaluation, and only that: the trace entries that may become
 * events (or give points) and the skip logs. The trace worker sends this back with a trace's
 * answer — a few entries instead of the whole OWASP trace.
 */
const MAY_BE_EVENTS: ReadonlySet<string> = new Set(['terminated', 'logged', 'validation-only', 'allowed', 'bypassed', 'scored', 'skip']);

export function eventEvaluation(ev: Evaluation): Evaluation {
  return {
    decision: ev.decision,
    trace: ev.trace.filter((e) => MAY_BE_EVENTS.has(e.outcome)),
    scores: ev.scores,
    logs: ev.logs.filter((l) => l.outcome === 'skip'),
    skippedProducts: {},
  };
}

function key(rulesetId: string | undefined, ruleId: string | undefined, ref: string | undefined): string {
  return `${rulesetId ?? ''}\u0000${ruleId ?? ''}\u0000${ref ?? ''}`;
}
