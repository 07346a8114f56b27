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
 * - CloudFlare package: the vendor ruleset with its default rule actions;
 * - the zone-wide switch, the CloudFlare package switch, sensitivity Off, and the Page
 *   Rules that turn the WAF off or on apply as in the migrated config. (Firewall rules that
 *   bypass the WAF need nothing here: the engine skips the previous WAF after them.)
 * Not modelled: group and rule modes of either package (no mapping to the new rules), the
 * higher thresholds the previous OWASP package used for AJAX requests, and URI-based
 * overrides. So in validation mode a difference between the two verdicts comes from what
 * the user changed in the new configuration, or from what the migration does not carry.
 */
import type { EvalContext, FieldValues } from '../language/evaluate';
import { defaultCatalog } from '../managed/catalog';
import { OWASP_ANOMALY_RULE_ID, OWASP_RULESET_ID } from '../rulesets/managedIds';
import type { ManagedCatalog } from '../rulesets/catalog';
import { compileZone, type EngineProblem, type PreviousWaf, type PreviousWafVerdict } from '../rulesets/engine';
import type { Ruleset } from '../rulesets/model';
import { migrationConfig } from './config';
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
  const entryPoint: Ruleset = { name: 'previous WAF (stand-in)', kind: 'zone', phase: 'http_request_firewall_managed', rules: config.rules.map((r) => ({ ...r, id: undefined, version: undefined, ref: undefined })) };
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

/** A verdict's score fields, for those known. */
function scoreOf(score: number | undefined, threshold: number | undefined): Pick<PreviousWafVerdict, 'score' | 'threshold'> {
  return { ...(score !== undefined ? { score } : {}), ...(threshold !== undefined ? { threshold } : {}) };
}
