// CRS 3.3.4 -> managed rules of the OWASP-based ruleset (issue 5). Build-time only.
//
// Usage (from the repository root):
//   node --import tsx scripts/crs/convert.ts [--crs DIR] [--out DIR] [--data FILE] [--report FILE]
//     --crs DIR     the CRS rules folder (default: $CRS_RULES_DIR, else Debian's
//                   /usr/share/modsecurity-crs/rules, CRS 3.3.4)
//     --out DIR     where the rule files go (default server/src/managed/generated)
//     --data FILE   the phrase-list module (default server/src/language/runtime/crs/crs-data.ts:
//                   the operators read it, and the language does not import managed/)
//     --report FILE the coverage report (default server/out/crs-coverage.md, git-ignored)
// Writes `owasp-rules.json` (the converted detection rules, sorted by CRS id; the output
// only depends on the CRS files, so re-running gives no diff) and `crs-data.ts` (the
// phrases of the `.data` files, for `op.pmFromFile`), and prints
// `converted N of M detection rules`.
//
// What a rule becomes (the contract with the managed-only language extensions):
//   - id `mintId("owasp:<crs id>")`, ref = CRS id, description `"<id>: <msg>"`,
//     action `score` with `action_parameters.increment` from the severity (CRITICAL 5,
//     ERROR 4, WARNING 3, NOTICE 2), enabled, categories from the tags (`categoryOfTag`).
//   - Each variable becomes a field `crs.<lower-case name>`. A collection (ARGS,
//     REQUEST_COOKIES, REQUEST_HEADERS, …: a Map<Array<Bytes>>) gives its values with
//     `crs.values(…)`, its exclusions `!VAR:name` / `!VAR:/regex/` with `crs.without(…)` /
//     `crs.without_matching(…)`, a selector `VAR:name` indexes it (`crs.args["a"]`; header
//     names lower-cased, since the map's keys are). `XML:/*` is `crs.xml`
//     (the root element's text content) and `XML://@*` `crs.xml_attributes` (the attribute
//     values); no other XPath.
//   - Transformations wrap the value innermost-first: `t:urlDecodeUni,lowercase` ->
//     `t.lowercase(t.urlDecodeUni(x))`; over a collection every step maps over the previous
//     one's `[*]` and the operator takes the last one's `[*]` inside `any(…)`:
//     `any(op.rx(t.lowercase(t.urlDecodeUni(crs.args_names[*])[*])[*], "…"))`.
//   - Operators are `op.<name>(value, "argument")`; a negated operator is `not op.…` per
//     value (`any(not op.rx(…))`: some value does not match, as ModSecurity does).
//   - A rule's variables are combined with `or`; the links of a chain with `and`. The whole
//     collections of a link (ARGS values, ARGS_NAMES, cookies, XML, …) are first joined with
//     `concat(…)` so the operator is written once (same meaning: some value of some variable;
//     it keeps expressions under the checker's 4,096-character limit); selected members
//     (`crs.request_headers["user-agent"]`, which may be missing) join it as the map without
//     every other key (`crs.values(crs.without_matching(crs.request_headers,
//     "^(?!(?:user-agent|referer)$)"))`) when the link has whole collections, else they are
//     separate terms; Bytes variables stay separate terms.
//   - Counts: `&VAR` is `len(crs.<var>_names)`; `&VAR:name` (a member present or not) is
//     `has_key(crs.request_headers, "name")` for a header (keys are lower case), else
//     `any(t.lowercase(crs.<var>_names[*])[*] eq "name")`, for `@eq 0` (negated), `!@eq 0`,
//     `@gt 0`, `@ge 1`, and `len(crs.<var>["name"])` compared otherwise.
//   - Operator arguments' macros `%{tx.name}` are replaced by CRS's defaults from
//     REQUEST-901-INITIALIZATION.conf (e.g. `tx.allowed_methods` = `GET HEAD POST OPTIONS`);
//     a default configuration is what the regression tests run with.
//   - Links over TX variables that the 901 defaults decide (`&TX:MAX_NUM_ARGS "@eq 1"`,
//     `TX:CRS_VALIDATE_UTF8_ENCODING "@eq 1"`) are evaluated here: a link that is true is
//     dropped; a link that is false means the rule never matches in the default
//     configuration, and the rule is left out (listed in the report as "disabled by the
//     901 defaults").
//   - APPROXIMATION: a later chain link over `MATCHED_VAR`/`MATCHED_VARS` is applied to
//     the first link's variables, so "some value matches link 1 and some value (not
//     necessarily the same one) matches link 2". Links that compare TX captures (`TX:1`)
//     or TX variables set by an earlier link are not supported: those rules are left out.
//   - Regex patterns go to `op.rx` as ModSecurity 2 reads them (Apache unescapes `\\` to
//     `\` in a double-quoted argument; CRS 3.3 was tested on ModSecurity 2), otherwise
//     verbatim: PCRE syntax (`(?i:…)`, possessive quantifiers, lookbehind, `$`) is op.rx's
//     to implement.
//   - REWRITES: five rules whose chain passes a capture through TX into a list or pattern
//     check (920420, 920440, 920450, 920480, 922110) are rewritten by hand into one pattern
//     each (see there; two are approximations).
//   - Six converted rules (932100 932105 932110 932115 932150 933160) are longer than the
//     checker's 4,096-character limit for user expressions: their CRS pattern alone is about
//     that long. The limit must not apply to managed rules (the report lists them).
// Rules using anything else are left out, never silently: the report lists each one with
// what blocks it (section "Detection rules not converted"). No degraded forms are emitted.

import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ANOMALY_INCREMENT, analyzeCrs, DEFAULT_CRS_DIR, MISSING_CRS_HELP, renderCoverage, type Analysis, type RuleInfo } from './analyze';
import type { Operator, Rule, RuleLink, Variable } from './seclang';
import { mintId } from '../../server/src/rulesets/managedIds';
import { OWASP_LAST_UPDATED, OWASP_VERSION } from '../../server/src/managed/owasp';
import type { ManagedRule } from '../../server/src/rulesets/catalog';

// ---------------------------------------------------------------------------------------
// Tables

type VarKind = 'map' | 'array' | 'bytes' | 'int' | 'bool' | 'ip';

/** The ModSecurity variables the converter maps, with the kind of their `crs.*` field. */
export const VARIABLES: Readonly<Record<string, VarKind>> = {
  ARGS: 'map',
  ARGS_GET: 'map',
  ARGS_POST: 'map',
  REQUEST_COOKIES: 'map',
  REQUEST_HEADERS: 'map',
  ARGS_NAMES: 'array',
  ARGS_GET_NAMES: 'array',
  ARGS_POST_NAMES: 'array',
  REQUEST_COOKIES_NAMES: 'array',
  REQUEST_HEADERS_NAMES: 'array',
  FILES_NAMES: 'array',
  /** FILES: the uploaded files' names (one array, not keyed by field). */
  FILES: 'array',
  /** MULTIPART_PART_HEADERS: every header line of every part (one array, not keyed by part name). */
  MULTIPART_PART_HEADERS: 'array',
  XML: 'array',
  REQUEST_URI: 'bytes',
  REQUEST_URI_RAW: 'bytes',
  REQUEST_FILENAME: 'bytes',
  REQUEST_BASENAME: 'bytes',
  QUERY_STRING: 'bytes',
  REQUEST_BODY: 'bytes',
  REQUEST_LINE: 'bytes',
  REQUEST_METHOD: 'bytes',
  REQUEST_PROTOCOL: 'bytes',
  REQBODY_PROCESSOR: 'bytes',
  REQUEST_BODY_LENGTH: 'int',
  ARGS_COMBINED_SIZE: 'int',
  FILES_COMBINED_SIZE: 'int',
  REQBODY_ERROR: 'bool',
  INBOUND_DATA_ERROR: 'bool',
  MULTIPART_STRICT_ERROR: 'bool',
  REMOTE_ADDR: 'ip',
};

/** Transformations with a `t.<name>` function (Bytes -> Bytes; `length` gives an Int). */
export const TRANSFORMATIONS: ReadonlySet<string> = new Set([
  'urlDecodeUni', 'htmlEntityDecode', 'jsDecode', 'cssDecode', 'cmdLine', 'compressWhitespace', 'removeNulls',
  'removeWhitespace', 'replaceComments', 'normalisePath', 'normalizePath', 'normalizePathWin', 'utf8toUnicode',
  'lowercase', 'urlDecode', 'base64Decode', 'hexEncode', 'sha1', 'trim', 'length',
]);

type OpKind = 'string' | 'none' | 'number';
/** Operators with an `op.<name>` function and the kind of their argument. */
export const OPERATORS: Readonly<Record<string, OpKind>> = {
  rx: 'string', pm: 'string', pmFromFile: 'string', detectSQLi: 'none', detectXSS: 'none',
  validateByteRange: 'string', validateUrlEncoding: 'none', validateUtf8Encoding: 'none',
  streq: 'string', within: 'string', beginsWith: 'string', endsWith: 'string', contains: 'string',
  eq: 'number', ge: 'number', gt: 'number', le: 'number', lt: 'number', ipMatch: 'string',
};

/**
 * CRS tags as categories: lower case, `/` -> `-` (`paranoia-level/1` -> `paranoia-level-1`,
 * `OWASP_CRS/WEB_ATTACK/SQL_INJECTION` -> `owasp_crs-web_attack-sql_injection`,
 * `PCI/6.5.2` -> `pci-6.5.2`, `capec/1000/152/248/66` -> `capec-1000-152-248-66`); tags that
 * are already in the hosted form (`attack-sqli`, `language-php`, `platform-unix`,
 * `application-multi`) are unchanged.
 */
export function categoryOfTag(tag: string): string {
  return tag.trim().toLowerCase().replace(/\//g, '-');
}

// ---------------------------------------------------------------------------------------
// Literals

/** A string literal of the Rules language: `"…"` when nothing needs escaping, else a raw string. */
export function lit(s: string): string {
  if (!/["\\]/.test(s)) return `"${s}"`;
  let hashes = '';
  while (s.includes(`"${hashes}`)) hashes += '#';
  return `r${hashes}"${s}"${hashes}`;
}

// ---------------------------------------------------------------------------------------
// 901 defaults

/** `tx.*` values set by REQUEST-901-INITIALIZATION.conf (lower-case names), first setting wins. */
export function crsDefaults(a: Analysis): Map<string, string> {
  const out = new Map<string, string>();
  for (const f of a.files) {
    if (!/^REQUEST-901-/.test(f.file)) continue;
    for (const r of f.rules) {
      for (const l of r.rule.links) {
        for (const s of l.setvars) {
          if (s.collection !== 'tx' || s.op !== 'set' || s.keyMacros.hasMacros) continue;
          const key = s.key.toLowerCase();
          if (!out.has(key)) out.set(key, s.value.text);
        }
      }
    }
  }
  // tx.executing_paranoia_level = %{TX.PARANOIA_LEVEL}
  if (out.has('paranoia_level') && !out.has('executing_paranoia_level')) out.set('executing_paranoia_level', out.get('paranoia_level')!);
  return out;
}

// ---------------------------------------------------------------------------------------
// Conversion

export class Unsupported extends Error {
  constructor(readonly feature: string) {
    super(feature);
  }
}

/** A rule that never matches with the 901 defaults. */
export class DisabledByDefaults extends Error {}

export interface ConvertContext {
  defaults: Map<string, string>;
}

function fieldOf(name: string): string {
  return `crs.${name.toLowerCase()}`;
}

/**
 * `XML:/*` reads the root element's text content (no attribute values), `XML://@*` every
 * attribute value: two fields, as ModSecurity evaluates the two XPath expressions.
 */
function xmlField(v: Variable): string {
  const path = v.selector?.kind === 'xpath' ? v.selector.value.trim() : undefined;
  if (path === '/*') return 'crs.xml';
  if (path === '//@*') return 'crs.xml_attributes';
  throw new Unsupported(`variable selector: XML${path === undefined ? ' without an XPath' : `:${path}`} (only XML:/* and XML://@*)`);
}

function resolveMacros(op: Operator, ctx: ConvertContext): string {
  if (!op.macros.hasMacros) return op.argument;
  let out = '';
  for (const p of op.macros.parts) {
    if (p.kind === 'text') out += p.value;
    else {
      const v = p.collection === 'TX' && p.key !== undefined ? ctx.defaults.get(p.key.toLowerCase()) : undefined;
      if (v === undefined) throw new Unsupported(`operator argument macro %{${p.raw}} (not a 901 default)`);
      out += v;
    }
  }
  return out;
}

function numberArg(s: string): string {
  const t = s.trim();
  if (!/^-?\d+$/.test(t)) throw new Unsupported(`numeric operator argument ${JSON.stringify(t)}`);
  return String(Number(t));
}

/** `op.<name>(value, args…)` for one value expression; negation is the caller's. */
function opCall(op: Operator, value: string, ctx: ConvertContext): string {
  const kind = OPERATORS[op.name];
  if (kind === undefined) throw new Unsupported(`operator: @${op.name}`);
  const arg = resolveMacros(op, ctx);
  if (kind === 'none') return `op.${op.name}(${value})`;
  if (kind === 'number') return `op.${op.name}(${value}, ${numberArg(arg)})`;
  return `op.${op.name}(${value}, ${lit(op.name === 'pmFromFile' ? arg.trim() : arg)})`;
}

/** `x` through the transformations; over an array (`x` ends in `[*]`) each step maps, so the next one takes `[*]`. */
function applyTransformations(ts: readonly string[], x: string, overArray = false): string {
  let out = x;
  ts.forEach((t, i) => {
    if (!TRANSFORMATIONS.has(t)) throw new Unsupported(`transformation: t:${t}`);
    out = `t.${t}(${overArray && i > 0 ? `${out}[*]` : out})`;
  });
  return out;
}

/** The predicate "some value of `arrayExpr`, transformed, satisfies the operator". */
function overArray(arrayExpr: string, link: RuleLink, ctx: ConvertContext): string {
  const op = link.operator!;
  const ts = link.transformations;
  const value = ts.length ? `${applyTransformations(ts, `${arrayExpr}[*]`, true)}[*]` : `${arrayExpr}[*]`;
  return `any(${op.negated ? 'not ' : ''}${opCall(op, value, ctx)})`;
}

function overScalar(expr: string, link: RuleLink, ctx: ConvertContext): string {
  const op = link.operator!;
  const call = opCall(op, applyTransformations(link.transformations, expr), ctx);
  return op.negated ? `not ${call}` : call;
}

function headerKey(varName: string, key: string): string {
  return varName === 'REQUEST_HEADERS' ? key.toLowerCase() : key;
}

/** `&VAR` / `&VAR:name` with its operator. */
function countPredicate(v: Variable, link: RuleLink, ctx: ConvertContext): string {
  const op = link.operator!;
  const kind = VARIABLES[v.name];
  if (kind === undefined) throw new Unsupported(`variable: &${v.name} (count)`);
  if (link.transformations.length) throw new Unsupported('transformation on a count');
  if (OPERATORS[op.name] !== 'number') throw new Unsupported(`non-numeric operator @${op.name} on a count`);
  if (!v.selector) {
    const counted = kind === 'map' ? `len(${fieldOf(v.name)}_names)` : kind === 'array' || kind === 'bytes' ? `len(${fieldOf(v.name)})` : undefined;
    if (!counted) throw new Unsupported(`variable: &${v.name} (count of a ${kind})`);
    const call = opCall(op, counted, ctx);
    return op.negated ? `not ${call}` : call;
  }
  if (v.selector.kind !== 'name' || kind !== 'map') throw new Unsupported(`count with a ${v.selector.kind} selector`);
  const key = v.selector.value.toLowerCase();
  // REQUEST_HEADERS' keys are lower case, so `has_key` finds a header whatever its spelling;
  // other collections (ARGS, cookies) keep their names as sent and ModSecurity looks names up
  // without case, so their lower-cased names are compared.
  const present = v.name === 'REQUEST_HEADERS' ? `has_key(${fieldOf(v.name)}, ${lit(key)})` : `any(t.lowercase(${fieldOf(v.name)}_names[*])[*] eq ${lit(key)})`;
  const n = numberArg(resolveMacros(op, ctx));
  // present / absent forms
  let wantPresent: boolean | undefined;
  if (op.name === 'eq' && n === '0') wantPresent = false;
  else if ((op.name === 'gt' && n === '0') || (op.name === 'ge' && n === '1')) wantPresent = true;
  else if (op.name === 'lt' && n === '1') wantPresent = false;
  if (wantPresent !== undefined) {
    if (op.negated) wantPresent = !wantPresent;
    return wantPresent ? present : `not ${present}`;
  }
  const call = opCall(op, `len(${fieldOf(v.name)}[${lit(headerKey(v.name, v.selector.value))}])`, ctx);
  return op.negated ? `not ${call}` : call;
}

/** Static value of a TX link under the 901 defaults (true/false), or undefined when it is not a defaults check. */
function staticTxLink(link: RuleLink, ctx: ConvertContext): boolean | undefined {
  if (link.variables.length !== 1) return undefined;
  const v = link.variables[0];
  if (v.name !== 'TX' || v.selector?.kind !== 'name' || /^\d+$/.test(v.selector.value)) return undefined;
  const op = link.operator!;
  const key = v.selector.value.toLowerCase();
  if (link.transformations.length) return undefined;
  let result: boolean;
  const arg = (() => {
    try {
      return resolveMacros(op, ctx);
    } catch {
      return undefined;
    }
  })();
  if (arg === undefined) return undefined;
  if (v.count) {
    const n = ctx.defaults.has(key) ? 1 : 0;
    const m = Number(arg.trim());
    if (!Number.isInteger(m)) return undefined;
    const cmp: Record<string, (a: number, b: number) => boolean> = { eq: (a, b) => a === b, gt: (a, b) => a > b, ge: (a, b) => a >= b, lt: (a, b) => a < b, le: (a, b) => a <= b };
    if (!cmp[op.name]) return undefined;
    result = cmp[op.name](n, m);
  } else {
    // A TX variable set by an earlier link (or a collector rule) is not a default.
    const value = ctx.defaults.get(key);
    if (value === undefined) {
      // Unset and not set by this rule's earlier links: no value, so the link never matches.
      return isSetByCrs(key) ? undefined : false;
    }
    const num = Number(value);
    const m = Number(arg.trim());
    switch (op.name) {
      case 'eq': result = num === m; break;
      case 'gt': result = num > m; break;
      case 'ge': result = num >= m; break;
      case 'lt': result = num < m; break;
      case 'le': result = num <= m; break;
      case 'streq': result = value === arg; break;
      case 'rx': result = new RegExp(arg).test(value); break;
      default: return undefined;
    }
  }
  return op.negated ? !result : result;
}

/** TX names written by CRS rules other than the 901 defaults (captures, collectors). */
let setByCrs: Set<string> | undefined;
function isSetByCrs(key: string): boolean {
  return setByCrs?.has(key) ?? true;
}

/** The terms of one link (to be joined with `or`). */
function linkTerms(link: RuleLink, first: RuleLink, ctx: ConvertContext): string[] {
  if (!link.operator) throw new Unsupported('SecAction link');
  const terms: string[] = [];
  const seen = new Set<string>();
  const add = (t: string) => {
    if (!seen.has(t)) {
      seen.add(t);
      terms.push(t);
    }
  };
  // Whole collections (never missing, unlike `map["key"]`) are concatenated into one array,
  // so that the operator (often a long pattern) is written once per link.
  const arrays: string[] = [];
  let groupAt = -1;
  const group = (a: string) => {
    if (arrays.includes(a)) return;
    if (groupAt < 0) {
      groupAt = terms.length;
      terms.push('');
    }
    arrays.push(a);
  };
  /** Members selected by name (`REQUEST_HEADERS:User-Agent`), per map field. */
  const selected = new Map<string, string[]>();
  let vars = link.variables;
  if (vars.some((v) => v.name === 'MATCHED_VAR' || v.name === 'MATCHED_VARS')) {
    if (link === first) throw new Unsupported('variable: MATCHED_VAR in a first link');
    if (vars.length !== 1 || vars[0].count || vars[0].selector) throw new Unsupported('variable: MATCHED_VAR(S) with others');
    vars = first.variables;
  }
  const exclusions = vars.filter((v) => v.exclude);
  for (const v of vars) {
    if (v.exclude) continue;
    if (v.count) {
      add(countPredicate(v, link, ctx));
      continue;
    }
    const kind = VARIABLES[v.name];
    if (kind === undefined) throw new Unsupported(`variable: ${v.name}`);
    const field = fieldOf(v.name);
    if (kind === 'map') {
      if (v.selector?.kind === 'name') {
        const key = headerKey(v.name, v.selector.value);
        const list = selected.get(field) ?? [];
        if (!list.includes(key)) list.push(key);
        selected.set(field, list);
        continue;
      }
      if (v.selector) throw new Unsupported(`variable selector: ${v.selector.kind} on ${v.name}`);
      let m = field;
      const names = exclusions.filter((e) => e.name === v.name && e.selector?.kind === 'name').map((e) => lit(headerKey(v.name, (e.selector as { value: string }).value)));
      if (names.length) m = `crs.without(${m}, ${names.join(', ')})`;
      for (const e of exclusions.filter((e) => e.name === v.name && e.selector?.kind === 'regex')) m = `crs.without_matching(${m}, ${lit((e.selector as { pattern: string }).pattern)})`;
      group(`crs.values(${m})`);
    } else if (kind === 'array') {
      if (v.name === 'XML') {
        group(xmlField(v));
        continue;
      }
      if (v.selector) throw new Unsupported(`variable selector: ${v.selector.kind} on ${v.name}`);
      group(field);
    } else {
      if (v.selector) throw new Unsupported(`variable selector on ${v.name}`);
      if (kind === 'bool') {
        const op = link.operator;
        if (link.transformations.length || (op.name !== 'eq' && op.name !== 'gt') || !['0', '1'].includes(op.argument.trim())) throw new Unsupported(`operator @${op.name} on the flag ${v.name}`);
        let want = op.argument.trim() === '1' || op.name === 'gt';
        if (op.name === 'gt' && op.argument.trim() === '1') throw new Unsupported(`@gt 1 on the flag ${v.name}`);
        if (op.negated) want = !want;
        add(want ? field : `not ${field}`);
      } else add(overScalar(field, link, ctx));
    }
  }
  for (const e of exclusions) if (!vars.some((v) => !v.exclude && v.name === e.name)) throw new Unsupported(`exclusion !${e.name} without its variable`);
  for (const [field, keys] of selected) {
    if (groupAt >= 0 && !arrays.some((a) => a.startsWith(`crs.values(${field}`) || a.includes(`(${field},`))) {
      // Folded into the concatenation: the map without every key but the selected ones.
      const keep = keys.map((k) => k.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')).join('|');
      arrays.push(`crs.values(crs.without_matching(${field}, ${lit(`^(?!(?:${keep})$)`)}))`);
    } else for (const k of keys) add(overArray(`${field}[${lit(k)}]`, link, ctx));
  }
  if (groupAt >= 0) terms[groupAt] = overArray(arrays.length === 1 ? arrays[0] : `concat(${arrays.join(', ')})`, link, ctx);
  if (terms.length === 0) throw new Unsupported('link without variables');
  return terms;
}

// ---------------------------------------------------------------------------------------
// Rewrites: rules whose chain passes a capture through a TX variable into a list check
// (`@within %{tx.list}`). Each is rewritten by hand into one pattern over the same
// variable, built from the list's 901 default; the report lists them as rewritten.

function escapeRegex(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}

function listItems(value: string, open: string, close: string): string[] {
  return value
    .split(/\s+/)
    .filter(Boolean)
    .map((x) => (x.startsWith(open) && x.endsWith(close) ? x.slice(open.length, x.length - close.length) : x))
    .filter(Boolean);
}

function defaultOf(ctx: ConvertContext, name: string): string {
  const v = ctx.defaults.get(name);
  if (v === undefined) throw new Unsupported(`rewrite needs tx.${name} from the 901 defaults`);
  return v;
}

/** The first Host header, or "" without one (`%{request_headers.host}` expands to ""). */
const HOST = 'coalesce(crs.request_headers["host"][0], "")';

export interface Rewrite {
  /** What the rewrite does and where it differs from CRS. */
  note: string;
  expression: (ctx: ConvertContext, rule: Rule) => string;
}

export const REWRITES: Readonly<Record<string, Rewrite>> = {
  // Content-Type's first token (`^[^;\s]+`, captured into tx.content_type as `|token|`,
  // lower-cased) not within tx.allowed_request_content_type (`|a| |b| …`): the same as the
  // token not being one of the items, i.e. a negative lookahead on the lower-cased header.
  '920420': {
    note: 'capture into tx.content_type + `!@within` folded into one negative-lookahead pattern over the lower-cased Content-Type values (same result)',
    expression: (ctx) => {
      const items = listItems(defaultOf(ctx, 'allowed_request_content_type'), '|', '|').map(escapeRegex);
      return `any(op.rx(t.lowercase(crs.request_headers["content-type"][*])[*], ${lit(`^(?!(?:${items.join('|')})(?:[;\\s]|$))[^;\\s]+`)}))`;
    },
  },
  // The basename's extension (`\.([^.]+)$`, captured into tx.extension as `.ext/`, then
  // t:urlDecodeUni,lowercase) within tx.restricted_extensions (`.asa/ .asax/ …`).
  '920440': {
    note: 'capture into tx.extension + `@within` folded into one pattern; APPROXIMATION: the basename is URL-decoded before the extension is taken (CRS decodes the captured extension), which differs only when the decoding makes a new dot',
    expression: (ctx) => {
      const items = listItems(defaultOf(ctx, 'restricted_extensions'), '.', '/').map(escapeRegex);
      return `op.rx(t.lowercase(t.urlDecodeUni(crs.request_basename)), ${lit(`\\.(?:${items.join('|')})$`)})`;
    },
  },
  // The Content-Type's charset (`charset\s*=\s*["']?([^;"'\s]+)` on the lower-cased header,
  // captured as TX:1) must match `^a|b|…|z$` built from tx.allowed_request_content_type_charset:
  // starts with a, or contains b…, or ends with z. Folded into negative lookaheads at the
  // token's start (its first character is required, so the blanks and quote cannot backtrack).
  // Only the first match counts (the capture is the leftmost one): the pattern is anchored
  // and skips every position where CRS's pattern does not match.
  '920480': {
    note: 'capture TX:1 + `!@rx ^%{tx.allowed_request_content_type_charset}$` folded into lookaheads over the lower-cased Content-Type values, at the first `charset=` of each value as the capture takes it (same result)',
    expression: (ctx) => {
      const items = defaultOf(ctx, 'allowed_request_content_type_charset').split('|').map(escapeRegex);
      const tok = `[^;"'\\s]`;
      const charset = `charset\\s*=\\s*["']?`;
      const looks = items.map((it, i) => (i === 0 ? `(?!${it})` : i === items.length - 1 ? `(?!${tok}*${it}(?!${tok}))` : `(?!${tok}*${it})`));
      return `any(op.rx(t.lowercase(crs.request_headers["content-type"][*])[*], ${lit(`^(?:(?!${charset}${tok})[\\s\\S])*${charset}${looks.join('')}${tok}`)}))`;
    },
  },
  // 922150 collects each multipart part's lower-cased `content-type: (.*)` value into
  // tx.multipart_headers_content_types_N; 922110 flags one that fails its pattern `^P$`.
  // Folded into one pattern per header line: `^content-type\s*:` then the blanks taken
  // atomically (`(?=(\s*))\1`, as the greedy capture does) and `(?!P$)`.
  '922110': {
    note: 'collector 922150 + 922110\'s `!@rx` folded into one pattern over the lower-cased MULTIPART_PART_HEADERS lines (same result)',
    expression: (_ctx, rule) => {
      const op = rule.links[0].operator;
      if (!op || op.name !== 'rx' || !op.negated || !op.argument.startsWith('^')) throw new Unsupported('922110 rewrite: unexpected operator');
      return `any(op.rx(t.lowercase(crs.multipart_part_headers[*])[*], ${lit(`^content-type\\s*:(?=(\\s*))\\1(?!${op.argument.slice(1)})`)}))`;
    },
  },
  // ARGS values with a URL (`^(?i:file|ftps?|https?)://([^/]*).*$`, the host part captured
  // into tx.rfi_parameter_<name> as `.host`) whose `.host` does not end with `.` + the Host
  // header (`!@endsWith .%{request_headers.host}`): an off-site URL. Folded into one pattern
  // over `value NUL host`: a lookahead captures the Host header, a negative lookahead checks
  // the host part is neither it nor a subdomain of it.
  '931130': {
    note: 'capture into tx.rfi_parameter_* + `!@endsWith .%{request_headers.host}` folded into one pattern over each ARGS value joined with the Host header (same result for values and hosts without NUL bytes and line breaks; without a Host header it compares with an empty host, as the macro does)',
    expression: (_ctx, rule) => {
      const op = rule.links[0].operator;
      if (!op || op.name !== 'rx' || op.argument !== '^(?i:file|ftps?|https?)://([^/]*).*$') throw new Unsupported('931130 rewrite: unexpected operator');
      return `any(op.rx(concat(crs.values(crs.args)[*], "\\x00", ${HOST})[*], ${lit(String.raw`^(?=[^\x00]*\x00([^\x00]*)$)(?i:file|ftps?|https?)://(?!(?:[^/\x00]*\.)?\1(?:/|\x00))`)}))`;
    },
  },
  // A session-id argument name (link 1, t:urlDecodeUni,lowercase) with a Referer whose host
  // part (`^(?:ht|f)tps?://(.*?)\/`, captured as TX:1) does not end with the Host header
  // (`!@endsWith %{request_headers.host}`). Links 2 and 3 folded into one pattern over
  // `referer NUL host`, as for 931130.
  '943110': {
    note: 'capture TX:1 of the Referer + `!@endsWith %{request_headers.host}` folded into one pattern over each Referer joined with the Host header (same result for headers without NUL bytes)',
    expression: (_ctx, rule) => {
      const [names, referer] = rule.links;
      if (names.operator?.name !== 'rx' || referer?.operator?.argument !== '^(?:ht|f)tps?://(.*?)\\/') throw new Unsupported('943110 rewrite: unexpected operators');
      const first = `any(op.rx(t.lowercase(t.urlDecodeUni(crs.args_names[*])[*])[*], ${lit(names.operator.argument)}))`;
      return `${first} and any(op.rx(concat(crs.request_headers["referer"][*], "\\x00", ${HOST})[*], ${lit(String.raw`^(?=[^\x00]*\x00([^\x00]*)$)(?:ht|f)tps?://(?![^/\n\x00]*\1/)[^/\n\x00]*/`)}))`;
    },
  },
  // The first `(\d+)-(\d+)` of a Range / Request-Range value (TX:1, TX:2) with
  // `TX:2 @lt %{tx.1}`: a byte range whose last byte is before its first. Folded into one
  // pattern: skip to the first digit run followed by `-` and a digit (runs taken whole), then
  // compare the numbers without their leading zeros: the second is shorter, or as long and
  // smaller at the first digit after a common prefix.
  '920190': {
    note: 'capture TX:1, TX:2 + `TX:2 @lt %{tx.1}` folded into one pattern comparing the two numbers digit by digit (exact for numbers up to 20 significant digits; ModSecurity\'s atoll overflows beyond 18)',
    expression: (_ctx, rule) => {
      const [range, lt] = rule.links;
      if (range.operator?.argument !== '(\\d+)-(\\d+)' || lt?.operator?.name !== 'lt') throw new Unsupported('920190 rewrite: unexpected operators');
      const N = 20;
      const shorter: string[] = [];
      const sameLength: string[] = [];
      for (let k = 1; k <= N; k++) {
        shorter.push(k === 1 ? '0*[1-9]-0*(?!\\d)' : `0*[1-9]\\d{${k - 1}}-0*(?:[1-9]\\d{0,${k - 2}})?(?!\\d)`);
        sameLength.push(`(?=0*[1-9]\\d{${k - 1}}-0*[1-9]\\d{${k - 1}}(?!\\d))`);
      }
      // Both numbers have as many significant digits here, so after the leading zeros (all of
      // them: `(?!0)`) the digit after a common prefix decides.
      const digitLess = [1, 2, 3, 4, 5, 6, 7, 8, 9].map((x) => `${x}\\d*-0*(?!0)\\2[0-${x - 1}]`);
      const pattern = `^(?:\\D|(?=(\\d+))\\1(?!-\\d))*(?=\\d+-\\d)(?:${shorter.join('|')}|(?:${sameLength.join('|')})0*(?!0)(\\d*)(?:${digitLess.join('|')}))`;
      return `any(op.rx(crs.values(crs.without_matching(crs.request_headers, "^(?!(?:range|request-range)$)"))[*], ${lit(pattern)}))`;
    },
  },
  // 921170 counts each argument name (`TX.paramcounter_%{MATCHED_VAR_NAME}=+1` for every
  // ARGS_NAMES value matching `.`); 921180 flags a counter above 1: an argument name given
  // twice (query and body together; TX names compare without case). Folded into one
  // helper over the lower-cased names: a name that comes back (linear, with a hash set).
  '921180': {
    note: 'collector 921170 + `TX:/paramcounter_.*/ @gt 1` folded into `crs.has_repeat` over the lower-cased ARGS_NAMES (same result)',
    expression: (_ctx, rule) => {
      if (rule.links[0].operator?.name !== 'gt' || rule.links[0].operator.argument.trim() !== '1') throw new Unsupported('921180 rewrite: unexpected operator');
      return 'crs.has_repeat(t.lowercase(crs.args_names))';
    },
  },
  // A multipart part named _charset_ (`&MULTIPART_PART_HEADERS:_charset_ !@eq 0`) and an
  // ARGS:_charset_ value, lower-cased, not within `|%{tx.allowed_request_content_type_charset}|`.
  '922100': {
    note: 'the count of the _charset_ part\'s headers read as "the multipart body has a _charset_ field" (`has_key` on ARGS_POST under the MULTIPART processor); same result',
    expression: (ctx) => {
      const allowed = `|${defaultOf(ctx, 'allowed_request_content_type_charset')}|`;
      return `crs.reqbody_processor eq "MULTIPART" and has_key(crs.args_post, "_charset_") and any(not op.within(t.lowercase(crs.args["_charset_"][*])[*], ${lit(allowed)}))`;
    },
  },
  // Each lower-cased header name (captured into tx.header_name_<name> as `/name/`) within
  // tx.restricted_headers (`/accept-charset/ /content-encoding/ …`).
  '920450': {
    note: 'captures into tx.header_name_* + `@within` folded into one pattern over the lower-cased header names (same result)',
    expression: (ctx) => {
      const items = listItems(defaultOf(ctx, 'restricted_headers'), '/', '/').map(escapeRegex);
      return `any(op.rx(t.lowercase(crs.request_headers_names[*])[*], ${lit(`^(?:${items.join('|')})$`)}))`;
    },
  },
};

/** The expression of a (possibly chained) rule; throws Unsupported / DisabledByDefaults. */
export function ruleExpression(rule: Rule, ctx: ConvertContext): string {
  const first = rule.links[0];
  const parts: string[][] = [];
  for (const link of rule.links) {
    if (link.variables.some((v) => v.name === 'TX')) {
      const s = staticTxLink(link, ctx);
      if (s === true) continue;
      if (s === false) throw new DisabledByDefaults(`${link.args.variables?.raw} ${link.args.operator?.raw}`);
      const v = link.variables.find((x) => x.name === 'TX')!;
      throw new Unsupported(v.selector?.kind === 'name' && /^\d+$/.test(v.selector.value) ? 'variable: TX:N (capture group of an earlier link)' : 'variable: TX set by an earlier link or a collector rule');
    }
    parts.push(linkTerms(link, first, ctx));
  }
  if (parts.length === 0) throw new Unsupported('no link left after the 901 defaults');
  // Terms are calls, `any(…)` or `not …`: only a link with several terms needs parentheses.
  if (parts.length === 1) return parts[0].join(' or ');
  return parts.map((p) => (p.length > 1 ? `(${p.join(' or ')})` : p[0])).join(' and ');
}

export interface Conversion {
  rules: ManagedRule[];
  /** CRS id -> why it is not converted. */
  leftOut: Map<string, { info: RuleInfo; reason: string; kind: 'unsupported' | 'disabled-by-defaults' }>;
  detection: RuleInfo[];
  /** Features (as analyze.ts names them) the converter handles. */
  supported: (feature: string) => boolean;
}

export function managedRuleOf(info: RuleInfo, expression: string): ManagedRule {
  const id = String(info.id);
  const level = info.paranoiaLevel ?? 1;
  const categories = [`paranoia-level-${level}`];
  for (const t of info.tags) {
    const c = categoryOfTag(t);
    if (/^paranoia-level-\d$/.test(c)) continue;
    if (!categories.includes(c)) categories.push(c);
  }
  const increment = info.severity ? ANOMALY_INCREMENT[info.severity] : undefined;
  if (increment === undefined) throw new Unsupported(`severity ${info.severity ?? 'missing'}`);
  return {
    id: mintId(`owasp:${id}`),
    ref: id,
    version: OWASP_VERSION,
    description: `${id}: ${info.msg ?? ''}`,
    expression,
    action: 'score',
    action_parameters: { increment },
    enabled: true,
    categories,
    last_updated: OWASP_LAST_UPDATED,
  } as ManagedRule;
}

const SUPPORTED_FEATURE_PREFIXES = ['directive: SecRule', 'chain', 'phase: 1', 'phase: 2', 'metadata:', 'quoting:', 'data file:', 'regex:', 'setvar: tx. =+', 'setvar with %{macro}'];
const SUPPORTED_ACTIONS = new Set(['block', 'pass', 'capture', 'log', 'nolog', 'auditlog', 'noauditlog', 'multiMatch', 'expirevar']);

function featureSupported(f: string): boolean {
  if (SUPPORTED_FEATURE_PREFIXES.some((p) => f.startsWith(p))) return !f.includes('(MISSING)');
  let m: RegExpExecArray | null;
  if ((m = /^variable: [!&]?([A-Z_]+)/.exec(f))) return m[1] in VARIABLES || m[1] === 'MATCHED_VAR' || m[1] === 'MATCHED_VARS';
  if ((m = /^variable selector: (\w+)/.exec(f))) return m[1] !== 'regex' || f.includes('(in exclusion)');
  if ((m = /^operator: !?@(\w+)/.exec(f))) return m[1] in OPERATORS;
  if ((m = /^operator argument with %\{macro\}/.exec(f))) return true;
  if ((m = /^transformation: t:(\w+)/.exec(f))) return m[1] === 'none' || TRANSFORMATIONS.has(m[1]);
  if ((m = /^action: (\w+)/.exec(f))) return SUPPORTED_ACTIONS.has(m[1]);
  if (f === 'ctl: auditLogParts') return true;
  return false;
}

export function convertAnalysis(a: Analysis): Conversion {
  const ctx: ConvertContext = { defaults: crsDefaults(a) };
  // TX names written outside the 901 defaults (by captures or collector rules).
  setByCrs = new Set();
  for (const f of a.files) {
    if (/^REQUEST-901-/.test(f.file)) continue;
    for (const r of f.rules) for (const l of r.rule.links) for (const s of l.setvars) if (s.collection === 'tx') setByCrs.add(s.key.toLowerCase());
  }
  const detection = a.files.flatMap((f) => f.rules).filter((r) => r.kind === 'detection');
  const rules: ManagedRule[] = [];
  const leftOut: Conversion['leftOut'] = new Map();
  for (const info of detection) {
    const id = String(info.id);
    try {
      if (info.phase !== 1 && info.phase !== 2) throw new Unsupported(`phase ${info.phase}`);
      const rewrite = REWRITES[id];
      rules.push(managedRuleOf(info, rewrite ? rewrite.expression(ctx, info.rule) : ruleExpression(info.rule, ctx)));
    } catch (e) {
      if (e instanceof Unsupported) leftOut.set(id, { info, reason: e.feature, kind: 'unsupported' });
      else if (e instanceof DisabledByDefaults) leftOut.set(id, { info, reason: `never matches with the 901 defaults: \`${e.message}\``, kind: 'disabled-by-defaults' });
      else throw e;
    }
  }
  rules.sort((x, y) => Number(x.ref) - Number(y.ref));
  return { rules, leftOut, detection, supported: featureSupported };
}

// ---------------------------------------------------------------------------------------
// Data files

/** The phrases of every `.data` file (comment lines starting with `#` and blank lines skipped). */
export function readDataFiles(dir: string): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const f of readdirSync(dir).filter((x) => x.endsWith('.data')).sort()) {
    out[f] = readFileSync(join(dir, f), 'utf8')
      .split(/\r?\n/)
      .map((l) => l.trim())
      .filter((l) => l !== '' && !l.startsWith('#'));
  }
  return out;
}

export function renderDataModule(data: Record<string, string[]>): string {
  const lines = [
    '// GENERATED by scripts/crs/convert.ts from the CRS 3.3.4 `.data` files (Debian modsecurity-crs). Do not edit.',
    '// The phrases of each file, for `op.pmFromFile(v, "file.data")`; comment and blank lines are left out.',
    'export const CRS_DATA: Record<string, readonly string[]> = {',
  ];
  for (const [file, phrases] of Object.entries(data)) {
    lines.push(`  ${JSON.stringify(file)}: [`);
    for (const p of phrases) lines.push(`    ${JSON.stringify(p)},`);
    lines.push('  ],');
  }
  lines.push('};', '');
  return lines.join('\n');
}

/** The detection rules left out, in CRS id order, for `generated/owasp-unconverted.json`. */
export function unconvertedList(c: Conversion): { ref: string; file: string; paranoiaLevel?: number; message: string; reason: string }[] {
  return [...c.leftOut]
    .sort((x, y) => Number(x[0]) - Number(y[0]))
    .map(([id, { info, reason }]) => ({ ref: id, file: info.file, ...(info.paranoiaLevel !== null ? { paranoiaLevel: info.paranoiaLevel } : {}), message: info.msg ?? '', reason }));
}

/**
 * Where the converted ruleset, with the request fields of requests/crsFields.ts, still
 * differs from ModSecurity by design or by approximation (besides the per-rule ones the
 * report lists: hand rewrites, MATCHED_VAR chains). Kept here so the coverage report lists
 * them all; each names what a user would see differ.
 */
export const APPROXIMATIONS: readonly string[] = [
  'Anomaly scores: a converted rule adds its severity\'s score once when it matches, as the hosted OWASP ruleset (a boolean rule per CRS rule) does; ModSecurity adds it once per matched variable (a payload in two arguments scores twice), so its total can be higher for the same request. Kept: the hosted ruleset is what Rulesmith models.',
  'XML bodies: a small non-validating parser stands in for libxml2. `XML:/*` (`crs.xml`) is the root element\'s text content, `XML://@*` (`crs.xml_attributes`) each attribute value; the five predefined entities and numeric character references are decoded (a reference becomes the UTF-8 bytes of its code point), CDATA is text, a DTD is skipped and its entities are not expanded; a document libxml2 rejects for other reasons (an invalid name, an unquoted or duplicate attribute, a bad encoding declaration) may still parse here. Rules over other XPath expressions would be left out (CRS 3.3.4 has none).',
  'MULTIPART_STRICT_ERROR: set for a multipart body error, content before the first boundary, a missing closing boundary or a part without a name; ModSecurity\'s other strict flags (a quoted or white-space boundary, header folding, LF-only line ends, a missing semicolon, invalid quoting, data after the last boundary) are not modelled.',
  'Request variables mix the two engines where the CRS 3.3.x tests need it: REQUEST_BODY is empty with the XML, JSON and multipart processors (ModSecurity 2); REQUEST_URI and REQUEST_FILENAME are percent-decoded and JSON leaves are in ARGS only (libmodsecurity 3).',
  'Persistent collections (IP, SESSION, GLOBAL) are not modelled: 913100–913120 do not remember a scanner for later requests, and `expirevar` has no effect.',
  'libinjection (`op.detectSQLi`, `op.detectXSS`) is a clean-room implementation of the published algorithm and tables; where it differs from the C library on known inputs, the difference is a bug (test/fixtures/libinjection-extra lists the cases checked beyond the vendored tests).',
];

export function renderReport(a: Analysis, c: Conversion): string {
  const converted = new Set(c.rules.map((r) => r.ref));
  const out = [renderCoverage(a, { supported: c.supported, converted })];
  out.push('Note: a converted rule may still appear under an unsupported feature when that feature is a side effect the managed rule does not need: `setvar: ip. =` (913100–913120 remember scanners in the persistent IP collection; not modelled), `expirevar`, `variable: TX`/`&TX` links decided by the 901 defaults (evaluated at build time); and a rule rewritten by hand (see Approximations) still appears under the features its rewrite replaces (`variable: TX:N`, `action: capture` comparisons, collector rules).', '');
  out.push('## Detection rules not converted', '');
  out.push(`Converted ${c.rules.length} of ${c.detection.length} detection rules. The ${c.leftOut.size} below are left out of owasp-rules.json (no degraded form is emitted).`, '');
  out.push('| Rule | File | PL | Reason |', '|---|---|---|---|');
  for (const [id, { info, reason }] of [...c.leftOut].sort((x, y) => Number(x[0]) - Number(y[0])))
    out.push(`| ${id} | ${info.file} | ${info.paranoiaLevel ?? '?'} | ${reason.replace(/\|/g, '\\|')} |`);
  out.push('');
  const long = c.rules.filter((r) => r.expression.length > 4096);
  out.push('## Expressions over 4,096 characters', '');
  out.push(`The checker limits user expressions to 4,096 characters; these converted rules are longer because their CRS pattern alone is about that long, so the limit must not apply to managed rules: ${long.map((r) => `${r.ref} (${r.expression.length})`).join(', ') || 'none'}.`, '');
  out.push('## Approximations', '');
  out.push('Ruleset-wide:', '');
  for (const line of APPROXIMATIONS) out.push(`- ${line}`);
  out.push('', 'Per rule:', '');
  const approx = c.detection.filter((r) => converted.has(String(r.id)) && r.rule.links.slice(1).some((l) => l.variables.some((v) => v.name === 'MATCHED_VAR' || v.name === 'MATCHED_VARS')));
  for (const [id, rw] of Object.entries(REWRITES)) if (converted.has(id)) out.push(`- ${id} rewritten by hand (scripts/crs/convert.ts REWRITES): ${rw.note}.`);
  out.push('');
  out.push(`Later chain links over MATCHED_VAR/MATCHED_VARS are applied to the first link's variables (any value, not necessarily the matched one): ${approx.map((r) => r.id).join(' ') || 'none'}.`, '');
  return out.join('\n');
}

// ---------------------------------------------------------------------------------------
// Command line

function main(argv: string[]): number {
  let dir = process.env.CRS_RULES_DIR || DEFAULT_CRS_DIR;
  let outDir = 'server/src/managed/generated';
  let dataFile = 'server/src/language/runtime/crs/crs-data.ts';
  let report = 'server/out/crs-coverage.md';
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--crs' && argv[i + 1]) dir = argv[++i];
    else if (a === '--out' && argv[i + 1]) outDir = argv[++i];
    else if (a === '--data' && argv[i + 1]) dataFile = argv[++i];
    else if (a === '--report' && argv[i + 1]) report = argv[++i];
    else {
      console.error(`unknown argument ${a}\nusage: node --import tsx scripts/crs/convert.ts [--crs DIR] [--out DIR] [--data FILE] [--report FILE]`);
      return 2;
    }
  }
  if (!existsSync(dir)) {
    console.error(`${dir}: no such folder. ${MISSING_CRS_HELP}`);
    return 2;
  }
  const analysis = analyzeCrs(dir);
  const c = convertAnalysis(analysis);
  mkdirSync(outDir, { recursive: true });
  writeFileSync(join(outDir, 'owasp-rules.json'), JSON.stringify(c.rules, null, 1) + '\n');
  writeFileSync(join(outDir, 'owasp-unconverted.json'), JSON.stringify(unconvertedList(c), null, 1) + '\n');
  mkdirSync(dirname(dataFile), { recursive: true });
  writeFileSync(dataFile, renderDataModule(readDataFiles(dir)));
  mkdirSync(dirname(report), { recursive: true });
  writeFileSync(report, renderReport(analysis, c) + '\n');
  const perFile = analysis.files
    .map((f) => {
      const det = f.rules.filter((r) => r.kind === 'detection');
      const conv = det.filter((r) => !c.leftOut.has(String(r.id))).length;
      return det.length ? `${f.file.replace(/\.conf$/, '')} ${conv}/${det.length}` : '';
    })
    .filter(Boolean);
  console.log(perFile.join('\n'));
  console.log(`converted ${c.rules.length} of ${c.detection.length} detection rules (report: ${report})`);
  return 0;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) process.exitCode = main(process.argv.slice(2));
