/**
 * The rule-check worker thread (bundled to server/out/ruleCheckWorker.js; started by
 * ruleChecker.ts): checks the rules of the service's writes off its thread, in the order
 * they come, each with ruleProblems.ts, the code the service's thread runs without it.
 *
 * - An array of jobs (those of one turn of the service's event loop), answered by an array
 *   of answers in the same order. A job, `{ id, target, customKey, custom?, forget?, rules }`: the account's custom rulesets
 *   (what an execute rule may run) are sent once per version of that list (`custom`, under
 *   `customKey`) and referred to by key after; `forget` is a key no later job uses. The
 *   answer is `{ id, found }` (one RuleFindings per rule) or `{ id, error }` (the Error,
 *   its stack included, for the service's log).
 * - `{ ready: true }` is posted once, when the worker has loaded.
 */
import { parentPort } from 'node:worker_threads';
import type { Phase } from '../language/scheme/types';
import { boundRegexBacktracking } from '../regexBudget';
import type { JsonObject } from './body';
import { findRuleProblems, type RuleFindings, type RuleTarget } from './ruleProblems';

// Checking a rule compiles no regex, but the core's checks may run one on a pattern.
boundRegexBacktracking();

export interface RuleCheckJob {
  readonly id: number;
  readonly target: RuleTarget;
  readonly customKey: number;
  readonly custom?: readonly (readonly [string, Phase])[];
  readonly forget?: number;
  readonly rules: readonly JsonObject[];
}

export type RuleCheckReply = { readonly id: number; readonly found: readonly RuleFindings[] } | { readonly id: number; readonly error: Error } | { readonly ready: true };

const customs = new Map<number, ReadonlyMap<string, Phase>>();

parentPort!.on('message', (jobs: readonly RuleCheckJob[]) => {
  parentPort!.postMessage(jobs.map(check));
});

function check(job: RuleCheckJob): RuleCheckReply {
  if (job.custom) customs.set(job.customKey, new Map(job.custom));
  if (job.forget !== undefined) customs.delete(job.forget);
  try {
    const custom = customs.get(job.customKey);
    if (!custom) throw new Error(`the rule-check worker has no custom rulesets under key ${job.customKey}`);
    return { id: job.id, found: job.rules.map((r) => findRuleProblems(job.target, custom, r)) };
  } catch (e) {
    return { id: job.id, error: e instanceof Error ? e : new Error(String(e)) };
  }
}

// Loaded: until this arrives, the service checks rules on its own thread.
parentPort!.postMessage({ ready: true } satisfies RuleCheckReply);
