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
 * The action/phase matrix (rules-api §2.5; the reference marks what is not verified,
 * it is data here so that it can be corrected in one place):
 *
 * | phase                                   | entry points (zone/root) and custom rulesets                 |
 * |-----------------------------------------|--------------------------------------------------------------|
 * | http_request_firewall_custom            | block, challenge, js_challenge, managed_challenge, log, skip, execute |
 * |   kind root                             | execute only (an account deploys rulesets there; tf #1242)   |
 * |   kind custom                           | as above without execute (a custom ruleset cannot nest one)  |
 * | http_ratelimit                          | block, challenge, js_challenge, managed_challenge, log, execute (root: execute) |
 * | http_request_firewall_managed           | execute, skip                                                |
 * | http_response_firewall_managed          | execute, skip                                                |
 * | http_request_sbfm                       | block, challenge, js_challenge, managed_challenge, log, skip |
 * | ddos_l7, ddos_l4, http_request_sanitize | execute                                                      |
 * | http_request_transform, http_request_late_transform, http_response_headers_transform | rewrite |
 * | http_request_redirect, http_request_dynamic_redirect | redirect                                        |
 * | http_request_origin                     | route                                                        |
 * | http_config_settings                    | set_config                                                   |
 * | http_request_cache_settings             | set_cache_settings                                           |
 * | http_response_cache_settings            | set_cache_control, set_cache_tags                            |
 * | http_custom_errors                      | serve_error                                                  |
 * | http_log_custom_fields                  | log_custom_field                                             |
 * | http_response_compression               | compress_response                                            |
 * | magic_transit*                          | not checked                                                  |
 *
 * Rulesets of kind `managed` (what the catalog holds) may use block, the challenges,
 * log, score, skip, and in the DDoS phases ddos_dynamic and force_connection_close.
 *
 * Override actions: block, challenge, js_challenge, managed_challenge, log. Not `score`:
 * an override has no `action_parameters`, so it could not say the increment; a scoring
 * rule keeps `score` by not being overridden. The same five are the actions of the
 * anomaly-score rule (crs-and-managed-rules §4.2).
 *
 * The phase: the file's own `phase`; else, when every `execute` rule deploys a catalog
 * ruleset of one phase, that phase (a file that deploys the OWASP-based ruleset is an
 * `http_request_firewall_managed` entry point whatever the editor's default phase);
 * else `options.phase`. The kind: the file's `kind`, else a zone entry point.
 *
 * Pure: no I/O, the managed catalog comes in as a value.
 */
import { parseTree, type JSONPath, type Node, type ParseError } from 'jsonc-parser';
import { jsonErrorText } from './jsonErrors';
import type { Severity } from '../language/diagnostics';
import { checkExpression } from '../language/index';
import { planAllows } from '../language/scheme/index';
import { PHASES, type Phase, type Plan } from '../language/scheme/types';
import { findManagedRuleset, paranoiaLevelOf, rulesetVersion, type ManagedCatalog, type ManagedRule, type ManagedRuleset, type ManagedRulesetVersion } from './catalog';
import { findExpressions } from './expressions';
import { ACTIONS, SKIP_PRODUCTS, type Action, type RulesetKind } from './model';

export type RulesetProblemCode =
  | 'invalid-json'
  | 'duplicate-key'
  | 'wrong-type'
  | 'unknown-field'
  | 'missing-field'
  | 'invalid-value'
  | 'unknown-action'
  | 'action-not-in-phase'
  | 'plan-required'
  | 'invalid-action-parameters'
  | 'logging-not-allowed'
  | 'ratelimit-not-in-phase'
  | 'unknown-managed-ruleset'
  | 'unknown-ruleset-version'
  | 'execute-phase-mismatch'
  | 'unknown-category'
  | 'unknown-rule-id'
  | 'misplaced-score-threshold'
  | 'misplaced-override-action'
  | 'invalid-override-action'
  | 'duplicate-override'
  | 'duplicate-id'
  | 'duplicate-ref'
  | 'duplicate-execute'
  | 'owasp-all-paranoia-levels'
  | 'missing-ref';

export interface RulesetProblem {
  /** Document offsets of the node the problem is about. */
  readonly start: number;
  readonly end: number;
  readonly severity: Severity;
  /** A ruleset code, or the language core's code for a problem inside an expression. */
  readonly code: RulesetProblemCode | string;
  readonly message: string;
  readonly hint?: string;
  /** Index of the rule in `rules`, when the problem is inside one. */
  readonly rule?: number;
  /** True for problems the language core found inside an `expression`. */
  readonly expression?: boolean;
  /**
   * True when the JSON schema contributed for `*.ruleset.json` (client/schemas/
   * ruleset.schema.json) reports the same node: a type, a required or unknown property,
   * a pattern, a bound. An editor that applies the schema may leave these out; the
   * schema's enums are only suggestions, so enum values are never marked.
   */
  readonly schema?: boolean;
  /** What a quick fix needs (JSON paths are from the document root). */
  readonly data?: Readonly<Record<string, unknown>>;
}

export interface ValidateOptions {
  readonly catalog: ManagedCatalog;
  readonly plan?: Plan;
  /** The phase assumed when the file has none (see the header for the order). */
  readonly phase?: Phase;
  /**
   * Ids of custom rulesets known to exist (an `execute` may deploy them without a warning).
   * Not taken as complete: outside the managed phases an unknown id is a warning.
   */
  readonly customRulesetIds?: readonly string[];
  /** Check every rule's expression with the language core (default true). */
  readonly expressions?: boolean;
}

/** Data of `misplaced-score-threshold` / `misplaced-override-action` problems. */
export interface MisplacedData {
  readonly anomalyRuleId: string;
  /** Path of the execute rule's `action_parameters`. */
  readonly paramsPath: JSONPath;
  /** Path of the object holding the misplaced properties. */
  readonly from: JSONPath;
  /** What is there: the object's place in the overrides. */
  readonly fromKind: 'rule' | 'action_parameters' | 'overrides' | 'category' | 'rule-override';
  /** The properties a fix moves to the anomaly rule's override. */
  readonly properties: readonly ('score_threshold' | 'action')[];
}

const HEX32 = /^[0-9a-f]{32}$/;
const DIGITS = /^[0-9]+$/;
export const PARANOIA_TAG = /^paranoia-level-([1-4])$/;

export const OVERRIDE_ACTIONS = ['block', 'challenge', 'js_challenge', 'managed_challenge', 'log'] as const;
const NO_PARAMETERS: readonly string[] = ['challenge', 'js_challenge', 'managed_challenge', 'log', 'ddos_dynamic', 'force_connection_close'];
const KINDS: readonly RulesetKind[] = ['managed', 'custom', 'root', 'zone'];
const SENSITIVITY = ['default', 'medium', 'low', 'eoff'];

const FIREWALL: readonly Action[] = ['block', 'challenge', 'js_challenge', 'managed_challenge', 'log'];

/** Actions of rules in entry points and custom rulesets, per phase (see the header). */
export const PHASE_ACTIONS: Readonly<Partial<Record<Phase, readonly Action[]>>> = {
  http_request_firewall_custom: [...FIREWALL, 'skip', 'execute'],
  http_ratelimit: [...FIREWALL, 'execute'],
  http_request_firewall_managed: ['execute', 'skip'],
  http_response_firewall_managed: ['execute', 'skip'],
  http_request_sbfm: [...FIREWALL, 'skip'],
  ddos_l7: ['execute'],
  ddos_l4: ['execute'],
  http_request_sanitize: ['execute'],
  http_request_transform: ['rewrite'],
  http_request_late_transform: ['rewrite'],
  http_response_headers_transform: ['rewrite'],
  http_request_redirect: ['redirect'],
  http_request_dynamic_redirect: ['redirect'],
  http_request_origin: ['route'],
  http_config_settings: ['set_config'],
  http_request_cache_settings: ['set_cache_settings'],
  http_response_cache_settings: ['set_cache_control', 'set_cache_tags'],
  http_custom_errors: ['serve_error'],
  http_log_custom_fields: ['log_custom_field'],
  http_response_compression: ['compress_response'],
};

const MANAGED_KIND_ACTIONS: readonly Action[] = [...FIREWALL, 'score', 'skip'];
const DDOS_MANAGED_ACTIONS: readonly Action[] = [...FIREWALL, 'ddos_dynamic', 'force_connection_close'];

/** The actions a rule may use in a ruleset of this phase and kind, or undefined when not checked. */
export function actionsFor(phase: Phase | undefined, kind: RulesetKind | undefined): readonly Action[] | undefined {
  if (phase === undefined) return undefined;
  const base = PHASE_ACTIONS[phase];
  if (!base) return undefined;
  if (kind === 'managed') return phase === 'ddos_l7' || phase === 'ddos_l4' ? DDOS_MANAGED_ACTIONS : MANAGED_KIND_ACTIONS;
  if (kind === 'root' && (phase === 'http_request_firewall_custom' || phase === 'http_ratelimit')) return ['execute'];
  if (kind === 'custom') return base.filter((a) => a !== 'execute');
  return base;
}

/** One line per action, for hints, hover and completion. */
export const ACTION_DOCS: Readonly<Record<Action, string>> = {
  block: 'Stop the request with an error page (403, or the `response` given in action_parameters).',
  challenge: 'Interactive challenge (the visitor must solve a CAPTCHA-like puzzle).',
  compress_response: 'Compress the response with the given algorithms.',
  ddos_dynamic: 'DDoS managed rules: let the DDoS system choose the mitigation.',
  execute: 'Run another ruleset (a managed ruleset or one of your custom rulesets), with overrides.',
  force_connection_close: 'DDoS managed rules: close the connection.',
  js_challenge: 'Non-interactive JavaScript challenge.',
  log: 'Record the match in the logs and go on (Enterprise in custom rules).',
  log_custom_field: 'Add request, response or cookie fields to the logs.',
  managed_challenge: 'Let the edge choose the least intrusive challenge for the visitor.',
  redirect: 'Redirect to another URL (static or computed).',
  rewrite: 'Rewrite the URL path or query, or request/response headers.',
  route: 'Change the Host header, the origin or the SNI.',
  score: 'Add `increment` to the request\'s anomaly score (managed rulesets).',
  serve_error: 'Serve a custom error response.',
  set_cache_control: 'Set the response\'s Cache-Control directives.',
  set_cache_settings: 'Change caching of the request (cache on/off, TTLs, cache key).',
  set_cache_tags: 'Add, remove or set cache tags.',
  set_config: 'Change zone settings for the request.',
  skip: 'Skip the remaining rules of the ruleset, other rulesets, rules, phases or products.',
  transform_response_html: 'Transform the HTML of the response.',
};

// ---------------------------------------------------------------------------------------------
// JSON tree helpers

export interface Prop {
  readonly key: Node;
  readonly value?: Node;
  /** The property node (key and value). */
  readonly node: Node;
}

/** The properties of an object node (the first of duplicated keys). */
export function propsOf(obj: Node | undefined): Map<string, Prop> {
  const out = new Map<string, Prop>();
  if (obj?.type !== 'object') return out;
  for (const p of obj.children ?? []) {
    const key = p.children?.[0];
    if (!key || typeof key.value !== 'string' || out.has(key.value)) continue;
    out.set(key.value, { key, value: p.children?.[1], node: p });
  }
  return out;
}

/** The path to the rules array: `rules`, `result.rules`, or the root when it is an array. */
export function rulesPathOf(root: Node | undefined): JSONPath | undefined {
  if (!root) return undefined;
  if (root.type === 'array') return [];
  const p = propsOf(root);
  if (p.has('rules') || !p.has('result')) return ['rules'];
  return p.get('result')?.value?.type === 'object' ? ['result', 'rules'] : undefined;
}

/** The node of the ruleset object (the root, or `result`), if the document has one. */
export function rulesetNodeOf(root: Node | undefined): Node | undefined {
  if (root?.type !== 'object') return undefined;
  const p = propsOf(root);
  if (!p.has('rules') && p.has('result')) {
    const r = p.get('result')?.value;
    return r?.type === 'object' ? r : undefined;
  }
  return root;
}

export function parseRulesetTree(json: string): { root?: Node; errors: ParseError[] } {
  const errors: ParseError[] = [];
  const root = parseTree(json, errors, { disallowComments: true, allowTrailingComma: false });
  return { root, errors };
}

const kindOf = (n: Node | undefined): string =>
  !n ? 'nothing' : n.type === 'number' ? (Number.isInteger(n.value) ? 'an integer' : 'a number') : n.type === 'null' ? 'null' : n.type === 'array' ? 'an array' : n.type === 'object' ? 'an object' : `a ${n.type}`;

/** Levenshtein distance, for "did you mean". */
function distance(a: string, b: string): number {
  const prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let diag = prev[0];
    prev[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const tmp = prev[j];
      prev[j] = Math.min(prev[j] + 1, prev[j - 1] + 1, diag + (a[i - 1] === b[j - 1] ? 0 : 1));
      diag = tmp;
    }
  }
  return prev[b.length];
}

/** The closest candidates (at most 3), for "did you mean". */
export function closest(word: string, candidates: Iterable<string>): string[] {
  const w = word.toLowerCase();
  const scored: [string, number][] = [];
  for (const c of candidates) {
    const d = distance(w, c.toLowerCase());
    const limit = Math.max(2, Math.floor(c.length / 3));
    if (d <= limit || (w.length >= 3 && c.toLowerCase().includes(w))) scored.push([c, d]);
  }
  scored.sort((a, b) => a[1] - b[1] || a[0].localeCompare(b[0]));
  // Only the nearest ones: `wordpres` suggests `wordpress`, not also `wordpress-plugin`.
  const best = scored[0]?.[1] ?? 0;
  return scored.filter(([, d]) => d <= best + 1).slice(0, 3).map(([c]) => c);
}

const list = (xs: readonly string[]) => xs.map((x) => `\`${x}\``).join(', ');
const didYouMean = (xs: readonly string[]) => (xs.length ? `Did you mean ${xs.map((x) => `\`${x}\``).join(' or ')}? ` : '');

const managedById = findManagedRuleset;

// ---------------------------------------------------------------------------------------------
// The validator

type Spec =
  | 'string'
  | 'string1'
  | 'boolean'
  | 'integer'
  | 'hex32'
  | 'digits'
  | 'object'
  | { readonly enum: readonly string[] }
  | { readonly array: Spec; readonly min?: number; readonly unique?: boolean }
  | { readonly object: Readonly<Record<string, Spec>>; readonly required?: readonly string[]; readonly name: string };

interface Scope {
  /** Where in the API the object is, for messages ("a block response"). */
  readonly what: string;
  /** The code for invalid values inside it. */
  readonly invalid: 'invalid-value' | 'invalid-action-parameters';
  readonly rule?: number;
}

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
    counting_expression: 'string1',
    requests_to_origin: 'boolean',
  },
  required: ['characteristics', 'period'],
};

/** Top-level keys of the parameters of actions outside the WAF's scope (rules-api §2.5). */
const OTHER_PARAMETER_KEYS: Partial<Record<Action, readonly string[]>> = {
  rewrite: ['headers', 'uri'],
  redirect: ['from_value', 'from_list'],
  route: ['host_header', 'origin', 'sni'],
  serve_error: ['content', 'content_type', 'status_code', 'asset_name'],
  compress_response: ['algorithms'],
  log_custom_field: ['request_fields', 'response_fields', 'cookie_fields', 'raw_response_fields', 'transformed_request_fields'],
};

interface Extra {
  readonly hint?: string;
  readonly rule?: number;
  readonly data?: Record<string, unknown>;
  readonly schema?: boolean;
}

interface ExecuteSeen {
  readonly rule: number;
  readonly id: string;
  readonly idNode: Node;
}

class Validator {
  readonly problems: RulesetProblem[] = [];
  phase?: Phase;
  kind?: RulesetKind;
  rulesPath: JSONPath = ['rules'];
  private readonly executes: ExecuteSeen[] = [];

  constructor(
    readonly json: string,
    readonly options: ValidateOptions,
  ) {}

  add(start: number, end: number, severity: Severity, code: RulesetProblemCode, message: string, extra: Extra = {}): void {
    this.problems.push({
      start,
      end,
      severity,
      code,
      message,
      ...(extra.hint ? { hint: extra.hint } : {}),
      ...(extra.rule !== undefined ? { rule: extra.rule } : {}),
      ...(extra.data ? { data: extra.data } : {}),
      ...(extra.schema ? { schema: true } : {}),
    });
  }

  at(node: Node, severity: Severity, code: RulesetProblemCode, message: string, extra: Extra = {}): void {
    this.add(node.offset, node.offset + node.length, severity, code, message, extra);
  }

  /** Where a missing key is reported: the object's own key, or its `{`. */
  missingAt(obj: Node): [number, number] {
    const parent = obj.parent;
    const key = parent?.type === 'property' ? parent.children?.[0] : undefined;
    return key ? [key.offset, key.offset + key.length] : [obj.offset, obj.offset + 1];
  }

  missing(obj: Node, message: string, extra: Extra = {}): void {
    const [s, e] = this.missingAt(obj);
    this.add(s, e, 'error', 'missing-field', message, { schema: true, ...extra });
  }

  unknownKeys(obj: Node, known: readonly string[], scope: Scope, skip: readonly string[] = []): void {
    for (const [key, p] of propsOf(obj)) {
      if (known.includes(key) || skip.includes(key)) continue;
      const near = closest(key, known);
      this.at(p.key, 'error', 'unknown-field', `invalid JSON: unknown field "${key}"`, {
        hint: `${didYouMean(near)}${cap(scope.what)} accepts ${list(known)}.`,
        rule: scope.rule,
        data: near.length ? { suggestions: near } : undefined,
        schema: true,
      });
    }
  }

  /** Checks a value against a spec; false when it does not conform. */
  value(node: Node | undefined, spec: Spec, name: string, scope: Scope): boolean {
    if (!node) return false;
    const wrong = (expected: string) => {
      this.at(node, 'error', 'wrong-type', `"${name}" must be ${expected}, not ${kindOf(node)}`, { rule: scope.rule, schema: true });
      return false;
    };
    const invalid = (message: string, hint?: string, schema = true) => {
      this.at(node, 'error', scope.invalid, message, { hint, rule: scope.rule, schema });
      return false;
    };
    if (typeof spec === 'string') {
      switch (spec) {
        case 'boolean':
          return node.type === 'boolean' || wrong('a boolean');
        case 'integer':
          return (node.type === 'number' && Number.isInteger(node.value)) || wrong('an integer');
        case 'string':
          return node.type === 'string' || wrong('a string');
        case 'string1':
          if (node.type !== 'string') return wrong('a string');
          return node.value !== '' || invalid(`'' is not a valid value for ${name} because it cannot be blank`);
        case 'hex32':
          if (node.type !== 'string') return wrong('a string');
          return HEX32.test(node.value) || invalid(`'${node.value}' is not a valid value for ${name}: expected 32 lowercase hexadecimal characters`);
        case 'object':
          return node.type === 'object' || wrong('an object');
        case 'digits':
          if (node.type !== 'string') return wrong('a string of digits');
          return DIGITS.test(node.value) || invalid(`'${node.value}' is not a valid value for ${name}: expected a version number such as "1"`);
      }
    }
    if ('enum' in spec) {
      if (node.type !== 'string') return wrong('a string');
      if (spec.enum.includes(node.value)) return true;
      const near = closest(node.value, spec.enum);
      return invalid(`'${node.value}' is not a valid value for ${name}`, `${didYouMean(near)}Expected one of ${list(spec.enum)}.`, false);
    }
    if ('array' in spec) {
      if (node.type !== 'array') return wrong('an array');
      const items = node.children ?? [];
      let ok = true;
      if (spec.min !== undefined && items.length < spec.min) ok = invalid(`"${name}" needs at least ${spec.min} item${spec.min === 1 ? '' : 's'}`);
      const seen = new Set<string>();
      for (const item of items) {
        if (!this.value(item, spec.array, `${name} item`, scope)) ok = false;
        else if (spec.unique && (item.type === 'string' || item.type === 'number')) {
          const k = String(item.value);
          if (seen.has(k)) ok = invalid(`"${name}" lists '${k}' twice; items must be unique`);
          seen.add(k);
        }
      }
      return ok;
    }
    if (node.type !== 'object') return wrong('an object');
    const inner: Scope = { ...scope, what: spec.name };
    this.unknownKeys(node, Object.keys(spec.object), inner);
    const props = propsOf(node);
    let ok = true;
    for (const r of spec.required ?? []) {
      if (!props.has(r)) {
        this.missing(node, `${spec.name} needs "${r}"`, { rule: scope.rule });
        ok = false;
      }
    }
    for (const [key, p] of props) {
      const s = spec.object[key];
      if (s && !this.value(p.value, s, key, inner)) ok = false;
    }
    return ok;
  }

  // -------------------------------------------------------------------------------------------

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
    const specs: Record<string, Spec> = {
      id: 'hex32',
      name: 'string1',
      description: 'string',
      kind: { enum: KINDS },
      version: 'digits',
      last_updated: 'string',
      phase: { enum: PHASES },
      shareable_entitlement_name: 'string',
      source: 'string',
    };
    for (const [key, spec] of Object.entries(specs)) {
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
      const rs = typeof id === 'string' ? managedById(this.options.catalog, id) : undefined;
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
    const simple: Record<string, Spec> = {
      id: 'hex32',
      version: 'digits',
      description: 'string',
      enabled: 'boolean',
      ref: 'string1',
      last_updated: 'string',
      categories: { array: 'string1', min: 1, unique: true },
      logging: { name: 'logging', object: { enabled: 'boolean' }, required: ['enabled'] },
      exposed_credential_check: { name: 'exposed_credential_check', object: { username_expression: 'string1', password_expression: 'string1' }, required: ['username_expression', 'password_expression'] },
      ratelimit: RATELIMIT,
    };
    for (const [key, spec] of Object.entries(simple)) {
      const p = props.get(key);
      if (p) this.value(p.value, spec, key, scope);
    }
    // The expression: its text is the language core's to check (an empty one included).
    const expr = props.get('expression');
    if (!expr) this.missing(rule, 'a rule needs an "expression"', { rule: index, hint: 'Use `true` for a rule that applies to every request.' });
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
      this.at(actionProp!.value!, 'error', 'missing-field', 'action parameters are required for the set_config action', { rule: index, schema: true });
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
    const used = new Set<string>();
    for (const r of rule.parent?.children ?? []) {
      const ref = propsOf(r).get('ref')?.value?.value;
      if (typeof ref === 'string') used.add(ref);
    }
    let ref = base;
    for (let n = 2; used.has(ref); n++) ref = `${base}_${n}`;
    return ref;
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

  /** Reports an id that names no known ruleset; returns the managed one it names. */
  private knownRuleset(node: Node, rule: number, severity: Severity, id: string = node.value as string): ManagedRuleset | undefined {
    const rs = managedById(this.options.catalog, id);
    if (rs || this.options.customRulesetIds?.includes(id)) return rs;
    const names = this.options.catalog.rulesets.map((r) => `${r.name} \`${r.id}\``).join(', ');
    this.at(node, severity, 'unknown-managed-ruleset', `'${id}' is not a known managed ruleset${this.options.customRulesetIds ? ' nor one of the account\'s custom rulesets' : ''}`, {
      rule,
      hint: names ? `Managed rulesets: ${names}.` : undefined,
      data: { suggestions: this.options.catalog.rulesets.map((r) => r.id) },
    });
    return undefined;
  }

  private knownRule(node: Node, rs: ManagedRuleset, version: ManagedRulesetVersion | undefined, rule: number): ManagedRule | undefined {
    if (node.type !== 'string' || !version) return undefined;
    const found = version.rules.find((r) => r.id === node.value);
    if (found) return found;
    this.at(node, 'error', 'unknown-rule-id', `'${node.value}' is not a rule of ${rs.name} (version ${version.version})`, {
      rule,
      hint: 'Rule ids are the 32-hex ids of the managed ruleset\'s rules; completion lists them with their descriptions.',
    });
    return undefined;
  }

  private executedRuleset(params: Node | undefined): ManagedRuleset | undefined {
    const id = propsOf(params).get('id')?.value?.value;
    return typeof id === 'string' ? managedById(this.options.catalog, id) : undefined;
  }

  // -------------------------------------------------------------------------------------------
  // execute: the ruleset it deploys and the overrides

  private execute(node: Node, rule: number, ruleNode: Node): void {
    const scope: Scope = { what: 'the execute action_parameters', invalid: 'invalid-action-parameters', rule };
    const props = propsOf(node);
    const paramsPath = [...this.rulesPath, rule, 'action_parameters'];
    const idProp = props.get('id');
    let rs: ManagedRuleset | undefined;
    let custom = false;
    if (!idProp) this.missing(node, 'execute needs the "id" of the ruleset to run', { rule });
    else if (this.value(idProp.value, 'hex32', 'id', scope)) {
      const id = idProp.value!.value as string;
      rs = managedById(this.options.catalog, id);
      custom = !rs && (this.options.customRulesetIds?.includes(id) ?? false);
      if (!rs && !custom) {
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
        const zoneEntry = this.kind === undefined || this.kind === 'zone';
        const first = this.executes.find((e) => e.id === id);
        if (zoneEntry && first && propsOf(ruleNode).get('enabled')?.value?.value !== false) {
          this.at(idProp.value!, 'error', 'duplicate-execute', `${rs.name} is already executed by rule ${first.rule + 1}; a zone can deploy each managed ruleset once`, {
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
          this.at(versionProp.value, 'error', 'unknown-ruleset-version', `${rs.name} has no version ${v}`, {
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
  private misplaced(node: Node, severity: Severity, rs: ManagedRuleset | undefined, rule: number, where: Omit<MisplacedData, 'anomalyRuleId'>, place: string): void {
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
      const checked = checkExpression(r.text, { plan: this.options.plan, phase, allowManaged });
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

const cap = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

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
  return v.problems.sort((a, b) => a.start - b.start || a.end - b.end);
}

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
