/**
 * What a deploy would change: the body sent to an entry-point PUT (read-only fields
 * dropped), a canonical JSON text of it for a side-by-side diff, and a rule-aligned
 * summary (added / removed / changed / moved rules) for the confirmation.
 *
 * Rules are matched by `ref` (which the API keeps stable across PUTs, rules-api §2.4),
 * else by `id`, else, for rules that have neither, by their position among such rules —
 * so inserting a rule in the middle reads as one addition, not as every later rule
 * changing (the pain of terraform-provider-cloudflare#4917). Pure: no I/O.
 */
import type { Rule, Ruleset } from './model';

/** Fields of a rule the API sets itself; never sent, never compared. */
const RULE_READ_ONLY = new Set(['version', 'last_updated', 'categories']);
/** Fields of an entry point PUT body (rules-api §2.6: `kind`/`phase` are refused there). */
const ENTRY_POINT_FIELDS = ['name', 'description', 'rules'] as const;

export interface EntryPointBody {
  readonly name?: string;
  readonly description?: string;
  readonly rules: Rule[];
}

/**
 * The body of `PUT …/phases/{phase}/entrypoint` for a ruleset as pulled or written: its
 * name, description and rules, without read-only fields and without the empty `id`,
 * `version` and `ref` strings the migration config carries.
 */
export function entryPointBody(ruleset: Ruleset): EntryPointBody {
  const out: { name?: string; description?: string; rules: Rule[] } = { rules: (ruleset.rules ?? []).map(ruleBody) };
  for (const k of ENTRY_POINT_FIELDS) {
    if (k === 'rules') continue;
    const v = ruleset[k];
    if (typeof v === 'string') out[k] = v;
  }
  return out;
}

function ruleBody(rule: Rule): Rule {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(rule)) {
    if (RULE_READ_ONLY.has(k)) continue;
    if ((k === 'id' || k === 'ref') && v === '') continue;
    out[k] = v;
  }
  return out as Rule;
}

/** A stable JSON text of a ruleset's deployable content (keys sorted, 2-space indent), for vscode.diff. */
export function canonicalJson(ruleset: Ruleset | undefined): string {
  if (!ruleset) return '{\n  "rules": []\n}\n';
  const body = entryPointBody(ruleset);
  return `${JSON.stringify(sortKeys({ ...body, rules: body.rules.map(withoutId) }), null, 2)}\n`;
}

/** Ids are minted by the service; refs say which rule is which. Shown only when there is no ref. */
function withoutId(rule: Rule): Rule {
  if (rule.ref === undefined || rule.ref === '') return rule;
  const { id: _id, ...rest } = rule;
  return rest;
}

function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v === null || typeof v !== 'object') return v;
  // `rules` last, after the ruleset's own properties, so that the header reads first.
  const keys = Object.keys(v as object).sort((a, b) => (a === 'rules' ? 1 : b === 'rules' ? -1 : a.localeCompare(b)));
  return Object.fromEntries(keys.map((k) => [k, sortKeys((v as Record<string, unknown>)[k])]));
}

export interface RuleChange {
  /** How the rule is named in messages: its description, else its ref or id, else its position. */
  readonly label: string;
  /** The key rules were matched by (`ref:…`, `id:…`, `#n`). */
  readonly key: string;
  /** The rule's id when it has one (for a tooltip: messages name rules by `label`). */
  readonly id?: string;
  /** Index in the old list (removed, changed, moved) and in the new one (added, changed, moved). */
  readonly before?: number;
  readonly after?: number;
  /** Changed properties, e.g. `expression`, `action_parameters`, `enabled`. */
  readonly fields?: readonly string[];
}

export interface RulesetDiff {
  readonly added: readonly RuleChange[];
  readonly removed: readonly RuleChange[];
  readonly changed: readonly RuleChange[];
  /** Same definition, other relative position. */
  readonly moved: readonly RuleChange[];
  readonly unchanged: number;
  /** `description`/`name` of the ruleset itself. */
  readonly rulesetFields: readonly string[];
  readonly identical: boolean;
}

function keyOf(rule: Rule, anonIndex: number): string {
  if (typeof rule.ref === 'string' && rule.ref !== '') return `ref:${rule.ref}`;
  if (typeof rule.id === 'string' && rule.id !== '') return `id:${rule.id}`;
  return `#${anonIndex}`;
}

function keyed(rules: readonly Rule[]): Map<string, { rule: Rule; index: number }> {
  const out = new Map<string, { rule: Rule; index: number }>();
  let anon = 0;
  rules.forEach((rule, index) => {
    let k = keyOf(rule, anon);
    if (k.startsWith('#')) anon++;
    // Duplicate keys (invalid, but possible in a draft): keep them apart.
    while (out.has(k)) k = `${k}'`;
    out.set(k, { rule, index });
  });
  return out;
}

/** How a rule is named for people: its description, else a readable ref, else its position and what it does — never a 32-hex id (that goes in `RuleChange.id`). */
function labelOf(rule: Rule, index: number): string {
  if (typeof rule.description === 'string' && rule.description.trim() !== '') return rule.description.trim();
  if (typeof rule.ref === 'string' && rule.ref !== '' && !/^[0-9a-f]{32}$/i.test(rule.ref)) return rule.ref;
  const expr = typeof rule.expression === 'string' ? rule.expression : '';
  return `rule ${index + 1} (${rule.action ?? 'no action'}${expr ? ` when ${expr.length > 40 ? `${expr.slice(0, 39)}…` : expr}` : ''})`;
}

function same(a: unknown, b: unknown): boolean {
  return JSON.stringify(sortKeys(a)) === JSON.stringify(sortKeys(b));
}

/** Properties whose values differ (read-only ones and `id` aside), in name order. */
function changedFields(a: Rule, b: Rule): string[] {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  const out: string[] = [];
  for (const k of [...keys].sort()) {
    if (RULE_READ_ONLY.has(k) || k === 'id') continue;
    let va = (a as Record<string, unknown>)[k];
    let vb = (b as Record<string, unknown>)[k];
    // Defaults the API fills in: enabled true, description "".
    if (k === 'enabled') [va, vb] = [va ?? true, vb ?? true];
    if (k === 'description') [va, vb] = [va ?? '', vb ?? ''];
    if (!same(va, vb)) out.push(k);
  }
  return out;
}

function idOf(...rules: (Rule | undefined)[]): { id?: string } {
  const id = rules.map((r) => r?.id).find((x) => typeof x === 'string' && x !== '');
  return id ? { id } : {};
}

/** The rule-aligned difference from `before` (the zone's current version; undefined: none) to `after`. */
export function diffRulesets(before: Ruleset | undefined, after: Ruleset): RulesetDiff {
  const old = keyed(before?.rules ?? []);
  const next = keyed(after.rules ?? []);
  const added: RuleChange[] = [];
  const removed: RuleChange[] = [];
  const changed: RuleChange[] = [];
  const kept: { key: string; before: number; after: number; rule: Rule }[] = [];
  for (const [key, { rule, index }] of next) {
    const o = old.get(key);
    if (!o) {
      added.push({ key, label: labelOf(rule, index), ...idOf(rule), after: index });
      continue;
    }
    const fields = changedFields(o.rule, rule);
    if (fields.length > 0) changed.push({ key, label: labelOf(rule, index), ...idOf(rule, o.rule), before: o.index, after: index, fields });
    kept.push({ key, before: o.index, after: index, rule });
  }
  for (const [key, { rule, index }] of old) if (!next.has(key)) removed.push({ key, label: labelOf(rule, index), ...idOf(rule), before: index });

  // Moved: rules kept in both whose relative order differs. The longest run that keeps its
  // order stays put; the others moved.
  const order = kept.map((k) => k.before);
  const stay = new Set(longestIncreasing(order).map((i) => kept[i].key));
  const moved = kept.filter((k) => !stay.has(k.key)).map((k) => ({ key: k.key, label: labelOf(k.rule, k.after), ...idOf(k.rule, old.get(k.key)?.rule), before: k.before, after: k.after }));
  const changedKeys = new Set(changed.map((c) => c.key));
  const movedKeys = new Set(moved.map((m) => m.key));
  const unchanged = kept.filter((k) => !changedKeys.has(k.key) && !movedKeys.has(k.key)).length;

  const rulesetFields = (['name', 'description'] as const).filter((k) => before !== undefined && after[k] !== undefined && (before[k] ?? '') !== after[k]);
  return {
    added,
    removed,
    changed,
    moved,
    unchanged,
    rulesetFields,
    identical: added.length === 0 && removed.length === 0 && changed.length === 0 && moved.length === 0 && rulesetFields.length === 0,
  };
}

/** Indices (into `xs`) of one longest strictly increasing subsequence. O(n log n). */
function longestIncreasing(xs: readonly number[]): number[] {
  const tails: number[] = [];
  const prev: number[] = new Array(xs.length).fill(-1);
  for (let i = 0; i < xs.length; i++) {
    let lo = 0;
    let hi = tails.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (xs[tails[mid]] < xs[i]) lo = mid + 1;
      else hi = mid;
    }
    if (lo > 0) prev[i] = tails[lo - 1];
    tails[lo] = i;
  }
  const out: number[] = [];
  for (let i = tails.length > 0 ? tails[tails.length - 1] : -1; i >= 0; i = prev[i]) out.push(i);
  return out.reverse();
}

/** One line for a confirmation: "2 rules added, 1 changed (expression), 1 removed". */
export function diffSummary(d: RulesetDiff): string {
  if (d.identical) return 'no changes';
  const parts: string[] = [];
  const n = (k: number, what: string) => `${k} rule${k === 1 ? '' : 's'} ${what}`;
  if (d.added.length) parts.push(n(d.added.length, 'added'));
  if (d.changed.length) {
    const fields = [...new Set(d.changed.flatMap((c) => c.fields ?? []))];
    parts.push(`${n(d.changed.length, 'changed')} (${fields.join(', ')})`);
  }
  if (d.removed.length) parts.push(n(d.removed.length, 'removed'));
  if (d.moved.length) parts.push(n(d.moved.length, 'moved'));
  if (d.rulesetFields.length) parts.push(`ruleset ${d.rulesetFields.join(' and ')} changed`);
  return parts.join(', ');
}

/** The changes one per line, for the confirmation's detail. */
export function diffDetails(d: RulesetDiff, max = 12): string[] {
  const lines = [
    ...d.added.map((c) => `+ ${c.label}`),
    ...d.removed.map((c) => `− ${c.label}`),
    ...d.changed.map((c) => `~ ${c.label}: ${(c.fields ?? []).join(', ')}`),
    ...d.moved.map((c) => `↕ ${c.label}: position ${(c.before ?? 0) + 1} → ${(c.after ?? 0) + 1}`),
  ];
  return lines.length > max ? [...lines.slice(0, max), `… and ${lines.length - max} more`] : lines;
}
