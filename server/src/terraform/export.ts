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
 *
 * The text is laid out as `terraform fmt` leaves it (so that running it changes nothing):
 * two spaces per level, one attribute or block per line, and the `=` of adjacent
 * single-line attributes aligned (body() below).
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

/** Words that as a bare key would start an expression of their own (`{ for = 1 }` is a for expression): quoted. */
const HCL_KEYWORDS = new Set(['for', 'if', 'in', 'null', 'true', 'false']);
const key = (k: string) => (isIdentifier(k) && !HCL_KEYWORDS.has(k) ? k : hclString(k));

const graphemes = new Intl.Segmenter('en', { granularity: 'grapheme' });
const count = (s: string) => [...graphemes.segment(s)].length;
/** The columns a written key takes as `terraform fmt` counts them: grapheme clusters, per token (a quoted key's quotes apart). */
const columns = (written: string) => (written.startsWith('"') ? 2 + count(written.slice(1, -1)) : count(written));

/** A line of a body: an attribute (its value already written), or text written as is (a block, a blank line). */
type Line = { readonly key: string; readonly value: string } | { readonly text: string };

/**
 * A body's lines at `pad`, laid out as `terraform fmt` leaves them: in each run of adjacent
 * single-line attributes the `=` signs are aligned (one space after the longest key). An
 * attribute whose value spans lines, a block or a blank line ends the run.
 */
function body(lines: readonly Line[], pad: string): string {
  const oneLine = (l: Line): l is { key: string; value: string } => !('text' in l) && !l.value.includes('\n');
  let out = '';
  for (let i = 0; i < lines.length; ) {
    const line = lines[i];
    if (!oneLine(line)) {
      out += 'text' in line ? line.text : `${pad}${line.key} = ${line.value}\n`;
      i++;
      continue;
    }
    let end = i;
    while (end < lines.length && oneLine(lines[end])) end++;
    const run = lines.slice(i, end).filter(oneLine);
    const width = Math.max(...run.map((l) => columns(l.key)));
    for (const l of run) out += `${pad}${l.key}${' '.repeat(width - columns(l.key) + 1)}= ${l.value}\n`;
    i = end;
  }
  return out;
}

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
  return `{\n${body(entries.map(([k, x]) => ({ key: key(k), value: value(x, inner, refs, path ? `${path}.${k}` : k) })), inner)}${pad}}`;
}

/** An object's entries as a v4 block body: single objects and lists of objects become blocks. */
function v4Body(o: Record<string, unknown>, pad: string, refs: ReadonlyMap<string, string>, path: string): string {
  const lines: Line[] = [];
  for (const [k, x] of Object.entries(o)) {
    const p = path ? `${path}.${k}` : k;
    if (isObject(x) && SINGLE_BLOCKS.has(k)) lines.push({ text: `${pad}${k} {\n${v4Body(x, `${pad}  `, refs, p)}${pad}}\n` });
    else if (Array.isArray(x) && x.length > 0 && x.every(isObject)) for (const item of x) lines.push({ text: `${pad}${k} {\n${v4Body(item, `${pad}  `, refs, p)}${pad}}\n` });
    else if (k === 'rules' && path === 'action_parameters' && isObject(x) && Object.values(x).every(Array.isArray)) {
      // v4's skip: `rules = { ruleset_id = "id1,id2" }`.
      const joined = Object.fromEntries(Object.entries(x).map(([id, ids]) => [id, (ids as unknown[]).join(',')]));
      lines.push({ key: 'rules', value: value(joined, pad, refs, p) });
    } else lines.push({ key: key(k), value: value(x, pad, refs, p) });
  }
  return body(lines, pad);
}

function ruleFields(rule: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of RULE_ORDER) if (rule[k] !== undefined) out[k] = rule[k];
  for (const [k, x] of Object.entries(rule)) if (!COMPUTED.has(k) && out[k] === undefined && x !== undefined) out[k] = x;
  // Neither provider takes `action_parameters.version` (v5 has no such attribute; v4 refuses it from 4.48).
  if (isObject(out.action_parameters) && 'version' in out.action_parameters) {
    const { version: _version, ...rest } = out.action_parameters;
    out.action_parameters = rest;
  }
  return out;
}

/** Comment lines for the rules whose execute the API pins to a version other than the latest: the provider cannot write it. */
function pinnedVersions(rules: readonly unknown[]): Line[] {
  return rules.flatMap((r, i) => {
    const version = isObject(r) && isObject(r.action_parameters) ? r.action_parameters.version : undefined;
    if (version === undefined || version === 'latest') return [];
    const which = isObject(r) && typeof r.ref === 'string' ? `rule ${i + 1} (${r.ref})` : `rule ${i + 1}`;
    return [{ text: `  # ${which} runs version ${String(version)} of its ruleset; the provider has no attribute for that, so after an apply it runs the latest.\n` }];
  });
}

/** Keys of v4's `action_parameters` whose block shape differs from the API's (a map of headers as repeated blocks, field lists as sets of names). */
const V4_RESHAPED = new Set(['headers', 'request_fields', 'response_fields', 'cookie_fields', 'transformed_request_fields']);

/**
 * Whether v4's block syntax can be written for a ruleset: every object in its rules is one of
 * the blocks written as the API shapes it (SINGLE_BLOCKS: the WAF's, rate limiting's and
 * logging's), the skip's map of rule ids aside. The other phases' parameters (transforms,
 * cache, origin, redirects) have blocks of their own shapes in v4, which are not written.
 */
export function v4Writable(ruleset: Readonly<Record<string, unknown>>): boolean {
  const fits = (o: Record<string, unknown>, path: string): boolean =>
    Object.entries(o).every(([k, x]) => {
      if (V4_RESHAPED.has(k)) return false;
      if (k === 'rules' && path === 'action_parameters' && isObject(x)) return true;
      if (isObject(x)) return SINGLE_BLOCKS.has(k) && fits(x, k);
      if (Array.isArray(x)) return x.every((i) => !isObject(i) || fits(i, k));
      return true;
    });
  return !Array.isArray(ruleset.rules) || ruleset.rules.every((r) => !isObject(r) || fits(r, ''));
}

/** What `--provider 4` leaves out (v4Writable), one line each, for the export's comment and stderr. */
export function v4LeftOut(rulesets: readonly ExportedRuleset[]): string[] {
  return rulesets
    .filter((r) => !v4Writable(r.ruleset))
    .map((r) => `the ${String(r.ruleset.phase ?? r.ruleset.kind)} ruleset ${String(r.ruleset.id ?? r.ruleset.name)}: its rules' parameters have block shapes of their own in provider v4; export it with --provider 5`);
}

/** The Terraform configuration of these rulesets (provider v4: those it can write, and a comment naming the rest). */
export function exportTerraform(all: readonly ExportedRuleset[], provider: ProviderVersion = 5): string {
  const rulesets = provider === 4 ? all.filter((r) => v4Writable(r.ruleset)) : all;
  const taken = new Set<string>();
  const named = rulesets.map((r) => ({ ...r, name: resourceName(r.ruleset, taken) }));
  const refs = new Map(named.filter((r) => typeof r.ruleset.id === 'string').map((r) => [r.ruleset.id as string, `cloudflare_ruleset.${r.name}`]));
  let out = `terraform {\n  required_providers {\n    cloudflare = {\n      source  = "cloudflare/cloudflare"\n      version = "~> ${provider}"\n    }\n  }\n}\n`;
  const leftOut = provider === 4 ? v4LeftOut(all) : [];
  if (leftOut.length > 0) out += `\n${leftOut.map((l) => `# Left out: ${l}.\n`).join('')}`;
  for (const r of named) {
    const rs = r.ruleset;
    const scope = 'zoneId' in r.scope ? { attr: 'zone_id', id: r.scope.zoneId, importPath: provider === 5 ? 'zones' : 'zone' } : { attr: 'account_id', id: r.scope.accountId, importPath: provider === 5 ? 'accounts' : 'account' };
    if (typeof rs.id === 'string') out += `\nimport {\n${body([{ key: 'to', value: `cloudflare_ruleset.${r.name}` }, { key: 'id', value: hclString(`${scope.importPath}/${scope.id}/${rs.id}`) }], '  ')}}\n`;
    const lines: Line[] = [{ key: scope.attr, value: hclString(scope.id) }];
    for (const k of ['name', 'description', 'kind', 'phase'] as const) if (rs[k] !== undefined) lines.push({ key: k, value: value(rs[k], '  ', refs, k) });
    const rules = Array.isArray(rs.rules) ? rs.rules.filter(isObject).map(ruleFields) : undefined;
    if (Array.isArray(rs.rules)) lines.push(...pinnedVersions(rs.rules));
    // v5's list is an attribute; v4's rules are blocks, each after a blank line (none: no rules at all, v4 has no `rules =`).
    if (rules && provider === 5) lines.push({ key: 'rules', value: value(rules, '  ', refs, '') });
    else for (const rule of rules ?? []) lines.push({ text: '\n' }, { text: `  rules {\n${v4Body(rule, '    ', refs, '')}  }\n` });
    out += `\nresource "cloudflare_ruleset" ${hclString(r.name)} {\n${body(lines, '  ')}}\n`;
  }
  return out;
}
