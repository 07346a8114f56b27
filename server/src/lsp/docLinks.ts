/**
 * Links to Cloudflare's documentation of a field (its own page in the fields reference)
 * or a function (its section of the functions page), for hovers. Managed-only names
 * (`crs.*`, Rulesmith's) and deprecated fields have no page.
 */
import type { FieldDef, FunctionDef } from '../language/scheme/types';

const RULES_LANGUAGE = 'https://developers.cloudflare.com/ruleset-engine/rules-language/';

export function fieldDocUrl(def: Pick<FieldDef, 'name' | 'managedOnly' | 'deprecated'>): string | undefined {
  if (def.managedOnly || def.deprecated) return undefined;
  return `${RULES_LANGUAGE}fields/reference/${def.name}/`;
}

export function functionDocUrl(def: Pick<FunctionDef, 'name' | 'managedOnly'>): string | undefined {
  if (def.managedOnly) return undefined;
  return `${RULES_LANGUAGE}functions/#${def.name}`;
}
