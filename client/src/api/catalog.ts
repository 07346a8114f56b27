// The managed rulesets as the connected service has them, as a ManagedCatalog the core
// understands (effective state after overrides, validation, tags). The hosted API lists
// managed rules without expressions; that is enough for effective state and tags. When
// the service cannot be asked, the built-in catalog stands in (and says so).
import { defaultCatalog } from '../../../server/src/managed/catalog';
import { OWASP_ANOMALY_RULE_ID } from '../../../server/src/rulesets/managedIds';
import { findManagedRuleset, type ManagedCatalog, type ManagedRule, type ManagedRuleset } from '../../../server/src/rulesets/catalog';
import type { RulesApi } from './rulesApi';

export interface ServiceCatalog {
  readonly catalog: ManagedCatalog;
  /** Set when the built-in catalog is used instead of the service's. */
  readonly fallback?: string;
}

const cache = new Map<string, Promise<ServiceCatalog>>();

export function forgetCatalogs(): void {
  cache.clear();
}

/** The account's managed rulesets (cached per service and account until forgetCatalogs). */
export function serviceCatalog(api: RulesApi, accountId: string | undefined): Promise<ServiceCatalog> {
  if (!accountId) return Promise.resolve({ catalog: defaultCatalog, fallback: 'no account is chosen' });
  const key = `${api.baseUrl} ${accountId}`;
  let p = cache.get(key);
  if (!p) {
    p = load(api, accountId).catch((e: unknown) => {
      cache.delete(key);
      return { catalog: defaultCatalog, fallback: e instanceof Error ? e.message : String(e) };
    });
    cache.set(key, p);
  }
  return p;
}

async function load(api: RulesApi, accountId: string): Promise<ServiceCatalog> {
  const headers = (await api.listAccountRulesets(accountId)).filter((r) => r.kind === 'managed');
  const rulesets: ManagedRuleset[] = [];
  for (const h of headers) {
    const full = await api.getAccountRuleset(accountId, h.id);
    const builtIn = findManagedRuleset(defaultCatalog, h.id);
    const rules = (full.rules ?? []).map(
      (r): ManagedRule => ({
        ...r,
        id: r.id ?? '',
        ref: r.ref ?? r.id ?? '',
        description: r.description ?? '',
        expression: r.expression ?? '',
        action: r.action ?? 'block',
        enabled: r.enabled !== false,
        categories: r.categories ?? [],
      }),
    );
    const anomalyRuleId = builtIn?.anomalyRuleId ?? (rules.some((r) => r.id === OWASP_ANOMALY_RULE_ID) ? OWASP_ANOMALY_RULE_ID : undefined);
    rulesets.push({
      id: h.id,
      name: full.name ?? h.name,
      description: full.description ?? '',
      kind: 'managed',
      phase: 'http_request_firewall_managed',
      versions: [{ version: full.version ?? h.version ?? '1', last_updated: full.last_updated ?? '', rules }],
      ...(anomalyRuleId ? { anomalyRuleId } : {}),
      // The entitlement is not in the API's listing: the built-in entry's, by id.
      ...(builtIn?.plan ? { plan: builtIn.plan } : {}),
    });
  }
  if (rulesets.length === 0) return { catalog: defaultCatalog, fallback: 'the account lists no managed rulesets' };
  return { catalog: { rulesets } };
}
