/**
 * `cloudflare_ruleset` resources (as hcl2json gives them: Terraform's JSON syntax) -> the
 * Rulesets API's ruleset JSON, for `rulesmith terraform import`, for validating a resource
 * with the ruleset validator, and for the round trip with export.ts.
 *
 * Both provider versions: v5 writes the API's shape (`rules = [{ … }]`, objects, lists);
 * v4 writes nested blocks (`rules { … }`, `action_parameters { … }`), which hcl2json turns
 * into lists — the blocks that hold one object (SINGLE_BLOCKS) become that object again, and
 * v4's skip `rules = { ruleset_id = "id1,id2" }` becomes the API's list of ids.
 *
 * Strings are Terraform templates: `$${` and `%%{` are literal `${` and `%{`; a string still
 * holding a `${…}` depends on something Terraform knows only at plan time. A reference to
 * another imported ruleset (`cloudflare_ruleset.x.id`) resolves to its id from the file's
 * `import` block; any other `${…}` is kept as written and reported.
 */
import type { HclJson } from './hcl';

/** v4 blocks of which the provider allows one: an object in the API. */
export const SINGLE_BLOCKS: ReadonlySet<string> = new Set([
  'action_parameters',
  'overrides',
  'ratelimit',
  'logging',
  'exposed_credential_check',
  'response',
  'matched_data',
]);

/** The fields of a ruleset body that the resource carries (the rest is the provider's). */
const RULESET_KEYS = ['name', 'description', 'kind', 'phase', 'rules'] as const;

export interface TfRulesetResource {
  /** `cloudflare_ruleset.<name>`'s name. */
  readonly name: string;
  /** The resource's attributes, as hcl2json gives them. */
  readonly value: Readonly<Record<string, unknown>>;
}

export interface ImportedRuleset {
  readonly resource: string;
  /** The ruleset body (with `id` when an import block names it). */
  readonly ruleset: Record<string, unknown>;
  readonly zoneId?: string;
  readonly accountId?: string;
  /** Values that depend on Terraform variables or other resources (`rules[1].expression` on `var.host`); `leftOut`: not in the ruleset at all (`dynamic "rules"`). */
  readonly unresolved: readonly { readonly path: string; readonly dependsOn: readonly string[]; readonly leftOut?: true }[];
  /** Values written as a reference to another ruleset of the file, resolved to its id (`rules[1].action_parameters.id` from `cloudflare_ruleset.x.id`). */
  readonly resolved: readonly { readonly path: string; readonly reference: string }[];
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Every `resource "TYPE" "NAME"` of a parsed file, in the file's order of names as hcl2json gives them. */
export function resourcesOf(json: HclJson, type: string): TfRulesetResource[] {
  const byType = isObject(json.resource) ? json.resource[type] : undefined;
  if (!isObject(byType)) return [];
  return Object.entries(byType).flatMap(([name, v]) => {
    const value = Array.isArray(v) ? v[0] : v;
    return isObject(value) ? [{ name, value }] : [];
  });
}

/** The ruleset ids the file's `import` blocks give, by resource name (`cloudflare_ruleset.x` -> id). */
export function importIds(json: HclJson): Map<string, { id: string; zoneId?: string; accountId?: string }> {
  const out = new Map<string, { id: string; zoneId?: string; accountId?: string }>();
  for (const block of Array.isArray(json.import) ? json.import : []) {
    if (!isObject(block) || typeof block.to !== 'string' || typeof block.id !== 'string') continue;
    const to = /^\$\{(cloudflare_ruleset\.[A-Za-z0-9_-]+)\}$/.exec(block.to)?.[1];
    // v5: zones/<zone>/<ruleset> or accounts/<account>/<ruleset>; v4: zone/… or account/….
    const m = /^(zones?|accounts?)\/([^/]+)\/([^/]+)$/.exec(block.id);
    if (!to || !m) continue;
    out.set(to, { id: m[3], ...(m[1].startsWith('zone') ? { zoneId: m[2] } : { accountId: m[2] }) });
  }
  return out;
}

/** A template's literal value, or undefined when it still holds a `${…}`/`%{…}`. */
export function untemplate(s: string): string | undefined {
  if (/(^|[^$])\$\{|(^|[^%])%\{/.test(s.replace(/([$%])\1\{/g, ''))) return undefined;
  return s.replace(/([$%])\1\{/g, '$1{');
}

/** The resource a value `${cloudflare_ruleset.x.id}` refers to (`cloudflare_ruleset.x`), or undefined for any other value. */
export function rulesetReference(v: string): string | undefined {
  return /^\$\{(cloudflare_ruleset\.[A-Za-z0-9_-]+)\.id\}$/.exec(v)?.[1];
}

/** One resource as a ruleset body. */
export function toRuleset(resource: TfRulesetResource, ids: ReadonlyMap<string, { id: string; zoneId?: string; accountId?: string }> = new Map()): ImportedRuleset {
  const unresolved: { path: string; dependsOn: string[]; leftOut?: true }[] = [];
  const resolved: { path: string; reference: string }[] = [];
  const convert = (v: unknown, path: string, key: string | undefined): unknown => {
    if (Array.isArray(v)) {
      if (key !== undefined && SINGLE_BLOCKS.has(key) && v.length === 1 && isObject(v[0])) return convert(v[0], path, undefined);
      return v.map((x, i) => convert(x, `${path}[${i}]`, undefined));
    }
    if (isObject(v)) {
      const out: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(v)) out[k] = convert(x, path ? `${path}.${k}` : k, k);
      return out;
    }
    if (typeof v !== 'string') return v;
    const literal = untemplate(v);
    if (literal !== undefined) return literal;
    const ref = rulesetReference(v);
    const id = ref === undefined ? undefined : ids.get(ref)?.id;
    if (ref !== undefined && id !== undefined) {
      resolved.push({ path, reference: `${ref}.id` });
      return id;
    }
    unresolved.push({ path, dependsOn: [...v.matchAll(/(?<![$])\$\{([^}]*)\}/g)].map((m) => m[1].trim()) });
    return v;
  };
  const ruleset: Record<string, unknown> = {};
  const known = ids.get(`cloudflare_ruleset.${resource.name}`);
  if (known) ruleset.id = known.id;
  for (const key of RULESET_KEYS) {
    if (resource.value[key] === undefined) continue;
    ruleset[key] = convert(resource.value[key], key, key);
  }
  if (Array.isArray(ruleset.rules)) ruleset.rules = ruleset.rules.map((r) => (isObject(r) ? v4SkipRules(r) : r));
  // `dynamic "rules"` makes its blocks at plan time: there are none to read here.
  const dynamic = resource.value.dynamic;
  const generated = (Array.isArray(dynamic) ? dynamic : [dynamic]).some((d) => isObject(d) && d.rules !== undefined);
  if (generated) unresolved.push({ path: 'rules', dependsOn: ['dynamic "rules" (its blocks are made at plan time)'], leftOut: true });
  const zoneId = typeof resource.value.zone_id === 'string' ? untemplate(resource.value.zone_id) : undefined;
  const accountId = typeof resource.value.account_id === 'string' ? untemplate(resource.value.account_id) : undefined;
  return {
    resource: `cloudflare_ruleset.${resource.name}`,
    ruleset,
    ...(zoneId ? { zoneId } : known?.zoneId ? { zoneId: known.zoneId } : {}),
    ...(accountId ? { accountId } : known?.accountId ? { accountId: known.accountId } : {}),
    unresolved,
    resolved,
  };
}

/** v4's skip `rules = { ruleset_id = "id1,id2" }` -> `{ ruleset_id: ["id1", "id2"] }`. */
function v4SkipRules(rule: Record<string, unknown>): Record<string, unknown> {
  const ap = rule.action_parameters;
  if (rule.action !== 'skip' || !isObject(ap) || !isObject(ap.rules)) return rule;
  const rules = Object.fromEntries(Object.entries(ap.rules).map(([k, v]) => [k, typeof v === 'string' ? v.split(',').map((s) => s.trim()) : v]));
  return { ...rule, action_parameters: { ...ap, rules } };
}
