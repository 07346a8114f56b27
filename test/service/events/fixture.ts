// Evaluated requests for the security-events tests, as the proxy will hand them over:
// a real compileZone(...).evaluate(...) of real field values against a small zone — custom
// rules (block, log, a logging skip and a silent one) and a scored managed ruleset whose
// rules are tagged attack-sqli / attack-xss.
import assert from 'node:assert/strict';
import { prepareFields } from '../../../server/src/language/index';
import type { EvaluatedRequest } from '../../../server/src/evaluatedRequest';
import type { ManagedCatalog, ManagedRule } from '../../../server/src/rulesets/catalog';
import { compileZone, type ZoneConfig } from '../../../server/src/rulesets/engine';

export const CUSTOM_EP = 'c'.repeat(32);
export const MANAGED_EP = 'd'.repeat(32);
export const SCORED = 'a'.repeat(32);
export const SQLI_RULE = '1'.repeat(32);
export const XSS_RULE = '2'.repeat(32);
export const ANOMALY_RULE = '3'.repeat(32);
export const BLOCK_ADMIN = 'b1'.repeat(16);
export const LOG_CURL = 'b2'.repeat(16);
export const SKIP_HEALTH = 'b3'.repeat(16);
export const SKIP_QUIET = 'b4'.repeat(16);

const scored = (id: string, ref: string, expression: string, category: string): ManagedRule => ({
  id,
  ref,
  description: `${ref} rule`,
  expression,
  action: 'score',
  enabled: true,
  categories: ['paranoia-level-1', category],
  action_parameters: { increment: 5 },
});

export const CATALOG: ManagedCatalog = {
  rulesets: [
    {
      id: SCORED,
      name: 'Test scored ruleset',
      description: '',
      kind: 'managed',
      phase: 'http_request_firewall_managed',
      anomalyRuleId: ANOMALY_RULE,
      versions: [
        {
          version: '1',
          last_updated: '2024-01-01T00:00:00Z',
          rules: [
            scored(SQLI_RULE, 'sqli', 'http.request.uri.query contains "union"', 'attack-sqli'),
            scored(XSS_RULE, 'xss', 'http.request.uri.query contains "<script"', 'attack-xss'),
            { id: ANOMALY_RULE, ref: 'anomaly', description: 'Anomaly score exceeded', expression: 'true', action: 'block', enabled: true, categories: [], score_threshold: 10 },
          ],
        },
      ],
    },
  ],
};

export const ZONE: ZoneConfig = {
  catalog: CATALOG,
  entryPoints: {
    http_request_firewall_custom: {
      id: CUSTOM_EP,
      kind: 'zone',
      phase: 'http_request_firewall_custom',
      rules: [
        { id: SKIP_HEALTH, ref: 'skip-health', description: 'health checks', action: 'skip', expression: 'http.request.uri.path eq "/health"', action_parameters: { ruleset: 'current' } },
        { id: SKIP_QUIET, ref: 'skip-quiet', description: 'quiet skip', action: 'skip', expression: 'http.request.uri.path eq "/quiet"', action_parameters: { ruleset: 'current' }, logging: { enabled: false } },
        { id: LOG_CURL, ref: 'log-curl', description: 'curl clients', action: 'log', expression: 'http.user_agent contains "curl"' },
        { id: BLOCK_ADMIN, ref: 'block-admin', description: 'no admin', action: 'block', expression: 'http.request.uri.path eq "/admin"' },
      ],
    },
    http_request_firewall_managed: {
      id: MANAGED_EP,
      kind: 'zone',
      phase: 'http_request_firewall_managed',
      rules: [{ id: 'e1'.repeat(16), ref: 'run-scored', action: 'execute', expression: 'true', action_parameters: { id: SCORED } }],
    },
  },
};

const compiled = compileZone(ZONE);
assert.deepEqual(compiled.problems, []);

export interface Req {
  readonly path?: string;
  readonly query?: string;
  readonly ua?: string;
  readonly ip?: string;
  readonly method?: string;
  readonly time?: number;
  readonly ray?: string;
}

let rays = 0;

/** The request evaluated against ZONE, as the proxy would record it for `zoneId`. */
export function evaluated(zoneId: string, r: Req = {}): EvaluatedRequest {
  const path = r.path ?? '/';
  const query = r.query ?? '';
  const ua = r.ua ?? 'Mozilla/5.0';
  const ip = r.ip ?? '203.0.113.7';
  const method = r.method ?? 'GET';
  const { values, errors } = prepareFields({
    'http.request.uri.path': path,
    'http.request.uri.query': query,
    'http.user_agent': ua,
    'http.request.method': method,
    'ip.src': ip,
  });
  assert.deepEqual(errors, []);
  const evaluation = compiled.evaluate(values);
  const blocked = evaluation.decision.action !== 'allow-through';
  return {
    rayId: r.ray ?? `${(++rays).toString(16).padStart(16, '0')}`,
    time: r.time ?? Date.UTC(2026, 10, 26, 3, 0, 0),
    zoneId,
    zoneName: 'enterprise.example.com',
    clientIp: ip,
    country: 'NL',
    asn: 64500,
    method,
    host: 'enterprise.example.com',
    path,
    query,
    userAgent: ua,
    httpVersion: 'HTTP/1.1',
    responseStatus: blocked ? 403 : 200,
    evaluation,
    defaultedFields: ['ip.src.city'],
    bodyTruncated: false,
  };
}
