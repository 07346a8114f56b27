/**
 * The Trace's evaluation (no I/O): a request against a zone's deployed configuration with
 * the shared engine, and the steps phase → ruleset → rule the answer shows (see
 * routes/trace.ts for the request and response). It runs in the trace worker thread
 * (traceWorker.ts), so a request whose evaluation takes too long can be stopped.
 */
import { findManagedRuleset, rulesetVersion } from '../rulesets/catalog';
import { defaultedReads, requestValues } from '../requests/fields';
import type { SampleRequest } from '../requests/types';
import { TERMINATING, type CompiledZone, type Decision, type Evaluation, type RuleRef, type RequestHooks, type TraceEntry, type ZoneConfig } from '../rulesets/engine';
import type { Rule, Ruleset } from '../rulesets/model';
import type { TraceDecision, TraceResult, TraceStep } from '../rulesApi';
import { slowForTests } from '../timedWorker';
import { describeRule } from '../rulesets/ruleNames';
import { ApiError, CODES, type ApiMessage } from './api';
import { compiledZone } from './compiledZones';
import { eventEvaluation } from './events/fromEvaluation';
import type { DeployedZone, ZoneSource } from './deployment';

const CHALLENGES = new Set(['challenge', 'js_challenge', 'managed_challenge']);


/** A wire TraceStep (rulesApi.ts) while it is built: filled in, then settled. */
type Step = { -readonly [K in keyof Omit<TraceStep, 'trace'>]: Omit<TraceStep, 'trace'>[K] } & { trace?: Step[] };

interface RulesetInfo {
  readonly name?: string;
  readonly kind?: string;
  readonly description?: string;
  readonly managed: boolean;
  readonly rules: ReadonlyMap<string, Rule>;
}

/**
 * The rulesets of a zone's configuration by id (a custom ruleset's current version, the last
 * given: engine.ts ZoneConfig.customRulesets), and `version`, when an execute rule pinned
 * one, the version of it the engine ran.
 */
function rulesetIndex(config: ZoneConfig): (id: string | undefined, version?: string) => RulesetInfo | undefined {
  const own = new Map<string, RulesetInfo>();
  const versions = new Map<string, RulesetInfo>();
  const add = (rs: Ruleset) => {
    if (!rs.id) return;
    const rules = new Map<string, Rule>();
    for (const r of rs.rules ?? []) if (r && r.id) rules.set(r.id, r);
    const info: RulesetInfo = { name: rs.name, kind: rs.kind, description: rs.description, managed: false, rules };
    own.set(rs.id, info);
    if (typeof rs.version === 'string') versions.set(`${rs.id}@${rs.version}`, info);
  };
  for (const rs of Object.values(config.entryPoints)) if (rs) add(rs);
  for (const rs of config.customRulesets ?? []) add(rs);
  return (id, version) => {
    if (id === undefined) return undefined;
    const found = (version !== undefined ? versions.get(`${id}@${version}`) : undefined) ?? own.get(id);
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
  return r ? describeRule(r, 'handle') : undefined;
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
  const rulesetStep = (container: Step[], id: string | undefined, name: string | undefined, version?: string): Step => {
    const last = container[container.length - 1];
    const key = id ?? name ?? '';
    if (last && last.type === 'ruleset' && last.step_name === key) return last;
    const i = info(id, version);
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
    // The version of a custom ruleset its execute rule pinned: its rules are that version's.
    let version: string | undefined;
    if (e.depth === 0) {
      container = e.rulesetId !== undefined ? rulesetStep(phase.trace!, e.rulesetId, e.rulesetName).trace! : phase.trace!;
    } else {
      const parent = lastRuleAt[e.depth - 1];
      if (!parent) continue;
      const pin = (parent.action_parameters as { version?: unknown } | undefined)?.version;
      if (typeof pin === 'string' && pin !== 'latest') version = pin;
      parent.trace ??= [];
      container = rulesetStep(parent.trace, e.rulesetId, e.rulesetName, version).trace!;
    }
    const step = ruleStep(e, e.rulesetId !== undefined ? info(e.rulesetId, version) : undefined, legacyExpr, skippedChallenges.has(e));
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

function decisionObject(d: Decision): TraceDecision {
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
 * The Trace's `result` (without `zone`) and the evaluation's part that becomes security
 * events (events/fromEvaluation.ts `eventEvaluation`), or an ApiError for a request
 * context that is not valid.
 */
export function evaluateTrace(deployed: DeployedZone, compiledZone: CompiledZone, sample: SampleRequest, skipChallenge: boolean, bodyLimit?: number): { result: TraceResult; evaluation: Evaluation; defaultedReads: string[] } {
  const { fields, values, problems: requestProblems } = requestValues(sample, bodyLimit !== undefined ? { bodyLimit } : {});
  const badContext = requestProblems.filter((p) => /^(ip\.|cf\.)/.test(p) || p.includes('unknown field'));
  if (badContext.length > 0) throw ApiError.of(400, CODES.invalidValue, `the request's context is not valid: ${badContext.join('; ')}`, '/context');

  const compiled = compiledZone;
  // skip_challenge: every challenge counts as solved, through the engine's own hook (the
  // one the WAF proxy uses for a clearance cookie): the rule is passed and evaluation goes
  // on. Those entries show as skipped challenges.
  const hooks: RequestHooks | undefined = skipChallenge ? { challengePassed: () => true } : undefined;
  const first = compiled.evaluate(values, undefined, hooks);
  const skipped = new Set<TraceEntry>();
  const trace = first.trace.map((e) => {
    if (!skipChallenge || e.outcome !== 'logged' || !CHALLENGES.has(e.action ?? '')) return e;
    const { note: _passed, ...entry } = e;
    skipped.add(entry);
    return entry;
  });
  const ev: Evaluation = { ...first, trace };

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
  const result: TraceResult = {
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
    migration_state: deployed.migrationState,
    ...(problems.length ? { problems } : {}),
  };
  return { result, evaluation: eventEvaluation(ev), defaultedReads: defaultedReads(compiled.fieldsRead, fields) };
}

/** A trace job as the runner (traceRunner.ts) sends it to the worker (traceWorker.ts), and its answer. */
export interface TraceJob {
  readonly zoneId: string;
  /** The deployment key (zoneConfig.ts deploymentKey): the compiled zone is reused while it holds. */
  readonly key: string;
  /** What the zone is compiled from; sent only when the worker asks (it has no compiled zone under `key`). */
  readonly source?: ZoneSource;
  readonly sample: SampleRequest;
  readonly skipChallenge: boolean;
  /** Bytes of the body that become field values; the sample's body is already cut to it. */
  readonly bodyLimit?: number;
}

export type TraceReply =
  | { readonly result: TraceResult; readonly evaluation: Evaluation; readonly defaultedReads: readonly string[]; readonly cached: boolean }
  | { readonly apiError: { readonly status: number; readonly errors: readonly ApiMessage[] } }
  | { readonly crash: string }
  | { readonly needSource: true };

/**
 * The job's zone compiled: from this thread's cache while its deployment key holds, else
 * from the job's source — undefined when the job came without one (the sender reads the
 * store only when asked: a trace of an unchanged zone reads just the key).
 */
function compiledFor(job: TraceJob): { deployed: DeployedZone; compiled: CompiledZone; cached: boolean } | undefined {
  return compiledZone(job.zoneId, job.key, job.source);
}

/** One trace job's answer, as the worker posts it (plain data); `compiledNow` is told when the evaluation starts. */
export function traceReply(job: TraceJob, compiledNow: () => void = () => undefined): TraceReply {
  try {
    const zone = compiledFor(job);
    if (!zone) return { needSource: true };
    compiledNow();
    slowForTests(0);
    return { ...evaluateTrace(zone.deployed, zone.compiled, job.sample, job.skipChallenge, job.bodyLimit), cached: zone.cached };
  } catch (e) {
    return e instanceof ApiError ? { apiError: { status: e.status, errors: e.errors } } : { crash: e instanceof Error ? `${e.message}\n${e.stack ?? ''}` : String(e) };
  }
}
