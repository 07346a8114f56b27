/**
 * Memory a request's field values cost to build (`requestValues`: the request's fields, then
 * their conversion to the engine's values), over the CRS 3.3.4 regression corpus with the
 * core as it ships (modsec/shippedCore.ts): bytes allocated per request, sampled by V8's heap
 * profiler with the objects young-generation collections free included, and the functions
 * that allocate most. Every byte allocated is a byte a scavenge has to sweep; the WAF proxy
 * builds these values for every live request.
 *
 *   node --import tsx test/bench/fieldAllocation.bench.ts
 */
import { readFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { fileURLToPath } from 'node:url';
import { yamlFiles } from '../../server/src/corpusFiles';
import type { SampleRequest } from '../../server/src/requests/types';
import { loadCore } from './modsec/shippedCore';

const corpus = fileURLToPath(new URL('../fixtures/crs-3.3.4-regression-tests', import.meta.url));
const ROUNDS = 10;

interface ProfileNode {
  readonly callFrame: { readonly functionName: string };
  readonly selfSize: number;
  readonly children: readonly ProfileNode[];
}

async function main(): Promise<void> {
  const { core, how } = await loadCore();
  const requests: SampleRequest[] = [];
  for (const f of yamlFiles(corpus)) {
    for (const t of core.parseFtwFile(readFileSync(f, 'utf8')).tests) if (t.enabled !== false) for (const st of t.stages) requests.push(st.request);
  }
  const round = () => {
    for (const r of requests) core.requestValues(r, { bodyLimit: 128 * 1024 });
  };
  for (let i = 0; i < 5; i++) round();
  const t0 = performance.now();
  for (let i = 0; i < ROUNDS; i++) round();
  const perRequestUs = ((performance.now() - t0) * 1000) / ROUNDS / requests.length;

  const session = new Session();
  session.connect();
  const post = <T>(method: string, params?: object) => new Promise<T>((resolve, reject) => session.post(method, params, (e, r) => (e ? reject(e) : resolve(r as T))));
  await post('HeapProfiler.enable');
  await post('HeapProfiler.startSampling', { samplingInterval: 256, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
  for (let i = 0; i < ROUNDS; i++) round();
  const { profile } = await post<{ profile: { head: ProfileNode } }>('HeapProfiler.stopSampling');
  session.disconnect();

  let total = 0;
  const byFunction = new Map<string, number>();
  const walk = (n: ProfileNode) => {
    total += n.selfSize;
    const name = n.callFrame.functionName || '(anonymous)';
    byFunction.set(name, (byFunction.get(name) ?? 0) + n.selfSize);
    n.children.forEach(walk);
  };
  walk(profile.head);
  const kb = (bytes: number) => `${(bytes / ROUNDS / requests.length / 1024).toFixed(1)} KB`;
  console.log(`requestValues over ${requests.length} requests of the CRS regression corpus (${how}): ${kb(total)} allocated per request, ${perRequestUs.toFixed(1)} µs per request`);
  for (const [name, bytes] of [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, 8)) console.log(`  ${kb(bytes).padStart(8)}  ${name}`);
}

main().catch((e) => {
  console.error(e);
  process.exitCode = 1;
});
