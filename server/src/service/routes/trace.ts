/**
 * `POST /accounts/{account_id}/request-tracer/trace` — the hosted Trace: evaluates a
 * request against the deployed configuration of the zone that serves its URL, with the
 * shared engine (the same `compileZone` + `evaluate` as `rulesmith eval` and the editor's
 * Evaluate), and returns the steps phase → ruleset → rule with matched flags.
 *
 * Request (the hosted shape, SDK `TraceCreateParams`; strict decoding):
 *   { url, method, protocol?, headers?: {name: value}, cookies?: {name: value},
 *     body?: {base64? | json? | plain_text?},
 *     context?: {bot_score?, threat_score?, skip_challenge?, geoloc?: {iso_code, continent,
 *       city, is_eu_country, latitude, longitude, postal_code, region_code,
 *       subdivision_2_iso_code, timezone}, ip?, country?},
 *     skip_response?, skip_challenge? }
 * - Our extensions: `context.ip` (the client address, `ip.src`; default 192.0.2.1),
 *   `context.country` (= `geoloc.iso_code`), and `skip_challenge` also at the top level.
 * - `context` maps onto edge fields: bot_score → cf.bot_management.score, threat_score →
 *   cf.threat_score, geoloc.iso_code → ip.src.country (the deprecated ip.geoip.country follows it: requests/fields.ts),
 *   continent → ip.src.continent, city → ip.src.city, is_eu_country →
 *   ip.src.is_in_european_union, latitude/longitude → ip.src.lat/lon, postal_code,
 *   region_code, subdivision_2_iso_code → ip.src.*, timezone → ip.src.timezone.name.
 * - `protocol` is the HTTP version (`HTTP/1.1` by default); `cookies` become one Cookie
 *   header; `body.json` is sent as its JSON text (Content-Type application/json unless a
 *   header says otherwise).
 * - `skip_response` is accepted and has nothing to do: no origin is ever contacted.
 * - `skip_challenge: true`: a challenge (challenge, js_challenge, managed_challenge) counts
 *   as solved and the trace goes on past it, as the hosted option "skip any challenges";
 *   the challenge step stays in the trace with `outcome: "challenge-skipped"`.
 *
 * Response: `{status_code?, trace: [steps], decision, zone, migration_state, …}`:
 * - steps: `{step_name, type: 'phase'|'ruleset'|'rule', matched, name, description?,
 *   kind?, action?, action_parameters?, expression?, trace?}` — a phase holds the ruleset
 *   it ran (the entry point), a ruleset its rules, an `execute` rule the ruleset it ran.
 *   Extensions on rule steps: `outcome` (the engine's: not-matched, disabled, skipped,
 *   scored, logged, terminated, …), `enabled`, `score_added`, `score`, `threshold`,
 *   `skipped_by`, `overridden_by`, `note`. Legacy firewall rules are a phase
 *   `legacy_firewall_rules` of rule steps; the previous WAF (while it runs) a phase
 *   `previous_waf`.
 * - Managed rules are shown by id, description and effective action, without their
 *   expressions (the hosted service does not publish managed rules' expressions).
 * - `status_code`: what the WAF answers when it ends the request (a block's custom
 *   `status_code`, else 403; 403 for a challenge); absent when the request would go on to
 *   the origin (there is none here, so there is no origin status to report).
 * - `ray_id` (extension): the trace's ray id (`…-TRC`); the security events the trace
 *   left (events/fromTrace.ts, `origin: trace`) carry it as `rayName`.
 * - `decision`: the engine's final decision (`action` is `allow-through` or the
 *   terminating action, with the deciding rule); `validation` in validation mode.
 *
 * Zone: the account's zone whose name is the URL's host or a parent domain of it (the
 * longest match); a clear 400 when none serves that host. Permission: Zone WAF Read on
 * that zone (an account-wide grant covers it).
 */
import { Buffer } from 'node:buffer';
import type { SampleRequest } from '../../requests/types';
import { ApiError, CODES } from '../api';
import { authorize, visible } from '../auth';
import { expectObject, invalidJson, onlyKeys, optBool, refuseNulWithin, type Json, type JsonObject } from '../body';
import type { Ctx, Router } from '../router';
import { ZONE_SELECT, type ZoneRow } from '../scope';
import { existingAccount, zoneVisible } from '../scopeAccess';
import { deploymentKey, zoneSource } from '../zoneConfig';
import { zoneBodyLimit } from './zoneSettings';
import { traceRayId, tracedRequest } from '../events/fromTrace';

const TOP_KEYS = ['url', 'method', 'protocol', 'headers', 'cookies', 'body', 'context', 'skip_response', 'skip_challenge'];
const CONTEXT_KEYS = ['bot_score', 'threat_score', 'geoloc', 'skip_challenge', 'ip', 'country'];
const GEOLOC_FIELDS: Readonly<Record<string, readonly string[]>> = {
  iso_code: ['ip.src.country'],
  continent: ['ip.src.continent'],
  city: ['ip.src.city'],
  is_eu_country: ['ip.src.is_in_european_union'],
  latitude: ['ip.src.lat'],
  longitude: ['ip.src.lon'],
  postal_code: ['ip.src.postal_code'],
  region_code: ['ip.src.region_code'],
  subdivision_2_iso_code: ['ip.src.subdivision_2_iso_code'],
  timezone: ['ip.src.timezone.name'],
};
function bad(message: string, pointer: string): ApiError {
  return ApiError.of(400, CODES.invalidValue, message, pointer);
}

function str(obj: JsonObject, key: string, pointer: string): string | undefined {
  const v = obj[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw invalidJson(`field "${key}" must be a string, got ${Array.isArray(v) ? 'array' : typeof v}`, `${pointer}/${key}`);
  return v;
}

function stringMap(v: Json | undefined, pointer: string): [string, string][] {
  if (v === undefined || v === null) return [];
  const obj = expectObject(v, pointer);
  return Object.entries(obj).map(([k, val]) => {
    if (typeof val !== 'string') throw invalidJson(`field "${k}" must be a string, got ${Array.isArray(val) ? 'array' : typeof val}`, `${pointer}/${k}`);
    return [k, val];
  });
}

interface TraceRequest {
  readonly url: URL;
  readonly sample: SampleRequest;
  readonly skipChallenge: boolean;
}

/** The body as a sample request for the project's request → fields code. */
function decodeTraceRequest(body: Json | undefined): TraceRequest {
  const b = expectObject(body);
  onlyKeys(b, TOP_KEYS);
  // What the trace's event stores: no NUL (nor does HTTP carry one in a header, RFC 9110 §5.5).
  for (const key of ['url', 'method', 'protocol', 'headers', 'cookies', 'context']) if (b[key] !== undefined && b[key] !== null) refuseNulWithin(b[key], `/${key}`);
  const rawUrl = str(b, 'url', '');
  if (rawUrl === undefined || rawUrl === '') throw bad('url is required: the absolute URL of the request to trace, such as "https://example.com/path?q=1"', '/url');
  let url: URL;
  try {
    url = new URL(rawUrl);
  } catch {
    throw bad(`'${rawUrl}' is not a valid value for url: an absolute http or https URL is required, such as "https://example.com/path?q=1"`, '/url');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw bad(`'${rawUrl}' is not a valid value for url: the scheme must be http or https`, '/url');
  }
  const method = str(b, 'method', '');
  if (method === undefined || method === '') throw bad('method is required: the HTTP method of the request, such as "GET"', '/method');
  if (!/^[A-Za-z]{1,20}$/.test(method)) throw bad(`'${method}' is not a valid value for method: an HTTP method such as GET or POST`, '/method');
  const protocol = str(b, 'protocol', '') ?? 'HTTP/1.1';
  if (!/^HTTP\/(1\.0|1\.1|2|3)$/i.test(protocol)) throw bad(`'${protocol}' is not a valid value for protocol: one of HTTP/1.0, HTTP/1.1, HTTP/2, HTTP/3`, '/protocol');

  const headers = stringMap(b.headers, '/headers');
  const cookies = stringMap(b.cookies, '/cookies');
  if (cookies.length > 0) headers.push(['Cookie', cookies.map(([k, v]) => `${k}=${v}`).join('; ')]);

  let bodyBytes: string | undefined;
  if (b.body !== undefined && b.body !== null) {
    const bo = expectObject(b.body, '/body');
    onlyKeys(bo, ['base64', 'json', 'plain_text'], '/body');
    const given = Object.keys(bo).filter((k) => bo[k] !== undefined && bo[k] !== null);
    if (given.length > 1) throw bad(`body takes one of base64, json or plain_text, not ${given.join(' and ')}`, '/body');
    if (bo.base64 !== undefined && bo.base64 !== null) {
      const t = str(bo, 'base64', '/body')!.replace(/\s+/g, '');
      if (!/^[A-Za-z0-9+/]*={0,2}$/.test(t) || t.length % 4 === 1) throw bad('body.base64 is not valid Base64', '/body/base64');
      bodyBytes = Buffer.from(t, 'base64').toString('latin1');
    } else if (bo.json !== undefined && bo.json !== null) {
      bodyBytes = Buffer.from(JSON.stringify(bo.json), 'utf8').toString('latin1');
      if (!headers.some(([k]) => k.toLowerCase() === 'content-type')) headers.push(['Content-Type', 'application/json']);
    } else if (bo.plain_text !== undefined && bo.plain_text !== null) {
      bodyBytes = Buffer.from(str(bo, 'plain_text', '/body')!, 'utf8').toString('latin1');
    }
  }

  const meta: Record<string, string> = {};
  let skipChallenge = optBool(b, 'skip_challenge') ?? false;
  if (b.context !== undefined && b.context !== null) {
    const c = expectObject(b.context, '/context');
    onlyKeys(c, CONTEXT_KEYS, '/context');
    skipChallenge = optBool(c, 'skip_challenge', '/context') ?? skipChallenge;
    const score = (key: string, field: string, min: number, max: number) => {
      const v = c[key];
      if (v === undefined || v === null) return;
      if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) throw bad(`'${JSON.stringify(v)}' is not a valid value for context.${key}: an integer from ${min} to ${max}`, `/context/${key}`);
      meta[field] = String(v);
    };
    score('bot_score', 'cf.bot_management.score', 1, 99);
    score('threat_score', 'cf.threat_score', 0, 100);
    const ip = str(c, 'ip', '/context');
    if (ip !== undefined) meta['ip.src'] = ip;
    const country = str(c, 'country', '/context');
    if (country !== undefined) for (const f of GEOLOC_FIELDS.iso_code!) meta[f] = country;
    if (c.geoloc !== undefined && c.geoloc !== null) {
      const g = expectObject(c.geoloc, '/context/geoloc');
      onlyKeys(g, Object.keys(GEOLOC_FIELDS), '/context/geoloc');
      for (const [k, v] of Object.entries(g)) {
        if (v === null) continue;
        if (k === 'is_eu_country' && typeof v !== 'boolean') throw invalidJson(`field "${k}" must be true or false`, `/context/geoloc/${k}`);
        if ((k === 'latitude' || k === 'longitude') && typeof v !== 'number') throw invalidJson(`field "${k}" must be a number`, `/context/geoloc/${k}`);
        if (k !== 'is_eu_country' && k !== 'latitude' && k !== 'longitude' && typeof v !== 'string') throw invalidJson(`field "${k}" must be a string`, `/context/geoloc/${k}`);
        for (const f of GEOLOC_FIELDS[k]!) meta[f] = String(v);
      }
    }
  }
  optBool(b, 'skip_response');

  const sample: SampleRequest = {
    name: 'trace',
    method: method.toUpperCase(),
    url: url.href,
    httpVersion: protocol.toUpperCase(),
    headers,
    ...(bodyBytes !== undefined ? { body: bodyBytes } : {}),
    meta,
  };
  return { url, sample, skipChallenge };
}

/**
 * The account's zone serving `host` (the zone name or a parent domain of the host; longest
 * wins). When the caller may not see that zone, the host is answered as a host on no zone,
 * so a token cannot learn which host names are the account's zones (and a host of a hidden
 * sub-zone is never traced against a parent zone the token sees).
 */
function zoneForHost(ctx: Ctx, accountId: string, host: string): ZoneRow {
  const zones = ctx.service.store.all<ZoneRow>(`${ZONE_SELECT} WHERE z.account_id = ? ORDER BY z.name`, [accountId]);
  const h = host.toLowerCase().replace(/\.$/, '');
  const serving = zones.filter((z) => h === z.name || h.endsWith(`.${z.name}`)).sort((a, b) => b.name.length - a.name.length);
  if (serving.length === 0 || !zoneVisible(ctx, serving[0]!)) {
    const names = zones.filter((z) => zoneVisible(ctx, z)).map((z) => z.name);
    throw bad(
      `no zone of account ${accountId} serves the host "${h}": the URL must be on one of the account's zones${names.length ? ` (${names.join(', ')})` : ''}`,
      '/url',
    );
  }
  return serving[0]!;
}

// --- Steps --------------------------------------------------------------------------------------

export function traceRoutes(r: Router): void {
  r.post('/accounts/:account_id/request-tracer/trace', async (ctx) => {
    const accountId = ctx.params.account_id!;
    existingAccount(ctx, accountId);
    const seesAccount =
      visible(ctx.principal, { accountId }) ||
      ctx.service.store.all<ZoneRow>(`${ZONE_SELECT} WHERE z.account_id = ?`, [accountId]).some((z) => zoneVisible(ctx, z));
    if (!seesAccount) throw ApiError.of(403, CODES.authenticationError, 'Authentication error');

    const req = decodeTraceRequest(ctx.body);
    const zone = zoneForHost(ctx, accountId, req.url.hostname);
    authorize(ctx.principal, { accountId, zoneId: zone.id }, ['Zone WAF'], 'Read');

    const store = ctx.service.store;
    // Only the inspected start of the body goes to the worker (requests/body.ts); the size stays.
    const bodyLimit = zoneBodyLimit(ctx.service, zone.id);
    const body = req.sample.body;
    const sample = body !== undefined && body.length > bodyLimit ? { ...req.sample, body: body.slice(0, bodyLimit), bodySize: body.length } : req.sample;
    const job = { zoneId: zone.id, key: deploymentKey(store, zone.id), sample, skipChallenge: req.skipChallenge, bodyLimit };
    const time = Date.now();
    const { result, evaluation, defaultedReads } = await ctx.service.traces.run(job, () => zoneSource(store, zone.id), ctx.signal());
    // What the rules did to the traced request becomes security events, as live traffic's (docs/events.md).
    const rayId = traceRayId();
    const bodyTruncated = (body?.length ?? 0) > bodyLimit;
    const traced = { rayId, time, zoneId: zone.id, zoneName: zone.name, sample: req.sample, evaluation, defaultedReads, bodyTruncated };
    ctx.service.events?.recordTrace(tracedRequest(result.status_code !== undefined ? { ...traced, statusCode: result.status_code } : traced));
    return { result: { ...result, zone: { id: zone.id, name: zone.name }, ray_id: rayId } };
  });
}
