/**
 * Paranoia-level / threshold preview for a scored managed ruleset (the OWASP-based one):
 * for a set of requests, what each paranoia level (PL1–PL4) and each anomaly threshold
 * would do, and why. Also the override-editing helpers the editor uses to apply a choice.
 *
 * How it is computed: PL N is the deployment's own overrides with the categories
 * `paranoia-level-(N+1..4)` disabled (`setParanoiaLevel`); everything else stays as
 * overridden. For each level the zone (or just the execute rule) is evaluated once per
 * request by the real engine with the anomaly rule's threshold lifted out of reach, so the
 * trace has each request's full score and what else would decide. A (level, threshold)
 * cell then counts a request as acted on when the anomaly rule would fire at that
 * threshold (its expression matched, it is enabled, score >= threshold — whatever its
 * action, `log` included), or when another rule takes a terminating action anyway. The
 * rules that "decide" a cell are the score rules that contributed to its firing anomaly
 * verdicts, or the other rules that acted, counted per request; the most frequent first.
 */
import type { EvalContext, FieldValues } from '../language/evaluate';
import type { Plan } from '../language/scheme/types';
import {
  compileZone,
  effectiveRules,
  executedManagedRuleset,
  resolveOverrides,
  type EngineProblem,
  type Evaluation,
  type ZoneConfig,
} from '../rulesets/engine';
import type { CategoryOverride, ExecuteParameters, Overrides, Rule, RuleOverride, Ruleset } from '../rulesets/model';
import { OWASP_ANOMALY_RULE_ID } from '../rulesets/managedIds';
import type { ManagedCatalog, ManagedRuleset } from '../rulesets/catalog';

export type ParanoiaLevel = 1 | 2 | 3 | 4;
export const PARANOIA_LEVELS: readonly ParanoiaLevel[] = [1, 2, 3, 4];
/**
 * How the preview's scores compare with ModSecurity's, for the CLI and the webview to say
 * wherever they show scores: a rule scores once, as the hosted ruleset's boolean rules do.
 */
export const SCORE_COUNTING_NOTE = 'Scores add each matching rule once, as the hosted OWASP ruleset does; ModSecurity adds a rule once per matched variable, so its score for the same request can be higher.';
/** The named thresholds: High 25, Medium 40, Low 60. */
export const PREVIEW_THRESHOLDS: readonly number[] = [25, 40, 60];
const TOP_DECIDERS = 5;

export type PreviewTarget = ZoneConfig | { readonly execute: Rule; readonly catalog: ManagedCatalog; readonly plan?: Plan };

export interface PreviewRule {
  readonly id?: string;
  readonly ref?: string;
  readonly description?: string;
  readonly categories: readonly string[];
  readonly level?: ParanoiaLevel;
  readonly enabled: boolean;
  readonly action?: string;
  /** For score rules. */
  readonly increment?: number;
  readonly overriddenBy: readonly string[];
}

export interface Decider {
  readonly ruleId?: string;
  readonly ref?: string;
  readonly description?: string;
  /** Requests of the cell this rule contributed to (or decided). */
  readonly count: number;
}

export interface PreviewCell {
  readonly threshold: number;
  /** Requests acted on (anomaly rule fires, or another rule acts). */
  readonly actedOn: number;
  /** Of those, by the anomaly rule. */
  readonly byAnomaly: number;
  readonly deciders: readonly Decider[];
}

export interface LevelPreview {
  readonly level: ParanoiaLevel;
  /** The deployed ruleset's rules with their effective settings at this level. */
  readonly rules: readonly PreviewRule[];
  readonly enabledRules: number;
  /** One per threshold, in `thresholds` order. */
  readonly cells: readonly PreviewCell[];
}

export interface RequestScores {
  readonly index: number;
  /** Anomaly score at PL1..PL4. */
  readonly scores: readonly number[];
}

export interface ParanoiaPreview {
  readonly rulesetId?: string;
  readonly rulesetName?: string;
  readonly anomalyRuleId?: string;
  /** The deployment as it is. */
  readonly currentLevel: 0 | ParanoiaLevel;
  readonly currentThreshold: number;
  /** The anomaly rule's effective action (what "acted on" means). */
  readonly anomalyAction?: string;
  readonly thresholds: readonly number[];
  readonly levels: readonly LevelPreview[];
  readonly requests: readonly RequestScores[];
  readonly total: number;
  readonly problems: readonly EngineProblem[];
  /** Set when there is nothing to preview (no execute rule deploying a scored ruleset). */
  readonly error?: string;
}

// --- Override editing ------------------------------------------------------------------

function paranoiaTag(level: number): string {
  return `paranoia-level-${level}`;
}

function executeParams(rule: Rule): ExecuteParameters {
  return (rule.action_parameters ?? {}) as ExecuteParameters;
}

function withOverrides(rule: Rule, overrides: Overrides): Rule {
  const p = executeParams(rule);
  const cleaned: Overrides = Object.fromEntries(
    Object.entries(overrides).filter(([, v]) => v !== undefined && !(Array.isArray(v) && v.length === 0)),
  );
  const { overrides: _old, ...rest } = p;
  const params = Object.keys(cleaned).length > 0 ? { ...rest, overrides: cleaned } : rest;
  return { ...rule, action_parameters: params };
}

/**
 * The execute rule with overrides edited to run paranoia level `level`: a category
 * override `{category: "paranoia-level-N", enabled: false}` for each N above `level`
 * (an existing override of that category is edited in place, keeping its other
 * properties), and `enabled: false` removed from the levels at or below it (an override
 * left with nothing but its category is dropped). Everything else is kept as it is,
 * except that a level override which a later category override could re-enable (the last
 * matching category wins) is moved after it. Pure: returns a new rule.
 */
export function setParanoiaLevel(rule: Rule, level: ParanoiaLevel): Rule {
  const overrides = executeParams(rule).overrides ?? {};
  let cats: CategoryOverride[] = [...(overrides.categories ?? [])];
  for (const n of PARANOIA_LEVELS) {
    const tag = paranoiaTag(n);
    if (n > level) {
      if (!cats.some((c) => c.category === tag)) cats.push({ category: tag, enabled: false });
      else cats = cats.map((c) => (c.category === tag && c.enabled !== false ? { ...c, enabled: false } : c));
      // A later override that sets `enabled` on some category could win for rules that carry both tags.
      const last = cats.map((c) => c.category).lastIndexOf(tag);
      if (cats.slice(last + 1).some((c) => c.enabled === true && c.category !== tag && !/^paranoia-level-[1-4]$/.test(c.category))) {
        const moved = cats.filter((c) => c.category === tag);
        cats = [...cats.filter((c) => c.category !== tag), ...moved];
      }
    } else {
      cats = cats.flatMap((c) => {
        if (c.category !== tag || c.enabled !== false) return [c];
        const { enabled: _e, ...rest } = c;
        return Object.keys(rest).length > 1 ? [rest] : [];
      });
    }
  }
  return withOverrides(rule, { ...overrides, categories: cats });
}

/**
 * The execute rule with the anomaly rule's override set to `threshold` (and `action`
 * when given): the existing rule override of the anomaly rule is edited, or one is
 * appended. The anomaly rule id comes from `options.anomalyRuleId`, else from the
 * catalog's ruleset the rule executes, else the OWASP-based ruleset's 949110. Pure.
 */
export function setScoreThreshold(
  rule: Rule,
  threshold: number,
  action?: string,
  options: { readonly catalog?: ManagedCatalog; readonly anomalyRuleId?: string } = {},
): Rule {
  const anomalyId = options.anomalyRuleId ?? (options.catalog && executedManagedRuleset(rule, options.catalog)?.ruleset.anomalyRuleId) ?? OWASP_ANOMALY_RULE_ID;
  const overrides = executeParams(rule).overrides ?? {};
  const rules: RuleOverride[] = [...(overrides.rules ?? [])];
  const at = rules.map((r) => r.id).lastIndexOf(anomalyId);
  const edit = (r: RuleOverride): RuleOverride => ({ ...r, score_threshold: threshold, ...(action !== undefined ? { action } : {}) });
  if (at >= 0) rules[at] = edit(rules[at]);
  else rules.push(edit({ id: anomalyId }));
  return withOverrides(rule, { ...overrides, rules });
}

/**
 * The paranoia level an execute rule runs: the highest N whose `paranoia-level-N` rules
 * are not disabled by a category or ruleset-wide override (0 when none runs). With no
 * overrides, 4: every level runs. Given the catalog, levels the deployed ruleset has no
 * rules for are passed over (a ruleset without PL4 rules at "PL4" runs as PL3).
 */
export function currentParanoiaLevel(rule: Rule, catalog?: ManagedCatalog): 0 | ParanoiaLevel {
  const overrides = executeParams(rule).overrides;
  const m = catalog && executedManagedRuleset(rule, catalog);
  const present = m ? new Set(m.rules.map((r) => levelOf(r.categories ?? [])).filter((l) => l !== undefined)) : undefined;
  const usable = present && present.size > 0 ? present : undefined;
  for (const n of [4, 3, 2, 1] as const) {
    if (usable && !usable.has(n)) continue;
    if (resolveOverrides({ categories: [paranoiaTag(n)] }, overrides).enabled) return n;
  }
  return 0;
}

/** The anomaly rule's effective threshold and action under the execute rule's overrides. */
export function currentThreshold(rule: Rule, catalog: ManagedCatalog): { threshold: number; action?: string; ruleset?: ManagedRuleset } {
  const m = executedManagedRuleset(rule, catalog);
  const anomaly = m?.rules.find((r) => r.id !== undefined && r.id === m.ruleset.anomalyRuleId);
  if (!m || !anomaly) return { threshold: 40, ruleset: m?.ruleset };
  const eff = resolveOverrides(anomaly, executeParams(rule).overrides, true);
  return { threshold: eff.scoreThreshold ?? 40, action: eff.action, ruleset: m.ruleset };
}

// --- The preview -----------------------------------------------------------------------

function isZone(t: PreviewTarget): t is ZoneConfig {
  return 'entryPoints' in t;
}

/** Finds the execute rule deploying a scored managed ruleset in the zone's managed entry point. */
function findScoredExecute(zone: ZoneConfig): { index: number; rule: Rule } | undefined {
  const rules = zone.entryPoints.http_request_firewall_managed?.rules ?? [];
  for (let i = 0; i < rules.length; i++) {
    const m = executedManagedRuleset(rules[i], zone.catalog);
    if (m?.ruleset.anomalyRuleId !== undefined) return { index: i, rule: rules[i] };
  }
  return undefined;
}

function zoneWith(target: PreviewTarget, replace: (r: Rule) => Rule): ZoneConfig {
  if (!isZone(target)) {
    return { entryPoints: { http_request_firewall_managed: { phase: 'http_request_firewall_managed', kind: 'zone', rules: [replace(target.execute)] } }, catalog: target.catalog, plan: target.plan };
  }
  const found = findScoredExecute(target)!;
  const ep = target.entryPoints.http_request_firewall_managed!;
  const rules = ep.rules!.map((r, i) => (i === found.index ? replace(r) : r));
  const managed: Ruleset = { ...ep, rules };
  return { ...target, entryPoints: { ...target.entryPoints, http_request_firewall_managed: managed } };
}

export function previewParanoia(target: PreviewTarget, requests: readonly FieldValues[], thresholds?: readonly number[], ctx?: EvalContext): ParanoiaPreview {
  const catalog = target.catalog;
  const execute = isZone(target) ? findScoredExecute(target)?.rule : target.execute;
  const m = execute && executedManagedRuleset(execute, catalog);
  const empty = { currentLevel: 0 as const, currentThreshold: 40, thresholds: [], levels: [], requests: [], total: requests.length, problems: [] };
  if (!execute || !m || m.ruleset.anomalyRuleId === undefined) {
    return { ...empty, error: isZone(target) ? 'no execute rule in the http_request_firewall_managed entry point deploys a scored managed ruleset' : 'the rule does not execute a scored managed ruleset (one with an anomaly-score rule)' };
  }
  const { ruleset } = m;
  const anomalyId = ruleset.anomalyRuleId!;
  const current = currentThreshold(execute, catalog);
  const ths = [...new Set([...(thresholds ?? PREVIEW_THRESHOLDS), current.threshold])].filter((t) => Number.isFinite(t)).sort((a, b) => a - b);
  const scores: number[][] = requests.map(() => []);
  const problems: EngineProblem[] = [];
  const levels: LevelPreview[] = [];

  for (const level of PARANOIA_LEVELS) {
    const variant = (r: Rule) => setScoreThreshold(setParanoiaLevel(r, level), Number.MAX_SAFE_INTEGER, undefined, { anomalyRuleId: anomalyId });
    const zone = zoneWith(target, variant);
    const compiled = compileZone(zone);
    if (level === 1) problems.push(...compiled.problems);
    const cells = ths.map(() => ({ actedOn: 0, byAnomaly: 0, deciders: new Map<string, Decider>() }));
    requests.forEach((fields, ri) => {
      const ev = compiled.evaluate(fields, ctx);
      const v = verdictOf(ev, ruleset.id, anomalyId);
      scores[ri][level - 1] = v.score;
      ths.forEach((t, ti) => {
        const cell = cells[ti];
        let deciders: readonly Omit<Decider, 'count'>[];
        if (v.anomalyCanFire && v.score >= t) {
          cell.byAnomaly++;
          deciders = v.contributors;
        } else if (v.other) deciders = [v.other];
        else return;
        cell.actedOn++;
        for (const d of deciders) {
          const key = d.ruleId ?? d.ref ?? d.description ?? '?';
          const prev = cell.deciders.get(key);
          cell.deciders.set(key, { ...d, count: (prev?.count ?? 0) + 1 });
        }
      });
    });
    const rules = previewRules(setParanoiaLevel(execute, level), catalog);
    levels.push({
      level,
      rules,
      enabledRules: rules.filter((r) => r.enabled).length,
      cells: cells.map((c, i) => ({
        threshold: ths[i],
        actedOn: c.actedOn,
        byAnomaly: c.byAnomaly,
        deciders: [...c.deciders.values()].sort((a, b) => b.count - a.count || (a.ref ?? '').localeCompare(b.ref ?? '')).slice(0, TOP_DECIDERS),
      })),
    });
  }

  return {
    rulesetId: ruleset.id,
    rulesetName: ruleset.name,
    anomalyRuleId: anomalyId,
    currentLevel: currentParanoiaLevel(execute, catalog),
    currentThreshold: current.threshold,
    anomalyAction: current.action,
    thresholds: ths,
    levels,
    requests: scores.map((s, index) => ({ index, scores: s })),
    total: requests.length,
    problems,
  };
}

interface Verdict {
  readonly score: number;
  /** The anomaly rule was reached, is enabled and its expression matched. */
  readonly anomalyCanFire: boolean;
  readonly contributors: readonly Omit<Decider, 'count'>[];
  /** Another rule that took a terminating action. */
  readonly other?: Omit<Decider, 'count'>;
}

function verdictOf(ev: Evaluation, rulesetId: string, anomalyId: string): Verdict {
  const anomaly = ev.trace.find((t) => t.rulesetId === rulesetId && t.ruleId === anomalyId);
  const contributors = ev.trace
    .filter((t) => t.rulesetId === rulesetId && t.outcome === 'scored' && (t.scoreAdded ?? 0) > 0)
    .map((t) => ({ ruleId: t.ruleId, ref: t.ref, description: t.description }));
  const d = ev.decision;
  const other = d.action !== 'allow-through' ? { ruleId: d.ruleId, ref: d.ref, description: d.description } : undefined;
  return {
    score: ev.scores[rulesetId] ?? 0,
    anomalyCanFire: anomaly !== undefined && anomaly.enabled && anomaly.matched === true,
    contributors,
    other,
  };
}

function previewRules(execute: Rule, catalog: ManagedCatalog): PreviewRule[] {
  return effectiveRules(execute, catalog).map(({ rule, effective }) => {
    const level = levelOf(rule.categories ?? []);
    const inc = rule.action === 'score' ? (rule.action_parameters as { increment?: unknown } | undefined)?.increment : undefined;
    return {
      id: rule.id,
      ref: rule.ref,
      description: rule.description,
      categories: rule.categories ?? [],
      ...(level ? { level } : {}),
      enabled: effective.enabled,
      action: effective.action,
      ...(typeof inc === 'number' ? { increment: inc } : {}),
      overriddenBy: effective.overriddenBy,
    };
  });
}

function levelOf(categories: readonly string[]): ParanoiaLevel | undefined {
  let level: number | undefined;
  for (const c of categories) {
    const m = /^paranoia-level-([1-4])$/.exec(c);
    if (m) level = Math.min(level ?? 4, Number(m[1]));
  }
  return level as ParanoiaLevel | undefined;
}
