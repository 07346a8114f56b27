// The WAF proxy keeps serving while the API is under write load (issue 15, "Faults"): one
// client loops ruleset PUTs to the proxied zone through the API while another sends
// requests through the proxy, over real sockets, on the proxy's thread and with
// evaluation workers. Latency is judged against the same run's own figures, never a fixed
// time: the service and the proxy share a thread, so a proxied request may wait behind
// about one write per hop it makes through that thread, not behind the whole loop of them.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { entrypoint, proxyTestFile, send } from './proxyHarness';

const ZONE_ID = '0123456789abcdef0123456789abcded';
const ZONE = 'writes.test';
const CUSTOM = entrypoint(ZONE_ID, 'http_request_firewall_custom');
/** The two configurations the writer alternates: both let `/` through; `/flip` is blocked by one. */
const CONFIGS = [
  [{ action: 'block', expression: 'http.request.uri.path eq "/flip"', description: 'flip blocked' }],
  [{ action: 'log', expression: 'http.request.uri.path eq "/flip"', description: 'flip logged' }],
];
const WRITES = 30;

const file = proxyTestFile({ zoneId: ZONE_ID, zone: ZONE });

async function timed<T>(fn: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const t = performance.now();
  const value = await fn();
  return { ms: performance.now() - t, value };
}

const median = (xs: readonly number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const put = (i: number) => file.deploy(CUSTOM, CONFIGS[i % 2]);

describe('the proxy under API write load', () => {
  for (const workers of [0, 2]) {
    it(`keeps answering with ${workers === 0 ? 'evaluation on its thread' : `${workers} evaluation workers`} while rulesets are written in a loop`, async () => {
      const proxy = await file.startProxy({ workers });
      try {
        await put(0);
        // Idle figures: proxied requests alone, then writes alone.
        for (let i = 0; i < 10; i++) await send(proxy.url(), ZONE, '/'); // warm-up
        const idleProxy: number[] = [];
        for (let i = 0; i < 30; i++) idleProxy.push((await timed(() => send(proxy.url(), ZONE, '/'))).ms);
        const idleWrite: number[] = [];
        for (let i = 0; i < 10; i++) idleWrite.push((await timed(() => put(i))).ms);

        // Both at once: the writer loops WRITES PUTs; the reader sends requests until it is done.
        let writing = true;
        const loadedWrite: number[] = [];
        const writer = (async () => {
          for (let i = 0; i < WRITES; i++) loadedWrite.push((await timed(() => put(i))).ms);
          writing = false;
        })();
        const loaded: number[] = [];
        const statuses = new Set<number>();
        const flips = new Set<number>();
        while (writing) {
          const a = await timed(() => send(proxy.url(), ZONE, '/'));
          loaded.push(a.ms);
          statuses.add(a.value.status);
          const b = await timed(() => send(proxy.url(), ZONE, '/flip'));
          loaded.push(b.ms);
          flips.add(b.value.status);
        }
        await writer;

        assert.deepEqual([...statuses], [200], 'every request to / was forwarded');
        assert.ok([...flips].every((s) => s === 200 || s === 403), `/flip got ${[...flips].join(', ')}: one configuration or the other`);
        // Not starved: at least one proxied request for every four writes, and ...
        assert.ok(loaded.length >= WRITES / 4, `${loaded.length} proxied requests during ${WRITES} writes`);
        // ... a proxied request waits behind at most about one write per hop it makes on the
        // shared thread (client → proxy → upstream → proxy → client: four), judged on medians
        // so that a GC pause or one slow fsync does not decide.
        const bound = median(idleProxy) + 4 * median(loadedWrite);
        assert.ok(median(loaded) <= bound, `median proxied latency under writes ${median(loaded).toFixed(2)} ms > idle ${median(idleProxy).toFixed(2)} ms + 4 × a write's ${median(loadedWrite).toFixed(2)} ms`);
        // Writes are not slowed by the proxy beyond the same four hops either.
        assert.ok(median(loadedWrite) <= median(idleWrite) + 4 * median(idleProxy), `median write latency under proxied traffic ${median(loadedWrite).toFixed(2)} ms > idle ${median(idleWrite).toFixed(2)} ms + 4 × a proxied request's ${median(idleProxy).toFixed(2)} ms`);
        // The last write is the configuration in force on the next request.
        assert.equal((await send(proxy.url(), ZONE, '/flip')).status, (WRITES - 1) % 2 === 0 ? 403 : 200);
      } finally {
        await proxy.close();
      }
    });
  }
});
