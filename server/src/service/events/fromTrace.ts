/**
 * A request the service's Trace evaluated, as the evaluated request the events sink takes
 * (evaluatedRequest.ts), so a trace leaves events as live traffic does, marked
 * `origin: trace`. What a trace has no value for:
 * - the ray id is made here (`<16 hex>-TRC`; the proxy's end in `-LCL`) and the trace's
 *   answer carries it as `ray_id`, so its events can be found;
 * - the client is `context.ip`, else the trace's default address (192.0.2.1), which is
 *   then listed among the defaulted fields, as are the country, ASN, bot and threat scores
 *   the trace's `context` did not give, and every other field only an edge gives that the
 *   zone's rules read and the trace gave no value for (`ip.src.continent`, `cf.tls_client_auth.*`, …);
 * - the response status is the WAF's when a rule ended the request (`status_code`), else 0:
 *   a trace never reaches an origin.
 */
import type { EvaluatedRequest } from '../../evaluatedRequest';
import { randomHex } from '../api';
import { DEFAULT_CLIENT_IP } from '../../requests/fields';
import type { SampleRequest } from '../../requests/types';
import type { Evaluation } from '../../rulesets/engine';

/** Fields a trace's `context` may give; those it does not are defaulted (ip.src.asnum never has a source). */
const CONTEXT_FIELDS = ['ip.src', 'ip.src.country', 'ip.src.asnum', 'cf.bot_management.score', 'cf.threat_score'] as const;

export function traceRayId(): string {
  return `${randomHex(8)}-TRC`;
}

export interface TracedRequestInput {
  readonly rayId: string;
  readonly time: number;
  readonly zoneId: string;
  readonly zoneName: string;
  /** The trace's request (its URL, method, headers and `# @field` context values). */
  readonly sample: SampleRequest;
  readonly evaluation: Evaluation;
  /** The edge-only fields the zone's rules read that the trace had no value for (requests/fields.ts `defaultedReads`). */
  readonly defaultedReads: readonly string[];
  /** The WAF's status when a rule ended the request. */
  readonly statusCode?: number;
  readonly bodyTruncated: boolean;
}

export function tracedRequest(t: TracedRequestInput): EvaluatedRequest {
  const url = new URL(t.sample.url);
  const meta = t.sample.meta;
  const given = (f: string) => (meta[f] ?? '').trim() !== '';
  const country = meta['ip.src.country']?.trim();
  return {
    rayId: t.rayId,
    time: t.time,
    zoneId: t.zoneId,
    zoneName: t.zoneName,
    clientIp: given('ip.src') ? meta['ip.src']!.trim() : DEFAULT_CLIENT_IP,
    ...(country ? { country } : {}),
    method: t.sample.method,
    host: url.hostname,
    path: url.pathname,
    query: url.search.slice(1),
    userAgent: t.sample.headers.find(([k]) => k.toLowerCase() === 'user-agent')?.[1] ?? '',
    httpVersion: t.sample.httpVersion,
    responseStatus: t.statusCode ?? 0,
    evaluation: t.evaluation,
    defaultedFields: [...new Set([...CONTEXT_FIELDS.filter((f) => !given(f)), ...t.defaultedReads])],
    bodyTruncated: t.bodyTruncated,
  };
}
