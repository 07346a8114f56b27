/**
 * The rule expressions of a `.tf` file and where they are written: every `expression` of a
 * `cloudflare_ruleset`'s rules (v5 `rules = [{ … }]` and v4 `rules { … }`), of a
 * `cloudflare_filter`, and of a `cloudflare_firewall_rule`'s `filter`. Nothing else in the
 * file is ours (the HashiCorp Terraform extension owns the rest).
 *
 * Interpolations: a `${var.host}` inside a string of the Rules language (`http.host eq
 * "${var.host}"`) is checked as a placeholder string of the same length, so the rest of the
 * expression is still checked and positions do not move; one anywhere else (`ip.src in
 * ${var.ips}`) leaves the expression unchecked. Both are reported as "cannot check:
 * depends on var.host".
 */
import { isAccountKind } from '../rulesets/model';
import { attribute, scanHcl, type HclObject, type HclString, type HclValue, type Interpolation, type Span } from './hclScan';

export const RULE_RESOURCES = ['cloudflare_ruleset', 'cloudflare_filter', 'cloudflare_firewall_rule'] as const;
export type RuleResourceType = (typeof RULE_RESOURCES)[number];

export interface ExpressionSite {
  readonly resourceType: RuleResourceType;
  /** `cloudflare_ruleset.waf` */
  readonly resource: string;
  /** Index of the rule in the ruleset's `rules` (cloudflare_ruleset only). */
  readonly rule: number | null;
  readonly ruleName?: string;
  /** The ruleset's `phase`, when written as a literal. */
  readonly phase?: string;
  /** A rate limiting rule's `ratelimit.counting_expression`, not its `expression`: it may read the origin's answer. */
  readonly counting?: boolean;
  /** The ruleset is an account's (`kind` `root` or `custom` as a literal; else an `account_id`): its rate limiting rules read neither the answer nor lists. */
  readonly account?: boolean;
  /** The attribute's value: a string literal, or anything else (`var.expr`, `file(…)`). */
  readonly value: HclValue;
  /** The literal, when it is one. */
  readonly literal?: HclString;
  /** The text to check (interpolations in strings as placeholders), or undefined when it cannot be checked. */
  readonly checkText?: string;
  /** What it depends on (`var.host`), one entry per interpolation. */
  readonly dependsOn: readonly Interpolation[];
}

export interface RulesetSite {
  readonly resource: string;
  readonly name: string;
  /** The resource block's body. */
  readonly body: HclObject;
  readonly span: Span;
}

export interface Located {
  readonly root: HclObject;
  readonly expressions: readonly ExpressionSite[];
  readonly rulesets: readonly RulesetSite[];
}

const literalText = (v: HclValue | undefined): string | undefined => (v?.kind === 'string' && v.interpolations.length === 0 ? v.text : undefined);

/**
 * A ruleset's rules by their index: the items of a v5 `rules = [ … ]` (undefined for an item
 * that is not written as an object, such as `local.common_rule`: the indexes stay the list's),
 * or the bodies of v4 `rules { … }` blocks.
 */
export function ruleObjects(body: HclObject): (HclObject | undefined)[] {
  const list = attribute(body, 'rules')?.value;
  if (list?.kind === 'list') return list.items.map((i) => (i.kind === 'object' ? i : undefined));
  return body.blocks.filter((b) => b.type === 'rules').map((b) => b.body);
}

/** An attribute `name` of an object, or of its single nested block `name` (v4). */
function nested(o: HclObject, name: string): HclObject | undefined {
  const v = attribute(o, name)?.value;
  if (v?.kind === 'object') return v;
  return o.blocks.find((b) => b.type === name)?.body;
}

export function locate(text: string): Located {
  const root = scanHcl(text);
  const expressions: ExpressionSite[] = [];
  const rulesets: RulesetSite[] = [];
  for (const block of root.blocks) {
    if (block.type !== 'resource' || block.labels.length < 2) continue;
    const [type, name] = block.labels;
    if (!(RULE_RESOURCES as readonly string[]).includes(type)) continue;
    const resourceType = type as RuleResourceType;
    const resource = `${type}.${name}`;
    if (resourceType === 'cloudflare_ruleset') {
      rulesets.push({ resource, name, body: block.body, span: block });
      const phase = literalText(attribute(block.body, 'phase')?.value);
      const kind = literalText(attribute(block.body, 'kind')?.value);
      // A kind not written as a literal (`var.kind`): the ruleset is an account's if it has an account_id, which only an account's has.
      const account = isAccountKind(kind) || (kind === undefined && attribute(block.body, 'account_id')) ? { account: true } : {};
      ruleObjects(block.body).forEach((rule, i) => {
        const expr = rule && attribute(rule, 'expression');
        if (!expr) return;
        const ruleName = literalText(attribute(rule, 'ref')?.value) ?? literalText(attribute(rule, 'description')?.value);
        expressions.push({ ...site(resourceType, resource, i, ruleName, phase, expr.value), ...account });
        // A blank counting expression is the rule's own.
        const limits = nested(rule, 'ratelimit');
        const counting = limits && attribute(limits, 'counting_expression');
        if (counting && !(counting.value.kind === 'string' && counting.value.text.trim() === '')) expressions.push({ ...site(resourceType, resource, i, ruleName, phase, counting.value), counting: true, ...account });
      });
    } else {
      const holder = resourceType === 'cloudflare_filter' ? block.body : nested(block.body, 'filter');
      const expr = holder && attribute(holder, 'expression');
      if (expr) expressions.push(site(resourceType, resource, null, undefined, undefined, expr.value));
    }
  }
  return { root, expressions, rulesets };
}

function site(resourceType: RuleResourceType, resource: string, rule: number | null, ruleName: string | undefined, phase: string | undefined, value: HclValue): ExpressionSite {
  const base = { resourceType, resource, rule, ...(ruleName !== undefined ? { ruleName } : {}), ...(phase !== undefined ? { phase } : {}), value };
  if (value.kind !== 'string') return { ...base, dependsOn: [] };
  return { ...base, literal: value, checkText: placeholders(value), dependsOn: value.interpolations };
}

/**
 * The expression with each interpolation that sits inside a string of the Rules language
 * replaced by as many `x`, or undefined when one sits anywhere else.
 */
export function placeholders(str: HclString): string | undefined {
  if (str.interpolations.length === 0) return str.text;
  let out = '';
  let k = 0;
  for (const it of str.interpolations) {
    out += str.text.slice(k, it.start);
    if (!insideRulesString(out)) return undefined;
    out += 'x'.repeat(it.end - it.start);
    k = it.end;
  }
  return out + str.text.slice(k);
}

/** Whether the end of `text` is inside an unclosed string literal of the Rules language (`"…`, `r#"…`). */
export function insideRulesString(text: string): boolean {
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (c === '"') {
      i++;
      while (i < text.length && text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
      if (i >= text.length) return true;
      i++;
    } else if (c === 'r' && /^r#*"/.test(text.slice(i, i + 260)) && !/[A-Za-z0-9_.]/.test(text[i - 1] ?? '')) {
      const hashes = /^r(#*)"/.exec(text.slice(i))![1];
      const close = text.indexOf(`"${hashes}`, i + hashes.length + 2);
      if (close < 0) return true;
      i = close + hashes.length + 1;
    } else i++;
  }
  return false;
}

/** `${var.host}` -> `var.host`; `%{ if … }` as written. */
export function dependencyName(it: Interpolation): string {
  return it.source.startsWith('${') ? it.source.slice(2, -1).trim() : it.source;
}
