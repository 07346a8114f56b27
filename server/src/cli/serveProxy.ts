/**
 * `rulesmith serve --proxy ZONE=UPSTREAM …`: the WAF proxy's flags, checked with clear
 * errors, and the proxy started beside the service (server/src/proxy/, docs/proxy.md).
 */
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { parseBodyLimit } from '../requests/body';
import { parseFieldsFile, parseTrustedPeers, type EdgeTrust, type FieldsMapping } from '../proxy/edgeFields';
import { DEFAULT_QUEUE } from '../proxy/evaluationPool';
import { createProxy, DEFAULT_MAX_CONNECTIONS, type ChallengeMode, type EvaluatedRequestSink, type RunningProxy } from '../proxy/proxy';
import type { ProxyRoute } from '../proxy/zones';
import type { Service } from '../service/service';
import { InputError, UsageError } from './input';
import type { Io } from './io';
import { READY_LINES } from '../serveReady';

export interface ProxyFlags {
  readonly routes: readonly ProxyRoute[];
  readonly host: string;
  readonly port: number;
  readonly inspectBodyLimit?: number;
  readonly upstreamTimeoutMs: number;
  readonly headerTimeoutMs: number;
  readonly challenge: ChallengeMode;
  /** `--trust-proxy` (everyone) or `--trust-proxy-from CIDR[,CIDR…]` (repeatable: peers in these ranges). */
  readonly trust: EdgeTrust;
  readonly fieldsMapping?: FieldsMapping;
  /** `--proxy-workers N`: evaluation worker threads (0: on the proxy's thread). */
  readonly workers: number;
  /** `--proxy-queue N`: requests one evaluation worker holds before the next gets a 503 (the pool's default when absent). */
  readonly evaluationQueue?: number;
  /** `--proxy-max-connections N`: client connections open at once (the proxy's default when absent). */
  readonly maxConnections?: number;
}

/**
 * Evaluation threads without `--proxy-workers`: one when the machine has a core for it
 * beside the proxy's thread, else none (docs/proxy.md "Threads" says why).
 */
export function defaultProxyWorkers(cores = availableParallelism()): number {
  return cores >= 2 ? 1 : 0;
}

/** Builds the sink the proxy hands evaluated requests to (the security-events store gives one). */
export type ProxySinkFactory = (service: Service) => EvaluatedRequestSink | undefined;

/** The serve flags the proxy adds (for parseOptions). */
export const PROXY_FLAGS = {
  proxy: { type: 'string', multiple: true },
  'proxy-listen': { type: 'string' },
  'inspect-body-limit': { type: 'string' },
  'upstream-timeout': { type: 'string' },
  'header-timeout': { type: 'string' },
  challenge: { type: 'string' },
  'trust-proxy': { type: 'boolean' },
  'trust-proxy-from': { type: 'string', multiple: true },
  'fields-file': { type: 'string' },
  'proxy-workers': { type: 'string' },
  'proxy-queue': { type: 'string' },
  'proxy-max-connections': { type: 'string' },
} as const;

/** Whole milliseconds from seconds text; at least 1 ms, as a timeout of 0 ms would time out every request (or, for Node's header timeout, turn it off). */
function seconds(text: string | undefined, flag: string, fallback: number): number {
  if (text === undefined) return fallback;
  const n = Number(text);
  const allowed = `${flag} takes seconds from 0.001 to 3600 (e.g. ${flag} 30), got "${text}"`;
  if (!/^\d+(\.\d+)?$/.test(text.trim()) || !(n > 0) || n > 3600) throw new UsageError(allowed);
  if (n < 0.001) throw new UsageError(`${allowed}, which is less than 1 ms`);
  return Math.round(n * 1000);
}

/** The proxy flags, or undefined without `--proxy`; a UsageError for a flag that is wrong. */
export function proxyOptions(values: Record<string, string | boolean | string[] | undefined>, readFile: (path: string) => string = (p) => readFileSync(p, 'utf8')): ProxyFlags | undefined {
  const given = (values.proxy as string[] | undefined) ?? [];
  const others = Object.keys(PROXY_FLAGS).filter((k) => k !== 'proxy' && k !== 'proxy-listen' && values[k] !== undefined);
  // `--proxy-listen` alone: a proxy with no zone yet (the extension starts zones through its control API).
  if (given.length === 0 && values['proxy-listen'] === undefined) {
    if (others.length > 0) throw new UsageError(`--${others[0]} needs --proxy ZONE=UPSTREAM_URL (e.g. --proxy example.com=http://127.0.0.1:3000)`);
    return undefined;
  }
  const routes = given.map((p) => {
    const eq = p.indexOf('=');
    if (eq <= 0 || eq === p.length - 1) throw new UsageError(`--proxy takes ZONE=UPSTREAM_URL (e.g. --proxy example.com=http://127.0.0.1:3000), got "${p}"`);
    return { zone: p.slice(0, eq).trim(), upstream: p.slice(eq + 1).trim() };
  });
  const twice = routes.find((r, i) => routes.findIndex((o) => o.zone.toLowerCase() === r.zone.toLowerCase()) !== i);
  if (twice) throw new UsageError(`--proxy ${twice.zone}=… is given more than once; a zone has one upstream`);
  const listen = (values['proxy-listen'] as string | undefined) ?? '127.0.0.1:8081';
  const m = /^(?:\[([^\]]+)\]|([^:]+)):(\d{1,5})$/.exec(listen);
  if (!m || Number(m[3]) > 65535) throw new UsageError(`--proxy-listen takes HOST:PORT (e.g. 127.0.0.1:8081; port 0 picks a free one), got "${listen}"`);
  let inspectBodyLimit: number | undefined;
  if (values['inspect-body-limit'] !== undefined) {
    const r = parseBodyLimit(String(values['inspect-body-limit']), '--inspect-body-limit');
    if ('error' in r) throw new UsageError(r.error);
    inspectBodyLimit = r.limit;
  }
  const challenge = (values.challenge as string | undefined) ?? 'interstitial';
  if (challenge !== 'interstitial' && challenge !== 'pass' && challenge !== 'block') throw new UsageError(`--challenge takes interstitial, pass or block, got "${challenge}"`);
  let fieldsMapping: FieldsMapping | undefined;
  const fieldsFile = values['fields-file'] as string | undefined;
  if (fieldsFile !== undefined) {
    let text: string;
    try {
      text = readFile(fieldsFile);
    } catch (e) {
      throw new InputError([`rulesmith: --fields-file: cannot read ${fieldsFile}: ${(e as Error).message}`]);
    }
    const parsed = parseFieldsFile(text, fieldsFile);
    // The file is input, not usage: its error alone, without the usage text after it.
    if ('error' in parsed) throw new InputError([`rulesmith: --fields-file ${parsed.error}`]);
    fieldsMapping = parsed;
  }
  let trust: EdgeTrust = values['trust-proxy'] === true ? 'everyone' : 'nobody';
  const trustFrom = values['trust-proxy-from'] as string[] | undefined;
  if (trustFrom !== undefined) {
    const parsed = parseTrustedPeers(trustFrom);
    if ('error' in parsed) throw new UsageError(parsed.error);
    trust = parsed;
  }
  const workersText = values['proxy-workers'] as string | undefined;
  const workers = workersText === undefined ? defaultProxyWorkers() : Number(workersText);
  if (!/^\d{1,2}$/.test(workersText ?? '0') || workers > 64) throw new UsageError(`--proxy-workers takes a number of evaluation threads from 0 (evaluate on the proxy's thread) to 64, got "${workersText}"`);
  const queueText = values['proxy-queue'] as string | undefined;
  const evaluationQueue = queueText === undefined ? undefined : Number(queueText);
  if (queueText !== undefined && (!/^\d{1,6}$/.test(queueText) || evaluationQueue! < 1 || evaluationQueue! > 100_000)) {
    throw new UsageError(`--proxy-queue takes the number of requests one evaluation worker may hold, from 1 to 100000 (default ${DEFAULT_QUEUE}), got "${queueText}"`);
  }
  const connectionsText = values['proxy-max-connections'] as string | undefined;
  const maxConnections = connectionsText === undefined ? undefined : Number(connectionsText);
  if (connectionsText !== undefined && (!/^\d{1,7}$/.test(connectionsText) || maxConnections! < 1 || maxConnections! > 1_000_000)) {
    throw new UsageError(`--proxy-max-connections takes the number of client connections the proxy keeps open at once, from 1 to 1000000 (default ${DEFAULT_MAX_CONNECTIONS}), got "${connectionsText}"`);
  }
  return {
    routes,
    workers,
    ...(evaluationQueue !== undefined ? { evaluationQueue } : {}),
    ...(maxConnections !== undefined ? { maxConnections } : {}),
    host: m[1] ?? m[2]!,
    port: Number(m[3]),
    ...(inspectBodyLimit !== undefined ? { inspectBodyLimit } : {}),
    upstreamTimeoutMs: seconds(values['upstream-timeout'] as string | undefined, '--upstream-timeout', 100_000),
    headerTimeoutMs: seconds(values['header-timeout'] as string | undefined, '--header-timeout', 20_000),
    challenge,
    trust,
    ...(fieldsMapping ? { fieldsMapping } : {}),
  };
}

/** The proxy for the running service (not listening yet); a ProxyConfigError names a route that cannot be used. */
export function makeProxy(flags: ProxyFlags, service: Service, io: Io, sinkFactory?: ProxySinkFactory): RunningProxy {
  const sink = sinkFactory?.(service);
  return createProxy({
    store: service.store,
    routes: flags.routes,
    ...(flags.inspectBodyLimit !== undefined ? { inspectBodyLimit: flags.inspectBodyLimit } : {}),
    upstreamTimeoutMs: flags.upstreamTimeoutMs,
    headerTimeoutMs: flags.headerTimeoutMs,
    challenge: flags.challenge,
    trust: flags.trust,
    workers: flags.workers,
    ...(flags.evaluationQueue !== undefined ? { evaluationQueue: flags.evaluationQueue } : {}),
    ...(flags.maxConnections !== undefined ? { maxConnections: flags.maxConnections } : {}),
    ...(flags.fieldsMapping ? { fieldsMapping: flags.fieldsMapping } : {}),
    ...(sink ? { sink } : {}),
    log: (l) => io.out(`${l}\n`),
  });
}

/**
 * Starts listening; once it does, calls `ready` (which prints the API's line) and prints
 * the proxy's URL and each zone's. If it cannot listen (the port is taken), `failed` stops
 * the service before any "listening" line: a script that waits for one must not take a
 * `serve --proxy` without its proxy for started.
 */
export function listenProxy(proxy: RunningProxy, flags: ProxyFlags, io: Io, ready: () => void, failed: () => void): void {
  proxy.server.on('error', (e) => {
    io.err(`rulesmith proxy: cannot listen on ${flags.host}:${flags.port}: ${e.message}\n`);
    failed();
  });
  proxy.server.listen(flags.port, flags.host, () => {
    ready();
    io.out(`${READY_LINES.proxy}${proxy.url()}\n`);
    for (const c of proxy.counters()) io.out(`rulesmith proxy: ${c.zone} → ${c.upstream} (open ${proxy.zoneUrl(c.zone)})\n`);
  });
}
