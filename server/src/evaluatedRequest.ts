/**
 * What the WAF proxy hands to the security-events store for each request it evaluated.
 * The proxy builds it; the events store turns it into one event per acting rule. Kept here,
 * between the two, so neither imports the other.
 */
import type { Evaluation } from './rulesets/engine';

export interface EvaluatedRequest {
  /** The `CF-Ray`-style id the proxy gave the request (also on its block page). */
  readonly rayId: string;
  /** When the proxy received the request (ms since the epoch). */
  readonly time: number;
  readonly zoneId: string;
  readonly zoneName: string;
  readonly clientIp: string;
  /** ISO 3166 alpha-2, or `undefined` when defaulted. */
  readonly country?: string;
  readonly asn?: number;
  readonly method: string;
  readonly host: string;
  readonly path: string;
  /** The query string without its `?` (empty when none). */
  readonly query: string;
  readonly userAgent: string;
  /** e.g. `HTTP/1.1`. */
  readonly httpVersion: string;
  /** The status the client got (from the proxy's own page or from the upstream). */
  readonly responseStatus: number;
  readonly evaluation: Evaluation;
  /** Fields with no local source that took the engine's default (e.g. `ip.src.country`). */
  readonly defaultedFields: readonly string[];
  /** The body was longer than the inspection limit and was evaluated on its first bytes. */
  readonly bodyTruncated: boolean;
  /**
   * How the proxy answered challenge actions (`--challenge`): `interstitial` (the challenge
   * page; a client with the zone's clearance cookie passes), `pass` (every challenge taken as
   * solved), `block` (the block page). Absent (the Trace): as `interstitial`.
   */
  readonly challengeMode?: 'interstitial' | 'pass' | 'block';
  /**
   * `interactive`: this is the solve of a challenge the interstitial served, its button pressed
   * (proxy.ts `passChallenge`). The request's fields are the challenged request's, its
   * evaluation holds only the challenging rule's entry, `logged`, and its event is the hosted
   * "solved" action of an interactive solve (`challenge_solved`, `jschallenge_solved`,
   * `managed_challenge_interactive_solved`).
   */
  readonly challengeSolved?: 'interactive';
}

/** Where the proxy sends evaluated requests; must return at once (batching is the sink's job). */
export interface EvaluatedRequestSink {
  record(request: EvaluatedRequest): void;
}

/** Where the service's Trace sends what it evaluated (its events say `origin: trace`); must return at once. */
export interface TracedRequestSink {
  recordTrace(request: EvaluatedRequest): void;
}
