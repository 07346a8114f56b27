/**
 * The shape of the scheme: fields, functions, plans and phases, as data. The checker,
 * completion, hover and the evaluator all read this; nothing else knows a field name.
 */
import type { Type } from '../types';

export type Plan = 'free' | 'pro' | 'business' | 'enterprise';
export const PLANS: readonly Plan[] = ['free', 'pro', 'business', 'enterprise'];

export const PHASES = [
  'ddos_l4',
  'ddos_l7',
  'http_config_settings',
  'http_custom_errors',
  'http_log_custom_fields',
  'http_ratelimit',
  'http_request_cache_settings',
  'http_request_dynamic_redirect',
  'http_request_firewall_custom',
  'http_request_firewall_managed',
  'http_request_late_transform',
  'http_request_origin',
  'http_request_redirect',
  'http_request_sanitize',
  'http_request_sbfm',
  'http_request_transform',
  'http_response_cache_settings',
  'http_response_compression',
  'http_response_firewall_managed',
  'http_response_headers_transform',
  'magic_transit',
  'magic_transit_ids_managed',
  'magic_transit_managed',
  'magic_transit_ratelimit',
] as const;

/** Ruleset phases (reference rules-api §2.3). */
export type Phase = (typeof PHASES)[number];

export interface FieldDef {
  readonly name: string;
  readonly type: Type;
  /** One line for completion and hover. */
  readonly doc: string;
  /** Lowest plan that has the field; absent = every plan. */
  readonly plan?: Plan;
  /** Extra entitlement wording, e.g. "Bot Management add-on". */
  readonly planNote?: string;
  /** Only in these phases; absent = every phase. */
  readonly phases?: readonly Phase[];
  /** Deprecated: use `replacement` instead. */
  readonly deprecated?: { readonly replacement: string };
  /** Well-known values (completion, and "never matches" lints), e.g. methods, countries. */
  readonly values?: readonly string[];
  /** Fields only managed rulesets may use (CRS variables); rejected in user rules. */
  readonly managedOnly?: boolean;
}

/**
 * A type pattern for a function parameter: a concrete type, any type, any array or any
 * map, or a type tied to an earlier argument.
 */
export type TypePattern =
  | Type
  | { readonly any: true }
  | { readonly anyArray: true }
  | { readonly anyMap: true }
  /** Same type as argument #n. */
  | { readonly sameAs: number }
  /** The element type of the Array/Map that argument #n has. */
  | { readonly elementOf: number };

export interface ParamDef {
  readonly name: string;
  /** Accepted types (any of them). */
  readonly types: readonly TypePattern[];
  /** `field`: must not be a literal (the engine's kind Field); `literal`: must be one. */
  readonly kind: 'field' | 'literal' | 'either';
  readonly optional?: boolean;
  /** Repeats to the end (all following arguments use this definition). */
  readonly variadic?: boolean;
}

export interface FunctionDef {
  readonly name: string;
  /** Display signature, e.g. `starts_with(source: Bytes, prefix: Bytes) -> Bool`. */
  readonly signature: string;
  readonly doc: string;
  readonly params: readonly ParamDef[];
  /** Minimum number of arguments (variadic functions). */
  readonly minArgs: number;
  /** Maximum number, or Infinity. */
  readonly maxArgs: number;
  /** The return type given the argument types. */
  readonly returns: (argTypes: readonly Type[]) => Type;
  /**
   * Validates a literal argument's decoded value (`invalid value of argument #i`).
   * Returns the inner message, e.g. `split limit must be between 1 and 128`.
   */
  readonly validateLiteral?: (index: number, value: unknown) => string | undefined;
  readonly plan?: Plan;
  readonly planNote?: string;
  readonly phases?: readonly Phase[];
  /** At most once per expression (regex_replace, wildcard_replace). */
  readonly oncePerExpression?: boolean;
  readonly managedOnly?: boolean;
}

export interface Scheme {
  readonly fields: ReadonlyMap<string, FieldDef>;
  readonly functions: ReadonlyMap<string, FunctionDef>;
}
