/**
 * The trace worker thread (bundled to server/out/traceWorker.js): answers Trace jobs one
 * at a time off the service's thread, so one that runs too long is stopped by terminating
 * this thread (traceRunner.ts) while the service goes on answering. Zones stay compiled
 * here between jobs (traceEval.ts).
 */
import { boundRegexBacktracking } from '../regexBudget';
import { serveJobs } from '../timedWorker';
import { traceReply, type TraceJob, type TraceReply } from './traceEval';

// Process-wide already when the CLI started the service; a service embedded elsewhere gets it here.
boundRegexBacktracking();

serveJobs<TraceJob, TraceReply, true>((job, progress) => traceReply(job, () => progress(true)));
