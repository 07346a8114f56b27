/**
 * A CloudFlare-package rule's mode as an override of its counterparts in the vendor ruleset
 * (previousWafContent.ts: the vendor rule of the same description, or the one its
 * `counterpart` names; 12 of the package's 21 deny rules have one). Shared by the migrated
 * configuration (config.ts: the modes the user set) and the validation-mode stand-in
 * (previousWafVerdict.ts: every mode, defaults included).
 */
import type { ManagedRule } from '../rulesets/catalog';
import type { RuleOverride } from '../rulesets/model';
import type { RuleDef, RuleMode } from './previousWafContent';

/** The vendor rules that stand for deny rule `rule`. */
export function counterparts(rule: RuleDef, vendorRules: readonly ManagedRule[]): ManagedRule[] {
  if (rule.kind !== 'deny') return [];
  const description = rule.counterpart ?? rule.description;
  return vendorRules.filter((v) => v.description === description);
}

/** A deny rule's mode as an override of its counterpart `v`; undefined when `v` does that already. */
export function modeOverride(mode: RuleMode, v: ManagedRule): RuleOverride | undefined {
  if (mode === 'disable' || mode === 'off') return v.enabled ? { id: v.id, enabled: false } : undefined;
  const action = mode === 'simulate' ? 'log' : mode === 'block' || mode === 'challenge' ? mode : undefined;
  if (action === undefined || (action === v.action && v.enabled)) return undefined;
  return { id: v.id, action, enabled: true };
}
