/**
 * What a runtime function is: the contract between the evaluator and each function's
 * implementation (functions.ts, and the CRS ones in crs.ts). In its own file so that
 * crs.ts can meet it without importing functions.ts, which includes the CRS functions.
 */
import type { Value } from '../ir';
import type { Type } from '../types';

export type RuntimeArgs = readonly (Value | undefined)[];

/** What the evaluator can tell a function about its call site. */
export interface CallInfo {
  /** The call's result type (concat needs it when every argument is missing). */
  readonly type?: Type;
  readonly argTypes?: readonly (Type | undefined)[];
}

/** Request-scoped data for the few functions that need edge context. */
export interface CallEnv {
  readonly fields: ReadonlyMap<string, Value>;
}

export type RuntimeCall = (args: RuntimeArgs, env?: CallEnv) => Value | undefined;

export interface RuntimeFunction {
  /** `literals[i]` is the decoded literal argument i, or undefined when it is not a literal. */
  prepare(literals: readonly (Value | undefined)[], info?: CallInfo): RuntimeCall;
}
