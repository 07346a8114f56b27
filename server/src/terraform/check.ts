/**
 * Checks a `.tf` file: each rule expression (locate.ts) with the language core, at its exact
 * place in the file, and each `cloudflare_ruleset` with the ruleset validator (actions per
 * phase, overrides, the misplaced `score_threshold`, …), each problem placed on the
 * attribute or block it is about. The CLI (`rulesmith check main.tf`) and the language
 * server share it; HCL syntax errors come from HashiCorp's parser (hcl.ts). An execute
 * rule's id written as a reference to a ruleset of the file (`cloudflare_ruleset.x.id`, as
 * export.ts writes an executed custom ruleset) names that ruleset, never an unknown managed
 * one: it is judged by the resource's own `kind` (executeReferences): a custom ruleset is
 * what an execute rule runs; an entry point (kind zone or root) is not, and the service
 * refuses it (`execute-target-unknown`), as it refuses a ruleset running itself (`execute-self`).
 *
 * Positions: the scanner's decoding of a literal is trusted when it renders back to exactly
 * what hcl2json read (it always does, except where Terraform folded a constant such as
 * `${"x"}`); otherwise the problems of that expression point at the whole literal.
 */
import { checkExpression, type CheckOptions, type CheckResult, type Diagnostic } from '../language/index';
import { PHASES, type Phase } from '../language/scheme/types';
import type { ManagedCatalog } from '../rulesets/catalog';
import type { TerraformProblemCode } from '../rulesets/problemDescriptions';
import { validateRulesetJson, type RulesetProblem } from '../rulesets/validate';
import type { HclParse } from './hcl';
import { asTemplate, attribute, type HclBlock, type HclObject, type HclValue, type Span } from './hclScan';
import { dependencyName, locate, ruleObjects, type ExpressionSite, type Located, type RulesetSite } from './locate';
import { importIds, resourcesOf, rulesetReference, toRuleset, untemplate, type TfRulesetResource } from './rulesetJson';

export interface TfProblem {
  /** Offsets into the `.tf` text. */
  readonly start: number;
  readonly end: number;
  readonly severity: Diagnostic['severity'];
  /** The language's code (an expression), the ruleset validator's (a `cloudflare_ruleset`), or one of Terraform's own. */
  readonly code: Diagnostic['code'] | RulesetProblem['code'] | TerraformProblemCode;
  readonly message: string;
  readonly hint?: string;
  /** `cloudflare_ruleset.waf` */
  readonly resource?: string;
  readonly rule: number | null;
  readonly ruleName?: string;
  /** For a problem inside an expression: the text checked and the core's diagnostic (for the engine-style report). */
  readonly expression?: { readonly text: string; readonly diagnostic: Diagnostic };
  readonly data?: Readonly<Record<string, unknown>>;
}

export interface TfCheckOptions extends CheckOptions {
  readonly catalog?: ManagedCatalog;
  readonly customRulesetIds?: readonly string[];
  /** How an expression is checked (the language server passes its cache). */
  readonly check?: (text: string, options: CheckOptions) => CheckResult;
}

export const INTERPOLATED = 'interpolated-expression' satisfies TerraformProblemCode;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const first = (v: unknown): unknown => (Array.isArray(v) ? v[0] : v);

/** What hcl2json read for an expression site, or undefined. */
function parsedValue(json: Record<string, unknown>, s: ExpressionSite): unknown {
  const [type, name] = s.resource.split('.');
  const res = first(isObject(json.resource) && isObject(json.resource[type]) ? json.resource[type][name] : undefined);
  if (!isObject(res)) return undefined;
  if (s.resourceType === 'cloudflare_ruleset') {
    const rule = Array.isArray(res.rules) ? res.rules[s.rule ?? -1] : undefined;
    if (!isObject(rule)) return undefined;
    if (!s.counting) return rule.expression;
    const limits = first(rule.ratelimit);
    return isObject(limits) ? limits.counting_expression : undefined;
  }
  if (s.resourceType === 'cloudflare_filter') return res.expression;
  const filter = first(res.filter);
  return isObject(filter) ? filter.expression : undefined;
}

export function checkTerraform(text: string, parsed: HclParse, options: TfCheckOptions = {}, located: Located = locate(text)): TfProblem[] {
  if (!parsed.ok) return [{ start: parsed.error.start, end: parsed.error.end, severity: 'error', code: 'invalid-hcl', message: parsed.error.message, rule: null }];
  const out: TfProblem[] = [];
  for (const s of located.expressions) out.push(...expressionProblems(text, s, parsedValue(parsed.json, s), options));
  for (const r of located.rulesets) out.push(...rulesetProblems(r, parsed.json, options));
  return out.sort((a, b) => a.start - b.start || a.end - b.end);
}

function optionsFor(s: ExpressionSite, options: TfCheckOptions): CheckOptions {
  const { catalog: _c, customRulesetIds: _i, check: _k, ...rest } = options;
  const phase = s.phase !== undefined && (PHASES as readonly string[]).includes(s.phase) ? (s.phase as Phase) : options.phase;
  return { ...rest, phase, ...(s.counting ? { countingExpression: true } : {}), ...(s.account ? { account: true } : {}) };
}

/** The problems of one expression (exact positions when the scanner agrees with hcl2json). */
export function expressionProblems(source: string, s: ExpressionSite, value: unknown, options: TfCheckOptions): TfProblem[] {
  const check = options.check ?? checkExpression;
  const base = { resource: s.resource, rule: s.rule, ...(s.ruleName !== undefined ? { ruleName: s.ruleName } : {}) };
  const lit = s.literal;
  if (lit && (typeof value !== 'string' || asTemplate(lit) === value)) {
    const out: TfProblem[] = [];
    const at = (o: number) => lit.offsets[Math.max(0, Math.min(o, lit.offsets.length - 1))];
    for (const it of s.dependsOn) {
      out.push({ ...base, start: at(it.start), end: at(it.end), severity: 'information', code: INTERPOLATED, message: `cannot check: depends on ${dependencyName(it)}`, hint: s.checkText === undefined ? 'Only an interpolation inside a string of the expression ("${var.host}") lets the rest be checked.' : undefined });
    }
    if (s.checkText === undefined) return out;
    const checkText = s.checkText;
    for (const d of check(checkText, optionsFor(s, options)).diagnostics) {
      // A problem of the placeholder itself says nothing about the real value.
      if (s.dependsOn.some((it) => d.range.start < it.end && it.start < d.range.end)) continue;
      out.push({ ...base, start: at(d.range.start), end: at(d.range.end), severity: d.severity, code: d.code, message: d.message, ...(d.hint ? { hint: d.hint } : {}), ...(d.data ? { data: d.data } : {}), expression: { text: checkText, diagnostic: d } });
    }
    return out;
  }
  const span: Span = s.value;
  if (typeof value !== 'string') {
    if (s.value.kind === 'other') return [{ ...base, start: span.start, end: span.end, severity: 'information', code: INTERPOLATED, message: `cannot check: depends on ${source.slice(s.value.start, s.value.end)}` }];
    return [];
  }
  const literal = untemplate(value);
  if (literal === undefined) {
    const refs = [...value.matchAll(/\$\{([^}]*)\}/g)].map((m) => m[1].trim());
    return [{ ...base, start: span.start, end: span.end, severity: 'information', code: INTERPOLATED, message: `cannot check: depends on ${refs.join(', ') || value}` }];
  }
  return check(literal, optionsFor(s, options)).diagnostics.map((d) => ({ ...base, start: span.start, end: span.end, severity: d.severity, code: d.code, message: d.message, ...(d.hint ? { hint: d.hint } : {}), expression: { text: literal, diagnostic: d } }));
}

/** A JSON text with the span of every value (and property key) by path, to map the validator's offsets back. */
interface Placed {
  readonly path: readonly (string | number)[];
  readonly start: number;
  readonly end: number;
  readonly key: boolean;
  readonly value: unknown;
}

function serialize(v: unknown): { json: string; placed: Placed[] } {
  const placed: Placed[] = [];
  let json = '';
  const write = (x: unknown, path: (string | number)[]): void => {
    const start = json.length;
    if (Array.isArray(x)) {
      json += '[';
      x.forEach((item, i) => {
        if (i) json += ',';
        write(item, [...path, i]);
      });
      json += ']';
    } else if (isObject(x)) {
      json += '{';
      Object.entries(x).forEach(([k, item], i) => {
        if (i) json += ',';
        const ks = json.length;
        json += JSON.stringify(k);
        placed.push({ path: [...path, k], start: ks, end: json.length, key: true, value: item });
        json += ':';
        write(item, [...path, k]);
      });
      json += '}';
    } else json += JSON.stringify(x) ?? 'null';
    placed.push({ path, start, end: json.length, key: false, value: x });
  };
  write(v, []);
  return { json, placed };
}

function rulesetProblems(r: RulesetSite, json: Record<string, unknown>, options: TfCheckOptions): TfProblem[] {
  const resources = resourcesOf(json, 'cloudflare_ruleset');
  const resource = resources.find((x) => x.name === r.name);
  if (!resource) return [];
  const ids = importIds(json);
  const { ruleset, resolved } = toRuleset(resource, ids);
  // Ids written as a reference to another ruleset of the file (`cloudflare_ruleset.x.id`): judged by executeReferences.
  const referenced = new Set(resolved.map((x) => x.path));
  const { json: body, placed } = serialize(ruleset);
  const problems = validateRulesetJson(body, {
    catalog: options.catalog,
    plan: options.plan,
    phase: options.phase,
    // The custom rulesets of the file are the account's too (their import ids): a skip rule
    // naming one by its literal id, as the export writes it, names a known ruleset.
    customRulesetIds: [...(options.customRulesetIds ?? []), ...fileCustomRulesetIds(ids, resources)],
    expressions: false,
  } as Parameters<typeof validateRulesetJson>[1]);
  const rules = ruleObjects(r.body);
  const out: TfProblem[] = [];
  for (const p of problems) {
    if (p.code === 'invalid-json') continue;
    // The node the validator points at: the smallest placed span holding its start.
    let node: Placed | undefined;
    for (const x of placed) if (x.start <= p.start && p.start < x.end && (!node || x.end - x.start < node.end - node.start)) node = x;
    // A value Terraform computes at plan time cannot be judged now.
    if (node && typeof node.value === 'string' && node.value.includes('${')) continue;
    // A reference to a ruleset of the file names that ruleset, not a managed one: executeReferences judges it by its kind.
    if (p.code === 'unknown-managed-ruleset' && node && !node.key && referenced.has(pathText(node.path))) continue;
    let span = placeIn(r, node?.path ?? [], node?.key ?? false);
    // The validator points inside the node (an object's `{` for a missing key): its first character.
    if (node && !node.key && p.end - p.start < node.end - node.start) span = { start: span.start, end: span.start + 1 };
    const rule = p.rule ?? null;
    out.push({
      start: span.start,
      end: span.end,
      severity: p.severity,
      code: p.code,
      message: p.message,
      ...(p.hint ? { hint: p.hint } : {}),
      resource: r.resource,
      rule,
      ...ruleName(rules, rule),
    });
  }
  out.push(...executeReferences(r, ruleset, resolved, resources, rules));
  return out;
}

/** The ids, from their import blocks, of the file's custom rulesets (`kind = "custom"`). */
function fileCustomRulesetIds(ids: ReturnType<typeof importIds>, resources: readonly TfRulesetResource[]): string[] {
  const custom = new Set(resources.filter((x) => typeof x.value.kind === 'string' && untemplate(x.value.kind) === 'custom').map((x) => `cloudflare_ruleset.${x.name}`));
  return [...ids].filter(([to, v]) => custom.has(to) && v.accountId !== undefined).map(([, v]) => v.id);
}

/** `{ ruleName }` when rule `rule` of the resource has a literal `ref`. */
function ruleName(rules: ReturnType<typeof ruleObjects>, rule: number | null): { ruleName?: string } {
  const ref = rule === null ? undefined : rules[rule] && attribute(rules[rule], 'ref')?.value;
  return ref?.kind === 'string' ? { ruleName: ref.text } : {};
}

/**
 * The execute rules of `r` whose id refers to a ruleset of the file (resolved through an
 * import block or not), judged by that resource's `kind`: a custom ruleset is what an
 * execute rule runs; any other kind (an entry point: zone or root) is not, which the service
 * refuses as an id that is no managed or custom ruleset (`execute-target-unknown`); the
 * resource itself is `execute-self`. A kind Terraform computes, or none written (a problem of
 * that resource), is not judged, nor a reference to a resource the file lacks (Terraform's).
 */
function executeReferences(
  r: RulesetSite,
  ruleset: Record<string, unknown>,
  resolved: readonly { readonly path: string; readonly reference: string }[],
  resources: readonly TfRulesetResource[],
  rules: ReturnType<typeof ruleObjects>,
): TfProblem[] {
  const out: TfProblem[] = [];
  const list = Array.isArray(ruleset.rules) ? ruleset.rules : [];
  list.forEach((rule: unknown, i) => {
    if (!isObject(rule) || rule.action !== 'execute' || !isObject(rule.action_parameters)) return;
    const id = rule.action_parameters.id;
    const path = `rules[${i}].action_parameters.id`;
    const reference = resolved.find((x) => x.path === path)?.reference;
    // Resolved: `cloudflare_ruleset.x.id`; else the value as written, `${cloudflare_ruleset.x.id}`.
    const name = (reference ?? (typeof id === 'string' ? rulesetReference(id) : undefined))?.split('.')[1];
    if (name === undefined) return;
    const target = resources.find((x) => x.name === name);
    if (!target) return;
    const kind = typeof target.value.kind === 'string' ? untemplate(target.value.kind) : undefined;
    if (target.name !== r.name && (kind === undefined || kind === 'custom')) return;
    const span = placeIn(r, ['rules', i, 'action_parameters', 'id'], false);
    const base = { start: span.start, end: span.end, severity: 'error' as const, resource: r.resource, rule: i, ...ruleName(rules, i) };
    const data = { resource: `cloudflare_ruleset.${name}`, ...(reference !== undefined && typeof id === 'string' ? { rulesetId: id } : {}) };
    if (target.name === r.name) {
      out.push({ ...base, code: 'execute-self', message: `cloudflare_ruleset.${name} is this ruleset: a ruleset cannot execute itself`, data });
      return;
    }
    const what = kind === 'zone' || kind === 'root' ? `an entry point (kind = "${kind}")` : `of kind "${kind}"`;
    out.push({
      ...base,
      code: 'execute-target-unknown',
      message: `cloudflare_ruleset.${name} is ${what}, not a custom ruleset: an execute rule runs a managed ruleset or a custom ruleset of the account, and the service refuses any other id`,
      hint: `${kind === 'zone' || kind === 'root' ? 'An entry point runs when its phase does and cannot be executed. ' : ''}Point the rule at a custom ruleset (kind = "custom") or a managed ruleset, or move these rules into a custom ruleset and execute that.`,
      data,
    });
  });
  return out;
}

/** A JSON path as rulesetJson.ts writes it: `rules[1].action_parameters.id`. */
const pathText = (path: readonly (string | number)[]): string => path.map((seg, i) => (typeof seg === 'number' ? `[${seg}]` : i === 0 ? seg : `.${seg}`)).join('');

/** Where a JSON path of the ruleset is written in the resource: the attribute (or block) it names, as deep as the file goes. */
export function placeIn(r: RulesetSite, path: readonly (string | number)[], key: boolean): Span {
  let node: HclValue | HclObject = r.body;
  let found: Span = { start: r.span.start, end: r.body.start };
  let nameSpan: Span | undefined;
  for (let i = 0; i < path.length; i++) {
    const seg = path[i];
    if (typeof seg === 'number') {
      if (node.kind !== 'list' || !node.items[seg]) break;
      node = node.items[seg];
      found = node;
      nameSpan = undefined;
      continue;
    }
    if (node.kind !== 'object') break;
    const attr = attribute(node, seg);
    if (attr) {
      node = attr.value;
      found = attr.value;
      nameSpan = attr.nameSpan;
      continue;
    }
    const blocks: readonly HclBlock[] = node.blocks.filter((b) => b.type === seg);
    if (blocks.length === 0) break;
    const index = path[i + 1];
    const block: HclBlock | undefined = typeof index === 'number' ? blocks[index] : blocks[0];
    if (!block) break;
    if (typeof index === 'number') i++;
    node = block.body;
    found = { start: block.start, end: block.body.start };
    nameSpan = { start: block.start, end: block.start + seg.length };
  }
  return key && nameSpan ? nameSpan : found;
}
