/**
 * The evaluation engine: runs one HTTP request (as field values) through a zone's WAF
 * configuration and says what the service would do with it, with a full trace.
 *
 * Compile once, evaluate many: `compileZone` checks and compiles every expression of the
 * zone (entry points, the custom and managed rulesets they execute, legacy firewall
 * rules) and resolves every override up front, so `evaluate` only runs closures and
 * records what happened. It never throws on user input: what cannot be compiled comes
 * back in `problems`, and a rule whose expression does not compile never matches.
 *
 * Semantics (rules API §2, §4; managed rules §4), and the decisions taken where the
 * reference leaves room:
 *
 * - Stages, in the order the service runs them for the WAF: legacy firewall rules (only
 *   for a zone whose firewall rules are not migrated), `http_request_firewall_custom`,
 *   `http_ratelimit`, `http_request_firewall_managed`, then — in the managed-rules
 *   migration's validation mode only — the previous WAF. Entry points of other phases are
 *   not evaluated (a warning says so).
 * - Rules run in order; disabled rules are skipped. `block` (with its custom response),
 *   `managed_challenge`, `js_challenge` and `challenge` end everything. `log` records and
 *   continues. `skip` changes what follows (below). `execute` runs a custom ruleset
 *   (`customRulesets`) or a managed ruleset at its version (`latest` by default) with
 *   its overrides, then evaluation continues after the `execute` rule. A custom ruleset
 *   given more than once with distinct `version`s: the last one given is its current
 *   version (what `latest` runs), the others the versions a `version` may pin; a pinned
 *   version not given runs the current one, with a warning.
 * - `skip` parameters: `ruleset: "current"` skips the remaining rules of the ruleset the
 *   skip rule is in (an executed custom ruleset, or the entry point); `phases` skips the
 *   listed phases that have not started yet; `rulesets` skips later `execute` rules of
 *   those ruleset ids; `rules` skips the listed rules of those rulesets wherever they are
 *   met later; `products` are recorded (`skippedProducts`) and `waf` also skips the
 *   previous WAF of the validation mode; `phase: "current"` (only with products) skips
 *   the rest of the current phase. A skip rule logs unless `logging.enabled` is false.
 * - Overrides, resolved per property (enabled, action, score_threshold): a rule override
 *   beats a category override, which beats the ruleset-wide `action`/`enabled`. Among
 *   category overrides the last one in the list that names one of the rule's categories
 *   and sets the property wins. So `[{paranoia-level-2, enabled:false}, {php, action:log}]`
 *   leaves a rule tagged with both disabled — the category that sets `enabled` is PL2's.
 * - Scoring: in an executed ruleset, a matching rule whose effective action is `score`
 *   adds `action_parameters.increment` to that execution's total (reported in `scores`
 *   under the ruleset id). The anomaly rule of a scored managed ruleset (`anomalyRuleId`)
 *   acts when its expression matches and the total is >= its threshold (rule override
 *   `score_threshold`, else the rule's `score_threshold`, else 40), with its effective
 *   action (block by default). An override that gives a score rule another action
 *   (`log`, `block`, …) makes it act with that action instead of scoring: the API's
 *   overrides replace the action, and `score` is just an action. The same holds for a
 *   ruleset-wide `action`: deploying OWASP with `action: log` turns every score rule
 *   into a log rule, so nothing scores and the anomaly rule (now a log rule too) never
 *   reaches its threshold — each matching rule is logged instead.
 * - The OWASP-based ruleset deployed with no paranoia override runs every rule that is
 *   enabled by default — all four paranoia levels, as the Terraform docs say of a bare
 *   `execute`; the editor's lint warns about it (issue 4). Nothing here narrows it to PL1.
 * - `http_ratelimit`: a matching rule is recorded as `counted`; the engine keeps no
 *   request-count state across requests, so a rate-limit rule acts only when the caller
 *   says its limit is exceeded (`CompileZoneOptions.rateLimitExceeded`, given the rule's own
 *   `ratelimit`, so a pinned older version counts with its own settings). A caller that counts
 *   with a `counting_expression` is told of every rule of the phase a request reaches,
 *   matched or not (`RequestHooks.rateLimitReached`).
 * - Legacy firewall rules run in priority order (LEGACY_ACTION_PRECEDENCE for ties and
 *   for rules without priority); paused rules and rules with a paused or deleted filter
 *   are skipped. block/challenge/js_challenge/managed_challenge end everything; `allow`
 *   stops the firewall rules (later stages still run: allow never exempted a request from
 *   other products); `log` records; `bypass` skips its products for the rest of the
 *   request: each one is recorded, and `waf` also skips the managed-rules phase and the
 *   previous WAF (the migration converts a Bypass→WAF rule into a skip of the managed
 *   phase), `rateLimit` also skips `http_ratelimit`.
 * - Validation mode (`legacy.validationMode`): the new managed rules run first and their
 *   actions are only recorded (`validation-only`, and `validation.newDecision`); then the
 *   previous WAF runs and its verdict acts. We have no rules content for the previous WAF,
 *   so it is a callback (`CompileZoneOptions.previousWaf`); without one the stand-in lets
 *   every request through and the trace says so.
 */
import { compileExpression, irFieldNames, type Diagnostic } from '../language/index';
import { EvalMemo, type CompiledFilter, type EvalContext, type FieldValues } from '../language/evaluate';
import type { Phase, Plan } from '../language/scheme/types';
import { withSubject } from '../language/report';
import { PARANOIA_TAG, rulesetVersion, type ManagedCatalog, type ManagedRuleset } from './catalog';
import { LEGACY_ACTIONS, legacyOrder, type LegacyConfig, type LegacyFirewallRule, type SkipProduct } from './legacy';
import type { BlockParameters, BlockResponse, ExecuteParameters, Overrides, RateLimit, Rule, Ruleset, ScoreParameters, SkipParameters } from './model';
import { rateCounting, rateLimitFieldsRead } from './rateLimitParams';

export type { LegacyConfig, LegacyFirewallRule } from './legacy';

// --- Public types -----------------------------------------------------------------------

export const WAF_PHASES = ['http_request_firewall_custom', 'http_ratelimit', 'http_request_firewall_managed'] as const;
export type WafPhase = (typeof WAF_PHASES)[number];

/** Where a rule runs: a WAF phase, the legacy firewall rules, or the previous WAF. */
export type Stage = WafPhase | 'legacy_firewall_rules' | 'previous_waf';

export const TERMINATING = ['block', 'challenge', 'js_challenge', 'managed_challenge'] as const;
export type TerminatingAction = (typeof TERMINATING)[number];

/** The threshold of an anomaly rule that has none. */
export const DEFAULT_SCORE_THRESHOLD = 40;

export interface ZoneConfig {
  readonly entryPoints: Partial<Record<Phase, Ruleset>>;
  /**
   * Rulesets of kind `custom` that `execute` rules may run, by `id`. An id given more than
   * once with distinct `version`s: the last one is the current version (an execute rule
   * without a version, or with `latest`, runs it), the earlier ones the versions an execute
   * rule's `action_parameters.version` may pin.
   */
  readonly customRulesets?: readonly Ruleset[];
  readonly catalog: ManagedCatalog;
  readonly legacy?: LegacyConfig;
  readonly plan?: Plan;
}

/** What the previous WAF decided about a request (validation mode). */
export interface PreviousWafVerdict {
  /** `simulate`/`log` record only; the others act. */
  readonly action: TerminatingAction | 'simulate' | 'log';
  readonly ruleId?: string;
  readonly description?: string;
  /** Its OWASP package's anomaly score, and the threshold that score was judged against (its CloudFlare package does not score). */
  readonly score?: number;
  readonly threshold?: number;
}

/** The previous WAF, given as a function (the engine has no rules content for it). */
export type PreviousWaf = (fields: FieldValues, ctx?: EvalContext) => PreviousWafVerdict | undefined;

export interface CompileZoneOptions {
  /** wirefilter's `ne` with a missing side (see CompileOptions). Default false. */
  readonly nilNotEqual?: boolean;
  readonly previousWaf?: PreviousWaf;
  /** Whether a matching rate-limit rule's limit is exceeded (`limit`: the rule's `ratelimit`, if it has one); default: never. */
  readonly rateLimitExceeded?: (rule: RuleRef, fields: FieldValues, limit: RateLimit | undefined) => boolean;
}

/**
 * Per-request answers that depend on state outside the request (the WAF proxy's rate-limit
 * counters, a challenge the client already solved), given to one `evaluate` call so that a
 * zone compiled once serves every request.
 */
export interface RequestHooks {
  /** As CompileZoneOptions.rateLimitExceeded, for this request; it wins over the compiled one. */
  readonly rateLimitExceeded?: (rule: RuleRef, fields: FieldValues, limit: RateLimit | undefined) => boolean;
  /**
   * The request reached this enabled rate-limit rule (with a `ratelimit`), before its
   * expression is matched: a rule's `counting_expression` counts requests its expression
   * may not match, so the counting is the caller's, here.
   */
  readonly rateLimitReached?: (rule: RuleRef, fields: FieldValues, limit: RateLimit) => void;
  /** True when the client has solved this challenge: the rule is logged and evaluation goes on. */
  readonly challengePassed?: (rule: RuleRef, action: 'challenge' | 'js_challenge' | 'managed_challenge') => boolean;
  /**
   * True: the trace leaves out the rules that did not act (not matched, disabled). The WAF
   * proxy reads only the rules that acted, and an OWASP zone has hundreds of idle ones per
   * request (over the CRS corpus at PL1, leaving them out means ~40% fewer collections).
   */
  readonly omitIdleRules?: boolean;
}

export interface EngineProblem {
  readonly severity: 'error' | 'warning';
  readonly stage: Stage | Phase;
  readonly rulesetId?: string;
  /** Index of the rule in its ruleset (or in the firewall rules list). */
  readonly ruleIndex?: number;
  readonly ruleId?: string;
  readonly ref?: string;
  readonly message: string;
  /** The expression's error diagnostics, when the problem is an expression that does not compile. */
  readonly diagnostics?: readonly Diagnostic[];
}

/** Names one rule for the trace and the decision. */
export interface RuleRef {
  readonly phase: Stage;
  readonly rulesetId?: string;
  readonly rulesetName?: string;
  readonly ruleId?: string;
  readonly ref?: string;
  readonly description?: string;
}

export interface Decision {
  readonly action: 'allow-through' | TerminatingAction;
  readonly phase?: Stage;
  readonly rulesetId?: string;
  readonly ruleId?: string;
  readonly ref?: string;
  readonly description?: string;
  readonly response?: BlockResponse;
  /** For the anomaly rule: the total and the threshold it reached. */
  readonly score?: number;
  readonly threshold?: number;
  /** The `execute` rule through which the deciding rule ran. */
  readonly via?: RuleRef;
}

export type Outcome =
  /** The expression was false. */
  | 'not-matched'
  /** Disabled (or paused), by default or by an override. */
  | 'disabled'
  /** Skipped by an earlier skip rule or bypass (see `skippedBy`). */
  | 'skipped'
  /** The rule cannot run: its expression does not compile, its ruleset is unknown, … */
  | 'invalid'
  /** A terminating action ended evaluation. */
  | 'terminated'
  | 'logged'
  | 'scored'
  /** A skip rule matched; what it skips is in `note`. */
  | 'skip'
  | 'executed'
  /** Legacy `allow`: the remaining firewall rules are not run. */
  | 'allowed'
  /** Legacy `bypass`: its products are skipped from here on. */
  | 'bypassed'
  /** The anomaly rule matched but the total is below its threshold. */
  | 'below-threshold'
  /** A rate-limit rule matched: the request counts toward its limit. */
  | 'counted'
  /** Validation mode: a new managed rule would have acted; only recorded. */
  | 'validation-only'
  /** An action outside the WAF's scope (rewrite, redirect, …): not applied. */
  | 'unsupported';

export interface TraceEntry extends RuleRef {
  /** 0 for entry points and firewall rules, +1 per `execute`. */
  readonly depth: number;
  readonly ruleIndex?: number;
  /** Effective (after overrides). */
  readonly enabled: boolean;
  /** Undefined when the expression was not evaluated. */
  readonly matched?: boolean;
  /** The effective action. */
  readonly action?: string;
  readonly outcome: Outcome;
  readonly scoreAdded?: number;
  /** The ruleset's running total after this rule (scored rulesets). */
  readonly score?: number;
  readonly threshold?: number;
  readonly skippedBy?: RuleRef;
  /** Which overrides set the enabled state / action, e.g. `rule`, `category:paranoia-level-2`, `ruleset`. */
  readonly overriddenBy?: readonly string[];
  readonly note?: string;
}

export interface LogEntry extends RuleRef {
  readonly action: string;
  readonly outcome: Outcome;
}

export interface Evaluation {
  readonly decision: Decision;
  readonly trace: readonly TraceEntry[];
  /** Total anomaly score per executed ruleset id that has score rules. */
  readonly scores: Readonly<Record<string, number>>;
  /** Rules that logged: `log` actions, skip rules with logging, validation-only actions, counted rate limits. */
  readonly logs: readonly LogEntry[];
  /** Products skipped by `skip` rules or legacy `bypass`, with the rule that skipped each. */
  readonly skippedProducts: Readonly<Record<string, RuleRef>>;
  /** Validation mode: what the new managed rules would have done, and the previous WAF's verdict. */
  readonly validation?: { readonly newDecision: Decision; readonly previous?: PreviousWafVerdict };
}

export interface CompiledZone {
  readonly problems: readonly EngineProblem[];
  /**
   * Every field the zone's evaluation can read: its enabled rules' expressions (every phase,
   * managed rulesets, legacy rules not paused; a rule disabled by its overrides never runs)
   * and its rate limits' counting expressions and characteristics
   * (rateLimitParams.ts `rateLimitFieldsRead`). A caller that builds field values for it
   * may leave the others out (the WAF proxy does, requests/fields.ts `only`). Undefined
   * when the zone evaluates something that can read any field (a previous-WAF stand-in).
   */
  readonly fieldsRead?: ReadonlySet<string>;
  evaluate(fields: FieldValues, ctx?: EvalContext, hooks?: RequestHooks): Evaluation;
}

// --- Overrides -------------------------------------------------------------------------

export interface EffectiveRule {
  readonly enabled: boolean;
  readonly action?: string;
  /** The anomaly rule's threshold (undefined for other rules). */
  readonly scoreThreshold?: number;
  /** Which overrides changed something: `rule`, `category:<tag>`, `ruleset`. */
  readonly overriddenBy: readonly string[];
}

/**
 * A rule's effective settings under the overrides of an `execute` rule: per property, a
 * rule override, else the last category override naming one of its categories, else the
 * ruleset-wide value, else the rule's own.
 */
export function resolveOverrides(rule: Rule, overrides: Overrides | undefined, isAnomalyRule = false): EffectiveRule {
  let enabled = rule.enabled !== false;
  let action = rule.action;
  let threshold = isAnomalyRule ? (rule.score_threshold ?? DEFAULT_SCORE_THRESHOLD) : undefined;
  if (!overrides) return { enabled, action, scoreThreshold: threshold, overriddenBy: [] };
  let enabledFrom: string | undefined;
  let actionFrom: string | undefined;
  let thresholdFrom: string | undefined;
  if (overrides.enabled !== undefined) [enabled, enabledFrom] = [overrides.enabled, 'ruleset'];
  if (overrides.action !== undefined) [action, actionFrom] = [overrides.action, 'ruleset'];
  const cats: readonly string[] = Array.isArray(rule.categories) ? rule.categories : [];
  for (const c of overrides.categories ?? []) {
    if (!cats.includes(c.category)) continue;
    if (c.enabled !== undefined) [enabled, enabledFrom] = [c.enabled, `category:${c.category}`];
    if (c.action !== undefined) [action, actionFrom] = [c.action, `category:${c.category}`];
  }
  for (const r of overrides.rules ?? []) {
    if (rule.id === undefined || r.id !== rule.id) continue;
    if (r.enabled !== undefined) [enabled, enabledFrom] = [r.enabled, 'rule'];
    if (r.action !== undefined) [action, actionFrom] = [r.action, 'rule'];
    if (isAnomalyRule && r.score_threshold !== undefined) [threshold, thresholdFrom] = [r.score_threshold, 'rule'];
  }
  const by = [...new Set([enabledFrom, actionFrom, thresholdFrom].filter((x): x is string => x !== undefined))];
  return { enabled, action, scoreThreshold: threshold, overriddenBy: by };
}

// --- Compiled form ---------------------------------------------------------------------

interface CRule {
  readonly index: number;
  readonly ref: RuleRef;
  readonly filter?: CompiledFilter;
  /** Why the rule cannot run, when it cannot. */
  readonly invalid?: string;
  readonly enabled: boolean;
  readonly action: string;
  readonly overriddenBy?: readonly string[];
  readonly increment: number;
  /** The anomaly rule's threshold. */
  readonly threshold?: number;
  readonly response?: BlockResponse;
  readonly skip?: SkipParameters;
  readonly skipLogs: boolean;
  /** Legacy bypass products. */
  readonly products?: readonly string[];
  readonly execute?: CRuleset;
  readonly executeMissing?: string;
  /** A rate-limit rule's `ratelimit` (phase http_ratelimit). */
  readonly rateLimit?: RateLimit;
}

interface CRuleset {
  readonly id?: string;
  readonly name?: string;
  readonly stage: Stage;
  readonly rules: readonly CRule[];
  /** Has score rules or an anomaly rule: its total is reported. */
  readonly scored: boolean;
}

type FilterResult = { readonly filter?: CompiledFilter; readonly diagnostics: readonly Diagnostic[]; readonly fields: ReadonlySet<string> };
/** Compiled expressions by rule object (rules are immutable values), then by compile options. */
const filterCache = new WeakMap<object, Map<string, FilterResult>>();

function cachedCompile(owner: object, text: string, opts: { allowManaged: boolean; plan?: Plan; phase?: Phase; nilNotEqual: boolean }): FilterResult {
  const key = `${text}\u0000${opts.allowManaged}|${opts.plan ?? ''}|${opts.phase ?? ''}|${opts.nilNotEqual}`;
  let byOpts = filterCache.get(owner);
  if (!byOpts) filterCache.set(owner, (byOpts = new Map()));
  let r = byOpts.get(key);
  if (!r) {
    const c = compileExpression(text, opts);
    r = { filter: c.filter, diagnostics: c.diagnostics.filter((d) => d.severity === 'error'), fields: c.ir ? irFieldNames(c.ir) : new Set() };
    byOpts.set(key, r);
  }
  return r;
}

const KNOWN_IN_WAF = new Set(['block', 'challenge', 'js_challenge', 'managed_challenge', 'log', 'skip', 'execute', 'score']);

class ZoneCompiler {
  readonly problems: EngineProblem[] = [];
  /** The fields read by what has been compiled so far (CompiledZone.fieldsRead). */
  readonly fieldsRead = new Set<string>();
  /** Each custom ruleset's current version (the last given). */
  private readonly customById = new Map<string, Ruleset>();
  /** The other versions given of a custom ruleset, by id and version (ZoneConfig.customRulesets). */
  private readonly customVersions = new Map<string, Map<string, Ruleset>>();

  constructor(
    private readonly zone: ZoneConfig,
    private readonly options: CompileZoneOptions,
  ) {
    for (const r of Array.isArray(zone.customRulesets) ? zone.customRulesets : []) {
      if (typeof r !== 'object' || r === null || Array.isArray(r)) {
        this.problems.push({ severity: 'error', stage: 'http_request_firewall_custom', message: 'a custom ruleset is not an object' });
        continue;
      }
      if (typeof r.id !== 'string' || r.id === '') {
        this.problems.push({ severity: 'warning', stage: r.phase ?? 'http_request_firewall_custom', message: `custom ruleset ${r.name ? `"${r.name}" ` : ''}has no id: no execute rule can run it` });
        continue;
      }
      const before = this.customById.get(r.id);
      if (before) {
        const versions = this.customVersions.get(r.id) ?? new Map<string, Ruleset>();
        const v = before.version;
        if (typeof v === 'string' && typeof r.version === 'string' && v !== r.version && !versions.has(v) && !versions.has(r.version)) {
          this.customVersions.set(r.id, versions.set(v, before));
        } else {
          this.problems.push({ severity: 'warning', stage: r.phase ?? 'http_request_firewall_custom', rulesetId: r.id, message: `two custom rulesets have id ${r.id}; the last one is used` });
        }
      }
      this.customById.set(r.id, r);
    }
  }

  entryPoint(phase: WafPhase, rs: Ruleset): CRuleset {
    if (rs.phase !== undefined && rs.phase !== phase) {
      this.problems.push({ severity: 'warning', stage: phase, rulesetId: rs.id, message: `the entry point given for ${phase} says its phase is ${rs.phase}; it runs as ${phase}` });
    }
    return this.ruleset(rs, phase, { managed: false, stack: [rs.id ?? `entrypoint:${phase}`] });
  }

  private ruleset(
    rs: { readonly id?: string; readonly name?: string; readonly rules?: readonly Rule[] },
    stage: WafPhase,
    ctx: { managed: boolean; overrides?: Overrides; anomalyRuleId?: string; stack: readonly string[] },
  ): CRuleset {
    let list: readonly unknown[] = [];
    if (Array.isArray(rs.rules)) list = rs.rules;
    else if (rs.rules !== undefined) this.problems.push({ severity: 'error', stage, rulesetId: rs.id, message: `ruleset ${rs.id ?? rs.name ?? ''}: "rules" is not an array`.replace('  ', ' ') });
    const rules = list.map((rule, index) => {
      if (isRecord(rule)) return this.rule(rule as Rule, index, rs, stage, ctx);
      this.problems.push({ severity: 'error', stage, rulesetId: rs.id, ruleIndex: index, message: `rule ${index + 1} is not an object` });
      return invalidRule(index, { phase: stage, rulesetId: rs.id, rulesetName: rs.name }, 'the rule is not an object');
    });
    if (ctx.overrides) this.checkOverrides(rs, stage, ctx.overrides, ctx.anomalyRuleId);
    const scored = ctx.anomalyRuleId !== undefined || rules.some((r) => r.action === 'score');
    return { id: rs.id, name: rs.name, stage, rules, scored };
  }

  private rule(
    rule: Rule,
    index: number,
    rs: { readonly id?: string; readonly name?: string },
    stage: WafPhase,
    ctx: { managed: boolean; overrides?: Overrides; anomalyRuleId?: string; stack: readonly string[] },
  ): CRule {
    const isAnomaly = ctx.anomalyRuleId !== undefined && rule.id === ctx.anomalyRuleId;
    const eff = resolveOverrides(rule, ctx.overrides, isAnomaly);
    const ref: RuleRef = { phase: stage, rulesetId: rs.id, rulesetName: rs.name, ruleId: rule.id || undefined, ref: rule.ref || rule.id || undefined, description: rule.description || undefined };
    const where = { stage, rulesetId: rs.id, ruleIndex: index, ruleId: ref.ruleId, ref: ref.ref };
    const action = typeof eff.action === 'string' ? eff.action : '';
    let invalid: string | undefined;
    let filter: CompiledFilter | undefined;
    if (typeof rule.expression !== 'string' || rule.expression.trim() === '') {
      invalid = 'the rule has no expression';
      if (eff.enabled) this.problems.push({ severity: 'error', ...where, message: `${describe(ref, index)} has no expression` });
    } else {
      const c = cachedCompile(rule, rule.expression, { allowManaged: ctx.managed, plan: this.zone.plan, phase: stage, nilNotEqual: this.options.nilNotEqual === true });
      filter = c.filter;
      // A disabled rule (after overrides) never runs: what it would read is not read.
      if (eff.enabled) for (const f of c.fields) this.fieldsRead.add(f);
      if (!filter) {
        invalid = 'the expression does not compile';
        this.problems.push({ severity: 'error', ...where, message: `${describe(ref, index)}: the expression does not compile: ${c.diagnostics.map((d) => withSubject(d.message, rule.expression as string, d.range.start, d.range.end)).join('; ')}`, diagnostics: c.diagnostics });
      }
    }
    // The caller counts by it (RequestHooks.rateLimitReached); one that cannot compile would count nothing, unsaid.
    const counting = stage === 'http_ratelimit' && isRecord(rule.ratelimit) ? rateCounting(rule.ratelimit).problems : undefined;
    if (eff.enabled && stage === 'http_ratelimit' && isRecord(rule.ratelimit)) for (const f of rateLimitFieldsRead(rule.ratelimit)) this.fieldsRead.add(f);
    if (counting) this.problems.push({ severity: 'error', ...where, message: `${describe(ref, index)}: the counting expression does not compile, so the rule counts no request: ${counting.map((d) => d.message).join('; ')}`, diagnostics: counting });
    if (action === '') {
      invalid ??= 'the rule has no action';
      this.problems.push({ severity: 'error', ...where, message: `${describe(ref, index)} has no action` });
    } else if (!KNOWN_IN_WAF.has(action)) {
      this.problems.push({ severity: 'warning', ...where, message: `${describe(ref, index)}: action "${action}" is outside the WAF phases; the engine records it and does not apply it` });
    }
    const params = isRecord(rule.action_parameters) ? (rule.action_parameters as Record<string, unknown>) : undefined;
    let increment = 0;
    if (action === 'score') {
      const inc = (params as ScoreParameters | undefined)?.increment;
      if (typeof inc === 'number' && Number.isFinite(inc)) increment = inc;
      else this.problems.push({ severity: 'warning', ...where, message: `${describe(ref, index)} scores with no numeric action_parameters.increment; it adds 0` });
    }
    const response = action === 'block' && rule.action === 'block' ? (params as BlockParameters | undefined)?.response : undefined;
    const skip = action === 'skip' ? this.skipParams(params, where, ref, index) : undefined;
    let execute: CRuleset | undefined;
    let executeMissing: string | undefined;
    if (action === 'execute') {
      const r = this.execute(rule, (params ?? {}) as unknown as ExecuteParameters, stage, where, index, ref, ctx.stack);
      execute = r.ruleset;
      executeMissing = r.missing;
    }
    return {
      index,
      ref,
      filter: invalid === undefined ? filter : undefined,
      invalid,
      enabled: eff.enabled,
      action,
      overriddenBy: eff.overriddenBy.length > 0 ? eff.overriddenBy : undefined,
      increment,
      threshold: isAnomaly ? eff.scoreThreshold : undefined,
      response,
      skip,
      skipLogs: rule.logging?.enabled !== false,
      execute,
      executeMissing,
      rateLimit: stage === 'http_ratelimit' && isRecord(rule.ratelimit) ? rule.ratelimit : undefined,
    };
  }

  private execute(
    rule: Rule,
    p: ExecuteParameters,
    stage: WafPhase,
    where: Omit<EngineProblem, 'severity' | 'message'>,
    index: number,
    ref: RuleRef,
    stack: readonly string[],
  ): { ruleset?: CRuleset; missing?: string } {
    const fail = (message: string) => {
      if (rule.enabled !== false) this.problems.push({ severity: 'error', ...where, message: `${describe(ref, index)}: ${message}` });
      return { missing: message };
    };
    if (typeof p.id !== 'string' || p.id === '') return fail('execute needs action_parameters.id, the ruleset to run');
    if (stack.includes(p.id)) return fail(`executing ruleset ${p.id} again from inside itself would never end`);
    const current = this.customById.get(p.id);
    if (current) {
      const pinned = p.version !== undefined && p.version !== 'latest' && current.version !== undefined && p.version !== current.version;
      const custom = (pinned ? this.customVersions.get(p.id)?.get(p.version!) : undefined) ?? current;
      if (custom.phase !== undefined && custom.phase !== stage) {
        this.problems.push({ severity: 'warning', ...where, message: `${describe(ref, index)} runs custom ruleset ${p.id} of phase ${custom.phase} in ${stage}` });
      }
      if (pinned && custom === current) {
        const known = [...(this.customVersions.get(p.id)?.keys() ?? []), current.version];
        const runs = known.length === 1 ? `only version ${current.version} is known, and it runs` : `versions ${known.join(', ')} are known, and the current one (${current.version}) runs`;
        this.problems.push({ severity: 'warning', ...where, message: `${describe(ref, index)} asks for version ${p.version} of custom ruleset ${p.id}; ${runs}` });
      }
      return { ruleset: this.ruleset(custom, stage, { managed: false, overrides: this.overrides(p.overrides, where), stack: [...stack, p.id] }) };
    }
    const managed = this.zone.catalog.rulesets.find((r) => r.id === p.id);
    if (!managed) return fail(`no managed or custom ruleset has id ${p.id}`);
    const version = rulesetVersion(managed, p.version);
    if (!version) return fail(`managed ruleset "${managed.name}" has no version ${p.version} (versions: ${managed.versions.map((v) => v.version).join(', ')})`);
    if (managed.phase !== stage) this.problems.push({ severity: 'warning', ...where, message: `${describe(ref, index)} runs managed ruleset "${managed.name}" (phase ${managed.phase}) in ${stage}` });
    return {
      ruleset: this.ruleset({ id: managed.id, name: managed.name, rules: version.rules }, stage, {
        managed: true,
        overrides: this.overrides(p.overrides, where),
        anomalyRuleId: managed.anomalyRuleId,
        stack: [...stack, p.id],
      }),
    };
  }

  /** Overrides with malformed parts dropped (each reported), so evaluation never trips on them. */
  private overrides(o: unknown, where: Omit<EngineProblem, 'severity' | 'message'>): Overrides | undefined {
    if (o === undefined) return undefined;
    const warn = (message: string) => this.problems.push({ severity: 'error', ...where, message });
    // A value the engine ignores is a warning: the override's other values still apply.
    const ignored = (message: string) => this.problems.push({ severity: 'warning', ...where, message });
    if (!isRecord(o)) return warn('overrides must be an object'), undefined;
    const out: { -readonly [K in keyof Overrides]: Overrides[K] } = {};
    if (typeof o.action === 'string') out.action = o.action;
    if (typeof o.enabled === 'boolean') out.enabled = o.enabled;
    if (o.categories !== undefined) {
      if (!Array.isArray(o.categories)) warn('overrides.categories must be an array');
      else {
        const items = o.categories.filter((c) => (isRecord(c) && typeof c.category === 'string') || (warn('overrides.categories: each item needs a "category"'), false)) as Record<string, unknown>[];
        out.categories = items.map((c, i) => ({ category: c.category as string, ...overrideValues(c, `overrides.categories[${i}]`, false, ignored) }));
      }
    }
    if (o.rules !== undefined) {
      if (!Array.isArray(o.rules)) warn('overrides.rules must be an array');
      else {
        const items = o.rules.filter((r) => (isRecord(r) && typeof r.id === 'string') || (warn('overrides.rules: each item needs an "id"'), false)) as Record<string, unknown>[];
        out.rules = items.map((r, i) => ({ id: r.id as string, ...overrideValues(r, `overrides.rules[${i}]`, true, ignored) }));
      }
    }
    return out;
  }

  /** Skip parameters with malformed parts dropped (each reported). */
  private skipParams(p: Record<string, unknown> | undefined, where: Omit<EngineProblem, 'severity' | 'message'>, ref: RuleRef, index: number): SkipParameters {
    const out: { -readonly [K in keyof SkipParameters]: SkipParameters[K] } = {};
    const bad = (key: string, want: string) => this.problems.push({ severity: 'error', ...where, message: `${describe(ref, index)}: action_parameters.${key} must be ${want}; ignored` });
    if (!p) return out;
    if (p.ruleset !== undefined) p.ruleset === 'current' ? (out.ruleset = 'current') : bad('ruleset', '"current"');
    if (p.phase !== undefined) p.phase === 'current' ? (out.phase = 'current') : bad('phase', '"current"');
    const strings = (key: string): string[] | undefined => {
      const v = p[key];
      if (v === undefined) return undefined;
      if (Array.isArray(v) && v.every((x) => typeof x === 'string')) return v as string[];
      bad(key, 'an array of strings');
      return undefined;
    };
    out.phases = strings('phases') as Phase[] | undefined;
    out.products = strings('products');
    out.rulesets = strings('rulesets');
    if (p.rules !== undefined) {
      if (isRecord(p.rules) && Object.values(p.rules).every((v) => Array.isArray(v) && v.every((x) => typeof x === 'string'))) out.rules = p.rules as SkipParameters['rules'];
      else bad('rules', 'an object mapping ruleset ids to arrays of rule ids');
    }
    return out;
  }

  private checkOverrides(rs: { readonly id?: string; readonly rules?: readonly Rule[] }, stage: WafPhase, o: Overrides, anomalyRuleId?: string): void {
    const rules = rs.rules ?? [];
    const ids = new Set(rules.map((r) => r.id));
    for (const r of o.rules ?? []) {
      if (!ids.has(r.id)) this.problems.push({ severity: 'warning', stage, rulesetId: rs.id, message: `override for rule ${r.id}: no such rule in ruleset ${rs.id}; it has no effect` });
      else if (r.score_threshold !== undefined && r.id !== anomalyRuleId) {
        this.problems.push({ severity: 'warning', stage, rulesetId: rs.id, ruleId: r.id, message: `score_threshold on rule ${r.id} has no effect: only the anomaly-score rule${anomalyRuleId ? ` (${anomalyRuleId})` : ''} takes one` });
      }
    }
    // A category no rule has (the paranoia levels always exist: a ruleset may have no rule of one).
    const tags = new Set(rules.flatMap((r) => (Array.isArray(r.categories) ? r.categories : [])));
    for (const c of o.categories ?? []) {
      if (!tags.has(c.category) && !PARANOIA_TAG.test(c.category)) {
        this.problems.push({ severity: 'warning', stage, rulesetId: rs.id, message: `override for category ${c.category}: no rule of ruleset ${rs.id} has it; it has no effect` });
      }
    }
    // The rule that decides a scored ruleset: overridden off (or to another action by a
    // category meant for detection rules), the ruleset scores and never acts as meant.
    const anomaly = anomalyRuleId === undefined ? undefined : rules.find((r) => r.id === anomalyRuleId);
    if (!anomaly) return;
    const cats = Array.isArray(anomaly.categories) ? anomaly.categories : [];
    for (const c of o.categories ?? []) {
      if (!cats.includes(c.category) || (c.enabled === undefined && c.action === undefined)) continue;
      this.problems.push({
        severity: 'warning',
        stage,
        rulesetId: rs.id,
        ruleId: anomalyRuleId,
        message: `the override of category ${c.category} also applies to the anomaly-score rule ${anomalyRuleId} (${anomaly.description ?? ''}), which has that tag: it ${c.enabled === false ? 'is disabled too' : c.enabled === true ? 'is enabled by it' : `gets action ${c.action}`}; override rule ${anomalyRuleId} itself to keep it as it was`,
      });
    }
    // (Not when every rule is off: that is the ruleset switched off, not a dead deployment.)
    if (!resolveOverrides(anomaly, o, true).enabled && rules.some((r) => r !== anomaly && resolveOverrides(r, o).enabled)) {
      this.problems.push({ severity: 'warning', stage, rulesetId: rs.id, ruleId: anomalyRuleId, message: `the anomaly-score rule ${anomalyRuleId} is disabled by the overrides: the ruleset adds up scores and never acts; enable it with a rule override {"id": "${anomalyRuleId}", "enabled": true}` });
    }
  }

  legacy(input: readonly LegacyFirewallRule[]): CRuleset {
    const rules = (Array.isArray(input) ? input : []).filter((fr, i) => {
      if (isRecord(fr)) return true;
      this.problems.push({ severity: 'error', stage: 'legacy_firewall_rules', ruleIndex: i, message: `firewall rule ${i + 1} is not an object` });
      return false;
    });
    const ordered = legacyOrder(rules);
    const compiled = ordered.map((fr): CRule => {
      const index = input.indexOf(fr);
      const ref: RuleRef = { phase: 'legacy_firewall_rules', ruleId: fr.id || undefined, ref: fr.ref || fr.id || undefined, description: fr.description || fr.filter?.description || undefined };
      const where = { stage: 'legacy_firewall_rules' as const, ruleIndex: index, ruleId: ref.ruleId, ref: ref.ref };
      const paused = fr.paused === true || fr.filter?.paused === true;
      let invalid: string | undefined;
      let filter: CompiledFilter | undefined;
      if (!isRecord(fr.filter) || fr.filter.deleted === true || typeof fr.filter.expression !== 'string') {
        invalid = 'the rule has no filter expression (the filter was deleted?)';
        if (!paused) this.problems.push({ severity: 'error', ...where, message: `firewall rule ${describe(ref, index)}: ${invalid}` });
      } else {
        const c = cachedCompile(fr.filter, fr.filter.expression, { allowManaged: false, plan: this.zone.plan, phase: 'http_request_firewall_custom', nilNotEqual: this.options.nilNotEqual === true });
        filter = c.filter;
        if (!paused) for (const f of c.fields) this.fieldsRead.add(f);
        if (!filter) {
          invalid = 'the expression does not compile';
          this.problems.push({ severity: 'error', ...where, message: `firewall rule ${describe(ref, index)}: the filter expression does not compile: ${c.diagnostics.map((d) => withSubject(d.message, fr.filter.expression as string, d.range.start, d.range.end)).join('; ')}`, diagnostics: c.diagnostics });
        }
      }
      const products = Array.isArray(fr.products) ? (fr.products as readonly unknown[]).filter((x): x is SkipProduct => typeof x === 'string') : [];
      if (!(LEGACY_ACTIONS as readonly string[]).includes(fr.action)) {
        invalid ??= `unknown action "${String(fr.action)}"`;
        this.problems.push({ severity: 'error', ...where, message: `firewall rule ${describe(ref, index)}: unknown action "${String(fr.action)}" (expected one of ${LEGACY_ACTIONS.join(', ')})` });
      }
      if (fr.action !== 'bypass' && products.length > 0) {
        this.problems.push({ severity: 'warning', ...where, message: `firewall rule ${describe(ref, index)}: products only apply to bypass; ignored for ${fr.action}` });
      }
      if (fr.action === 'bypass' && products.length === 0) {
        this.problems.push({ severity: 'warning', ...where, message: `firewall rule ${describe(ref, index)}: bypass with no products bypasses nothing` });
      }
      return { index, ref, filter: invalid === undefined ? filter : undefined, invalid, enabled: !paused, action: fr.action, increment: 0, skipLogs: false, products: fr.action === 'bypass' ? products : undefined };
    });
    return { stage: 'legacy_firewall_rules', rules: compiled, scored: false };
  }
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function invalidRule(index: number, ref: RuleRef, why: string): CRule {
  return { index, ref, invalid: why, enabled: true, action: '', increment: 0, skipLogs: false };
}

function describe(ref: RuleRef, index: number): string {
  const name = ref.ref ?? ref.ruleId;
  return `rule ${index + 1}${name ? ` "${name}"` : ''}${ref.description ? ` (${ref.description})` : ''}`;
}

// --- Evaluation ------------------------------------------------------------------------

class Run {
  readonly trace: TraceEntry[] = [];
  readonly logs: LogEntry[] = [];
  readonly scores: Record<string, number> = {};
  readonly skippedPhases = new Map<string, RuleRef>();
  readonly skippedRulesets = new Map<string, RuleRef>();
  readonly skippedRules = new Map<string, Map<string, RuleRef>>();
  readonly skippedProducts: Record<string, RuleRef> = {};
  decision?: Decision;
  /** Set by `skip` with `phase: "current"`: the rest of the phase does not run. */
  phaseSkippedBy?: RuleRef;
  /** Validation mode: the first action the new managed rules would have taken. */
  newDecision?: Decision;
  /** Trace entries for rules that did not act are kept (RequestHooks.omitIdleRules). */
  readonly traceIdle: boolean;

  constructor(
    readonly fields: FieldValues,
    readonly ctx: EvalContext | undefined,
    readonly options: CompileZoneOptions,
    readonly hooks: RequestHooks | undefined,
  ) {
    this.traceIdle = hooks?.omitIdleRules !== true;
  }
}

interface Frame {
  readonly depth: number;
  readonly via?: RuleRef;
  /** Validation mode: terminating actions are recorded, not taken. */
  readonly validationOnly: boolean;
}

function entry(r: CRule, depth: number, extra: Omit<TraceEntry, keyof RuleRef | 'depth' | 'ruleIndex' | 'enabled' | 'action'> & { action?: string }): TraceEntry {
  const ref = r.ref;
  const e: { -readonly [K in keyof TraceEntry]: TraceEntry[K] } = {
    phase: ref.phase,
    rulesetId: ref.rulesetId,
    rulesetName: ref.rulesetName,
    ruleId: ref.ruleId,
    ref: ref.ref,
    description: ref.description,
    depth,
    ruleIndex: r.index,
    enabled: r.enabled,
    action: r.action,
    outcome: extra.outcome,
  };
  if (extra.matched !== undefined) e.matched = extra.matched;
  if (extra.scoreAdded !== undefined) e.scoreAdded = extra.scoreAdded;
  if (extra.score !== undefined) e.score = extra.score;
  if (extra.threshold !== undefined) e.threshold = extra.threshold;
  if (extra.skippedBy !== undefined) e.skippedBy = extra.skippedBy;
  if (extra.note !== undefined) e.note = extra.note;
  if (r.overriddenBy) e.overriddenBy = r.overriddenBy;
  return e;
}

/**
 * `base` (whether the rule matched; an anomaly rule's score and threshold) with the outcome,
 * written out rather than `{ ...base, outcome }` (docs/proxy.md, "No spread-first objects per request").
 */
function outcomeOf(base: Partial<TraceEntry>, outcome: Outcome, note?: string): Partial<TraceEntry> & { outcome: Outcome } {
  return { matched: base.matched, score: base.score, threshold: base.threshold, outcome, note };
}

/** Built field by field: spreading a RuleRef with absent properties is slow on V8's hot path. */
function logEntry(ref: RuleRef, action: string, outcome: Outcome): LogEntry {
  return { phase: ref.phase, rulesetId: ref.rulesetId, rulesetName: ref.rulesetName, ruleId: ref.ruleId, ref: ref.ref, description: ref.description, action, outcome };
}

/** Whether the client has solved a challenge (RequestHooks.challengePassed), a rule's or the previous WAF's; a block is never passed. */
function challengeSolved(run: Run, ref: RuleRef, action: string): boolean {
  return isTerminating(action) && action !== 'block' && run.hooks?.challengePassed?.(ref, action) === true;
}

/** The trace's note for a challenge the client has solved. */
const SOLVED = 'challenge passed: the client has solved it (clearance cookie)';

function isTerminating(action: string): action is TerminatingAction {
  return action === 'block' || action === 'challenge' || action === 'js_challenge' || action === 'managed_challenge';
}

/** Runs a compiled ruleset; true when a terminating action ended evaluation. */
function runRuleset(run: Run, rs: CRuleset, frame: Frame): boolean {
  let score = 0;
  let currentSkippedBy: RuleRef | undefined;
  const { depth } = frame;
  const done = () => {
    if (rs.scored && rs.id !== undefined) run.scores[rs.id] = score;
  };
  for (const r of rs.rules) {
    const by = currentSkippedBy ?? run.phaseSkippedBy;
    if (by) {
      run.trace.push(entry(r, depth, { outcome: 'skipped', skippedBy: by, note: currentSkippedBy ? 'rest of the ruleset skipped' : 'rest of the phase skipped' }));
      continue;
    }
    if (!r.enabled) {
      if (run.traceIdle) run.trace.push(entry(r, depth, { outcome: 'disabled' }));
      continue;
    }
    const ruleSkip = rs.id !== undefined && r.ref.ruleId !== undefined ? run.skippedRules.get(rs.id)?.get(r.ref.ruleId) : undefined;
    if (ruleSkip) {
      run.trace.push(entry(r, depth, { outcome: 'skipped', skippedBy: ruleSkip }));
      continue;
    }
    if (!r.filter) {
      run.trace.push(entry(r, depth, { outcome: 'invalid', note: r.invalid }));
      continue;
    }
    if (r.rateLimit) run.hooks?.rateLimitReached?.(r.ref, run.fields, r.rateLimit);
    const matched = r.filter.matches(run.fields, run.ctx);
    if (r.threshold !== undefined) {
      // The anomaly rule: its expression and the total against its threshold.
      const base = { matched, score, threshold: r.threshold };
      if (!matched) {
        if (run.traceIdle) run.trace.push(entry(r, depth, outcomeOf(base, 'not-matched')));
        continue;
      }
      if (score < r.threshold) {
        run.trace.push(entry(r, depth, outcomeOf(base, 'below-threshold')));
        continue;
      }
      if (act(run, rs, r, frame, base)) return done(), true;
      continue;
    }
    if (!matched) {
      if (run.traceIdle) run.trace.push(entry(r, depth, { matched, outcome: 'not-matched' }));
      continue;
    }
    switch (r.action) {
      case 'score':
        score += r.increment;
        run.trace.push(entry(r, depth, { matched, outcome: 'scored', scoreAdded: r.increment, score }));
        continue;
      case 'skip': {
        const p = r.skip ?? {};
        const notes: string[] = [];
        if (p.ruleset === 'current') {
          currentSkippedBy = r.ref;
          notes.push('the rest of this ruleset');
        }
        if (p.phase === 'current') {
          run.phaseSkippedBy = r.ref;
          notes.push('the rest of this phase');
        }
        for (const ph of p.phases ?? []) {
          if (!run.skippedPhases.has(ph)) run.skippedPhases.set(ph, r.ref);
          notes.push(`phase ${ph}`);
        }
        for (const id of p.rulesets ?? []) {
          if (!run.skippedRulesets.has(id)) run.skippedRulesets.set(id, r.ref);
          notes.push(`ruleset ${id}`);
        }
        for (const [id, ruleIds] of Object.entries(p.rules ?? {})) {
          let m = run.skippedRules.get(id);
          if (!m) run.skippedRules.set(id, (m = new Map()));
          for (const rid of ruleIds) if (!m.has(rid)) m.set(rid, r.ref);
          notes.push(`${ruleIds.length} rule${ruleIds.length === 1 ? '' : 's'} of ruleset ${id}`);
        }
        for (const product of p.products ?? []) {
          run.skippedProducts[product] ??= r.ref;
          notes.push(`product ${product}`);
        }
        run.trace.push(entry(r, depth, { matched, outcome: 'skip', note: notes.length ? `skips ${notes.join(', ')}` : 'skips nothing' }));
        if (r.skipLogs) run.logs.push(logEntry(r.ref, 'skip', 'skip'));
        continue;
      }
      case 'execute': {
        if (!r.execute) {
          run.trace.push(entry(r, depth, { matched, outcome: 'invalid', note: r.executeMissing }));
          continue;
        }
        const skippedBy = r.execute.id !== undefined ? run.skippedRulesets.get(r.execute.id) : undefined;
        if (skippedBy) {
          run.trace.push(entry(r, depth, { matched, outcome: 'skipped', skippedBy, note: `ruleset ${r.execute.id} skipped` }));
          continue;
        }
        run.trace.push(entry(r, depth, { matched, outcome: 'executed', note: `runs ${r.execute.name ? `"${r.execute.name}" ` : ''}${r.execute.id ?? ''}`.trim() }));
        if (runRuleset(run, r.execute, { depth: depth + 1, via: r.ref, validationOnly: frame.validationOnly })) return done(), true;
        continue;
      }
      default:
        if (act(run, rs, r, frame, { matched })) return done(), true;
    }
  }
  done();
  return false;
}

/** Applies a matched rule's log or terminating action; true when evaluation ends. */
function act(run: Run, rs: CRuleset, r: CRule, frame: Frame, base: Partial<TraceEntry>): boolean {
  const { depth } = frame;
  const action = r.action;
  if (rs.stage === 'http_ratelimit' && (isTerminating(action) || action === 'log')) {
    const exceeded = (run.hooks?.rateLimitExceeded ?? run.options.rateLimitExceeded)?.(r.ref, run.fields, r.rateLimit) === true;
    if (!exceeded) {
      run.trace.push(entry(r, depth, outcomeOf(base, 'counted', 'counts toward the rate limit; no request counts are kept, so the limit is never reached here')));
      return false;
    }
  }
  if (action === 'log') {
    run.trace.push(entry(r, depth, outcomeOf(base, 'logged')));
    run.logs.push(logEntry(r.ref, action, 'logged'));
    return false;
  }
  if (!frame.validationOnly && challengeSolved(run, r.ref, action)) {
    run.trace.push(entry(r, depth, outcomeOf(base, 'logged', SOLVED)));
    run.logs.push(logEntry(r.ref, action, 'logged'));
    return false;
  }
  if (isTerminating(action)) {
    const { phase, rulesetId, ruleId, ref, description } = r.ref;
    const decision: Decision = {
      action,
      phase,
      ...(rulesetId !== undefined ? { rulesetId } : {}),
      ...(ruleId !== undefined ? { ruleId } : {}),
      ...(ref !== undefined ? { ref } : {}),
      ...(description !== undefined ? { description } : {}),
      ...(r.response ? { response: r.response } : {}),
      ...(r.threshold !== undefined ? { score: base.score, threshold: r.threshold } : {}),
      ...(frame.via ? { via: frame.via } : {}),
    };
    if (frame.validationOnly) {
      run.newDecision ??= decision;
      run.trace.push(entry(r, depth, outcomeOf(base, 'validation-only', 'validation mode: the previous WAF decides')));
      run.logs.push(logEntry(r.ref, action, 'validation-only'));
      return false;
    }
    run.decision = decision;
    run.trace.push(entry(r, depth, outcomeOf(base, 'terminated')));
    return true;
  }
  run.trace.push(entry(r, depth, outcomeOf(base, 'unsupported', `action "${action}" is not applied by the WAF engine`)));
  return false;
}

function runLegacy(run: Run, rs: CRuleset): boolean {
  for (let i = 0; i < rs.rules.length; i++) {
    const r = rs.rules[i];
    if (!r.enabled) {
      if (run.traceIdle) run.trace.push(entry(r, 0, { outcome: 'disabled', note: 'paused' }));
      continue;
    }
    if (!r.filter) {
      run.trace.push(entry(r, 0, { outcome: 'invalid', note: r.invalid }));
      continue;
    }
    const matched = r.filter.matches(run.fields, run.ctx);
    if (!matched) {
      if (run.traceIdle) run.trace.push(entry(r, 0, { matched, outcome: 'not-matched' }));
      continue;
    }
    switch (r.action) {
      case 'allow': {
        run.trace.push(entry(r, 0, { matched, outcome: 'allowed', note: 'the remaining firewall rules do not run' }));
        for (const rest of rs.rules.slice(i + 1)) run.trace.push(entry(rest, 0, { outcome: 'skipped', skippedBy: r.ref, note: 'after allow' }));
        return false;
      }
      case 'bypass': {
        const products = r.products ?? [];
        for (const p of products) {
          run.skippedProducts[p] ??= r.ref;
          if (p === 'waf' && !run.skippedPhases.has('http_request_firewall_managed')) run.skippedPhases.set('http_request_firewall_managed', r.ref);
          if (p === 'rateLimit' && !run.skippedPhases.has('http_ratelimit')) run.skippedPhases.set('http_ratelimit', r.ref);
        }
        run.trace.push(entry(r, 0, { matched, outcome: 'bypassed', note: products.length ? `bypasses ${products.join(', ')}` : 'bypasses nothing' }));
        continue;
      }
      default:
        if (act(run, rs, r, { depth: 0, validationOnly: false }, { matched })) return true;
    }
  }
  return false;
}

const ALLOW: Decision = { action: 'allow-through' };

export function compileZone(zone: ZoneConfig, options: CompileZoneOptions = {}): CompiledZone {
  const c = new ZoneCompiler(zone, options);
  const runLegacyRules = zone.legacy !== undefined && !zone.legacy.migrated && Array.isArray(zone.legacy.firewallRules) && zone.legacy.firewallRules.length > 0;
  const legacy = runLegacyRules ? c.legacy(zone.legacy!.firewallRules) : undefined;
  const phases: { phase: WafPhase; rs?: CRuleset }[] = [];
  for (const phase of WAF_PHASES) {
    const ep = zone.entryPoints[phase];
    if (ep !== undefined && !isRecord(ep)) c.problems.push({ severity: 'error', stage: phase, message: `the ${phase} entry point is not a ruleset object` });
    phases.push({ phase, rs: isRecord(ep) ? c.entryPoint(phase, ep) : undefined });
  }
  for (const p of Object.keys(zone.entryPoints)) {
    if (!(WAF_PHASES as readonly string[]).includes(p)) {
      c.problems.push({ severity: 'warning', stage: p as Phase, message: `the ${p} entry point is not evaluated: the engine runs the WAF phases (${WAF_PHASES.join(', ')})` });
    }
  }
  const validation = zone.legacy?.validationMode === true;
  const problems = c.problems;

  function evaluate(fields: FieldValues, ctx?: EvalContext, hooks?: RequestHooks): Evaluation {
    // One memo per evaluation: the CRS rules share their transformed collections (evaluate.ts).
    const run = new Run(fields, ctx?.memo ? ctx : Object.assign({}, ctx, { memo: new EvalMemo() }), options, hooks);
    const finish = (): Evaluation => {
      const ev: Evaluation = {
        decision: run.decision ?? ALLOW,
        trace: run.trace,
        scores: run.scores,
        logs: run.logs,
        skippedProducts: run.skippedProducts,
      };
      return validation ? Object.assign(ev, { validation: { newDecision: run.newDecision ?? ALLOW, ...(previous ? { previous } : {}) } }) : ev;
    };
    let previous: PreviousWafVerdict | undefined;
    if (legacy && runLegacy(run, legacy)) return finish();
    for (const { phase, rs } of phases) {
      const skippedBy = run.skippedPhases.get(phase);
      if (skippedBy) {
        if (rs) run.trace.push({ phase, rulesetId: rs.id, rulesetName: rs.name, depth: 0, enabled: true, outcome: 'skipped', skippedBy, note: `phase ${phase} skipped` });
      } else if (rs) {
        run.phaseSkippedBy = undefined;
        const validationOnly = validation && phase === 'http_request_firewall_managed';
        if (runRuleset(run, rs, { depth: 0, validationOnly })) return finish();
      }
      if (phase === 'http_request_firewall_managed' && validation) {
        const wafSkip = run.skippedProducts.waf;
        if (wafSkip) {
          run.trace.push({ phase: 'previous_waf', depth: 0, enabled: true, outcome: 'skipped', skippedBy: wafSkip, note: 'product waf skipped' });
          continue;
        }
        if (!options.previousWaf) {
          if (run.traceIdle) run.trace.push({ phase: 'previous_waf', depth: 0, enabled: true, outcome: 'not-matched', note: 'no previous-WAF stand-in given: it lets the request through' });
          continue;
        }
        previous = options.previousWaf(fields, ctx);
        const ref: RuleRef = { phase: 'previous_waf', ruleId: previous?.ruleId, ref: previous?.ruleId, description: previous?.description };
        const scored = previous?.score !== undefined ? { score: previous.score, ...(previous.threshold !== undefined ? { threshold: previous.threshold } : {}) } : {};
        if (!previous) {
          if (run.traceIdle) run.trace.push(Object.assign({}, ref, { depth: 0, enabled: true, matched: false, outcome: 'not-matched' as const }));
        } else if (challengeSolved(run, ref, previous.action)) {
          run.trace.push(Object.assign({}, ref, scored, { depth: 0, enabled: true, matched: true, action: previous.action, outcome: 'logged' as const, note: SOLVED }));
          run.logs.push(logEntry(ref, previous.action, 'logged'));
        } else if (isTerminating(previous.action)) {
          run.decision = { action: previous.action, phase: 'previous_waf', ...(previous.ruleId ? { ruleId: previous.ruleId, ref: previous.ruleId } : {}), ...(previous.description ? { description: previous.description } : {}), ...scored };
          run.trace.push(Object.assign({}, ref, scored, { depth: 0, enabled: true, matched: true, action: previous.action, outcome: 'terminated' as const }));
          return finish();
        } else {
          run.trace.push(Object.assign({}, ref, scored, { depth: 0, enabled: true, matched: true, action: previous.action, outcome: 'logged' as const }));
          run.logs.push(logEntry(ref, previous.action, 'logged'));
        }
      }
    }
    return finish();
  }

  return { problems, evaluate, ...(options.previousWaf ? {} : { fieldsRead: c.fieldsRead }) };
}

/** The managed ruleset an execute rule deploys, and the rules of the version it runs. */
export function executedManagedRuleset(rule: Rule, catalog: ManagedCatalog): { ruleset: ManagedRuleset; rules: readonly Rule[] } | undefined {
  if (rule.action !== 'execute') return undefined;
  const p = rule.action_parameters as ExecuteParameters | undefined;
  const ruleset = p && catalog.rulesets.find((r) => r.id === p.id);
  const version = ruleset && rulesetVersion(ruleset, p.version);
  return ruleset && version ? { ruleset, rules: version.rules } : undefined;
}

/** Every rule of the managed ruleset an execute rule deploys, with its effective settings. */
export function effectiveRules(rule: Rule, catalog: ManagedCatalog): { rule: Rule; effective: EffectiveRule }[] {
  const m = executedManagedRuleset(rule, catalog);
  if (!m) return [];
  const overrides = (rule.action_parameters as ExecuteParameters).overrides;
  return m.rules.map((r) => ({ rule: r, effective: resolveOverrides(r, overrides, r.id !== undefined && r.id === m.ruleset.anomalyRuleId) }));
}

/**
 * The values of one category or rule override that the engine can use: a boolean `enabled`,
 * a string `action` and `sensitivity_level`, and (rules only) a whole `score_threshold` of at
 * least 1. Another value is reported and dropped: `"enabled": "false"` or a `null` threshold
 * would otherwise switch a rule on, or have the anomaly rule act at every score.
 */
function overrideValues(item: Record<string, unknown>, where: string, rule: boolean, warn: (m: string) => void): { enabled?: boolean; action?: string; sensitivity_level?: string; score_threshold?: number } {
  const out: { enabled?: boolean; action?: string; sensitivity_level?: string; score_threshold?: number } = {};
  if (item.enabled !== undefined) typeof item.enabled === 'boolean' ? (out.enabled = item.enabled) : warn(`${where}.enabled must be true or false, not ${JSON.stringify(item.enabled)}; ignored`);
  if (item.action !== undefined) typeof item.action === 'string' ? (out.action = item.action) : warn(`${where}.action must be a string, not ${JSON.stringify(item.action)}; ignored`);
  if (item.sensitivity_level !== undefined) typeof item.sensitivity_level === 'string' ? (out.sensitivity_level = item.sensitivity_level) : warn(`${where}.sensitivity_level must be a string; ignored`);
  if (rule && item.score_threshold !== undefined) {
    const t = item.score_threshold;
    if (typeof t === 'number' && Number.isInteger(t) && t >= 1) out.score_threshold = t;
    else warn(`${where}.score_threshold must be a whole number of at least 1, not ${JSON.stringify(t)}; ignored`);
  }
  return out;
}
