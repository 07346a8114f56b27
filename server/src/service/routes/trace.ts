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
 *   cf.threat_score, geoloc.iso_code → ip.src.country (and the deprecated ip.geoip.country),
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
 * - `decision`: the engine's final decision (`action` is `allow-through` or the
 *   terminating action, with the deciding rule); `validation` in validation mode.
 *
 * Zone: the account's zone whose name is the URL's host or a parent domain of it (the
 * longest match); a clear 400 when none serves that host. Permission: Zone WAF Read on
 * that zone (an account-wide grant covers it).
 */
import { Buffer } from 'node:buffer';
import { findManagedRuleset } from '../../managed/catalog';
import { rulesetVersion } from '../../managed/types';
import { requestValues } from '../../requests/fields';
import type { SampleRequest } from '../../requests/types';
import { compileZone, TERMINATING, type Decision, type Evaluation, type RuleRef, type TraceEntry, type ZoneConfig } from '../../rulesets/engine';
import type { Rule, Ruleset } from '../../rulesets/model';
import { ApiError, CODES } from '../api';
import { authorize, visible } from '../auth';
import { expectObject, invalidJson, onlyKeys, optBool, type Json, type JsonObject } from '../body';
import type { Ctx, Router } from '../router';
import { ZONE_SELECT, zoneVisible, type ZoneRow } from '../scope';
import { deployedZone } from '../zoneConfig';

const TOP_KEYS = ['url', 'method', 'protocol', 'headers', 'cookies', 'body', 'context', 'skip_response', 'skip_challenge'];
const CONTEXT_KEYS = ['bot_score', 'threat_score', 'geoloc', 'skip_challenge', 'ip', 'country'];
const GEOLOC_FIELDS: Readonly<Record<string, readonly string[]>> = {
  iso_code: ['ip.src.country', 'ip.geoip.country'],
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
const CHALLENGES = new Set(['challenge', 'js_challenge', 'managed_challenge']);
/** How many challenges `skip_challenge` may pass before giving up (each costs one evaluation). */
const MAX_SKIPPED_CHALLENGES = 16;

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

/** The account's zone serving `host` (the zone name or a parent domain of the host; longest wins). */
function zoneForHost(ctx: Ctx, accountId: string, host: string): ZoneRow {
  const zones = ctx.service.store.all<ZoneRow>(`${ZONE_SELECT} WHERE z.account_id = ? ORDER BY z.name`, [accountId]);
  const h = host.toLowerCase().replace(/\.$/, '');
  const serving = zones.filter((z) => h === z.name || h.endsWith(`.${z.name}`)).sort((a, b) => b.name.length - a.name.length);
  if (serving.length === 0) {
    const names = zones.filter((z) => zoneVisible(ctx, z)).map((z) => z.name);
    throw bad(
      `no zone of account ${accountId} serves the host "${h}": the URL must be on one of the account's zones${names.length ? ` (${names.join(', ')})` : ''}`,
      '/url',
    );
  }
  return serving[0]!;
}

// --- Steps --------------------------------------------------------------------------------------

interface Step {
  step_name: string;
  type: 'phase' | 'ruleset' | 'rule';
  matched: boolean;
  name?: string;
  description?: string;
  kind?: string;
  action?: string;
  action_parameters?: unknown;
  expression?: string;
  enabled?: boolean;
  outcome?: string;
  score_added?: number;
  score?: number;
  threshold?: number;
  skipped_by?: string;
  overridden_by?: readonly string[];
  note?: string;
  trace?: Step[];
}

interface RulesetInfo {
  readonly name?: string;
  readonly kind?: string;
  readonly description?: string;
  readonly managed: boolean;
  readonly rules: ReadonlyMap<string, Rule>;
}

function rulesetIndex(config: ZoneConfig): (id: string | undefined) => RulesetInfo | undefined {
  const own = new Map<string, RulesetInfo>();
  const add = (rs: Ruleset) => {
    if (!rs.id) return;
    const rules = new Map<string, Rule>();
    for (const r of rs.rules ?? []) if (r && r.id) rules.set(r.id, r);
    own.set(rs.id, { name: rs.name, kind: rs.kind, description: rs.description, managed: false, rules });
  };
  for (const rs of Object.values(config.entryPoints)) if (rs) add(rs);
  for (const rs of config.customRulesets ?? []) add(rs);
  return (id) => {
    if (id === undefined) return undefined;
    const found = own.get(id);
    if (found) return found;
    const m = findManagedRuleset(config.catalog, id);
    if (!m) return undefined;
    const rules = new Map<string, Rule>();
    for (const r of rulesetVersion(m)?.rules ?? []) if (r.id) rules.set(r.id, r);
    const info: RulesetInfo = { name: m.name, kind: m.kind, description: m.description, managed: true, rules };
    own.set(id, info);
    return info;
  };
}

function refName(r: RuleRef | undefined): string | undefined {
  return r ? (r.ruleId ?? r.ref ?? r.description) : undefined;
}

function ruleStep(e: TraceEntry, info: RulesetInfo | undefined, legacyExpr: ReadonlyMap<string, string>, challengeSkipped: boolean): Step {
  const rule = e.ruleId !== undefined ? info?.rules.get(e.ruleId) : undefined;
  const step: Step = {
    step_name: e.ruleId ?? e.ref ?? (e.ruleIndex !== undefined ? String(e.ruleIndex) : e.phase),
    type: 'rule',
    // The anomaly rule below its threshold did not act: not matched (its outcome says why).
    matched: e.matched === true && e.outcome !== 'below-threshold',
    name: e.ref ?? e.ruleId ?? e.phase,
  };
  if (e.description !== undefined) step.description = e.description;
  if (e.action) step.action = e.action;
  if (rule && !info?.managed) {
    if (rule.action_parameters !== undefined) step.action_parameters = rule.action_parameters;
    if (typeof rule.expression === 'string') step.expression = rule.expression;
  } else if (e.phase === 'legacy_firewall_rules' && e.ruleId !== undefined && legacyExpr.has(e.ruleId)) {
    step.expression = legacyExpr.get(e.ruleId)!;
  }
  step.enabled = e.enabled;
  step.outcome = challengeSkipped ? 'challenge-skipped' : e.outcome;
  if (e.scoreAdded !== undefined) step.score_added = e.scoreAdded;
  if (e.score !== undefined) step.score = e.score;
  if (e.threshold !== undefined) step.threshold = e.threshold;
  if (e.skippedBy) step.skipped_by = refName(e.skippedBy);
  if (e.overriddenBy?.length) step.overridden_by = e.overriddenBy;
  if (challengeSkipped) step.note = 'skip_challenge: the challenge counts as solved and the request goes on';
  else if (e.note !== undefined) step.note = e.note;
  return step;
}

/**
 * The engine's flat trace (depth 0 = entry points and firewall rules, +1 per execute) as
 * nested steps: phase → ruleset → rule (→ executed ruleset → rule …).
 */
export function traceSteps(trace: readonly TraceEntry[], config: ZoneConfig, skippedChallenges: ReadonlySet<TraceEntry> = new Set()): Step[] {
  const info = rulesetIndex(config);
  const legacyExpr = new Map<string, string>();
  for (const fr of config.legacy?.firewallRules ?? []) if (fr.id && typeof fr.filter?.expression === 'string') legacyExpr.set(fr.id, fr.filter.expression);
  const phases: Step[] = [];
  const lastRuleAt: Step[] = [];
  const rulesetStep = (container: Step[], id: string | undefined, name: string | undefined): Step => {
    const last = container[container.length - 1];
    const key = id ?? name ?? '';
    if (last && last.type === 'ruleset' && last.step_name === key) return last;
    const i = info(id);
    const s: Step = { step_name: key, type: 'ruleset', matched: false, name: i?.name ?? name ?? key };
    if (i?.kind) s.kind = i.kind;
    if (i?.description) s.description = i.description;
    s.trace = [];
    container.push(s);
    return s;
  };
  for (const e of trace) {
    let phase = phases[phases.length - 1];
    if (e.depth === 0 && (!phase || phase.step_name !== e.phase)) {
      phase = { step_name: e.phase, type: 'phase', matched: false, name: e.phase, trace: [] };
      phases.push(phase);
    }
    if (!phase) continue;
    // A skipped phase: one entry without a rule.
    if (e.depth === 0 && e.ruleIndex === undefined && e.ruleId === undefined && e.phase !== 'previous_waf') {
      phase.outcome = e.outcome;
      if (e.skippedBy) phase.skipped_by = refName(e.skippedBy);
      if (e.note) phase.note = e.note;
      continue;
    }
    let container: Step[];
    if (e.depth === 0) {
      container = e.rulesetId !== undefined ? rulesetStep(phase.trace!, e.rulesetId, e.rulesetName).trace! : phase.trace!;
    } else {
      const parent = lastRuleAt[e.depth - 1];
      if (!parent) continue;
      parent.trace ??= [];
      container = rulesetStep(parent.trace, e.rulesetId, e.rulesetName).trace!;
    }
    const step = ruleStep(e, e.rulesetId !== undefined ? info(e.rulesetId) : undefined, legacyExpr, skippedChallenges.has(e));
    if (e.phase === 'previous_waf' && step.step_name === 'previous_waf') step.name = 'previous WAF';
    container.push(step);
    lastRuleAt[e.depth] = step;
    lastRuleAt.length = e.depth + 1;
  }
  const settle = (s: Step): boolean => {
    if (s.trace) {
      const childMatched = s.trace.map(settle).some(Boolean);
      if (s.type !== 'rule') s.matched = childMatched;
    }
    return s.matched;
  };
  phases.forEach(settle);
  return phases;
}

function decisionObject(d: Decision): Record<string, unknown> {
  return {
    action: d.action,
    ...(d.phase ? { phase: d.phase } : {}),
    ...(d.rulesetId ? { ruleset_id: d.rulesetId } : {}),
    ...(d.ruleId ? { rule_id: d.ruleId } : {}),
    ...(d.ref ? { ref: d.ref } : {}),
    ...(d.description ? { description: d.description } : {}),
    ...(d.score !== undefined ? { score: d.score } : {}),
    ...(d.threshold !== undefined ? { threshold: d.threshold } : {}),
    ...(d.response ? { response: d.response } : {}),
    ...(d.via ? { via: { phase: d.via.phase, ...(d.via.rulesetId ? { ruleset_id: d.via.rulesetId } : {}), ...(d.via.ruleId ? { rule_id: d.via.ruleId } : {}) } } : {}),
  };
}

function statusCode(d: Decision): number | undefined {
  if (d.action === 'block') return (d.response as { status_code?: number } | undefined)?.status_code ?? 403;
  if ((TERMINATING as readonly string[]).includes(d.action)) return 403;
  return undefined;
}

/**
 * Disables the rule that decided (so that a skipped challenge lets evaluation go on):
 * an entry-point or custom rule gets `enabled: false`; a managed rule gets a rule override
 * on the execute rule that ran it.
 */
function withoutRule(config: ZoneConfig, d: Decision): ZoneConfig | undefined {
  const disable = (rs: Ruleset, pred: (r: Rule) => boolean, patch: (r: Rule) => Rule): Ruleset => ({ ...rs, rules: (rs.rules ?? []).map((r) => (pred(r) ? patch(r) : r)) });
  const own = (rs: Ruleset | undefined) => rs?.id !== undefined && rs.id === d.rulesetId;
  const entryPoints = { ...config.entryPoints };
  let customRulesets = config.customRulesets ?? [];
  let changed = false;
  const target = (rs: Ruleset) => {
    changed = true;
    return disable(rs, (r) => r.id === d.ruleId, (r) => ({ ...r, enabled: false }));
  };
  const via = d.via;
  for (const [phase, rs] of Object.entries(entryPoints) as [keyof typeof entryPoints, Ruleset][]) {
    if (own(rs)) entryPoints[phase] = target(rs);
    else if (via && rs.id === via.rulesetId && findManagedRuleset(config.catalog, d.rulesetId ?? '')) {
      changed = true;
      entryPoints[phase] = disable(
        rs,
        (r) => r.id === via.ruleId,
        (r) => {
          const p = (r.action_parameters ?? {}) as { overrides?: { rules?: unknown[] } };
          const overrides = { ...(p.overrides ?? {}), rules: [...(p.overrides?.rules ?? []), { id: d.ruleId, enabled: false }] };
          return { ...r, action_parameters: { ...p, overrides } };
        },
      );
    }
  }
  customRulesets = customRulesets.map((rs) => (own(rs) ? target(rs) : rs));
  let legacy = config.legacy;
  if (d.phase === 'legacy_firewall_rules' && legacy) {
    changed = true;
    legacy = { ...legacy, firewallRules: legacy.firewallRules.map((fr) => (fr.id === d.ruleId ? { ...fr, paused: true } : fr)) };
  }
  if (!changed || d.ruleId === undefined) return undefined;
  return { ...config, entryPoints, customRulesets, ...(legacy ? { legacy } : {}) };
}

export function traceRoutes(r: Router): void {
  r.post('/accounts/:account_id/request-tracer/trace', (ctx) => {
    const accountId = ctx.params.account_id!;
    const account = ctx.service.store.get<{ id: string }>('SELECT id FROM accounts WHERE id = ?', [accountId]);
    if (!account) throw new ApiError(404, [{ code: CODES.badObjectId, message: `Could not route to /accounts/${accountId}, perhaps your object identifier is invalid?` }]);
    const seesAccount =
      visible(ctx.principal, { accountId }) ||
      ctx.service.store.all<ZoneRow>(`${ZONE_SELECT} WHERE z.account_id = ?`, [accountId]).some((z) => zoneVisible(ctx, z));
    if (!seesAccount) throw ApiError.of(403, CODES.authenticationError, 'Authentication error');

    const req = decodeTraceRequest(ctx.body);
    const zone = zoneForHost(ctx, accountId, req.url.hostname);
    authorize(ctx.principal, { accountId, zoneId: zone.id }, ['Zone WAF'], 'Read');

    const { values, problems: requestProblems } = requestValues(req.sample);
    const badContext = requestProblems.filter((p) => /^(ip\.|cf\.)/.test(p) || p.includes('unknown field'));
    if (badContext.length > 0) throw bad(`the request's context is not valid: ${badContext.join('; ')}`, '/context');

    // Compiled once per deployed configuration (zoneConfig.ts deployedZone); a skipped
    // challenge compiles a changed copy, not cached.
    const { deployed, compiled: cached } = deployedZone(ctx.service.store, zone.id);
    let config = deployed.config;
    let compiled = cached;
    let ev: Evaluation = compiled.evaluate(values);
    // skip_challenge: the challenging rule counts as solved. Evaluate again with it out of
    // the way; the rerun's trace is the same up to that rule (now shown as disabled), so the
    // original challenge entry takes its place.
    const replaced = new Map<number, TraceEntry>();
    const skipped = new Set<TraceEntry>();
    for (let i = 0; req.skipChallenge && i < MAX_SKIPPED_CHALLENGES && CHALLENGES.has(ev.decision.action); i++) {
      const at = ev.trace.findIndex((e) => e.outcome === 'terminated');
      const next = at < 0 ? undefined : withoutRule(config, ev.decision);
      if (!next) break;
      replaced.set(at, ev.trace[at]!);
      skipped.add(ev.trace[at]!);
      config = next;
      compiled = compileZone(config, deployed.previousWaf ? { previousWaf: deployed.previousWaf } : {});
      const rerun = compiled.evaluate(values);
      ev = { ...rerun, trace: rerun.trace.map((e, j) => replaced.get(j) ?? e) };
    }

    const steps = traceSteps(ev.trace, deployed.config, skipped);
    if (deployed.managedEntryPointInactive) {
      const at = steps.findIndex((s) => s.step_name === 'previous_waf');
      steps.splice(at < 0 ? steps.length : at, 0, {
        step_name: 'http_request_firewall_managed',
        type: 'phase',
        matched: false,
        name: 'http_request_firewall_managed',
        outcome: 'inactive',
        note: 'the zone has not migrated to the new WAF Managed Rules: its managed entry point does not run yet (the previous WAF does)',
      });
    }
    const status = statusCode(ev.decision);
    const problems = [
      ...compiled.problems.filter((p) => p.severity === 'error').map((p) => `${p.stage}${p.rulesetId ? ` ruleset ${p.rulesetId}` : ''}: ${p.message}`),
      ...requestProblems,
    ];
    return {
      result: {
        ...(status !== undefined ? { status_code: status } : {}),
        trace: steps,
        decision: decisionObject(ev.decision),
        ...(ev.validation && deployed.migrationState === 'validation'
          ? {
              validation: {
                new_decision: decisionObject(ev.validation.newDecision),
                ...(ev.validation.previous ? { previous_waf: { action: ev.validation.previous.action, ...(ev.validation.previous.ruleId ? { rule_id: ev.validation.previous.ruleId } : {}), ...(ev.validation.previous.description ? { description: ev.validation.previous.description } : {}) } } : {}),
              },
            }
          : {}),
        ...(Object.keys(ev.scores).length ? { scores: ev.scores } : {}),
        zone: { id: zone.id, name: zone.name },
        migration_state: deployed.migrationState,
        ...(problems.length ? { problems } : {}),
      },
    };
  });
}
