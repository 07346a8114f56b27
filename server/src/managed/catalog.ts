/**
 * The built-in catalog of account-level managed rulesets. The engine, the validator,
 * hover/completion and the rules service all read a catalog passed in as a value (its
 * shape and lookups are the ruleset model's, rulesets/catalog.ts); the adapters pass this
 * one, and tests and the CRS build can supply another.
 */
import type { Plan } from '../language/scheme/types';
import type { ManagedCatalog } from '../rulesets/catalog';
import { freeRuleset } from './free';
import { owaspRuleset } from './owasp';
import { OWASP_CRS_RULES } from './owaspCrs';
import { vendorRuleset } from './vendor';

/**
 * The vendor ruleset, the OWASP-based ruleset (CRS 3.3.4, converted at build time) and the
 * Free Managed Ruleset (a subset of the vendor one, for every plan).
 */
export const defaultCatalog: ManagedCatalog = {
  rulesets: [vendorRuleset, owaspRuleset(OWASP_CRS_RULES), freeRuleset],
};

/** Each built-in ruleset that needs a plan, by id: the entitlement each entry carries (`plan`). */
export const MANAGED_RULESET_PLANS: Readonly<Record<string, Plan>> = Object.fromEntries(
  defaultCatalog.rulesets.flatMap((r) => (r.plan ? [[r.id, r.plan]] : [])),
);
