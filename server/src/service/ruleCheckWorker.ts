/**
 * The rule-check worker thread (bundled to server/out/ruleCheckWorker.js; started by
 * ruleChecker.ts): checks the rules of the service's writes off its thread, in the order
 * they come, each with ruleProblems.ts, the code the service's thread runs without it.
 *
 * - An array of jobs (those of one turn of the service's event loop) comes in. A job,
 *   `{ id, target, customKey, custom?, forget?, rules }`: the account's custom rulesets
 *   (what an execute rule may run) are sent once per version of that list (`custom`, under
 *   `customKey`) and referred to by key after; `forget` is a key no later job uses. A
 *   job's answer is `{ id, found }` (one RuleFindings per rule) or `{ id, error }` (the
 *   Error, its stack included, for the service's log).
 * - Answers go out as `{ answers }`, in the order of the jobs: all of a message's at once
 *   when it is done, one message per message of jobs (a message costs the service's thread
 *   tens of µs: not one per job). A message that takes longer reports its progress: at
 *   most once every `progressMs` (workerData; 1 s), judged by the clock after each job and
 *   every PROGRESS_STRIDE rules of a job, it posts the answers done so far (perhaps none).
 *   The service takes the worker as hung only when it has heard nothing from it for its
 *   deadline (ruleChecker.ts).
 * - The id of the job being checked is marked in shared memory (orderedWorker.ts
 *   `taskMarker`), at no cost per job: a worker stuck in one rule posts nothing, and the
 *   service reads there which job to fail.
 * - `{ ready: true }` is posted once, when the worker has loaded.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { Phase } from '../language/scheme/types';
import { taskMarker } from '../orderedWorker';
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

export type RuleCheckAnswer = { readonly id: number; readonly found: readonly RuleFindings[] } | { readonly id: number; readonly error: Error };

/** What the worker posts (see the file's comment). */
export type RuleCheckReport = { readonly answers: readonly RuleCheckAnswer[] } | { readonly ready: true };

/** What the service gives the worker when it starts it. */
export interface RuleCheckWorkerData {
  /** The longest the worker works without posting (default 1000). */
  readonly progressMs?: number;
}

/** The rules checked between two looks at the clock within a job (a look costs ~50 ns, a rule 10 µs to 20 ms). */
const PROGRESS_STRIDE = 8;

const data = workerData as RuleCheckWorkerData | undefined;
const mark = taskMarker();
const PROGRESS_MS = data?.progressMs ?? 1000;

const customs = new Map<number, ReadonlyMap<string, Phase>>();
/** When the worker last posted. */
let postedAt = performance.now();
/** Answers not posted yet. */
let done: RuleCheckAnswer[] = [];

parentPort!.on('message', (jobs: readonly RuleCheckJob[]) => {
  postedAt = performance.now();
  for (const job of jobs) {
    mark(job.id);
    // Checked before `done` is read: a progress post within the job replaces it.
    const answer = check(job);
    done.push(answer);
    if (performance.now() - postedAt >= PROGRESS_MS) post();
  }
  if (done.length > 0) post();
});

function post(): void {
  parentPort!.postMessage({ answers: done } satisfies RuleCheckReport);
  done = [];
  postedAt = performance.now();
}

function check(job: RuleCheckJob): RuleCheckAnswer {
  if (job.custom) customs.set(job.customKey, new Map(job.custom));
  if (job.forget !== undefined) customs.delete(job.forget);
  try {
    const custom = customs.get(job.customKey);
    if (!custom) throw new Error(`the rule-check worker has no custom rulesets under key ${job.customKey}`);
    const found: RuleFindings[] = [];
    for (let i = 0; i < job.rules.length; i++) {
      if (i % PROGRESS_STRIDE === PROGRESS_STRIDE - 1 && performance.now() - postedAt >= PROGRESS_MS) post();
      found.push(findRuleProblems(job.target, custom, job.rules[i]!));
    }
    return { id: job.id, found };
  } catch (e) {
    return { id: job.id, error: e instanceof Error ? e : new Error(String(e)) };
  }
}

// Loaded: until this arrives, the service checks rules on its own thread.
parentPort!.postMessage({ ready: true } satisfies RuleCheckReport);
