/**
 * Rulesets -> Terraform: one `cloudflare_ruleset` resource per ruleset, with an `import`
 * block so that `terraform plan` adopts the existing ruleset instead of creating one.
 * Provider v5 (the default) writes rules as a list of objects, as the API does; provider
 * v4 writes nested blocks (`rules { … }`, `action_parameters { … }`) and v4's skip
 * `rules = { ruleset_id = "id1,id2" }`. An `execute` rule that runs another exported ruleset
 * refers to its resource (`cloudflare_ruleset.x.id`) rather than to a fixed id.
 *
 * rulesetJson.ts reads the result back; the round trip gives the rulesets again without the
 * fields the service computes (ids and versions of rules, `version`, `last_updated`).
 */
import { SINGLE_BLOCKS } from './rulesetJson';

export type ProviderVersion = 4 | 5;

export interface ExportedRuleset {
  /** The ruleset as the API returns it (with its `id`). */
  readonly ruleset: Readonly<Record<string, unknown>>;
  /** Where it lives: a zone's entry point, or an account's custom ruleset. */
  readonly scope: { readonly zoneId: string } | { readonly accountId: string };
}

/** Rule fields the service computes: not written (Terraform would see them as changes). */
const COMPUTED = new Set(['id', 'version', 'last_updated']);
/** The order rule attributes are written in (the rest follow in their own order). */
const RULE_ORDER = ['ref', 'description', 'expression', 'action', 'action_parameters', 'enabled', 'logging', 'ratelimit', 'exposed_credential_check'];

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isIdentifier = (k: string) => /^[A-Za-z_][A-Za-z0-9_-]*$/.test(k);

/**
 * A string as an HCL quoted template: escapes, and `${`/`%{` doubled so they stay literal.
 * JSON's `\b` and `\f` are not HCL escapes: they are written as `\u0008` and `\u000c`.
 */
export function hclString(s: string): string {
  return JSON.stringify(s)
    .replace(/\\(.)/g, (all, c: string) => (c === 'b' ? '\\u0008' : c === 'f' ? '\\u000c' : all))
    .replace(/([$%])\{/g, '$1$1{');
}

const key = (k: string) => (isIdentifier(k) ? k : hclString(k));

/** A resource name from a ruleset: its phase for an entry point, its name for a custom ruleset. */
function resourceName(r: Readonly<Record<string, unknown>>, taken: Set<string>): string {
  const base = r.kind === 'custom' ? `custom_${String(r.name ?? r.id ?? 'ruleset')}` : String(r.phase ?? r.name ?? 'ruleset');
  let name = base.toLowerCase().replace(/[^a-z0-9_]+/g, '_').replace(/^_+|_+$/g, '') || 'ruleset';
  if (!/^[a-z_]/.test(name)) name = `r_${name}`;
  let unique = name;
  for (let i = 2; taken.has(unique); i++) unique = `${name}_${i}`;
  taken.add(unique);
  return unique;
}

/** A value written as an HCL expression (v5 attributes), indented by `pad`. */
function value(v: unknown, pad: string, refs: ReadonlyMap<string, string>, path: string): string {
  if (typeof v === 'string') return path === 'action_parameters.id' && refs.has(v) ? `${refs.get(v)}.id` : hclString(v);
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (v === null || v === undefined) return 'null';
  const inner = `${pad}  `;
  if (Array.isArray(v)) {
    if (v.length === 0) return '[]';
    if (v.every((x) => !isObject(x) && !Array.isArray(x))) return `[${v.map((x) => value(x, inner, refs, path)).join(', ')}]`;
    return `[\n${v.map((x) => `${inner}${value(x, inner, refs, path)},\n`).join('')}${pad}]`;
  }
  const entries = Object.entries(v as Record<string, unknown>);
  if (entries.length === 0) return '{}';
  return `{\n${entries.map(([k, x]) => `${inner}${key(k)} = ${value(x, inner, refs, path ? `${path}.${k}` : k)}\n`).join('')}${pad}}`;
}

/** An object's entries as a v4 block body: single objects and lists of objects become blocks. */
function v4Body(o: Record<string, unknown>, pad: string, refs: ReadonlyMap<string, string>, path: string): string {
  let out = '';
  for (const [k, x] of Object.entries(o)) {
    const p = path ? `${path}.${k}` : k;
    if (isObject(x) && SINGLE_BLOCKS.has(k)) out += `${pad}${k} {\n${v4Body(x, `${pad}  `, refs, p)}${pad}}\n`;
    else if (Array.isArray(x) && x.length > 0 && x.every(isObject)) for (const item of x) out += `${pad}${k} {\n${v4Body(item, `${pad}  `, refs, p)}${pad}}\n`;
    else if (k === 'rules' && path === 'action_parameters' && isObject(x) && Object.values(x).every(Array.isArray)) {
      // v4's skip: `rules = { ruleset_id = "id1,id2" }`.
      const joined = Object.fromEntries(Object.entries(x).map(([id, ids]) => [id, (ids as unknown[]).join(',')]));
      out += `${pad}rules = ${value(joined, pad, refs, p)}\n`;
    } else out += `${pad}${key(k)} = ${value(x, pad, refs, p)}\n`;
  }
  return out;
}

function ruleFields(rule: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of RULE_ORDER) if (rule[k] !== undefined) out[k] = rule[k];
  for (const [k, x] of Object.entries(rule)) if (!COMPUTED.has(k) && out[k] === undefined && x !== undefined) out[k] = x;
  return out;
}

/** The Terraform configuration of these rulesets. */
export function exportTerraform(rulesets: readonly ExportedRuleset[], provider: ProviderVersion = 5): string {
  const taken = new Set<string>();
  const named = rulesets.map((r) => ({ ...r, name: resourceName(r.ruleset, taken) }));
  const refs = new Map(named.filter((r) => typeof r.ruleset.id === 'string').map((r) => [r.ruleset.id as string, `cloudflare_ruleset.${r.name}`]));
  let out = `terraform {\n  required_providers {\n    cloudflare = {\n      source  = "cloudflare/cloudflare"\n      version = "~> ${provider}"\n    }\n  }\n}\n`;
  for (const r of named) {
    const rs = r.ruleset;
    const scope = 'zoneId' in r.scope ? { attr: 'zone_id', id: r.scope.zoneId, importPath: provider === 5 ? 'zones' : 'zone' } : { attr: 'account_id', id: r.scope.accountId, importPath: provider === 5 ? 'accounts' : 'account' };
    if (typeof rs.id === 'string') out += `\nimport {\n  to = cloudflare_ruleset.${r.name}\n  id = ${hclString(`${scope.importPath}/${scope.id}/${rs.id}`)}\n}\n`;
    out += `\nresource "cloudflare_ruleset" ${hclString(r.name)} {\n  ${scope.attr} = ${hclString(scope.id)}\n`;
    for (const k of ['name', 'description', 'kind', 'phase'] as const) if (rs[k] !== undefined) out += `  ${k} = ${value(rs[k], '  ', refs, k)}\n`;
    const rules = Array.isArray(rs.rules) ? rs.rules.filter(isObject).map(ruleFields) : undefined;
    if (rules === undefined) {
      out += '}\n';
      continue;
    }
    if (provider === 5) out += `  rules = ${value(rules, '  ', refs, '')}\n`;
    else if (rules.length === 0) out += '  rules = []\n';
    else for (const rule of rules) out += `\n  rules {\n${v4Body(rule, '    ', refs, '')}  }\n`;
    out += '}\n';
  }
  return out;
}
