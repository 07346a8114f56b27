/**
 * A CloudFlare-package rule's mode as an override of its counterparts in the vendor ruleset
 * (previousWafContent.ts: the vendor rule of the same description, or the one its
 * `counterpart` names; 12 of the package's 21 deny rules have one). One walk of the package
 * for the migrated configuration (config.ts: the modes the user set) and the
 * validation-mode stand-in (previousWafVerdict.ts: every rule's effective mode).
 */
import type { ManagedRule } from '../rulesets/catalog';
import type { RuleOverride } from '../rulesets/model';
import { CLOUDFLARE_PACKAGE, type RuleDef, type RuleMode } from './previousWafContent';
import { effectiveRuleMode, groupMode, ruleMode, type ZoneWafSettings } from './previousWafSettings';

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

/**
 * The rule overrides that make the vendor ruleset's rules (`vendorRules`, the version the
 * execute rule runs) do what their CloudFlare-package counterparts do in the zone, and the
 * ids of the package's rules so carried. An override is given only where that differs from
 * the vendor rule's default. Allow rules (on/off) have no counterpart: the vendor ruleset
 * allows nothing.
 * - `effective`: every deny rule's effective mode (its group `off` → disabled; `default` →
 *   its `default_mode`), as the previous WAF ran it.
 * - `userSet`: only modes the user set away from the default, on rules whose group is on (a
 *   rule of a group that is off ran nowhere; a group's own mode is not carried).
 */
export function cloudflareModeOverrides(waf: ZoneWafSettings, vendorRules: readonly ManagedRule[], which: 'effective' | 'userSet'): { overrides: RuleOverride[]; carried: Set<string> } {
  const overrides: RuleOverride[] = [];
  const carried = new Set<string>();
  for (const group of CLOUDFLARE_PACKAGE.groups) {
    const groupOff = groupMode(waf, group) === 'off';
    if (groupOff && which === 'userSet') continue;
    for (const rule of group.rules) {
      if (rule.kind !== 'deny') continue;
      let mode: RuleMode;
      if (which === 'effective') mode = groupOff ? 'disable' : effectiveRuleMode(waf, rule);
      else {
        mode = ruleMode(waf, rule);
        if (mode === 'default' || mode === (rule.defaultMode ?? 'block')) continue;
      }
      const vs = counterparts(rule, vendorRules);
      if (vs.length > 0) carried.add(rule.id);
      for (const v of vs) {
        const o = modeOverride(mode, v);
        if (o) overrides.push(o);
      }
    }
  }
  return { overrides, carried };
}
