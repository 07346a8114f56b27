/**
 * Managed rulesets as the ruleset model sees them: account-level, kind `managed`, phase
 * `http_request_firewall_managed`, deployed by an `execute` rule and tuned with overrides.
 * Unlike the hosted service we keep their expressions (the engine needs them);
 * `managedOnly` extensions of the language are allowed in them. The catalog's shape and
 * the lookups over it live here; its content (the vendor and OWASP-based rulesets) is
 * managed/'s, and comes in as a value.
 */
import type { Plan } from '../language/scheme/types';
import type { Rule } from './model';

export interface ManagedRule extends Rule {
  readonly id: string;
  readonly ref: string;
  readonly description: string;
  readonly expression: string;
  /** Default action; `score` rules add `action_parameters.increment` to the anomaly score. */
  readonly action: string;
  /** Default on/off. */
  readonly enabled: boolean;
  readonly categories: readonly string[];
}

export interface ManagedRulesetVersion {
  readonly version: string;
  readonly last_updated: string;
  readonly rules: readonly ManagedRule[];
}

export interface ManagedRuleset {
  /** Stable 32-hex id. */
  readonly id: string;
  readonly name: string;
  readonly description: string;
  readonly kind: 'managed';
  readonly phase: 'http_request_firewall_managed';
  /** Newest last; `latest` means the last one. */
  readonly versions: readonly ManagedRulesetVersion[];
  /**
   * For a scored ruleset (OWASP-based): the id of the anomaly-score rule, the one whose
   * `score_threshold` and action decide (949110).
   */
  readonly anomalyRuleId?: string;
  /**
   * The plan a zone needs to deploy it (rules-api §2.2: deploying one the zone is not
   * entitled to fails the whole entry-point write); absent = every plan. The validator
   * reports `plan-required` from it.
   */
  readonly plan?: Plan;
}

export interface ManagedCatalog {
  readonly rulesets: readonly ManagedRuleset[];
}

/** The ruleset's rules at `version` (`latest` or absent = newest), or undefined. */
export function rulesetVersion(r: ManagedRuleset, version?: string): ManagedRulesetVersion | undefined {
  if (version === undefined || version === 'latest') return r.versions[r.versions.length - 1];
  return r.versions.find((v) => v.version === version);
}

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

export const PARANOIA_TAG = /^paranoia-level-([1-4])$/;

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
