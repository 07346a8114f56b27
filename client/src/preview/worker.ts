// Worker thread of the paranoia preview (bundled to client/out/previewWorker.js): computes
// the preview sets off the extension host's thread and posts progress, then the result.
import { parentPort, workerData } from 'node:worker_threads';
import { boundRegexBacktracking } from '../../../server/src/regexBudget';
import { computePreview, type PreviewInput } from './compute';

// As in every process that evaluates: the CRS patterns on long input must not run unbounded.
boundRegexBacktracking();

try {
  const sets = computePreview(workerData as PreviewInput, (message) => parentPort?.postMessage({ progress: message }));
  parentPort?.postMessage({ sets });
} catch (e) {
  parentPort?.postMessage({ error: e instanceof Error ? `${e.message}\n${e.stack ?? ''}` : String(e) });
}
