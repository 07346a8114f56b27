/**
 * The migration core: the previous WAF managed rules (data, settings, API functions), the
 * eligibility check, the new configuration, the state machine and the previous-WAF
 * stand-in for validation mode. Pure: values in, values out; the HTTP service and the
 * extension's commands call these.
 */
export * from './errors';
export * from './zone';
export * from './previousWafContent';
export * from './previousWafSettings';
export * from './previousWafOverrides';
export * from './eligibility';
export * from './config';
export * from './state';
export * from './previousWafVerdict';
export * from './cloudflareCounterparts';
