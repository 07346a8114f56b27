/**
 * What the core finds about one rule a write brings, in the API's words and codes: its
 * errors and warnings at rule 0, each pointer relative to the rule. Pure (values in,
 * values out), so the rule-check worker (ruleCheckWorker.ts) and the service's thread
 * (ruleChecker.ts, when there is no worker) run the same code; routes/rulesets.ts puts
 * the findings of a write's rules together, at their places in the request body.
 */
import { findNodeAtLocation, findNodeAtOffset, getNodePath } from 'jsonc-parser';
import type { Diagnostic } from '../language/index';
import { engineReport } from '../language/report';
import type { Phase, Plan } from '../language/scheme/types';
import { defaultCatalog } from '../managed/catalog';
import { valueTree } from '../rulesets/jsonTree';
import { isAccountKind, type RulesetKind } from '../rulesets/model';
import { ACTION_PARAMETERS_REQUIRED, EXECUTE_TARGET_CODES, MISSING_EXPRESSION, validateRulesetValue, type RulesetProblem } from '../rulesets/validate';
import { CODES, type ApiMessage } from './api';
import { escapePointer, type JsonObject } from './body';
import { expressionVerdict, refusalText } from './expressionCheck';

/** The ruleset a rule is checked for (plain data: it is sent to the worker). */
export interface RuleTarget {
  readonly kind: RulesetKind;
  readonly phase: Phase;
  /** The zone's plan; undefined at account level. */
  readonly plan?: Plan;
  /** The ruleset being written (an execute rule may not run it). */
  readonly id?: string;
}

const CATALOG = defaultCatalog;
/** The most warnings listed for one rule (docs/service.md "Limits"); the rest are counted. */
const MAX_RULE_WARNINGS = 10;

/** How a core problem is answered: its API code. */
function codeOf(p: RulesetProblem): number {
  switch (p.code) {
    case 'unknown-field':
    case 'wrong-type':
    case 'invalid-json':
      return CODES.invalidJson;
    case 'logging-not-allowed':
      return CODES.loggingOnlyWithSkip;
    case ACTION_PARAMETERS_REQUIRED:
      return CODES.actionParametersRequired;
    default:
      return CODES.invalidValue;
  }
}

/** Problems about the id an execute rule runs, answered as the API's refusal of that id. */
const EXECUTE_TARGET = new Set<string>(EXECUTE_TARGET_CODES);

/** Core problems the API answers otherwise (or not at all). */
const HANDLED_HERE = new Set(['duplicate-id', 'duplicate-ref', 'missing-ref', 'unknown-managed-ruleset']);

export interface Found {
  readonly rule: number;
  readonly order: number;
  readonly message: ApiMessage;
}

/** What checking one rule found, at rule 0 and pointers relative to the rule. */
export interface RuleFindings {
  readonly errors: readonly Found[];
  readonly warnings: readonly Found[];
}

/** The problems of rule `r` (decoded) in a ruleset of `target`, whose account has the custom rulesets `custom` (id → phase: what an execute rule may run). */
export function findRuleProblems(target: RuleTarget, custom: ReadonlyMap<string, Phase>, r: JsonObject): RuleFindings {
  const errors: Found[] = [];
  const warnings: Found[] = [];
  // The rule as a one-rule ruleset, a tree made from the decoded value (not printed and parsed again).
  const root = valueTree({ kind: target.kind, phase: target.phase, rules: [r] });
  const problems = validateRulesetValue(root, {
    catalog: CATALOG,
    plan: target.plan,
    phase: target.phase,
    executeTargets: { custom, ...(target.id !== undefined ? { self: target.id } : {}) },
  });
  for (const p of problems) {
    const entitlement = p.code === 'plan-required' && typeof p.data?.rulesetId === 'string';
    if ((p.severity !== 'error' && p.severity !== 'warning') || HANDLED_HERE.has(p.code)) continue;
    const node = findNodeAtOffset(root, p.start);
    const path = node ? getNodePath(node) : [];
    const inRule = (typeof path[1] === 'number' && path[0] === 'rules') || p.rule !== undefined;
    if (!inRule) continue;
    // A missing expression reads as the engine's blank expression (rules-api §2.6).
    if (p.code === MISSING_EXPRESSION) continue;
    const pointer = path
      .slice(2)
      .map((s) => `/${escapePointer(String(s))}`)
      .join('');
    if (EXECUTE_TARGET.has(p.code)) {
      errors.push({ rule: 0, order: p.start, message: { code: CODES.invalidValue, message: `'${String(p.data!.rulesetId)}' is not a valid value for id because ${p.message}`, source: { pointer } } });
      continue;
    }
    if (entitlement) {
      // A managed ruleset the zone's plan is not entitled to: the whole write fails.
      const message = `'${String(p.data!.rulesetId)}' is not a valid value for id because ${p.message}`;
      errors.push({ rule: 0, order: p.start, message: { code: CODES.planFeature, message, source: { pointer } } });
      continue;
    }
    if (p.severity === 'warning') {
      warnings.push({ rule: 0, order: p.start, message: { code: CODES.rulesetWarning, message: p.message, source: { pointer } } });
      continue;
    }
    // Every decoding problem reads as the strict decoder's ("invalid JSON: …").
    const message = p.code === 'wrong-type' ? `invalid JSON: ${p.message}` : p.message;
    errors.push({ rule: 0, order: p.start, message: { code: codeOf(p), message, source: { pointer } } });
  }
  const at = (key: string, message: ApiMessage, into = errors) => {
    const node = findNodeAtLocation(root, ['rules', 0, ...key.split('/')]);
    // A missing field is reported after the rule's other problems (the API answers a
    // PATCH of only action_parameters with "action is required…", then 20125).
    into.push({ rule: 0, order: node ? node.offset : Number.MAX_SAFE_INTEGER, message });
  };
  let unlisted = 0;
  const warn = (key: string, exprText: string, field: string, ws: readonly Diagnostic[]) => {
    for (const d of ws) {
      // Each quotes the expression (up to 4 KB): past the cap they are only counted, not written.
      if (warnings.length >= MAX_RULE_WARNINGS) unlisted++;
      else at(key, { code: CODES.rulesetWarning, message: expressionWarning(exprText, field, d), source: { pointer: `/${key}` } }, warnings);
    }
  };
  // expressions
  const expr = r.expression;
  if (expr === undefined || (typeof expr === 'string' && expr.trim() === '')) {
    // Blank as the Filters API has it too: nothing but white space.
    at('expression', { code: CODES.blankExpression, message: `'${expr ?? ''}' is not a valid value for expression because the expression cannot be blank`, source: { pointer: '/expression' } });
  } else if (typeof expr === 'string') {
    const ch = expressionCheck(expr, 'expression', target);
    if (ch.error) at('expression', { code: CODES.invalidValue, message: ch.error, source: { pointer: '/expression' } });
    else warn('expression', expr, 'expression', ch.warnings);
  }
  const counting = (r.ratelimit as JsonObject | undefined)?.counting_expression;
  // Blank is the rule's own expression (reference: "defaults to the rule expression, and so does an empty string").
  if (typeof counting === 'string' && counting.trim() !== '') {
    const ch = expressionCheck(counting, 'counting_expression', target);
    if (ch.error) at('ratelimit/counting_expression', { code: CODES.invalidValue, message: ch.error, source: { pointer: '/ratelimit/counting_expression' } });
    else warn('ratelimit/counting_expression', counting, 'counting_expression', ch.warnings);
  }
  const params = r.action_parameters as JsonObject | undefined;
  // set_config with `{}` sets nothing: the API's answer is the one for no parameters (tf #2285).
  if (r.action === 'set_config' && params !== undefined && typeof params === 'object' && !Array.isArray(params) && Object.keys(params).length === 0) {
    at('action_parameters', { code: CODES.actionParametersRequired, message: 'action parameters are required for the set_config action', source: { pointer: '/action_parameters' } });
  }
  if (warnings.length > MAX_RULE_WARNINGS) {
    warnings.sort((a, b) => a.order - b.order);
    unlisted += warnings.length - MAX_RULE_WARNINGS;
    warnings.length = MAX_RULE_WARNINGS;
  }
  if (unlisted > 0) {
    const message = `${unlisted} more warnings about this rule are not listed (the service lists at most ${MAX_RULE_WARNINGS} per rule); \`rulesmith check\` on the ruleset lists them all`;
    warnings.push({ rule: 0, order: Number.MAX_SAFE_INTEGER, message: { code: CODES.rulesetWarning, message } });
  }
  return { errors, warnings };
}

/** The API's refusal of an expression: the first error in the engine's wording and layout (rules-api §1.6), else a feature the zone's plan or the phase does not have, in the same layout; else the core's warnings about it. */
function expressionCheck(text: string, field: string, target: RuleTarget): { error?: string; warnings: Diagnostic[] } {
  const v = expressionVerdict(text, { plan: target.plan, phase: target.phase, allowManaged: target.kind === 'managed', countingExpression: field === 'counting_expression', account: isAccountKind(target.kind) });
  if (v.error) return { error: refusalText(text, field, 'could not parse filter expression', v.error, 'Filter parsing error'), warnings: [] };
  if (v.refused) return { error: refusalText(text, field, 'it uses what this ruleset cannot', v.refused, 'Filter error'), warnings: [] };
  return { warnings: [...v.warnings] };
}

/** A warning about an accepted expression, in the engine's layout, with the core's advice. */
function expressionWarning(text: string, field: string, d: Diagnostic): string {
  return `'${text}' is accepted for ${field}, with a warning: ${engineReport(text, d, 'Filter warning')}${d.hint ? d.hint : ''}`.replace(/\n$/, '');
}
