/**
 * The trace worker thread (bundled to server/out/traceWorker.js): answers Trace jobs one
 * at a time off the service's thread, so one that runs too long is stopped by terminating
 * this thread (traceRunner.ts) while the service goes on answering. Zones stay compiled
 * here between jobs (traceEval.ts).
 */
import { parentPort } from 'node:worker_threads';
import { boundRegexBacktracking } from '../regexBudget';
import { traceReply } from './traceEval';
import type { TraceJob } from './traceRunner';

// Process-wide already when the CLI started the service; a service embedded elsewhere gets it here.
boundRegexBacktracking();

parentPort?.on('message', (job: TraceJob & { readonly id: number }) => {
  const reply = traceReply(job, () => parentPort?.postMessage({ id: job.id, evaluating: true }));
  parentPort?.postMessage({ id: job.id, ...reply });
});
