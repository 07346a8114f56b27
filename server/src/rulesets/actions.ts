/**
 * What a rule may do where: the actions of each phase and ruleset kind, the actions an
 * override may set, and one line of documentation per action. Data, read by the ruleset
 * validator, completion and hover.
 *
 * The action/phase matrix (rules-api §2.5; the reference marks what is not verified,
 * it is data here so that it can be corrected in one place):
 *
 * | phase                                   | entry points (zone/root) and custom rulesets                 |
 * |-----------------------------------------|--------------------------------------------------------------|
 * | http_request_firewall_custom            | block, challenge, js_challenge, managed_challenge, log, skip, execute |
 * |   kind root                             | execute only (an account deploys rulesets there; tf #1242)   |
 * |   kind custom                           | as above without execute (a custom ruleset cannot nest one)  |
 * | http_ratelimit                          | block, challenge, js_challenge, managed_challenge, log, execute (root: execute) |
 * | http_request_firewall_managed           | execute, skip                                                |
 * | http_response_firewall_managed          | execute, skip                                                |
 * | http_request_sbfm                       | block, challenge, js_challenge, managed_challenge, log, skip |
 * | ddos_l7, ddos_l4, http_request_sanitize | execute                                                      |
 * | http_request_transform, http_request_late_transform, http_response_headers_transform | rewrite |
 * | http_request_redirect, http_request_dynamic_redirect | redirect                                        |
 * | http_request_origin                     | route                                                        |
 * | http_config_settings                    | set_config                                                   |
 * | http_request_cache_settings             | set_cache_settings                                           |
 * | http_response_cache_settings            | set_cache_control, set_cache_tags                            |
 * | http_custom_errors                      | serve_error                                                  |
 * | http_log_custom_fields                  | log_custom_field                                             |
 * | http_response_compression               | compress_response                                            |
 * | magic_transit*                          | not checked                                                  |
 *
 * Rulesets of kind `managed` (what the catalog holds) may use block, the challenges,
 * log, score, skip, and in the DDoS phases ddos_dynamic and force_connection_close.
 *
 * Override actions: block, challenge, js_challenge, managed_challenge, log. Not `score`:
 * an override has no `action_parameters`, so it could not say the increment; a scoring
 * rule keeps `score` by not being overridden. The same five are the actions of the
 * anomaly-score rule (crs-and-managed-rules §4.2).
 */
import type { Phase } from '../language/scheme/types';
import type { Action, RulesetKind } from './model';

/** The actions an override may set (see the header). */
export const OVERRIDE_ACTIONS = ['block', 'challenge', 'js_challenge', 'managed_challenge', 'log'] as const;
/** The actions that take no action_parameters. */
export const NO_PARAMETERS: readonly string[] = ['challenge', 'js_challenge', 'managed_challenge', 'log', 'ddos_dynamic', 'force_connection_close'];

const FIREWALL: readonly Action[] = ['block', 'challenge', 'js_challenge', 'managed_challenge', 'log'];

/** Actions of rules in entry points and custom rulesets, per phase (see the header). */
export const PHASE_ACTIONS: Readonly<Partial<Record<Phase, readonly Action[]>>> = {
  http_request_firewall_custom: [...FIREWALL, 'skip', 'execute'],
  http_ratelimit: [...FIREWALL, 'execute'],
  http_request_firewall_managed: ['execute', 'skip'],
  http_response_firewall_managed: ['execute', 'skip'],
  http_request_sbfm: [...FIREWALL, 'skip'],
  ddos_l7: ['execute'],
  ddos_l4: ['execute'],
  http_request_sanitize: ['execute'],
  http_request_transform: ['rewrite'],
  http_request_late_transform: ['rewrite'],
  http_response_headers_transform: ['rewrite'],
  http_request_redirect: ['redirect'],
  http_request_dynamic_redirect: ['redirect'],
  http_request_origin: ['route'],
  http_config_settings: ['set_config'],
  http_request_cache_settings: ['set_cache_settings'],
  http_response_cache_settings: ['set_cache_control', 'set_cache_tags'],
  http_custom_errors: ['serve_error'],
  http_log_custom_fields: ['log_custom_field'],
  http_response_compression: ['compress_response'],
};

const MANAGED_KIND_ACTIONS: readonly Action[] = [...FIREWALL, 'score', 'skip'];
const DDOS_MANAGED_ACTIONS: readonly Action[] = [...FIREWALL, 'ddos_dynamic', 'force_connection_close'];

/** The actions a rule may use in a ruleset of this phase and kind, or undefined when not checked. */
export function actionsFor(phase: Phase | undefined, kind: RulesetKind | undefined): readonly Action[] | undefined {
  if (phase === undefined) return undefined;
  const base = PHASE_ACTIONS[phase];
  if (!base) return undefined;
  if (kind === 'managed') return phase === 'ddos_l7' || phase === 'ddos_l4' ? DDOS_MANAGED_ACTIONS : MANAGED_KIND_ACTIONS;
  if (kind === 'root' && (phase === 'http_request_firewall_custom' || phase === 'http_ratelimit')) return ['execute'];
  if (kind === 'custom') return base.filter((a) => a !== 'execute');
  return base;
}

/** One line per action, for hints, hover and completion. */
export const ACTION_DOCS: Readonly<Record<Action, string>> = {
  block: 'Stop the request with an error page (403, or the `response` given in action_parameters).',
  challenge: 'Interactive challenge (the visitor must solve a CAPTCHA-like puzzle).',
  compress_response: 'Compress the response with the given algorithms.',
  ddos_dynamic: 'DDoS managed rules: let the DDoS system choose the mitigation.',
  execute: 'Run another ruleset (a managed ruleset or one of your custom rulesets), with overrides.',
  force_connection_close: 'DDoS managed rules: close the connection.',
  js_challenge: 'Non-interactive JavaScript challenge.',
  log: 'Record the match in the logs and go on (Enterprise in custom rules).',
  log_custom_field: 'Add request, response or cookie fields to the logs.',
  managed_challenge: 'Let the edge choose the least intrusive challenge for the visitor.',
  redirect: 'Redirect to another URL (static or computed).',
  rewrite: 'Rewrite the URL path or query, or request/response headers.',
  route: 'Change the Host header, the origin or the SNI.',
  score: 'Add `increment` to the request\'s anomaly score (managed rulesets).',
  serve_error: 'Serve a custom error response.',
  set_cache_control: 'Set the response\'s Cache-Control directives.',
  set_cache_settings: 'Change caching of the request (cache on/off, TTLs, cache key).',
  set_cache_tags: 'Add, remove or set cache tags.',
  set_config: 'Change zone settings for the request.',
  skip: 'Skip the remaining rules of the ruleset, other rulesets, rules, phases or products.',
  transform_response_html: 'Transform the HTML of the response.',
};
