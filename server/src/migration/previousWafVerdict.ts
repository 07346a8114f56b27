/**
 * A stand-in for the previous WAF, for the engine's validation mode (the new managed rules
 * run first and only record; the previous WAF's verdict acts — `CompileZoneOptions.previousWaf`).
 *
 * The approximation, stated plainly: the previous WAF's rules content was never published
 * and its OWASP package was CRS 2.x, which Rulesmith does not have. So the previous WAF is
 * modelled as what the migration maps it to (`migrationConfig`), evaluated by the real
 * engine over the real managed rulesets of the catalog:
 * - OWASP package: the OWASP-based ruleset (CRS 3.3.4) at the sensitivity's mapped
 *   paranoia level and threshold (High → PL2/40, …), acting with the mapped action —
 *   `simulate` is reported as `simulate` (it only records);
 * - CloudFlare package: the vendor ruleset, where each vendor rule that has a counterpart
 *   in the package (previousWafContent.ts: the rule of the same description, or the one its
 *   `counterpart` names — 12 of its 21 deny rules) does what that rule's mode says, as the previous-WAF API reports it
 *   (cloudflareCounterparts.ts `cloudflareModeOverrides`, rule overrides on the execute rule): `disable`, or its
 *   group `off` (set by the user or by default, as Cloudflare WordPress) → disabled;
 *   `simulate` → `log`, reported as `simulate`; `block`/`challenge` → that action;
 *   `default` → its `default_mode`. Every other vendor rule keeps its default action;
 * - the zone-wide switch, the CloudFlare package switch, sensitivity Off, and the Page
 *   Rules that turn the WAF off or on apply as in the migrated config. (Firewall rules that
 *   bypass the WAF need nothing here: the engine skips the previous WAF after them.)
 * Not modelled: group and rule modes of the OWASP package (its CRS 2.x groups and rules
 * have no mapping to CRS 3.3.4 rules), modes of CloudFlare-package rules without a vendor
 * counterpart, the higher thresholds the previous OWASP package used for AJAX requests,
 * and URI-based overrides. So in validation mode a difference between the two verdicts
 * comes from what the user changed in the new configuration, or from what the migration
 * does not carry (it carries the CloudFlare-package rule modes the user set on rules with a
 * counterpart, and no group mode: config.ts).
 */
import type { EvalContext, FieldValues } from '../language/evaluate';
import { defaultCatalog } from '../managed/catalog';
import { OWASP_ANOMALY_RULE_ID, OWASP_RULESET_ID, VENDOR_RULESET_ID } from '../rulesets/managedIds';
import { findManagedRuleset, rulesetVersion, type ManagedCatalog } from '../rulesets/catalog';
import { compileZone, type EngineProblem, type PreviousWaf, type PreviousWafVerdict } from '../rulesets/engine';
import type { ExecuteParameters, Rule, Ruleset } from '../rulesets/model';
import { cloudflareModeOverrides } from './cloudflareCounterparts';
import { migrationConfig } from './config';
import type { ZoneWafSettings } from './previousWafSettings';
import type { MigrationZone } from './zone';

/** The rule id the previous WAF's OWASP package reported when its anomaly score was exceeded (sampled logs). */
export const PREVIOUS_OWASP_ANOMALY_RULE_ID = '981176';

export interface PreviousWafStandIn {
  readonly previousWaf: PreviousWaf;
  /** Problems compiling the stand-in's rules (none expected). */
  readonly problems: readonly EngineProblem[];
}

/**
 * The previous WAF of `zone` as a `PreviousWaf` function. Compiled once; call it per
 * request. Returns undefined (nothing to do) when the previous WAF would let the request through.
 */
export function previousWafStandIn(zone: Pick<MigrationZone, 'plan' | 'waf' | 'pageRules'>, catalog: ManagedCatalog = defaultCatalog): PreviousWafStandIn {
  if (zone.plan === 'free') return { previousWaf: () => undefined, problems: [] };
  // Firewall rules are left out: the engine's own firewall-rule stage already skips the previous WAF on Bypass > WAF.
  const { config } = migrationConfig({ plan: zone.plan, waf: zone.waf, pageRules: zone.pageRules, firewallRules: [] }, catalog);
  const rules = config.rules.map((r) => withCloudflareModes({ ...r, id: undefined, version: undefined, ref: undefined }, zone.waf, catalog));
  const entryPoint: Ruleset = { name: 'previous WAF (stand-in)', kind: 'zone', phase: 'http_request_firewall_managed', rules };
  const compiled = compileZone({ entryPoints: { http_request_firewall_managed: entryPoint }, catalog, plan: zone.plan });

  const previousWaf: PreviousWaf = (fields: FieldValues, ctx?: EvalContext): PreviousWafVerdict | undefined => {
    const ev = compiled.evaluate(fields, ctx);
    const d = ev.decision;
    if (d.action !== 'allow-through') {
      const owasp = d.rulesetId === OWASP_RULESET_ID && d.ruleId === OWASP_ANOMALY_RULE_ID;
      return owasp
        ? { action: d.action, ruleId: PREVIOUS_OWASP_ANOMALY_RULE_ID, description: `OWASP ModSecurity Core Rule Set: Inbound Anomaly Score Exceeded (score ${d.score ?? '?'} ≥ ${d.threshold ?? '?'})`, ...scoreOf(d.score, d.threshold) }
        : { action: d.action, ...(d.ruleId ? { ruleId: d.ruleId } : {}), description: `CloudFlare package: ${d.description ?? 'rule matched'}` };
    }
    // Simulate: the anomaly rule (action log) reached its threshold, or a vendor rule logged.
    const logged = ev.logs.find((l) => l.action === 'log' && (l.rulesetId === OWASP_RULESET_ID ? l.ruleId === OWASP_ANOMALY_RULE_ID : l.rulesetId !== undefined && l.phase === 'http_request_firewall_managed'));
    if (!logged) return undefined;
    if (logged.rulesetId === OWASP_RULESET_ID) {
      const score = ev.scores[OWASP_RULESET_ID];
      return { action: 'simulate', ruleId: PREVIOUS_OWASP_ANOMALY_RULE_ID, description: `OWASP ModSecurity Core Rule Set: Inbound Anomaly Score Exceeded (simulate, score ${score ?? '?'})`, ...scoreOf(score, ev.trace.find((t) => t.rulesetId === OWASP_RULESET_ID && t.ruleId === OWASP_ANOMALY_RULE_ID)?.threshold) };
    }
    return { action: 'simulate', ...(logged.ruleId ? { ruleId: logged.ruleId } : {}), description: `CloudFlare package: ${logged.description ?? 'rule matched'} (simulate)` };
  };
  return { previousWaf, problems: compiled.problems };
}

/** `rule` with the CloudFlare package's rule modes as overrides when it executes the vendor ruleset; otherwise as it is. */
function withCloudflareModes(rule: Rule, waf: ZoneWafSettings, catalog: ManagedCatalog): Rule {
  const params = rule.action_parameters as ExecuteParameters | undefined;
  if (rule.action !== 'execute' || params?.id?.toLowerCase() !== VENDOR_RULESET_ID) return rule;
  const vendor = findManagedRuleset(catalog, VENDOR_RULESET_ID);
  const version = vendor && rulesetVersion(vendor, params.version);
  const overrides = version ? cloudflareModeOverrides(waf, version.rules, 'effective').overrides : [];
  if (overrides.length === 0) return rule;
  return { ...rule, action_parameters: { ...params, overrides: { ...params.overrides, rules: [...(params.overrides?.rules ?? []), ...overrides] } } };
}

/** A verdict's score fields, for those known. */
function scoreOf(score: number | undefined, threshold: number | undefined): Pick<PreviousWafVerdict, 'score' | 'threshold'> {
  return { ...(score !== undefined ? { score } : {}), ...(threshold !== undefined ? { threshold } : {}) };
}
