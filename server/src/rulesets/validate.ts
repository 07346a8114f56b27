/**
 * Validation of ruleset JSON (a ruleset body, an API response with `result`, or a bare
 * array of rules): the shape the Rulesets API decodes (types, required and unknown
 * fields — the API decodes strictly), and what a schema cannot say — actions valid for
 * the phase, `action_parameters` per action, the managed ruleset an `execute` rule
 * deploys and its overrides, duplicates, lints. Every problem points at the exact JSON
 * node (offsets into the document), so the editor underlines the right characters.
 *
 * Where a problem is about a node:
 *   - a value of the wrong type or an invalid value: the value;
 *   - an unknown key: the key (as VS Code's JSON service does);
 *   - a missing key: the key of the object that lacks it, or the object's `{` when it
 *     has none (an item of an array), again as VS Code does;
 *   - a misplaced property (`score_threshold` on a category, `logging` without skip):
 *     the whole property, key and value.
 *
 * The actions each phase allows are rulesets/actions.ts; the execute rule and its overrides
 * are checked by rulesets/validateOverrides.ts, the shape checks they share are
 * rulesets/rulesetChecker.ts, and the JSON tree helpers are rulesets/jsonTree.ts.
 *
 * The phase: the file's own `phase`; else, when every `execute` rule deploys a catalog
 * ruleset of one phase, that phase (a file that deploys the OWASP-based ruleset is an
 * `http_request_firewall_managed` entry point whatever the editor's default phase);
 * else `options.phase`. The kind: the file's `kind`, else a zone entry point.
 *
 * Pure: no I/O, the managed catalog comes in as a value.
 */
import type { JSONPath, Node } from 'jsonc-parser';
import { utf8Length } from '../language/bytes';
import { MANAGED_LISTS } from '../language/check';
import { checkExpression, irListNames } from '../language/index';
import { PHASES, type Phase } from '../language/scheme/types';
import { actionsFor, NO_PARAMETERS } from './actions';
import { findManagedRuleset, rulesetVersion } from './catalog';
import { findExpressions } from './expressions';
import { jsonErrorText } from './jsonErrors';
import { parseRulesetTree, propsOf, rulesetNodeOf, rulesPathOf } from './jsonTree';
import { ACTIONS, isAccountKind, SKIP_PRODUCTS, type Action, type RulesetKind } from './model';
import { ACTION_PARAMETERS_REQUIRED, closest, didYouMean, HEX32, kindOf, list, MISSING_EXPRESSION, type RulesetProblem, type Scope, type Spec, type ValidateOptions } from './rulesetChecker';
import { characteristicsProblem, MITIGATION_SECONDS, parseCharacteristic, RATELIMIT_SECONDS, ratelimitPlanProblems } from './rateLimitParams';
import { OverridesChecker } from './validateOverrides';

export type { ExecuteTargetCode, MisplacedData, RulesetProblem, RulesetProblemCode, ValidateOptions } from './rulesetChecker';
export { ACTION_PARAMETERS_REQUIRED, EXECUTE_TARGET_CODES, MISSING_EXPRESSION } from './rulesetChecker';

const KINDS: readonly RulesetKind[] = ['managed', 'custom', 'root', 'zone'];

const RULESET_FIELDS = ['id', 'name', 'description', 'kind', 'version', 'last_updated', 'phase', 'rules', 'shareable_entitlement_name', 'source'];
const RULE_FIELDS = [
  'id',
  'version',
  'action',
  'action_parameters',
  'expression',
  'description',
  'enabled',
  'ref',
  'logging',
  'categories',
  'exposed_credential_check',
  'ratelimit',
  'last_updated',
  'score_threshold',
];

const RATELIMIT: Spec = {
  name: 'ratelimit',
  object: {
    characteristics: { array: 'string1', min: 1, unique: true },
    period: 'integer',
    requests_per_period: 'integer',
    score_per_period: 'integer',
    score_response_header_name: 'string1',
    mitigation_timeout: 'integer',
    // "" is the rule's own expression (the hosted API answers it for rules without one).
    counting_expression: 'string',
    requests_to_origin: 'boolean',
  },
  required: ['characteristics', 'period'],
};

/** The ruleset's fields checked by their spec alone, in the order they are reported. */
const RULESET_SPECS: readonly (readonly [string, Spec])[] = [
  ['id', 'hex32'],
  ['name', 'string1'],
  ['description', 'string'],
  ['kind', { enum: KINDS }],
  ['version', 'digits'],
  ['last_updated', 'string'],
  ['phase', { enum: PHASES }],
  ['shareable_entitlement_name', 'string'],
  ['source', 'string'],
];

/** A rule's fields checked by their spec alone (the expression and action have checks of their own). */
const RULE_SPECS: readonly (readonly [string, Spec])[] = [
  ['id', 'hex32'],
  ['version', 'digits'],
  ['description', 'string'],
  ['enabled', 'boolean'],
  ['ref', 'string1'],
  ['last_updated', 'string'],
  ['categories', { array: 'string1', min: 1, unique: true }],
  ['logging', { name: 'logging', object: { enabled: 'boolean' }, required: ['enabled'] }],
  ['exposed_credential_check', { name: 'exposed_credential_check', object: { username_expression: 'string1', password_expression: 'string1' }, required: ['username_expression', 'password_expression'] }],
  ['ratelimit', RATELIMIT],
];

/** The content types of a block action's custom response (the hosted API's list). */
export const BLOCK_CONTENT_TYPES = ['application/json', 'text/html', 'text/plain', 'text/xml'] as const;

/**
 * The longest `content` of a block action's custom response, in bytes of UTF-8: the hosted
 * limits, 2 KB in WAF custom rules and 30 KB in rate limiting rules (Cloudflare's docs,
 * "custom response for blocked requests": the WAF custom rules and rate limiting rules pages
 * give the maximum body size as "2 KB" and "30 KB"; cloudflare-docs PR #19961,
 * src/content/docs/waf/custom-rules/create-dashboard.mdx). A KB here is 1,024 bytes. Without
 * a cap a rule could carry megabytes that every answer and every version would repeat.
 */
export const BLOCK_CONTENT_MAX_BYTES = 2 * 1024;
export const RATELIMIT_BLOCK_CONTENT_MAX_BYTES = 30 * 1024;


/** Top-level keys of the parameters of actions outside the WAF's scope (rules-api §2.5). */
const OTHER_PARAMETER_KEYS: Partial<Record<Action, readonly string[]>> = {
  rewrite: ['headers', 'uri'],
  redirect: ['from_value', 'from_list'],
  route: ['host_header', 'origin', 'sni'],
  serve_error: ['content', 'content_type', 'status_code', 'asset_name'],
  compress_response: ['algorithms'],
  log_custom_field: ['request_fields', 'response_fields', 'cookie_fields', 'raw_response_fields', 'transformed_request_fields'],
};

class Validator extends OverridesChecker {
  document(root: Node): void {
    if (root.type === 'array') {
      this.rulesPath = [];
      this.inferPhase(root);
      this.rules(root);
      return;
    }
    if (root.type !== 'object') {
      this.at(root, 'error', 'wrong-type', `a ruleset must be an object (or an array of rules), not ${kindOf(root)}`, { schema: true });
      return;
    }
    const ruleset = rulesetNodeOf(root);
    if (!ruleset) return;
    this.rulesPath = rulesPathOf(root) ?? ['rules'];
    this.ruleset(ruleset);
  }

  private ruleset(obj: Node): void {
    const scope: Scope = { what: 'a ruleset', invalid: 'invalid-value' };
    this.unknownKeys(obj, RULESET_FIELDS, scope);
    const props = propsOf(obj);
    for (const [key, spec] of RULESET_SPECS) {
      const p = props.get(key);
      if (p && this.value(p.value, spec, key, scope)) {
        if (key === 'kind') this.kind = p.value!.value as RulesetKind;
        if (key === 'phase') this.phase = p.value!.value as Phase;
      }
    }
    const rules = props.get('rules')?.value;
    if (rules && rules.type !== 'array') {
      this.value(rules, { array: 'string' }, 'rules', scope);
      return;
    }
    if (!rules) return;
    if (!this.phase) this.inferPhase(rules);
    this.rules(rules);
  }

  /** See the header: the phase of the managed rulesets the file deploys, else the option. */
  private inferPhase(rules: Node): void {
    const phases = new Set<string>();
    for (const r of rules.children ?? []) {
      const p = propsOf(r);
      if (p.get('action')?.value?.value !== 'execute') continue;
      const id = propsOf(p.get('action_parameters')?.value).get('id')?.value?.value;
      const rs = typeof id === 'string' ? findManagedRuleset(this.options.catalog, id) : undefined;
      if (rs) phases.add(rs.phase);
    }
    this.phase = phases.size === 1 ? ([...phases][0] as Phase) : this.options.phase;
  }

  private rules(rules: Node): void {
    const items = rules.children ?? [];
    items.forEach((r, i) => this.rule(r, i));
    this.duplicates(items);
  }

  private rule(rule: Node, index: number): void {
    const scope: Scope = { what: 'a rule', invalid: 'invalid-value', rule: index };
    if (rule.type !== 'object') {
      this.at(rule, 'error', 'wrong-type', `a rule must be an object, not ${kindOf(rule)}`, { rule: index, schema: true });
      return;
    }
    const props = propsOf(rule);
    this.unknownKeys(rule, RULE_FIELDS, scope);
    for (const [key, spec] of RULE_SPECS) {
      const p = props.get(key);
      if (p) this.value(p.value, spec, key, scope);
    }
    // The expression: its text is the language core's to check (an empty one included).
    const expr = props.get('expression');
    if (!expr) {
      const [s, e] = this.missingAt(rule);
      this.add(s, e, 'error', MISSING_EXPRESSION, 'a rule needs an "expression"', { rule: index, schema: true, hint: 'Use `true` for a rule that applies to every request.' });
    }
    else if (expr.value && expr.value.type !== 'string') this.value(expr.value, 'string', 'expression', scope);

    const actionProp = props.get('action');
    const paramsProp = props.get('action_parameters');
    let action: string | undefined;
    if (!actionProp) {
      const [s, e] = this.missingAt(rule);
      this.add(s, e, 'error', 'missing-field', paramsProp ? 'action is required for action parameters' : 'a rule needs an "action"', { rule: index, schema: true });
    } else if (actionProp.value && this.value(actionProp.value, 'string', 'action', scope)) {
      action = this.action(actionProp.value, index);
    }
    if (paramsProp?.value) this.parameters(paramsProp.value, action, index, rule);
    else if (action === 'set_config') {
      this.at(actionProp!.value!, 'error', ACTION_PARAMETERS_REQUIRED, 'action parameters are required for the set_config action', { rule: index, schema: true });
    } else if (action === 'score' || action === 'execute') {
      this.at(actionProp!.value!, 'error', 'missing-field', `the ${action} action needs action_parameters with ${action === 'score' ? '"increment"' : 'the "id" of the ruleset to run'}`, { rule: index, schema: true });
    }

    const logging = props.get('logging');
    if (logging && action !== undefined && action !== 'skip') {
      this.at(logging.node, 'error', 'logging-not-allowed', 'logging options only allowed in the skip action', { rule: index, hint: 'Remove "logging"; other actions are logged (or not) by their own nature.' });
    }
    const ratelimit = props.get('ratelimit');
    if (ratelimit && this.phase && this.phase !== 'http_ratelimit') {
      this.at(ratelimit.key, 'warning', 'ratelimit-not-in-phase', `"ratelimit" has no effect in phase ${this.phase}`, { rule: index, hint: 'Rate limiting rules live in the http_ratelimit phase.' });
    }
    if (ratelimit?.value?.type === 'object') this.ratelimitValues(ratelimit.value, index, action, typeof expr?.value?.value === 'string' ? expr.value.value : undefined);
    if (!ratelimit && this.phase === 'http_ratelimit' && action !== undefined && action !== 'execute' && this.kind !== 'managed') {
      this.missing(rule, 'a rate limiting rule needs "ratelimit" (characteristics and period)', { rule: index, schema: false });
    }

    const threshold = props.get('score_threshold');
    if (threshold && this.value(threshold.value, 'integer', 'score_threshold', scope) && this.kind !== 'managed') {
      const exec = action === 'execute' ? this.executedRuleset(paramsProp?.value) : undefined;
      const paramsPath = [...this.rulesPath, index, 'action_parameters'];
      this.misplaced(threshold.node, 'warning', exec, index, { paramsPath, from: [...this.rulesPath, index], fromKind: 'rule', properties: ['score_threshold'] }, 'on the rule itself');
    }

    if (!props.has('ref') && this.kind !== 'managed') {
      this.add(rule.offset, rule.offset + 1, 'information', 'missing-ref', 'the rule has no "ref"', {
        rule: index,
        hint: 'A ref (unique in the ruleset) identifies the rule across updates: when a PUT replaces the rules, a rule whose ref matches keeps its id.',
        data: { path: [...this.rulesPath, index], ref: this.suggestRef(rule, index) },
      });
    }
  }

  /** The values the hosted API allows in `ratelimit` (rateLimitParams.ts); their types are RATELIMIT's to check. */
  private ratelimitValues(node: Node, rule: number, action: string | undefined, expression: string | undefined): void {
    const props = propsOf(node);
    // Cached assets must be counted when the rule's expression uses a custom list (reference §2.1).
    const counts = this.phase === undefined || this.phase === 'http_ratelimit';
    const toOrigin = props.get('requests_to_origin')?.value;
    if (counts && toOrigin?.value === true && expression !== undefined) {
      const ir = checkExpression(expression).ir;
      const custom = ir ? [...irListNames(ir)].filter((n) => !MANAGED_LISTS.includes(n)) : [];
      if (custom.length > 0) {
        this.at(toOrigin, 'error', 'invalid-value', `a rule whose expression uses a custom list ($${custom[0]}) counts cached assets too: requests_to_origin must be false`, { rule });
      }
    }
    // What the zone's plan allows (reference §2.3): the API refuses the rest. An account's
    // ruleset (kind root or custom) is written without a plan.
    const plan = isAccountKind(this.kind) ? undefined : this.options.plan;
    // Only where the rule counts: `ratelimit` elsewhere is inert (ratelimit-not-in-phase).
    if (plan && counts) {
      const value = (key: string): unknown => {
        const v = props.get(key)?.value;
        return v?.type === 'array' ? (v.children ?? []).map((c) => c.value) : v?.value;
      };
      const rl = { period: value('period'), mitigation_timeout: value('mitigation_timeout'), characteristics: value('characteristics'), counting_expression: value('counting_expression'), score_per_period: value('score_per_period') };
      // Not `schema`: the JSON schema knows neither plans nor the allowed values, so the editor must show these in .ruleset.json too.
      // A setting left out (mitigation_timeout: 0) is reported at `ratelimit`.
      for (const p of ratelimitPlanProblems(rl, action, plan)) this.at(props.get(p.field)?.value ?? node, 'error', 'plan-required', p.message, { rule });
    }
    const seconds = (key: string, allowed: readonly number[], what: string) => {
      const v = props.get(key)?.value;
      if (v?.type === 'number' && Number.isInteger(v.value) && !allowed.includes(v.value)) {
        this.at(v, 'error', 'invalid-value', `'${v.value}' is not a valid value for ${key}: ${what} is one of ${allowed.join(', ')} seconds`, { rule });
      }
    };
    seconds('period', RATELIMIT_SECONDS, 'a counting period');
    // Complexity-based counting needs both: the limit, and the origin's header that scores each request.
    const score = props.get('score_per_period');
    const header = props.get('score_response_header_name');
    if (score && !header) this.at(score.node, 'error', 'invalid-value', 'score_per_period needs score_response_header_name: the response header in which the origin gives each request its score', { rule });
    if (header && !score) this.at(header.node, 'error', 'invalid-value', 'score_response_header_name needs score_per_period: the most score a client may add up in a period', { rule });
    seconds('mitigation_timeout', MITIGATION_SECONDS, 'a mitigation timeout (0: throttle, act only while over the limit)');
    const list = props.get('characteristics')?.value;
    if (list?.type !== 'array') return;
    const texts: string[] = [];
    for (const item of list.children ?? []) {
      if (item.type !== 'string' || typeof item.value !== 'string' || item.value === '') continue;
      texts.push(item.value);
      const c = parseCharacteristic(item.value);
      if ('error' in c) this.at(item, 'error', 'invalid-value', c.error, { rule });
    }
    const whole = characteristicsProblem(texts);
    if (whole) this.at(list, 'error', 'invalid-value', whole, { rule });
    // Counters are kept per data center: the hosted API wants it said (reference §2.2). Locally one data center counts all, so a warning.
    else if (texts.length > 0 && !texts.includes('cf.colo.id') && (this.phase === undefined || this.phase === 'http_ratelimit')) {
      this.at(list, 'warning', 'invalid-value', 'the hosted API requires cf.colo.id among a rate limiting rule\'s characteristics (its counters are per data center): add "cf.colo.id"', { rule });
    }
  }

  /** A ref for a rule without one: its id, else a slug of its description, else `rule-N`; unique. */
  private suggestRef(rule: Node, index: number): string {
    const p = propsOf(rule);
    const id = p.get('id')?.value?.value;
    if (typeof id === 'string' && id !== '') return id;
    const desc = p.get('description')?.value?.value;
    let base =
      typeof desc === 'string'
        ? desc
            .toLowerCase()
            .replace(/[^a-z0-9]+/g, '_')
            .replace(/^_+|_+$/g, '')
            .slice(0, 40)
            .replace(/_+$/, '')
        : '';
    if (!base) base = `rule_${index + 1}`;
    const used = this.refsOf(rule.parent);
    let ref = base;
    for (let n = 2; used.has(ref); n++) ref = `${base}_${n}`;
    return ref;
  }

  /** The refs the rules of `rules` have, read once per list (a rule without a ref asks for each). */
  private readonly refsRead = new WeakMap<Node, Set<string>>();
  private refsOf(rules: Node | undefined): Set<string> {
    if (!rules) return new Set();
    let used = this.refsRead.get(rules);
    if (!used) {
      used = new Set();
      for (const r of rules.children ?? []) {
        const ref = propsOf(r).get('ref')?.value?.value;
        if (typeof ref === 'string') used.add(ref);
      }
      this.refsRead.set(rules, used);
    }
    return used;
  }

  private action(node: Node, rule: number): string | undefined {
    const value = node.value as string;
    if (!(ACTIONS as readonly string[]).includes(value)) {
      const legacy = value === 'allow' || value === 'bypass';
      const near = closest(value, ACTIONS);
      this.at(node, 'error', 'unknown-action', `unknown variant for action: ${value}`, {
        rule,
        hint: legacy
          ? `Rulesets have no ${value} action: use \`skip\` with action_parameters saying what to skip (\`{"ruleset": "current"}\`, phases, products).`
          : `${didYouMean(near)}Actions: ${list(ACTIONS)}.`,
        data: near.length ? { suggestions: near } : undefined,
      });
      return undefined;
    }
    const allowed = actionsFor(this.phase, this.kind);
    if (allowed && !allowed.includes(value as Action)) {
      const kind = this.kind ? ` and kind ${this.kind}` : '';
      this.at(node, 'error', 'action-not-in-phase', `'${value}' is not a valid value for Action because it is not possible to use the ${value} action in a ruleset with phase ${this.phase}${kind}`, {
        rule,
        hint: `Rules in ${this.phase}${kind} can use ${list(allowed)}.`,
        data: { allowed },
      });
    }
    if (value === 'log' && this.phase === 'http_request_firewall_custom' && this.options.plan && this.options.plan !== 'enterprise') {
      this.at(node, 'warning', 'plan-required', 'the log action in custom rules needs an Enterprise plan', { rule });
    }
    return value;
  }

  // -------------------------------------------------------------------------------------------
  // action_parameters

  private parameters(node: Node, action: string | undefined, rule: number, ruleNode: Node): void {
    const scope: Scope = { what: `the ${action ?? ''} action_parameters`.replace('  ', ' '), invalid: 'invalid-action-parameters', rule };
    if (node.type !== 'object') {
      this.value(node, 'object', 'action_parameters', scope);
      return;
    }
    if (action === undefined || !(ACTIONS as readonly string[]).includes(action)) return;
    if (NO_PARAMETERS.includes(action)) {
      const empty = (node.children ?? []).length === 0;
      this.at(node.parent?.type === 'property' ? node.parent : node, empty ? 'warning' : 'error', 'invalid-action-parameters', `the ${action} action takes no action_parameters`, { rule, hint: 'Remove "action_parameters".' });
      return;
    }
    const props = propsOf(node);
    // score_threshold here is the classic misplacement: report that, not an unknown field.
    const skipKeys = action === 'execute' ? ['score_threshold'] : [];
    switch (action) {
      case 'block': {
        this.unknownKeys(node, ['response'], scope);
        const r = props.get('response');
        if (!r?.value) return;
        this.value(
          r.value,
          { name: 'a block response', object: { status_code: 'integer', content: 'string1', content_type: 'string1' }, required: ['status_code', 'content', 'content_type'] },
          'response',
          scope,
        );
        const status = propsOf(r.value).get('status_code')?.value;
        if (status?.type === 'number' && Number.isInteger(status.value) && (status.value < 400 || status.value > 499)) {
          this.at(status, 'error', 'invalid-action-parameters', `'${status.value}' is not a valid value for status_code: a block response uses a status code from 400 to 499`, { rule, schema: true });
        }
        const content = propsOf(r.value).get('content')?.value;
        if (content?.type === 'string' && typeof content.value === 'string') {
          const ratelimit = this.phase === 'http_ratelimit';
          const max = ratelimit ? RATELIMIT_BLOCK_CONTENT_MAX_BYTES : BLOCK_CONTENT_MAX_BYTES;
          const bytes = utf8Length(content.value);
          if (bytes > max) {
            this.at(
              content,
              'error',
              'invalid-action-parameters',
              `a content of ${bytes} bytes is not a valid value for content: a block response's content is at most ${max} bytes (${max / 1024} KB) in ${ratelimit ? 'rate limiting rules' : 'custom rules'}`,
              { rule, schema: true },
            );
          }
        }
        // The answer's Content-Type: one of the hosted API's four (a free string could carry a line break into the headers).
        const type = propsOf(r.value).get('content_type')?.value;
        if (type?.type === 'string' && type.value !== '' && !(BLOCK_CONTENT_TYPES as readonly unknown[]).includes(type.value)) {
          this.at(type, 'error', 'invalid-action-parameters', `'${String(type.value)}' is not a valid value for content_type: a block response is one of ${BLOCK_CONTENT_TYPES.join(', ')}`, { rule, schema: true });
        }
        return;
      }
      case 'execute':
        this.unknownKeys(node, ['id', 'version', 'matched_data', 'overrides'], scope, skipKeys);
        this.execute(node, rule, ruleNode);
        return;
      case 'skip':
        this.skip(node, rule, scope);
        return;
      case 'score':
        this.value(node, { name: 'the score action_parameters', object: { increment: 'integer' }, required: ['increment'] }, 'action_parameters', scope);
        return;
      default: {
        const keys = OTHER_PARAMETER_KEYS[action as Action];
        if (keys) this.unknownKeys(node, keys, scope);
      }
    }
  }

  private skip(node: Node, rule: number, scope: Scope): void {
    const props = propsOf(node);
    this.unknownKeys(node, ['ruleset', 'phase', 'phases', 'products', 'rulesets', 'rules'], scope);
    if (props.size === 0) {
      this.at(node, 'error', 'invalid-action-parameters', 'skip needs at least one of "ruleset", "phases", "products", "rulesets" or "rules"', { rule, schema: true, hint: '`{"ruleset": "current"}` skips the remaining rules of this ruleset.' });
      return;
    }
    const p = (k: string) => props.get(k);
    if (p('ruleset')) this.value(p('ruleset')!.value, { enum: ['current'] }, 'ruleset', scope);
    if (p('phase')) this.value(p('phase')!.value, { enum: ['current'] }, 'phase', scope);
    if (p('phases')) this.value(p('phases')!.value, { array: { enum: PHASES }, min: 1, unique: true }, 'phases', scope);
    if (p('rulesets')) this.value(p('rulesets')!.value, { array: 'hex32', min: 1, unique: true }, 'rulesets', scope);
    const incompatible = (a: string, b: string, why: string) => {
      if (p(a) && p(b)) this.at(p(b)!.node, 'error', 'invalid-action-parameters', `"${b}" cannot be combined with "${a}"`, { rule, hint: why });
    };
    incompatible('ruleset', 'rulesets', '"ruleset": "current" skips the rest of this ruleset; "rulesets" skips whole other rulesets. Use one skip rule for each.');
    incompatible('phases', 'rulesets', 'Skip whole phases or some rulesets, in separate skip rules.');
    if (p('phase') && !p('products')) this.at(p('phase')!.node, 'error', 'invalid-action-parameters', '"phase" is only valid together with "products"', { rule, hint: 'To skip the remaining rules of this ruleset use `"ruleset": "current"`; to skip later phases use "phases".' });

    const products = p('products')?.value;
    if (products && this.value(products, { array: 'string1', min: 1, unique: true }, 'products', scope)) {
      for (const item of products.children ?? []) {
        const canonical = SKIP_PRODUCTS.find((x) => x.toLowerCase() === String(item.value).toLowerCase());
        if (!canonical) {
          const near = closest(String(item.value), SKIP_PRODUCTS);
          this.at(item, 'error', 'invalid-action-parameters', `'${item.value}' is not a valid value for products`, { rule, hint: `${didYouMean(near)}Products: ${list(SKIP_PRODUCTS)}.` });
        } else if (canonical !== item.value) {
          this.at(item, 'warning', 'invalid-action-parameters', `write the product as '${canonical}'`, { rule, hint: 'The API echoes product names in camelCase.', data: { suggestions: [canonical] } });
        }
      }
    }
    const rulesets = p('rulesets')?.value;
    for (const item of rulesets?.type === 'array' ? (rulesets.children ?? []) : []) {
      if (item.type === 'string' && HEX32.test(item.value)) this.knownRuleset(item, rule, 'warning');
    }
    const rules = p('rules')?.value;
    if (rules) {
      if (rules.type !== 'object') {
        this.value(rules, 'object', 'rules', scope);
        return;
      }
      if ((rules.children ?? []).length === 0) this.at(rules, 'error', 'invalid-action-parameters', '"rules" needs at least one ruleset id', { rule, schema: true });
      for (const [id, prop] of propsOf(rules)) {
        if (!HEX32.test(id)) {
          this.at(prop.key, 'error', 'invalid-action-parameters', `'${id}' is not a valid ruleset id: expected 32 lowercase hexadecimal characters`, { rule, schema: true });
          continue;
        }
        const rs = this.knownRuleset(prop.key, rule, 'warning', id);
        if (!this.value(prop.value, { array: 'hex32', min: 1, unique: true }, 'rule ids', scope) || !rs) continue;
        const version = rulesetVersion(rs);
        for (const item of prop.value?.children ?? []) this.knownRule(item, rs, version, rule);
      }
    }
  }

  // -------------------------------------------------------------------------------------------

  private duplicates(items: readonly Node[]): void {
    const ids = new Map<string, number>();
    const refs = new Map<string, number>();
    items.forEach((r, i) => {
      const p = propsOf(r);
      const id = p.get('id')?.value;
      const ref = p.get('ref')?.value;
      if (id?.type === 'string' && id.value !== '') {
        const first = ids.get(id.value);
        if (first !== undefined) this.at(id, 'error', 'duplicate-id', `rule ${first + 1} already has the id '${id.value}'`, { rule: i, hint: 'Rule ids are unique in a ruleset; remove the id to get a new one.' });
        else ids.set(id.value, i);
      }
      // A rule's ref defaults to its id.
      const effective = ref?.type === 'string' && ref.value !== '' ? ref : id?.type === 'string' && id.value !== '' ? id : undefined;
      if (effective) {
        const first = refs.get(effective.value);
        if (first !== undefined && effective === ref) {
          this.at(ref, 'error', 'duplicate-ref', `rule ${first + 1} already has the ref '${ref.value}'`, { rule: i, hint: 'A ref is unique within its ruleset (a rule without one has its id as ref).' });
        } else if (first === undefined) refs.set(effective.value, i);
      }
    });
  }

  expressions(): void {
    const allowManaged = this.kind === 'managed';
    for (const r of findExpressions(this.json).regions) {
      const own = r.phase !== undefined && (PHASES as readonly string[]).includes(r.phase) ? (r.phase as Phase) : undefined;
      const phase = own ?? this.phase;
      const checked = checkExpression(r.text, { plan: this.options.plan, phase, allowManaged, countingExpression: r.counting === true });
      for (const d of checked.diagnostics) {
        const empty = r.text === '';
        this.problems.push({
          start: empty ? r.start : r.toDocument(d.range.start),
          end: empty ? r.end : r.toDocument(d.range.end),
          severity: d.severity,
          code: d.code,
          message: d.message,
          ...(d.hint ? { hint: d.hint } : {}),
          rule: r.rule,
          expression: true,
          ...(d.data ? { data: d.data as Record<string, unknown> } : {}),
        });
      }
    }
  }
}

/**
 * Validates ruleset JSON. Never throws; a document that is not JSON gives `invalid-json`
 * problems and whatever the partial tree allows.
 */
export function validateRulesetJson(json: string, options: ValidateOptions): RulesetProblem[] {
  const { root, errors } = parseRulesetTree(json);
  const v = new Validator(json, options);
  for (const e of errors) v.add(e.offset, e.offset + e.length, 'error', 'invalid-json', `invalid JSON: ${jsonErrorText(e.error)}`);
  if (root) {
    for (const k of duplicateKeys(root)) v.add(k.offset, k.offset + k.length, 'error', 'duplicate-key', `duplicate key ${JSON.stringify(k.value)}: the API reads the last one and this editor the first; keep one`);
    v.document(root);
  }
  if (options.expressions !== false) v.expressions();
  return v.problems.sort(byPlace);
}

/**
 * validateRulesetJson for a decoded value (no text: no JSON or duplicate-key problems, and
 * no expression checks, whose places are characters). Problems' offsets are positions in
 * `tree` (jsonTree.ts valueTree), which the caller passes to place them.
 */
export function validateRulesetValue(tree: Node, options: Omit<ValidateOptions, 'expressions'>): RulesetProblem[] {
  const v = new Validator('', options);
  v.document(tree);
  return v.problems.sort(byPlace);
}

/** Problems in document order. */
const byPlace = (a: RulesetProblem, b: RulesetProblem): number => a.start - b.start || a.end - b.end;

/** Every key node that repeats an earlier key of the same object (a loop with its own stack). */
function duplicateKeys(root: Node): Node[] {
  const out: Node[] = [];
  const stack = [root];
  while (stack.length > 0) {
    const n = stack.pop()!;
    if (n.type === 'object') {
      const seen = new Set<string>();
      for (const p of n.children ?? []) {
        const key = p.children?.[0];
        if (key && typeof key.value === 'string') {
          if (seen.has(key.value)) out.push(key);
          seen.add(key.value);
        }
      }
    }
    for (const c of n.children ?? []) stack.push(c);
  }
  return out;
}

/** The effective phase and kind validation uses for a document (for completion and lenses). */
export function rulesetContext(json: string, options: Pick<ValidateOptions, 'catalog' | 'phase'>): { phase?: Phase; kind?: RulesetKind; rulesPath?: JSONPath; root?: Node } {
  const { root } = parseRulesetTree(json);
  if (!root) return {};
  const v = new Validator(json, { catalog: options.catalog, phase: options.phase, expressions: false });
  v.document(root);
  return { phase: v.phase, kind: v.kind, rulesPath: rulesPathOf(root), root };
}
