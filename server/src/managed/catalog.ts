/**
 * The catalog of account-level managed rulesets, and lookups over it. Pure data and
 * functions: the engine, the validator, hover/completion and the rules service all read
 * the same catalog (passed in, so tests and the CRS build can supply another one).
 */
import { owaspRuleset } from './owasp';
import { OWASP_CRS_RULES } from './owaspCrs';
import { rulesetVersion, type ManagedCatalog, type ManagedRule, type ManagedRuleset } from './types';
import { vendorRuleset } from './vendor';

/** The vendor ruleset and the OWASP-based ruleset (CRS 3.3.4, converted at build time). */
export const defaultCatalog: ManagedCatalog = {
  rulesets: [vendorRuleset, owaspRuleset(OWASP_CRS_RULES)],
};

/** The managed ruleset with this id (ids compare case-insensitively), or undefined. */
export function findManagedRuleset(catalog: ManagedCatalog, id: string): ManagedRuleset | undefined {
  const wanted = id.toLowerCase();
  return catalog.rulesets.find((r) => r.id === wanted);
}

/** The rule `ruleId` of the ruleset at `version` (`latest` or absent = newest), or undefined. */
export function managedRuleById(ruleset: ManagedRuleset, version: string | undefined, ruleId: string): ManagedRule | undefined {
  const wanted = ruleId.toLowerCase();
  return rulesetVersion(ruleset, version)?.rules.find((r) => r.id === wanted);
}

export interface TagCount {
  readonly tag: string;
  /** Rules carrying the tag. */
  readonly count: number;
  /** Of those, enabled by default. */
  readonly enabled: number;
}

/**
 * Every category used in the ruleset at `version`, with rule counts, in order of first use
 * (the order rules list them); an empty list for an unknown version.
 */
export function tagsOf(ruleset: ManagedRuleset, version?: string): TagCount[] {
  const counts = new Map<string, { count: number; enabled: number }>();
  for (const rule of rulesetVersion(ruleset, version)?.rules ?? []) {
    for (const tag of new Set(rule.categories)) {
      const c = counts.get(tag) ?? { count: 0, enabled: 0 };
      c.count++;
      if (rule.enabled) c.enabled++;
      counts.set(tag, c);
    }
  }
  return [...counts].map(([tag, c]) => ({ tag, count: c.count, enabled: c.enabled }));
}

const PARANOIA_TAG = /^paranoia-level-([1-4])$/;

/** The rule's paranoia level from its `paranoia-level-N` tag (the lowest if several), or undefined. */
export function paranoiaLevelOf(rule: Pick<ManagedRule, 'categories'>): 1 | 2 | 3 | 4 | undefined {
  let level: number | undefined;
  for (const tag of rule.categories ?? []) {
    const m = PARANOIA_TAG.exec(tag);
    if (m) level = Math.min(level ?? 4, Number(m[1]));
  }
  return level as 1 | 2 | 3 | 4 | undefined;
}

/** The `paranoia-level-N` category for a level. */
export function paranoiaTag(level: 1 | 2 | 3 | 4): string {
  return `paranoia-level-${level}`;
}
