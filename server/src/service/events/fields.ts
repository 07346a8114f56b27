/**
 * The events' GraphQL fields, one table: name (the hosted schema's where it has one),
 * GraphQL type, the SQL that reads it, and whether the hourly counts (schema.ts) have it.
 * The schema (graphql.ts), the filters and the SQL (query.ts) are all generated from it.
 */

export type FieldType = 'String' | 'Int' | 'Time' | 'Date';

export interface EventField {
  readonly name: string;
  readonly type: FieldType;
  /** SQL over `security_events` (or the hourly view, whose `time` is the hour). */
  readonly sql: string;
  /** In the hourly counts: a group query on such fields only may read them. */
  readonly hourly?: boolean;
  /** Not in the hosted schema: ours (docs/events.md lists them). */
  readonly extension?: boolean;
  /** A field of events only (no filter, no group dimension). */
  readonly eventOnly?: boolean;
  /** A group dimension only (time buckets). */
  readonly groupOnly?: boolean;
  readonly doc: string;
}

const bucket = (ms: number) => `((time / ${ms}) * ${ms})`;

export const EVENT_FIELDS: readonly EventField[] = [
  { name: 'action', type: 'String', sql: 'action', hourly: true, doc: 'What happened: block, challenge, jschallenge, managed_challenge (a challenge served), challenge_bypassed, jschallenge_bypassed, managed_challenge_bypassed (passed with the clearance cookie), challenge_solved, jschallenge_solved (solved: the interstitial button pressed, or --challenge pass), managed_challenge_interactive_solved (the interstitial button pressed), managed_challenge_non_interactive_solved (taken as solved: --challenge pass), log, skip, allow, bypass, score (ours). A challenge answered with the block page (--challenge block) is block.' },
  { name: 'source', type: 'String', sql: 'source', hourly: true, doc: 'firewallCustom, firewallManaged, ratelimit, firewallRules (legacy), waf (the previous WAF).' },
  { name: 'rulesetId', type: 'String', sql: 'ruleset_id', hourly: true, doc: 'The ruleset of the rule (empty for legacy firewall rules).' },
  { name: 'ruleId', type: 'String', sql: 'rule_id', hourly: true, doc: 'The rule that acted.' },
  { name: 'description', type: 'String', sql: 'description', hourly: true, doc: "The rule's description." },
  { name: 'datetime', type: 'Time', sql: 'time', hourly: true, doc: 'When the request arrived (RFC 3339, UTC, to the second); for a solved challenge (the interstitial\'s button), when the button was pressed, its other fields being the challenged request\'s.' },
  { name: 'rayName', type: 'String', sql: 'ray_id', doc: "The request's ray id (the proxy's block page shows it)." },
  { name: 'clientIP', type: 'String', sql: 'client_ip', doc: "The client's address." },
  { name: 'clientAsn', type: 'String', sql: "CASE WHEN asn = 0 THEN '' ELSE CAST(asn AS TEXT) END", doc: "The client's ASN (empty when unknown)." },
  { name: 'clientCountryName', type: 'String', sql: 'country', doc: "The client's country, ISO 3166 alpha-2 (empty when unknown)." },
  { name: 'clientRequestHTTPHost', type: 'String', sql: 'host', doc: 'The Host.' },
  { name: 'clientRequestHTTPMethodName', type: 'String', sql: 'method', doc: 'The method.' },
  { name: 'clientRequestHTTPProtocol', type: 'String', sql: 'http_version', doc: 'HTTP/1.1, HTTP/2 …' },
  { name: 'clientRequestPath', type: 'String', sql: 'path', doc: 'The path.' },
  { name: 'clientRequestQuery', type: 'String', sql: 'query', doc: 'The query string, without its ?.' },
  { name: 'userAgent', type: 'String', sql: 'user_agent', doc: 'The User-Agent.' },
  { name: 'edgeResponseStatus', type: 'Int', sql: 'response_status', doc: 'The status the client got.' },
  { name: 'ref', type: 'String', sql: 'ref', extension: true, doc: "The rule's ref." },
  { name: 'phase', type: 'String', sql: 'phase', extension: true, doc: "The engine's stage: http_request_firewall_custom, http_ratelimit, http_request_firewall_managed, legacy_firewall_rules, previous_waf." },
  { name: 'outcome', type: 'String', sql: 'outcome', extension: true, doc: "The engine's outcome: terminated, logged, scored, skip, validation-only, allowed, bypassed." },
  { name: 'ruleAction', type: 'String', sql: 'rule_action', extension: true, doc: "The rule's effective action (a validation-only rule's action is log; this is what it would have done)." },
  { name: 'anomalyScore', type: 'Int', sql: 'anomaly_score', extension: true, doc: "The request's total anomaly score (an event of the previous WAF: that WAF's own score)." },
  { name: 'origin', type: 'String', sql: 'origin', hourly: true, extension: true, doc: 'proxy (live traffic) or trace (the Trace API).' },
  { name: 'bodyTruncated', type: 'Int', sql: 'body_truncated', extension: true, eventOnly: true, doc: '1 when the body was longer than the inspection limit.' },
  { name: 'datetimeMinute', type: 'Time', sql: bucket(60_000), groupOnly: true, doc: 'The minute.' },
  { name: 'datetimeFiveMinutes', type: 'Time', sql: bucket(300_000), groupOnly: true, doc: 'The five minutes.' },
  { name: 'datetimeFifteenMinutes', type: 'Time', sql: bucket(900_000), groupOnly: true, doc: 'The fifteen minutes.' },
  { name: 'datetimeHour', type: 'Time', sql: bucket(3_600_000), hourly: true, groupOnly: true, doc: 'The hour.' },
  { name: 'date', type: 'Date', sql: bucket(86_400_000), hourly: true, groupOnly: true, doc: 'The day (UTC).' },
];

export const FIELD_BY_NAME: ReadonlyMap<string, EventField> = new Map(EVENT_FIELDS.map((f) => [f.name, f]));

/** Fields of `firewallEventsAdaptive` rows (beyond the JSON ones graphql.ts adds). */
export const EVENT_ROW_FIELDS = EVENT_FIELDS.filter((f) => !f.groupOnly);
/** Dimensions of `firewallEventsAdaptiveGroups`. */
export const GROUP_DIMENSIONS = EVENT_FIELDS.filter((f) => !f.eventOnly);
/** Fields a filter may name. */
export const FILTER_FIELDS = EVENT_FIELDS.filter((f) => !f.eventOnly && !f.groupOnly);

/** A stored time (ms) as the API writes it: RFC 3339 UTC to the second. */
export function formatTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

export function formatDate(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}
