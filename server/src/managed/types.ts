/**
 * Managed rulesets: account-level, kind `managed`, phase `http_request_firewall_managed`,
 * deployed by an `execute` rule and tuned with overrides. Unlike the hosted service we
 * keep their expressions (the engine needs them); `managedOnly` extensions of the
 * language are allowed in them.
 */
import type { Rule } from '../rulesets/model';

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
}

export interface ManagedCatalog {
  readonly rulesets: readonly ManagedRuleset[];
}

/** The ruleset's rules at `version` (`latest` or absent = newest), or undefined. */
export function rulesetVersion(r: ManagedRuleset, version?: string): ManagedRulesetVersion | undefined {
  if (version === undefined || version === 'latest') return r.versions[r.versions.length - 1];
  return r.versions.find((v) => v.version === version);
}
