/**
 * What the ruleset validator reports, and the checks every part of it shares: a problem at
 * a JSON node, unknown and missing keys, a value against its spec (the API's strict
 * decoding), the rulesets an id names. rulesets/validateOverrides.ts and
 * rulesets/validate.ts extend it.
 */
import type { JSONPath, Node } from 'jsonc-parser';
import type { DiagnosticCode, Severity } from '../language/diagnostics';
import { editDistance } from '../language/scheme/index';
import type { Phase, Plan } from '../language/scheme/types';
import { findManagedRuleset, type ManagedCatalog, type ManagedRule, type ManagedRuleset, type ManagedRulesetVersion } from './catalog';
import { propsOf } from './jsonTree';
import type { RulesetKind } from './model';

/** A rule without `expression` (the rules service answers it as a blank expression). */
export const MISSING_EXPRESSION = 'missing-expression';
/** `set_config` without action_parameters (the rules service's 20113). */
export const ACTION_PARAMETERS_REQUIRED = 'action-parameters-required';
/**
 * What an execute rule runs, checked against `ValidateOptions.executeTargets`: the ruleset
 * itself, an id that is neither managed nor a custom ruleset of the account, a custom
 * ruleset of another phase. `data.rulesetId` is the id; the message says why it is refused.
 */
export const EXECUTE_TARGET_CODES = ['execute-self', 'execute-target-unknown', 'execute-target-phase'] as const;
export type ExecuteTargetCode = (typeof EXECUTE_TARGET_CODES)[number];

/**
 * Every code of a ruleset's own problems (a problem inside an expression has the language's
 * `DiagnosticCode`). `add` and `at` take only these, so a new code is added here, and then
 * needs its general description (rulesets/problemDescriptions.ts) to compile.
 */
export const RULESET_PROBLEM_CODES = [
  'invalid-json',
  'duplicate-key',
  'wrong-type',
  'unknown-field',
  'missing-field',
  'invalid-value',
  'unknown-action',
  'action-not-in-phase',
  'plan-required',
  'invalid-action-parameters',
  'logging-not-allowed',
  'ratelimit-not-in-phase',
  'unknown-managed-ruleset',
  'unknown-ruleset-version',
  'execute-phase-mismatch',
  'unknown-category',
  'unknown-rule-id',
  'misplaced-score-threshold',
  'misplaced-override-action',
  'invalid-override-action',
  'duplicate-override',
  'duplicate-id',
  'duplicate-ref',
  'duplicate-execute',
  'owasp-all-paranoia-levels',
  'missing-ref',
  MISSING_EXPRESSION,
  ACTION_PARAMETERS_REQUIRED,
  ...EXECUTE_TARGET_CODES,
] as const;
export type RulesetProblemCode = (typeof RULESET_PROBLEM_CODES)[number];

export interface RulesetProblem {
  /** Document offsets of the node the problem is about. */
  readonly start: number;
  readonly end: number;
  readonly severity: Severity;
  /** A ruleset code, or the language core's code for a problem inside an expression. */
  readonly code: RulesetProblemCode | DiagnosticCode;
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
  /**
   * Every custom ruleset of the account (id → phase), taken as complete, and the id of the
   * ruleset being validated: an execute rule may run only a managed ruleset or one of
   * these in the same phase, and never the ruleset itself (`EXECUTE_TARGET_CODES`).
   */
  readonly executeTargets?: { readonly custom: ReadonlyMap<string, Phase>; readonly self?: string };
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

export const HEX32 = /^[0-9a-f]{32}$/;
export const DIGITS = /^[0-9]+$/;

export type Spec =
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

export interface Scope {
  /** Where in the API the object is, for messages ("a block response"). */
  readonly what: string;
  /** The code for invalid values inside it. */
  readonly invalid: 'invalid-value' | 'invalid-action-parameters';
  readonly rule?: number;
}

export interface Extra {
  readonly hint?: string;
  readonly rule?: number;
  readonly data?: Record<string, unknown>;
  readonly schema?: boolean;
}

export const kindOf = (n: Node | undefined): string =>
  !n ? 'nothing' : n.type === 'number' ? (Number.isInteger(n.value) ? 'an integer' : 'a number') : n.type === 'null' ? 'null' : n.type === 'array' ? 'an array' : n.type === 'object' ? 'an object' : `a ${n.type}`;

/** The closest candidates (at most 3), for "did you mean". */
export function closest(word: string, candidates: Iterable<string>): string[] {
  const w = word.toLowerCase();
  const scored: [string, number][] = [];
  for (const c of candidates) {
    const d = editDistance(w, c.toLowerCase());
    const limit = Math.max(2, Math.floor(c.length / 3));
    if (d <= limit || (w.length >= 3 && c.toLowerCase().includes(w))) scored.push([c, d]);
  }
  scored.sort((a, b) => a[1] - b[1] || a[0].localeCompare(b[0]));
  // Only the nearest ones: `wordpres` suggests `wordpress`, not also `wordpress-plugin`.
  const best = scored[0]?.[1] ?? 0;
  return scored.filter(([, d]) => d <= best + 1).slice(0, 3).map(([c]) => c);
}

export const list = (xs: readonly string[]) => xs.map((x) => `\`${x}\``).join(', ');
export const didYouMean = (xs: readonly string[]) => (xs.length ? `Did you mean ${xs.map((x) => `\`${x}\``).join(' or ')}? ` : '');
export const cap = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

export abstract class RulesetChecker {
  readonly problems: RulesetProblem[] = [];
  phase?: Phase;
  kind?: RulesetKind;
  rulesPath: JSONPath = ['rules'];

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

  /** Reports an id that names no known ruleset; returns the managed one it names. */
  protected knownRuleset(node: Node, rule: number, severity: Severity, id: string = node.value as string): ManagedRuleset | undefined {
    const rs = findManagedRuleset(this.options.catalog, id);
    if (rs || this.options.customRulesetIds?.includes(id)) return rs;
    const names = this.options.catalog.rulesets.map((r) => `${r.name} \`${r.id}\``).join(', ');
    this.at(node, severity, 'unknown-managed-ruleset', `'${id}' is not a known managed ruleset${this.options.customRulesetIds ? ' nor one of the account\'s custom rulesets' : ''}`, {
      rule,
      hint: names ? `Managed rulesets: ${names}.` : undefined,
      data: { suggestions: this.options.catalog.rulesets.map((r) => r.id) },
    });
    return undefined;
  }

  protected knownRule(node: Node, rs: ManagedRuleset, version: ManagedRulesetVersion | undefined, rule: number): ManagedRule | undefined {
    if (node.type !== 'string' || !version) return undefined;
    const found = version.rules.find((r) => r.id === node.value);
    if (found) return found;
    this.at(node, 'error', 'unknown-rule-id', `'${node.value}' is not a rule of ${rs.name} (version ${version.version})`, {
      rule,
      hint: 'Rule ids are the 32-hex ids of the managed ruleset\'s rules; completion lists them with their descriptions.',
    });
    return undefined;
  }

  protected executedRuleset(params: Node | undefined): ManagedRuleset | undefined {
    const id = propsOf(params).get('id')?.value?.value;
    return typeof id === 'string' ? findManagedRuleset(this.options.catalog, id) : undefined;
  }
}
