// Runs the paranoia preview in its worker thread (worker.ts) and stops it when
// asked: the Cancel button of the progress notification aborts `signal`, and the worker
// is terminated at once rather than left computing (it never yields to read a message).
// No vscode import, so plain Node tests drive it.
import { Worker } from 'node:worker_threads';
import type { PreviewInput, PreviewSet } from './compute';

/** The sets, or undefined when `signal` aborted first. */
export function runPreviewWorker(file: string, input: PreviewInput, progress: (message: string) => void, signal?: AbortSignal): Promise<PreviewSet[] | undefined> {
  if (signal?.aborted) return Promise.resolve(undefined);
  return new Promise((resolve, reject) => {
    const worker = new Worker(file, { workerData: input });
    let done = false;
    const finish = (f: () => void) => {
      if (done) return;
      done = true;
      signal?.removeEventListener('abort', onAbort);
      f();
    };
    const onAbort = () => finish(() => {
      void worker.terminate();
      resolve(undefined);
    });
    signal?.addEventListener('abort', onAbort, { once: true });
    worker.on('message', (m: { progress?: string; sets?: PreviewSet[]; error?: string }) => {
      if (m.progress) {
        if (!done) progress(m.progress);
      } else if (m.sets) finish(() => resolve(m.sets));
      else if (m.error) finish(() => reject(new Error(m.error)));
    });
    worker.on('error', (e) => finish(() => reject(e)));
    worker.on('exit', (code) => finish(() => reject(new Error(`the preview worker exited (code ${code})`))));
  });
}
