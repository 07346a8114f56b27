// The build's check that every esbuild entry point exists: a renamed or deleted source is a
// build error naming it, never a silently missing bundle.
import { existsSync } from 'node:fs';
import { join } from 'node:path';

/**
 * What `npm run build` bundles. Each entry that evaluates requests (every one but the
 * extension's main module, whose preview runs in previewWorker, and the threads that only
 * write and read SQLite) starts the regex safeguards
 * first (server/src/regexBudget.ts; test/unit/regexBudget.test.ts checks each of them).
 */
export const ENTRY_POINTS = [
  { entryPoints: ['server/src/cli/main.ts'], outfile: 'server/out/cli.js', banner: { js: '#!/usr/bin/env node' } },
  { entryPoints: ['server/src/lsp/server.ts'], outfile: 'server/out/server.js' },
  // The rules service's trace worker thread (a trace that runs too long is stopped).
  { entryPoints: ['server/src/service/traceWorker.ts'], outfile: 'server/out/traceWorker.js' },
  // The rules service's rule-check worker thread (the rules a write brings are checked off its thread).
  { entryPoints: ['server/src/service/ruleCheckWorker.ts'], outfile: 'server/out/ruleCheckWorker.js' },
  // The rules service's checkpoint thread (the store's log is copied into the database off the service's thread).
  { entryPoints: ['server/src/service/checkpointWorker.ts'], outfile: 'server/out/checkpointWorker.js' },
  // The WAF proxy's evaluation worker threads (`serve --proxy-workers N`).
  { entryPoints: ['server/src/proxy/proxyWorker.ts'], outfile: 'server/out/proxyWorker.js' },
  // The security events' thread: owns the events file, writes batches and answers GraphQL's reads.
  { entryPoints: ['server/src/service/events/eventsWorker.ts'], outfile: 'server/out/eventsWorker.js' },
  // The language server's evaluation worker thread (an evaluation that runs too long is stopped).
  { entryPoints: ['server/src/lsp/evaluationWorker.ts'], outfile: 'server/out/evaluationWorker.js' },
  { entryPoints: ['client/src/extension.ts'], outfile: 'client/out/extension.js', external: ['vscode'] },
  // The paranoia preview's worker thread (the extension host stays responsive meanwhile).
  { entryPoints: ['client/src/preview/worker.ts'], outfile: 'client/out/previewWorker.js' },
];

/** Throws, naming each missing one, unless every entry point of `entries` exists under `root`. */
export function checkEntryPoints(entries, root = '.') {
  const missing = entries.flatMap((e) => e.entryPoints).filter((p) => !existsSync(join(root, p)));
  if (missing.length > 0) {
    throw new Error(
      `entry point${missing.length > 1 ? 's' : ''} not found: ${missing.join(', ')} ` +
        '(listed in scripts/entry-points.mjs: fix the path there, or remove the entry)',
    );
  }
}
