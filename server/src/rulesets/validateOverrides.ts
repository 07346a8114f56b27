/**
 * The `execute` rule in a ruleset: the ruleset it deploys (known, entitled by the plan, of
 * the phase, deployed once, at a version that exists) and its overrides (actions,
 * categories and rules of that ruleset, the anomaly threshold where it has a meaning, the
 * paranoia levels), each problem at its JSON node. The actions an override may set, and
 * why not `score`, are in rulesets/actions.ts.
 */
import type { JSONPath, Node } from 'jsonc-parser';
import type { Severity } from '../language/diagnostics';
import { planAllows } from '../language/scheme/index';
import { OVERRIDE_ACTIONS } from './actions';
import { findManagedRuleset, PARANOIA_TAG, paranoiaLevelOf, rulesetVersion, type ManagedCatalog, type ManagedRule, type ManagedRuleset, type ManagedRulesetVersion } from './catalog';
import { propsOf, type Prop } from './jsonTree';
import { cap, closest, didYouMean, DIGITS, list, RulesetChecker, type ExecuteTargetCode, type MisplacedData, type Scope } from './rulesetChecker';

const SENSITIVITY = ['default', 'medium', 'low', 'eoff'];

interface ExecuteSeen {
  readonly rule: number;
  readonly id: string;
  readonly idNode: Node;
}

/** Whether a ruleset of `kind` deploys each managed ruleset at most once: a zone's entry point (or a file of no stated kind). */
export function deploysOnce(kind: string | undefined): boolean {
  return kind === undefined || kind === 'zone';
}

/** The words for a second enabled execute of managed ruleset `name`, first run by rule `first` (0-based; `of` names where that rule is). */
export function repeatedExecuteMessage(name: string, first: number, of = ''): string {
  return `${name} is already executed by rule ${first + 1}${of}; a zone can deploy each managed ruleset once`;
}

/**
 * The words for an execute rule's `action_parameters.version` that the ruleset it runs
 * (`name`: a managed ruleset's name, or how a custom ruleset is named) does not have; the
 * rules service says it so of a custom ruleset's version too (routes/rulesets.ts).
 */
export function missingVersionMessage(name: string, version: string): string {
  return `${name} has no version ${version}`;
}

/**
 * The same check on rule values (the rules service checks rules one at a time, so it runs
 * this on the rules a write would store): the later rule of the first repeat, the rule it
 * repeats and the ruleset's name. `written`: the rules the write brings; a repeat between
 * two it does not bring was stored before and is left alone.
 */
export function repeatedExecute(
  catalog: ManagedCatalog,
  kind: string | undefined,
  rules: readonly { readonly action?: unknown; readonly action_parameters?: unknown; readonly enabled?: unknown }[],
  written: (i: number) => boolean = () => true,
): { readonly rule: number; readonly first: number; readonly name: string } | undefined {
  if (!deploysOnce(kind)) return undefined;
  const firsts = new Map<string, number>();
  for (let i = 0; i < rules.length; i++) {
    const r = rules[i]!;
    const id = (r.action_parameters as { id?: unknown } | undefined)?.id;
    if (r.action !== 'execute' || r.enabled === false || typeof id !== 'string') continue;
    const rs = findManagedRuleset(catalog, id);
    if (!rs) continue;
    const first = firsts.get(rs.id);
    if (first === undefined) firsts.set(rs.id, i);
    else if (written(i) || written(first)) return { rule: i, first, name: rs.name };
  }
  return undefined;
}

export abstract class OverridesChecker extends RulesetChecker {
  /** An execute target refused by `executeTargets` (see EXECUTE_TARGET_CODES). */
  private executeTarget(node: Node, rule: number, id: string, managed: boolean): void {
    const { custom, self } = this.options.executeTargets!;
    const phase = custom.get(id);
    const refuse = (code: ExecuteTargetCode, message: string) => this.at(node, 'error', code, message, { rule, data: { rulesetId: id } });
    if (id === self) refuse('execute-self', 'a ruleset cannot execute itself');
    else if (!managed && phase === undefined) {
      const known = this.options.catalog.rulesets.map((m) => `${m.name} (${m.id})`).join(', ');
      refuse('execute-target-unknown', `no managed ruleset nor custom ruleset of the account has this id; managed rulesets: ${known}`);
    } else if (phase !== undefined && this.phase && phase !== this.phase) refuse('execute-target-phase', `that custom ruleset is in phase ${phase}, not ${this.phase}`);
  }

  private readonly executes: ExecuteSeen[] = [];

  protected execute(node: Node, rule: number, ruleNode: Node): void {
    const scope: Scope = { what: 'the execute action_parameters', invalid: 'invalid-action-parameters', rule };
    const props = propsOf(node);
    const paramsPath = [...this.rulesPath, rule, 'action_parameters'];
    const idProp = props.get('id');
    let rs: ManagedRuleset | undefined;
    let custom = false;
    if (!idProp) this.missing(node, 'execute needs the "id" of the ruleset to run', { rule });
    else if (this.value(idProp.value, 'hex32', 'id', scope)) {
      const id = idProp.value!.value as string;
      rs = findManagedRuleset(this.options.catalog, id);
      custom = !rs && (this.options.customRulesetIds?.includes(id) || this.options.executeTargets?.custom.has(id) || false);
      if (this.options.executeTargets) this.executeTarget(idProp.value!, rule, id, !!rs);
      else if (!rs && !custom) {
        // Managed phases deploy managed rulesets: an unknown id there is a mistake. Elsewhere
        // it may be a custom ruleset of the account that the caller does not know about.
        const strict = this.phase === 'http_request_firewall_managed' || this.phase === 'http_response_firewall_managed';
        this.knownRuleset(idProp.value!, rule, strict ? 'error' : 'warning');
      }
      if (rs) {
        // The entry's entitlement. A warning, like the core's other plan findings: the
        // editor's plan is a setting; the rules service, which knows the zone's plan, refuses it.
        const needs = rs.plan;
        const plan = this.options.plan;
        if (needs && plan && !planAllows(needs, plan)) {
          this.at(idProp.value!, 'warning', 'plan-required', `${rs.name} (${rs.id}) requires the ${cap(needs)} plan or above; this zone is on the ${cap(plan)} plan`, {
            rule,
            hint: `The API refuses the whole write of a ruleset that deploys it on the ${cap(plan)} plan: upgrade the zone to ${cap(needs)}, or remove the rule.`,
            data: { plan: needs, rulesetId: rs.id },
          });
        }
        if (this.phase && rs.phase !== this.phase) {
          this.at(idProp.value!, 'error', 'execute-phase-mismatch', `${rs.name} runs in phase ${rs.phase}; it cannot be executed from a ruleset of phase ${this.phase}`, {
            rule,
            hint: `Deploy it from the ${rs.phase} entry point.`,
          });
        }
        const first = this.executes.find((e) => e.id === id);
        if (deploysOnce(this.kind) && first && propsOf(ruleNode).get('enabled')?.value?.value !== false) {
          this.at(idProp.value!, 'error', 'duplicate-execute', repeatedExecuteMessage(rs.name, first.rule), {
            rule,
            hint: 'Merge the two rules: one execute rule, with an expression covering both cases and one set of overrides.',
            data: { first: first.rule },
          });
        }
        if (!first && propsOf(ruleNode).get('enabled')?.value?.value !== false) this.executes.push({ rule, id, idNode: idProp.value! });
      }
    }

    let version: ManagedRulesetVersion | undefined = rs ? rulesetVersion(rs) : undefined;
    const versionProp = props.get('version');
    if (versionProp?.value && this.value(versionProp.value, 'string', 'version', scope)) {
      const v = versionProp.value.value as string;
      if (v !== 'latest' && !DIGITS.test(v)) {
        this.at(versionProp.value, 'error', 'invalid-action-parameters', `'${v}' is not a valid value for version: use "latest" or a version number`, { rule, schema: true });
      } else if (rs) {
        version = rulesetVersion(rs, v);
        if (!version) {
          this.at(versionProp.value, 'error', 'unknown-ruleset-version', missingVersionMessage(rs.name, v), {
            rule,
            hint: `Versions: ${list(rs.versions.map((x) => x.version))}, or "latest".`,
            data: { suggestions: ['latest', ...rs.versions.map((x) => x.version)] },
          });
        }
      }
    }
    const matched = props.get('matched_data');
    if (matched) {
      this.value(matched.value, { name: 'matched_data', object: { public_key: 'string1' }, required: ['public_key'] }, 'matched_data', scope);
      if (this.options.plan && this.options.plan !== 'enterprise') this.at(matched.key, 'warning', 'plan-required', 'payload logging (matched_data) needs an Enterprise plan', { rule });
    }
    const misplacedHere = props.get('score_threshold');
    if (misplacedHere) {
      this.misplaced(misplacedHere.node, 'error', rs, rule, { paramsPath, from: paramsPath, fromKind: 'action_parameters', properties: ['score_threshold'] }, 'directly in action_parameters');
    }
    const overrides = props.get('overrides');
    if (overrides?.value) this.overrides(overrides.value, rs, version, rule, paramsPath, custom);
    if (rs && version && idProp?.value && propsOf(ruleNode).get('enabled')?.value?.value !== false) this.paranoia(idProp.value, overrides?.value, rs, version, rule, paramsPath);
  }

  /** A misplaced score_threshold: where it has no meaning; `data` says where it belongs. */
  protected misplaced(node: Node, severity: Severity, rs: ManagedRuleset | undefined, rule: number, where: Omit<MisplacedData, 'anomalyRuleId'>, place: string): void {
    const anomaly = rs?.anomalyRuleId ? rulesetVersion(rs)?.rules.find((r) => r.id === rs.anomalyRuleId) : undefined;
    if (!rs || !rs.anomalyRuleId) {
      this.at(node, severity, 'misplaced-score-threshold', `score_threshold has no effect ${place}${rs ? `: ${rs.name} has no anomaly score` : ''}`, {
        rule,
        hint: 'score_threshold belongs in a rule override of the anomaly-score rule of a scored managed ruleset (the OWASP-based core ruleset).',
      });
      return;
    }
    const name = anomaly ? `"${anomaly.description}"` : `\`${rs.anomalyRuleId}\``;
    const data: MisplacedData = { anomalyRuleId: rs.anomalyRuleId, ...where };
    this.at(node, severity, 'misplaced-score-threshold', `score_threshold has no effect ${place}: only the anomaly-score rule ${name} has a threshold`, {
      rule,
      hint: `Set it in a rule override: \`"rules": [{ "id": "${rs.anomalyRuleId}", "score_threshold": 40, "action": "block" }]\` (thresholds: 25 High, 40 Medium, 60 Low).`,
      data: data as unknown as Record<string, unknown>,
    });
  }

  private overrides(node: Node, rs: ManagedRuleset | undefined, version: ManagedRulesetVersion | undefined, rule: number, paramsPath: JSONPath, custom: boolean): void {
    const scope: Scope = { what: 'overrides', invalid: 'invalid-action-parameters', rule };
    if (node.type !== 'object') {
      this.value(node, 'object', 'overrides', scope);
      return;
    }
    const path = [...paramsPath, 'overrides'];
    const props = propsOf(node);
    if (props.size === 0) this.at(node, 'error', 'invalid-action-parameters', 'overrides must have at least one property', { rule, schema: true, hint: 'Remove the empty "overrides", or add action, enabled, categories or rules.' });
    this.unknownKeys(node, ['action', 'enabled', 'sensitivity_level', 'categories', 'rules'], scope, ['score_threshold']);
    if (custom) {
      this.at(node.parent?.children?.[0] ?? node, 'warning', 'invalid-action-parameters', 'overrides apply to managed rulesets; a custom ruleset is changed by editing its rules', { rule });
    }
    const scored = rs?.anomalyRuleId !== undefined;
    const action = props.get('action');
    if (action?.value) this.overrideAction(action.value, rule);
    if (props.has('enabled')) this.value(props.get('enabled')!.value, 'boolean', 'enabled', scope);
    if (props.has('sensitivity_level')) this.sensitivity(props.get('sensitivity_level')!, rs, rule, scope);
    const threshold = props.get('score_threshold');
    if (threshold) {
      this.misplaced(threshold.node, 'error', rs, rule, { paramsPath, from: path, fromKind: 'overrides', properties: props.has('action') ? ['score_threshold', 'action'] : ['score_threshold'] }, 'on the ruleset-wide overrides');
    }
    if (scored && action?.value?.type === 'string') {
      this.misplacedAction(action.node, rs!, rule, { paramsPath, from: path, fromKind: 'overrides', properties: threshold ? ['score_threshold', 'action'] : ['action'] }, 'every rule of');
    }

    const tags = new Set<string>();
    for (const r of version?.rules ?? []) for (const c of r.categories) tags.add(c);
    // A ruleset with paranoia levels accepts every level's tag, even one no rule has (yet).
    if ([...tags].some((t) => PARANOIA_TAG.test(t))) for (const l of [1, 2, 3, 4]) tags.add(`paranoia-level-${l}`);
    const categories = props.get('categories')?.value;
    if (categories) {
      if (this.value(categories, { array: 'object', min: 1 }, 'categories', { ...scope, what: 'categories' })) {
        const seen = new Map<string, number>();
        (categories.children ?? []).forEach((c, i) => this.categoryOverride(c, i, rs, version, tags, seen, rule, paramsPath));
      }
    }
    const rules = props.get('rules')?.value;
    if (rules) {
      if (this.value(rules, { array: 'object', min: 1 }, 'rules', { ...scope, what: 'rules' })) {
        const seen = new Map<string, number>();
        (rules.children ?? []).forEach((r, i) => this.ruleOverride(r, i, rs, version, seen, rule, paramsPath));
      }
    }
  }

  private overrideAction(node: Node, rule: number): void {
    if (node.type !== 'string') {
      this.value(node, 'string', 'action', { what: 'an override', invalid: 'invalid-action-parameters', rule });
      return;
    }
    if ((OVERRIDE_ACTIONS as readonly string[]).includes(node.value)) return;
    const near = closest(node.value, OVERRIDE_ACTIONS);
    const why =
      node.value === 'score'
        ? 'An override cannot set score: it has no increment. A scoring rule keeps its score action when it is not overridden.'
        : node.value === 'allow' || node.value === 'bypass'
          ? `There is no ${node.value} action: to exempt requests, put a skip rule before the execute rule.`
          : `${didYouMean(near)}`;
    this.at(node, 'error', 'invalid-override-action', `'${node.value}' is not a valid action for an override`, {
      rule,
      hint: `${why}${why && !why.endsWith(' ') ? ' ' : ''}Override actions: ${list(OVERRIDE_ACTIONS)}.`,
      data: near.length ? { suggestions: near } : undefined,
    });
  }

  private misplacedAction(node: Node, rs: ManagedRuleset, rule: number, where: Omit<MisplacedData, 'anomalyRuleId'>, what: string): void {
    const data: MisplacedData = { anomalyRuleId: rs.anomalyRuleId!, ...where };
    this.at(node, 'warning', 'misplaced-override-action', `this action replaces the score action of ${what} ${rs.name}: matching rules act on their own instead of adding to the anomaly score`, {
      rule,
      hint: `To choose what happens when the anomaly score reaches the threshold, set the action on the anomaly-score rule: \`"rules": [{ "id": "${rs.anomalyRuleId}", "action": "log" }]\`.`,
      data: data as unknown as Record<string, unknown>,
    });
  }

  private sensitivity(p: Prop, rs: ManagedRuleset | undefined, rule: number, scope: Scope): void {
    if (!this.value(p.value, { enum: SENSITIVITY }, 'sensitivity_level', scope)) return;
    if (rs && !['ddos_l7', 'ddos_l4'].includes(rs.phase)) {
      this.at(p.node, 'warning', 'invalid-action-parameters', `sensitivity_level only applies to DDoS rulesets; it has no effect on ${rs.name}`, { rule });
    }
  }

  private categoryOverride(
    node: Node,
    index: number,
    rs: ManagedRuleset | undefined,
    version: ManagedRulesetVersion | undefined,
    tags: ReadonlySet<string>,
    seen: Map<string, number>,
    rule: number,
    paramsPath: JSONPath,
  ): void {
    const scope: Scope = { what: 'a category override', invalid: 'invalid-action-parameters', rule };
    if (node.type !== 'object') return;
    const path = [...paramsPath, 'overrides', 'categories', index];
    this.unknownKeys(node, ['category', 'action', 'enabled', 'sensitivity_level'], scope, ['score_threshold']);
    const props = propsOf(node);
    const cat = props.get('category');
    if (!cat) this.missing(node, 'a category override needs "category" (a tag of the managed ruleset\'s rules)', { rule });
    else if (this.value(cat.value, 'string1', 'category', scope) && version) {
      const tag = cat.value!.value as string;
      if (!tags.has(tag)) {
        const near = closest(tag, tags);
        this.at(cat.value!, 'error', 'unknown-category', `'${tag}' is not a category of ${rs!.name} (version ${version.version})`, {
          rule,
          hint: `${didYouMean(near)}The category must be a tag of some rule of the ruleset; completion lists them.`,
          data: near.length ? { suggestions: near } : undefined,
        });
      }
      const before = seen.get(tag);
      if (before !== undefined) this.at(cat.value!, 'warning', 'duplicate-override', `category '${tag}' is already overridden (item ${before + 1}); the later one wins for the properties both set`, { rule });
      else seen.set(tag, index);
    }
    const others = ['action', 'enabled', 'sensitivity_level'].filter((k) => props.has(k));
    if (cat && others.length === 0 && !props.has('score_threshold')) {
      this.at(node, 'error', 'invalid-action-parameters', 'a category override needs at least one of "action", "enabled" or "sensitivity_level"', { rule, schema: true });
    }
    const action = props.get('action');
    if (action?.value) this.overrideAction(action.value, rule);
    if (props.has('enabled')) this.value(props.get('enabled')!.value, 'boolean', 'enabled', scope);
    if (props.has('sensitivity_level')) this.sensitivity(props.get('sensitivity_level')!, rs, rule, scope);
    const threshold = props.get('score_threshold');
    if (threshold) {
      this.misplaced(threshold.node, 'error', rs, rule, { paramsPath, from: path, fromKind: 'category', properties: action ? ['score_threshold', 'action'] : ['score_threshold'] }, 'on a category');
    }
    if (rs?.anomalyRuleId && action?.value?.type === 'string') {
      this.misplacedAction(action.node, rs, rule, { paramsPath, from: path, fromKind: 'category', properties: threshold ? ['score_threshold', 'action'] : ['action'] }, `the rules tagged '${cat?.value?.value}' in`);
    }
  }

  private ruleOverride(
    node: Node,
    index: number,
    rs: ManagedRuleset | undefined,
    version: ManagedRulesetVersion | undefined,
    seen: Map<string, number>,
    rule: number,
    paramsPath: JSONPath,
  ): void {
    const scope: Scope = { what: 'a rule override', invalid: 'invalid-action-parameters', rule };
    if (node.type !== 'object') return;
    const path = [...paramsPath, 'overrides', 'rules', index];
    this.unknownKeys(node, ['id', 'action', 'enabled', 'score_threshold', 'sensitivity_level'], scope);
    const props = propsOf(node);
    const id = props.get('id');
    let target: ManagedRule | undefined;
    if (!id) this.missing(node, 'a rule override needs the "id" of the managed rule', { rule });
    else if (this.value(id.value, 'hex32', 'id', scope) && rs) {
      target = this.knownRule(id.value!, rs, version, rule);
      const before = seen.get(id.value!.value);
      if (before !== undefined) this.at(id.value!, 'warning', 'duplicate-override', `this rule is already overridden (item ${before + 1}); the later one wins for the properties both set`, { rule });
      else seen.set(id.value!.value, index);
    }
    const others = ['action', 'enabled', 'score_threshold', 'sensitivity_level'].filter((k) => props.has(k));
    if (id && others.length === 0) this.at(node, 'error', 'invalid-action-parameters', 'a rule override needs at least one of "action", "enabled", "score_threshold" or "sensitivity_level"', { rule, schema: true });
    const action = props.get('action');
    if (action?.value) this.overrideAction(action.value, rule);
    if (props.has('enabled')) this.value(props.get('enabled')!.value, 'boolean', 'enabled', scope);
    if (props.has('sensitivity_level')) this.sensitivity(props.get('sensitivity_level')!, rs, rule, scope);
    const threshold = props.get('score_threshold');
    if (threshold && this.value(threshold.value, 'integer', 'score_threshold', scope)) {
      if ((threshold.value!.value as number) < 1) this.at(threshold.value!, 'error', 'invalid-action-parameters', 'score_threshold must be a positive integer', { rule, schema: true });
      const isAnomaly = rs?.anomalyRuleId !== undefined && id?.value?.value === rs.anomalyRuleId;
      if (rs && !isAnomaly && (target || !rs.anomalyRuleId)) {
        this.misplaced(threshold.node, 'warning', rs, rule, { paramsPath, from: path, fromKind: 'rule-override', properties: ['score_threshold'] }, 'on this rule');
      }
    }
  }

  /** OWASP deployed with no paranoia-level override runs PL1–PL4. */
  private paranoia(idNode: Node, overrides: Node | undefined, rs: ManagedRuleset, version: ManagedRulesetVersion, rule: number, paramsPath: JSONPath): void {
    // The levels are those of CRS, 1 to 4, whichever of them the version's rules use.
    if (!version.rules.some((r) => paranoiaLevelOf(r) !== undefined)) return;
    const o = propsOf(overrides);
    if (o.get('enabled')?.value?.value === false) return;
    const categories = o.get('categories')?.value;
    for (const c of categories?.type === 'array' ? (categories.children ?? []) : []) {
      const tag = propsOf(c).get('category')?.value?.value;
      if (typeof tag === 'string' && PARANOIA_TAG.test(tag)) return;
    }
    this.at(idNode, 'warning', 'owasp-all-paranoia-levels', `${rs.name} is deployed with no paranoia-level override: all four paranoia levels (PL1–PL4) run`, {
      rule,
      hint: 'Higher paranoia levels catch more and block far more legitimate traffic. Start at PL1 (what the dashboard deploys): disable the categories `paranoia-level-2`, `paranoia-level-3`, `paranoia-level-4`.',
      data: { rulesetId: rs.id, paramsPath, level: 1 },
    });
  }
}
