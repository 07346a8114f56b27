/**
 * "Pull and re-apply my edits": a three-way merge of a ruleset's rules. `base` is the
 * version the file was pulled at, `mine` the file now, `theirs` the zone's current version.
 * Rules are matched by `ref`, else `id` (the service keeps both across PUTs); a rule with
 * neither is one the file added. Per rule: unchanged on one side takes the other side's
 * version (an edit or a removal); the same change on both sides is taken once; different
 * changes — or an edit on one side and a removal on the other — are a conflict. The order
 * is the zone's when the file did not reorder its rules, else the file's; the rules added
 * on the other side go after the rule they follow there. Pure: no I/O.
 */
import type { Rule } from './model';

/** Fields the service sets itself (and `id`, which it mints; rules are matched by key): never compared. */
const READ_ONLY = new Set(['id', 'version', 'last_updated', 'categories']);

export type MergeConflictKind = 'both-changed' | 'changed-here-removed-on-zone' | 'removed-here-changed-on-zone' | 'both-added';

export interface MergeConflict {
  readonly key: string;
  /** How people name the rule: description, else ref, else its action and expression. */
  readonly label: string;
  readonly kind: MergeConflictKind;
  readonly base?: Rule;
  readonly mine?: Rule;
  readonly theirs?: Rule;
}

/** One slot of the merged list: a rule taken from one side, or a conflict to resolve. */
export type MergeSlot = { readonly rule: Rule; readonly from: 'base' | 'mine' | 'theirs' | 'both' } | { readonly conflict: MergeConflict };

export interface RuleMerge {
  readonly slots: readonly MergeSlot[];
  readonly conflicts: readonly MergeConflict[];
  /** The merged rules when there is no conflict. */
  readonly rules?: readonly Rule[];
  /** The file's edits re-applied (rules the file changed, added or removed against the base). */
  readonly reapplied: number;
  /** The zone's changes taken (rules the zone changed, added or removed against the base). */
  readonly fromZone: number;
}

/** The key a rule is matched by across the three versions; undefined for a rule added without ref or id. */
export function ruleKey(rule: Rule): string | undefined {
  if (typeof rule.ref === 'string' && rule.ref !== '') return `ref:${rule.ref}`;
  if (typeof rule.id === 'string' && rule.id !== '') return `id:${rule.id}`;
  return undefined;
}

function sorted(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sorted);
  if (v === null || typeof v !== 'object') return v;
  return Object.fromEntries(
    Object.keys(v as object)
      .sort()
      .map((k) => [k, sorted((v as Record<string, unknown>)[k])]),
  );
}

/** The rule's content as compared: read-only fields aside, the API's defaults filled in. */
function content(rule: Rule): string {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(rule)) if (!READ_ONLY.has(k) && v !== undefined) out[k] = v;
  out.enabled ??= true;
  if (out.description === '') delete out.description;
  return JSON.stringify(sorted(out));
}

const same = (a: Rule | undefined, b: Rule | undefined): boolean => (a === undefined || b === undefined ? a === b : content(a) === content(b));

export function ruleLabel(rule: Rule): string {
  if (typeof rule.description === 'string' && rule.description.trim() !== '') return rule.description.trim();
  if (typeof rule.ref === 'string' && rule.ref !== '' && !/^[0-9a-f]{32}$/i.test(rule.ref)) return rule.ref;
  const expr = typeof rule.expression === 'string' ? rule.expression : '';
  return `${rule.action ?? 'rule'} when ${expr.length > 40 ? `${expr.slice(0, 39)}…` : expr}`;
}

function byKey(rules: readonly Rule[]): Map<string, Rule> {
  const m = new Map<string, Rule>();
  for (const r of rules) {
    const k = ruleKey(r);
    if (k !== undefined && !m.has(k)) m.set(k, r);
  }
  return m;
}

/** Keys in `rules`' order (duplicates and unkeyed rules left out). */
const keysOf = (rules: readonly Rule[]): string[] => [...byKey(rules).keys()];

export function mergeRules(base: readonly Rule[], mine: readonly Rule[], theirs: readonly Rule[]): RuleMerge {
  const B = byKey(base);
  const M = byKey(mine);
  const T = byKey(theirs);
  const decided = new Map<string, MergeSlot | null>();
  const conflicts: MergeConflict[] = [];
  let reapplied = 0;
  let fromZone = 0;
  for (const key of new Set([...B.keys(), ...M.keys(), ...T.keys()])) {
    const b = B.get(key);
    const m = M.get(key);
    const t = T.get(key);
    const mineChanged = !same(b, m);
    const zoneChanged = !same(b, t);
    let slot: MergeSlot | null;
    if (!mineChanged) {
      slot = t ? { rule: t, from: zoneChanged ? 'theirs' : 'base' } : null;
      if (zoneChanged) fromZone++;
    } else if (!zoneChanged || same(m, t)) {
      slot = m ? { rule: m, from: zoneChanged ? 'both' : 'mine' } : null;
      reapplied++;
    } else {
      const kind: MergeConflictKind = !b ? 'both-added' : !t ? 'changed-here-removed-on-zone' : !m ? 'removed-here-changed-on-zone' : 'both-changed';
      const c: MergeConflict = { key, label: ruleLabel((m ?? t ?? b)!), kind, ...(b ? { base: b } : {}), ...(m ? { mine: m } : {}), ...(t ? { theirs: t } : {}) };
      conflicts.push(c);
      slot = { conflict: c };
    }
    decided.set(key, slot);
  }

  // The order: the zone's, unless the file reordered the rules it shares with the base.
  const shared = (list: readonly string[]) => list.filter((k) => B.has(k));
  const mineReordered = shared(keysOf(mine)).join('\u0000') !== shared(keysOf(base)).filter((k) => M.has(k)).join('\u0000');
  const [skeleton, other] = mineReordered ? [mine, theirs] : [theirs, mine];
  const order: (string | Rule)[] = [];
  const placed = new Set<string>();
  for (const r of skeleton) {
    const k = ruleKey(r);
    if (k === undefined) {
      if (skeleton === mine) order.push(r);
      continue;
    }
    if (!placed.has(k)) {
      order.push(k);
      placed.add(k);
    }
  }
  // Rules of the other side not placed yet (added there, or removed from the skeleton's
  // side but kept by the merge): after the rule they follow on their side.
  let after: number = -1;
  for (const r of other) {
    const k = ruleKey(r);
    if (k !== undefined && placed.has(k)) {
      after = order.indexOf(k);
      continue;
    }
    if (k === undefined && other !== mine) continue;
    order.splice(after + 1, 0, k ?? r);
    after++;
    if (k !== undefined) placed.add(k);
  }
  // Anything left (a conflict whose rule is on neither ordered side, e.g. the base's only).
  for (const k of decided.keys()) if (!placed.has(k)) order.push(k);

  const slots: MergeSlot[] = [];
  for (const o of order) {
    if (typeof o !== 'string') {
      slots.push({ rule: o, from: 'mine' });
      reapplied++;
      continue;
    }
    const s = decided.get(o);
    if (s) slots.push(s);
  }
  const rules = conflicts.length === 0 ? slots.map((s) => ('rule' in s ? s.rule : undefined)).filter((r): r is Rule => r !== undefined) : undefined;
  return { slots, conflicts, ...(rules ? { rules } : {}), reapplied, fromZone };
}

const indent = (json: string, pad: string): string => json.split('\n').map((l) => pad + l).join('\n');

/**
 * The merged ruleset as file text (2-space JSON): `header`'s fields, then the rules; a
 * conflict is written with Git's markers (`<<<<<<<` the file's version, `=======`, the
 * zone's, `>>>>>>>`), which VS Code's merge editor and its conflict decorations read.
 */
export function mergedText(header: Readonly<Record<string, unknown>>, merge: RuleMerge, labels: { readonly mine: string; readonly theirs: string }): string {
  const head = JSON.stringify({ ...header, rules: [] }, null, 2).split('\n');
  const rulesLine = head.findIndex((l) => l === '  "rules": []');
  const items: string[] = [];
  merge.slots.forEach((s, i) => {
    const comma = i < merge.slots.length - 1 ? ',' : '';
    const one = (r: Rule | undefined) => (r ? `${indent(JSON.stringify(r, null, 2), '    ')}${comma}\n` : '');
    if ('rule' in s) items.push(one(s.rule));
    else items.push(`<<<<<<< ${labels.mine}\n${one(s.conflict.mine)}=======\n${one(s.conflict.theirs)}>>>>>>> ${labels.theirs}\n`);
  });
  const body = items.length === 0 ? ['  "rules": []'] : ['  "rules": [', items.join('').replace(/\n$/, ''), '  ]'];
  return `${[...head.slice(0, rulesLine), ...body, ...head.slice(rulesLine + 1)].join('\n')}\n`;
}
