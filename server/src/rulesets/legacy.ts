/**
 * Legacy Firewall Rules and Filters (rules API §4.1): the zone-level objects that ran
 * before custom rules replaced them, kept so that the engine can evaluate a zone that
 * has not been migrated, and so that a migration can be checked against them.
 */
import type { SKIP_PRODUCTS } from './model';

export type SkipProduct = (typeof SKIP_PRODUCTS)[number];

export const LEGACY_ACTIONS = ['log', 'bypass', 'allow', 'challenge', 'managed_challenge', 'js_challenge', 'block'] as const;
export type LegacyAction = (typeof LEGACY_ACTIONS)[number];

/**
 * The order in which rules of equal priority (or all rules, when none has a priority)
 * run: log (1) > bypass (2) > allow (3) > challenge (4) > managed_challenge (5) >
 * js_challenge (6) > block (7). log and bypass do not stop evaluation.
 */
export const LEGACY_ACTION_PRECEDENCE: Readonly<Record<LegacyAction, number>> = {
  log: 1,
  bypass: 2,
  allow: 3,
  challenge: 4,
  managed_challenge: 5,
  js_challenge: 6,
  block: 7,
};

export interface LegacyFilter {
  /** 32 hex, read-only. */
  readonly id?: string;
  readonly expression?: string;
  /** Default false: a paused filter makes its rules inert. */
  readonly paused?: boolean;
  readonly description?: string;
  readonly ref?: string;
  /** `{"id": "…", "deleted": true}` when the filter was deleted under the rule. */
  readonly deleted?: boolean;
}

export interface LegacyFirewallRule {
  readonly id?: string;
  readonly filter: LegacyFilter;
  readonly action: LegacyAction;
  /** 0–2147483647, or null/absent: such rules run after every rule with a priority. */
  readonly priority?: number | null;
  /** Default false. */
  readonly paused?: boolean;
  readonly description?: string;
  readonly ref?: string;
  /** Only with `bypass`: the products the rule bypasses for the rest of the request. */
  readonly products?: readonly SkipProduct[];
  readonly created_on?: string;
  readonly modified_on?: string;
}

export interface LegacyConfig {
  readonly firewallRules: readonly LegacyFirewallRule[];
  /**
   * The firewall rules were upgraded to custom rules: they no longer run (their
   * successors live in the `http_request_firewall_custom` entry point).
   */
  readonly migrated: boolean;
  /**
   * The WAF managed-rules migration is in validation mode: the new managed rules run
   * (first, logging only) and the previous WAF's verdict acts.
   */
  readonly validationMode?: boolean;
}

/**
 * The firewall rules in the order the service runs them: by priority (lowest first),
 * rules without a priority after all others; ties broken by the action order of
 * LEGACY_ACTION_PRECEDENCE, then by their order in the list (a stable sort).
 */
export function legacyOrder<T extends Pick<LegacyFirewallRule, 'priority' | 'action'>>(rules: readonly T[]): T[] {
  const key = (r: T) => (typeof r.priority === 'number' && Number.isFinite(r.priority) ? r.priority : Number.POSITIVE_INFINITY);
  const rank = (r: T) => LEGACY_ACTION_PRECEDENCE[r.action] ?? 99;
  return rules
    .map((r, i) => ({ r, i }))
    .sort((a, b) => {
      const ka = key(a.r);
      const kb = key(b.r);
      if (ka !== kb) return ka < kb ? -1 : 1;
      return rank(a.r) - rank(b.r) || a.i - b.i;
    })
    .map((x) => x.r);
}
