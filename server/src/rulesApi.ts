/**
 * The rules API on the wire (rules-api.md): the shapes the local service
 * (server/src/service) answers and the extension's client (client/src/api/rulesApi.ts)
 * reads, declared once so that a change on one side is a type error on the other. Types
 * only, like protocol.ts: esbuild bundles nothing from here.
 *
 * The fields a client may rely on are required; what the hosted API may leave out is
 * optional, because the client also talks to the hosted API.
 */
import type { Rule } from './rulesets/model';

export type { Phase, Plan } from './language/scheme/types';
/** A rule and a ruleset as sent and received: the core's model (rulesets/model.ts), which validates and diffs them. */
export type { ExecuteParameters, Rule, Ruleset, RulesetKind } from './rulesets/model';

// --- Envelope -----------------------------------------------------------------------------

/** An item of `errors` or `messages` (rules-api §1.3). */
export interface ApiMessage {
  /** Always sent by the local service; the hosted API leaves it out at times. */
  readonly code?: number;
  readonly message: string;
  /** The body field concerned (JSON pointer). */
  readonly source?: { readonly pointer: string };
  readonly error_chain?: readonly ApiMessage[];
  /** e.g. `{id}` of the existing filter in a 10102 duplicate answer. */
  readonly meta?: Readonly<Record<string, unknown>>;
  /** Only on `messages` items (token verify): always null. */
  readonly type?: null;
}

/** `result_info` of a page-based list (the local service sends every field). */
export interface PageInfo {
  readonly page: number;
  readonly per_page: number;
  readonly count: number;
  readonly total_count: number;
  readonly total_pages: number;
}

/** `result_info` of a cursor-based list (ruleset lists): the next page's cursor, in both places the API has used. */
export interface CursorInfo {
  readonly per_page: number;
  readonly count: number;
  readonly cursor?: string;
  readonly cursors?: { readonly after?: string };
}

/** Every answer: `result` is null on failure; `errors`/`messages` may be null on the hosted API. */
export interface Envelope<T> {
  readonly result: T;
  readonly success?: boolean;
  readonly errors?: readonly ApiMessage[] | null;
  readonly messages?: readonly ApiMessage[] | null;
  readonly result_info?: Partial<PageInfo> & Partial<CursorInfo>;
}

// --- Accounts and zones -------------------------------------------------------------------

export interface Account {
  readonly id: string;
  readonly name: string;
}

export interface Zone {
  readonly id: string;
  readonly name: string;
  readonly status?: string;
  /** `id` is the plan (`free`, `pro`, …) on the local service. */
  readonly plan?: { readonly id?: string; readonly name?: string };
  readonly account?: { readonly id?: string; readonly name?: string };
}

// --- Rulesets -----------------------------------------------------------------------------

/** An item of a ruleset list or version list: a ruleset without its rules. */
export interface RulesetHeader {
  readonly id: string;
  readonly name: string;
  /** Managed rulesets only: who provides it (`firewall_managed`). */
  readonly source?: string;
  readonly kind: string;
  readonly phase: string;
  readonly version?: string;
  readonly description?: string;
  readonly last_updated?: string;
}

// --- WAF migration (GET /zones/{id}/waf_migration/…) -------------------------------------

export interface MigrationCheck {
  readonly compatible: boolean;
  readonly migration_state?: string;
  /** Ours (the local service): why not compatible; `code` is the reason's (`uri-overrides`, …). */
  readonly reasons?: readonly { readonly code?: string | number; readonly message: string }[];
}

/** Ours: a setting of the previous WAF that the proposed configuration does not carry over. */
export interface NotMigrated {
  readonly kind?: string;
  readonly id?: string;
  readonly package_id?: string;
  readonly name?: string;
  readonly description?: string;
  /** The setting it had, e.g. "mode block (default disable)". */
  readonly was?: string;
  readonly reason?: string;
}

export interface MigrationConfig {
  readonly name?: string;
  readonly description?: string;
  readonly rules: readonly Rule[];
  readonly not_migrated?: readonly NotMigrated[];
}

export interface MigrationStatus {
  readonly migration_state?: string;
  readonly old_waf_status?: string;
  readonly new_waf_status?: string;
  /** Ours: `zone` once the zone has a migration record, `defaults` before. */
  readonly source?: string;
  /** When the migration started, or null. */
  readonly created?: string | null;
}

// --- Previous WAF, filters and firewall rules ---------------------------------------------

export interface WafPackage {
  readonly id: string;
  readonly name: string;
  readonly description?: string;
  readonly detection_mode?: string;
  readonly sensitivity?: string;
  readonly action_mode?: string;
  readonly status?: string;
}

export interface Filter {
  readonly id: string;
  readonly expression: string;
  readonly paused?: boolean;
  readonly description?: string;
  readonly ref?: string;
}

export interface FirewallRule {
  readonly id: string;
  /** `{id, deleted: true}` when the filter was deleted under the rule. */
  readonly filter: Filter | { readonly id: string; readonly deleted?: boolean };
  readonly action: string;
  readonly priority?: number | null;
  readonly paused?: boolean;
  readonly description?: string;
  readonly ref?: string;
  readonly products?: readonly string[];
}

// --- Trace (POST /accounts/{id}/request-tracer/trace) -------------------------------------

/** One step of a trace: a phase, a ruleset in it, or a rule, with what happened. */
export interface TraceStep {
  readonly step_name: string;
  readonly type: 'phase' | 'ruleset' | 'rule';
  readonly matched: boolean;
  readonly name?: string;
  readonly description?: string;
  readonly kind?: string;
  readonly action?: string;
  readonly action_parameters?: unknown;
  readonly expression?: string;
  readonly enabled?: boolean;
  readonly outcome?: string;
  readonly score_added?: number;
  readonly score?: number;
  readonly threshold?: number;
  readonly skipped_by?: string;
  readonly overridden_by?: readonly string[];
  readonly note?: string;
  readonly trace?: readonly TraceStep[];
}

/** What the zone did with the request, and which rule decided. */
export interface TraceDecision {
  readonly action: string;
  readonly phase?: string;
  readonly ruleset_id?: string;
  readonly rule_id?: string;
  readonly ref?: string;
  readonly description?: string;
  readonly score?: number;
  readonly threshold?: number;
  readonly response?: unknown;
  /** The execute rule that ran the deciding managed rule. */
  readonly via?: { readonly phase: string; readonly ruleset_id?: string; readonly rule_id?: string };
}

export interface TraceResult {
  /** The HTTP status the visitor would get, when a rule stopped the request. */
  readonly status_code?: number;
  readonly trace: readonly TraceStep[];
  readonly decision: TraceDecision;
  /** In migration validation: what the new WAF decided, and what the previous WAF would have done. */
  readonly validation?: { readonly new_decision: TraceDecision; readonly previous_waf?: { readonly action: string; readonly rule_id?: string; readonly description?: string } };
  /** Anomaly scores by ruleset. */
  readonly scores?: Readonly<Record<string, number>>;
  readonly zone?: { readonly id: string; readonly name: string };
  /** The trace's ray id, which its security events carry (a Rulesmith extension). */
  readonly ray_id?: string;
  readonly migration_state?: string;
  readonly problems?: readonly string[];
}
