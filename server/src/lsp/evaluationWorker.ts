/**
 * The language server's evaluation thread (bundled to server/out/evaluationWorker.js):
 * answers Evaluate jobs one at a time off the server's thread, so that one that runs too
 * long is stopped by terminating this thread (timedWorker.ts) while completion,
 * diagnostics and the rest go on. Compiled zones stay here between jobs.
 */
import { boundRegexBacktracking } from '../regexBudget';
import { serveJobs } from '../timedWorker';
import { evaluationReply, type EvaluationJob, type EvaluationProgress, type EvaluationReply } from './evaluationJob';

// Process-wide, set by the server already; here too so that the thread never runs without it.
boundRegexBacktracking();

serveJobs<EvaluationJob, EvaluationReply, EvaluationProgress>(evaluationReply);
