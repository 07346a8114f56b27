/**
 * `rulesmith serve`: the local rules service on 127.0.0.1 (by default port 8787) with
 * its SQLite database. Prints `rulesmith serve: listening on <url>` when ready (the
 * extension waits for that line), one line per request, and stops cleanly on
 * SIGTERM/SIGINT. With RULESMITH_SERVICE_TOKEN set, that token gets full access.
 * With `--proxy ZONE=UPSTREAM` it also runs the WAF proxy (server/src/proxy/, docs/proxy.md)
 * on its own listener and prints `rulesmith proxy: listening on <url>` when ready.
 */
import { resolve } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { parseBodyLimit } from '../requests/body';
import { ProxyConfigError, type RunningProxy } from '../proxy/proxy';
import { listenProxy, makeProxy, PROXY_FLAGS, proxyOptions, type ProxyFlags, type ProxySinkFactory } from './serveProxy';
import { createService, type LegacyMode } from '../service/service';
import { Store } from '../service/store';
import { eventsOn, eventsOptions } from '../service/events/options';
import { SecurityEvents, type SecurityEventsOptions } from '../service/events/writer';
import { registerServiceToken, seedDemo } from '../service/seed';
import { demoSeedSteps } from '../service/routes/index';
import { batchedOutput } from './batchedOutput';
import { parseOptions, UsageError } from './input';
import type { Io } from './io';
import { READY_LINES } from '../serveReady';

export interface ServeOptions {
  readonly port: number;
  readonly host: string;
  readonly db: string;
  readonly seed?: 'demo';
  readonly legacy: LegacyMode;
  /** `--body-limit BYTES`: how much of a traced body is inspected. */
  readonly bodyLimit?: number;
  /** `--proxy ZONE=URL …` and the proxy's other flags; undefined without `--proxy`. */
  readonly proxy?: ProxyFlags;
  /** `--events-retention`, `--events-max-rows`: the security events' bounds. */
  readonly events?: SecurityEventsOptions;
  /** `--events off`: record no security events (proxy and traces). */
  readonly eventsOff?: boolean;
  /** `--ruleset-write-rate N`: writes per second to one ruleset before 429 (service/rateLimit.ts). */
  readonly rulesetWriteRate?: number;
}

/** The serve command's arguments as option values (`--proxy` may repeat). */
export function serveArgs(args: readonly string[]): Record<string, string | boolean | string[] | undefined> {
  const { values, files } = parseOptions(args, {
    port: { type: 'string' },
    host: { type: 'string' },
    db: { type: 'string' },
    seed: { type: 'string' },
    legacy: { type: 'string' },
    'body-limit': { type: 'string' },
    'events-retention': { type: 'string' },
    'events-max-rows': { type: 'string' },
    events: { type: 'string' },
    'ruleset-write-rate': { type: 'string' },
    ...PROXY_FLAGS,
  });
  if (files.length > 0) throw new UsageError(`serve takes no file arguments, got "${files[0]}"`);
  return values as Record<string, string | boolean | string[] | undefined>;
}

export function serveOptions(values: Record<string, string | boolean | string[] | undefined>): ServeOptions {
  const port = Number(values.port ?? 8787);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError(`--port must be 0–65535 (0 picks a free port), got "${values.port}"`);
  const seed = values.seed as string | undefined;
  if (seed !== undefined && seed !== 'demo') throw new UsageError(`--seed takes "demo", got "${seed}"`);
  const legacy = (values.legacy as string | undefined) ?? 'on';
  if (legacy !== 'on' && legacy !== 'sunset') throw new UsageError(`--legacy takes "on" or "sunset", got "${legacy}"`);
  let bodyLimit: number | undefined;
  if (values['body-limit'] !== undefined) {
    const r = parseBodyLimit(String(values['body-limit']), '--body-limit');
    if ('error' in r) throw new UsageError(r.error);
    bodyLimit = r.limit;
  }
  const proxy = proxyOptions(values);
  const events = eventsOptions(values as Record<string, string | boolean | undefined>);
  if ('error' in events) throw new UsageError(events.error);
  const recording = eventsOn(values.events as string | undefined);
  if ('error' in recording) throw new UsageError(recording.error);
  const rate = writeRate(values['ruleset-write-rate'] as string | undefined);
  return {
    events,
    ...(recording.on ? {} : { eventsOff: true }),
    ...(bodyLimit !== undefined ? { bodyLimit } : {}),
    ...(proxy ? { proxy } : {}),
    ...(rate !== undefined ? { rulesetWriteRate: rate } : {}),
    port,
    host: (values.host as string | undefined) ?? '127.0.0.1',
    db: resolve((values.db as string | undefined) ?? 'rulesmith-service.db'),
    seed: seed as 'demo' | undefined,
    legacy,
  };
}

/**
 * `--ruleset-write-rate`: writes per second to one ruleset, above 0 (0 or less would refuse
 * every write; below 1 paces them: 0.5 is one write every 2 s) and at most a million.
 */
function writeRate(raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const rate = /^\s*[0-9]*\.?[0-9]+([eE][+-]?[0-9]+)?\s*$/.test(raw) ? Number(raw) : NaN;
  if (rate > 0 && rate <= 1e6) return rate;
  throw new UsageError(`--ruleset-write-rate takes writes per second to one ruleset, a number above 0 and at most 1000000 (0.5: one write every 2 s), got "${raw}"`);
}

export function runServe(options: ServeOptions, given: Io, extras: { proxySink?: ProxySinkFactory } = {}): number {
  // Young-generation collections on this thread alone, without V8's helper threads: a
  // request leaves little alive (the proxy at PL1 keeps ~150 KB through a scavenge), and
  // the helpers took the cores that the proxy's upstream and clients need. With them off the
  // proxy answered 8–20% more requests at PL1 for 7–15% less CPU each (three runs); the
  // API's loads did not change (docs/proxy.md, session 13).
  setFlagsFromString('--no-parallel-scavenge');
  // A line per request: written once per turn of the event loop (batchedOutput.ts).
  const output = batchedOutput(given.out);
  const io: Io = { ...given, out: output.write };
  let store: Store;
  try {
    store = new Store(options.db);
  } catch (e) {
    io.err(`rulesmith serve: cannot open the database ${options.db}: ${(e as Error).message}\n`);
    return 1;
  }
  io.out(`rulesmith serve: database ${options.db} (SQLite, ${store.binding === 'native' ? 'native binding' : 'WebAssembly build'})\n`);
  if (options.seed === 'demo') {
    const seeded = seedDemo(store, demoSeedSteps);
    if (seeded) {
      io.out(`rulesmith serve: seeded the demo into ${options.db}; credentials (shown once, keep them):\n`);
      for (const c of seeded.credentials) io.out(`  ${c.name.padEnd(34)} ${c.scope.padEnd(44)} ${c.value}\n`);
    } else io.out(`rulesmith serve: ${options.db} was seeded before; keeping its data\n`);
  }
  const serviceToken = process.env.RULESMITH_SERVICE_TOKEN;
  if (serviceToken) registerServiceToken(store, serviceToken);
  // What the proxy's and the traces' rules do becomes security events (docs/events.md), written
  // by their own thread. With --events off nothing is recorded, and GraphQL still reads what is stored.
  const events = new SecurityEvents(store, { ...options.events, recording: !options.eventsOff, log: (l) => io.out(`${l}\n`) });
  const running = createService({
    store,
    legacy: options.legacy,
    ...(options.bodyLimit !== undefined ? { bodyLimit: options.bodyLimit } : {}),
    ...(options.rulesetWriteRate !== undefined ? { rulesetWriteRate: options.rulesetWriteRate } : {}),
    events,
    log: (l) => io.out(`${l}\n`),
  });
  running.server.on('error', (e) => {
    io.err(`rulesmith serve: cannot listen on ${options.host}:${options.port}: ${e.message}\n`);
    void events.close().finally(() => store.close());
    process.exitCode = 1;
  });
  let proxy: RunningProxy | undefined;
  if (options.proxy) {
    try {
      proxy = makeProxy(options.proxy, running.service, io, extras.proxySink ?? (() => (options.eventsOff ? undefined : events)));
    } catch (e) {
      if (!(e instanceof ProxyConfigError)) throw e;
      output.flush();
      io.err(`rulesmith proxy: ${e.message}\n`);
      void running.close().then(() => events.close()).finally(() => store.close());
      return 2;
    }
  }
  running.server.listen(options.port, options.host, () => {
    const ready = () => io.out(`${READY_LINES.api}${running.url()}\n`);
    // With a proxy, the API's line waits for the proxy's listener too (listenProxy).
    if (proxy && options.proxy) listenProxy(proxy, options.proxy, io, ready, () => stop('the proxy cannot listen', 1));
    else ready();
  });
  let stopping = false;
  const stop = (why: string, exitCode = 0) => {
    if (stopping) return;
    stopping = true;
    void Promise.all([running.close(), proxy?.close()]).then(async () => {
      await events.close(); // its last batch
      store.close();
      io.out(`rulesmith serve: stopped (${why})\n`);
      output.flush();
      process.exitCode = exitCode;
    });
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  return 0;
}
