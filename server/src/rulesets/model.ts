/**
 * The rulesets model: every field of the Rulesets API's Ruleset and Rule objects
 * (reference rules-api §2.2–§2.5), as the JSON a user writes in `*.ruleset.json` and
 * the API returns. Read-only fields are optional because request bodies omit them.
 */
import type { Phase } from '../language/scheme/types';

export type RulesetKind = 'managed' | 'custom' | 'root' | 'zone';

/** An account's ruleset (its entry point, or a custom ruleset): written without a zone, so without a plan. */
export function isAccountKind(kind: unknown): boolean {
  return kind === 'root' || kind === 'custom';
}

export const ACTIONS = [
  'block',
  'challenge',
  'compress_response',
  'ddos_dynamic',
  'execute',
  'force_connection_close',
  'js_challenge',
  'log',
  'log_custom_field',
  'managed_challenge',
  'redirect',
  'rewrite',
  'route',
  'score',
  'serve_error',
  'set_cache_control',
  'set_cache_settings',
  'set_cache_tags',
  'set_config',
  'skip',
  'transform_response_html',
] as const;

export type Action = (typeof ACTIONS)[number];

/** Actions that end evaluation of the request. */
export const TERMINATING_ACTIONS: readonly Action[] = ['block', 'challenge', 'js_challenge', 'managed_challenge'];

export interface BlockResponse {
  readonly status_code: number;
  readonly content: string;
  readonly content_type: string;
}

export interface BlockParameters {
  readonly response?: BlockResponse;
}

export interface CategoryOverride {
  readonly category: string;
  readonly action?: string;
  readonly enabled?: boolean;
  readonly sensitivity_level?: string;
}

export interface RuleOverride {
  readonly id: string;
  readonly action?: string;
  readonly enabled?: boolean;
  readonly score_threshold?: number;
  readonly sensitivity_level?: string;
}

/** Precedence: rules > categories (the last matching one) > ruleset-wide. */
export interface Overrides {
  readonly action?: string;
  readonly enabled?: boolean;
  readonly sensitivity_level?: string;
  readonly categories?: readonly CategoryOverride[];
  readonly rules?: readonly RuleOverride[];
}

export interface ExecuteParameters {
  /** 32-hex id of the ruleset to run (managed or custom). */
  readonly id: string;
  /** `latest` or a version number as a string. */
  readonly version?: string;
  readonly matched_data?: { readonly public_key: string };
  readonly overrides?: Overrides;
}

export const SKIP_PRODUCTS = ['zoneLockdown', 'uaBlock', 'bic', 'hot', 'securityLevel', 'rateLimit', 'waf'] as const;

export interface SkipParameters {
  /** Skip the remaining rules of the current ruleset. */
  readonly ruleset?: 'current';
  /** With `products` only. */
  readonly phase?: 'current';
  readonly phases?: readonly Phase[];
  readonly products?: readonly string[];
  readonly rulesets?: readonly string[];
  /** ruleset id -> rule ids */
  readonly rules?: Readonly<Record<string, readonly string[]>>;
}

export interface ScoreParameters {
  readonly increment: number;
}

/** Parameters of the other actions are kept as data (outside the WAF's scope). */
export type ActionParameters = BlockParameters | ExecuteParameters | SkipParameters | ScoreParameters | Readonly<Record<string, unknown>>;

export interface RateLimit {
  readonly characteristics: readonly string[];
  readonly period: number;
  readonly requests_per_period?: number;
  readonly score_per_period?: number;
  readonly score_response_header_name?: string;
  readonly mitigation_timeout?: number;
  readonly counting_expression?: string;
  readonly requests_to_origin?: boolean;
}

export interface Rule {
  readonly id?: string;
  readonly version?: string;
  readonly action?: string;
  readonly action_parameters?: ActionParameters;
  readonly expression?: string;
  readonly description?: string;
  /** Default true. */
  readonly enabled?: boolean;
  /** Unique within the ruleset; defaults to the id. */
  readonly ref?: string;
  /** Only with `skip`. */
  readonly logging?: { readonly enabled: boolean };
  /** Tags; managed rules only. */
  readonly categories?: readonly string[];
  readonly exposed_credential_check?: { readonly username_expression: string; readonly password_expression: string };
  readonly ratelimit?: RateLimit;
  readonly last_updated?: string;
  /** The anomaly-score rule of a scored managed ruleset (OWASP 949110). */
  readonly score_threshold?: number;
}

export interface Ruleset {
  readonly id?: string;
  readonly name?: string;
  readonly description?: string;
  readonly kind?: RulesetKind;
  readonly version?: string;
  readonly last_updated?: string;
  readonly phase?: Phase;
  readonly rules?: readonly Rule[];
}
