/**
 * Node flags for a process that runs `rulesmith serve`, given by whatever starts it (npm
 * start, the extension, the benchmarks): V8 reads them only when it makes its heap, and
 * NODE_OPTIONS refuses some of them. The list is serveNodeFlags.json, which scripts import too.
 *
 * `--initial-old-space-size=256` (MB): with V8's small starting limit, a service holding
 * a few hundred rulesets ran a full collection every second or so under write load, and
 * while one marks, every young object still alive is promoted; the promoted garbage brought
 * the next one sooner. Under a minute of PATCHes with 800 rulesets stored: 40 full
 * collections and PATCH p99 24.1 ms without it, 1 and 18.6 ms with it (docs/service.md,
 * "Full collections under write load"). The old generation may grow to 256 MB before its
 * first full collection.
 *
 * `--v8-pool-size=1`: one V8 helper thread (garbage collection, background compiles) instead
 * of one per core. On a machine of two cores the helpers competed with the WAF proxy's thread
 * and its evaluation worker: in two A/B runs of the proxy benchmark at a fixed rate the added
 * p99 was 1.92 / 2.08 ms against 2.09 / 2.40 ms and the slowest request 9 ms against 23–31 ms,
 * and the API's loads were unchanged (PATCH p99 8.7 / 7.6 against 11.5 / 8.8 ms; docs/proxy.md
 * "Session 34").
 *
 * `--no-memory-reducer`: V8's memory reducer shrinks a heap that grew under load once the
 * allocation rate drops, with two or three full collections in a row. After a burst of
 * traffic it ran them while the WAF proxy sat idle, and the fixed-rate traffic that came
 * after had a longer tail: in three A/B runs of the proxy benchmark, added p99 2.67 / 2.35 /
 * 1.53 ms with the reducer against 1.52 / 1.56 / 0.69 ms without (how was not pinned down;
 * docs/proxy.md, "No memory reducer"). Without it the heap is collected at its limit, as
 * under load; one that grew is not given back while the service is idle.
 */
import flags from './serveNodeFlags.json';

export const SERVE_NODE_FLAGS: readonly string[] = flags;

/** The flags for a child run by `execPath`: none for Electron as Node, which is not known to take them. */
export function serveNodeFlags(versions: NodeJS.ProcessVersions = process.versions): readonly string[] {
  return versions.electron === undefined ? SERVE_NODE_FLAGS : [];
}
