/**
 * Can this zone migrate from the previous WAF managed rules to the new WAF Managed Rules
 * (`GET /zones/{id}/waf_migration/check?phase_two=1`, rules-api §3)? And if not, every
 * reason why.
 *
 * The hosted check answers only `{compatible, migration_state}`; that is `result`. The
 * `reasons` are Rulesmith's extension (the HTTP layer may add them to `messages`, the
 * extension shows them). Reasons, from the upgrade guide:
 * - `uri-overrides`: URI-based WAF overrides exist → not eligible until deleted;
 * - `too-many-firewall-rules`: more than 200 firewall rules to migrate → support needed;
 * - `expression-too-long`: a firewall rule expression over 4 KB (4096 bytes) → support needed;
 * - `no-previous-waf`: Free plan, there is nothing to migrate;
 * - `already-migrated`: the migration is complete (irreversible).
 * Every reason makes the zone not compatible (it would make the migration PUT fail).
 *
 * "Firewall rules to migrate" are counted as all of the zone's firewall rules (paused ones
 * included): our reading — the guide does not say which rules count.
 */
import { utf8Length } from '../language/bytes';
import type { LegacyFirewallRule } from '../rulesets/legacy';
import type { ReasonCode } from './errors';
import { migrationState, type MigrationState, type MigrationZone } from './zone';

export const MAX_FIREWALL_RULES = 200;
export const MAX_FIREWALL_EXPRESSION_BYTES = 4096;

export interface MigrationReason {
  readonly code: ReasonCode;
  readonly message: string;
  /** What the reason is about: override ids, firewall rule ids. */
  readonly ids?: readonly string[];
}

export interface MigrationCheck {
  /** The hosted check's body. */
  readonly result: { readonly compatible: boolean; readonly migration_state: MigrationState };
  /** Why not compatible (empty when compatible). */
  readonly reasons: readonly MigrationReason[];
}


function ruleName(r: LegacyFirewallRule, index: number): string {
  const id = r.id ? `firewall rule ${r.id}` : `firewall rule #${index + 1}`;
  return r.description ? `${id} ("${r.description}")` : id;
}

export function checkMigration(zone: MigrationZone): MigrationCheck {
  const state = migrationState(zone);
  const reasons: MigrationReason[] = [];
  if (zone.plan === 'free') {
    reasons.push({
      code: 'no-previous-waf',
      message:
        'This zone is on the Free plan, which never had the previous version of WAF managed rules: there is nothing to migrate. Deploy managed rulesets (the Cloudflare Free Managed Ruleset) with the Rulesets API.',
    });
  }
  if (state === 'complete') {
    const when = zone.migration?.completedAt ? ` on ${zone.migration.completedAt}` : '';
    reasons.push({
      code: 'already-migrated',
      message: `This zone was already migrated to the new WAF Managed Rules${when}; the migration is irreversible. Configure the managed rulesets in the http_request_firewall_managed entry point with the Rulesets API.`,
    });
  }
  if (state !== 'complete' && zone.plan !== 'free') {
    const overrides = zone.waf.overrides ?? [];
    if (overrides.length > 0) {
      const list = overrides.map((o) => `${o.id} (${o.urls.join(', ')})`).join('; ');
      reasons.push({
        code: 'uri-overrides',
        ids: overrides.map((o) => o.id),
        message: `This zone has ${overrides.length} URI-based WAF override${overrides.length === 1 ? '' : 's'}, which prevent${overrides.length === 1 ? 's' : ''} the upgrade: ${list}. Delete them (DELETE /zones/${zone.waf.zoneId}/firewall/waf/overrides/{id}) and check again; recreate what they did as exceptions or overrides of the new managed rulesets after migrating.`,
      });
    }
    const rules = zone.firewallRules ?? [];
    if (rules.length > MAX_FIREWALL_RULES) {
      reasons.push({
        code: 'too-many-firewall-rules',
        message: `The number of firewall rules to migrate (${rules.length}) exceeds ${MAX_FIREWALL_RULES}: this migration needs support (contact Cloudflare Support), or reduce the zone's firewall rules to ${MAX_FIREWALL_RULES} or fewer.`,
      });
    }
    const long = rules
      .map((r, i) => ({ r, i, bytes: typeof r.filter?.expression === 'string' ? utf8Length(r.filter.expression) : 0 }))
      .filter((x) => x.bytes > MAX_FIREWALL_EXPRESSION_BYTES);
    if (long.length > 0) {
      reasons.push({
        code: 'expression-too-long',
        ids: long.map((x) => x.r.id ?? `#${x.i + 1}`),
        message: `${long.map((x) => `${ruleName(x.r, x.i)} has an expression of ${x.bytes} bytes`).join('; ')}: a firewall rule expression longer than 4 KB (${MAX_FIREWALL_EXPRESSION_BYTES} bytes) needs support to migrate (contact Cloudflare Support), or shorten it (an IP list instead of inline addresses, for example).`,
      });
    }
  }
  return { result: { compatible: reasons.length === 0, migration_state: state }, reasons };
}
