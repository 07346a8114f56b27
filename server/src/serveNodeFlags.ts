/**
 * Node flags for a process that runs `rulesmith serve`, given by whatever starts it (npm
 * start, the extension, the benchmarks): V8 reads them only when it makes its heap, and
 * NODE_OPTIONS refuses this one. The list is serveNodeFlags.json, which scripts import too.
 *
 * `--initial-old-space-size=256` (MB): with V8's small starting limit, a service holding
 * a few hundred rulesets ran a full collection every second or so under write load, and
 * while one marks, every young object still alive is promoted; the promoted garbage brought
 * the next one sooner. Under a minute of PATCHes with 800 rulesets stored: 40 full
 * collections and PATCH p99 24.1 ms without it, 1 and 18.6 ms with it (docs/service.md,
 * "Full collections under write load"). The old generation may grow to 256 MB before its
 * first full collection.
 */
import flags from './serveNodeFlags.json';

export const SERVE_NODE_FLAGS: readonly string[] = flags;

/** The flags for a child run by `execPath`: none for Electron as Node, which is not known to take them. */
export function serveNodeFlags(versions: NodeJS.ProcessVersions = process.versions): readonly string[] {
  return versions.electron === undefined ? SERVE_NODE_FLAGS : [];
}
