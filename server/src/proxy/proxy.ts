/**
 * The WAF proxy: a reverse proxy in front of an application that runs each request through
 * its zone's deployed rules, with the engine the trace and `rulesmith eval` use
 * (compileZone + evaluate), and acts on the verdict. See docs/proxy.md.
 *
 * Per request: the zone from the Host (zones.ts); the first `inspectBodyLimit` bytes of
 * the body (the rest stays in the socket until the request is forwarded, so memory is
 * bounded); field values through requests/ (live.ts → fields.ts) with the edge fields
 * (edgeFields.ts); the zone's compiled configuration (zones.ts); evaluate with the rate
 * limiter and the clearance cookie as per-request hooks; then a block page, a challenge,
 * or the request streamed to the upstream and its response streamed back (status,
 * headers, trailers), its body framed as it came, with the peer appended to X-Forwarded-For,
 * X-Forwarded-Proto/-Host/-Port, X-Real-IP, Forwarded, CF-Connecting-IP, CF-Ray and
 * CF-IPCountry set by the proxy, headers whose name holds `_` dropped, and the other headers
 * only an edge may set dropped unless it is trusted (forwarding.ts `forwardedHeaders`).
 * WebSocket upgrades are evaluated like any request and then piped both ways; any other
 * upgrade (h2c) goes through as an ordinary request. Nothing the app sends, and no throw while
 * relaying it, escapes: the client gets a 502 or a closed connection, the process goes on.
 *
 * Every evaluated request goes to the EvaluatedRequestSink, if one is given, once its
 * status is known, and is counted in its zone's `requests`, once: a client that leaves
 * before its answer (while its request is evaluated, or before the app answers or switches
 * protocols) has status 499 (CLIENT_CLOSED); the sink must return at once (it is never
 * awaited). A challenge served with the interstitial is also kept (PendingChallenges, by its
 * ray id, which the form posts back), so that the button's press is recorded as its solve,
 * for the rule that challenged, and resets that rule's counter when a rate limit challenged.
 *
 * Fail closed: once the rules service's store has failed an fsync (Store.unavailable), the
 * configuration the proxy holds may include a deployment a restart takes back, so every
 * request is answered 503 and none forwarded until `serve` is restarted.
 */
import { Agent as HttpAgent, createServer, request as httpRequest, STATUS_CODES, type ClientRequest, type IncomingMessage, type InformationEvent, type OutgoingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest, type RequestOptions } from 'node:https';
import { isIP, type Socket } from 'node:net';
import { createHistogram, monitorEventLoopDelay, performance, type RecordableHistogram } from 'node:perf_hooks';
import type { Duplex } from 'node:stream';
import type { EvaluatedRequest, EvaluatedRequestSink } from '../evaluatedRequest';
import { DEFAULT_BODY_LIMIT, undeclaredSize } from '../requests/body';
import type { TraceEntry } from '../rulesets/engine';
import { ApiError, CODES, randomHex } from '../service/api';
import { allowed, authenticate, seesEverything, visible, ZONE_WAF_GROUPS, type Principal } from '../service/auth';
import { zoneRow } from '../service/scope';
import type { Store } from '../service/store';
import { decodeBody } from './bodyCoding';
import { CHALLENGE_PATH, Clearance, PendingChallenges, safeReturn, type Visitor } from './clearance';
import { clientAddress, edgeFields, forwardedProto, peerTrusted, type EdgeFields, type EdgeTrust, type FieldsMapping } from './edgeFields';
import { badGatewayPage, blockPage, challengeNotPassedPage, challengePage, gatewayTimeoutPage, overloadedPage, storeFailedPage, unknownZonePage, zoneErrorPage, type Page } from './pages';
import { countAfterResponse, evaluateLive, type LiveEvaluation, type LiveJob, type ResponseCount } from './evaluateLive';
import { appClock, badStatusLine, carriesTrailers, climbsOutOfPrefix, endAfterPending, forwardedHeaders, headerLines, headWithoutUpgrade, isWebSocket, lingerThenClose, pairs, readHead, relayInterim, requestTarget, responseHeaders, sendBody, sendHeldBody, unfinishedRequest, upstreamPath, watchAnswerIdle, withoutHeader, writeRawPage, type Forwarding } from './forwarding';
import { EvaluationPool, EvaluationUnavailable, proxyWorkerFile, type OnThisThread } from './evaluationPool';
import { DEFAULT_MAX_COUNTERS, RateLimiter, type CounterKey } from './rateLimit';
import { LogThrottle } from '../logThrottle';
import { refusedHead } from './requestHead';
import { findZone, hostName, LiveZones, resolveRoute, routeFor, type ProxyRoute, type ZoneRoute } from './zones';

export type { EvaluatedRequestSink } from '../evaluatedRequest';

export type ChallengeMode = 'interstitial' | 'pass' | 'block';

/** The request's User-Agent, as its event records it and its clearance is bound to (Node keeps the first of repeated ones). */
const userAgentOf = (req: IncomingMessage): string => req.headers['user-agent'] ?? '';

export interface ProxyOptions {
  readonly store: Store;
  readonly routes: readonly ProxyRoute[];
  /** Body bytes evaluated (default 128 KiB); a longer body is evaluated on its start and forwarded whole. */
  readonly inspectBodyLimit?: number;
  /**
   * Time the upstream has to start its answer once the request is sent (default 100 s; a slow
   * upload does not count); then 504. Also the longest pause in an answer it has started (a
   * client that reads slowly does not count); then both connections are cut.
   */
  readonly upstreamTimeoutMs?: number;
  /** Time a client has to send its request headers, and the longest pause in its body (default 20 s); then 408 and the connection closes. */
  readonly headerTimeoutMs?: number;
  /** `interstitial` (default): the challenge page; `pass`: challenges count as solved; `block`: as a block. */
  readonly challenge?: ChallengeMode;
  /** From whom to take the client from CF-Connecting-IP / X-Forwarded-For, its country from CF-IPCountry and its protocol from X-Forwarded-Proto, and pass the edge's own headers (True-Client-IP, CF-Visitor) to the app (edgeFields.ts); nobody when absent. */
  readonly trust?: EdgeTrust;
  readonly fieldsMapping?: FieldsMapping;
  readonly sink?: EvaluatedRequestSink;
  /** The clock (ms since the epoch) for rate limits, clearance and events; tests give a fake one. */
  readonly now?: () => number;
  readonly maxRateLimitCounters?: number;
  /** One line per request the proxy answered itself (block, challenge, error); never headers or bodies. */
  readonly log?: (line: string) => void;
  /**
   * Evaluation worker threads (evaluationPool.ts); 0 (the default) evaluates on the proxy's
   * thread. Workers count rate limits on the real clock, so not with `now`.
   */
  readonly workers?: number;
  /** Requests one evaluation worker holds (evaluated or waiting) before the next is answered 503 (`--proxy-queue`; evaluationPool.ts DEFAULT_QUEUE). */
  readonly evaluationQueue?: number;
  /** Client connections open at once; more are closed as they come (`--proxy-max-connections`, DEFAULT_MAX_CONNECTIONS). */
  readonly maxConnections?: number;
  /** Time a worker may work on one request, and on compiling one zone, before it is taken as hung (evaluationPool.ts defaults; tests give less). */
  readonly evaluationDeadlineMs?: number;
  readonly compileDeadlineMs?: number;
  /** The evaluation worker's script (proxyWorker.js by default): tests give one that hangs. */
  readonly workerFile?: string;
}

export interface ZoneCounters {
  readonly zone: string;
  readonly zoneId: string;
  readonly upstream: string;
  requests: number;
  /** Answered by the proxy: block pages, custom block responses, rate limits. */
  blocked: number;
  challenged: number;
  forwarded: number;
  /** 502 / 504 answers. */
  upstreamErrors: number;
  /** 503 answers, not evaluated and not forwarded: the evaluation queue full, a hung worker, the rules store failed. */
  unavailable: number;
}

interface ZoneStats {
  counters: ZoneCounters;
  readonly timings: WafTimings;
}

/** The WAF's time per request (`whole`, from the request's head to the verdict) and the part of it spent evaluating (`evaluating`, LiveEvaluation `workMs`), in ns. */
interface WafTimings {
  readonly whole: RecordableHistogram;
  readonly evaluating: RecordableHistogram;
  record(ns: number, workNs: number): void;
  reset(): void;
}

function wafTimings(): WafTimings {
  const whole = createHistogram();
  const evaluating = createHistogram();
  return {
    whole,
    evaluating,
    record(ns, workNs) {
      whole.record(ns);
      evaluating.record(workNs);
    },
    reset() {
      whole.reset();
      evaluating.reset();
    },
  };
}

export interface RunningProxy {
  readonly server: Server;
  /** `http://127.0.0.1:<port>` once listening. */
  url(): string;
  /** The URL a browser on this machine opens for a zone: `http://<zone>.localhost:<port>/`. */
  zoneUrl(zone: string): string;
  counters(): readonly ZoneCounters[];
  /** Starts proxying a zone (or changes its upstream); an error for a zone or URL that cannot be used. */
  startZone(route: ProxyRoute): ZoneCounters | { error: string };
  /** Stops proxying a zone (by name or id); false when it was not proxied. */
  stopZone(zone: string): boolean;
  readonly rateLimiter: RateLimiter;
  close(): Promise<void>;
}

/** A route that cannot be used: the flag and the reason. */
export class ProxyConfigError extends Error {}

/**
 * Client connections open at once, by default. Each may hold up to the body inspection limit
 * while it is read (128 KiB by default: 128 MiB for all), so this bounds the memory of the
 * requests not yet queued for evaluation, which `--proxy-queue` does not.
 */
export const DEFAULT_MAX_CONNECTIONS = 1024;
/** Connections closed at the limit: the first logged, then one line per DROP_LOG_MS with the count of the others (logThrottle.ts). */
const DROP_LOG_MS = 10_000;
/**
 * Requests refused before a zone is picked (a refused head, a bad target, a malformed head,
 * CONNECT) and requests for hosts under no proxied zone (530), each kind apart: the first
 * FLOOD_BURST lines of a FLOOD_WINDOW_MS window logged, then one line with the count of the
 * rest (logThrottle.ts), so a flood of bad requests cannot flood the log.
 */
export const FLOOD_BURST = 10;
export const FLOOD_WINDOW_MS = 10_000;

/** Why a request is refused once the rules store failed (the log line's reason). */
const STORE_FAILED = 'the rules store failed; restart rulesmith serve';

/** The proxy's control API (see `control`), on every host. */
export const CONTROL_PATH = '/.rulesmith/proxy';

/**
 * The status of a request whose client closed its connection before the answer (nginx's
 * 499, the one Cloudflare's logs give it too): its events and its count carry it.
 */
export const CLIENT_CLOSED = 499;
/**
 * Sends of one request to the app when a kept-alive connection turns out closed (reset
 * before any answer: the app closed it idle as the request went out). Each try takes another
 * connection (the one that failed is gone), so this bounds the stale ones a burst may meet.
 */
export const UPSTREAM_ATTEMPTS = 3;
/** Methods never sent twice (nginx's `non_idempotent`). */
const NON_IDEMPOTENT = new Set(['POST', 'PATCH', 'LOCK']);

/** What a challenge served with the interstitial keeps until its button is pressed (`passChallenge`). */
interface PendingChallenge {
  /** Whose press it takes: the zone, and the visitor the clearance is bound to. */
  readonly zoneId: string;
  readonly visitor: Visitor;
  /** The solve's event (`solveOf`), when the proxy records events. */
  readonly solve?: EvaluatedRequest;
  /** The counter of the rate-limit rule that challenged (evaluateLive.ts), which passing resets. */
  readonly rateLimitCounter?: CounterKey;
}


export function createProxy(options: ProxyOptions): RunningProxy {
  const routes: ZoneRoute[] = [];
  for (const r of options.routes) {
    const resolved = resolveRoute(options.store, r);
    if ('error' in resolved) throw new ProxyConfigError(resolved.error);
    routes.push(resolved);
  }
  const now = options.now ?? Date.now;
  const defaultLimit = options.inspectBodyLimit ?? DEFAULT_BODY_LIMIT;
  const upstreamTimeout = options.upstreamTimeoutMs ?? 100_000;
  const headerTimeout = options.headerTimeoutMs ?? 20_000;
  const challengeMode = options.challenge ?? 'interstitial';
  // edgeFields decides per request whether the peer is trusted (`EdgeFields.trusted`), and forwarding follows.
  const trust = options.trust ?? 'nobody';
  const limiter = new RateLimiter(now, options.maxRateLimitCounters ?? DEFAULT_MAX_COUNTERS);
  const clearance = new Clearance(now);
  /** By the served request's ray id: what its press needs (its solve's event, its rate-limit counter). */
  const pendingChallenges = new PendingChallenges<PendingChallenge>(now);
  /**
   * Answers whose request's body was refused on the socket (`clientError`: 400) before any of
   * them went out: when the connection goes, that status is the request's, not CLIENT_CLOSED.
   */
  const refusedBodies = new WeakMap<ServerResponse, number>();
  /** Each request's ray id, for an answer written on its socket outside it (a malformed body's 400 carries it too). */
  const rayIds = new WeakMap<ServerResponse, string>();
  const log = options.log ?? (() => {});
  const zones = new LiveZones(options.store);
  /** The body bytes a zone's rules see: its own setting where it has one, else `--inspect-body-limit`. */
  const inspectLimit = (zoneId: string): number => zones.bodyLimit(zoneId) ?? defaultLimit;
  /** Evaluation and counting on this thread: without workers, and while a worker is down. */
  const onThisThread: OnThisThread = {
    evaluate: (job) => evaluateLive(zones.get(job.zoneId), job, limiter),
    count: (job, counts, head) => countAfterResponse(job, counts, head, limiter),
  };
  const pool = evaluationPool(options, log, onThisThread);
  /**
   * Per proxied zone, its counters and the WAF's time per request (the Zones view shows both):
   * one entry, made when the zone starts and gone when it stops, so neither outlives the other.
   */
  const stats = new Map<string, ZoneStats>();
  const newStats = (zone: string, zoneId: string, upstream: string): ZoneStats => ({
    counters: { zone, zoneId, upstream, requests: 0, blocked: 0, challenged: 0, forwarded: 0, upstreamErrors: 0, unavailable: 0 },
    timings: wafTimings(),
  });
  for (const r of routes) stats.set(r.zoneId, newStats(r.zoneName, r.zoneId, r.upstream.href));
  const httpAgent = new HttpAgent({ keepAlive: true, maxFreeSockets: 256 });
  const httpsAgent = new HttpsAgent({ keepAlive: true, maxFreeSockets: 256 });
  /** Upgraded connections: no longer the HTTP server's, so close() ends them itself. */
  const tunnels = new Set<Duplex>();

  // How long this thread's turns hold other requests, and how long the WAF itself takes per
  // request (fields and rules, from the request's head to the verdict): GET /.rulesmith/proxy reports both.
  const loopDelay = monitorEventLoopDelay({ resolution: LOOP_SAMPLE_MS });
  loopDelay.enable();
  const timings = wafTimings();
  const onRequest = (req: IncomingMessage, res: ServerResponse) => {
    // Pipelined behind a body the connection's last answer was decided on: not served (lingering).
    if (lingering.has(req.socket)) return void req.resume();
    handle(req, res).catch((e) => {
      internalError(e);
      const rayId = newRayId();
      if (!res.headersSent) sendPage(res, zoneErrorPage(rayId, '(proxy)', 'internal error; see the log'), rayId);
      else res.destroy();
    });
  };
  // requireHostHeader off: a request without Host gets the proxy's own logged 400 (requestHead.ts), not node's bare one.
  const server = createServer({ requireHostHeader: false, headersTimeout: headerTimeout, requestTimeout: 0, connectionsCheckingInterval: Math.max(50, Math.min(headerTimeout / 4, 30_000)), keepAliveTimeout: 5_000 }, onRequest);
  // An expectation other than 100-continue: handled as any request, so requestHead.ts answers it 417 (as node would, RFC 9110 §10.1.1) and it is logged, in HTTP/1.0 too, which node lets through.
  server.on('checkExpectation', onRequest);
  // Every header, however many (the 16 KB head limit still bounds them): node's default keeps the
  // first 2000, so the rules would not see the rest, and the h2c re-parse (`reparse`), which
  // rebuilds the head from them, would drop a Content-Length past them and forward the body
  // as a request of its own.
  server.maxHeadersCount = 0;
  // More connections than this are closed as they come (node's 'drop'): the first logged, then
  // one line per DROP_LOG_MS with the count of the others.
  const maxConnections = options.maxConnections ?? DEFAULT_MAX_CONNECTIONS;
  server.maxConnections = maxConnections;
  const dropLog = new LogThrottle(log, { burst: 1, windowMs: DROP_LOG_MS, summary: (n, s) => `proxy: ${n} more connection(s) closed in the last ${s} s: ${maxConnections} are open already (--proxy-max-connections)` });
  server.on('drop', () => dropLog.line(`proxy: 1 connection(s) closed: ${maxConnections} are open already (--proxy-max-connections)`));
  // Lines a client can repeat at will, each kind bounded (FLOOD_BURST per FLOOD_WINDOW_MS, then a count).
  const refusedLog = new LogThrottle(log, { burst: FLOOD_BURST, windowMs: FLOOD_WINDOW_MS, summary: (n, s) => `proxy: ${n} more refused request heads in the last ${s} s` });
  const unknownHostLog = new LogThrottle(log, { burst: FLOOD_BURST, windowMs: FLOOD_WINDOW_MS, summary: (n, s) => `proxy: ${n} more requests for hosts under no proxied zone (530) in the last ${s} s` });
  // A bug a client can trigger at will would otherwise log a stack per request.
  const internalErrorLog = new LogThrottle(log, { burst: FLOOD_BURST, windowMs: FLOOD_WINDOW_MS, summary: (n, s) => `proxy: ${n} more internal errors in the last ${s} s (the first of each window are logged with their stack)` });
  const internalError = (e: unknown) => internalErrorLog.line(`proxy: internal error: ${(e as Error).stack ?? e}`);
  /** A request refused before a zone is picked: logged through refusedLog, counted by status. */
  const refused = (status: number, line: string) => refusedLog.line(line, String(status));
  /** A request for a host under no proxied zone (530). */
  const unknownHost = (req: IncomingMessage, rayId: string, status: number) => unknownHostLog.line(`proxy: ${rayId} ${req.method} ${req.url} ${status} (Host ${JSON.stringify(hostName(req.headers.host))} is under no proxied zone)`);
  /** Sockets the HTTP server left to us (an upgrade, CONNECT) that have our error listener: once each, however often they come back. */
  const guarded = new WeakSet<Duplex>();
  const watchErrors = (socket: Duplex) => {
    if (guarded.has(socket)) return;
    guarded.add(socket);
    socket.on('error', () => socket.destroy());
  };
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    watchErrors(socket);
    if (endAfterPending(socket)) return;
    upgrade(req, socket, head).catch((e) => {
      internalError(e);
      socket.destroy();
    });
  });
  server.on('connect', (req: IncomingMessage, socket: Duplex) => {
    watchErrors(socket);
    if (endAfterPending(socket)) return;
    const rayId = newRayId();
    refused(405, `proxy: ${rayId} CONNECT ${req.url} 405 (a reverse proxy does not tunnel)`);
    writeRawPage(socket, connectPage(), rayId);
  });
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    if (err.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    // The body of the request being handled is malformed or cut short (a bad chunk size, the
    // client's end mid-body): that request's own 400 if none of its answer went out yet, else
    // the connection is cut. Either way the socket goes, and with it (the response's `close`)
    // the request's upstream request and its wait for the body.
    const unfinished = unfinishedRequest(socket);
    if (unfinished) {
      log(`proxy: 400 Bad Request (${err.code ?? err.message} in the body of ${unfinished.req.method} ${unfinished.req.url})`);
      if (unfinished.headersSent) socket.destroy();
      else {
        refusedBodies.set(unfinished, 400);
        socket.end(plainAnswer(400, 'Bad Request', 'the request body is malformed or cut short', rayIds.get(unfinished)), () => socket.destroy());
      }
      return;
    }
    // Behind a pipelined request still being answered, an error answer now would be read as that one's.
    if (endAfterPending(socket)) return;
    // HPE_PAUSED_H2_UPGRADE: HTTP/2's connection preface (`PRI * HTTP/2.0`), a client speaking HTTP/2 with prior knowledge.
    const [status, text, why] =
      err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'Request Timeout', `the request headers did not arrive within ${headerTimeout / 1000} s`]
        : err.code === 'HPE_HEADER_OVERFLOW'
          ? [431, 'Request Header Fields Too Large', 'the request line and headers are larger than 16 KB']
          : err.code === 'HPE_PAUSED_H2_UPGRADE'
            ? [505, 'HTTP Version Not Supported', 'HTTP/2 on an HTTP/1.x listener']
            : [400, 'Bad Request', 'malformed HTTP request'];
    refused(status, `proxy: ${status} ${text} (${err.code ?? err.message})`);
    socket.end(plainAnswer(status, text, why));
  });

  interface Verdict {
    readonly route: ZoneRoute;
    readonly rayId: string;
    readonly time: number;
    readonly edge: EdgeFields;
    /** Whom a clearance, a challenge's pass and its solve are bound to: the address the rules see, and the User-Agent. */
    readonly visitor: Visitor;
    readonly evaluation: LiveEvaluation;
    readonly bodyTruncated: boolean;
    /** The proxy's own answer, or undefined to forward. */
    readonly page?: Page;
    readonly kind: 'forward' | 'block' | 'challenge';
    /** Rate-limit counts that wait for the request to go on (countOnward). */
    readonly pending?: PendingCounts;
  }

  /** The counts an evaluation left for later (evaluateLive.ts `afterResponse`), not made yet. */
  interface PendingCounts {
    /** The request as evaluated, kept only while a counting expression is still to match it. */
    job?: LiveJob;
    sent: readonly ResponseCount[];
    answer: readonly ResponseCount[];
  }

  /** Evaluates a request whose first body bytes are `body` (binary string): forward it, or the page to answer. */
  async function evaluateRequest(req: IncomingMessage, route: ZoneRoute, rayId: string, body: string, bodySize: number, limit: number): Promise<Verdict> {
    const started = performance.now();
    const time = now();
    const edge = edgeFields({ remoteAddress: req.socket.remoteAddress ?? '', headers: req.headers, trust, ...(options.fieldsMapping ? { mapping: options.fieldsMapping } : {}), now: time, rayId });
    // The client as edgeFields found it: the clearance is bound to the address the rules see.
    const visitor = visitorOf(req, edge.clientIp);
    const job: LiveJob = {
      zoneId: route.zoneId,
      live: { method: req.method ?? 'GET', target: req.url ?? '/', httpVersion: req.httpVersion, rawHeaders: req.rawHeaders, body, bodySize, edge: edge.edge },
      bodyLimit: limit,
      cleared: challengeMode === 'pass' || clearance.valid(route.zoneId, visitor, req.headers.cookie),
    };
    const evaluation = pool ? await pool.evaluate(job) : onThisThread.evaluate(job);
    // In ns (the histograms take whole numbers ≥ 1).
    const ns = Math.max(1, Math.round((performance.now() - started) * 1e6));
    const workNs = Math.max(1, Math.round(evaluation.workMs * 1e6));
    timings.record(ns, workNs);
    // Absent when the zone stopped while its request was evaluated.
    stats.get(route.zoneId)?.timings.record(ns, workNs);
    const d = evaluation.decision;
    const bodyTruncated = bodySize > limit;
    const after = evaluation.afterResponse;
    const pending: PendingCounts | undefined = after && {
      job: evaluation.countsReadRequest ? job : undefined,
      sent: after.filter((c) => c.at === 'sent'),
      answer: after.filter((c) => c.at === 'answer'),
    };
    // Written out, not `{ ...base, kind }`: see "No spread-first objects per request" in docs/proxy.md.
    const verdict = (kind: Verdict['kind'], page?: Page): Verdict => ({ route, rayId, time, edge, visitor, evaluation, bodyTruncated, pending, kind, page });
    if (d.action === 'allow-through') return verdict('forward');
    const rule = d.description || d.ref || d.ruleId;
    if (d.action === 'block' || challengeMode === 'block') {
      // A rate limit's block says when the client may come back, as the edge's does.
      const retry: Record<string, string> = evaluation.retryAfter === undefined ? {} : { 'retry-after': String(evaluation.retryAfter) };
      if (d.action === 'block' && d.response) {
        const r = d.response;
        return verdict('block', { status: r.status_code ?? 403, headers: Object.assign({ 'content-type': r.content_type || 'text/html', 'cache-control': 'no-store' }, retry), body: r.content ?? '' });
      }
      const page = blockPage({ rayId, zone: route.zoneName, clientIp: edge.clientIp, ...(rule ? { rule } : {}), status: d.phase === 'http_ratelimit' ? 429 : 403 });
      return verdict('block', { status: page.status, headers: Object.assign({}, page.headers, retry), body: page.body });
    }
    const pass = clearance.passToken(route.zoneId, visitor, rayId);
    return verdict('challenge', challengePage(rayId, pass, route.zoneName, d.action, safeReturn(req.url), CHALLENGE_PATH));
  }

  /**
   * `v` went to the origin (`upRes`: and its answer's head came): the rate-limit counts that
   * waited for that (evaluateLive.ts `countAfterResponse`), each once; an answer before the
   * request was all sent makes both kinds. A count that fails is logged, never the request's end.
   */
  function countOnward(v: Verdict, upRes?: IncomingMessage): void {
    const p = v.pending;
    if (!p || (p.sent.length === 0 && (!upRes || p.answer.length === 0))) return;
    const counts = upRes ? [...p.sent, ...p.answer] : p.sent;
    const job = p.job;
    const head = upRes ? { status: upRes.statusCode ?? 0, rawHeaders: upRes.rawHeaders } : undefined;
    p.sent = [];
    if (upRes) p.answer = [];
    if (p.answer.length === 0) p.job = undefined;
    try {
      if (pool) pool.countAfterResponse(v.evaluation, job, counts, head);
      else onThisThread.count(job, counts, head);
    } catch (e) {
      log(`proxy: ${v.rayId} ${v.route.zoneName}: rate-limit counts after the request went on failed: ${(e as Error).message}`);
    }
  }

  /** What the client got, for the log line: the rule's action, or `block (managed_challenge, --challenge block)` for a challenge answered with the block page, as the counters and the event say. */
  function clientGot(v: Verdict): string {
    const action = v.evaluation.decision.action;
    return v.kind === 'block' && action !== 'block' ? `block (${action}, --challenge block)` : action;
  }

  /**
   * Counts the request and hands it to the sink with the status the client got: once per
   * request. `sent`: whether a request let through went to the app (one whose client left
   * while it was evaluated did not: counted in `requests` only).
   */
  function record(v: Verdict, req: IncomingMessage, status: number, sent = true): void {
    const c = stats.get(v.route.zoneId)?.counters;
    if (c) {
      c.requests++;
      if (v.kind === 'block') c.blocked++;
      else if (v.kind === 'challenge') c.challenged++;
      else if (status === 502 || status === 504) c.upstreamErrors++;
      else if (sent) c.forwarded++;
    }
    const event = options.sink ? evaluatedRequest(v, req, status) : undefined;
    if (event) toSink(event);
    // The interstitial's button posts the ray id back: its solve is recorded and a rate limit's counter reset then (passChallenge).
    if (v.kind === 'challenge') keepChallenge(v, event);
  }

  /** What the press of a served challenge's button needs, kept under its ray id (when there is anything to do). */
  function keepChallenge(v: Verdict, served: EvaluatedRequest | undefined): void {
    const solve = served && solveOf(served);
    const rateLimitCounter = v.evaluation.rateLimitCounter;
    if (!solve && rateLimitCounter === undefined) return;
    const { visitor } = v;
    const bytes = (solve ? solveBytes(solve) : 512 + visitor.userAgent.length) + (rateLimitCounter?.length ?? 0);
    pendingChallenges.remember(v.rayId, { zoneId: v.route.zoneId, visitor, ...(solve ? { solve } : {}), ...(rateLimitCounter !== undefined ? { rateLimitCounter } : {}) }, bytes);
  }

  /** What the sink gets for a request the proxy evaluated and answered with `status`. */
  function evaluatedRequest(v: Verdict, req: IncomingMessage, status: number): EvaluatedRequest {
    const target = req.url ?? '/';
    const q = target.indexOf('?');
    return {
      rayId: v.rayId,
      time: v.time,
      zoneId: v.route.zoneId,
      zoneName: v.route.zoneName,
      clientIp: v.edge.clientIp,
      ...(v.edge.country !== undefined ? { country: v.edge.country } : {}),
      ...(v.edge.asn !== undefined ? { asn: v.edge.asn } : {}),
      method: req.method ?? 'GET',
      host: hostName(req.headers.host),
      path: q < 0 ? target : target.slice(0, q),
      query: q < 0 ? '' : target.slice(q + 1),
      userAgent: userAgentOf(req),
      httpVersion: `HTTP/${req.httpVersion}`,
      responseStatus: status,
      evaluation: v.evaluation,
      defaultedFields: v.evaluation.defaultedFields ? [...new Set([...v.edge.defaulted, ...v.evaluation.defaultedFields])] : v.edge.defaulted,
      bodyTruncated: v.bodyTruncated,
      // So that the events name what the client got: a challenge passed or turned into a block (events/fromEvaluation.ts).
      challengeMode,
    };
  }

  function toSink(event: EvaluatedRequest): void {
    try {
      options.sink?.record(event);
    } catch (e) {
      log(`proxy: the evaluated-request sink failed: ${(e as Error).message}`);
    }
  }

  /** Whether the store's failure has been logged (its message names files: once, in the log, never on a page). */
  let storeFailureLogged = false;

  /** The store's failure once a sync of its log has failed (the proxy then fails closed), else undefined. */
  function storeFailed(): Error | undefined {
    const e = options.store.unavailable;
    if (e && !storeFailureLogged) {
      storeFailureLogged = true;
      log(`proxy: every request is answered 503 until rulesmith serve is restarted: ${e.message}`);
    }
    return e;
  }

  /** A 503 the proxy answers without evaluating or forwarding: counted for the zone (if any) and logged. */
  function unavailable(req: IncomingMessage, route: ZoneRoute | Page, rayId: string, why: string): void {
    const c = 'zoneId' in route ? stats.get(route.zoneId)?.counters : undefined;
    if (c) {
      c.requests++;
      c.unavailable++;
    }
    log(`proxy: ${rayId} ${'zoneId' in route ? route.zoneName : '(no zone)'} ${req.method} ${req.url} 503 (${why})`);
  }

  /** What a request that could not be evaluated gets: 503 when it may pass later (EvaluationUnavailable), else the zone's 500. */
  function notEvaluated(req: IncomingMessage, route: ZoneRoute, rayId: string, e: unknown): Page {
    if (!(e instanceof EvaluationUnavailable)) return zoneErrorPage(rayId, route.zoneName, (e as Error).message);
    unavailable(req, route, rayId, e.message);
    return overloadedPage(rayId, route.zoneName, e.message);
  }

  /** The 400 for a path that would climb out of the app's path prefix (forwarding.ts `climbsOutOfPrefix`), logged. */
  function climbingPage(req: IncomingMessage, route: ZoneRoute, rayId: string): Page {
    refused(400, `proxy: ${rayId} ${req.method} ${req.url} 400 (an encoded .. segment would take the path out of ${route.upstream.pathname}, the path of the app's URL)`);
    return { status: 400, headers: { 'content-type': 'text/plain; charset=utf-8' }, body: '400 Bad Request: the path has a .. segment encoded so that the app may decode it, and the app behind this proxy is served under a path prefix it would leave (send the path with its dot segments resolved)\n' };
  }

  function zoneOf(req: IncomingMessage, rayId: string): ZoneRoute | Page {
    const host = hostName(req.headers.host);
    return routeFor(routes, host) ?? unknownZonePage(rayId, host, routes.map((r) => r.zoneName));
  }

  /**
   * The page for a head the proxy refuses (requestHead.ts: two Hosts, a malformed one, none in
   * HTTP/1.1, a transfer coding it cannot forward, an HTTP/2.0 request line, an unmet Expect); else the request's target
   * made the one the proxy evaluates and forwards (forwarding.ts `requestTarget`: an
   * absolute-form target as origin-form), so that the control and challenge paths, the rules,
   * the app and the event all read the same path; or the 400 page for a target that names a
   * host other than Host's, or is in no form the proxy forwards.
   */
  function checkHead(req: IncomingMessage, rayId: string): Page | undefined {
    const refusal = refusedHead(req);
    if (refusal) {
      refused(refusal.status, `proxy: ${rayId} ${req.method} ${req.url} ${refusal.status} (${refusal.reason})`);
      return refusedPage(refusal);
    }
    const target = requestTarget(req.url, req.headers.host);
    if (target !== undefined) {
      req.url = target;
      return undefined;
    }
    refused(400, `proxy: ${rayId} ${req.method} ${req.url} 400 (the target names another host than Host, or is in no form the proxy forwards)`);
    return badTargetPage();
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    reparsed.delete(req.socket);
    const rayId = newRayId();
    rayIds.set(res, rayId);
    const badTarget = checkHead(req, rayId);
    if (badTarget) {
      req.resume();
      res.setHeader('connection', 'close');
      sendPage(res, badTarget, rayId);
      return;
    }
    const failed = storeFailed();
    if (failed) {
      req.resume();
      if ((req.url ?? '').startsWith(CONTROL_PATH)) {
        // As the API answers (service.ts), but before any credential is checked: the store's
        // own message names its files, so that stays in the log.
        const text = JSON.stringify({ success: false, errors: [{ code: CODES.storeUnavailable, message: `${STORE_FAILED} (the reason is in its log)` }], messages: [], result: null });
        res.writeHead(503, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text), 'cache-control': 'no-store' });
        res.end(text);
        return;
      }
      unavailable(req, zoneOf(req, rayId), rayId, STORE_FAILED);
      sendPage(res, storeFailedPage(rayId), rayId);
      return;
    }
    if ((req.url ?? '').startsWith(CONTROL_PATH)) return control(req, res);
    const route = zoneOf(req, rayId);
    if (!('zoneId' in route)) {
      req.resume();
      unknownHost(req, rayId, route.status);
      sendPage(res, route, rayId);
      return;
    }
    if (climbsOutOfPrefix(route.upstream, req.url)) {
      req.resume();
      res.setHeader('connection', 'close');
      sendPage(res, climbingPage(req, route, rayId), rayId);
      return;
    }
    // Only the interstitial's button posts here; with --challenge block or pass there is none, and the path is the app's.
    if (challengeMode === 'interstitial' && req.method === 'POST' && (req.url ?? '').split('?')[0] === CHALLENGE_PATH) return passChallenge(req, res, route, rayId);
    const limit = inspectLimit(route.zoneId);
    const head = await readHead(req, limit, headerTimeout);
    if (head === 'aborted') return;
    if (head === 'stalled') return bodyStalled(req, res, rayId);
    const buffered = Buffer.concat(head.chunks);
    const declared = Number(req.headers['content-length']);
    // Without Content-Length (chunked) the whole size is unknown when the rules run: past the
    // limit it is limit + 1, whatever pieces the client sent it in (body.ts `undeclaredSize`).
    let bodySize = Number.isSafeInteger(declared) && declared >= 0 ? declared : undeclaredSize(buffered.length, limit);
    let inspected: Buffer = buffered.subarray(0, limit);
    // A compressed body: the rules read it decoded, as the app will (bodyCoding.ts); the app gets it as sent.
    const coding = req.headers['content-encoding'];
    const decoded = coding === undefined ? undefined : await decodeBody(coding, inspected, head.ended && buffered.length <= limit, limit);
    if (decoded && 'refused' in decoded) {
      drainBeforeAnswer(req, res);
      refused(decoded.refused.status, `proxy: ${rayId} ${route.zoneName} ${req.method} ${req.url} ${decoded.refused.status} (${decoded.refused.reason})`);
      sendPage(res, refusedPage(decoded.refused), rayId);
      return;
    }
    // The size is never less than what came: a size rule must not be dodged by a header (a gzip padded with a long name or comment decodes to little).
    if (decoded) [inspected, bodySize] = [decoded.body, Math.max(decoded.size, bodySize)];
    let verdict: Verdict;
    try {
      verdict = await evaluateRequest(req, route, rayId, inspected.toString('latin1'), bodySize, limit);
    } catch (e) {
      drainBeforeAnswer(req, res);
      sendPage(res, notEvaluated(req, route, rayId, e), rayId);
      return;
    }
    // The store failed while the request was evaluated: what it was evaluated under is no longer vouched for.
    if (storeFailed()) {
      drainBeforeAnswer(req, res);
      unavailable(req, route, rayId, STORE_FAILED);
      sendPage(res, storeFailedPage(rayId), rayId);
      return;
    }
    if (verdict.page) {
      drainBeforeAnswer(req, res);
      sendPage(res, verdict.page, rayId);
      log(`proxy: ${rayId} ${route.zoneName} ${req.method} ${req.url} ${verdict.page.status} ${clientGot(verdict)}${verdict.evaluation.decision.ruleId ? ` rule ${verdict.evaluation.decision.ruleId}` : ''}`);
      record(verdict, req, verdict.page.status);
      return;
    }
    forward(req, res, verdict, buffered, head.ended);
  }

  /** A client that stopped sending its body for `headerTimeout` while the proxy read it: 408, and the connection closes. */
  function bodyStalled(req: IncomingMessage, res: ServerResponse, rayId: string): void {
    log(`proxy: 408 Request Timeout (the body of ${req.method} ${req.url} stalled for ${headerTimeout / 1000} s)`);
    res.setHeader('connection', 'close');
    sendPage(res, { status: 408, headers: { 'content-type': 'text/plain; charset=utf-8' }, body: `408 Request Timeout: the request body stalled for ${headerTimeout / 1000} s\n` }, rayId);
  }

  /** What the app is told about the client and the hop (forwarding.ts `forwardedHeaders`). */
  function forwarding(req: IncomingMessage, v: Verdict): Forwarding {
    return { clientIp: v.edge.clientIp, peer: req.socket.remoteAddress ?? '', country: v.edge.country, rayId: v.rayId, proto: ownProto(req), port: req.socket.localPort ?? 0, trusted: v.edge.trusted };
  }

  function upstreamRequest(req: IncomingMessage, v: Verdict) {
    const headers: OutgoingHttpHeaders = forwardedHeaders(req.headers, forwarding(req, v), req.headersDistinct);
    const up = v.route.upstream;
    const make = up.protocol === 'https:' ? httpsRequest : httpRequest;
    return make(upstreamOptions(up, req.method, upstreamPath(up, req.url), headers, up.protocol === 'https:' ? httpsAgent : httpAgent));
  }

  /** The status of a request whose connection went before its answer: CLIENT_CLOSED, unless the proxy refused its body (`refusedBodies`). */
  function leftWith(res: ServerResponse): number {
    return refusedBodies.get(res) ?? CLIENT_CLOSED;
  }

  function forward(req: IncomingMessage, res: ServerResponse, v: Verdict, buffered: Buffer, ended: boolean): void {
    // The client left while its request was evaluated: no one to forward it for.
    if (res.destroyed || req.socket.destroyed) return record(v, req, leftWith(res), false);
    const route = v.route;
    const upstream = route.upstream.href;
    let upReq = upstreamRequest(req, v);
    let attempts = 1;
    /** Set once the client's answer is decided: the app's, or the proxy's error page. */
    let answered = false;
    /** Set once the end of the app's answer is accounted for (the client left, a relay failed, the body or the answer stalled), so a cut-off is logged only when it is the app's doing. */
    const ending = { explained: false };
    /**
     * The client left before the answer while a rate limit waits for the answer's head (a
     * score, a response field): the request to the origin goes on until that head comes, is
     * counted, and is dropped; the upstream timeout still bounds it. Else leaving before the
     * answer would keep a request out of a complexity-based limit.
     */
    let countAfterClientLeft = false;
    /** Set once the app sent an interim answer (103, 102): it had the request and began answering, so the request is not sent again, and the client, which may have that answer, does not get it twice. */
    let interimFromApp = false;
    const fail = (page: Page) => {
      if (res.headersSent) {
        req.resume();
        res.destroy();
      } else {
        drainBeforeAnswer(req, res);
        res.setHeader('connection', 'close');
        sendPage(res, page, v.rayId);
      }
      log(`proxy: ${v.rayId} ${route.zoneName} ${req.method} ${req.url} ${page.status} upstream ${upstream}`);
      record(v, req, page.status);
    };
    const giveUp = (page: Page) => {
      if (countAfterClientLeft) {
        countAfterClientLeft = false;
        clock.stop();
        upReq.destroy();
        return;
      }
      if (answered) return;
      answered = true;
      clock.stop();
      upReq.destroy();
      fail(page);
    };
    const clock = appClock(upstreamTimeout, () => giveUp(gatewayTimeoutPage(v.rayId, upstream, upstreamTimeout / 1000)));
    /** A throw while relaying the app's answer is logged and ends this request (502, or a cut connection), never the process. */
    const guard =
      <A extends unknown[]>(what: string, fn: (...a: A) => void) =>
      (...a: A): void => {
        try {
          fn(...a);
        } catch (e) {
          log(`proxy: ${v.rayId} ${route.zoneName} ${req.method} ${req.url}: ${what}: ${(e as Error).message}`);
          answered = true;
          ending.explained = true;
          clock.stop();
          upReq.destroy();
          // Once the app's status went out (and was recorded), all that is left is to cut the connection.
          if (res.headersSent) return void res.destroy();
          try {
            fail(badGatewayPage(v.rayId, upstream, `its answer could not be relayed (${(e as Error).message})`));
          } catch {
            res.destroy();
          }
        }
      };
    /** The listeners of a request to the app (the first, or one sent again on another connection). */
    const wire = (r: ClientRequest): void => {
      r.on(
        'error',
        guard('upstream error', (e: NodeJS.ErrnoException) => {
          // A kept-alive connection that the app closed as this request went out on it (reset before
          // any answer): sent again on another connection, as nginx does. Only a request whose whole
          // body the proxy holds can be, at most UPSTREAM_ATTEMPTS times in all, and, as nginx by
          // default, not a POST, PATCH or LOCK: the app may have acted on it before the reset.
          if (!answered && !interimFromApp && ended && r.reusedSocket && attempts < UPSTREAM_ATTEMPTS && !NON_IDEMPOTENT.has(req.method ?? '') && (e.code === 'ECONNRESET' || e.code === 'EPIPE')) {
            attempts++;
            upReq = upstreamRequest(req, v);
            wire(upReq);
            sendHeldBody(upReq, buffered, clock);
            return;
          }
          // Once the app has answered, its response stream reports what matters: an app that answers
          // early (413 mid-upload) and closes ends the request with an error here, and its answer stands.
          giveUp(badGatewayPage(v.rayId, upstream, e.code ? `${e.code} (${e.message})` : e.message));
        }),
      );
      r.on(
        'response',
        guard('relaying the answer', (upRes: IncomingMessage) => {
          clock.stop();
          if (answered) {
            if (countAfterClientLeft) countOnward(v, upRes);
            countAfterClientLeft = false;
            upRes.destroy();
            return;
          }
          answered = true;
          countOnward(v, upRes);
          relay(req, res, v, r, upRes, guard, ending);
        }),
      );
      r.on('information', (info: InformationEvent) => {
        interimFromApp = true;
        if (answered) return;
        const fault = relayInterim(req, res, info);
        if (fault) log(`proxy: ${v.rayId} ${route.zoneName} ${req.method} ${req.url}: the app's ${info.statusCode} was not passed on: ${fault}`);
      });
      // A 101 to a request that asked for no upgrade.
      r.on('upgrade', (_upRes: IncomingMessage, upSocket: Duplex) => {
        upSocket.destroy();
        giveUp(badGatewayPage(v.rayId, upstream, 'it switched protocols unasked (101)'));
      });
      r.on('socket', (s: Duplex & { connecting?: boolean }) => {
        if (!s.connecting) return void clock.done('connect');
        // An https app is connected once its TLS handshake is done: one that takes the TCP connection and never answers the ClientHello is the app's time.
        s.once('encrypted' in s ? 'secureConnect' : 'connect', () => clock.done('connect'));
      });
      r.on('finish', () => {
        clock.wait('answer');
        countOnward(v);
      });
    };
    wire(upReq);
    // A client that goes away takes its upstream request with it; gone before any answer, it is recorded as such.
    res.on('close', () => {
      if (res.writableFinished) return;
      ending.explained = true;
      // Only once the whole body went to the origin (a body still held back would never end).
      countAfterClientLeft = !answered && upReq.writableEnded && (v.pending?.answer.length ?? 0) > 0;
      if (!countAfterClientLeft) {
        clock.stop();
        upReq.destroy();
      }
      if (answered) return;
      answered = true;
      record(v, req, leftWith(res));
    });
    clock.wait('connect');
    // The rest of the body stops coming: 408 if the app has not answered yet, else the connection is cut.
    const stalled = () => {
      ending.explained = true;
      if (answered) return void res.destroy();
      answered = true;
      clock.stop();
      upReq.destroy();
      req.resume();
      bodyStalled(req, res, v.rayId);
      record(v, req, 408);
    };
    sendBody(req, upReq, buffered, ended, clock, headerTimeout, stalled);
  }

  /** The app's answer to the client: status, headers minus hop-by-hop ones, body and trailers. */
  function relay(req: IncomingMessage, res: ServerResponse, v: Verdict, upReq: ClientRequest, upRes: IncomingMessage, guard: Guard, ending: { explained: boolean }): void {
    const bad = badStatusLine(upRes);
    if (bad) throw new Error(`an invalid status line (${bad})`);
    const status = upRes.statusCode!;
    const headers = withRayId(responseHeaders(upRes, carriesTrailers(req, res, status, upRes.headers)), v.rayId);
    // The client's upload is unfinished (the app answered early): the connection cannot be reused.
    if (!req.complete) {
      headers.push('connection', 'close');
      lingerOnClose(req, upReq);
    }
    res.writeHead(status, upRes.statusMessage, headers);
    record(v, req, status);
    // The app's connection ended before its answer did (an error, or a close without one): the
    // client's is cut too (its answer is short), and the log says so, unless already accounted for.
    const cutOff = () => {
      if (!ending.explained && !upRes.complete) log(`proxy: ${v.rayId} ${v.route.zoneName} ${req.method} ${req.url}: the answer from ${v.route.upstream.href} was cut off before its end; connection cut`);
      ending.explained = true;
      res.destroy();
    };
    upRes.on('error', cutOff);
    upRes.on('close', () => {
      if (!upRes.complete) cutOff();
    });
    upRes.pipe(res, { end: false });
    // An app that stops sending its answer midway would hold the client for ever: both connections go.
    watchAnswerIdle(upRes, upstreamTimeout, () => {
      ending.explained = true;
      log(`proxy: ${v.rayId} ${v.route.zoneName} ${req.method} ${req.url}: the answer from ${v.route.upstream.href} stalled for ${upstreamTimeout / 1000} s; connection cut`);
      upRes.destroy();
      res.destroy();
    });
    upRes.on(
      'end',
      guard('relaying the trailers', () => {
        if (upRes.rawTrailers.length > 0) res.addTrailers(pairs(upRes.rawTrailers));
        res.end();
      }),
    );
  }

  function startZone(r: ProxyRoute): ZoneCounters | { error: string } {
    const resolved = resolveRoute(options.store, r);
    if ('error' in resolved) return resolved;
    const at = routes.findIndex((x) => x.zoneId === resolved.zoneId);
    if (at >= 0) routes.splice(at, 1);
    routes.push(resolved);
    const s = stats.get(resolved.zoneId);
    // A zone started again keeps its counters and timings; only its upstream changes.
    if (s) s.counters = Object.assign({}, s.counters, { upstream: resolved.upstream.href });
    else stats.set(resolved.zoneId, newStats(resolved.zoneName, resolved.zoneId, resolved.upstream.href));
    setImmediate(() => {
      try {
        if (pool) pool.warm(resolved.zoneId);
        else zones.get(resolved.zoneId);
      } catch {
        // compiled on its first request instead, with the error page if it still fails
      }
    });
    return { ...stats.get(resolved.zoneId)!.counters };
  }

  function stopZone(zone: string): boolean {
    const at = routes.findIndex((x) => x.zoneId === zone || x.zoneName === zone.toLowerCase());
    if (at < 0) return false;
    stats.delete(routes[at]!.zoneId);
    zones.drop(routes[at]!.zoneId);
    pool?.forget(routes[at]!.zoneId);
    routes.splice(at, 1);
    return true;
  }

  /**
   * The control API (for the extension's Zones view), on the proxy's own listener:
   * `GET /.rulesmith/proxy` lists the proxied zones with their counters and the WAF's time per request
   * (`evaluation`: p50, p99 in ms, 0 before a request), and the process's
   * memory (rss, heapUsed, heapTotal, external: buffers and SQLite's WebAssembly memory) and rate-limit counters (the memory benchmark samples them),
   * the event loop's delay (p50, p99, max in ms: how long a request that arrived could wait for this thread) and the
   * time the WAF took per request (`evaluation`: requests evaluated, p50, p99, max in ms) since the start or the last
   * `GET /.rulesmith/proxy?reset=timings` (the proxy benchmark reads both for its fixed-rate runs);
   * `PUT /.rulesmith/proxy/zones/{zone}` with `{"upstream": URL}` starts one;
   * `DELETE …/zones/{zone}` stops it. Each needs a token the rules service accepts; the
   * list holds the zones the token may see, and starting or stopping a zone needs the
   * right to write its WAF rulesets (ZONE_WAF_GROUPS).
   */
  async function control(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const json = (status: number, body: unknown) => {
      const text = JSON.stringify(body);
      res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text), 'cache-control': 'no-store' });
      res.end(text);
    };
    const head = await readHead(req, 4096, headerTimeout);
    if (head === 'aborted') return;
    if (head === 'stalled') return bodyStalled(req, res, newRayId());
    if (!head.ended) {
      req.resume();
      return json(413, { success: false, errors: [{ message: 'the body is larger than 4 KB' }] });
    }
    let principal: Principal;
    try {
      principal = authenticate(options.store, req.headers);
    } catch (e) {
      if (!(e instanceof ApiError)) throw e;
      return json(e.status, { success: false, errors: e.errors });
    }
    /**
     * The zone named in the path, when the token may change its WAF (as for its rulesets).
     * A zone it may not use and a zone that does not exist get the same 403, so a token
     * cannot learn which zones exist (as in the API, service/scopeAccess.ts requireZone); only
     * credentials that reach every zone are told that one is missing.
     */
    const writableZone = (zone: string): { zoneId: string } | { status: number; message: string; code?: number } => {
      const row = findZone(options.store, zone);
      if (row && allowed(principal, { accountId: row.account_id, zoneId: row.id }, ZONE_WAF_GROUPS, 'Write')) return { zoneId: row.id };
      if (!row && seesEverything(principal, 'zone')) return { status: 404, message: `no zone "${zone}" in the database` };
      return { status: 403, message: 'Authentication error', code: CODES.authenticationError };
    };
    const mayView = (zoneId: string): boolean => {
      const row = zoneRow(options.store, zoneId);
      return row !== undefined && visible(principal, { accountId: row.account_id, zoneId });
    };
    const [path = '', query = ''] = (req.url ?? '').split('?');
    const address = server.address();
    const port = address && typeof address === 'object' ? address.port : 0;
    // Each histogram holds ns; reported in ms (an empty one reports 0).
    const ms = (ns: number) => Math.round(ns / 1e4) / 100;
    const tail = (h: { percentile(p: number): number }) => ({ p50: ms(h.percentile(50)), p99: ms(h.percentile(99)) });
    const view = (s: ZoneStats) => Object.assign({}, s.counters, { url: `http://${s.counters.zone}.localhost:${port}/`, evaluation: Object.assign(tail(s.timings.whole), { evaluating: tail(s.timings.evaluating) }) });
    if (req.method === 'GET' && (path === CONTROL_PATH || path === `${CONTROL_PATH}/`)) {
      const m = process.memoryUsage();
      // The process's memory, and the rate-limit counters held: the workers' (shared memory) and this thread's (no workers, or while one is down).
      // Node's monitor records the time between its ticks, the sampling interval included: what a turn held is the rest.
      const late = (ns: number) => ms(Math.max(0, ns - LOOP_SAMPLE_MS * 1e6));
      const eventLoopDelay = { p50: late(loopDelay.percentile(50)), p99: late(loopDelay.percentile(99)), max: late(loopDelay.max) };
      const evaluation = { requests: timings.whole.count, ...tail(timings.whole), max: ms(timings.whole.max), evaluating: Object.assign(tail(timings.evaluating), { max: ms(timings.evaluating.max) }) };
      const zones = [...stats.values()].filter((z) => mayView(z.counters.zoneId)).map(view);
      if (new URLSearchParams(query).get('reset') === 'timings') {
        loopDelay.reset();
        timings.reset();
        for (const s of stats.values()) s.timings.reset();
      }
      const status = { rss: m.rss, heapUsed: m.heapUsed, heapTotal: m.heapTotal, external: m.external, evaluationWorkers: pool?.size ?? 0, rateLimitCounters: limiter.size + (pool?.rateLimitCounters ?? 0), eventLoopDelay, evaluation };
      return json(200, { success: true, result: { zones, process: status } });
    }
    const m = new RegExp(`^${CONTROL_PATH}/zones/([^/]+)$`).exec(path);
    if (m && req.method === 'PUT') {
      let upstream: unknown;
      try {
        upstream = (JSON.parse(Buffer.concat(head.chunks).toString('utf8')) as { upstream?: unknown }).upstream;
      } catch {
        upstream = undefined;
      }
      const zone = writableZone(decodeURIComponent(m[1]!));
      if ('status' in zone) return json(zone.status, { success: false, errors: [zone.code ? { code: zone.code, message: zone.message } : { message: zone.message }] });
      if (typeof upstream !== 'string') return json(400, { success: false, errors: [{ message: 'expected a JSON body {"upstream": "http://127.0.0.1:3000"}' }] });
      const started = startZone({ zone: zone.zoneId, upstream });
      if ('error' in started) return json(400, { success: false, errors: [{ message: started.error.replace(/^--proxy /, '') }] });
      log(`proxy: started ${started.zone} → ${started.upstream}`);
      return json(200, { success: true, result: view(stats.get(started.zoneId)!) });
    }
    if (m && req.method === 'DELETE') {
      const zone = decodeURIComponent(m[1]!);
      const found = writableZone(zone);
      if ('status' in found) return json(found.status, { success: false, errors: [found.code ? { code: found.code, message: found.message } : { message: found.message }] });
      if (!stopZone(found.zoneId)) return json(404, { success: false, errors: [{ message: `the zone ${zone} is not proxied` }] });
      log(`proxy: stopped ${zone}`);
      return json(200, { success: true, result: { zone } });
    }
    return json(404, { success: false, errors: [{ message: `no such proxy control route: ${req.method} ${path}` }] });
  }

  /** Who a clearance cookie and a challenge's pass are for (clearance.ts): the client as the rules see it (`ip`: edgeFields found it already), and its User-Agent. */
  function visitorOf(req: IncomingMessage, ip = clientAddress({ remoteAddress: req.socket.remoteAddress ?? '', headers: req.headers, trust })): Visitor {
    return { ip, userAgent: userAgentOf(req) };
  }

  /**
   * The interstitial's button: with a valid `pass` for the form's `ray`, this zone and visitor
   * (clearance.ts `passToken`), the clearance cookie and back to the page; without one, 403
   * and no cookie. When this proxy kept the challenge for its solve, the solve is recorded
   * once: one event for the rule that challenged, with the challenged request's ray id and
   * fields, this press's time and status (303); and when a rate-limit rule challenged, that
   * rule's counter for the visitor's characteristics is reset (reference §2.3: "Passing the
   * challenge resets the counter").
   */
  async function passChallenge(req: IncomingMessage, res: ServerResponse, route: ZoneRoute, rayId: string): Promise<void> {
    const head = await readHead(req, 4096, headerTimeout);
    if (head === 'aborted') return;
    if (head === 'stalled') return bodyStalled(req, res, rayId);
    if (!head.ended) req.resume();
    const form = new URLSearchParams(Buffer.concat(head.chunks).subarray(0, 4096).toString('utf8'));
    const visitor = visitorOf(req);
    const ray = form.get('ray');
    const returnTo = safeReturn(form.get('return'));
    // Only a pass the proxy signed for this ray id, zone and visitor (the interstitial's form) clears: not another site's form.
    if (!ray || !clearance.passValid(route.zoneId, visitor, ray, form.get('pass'))) {
      log(`proxy: ${rayId} ${route.zoneName} POST ${CHALLENGE_PATH} 403 (no valid pass for ${ray ? `ray ${JSON.stringify(ray.slice(0, 40))}` : 'no ray'} and this visitor: expired, another's, or not from the interstitial; no clearance)`);
      sendPage(res, challengeNotPassedPage(rayId, route.zoneName, returnTo), rayId);
      return;
    }
    // The solve and the reset once; pressed again (a double click, a replayed POST), the cookie again.
    const kept = pendingChallenges.take(ray, (k) => k.zoneId === route.zoneId && k.visitor.ip === visitor.ip && k.visitor.userAgent === visitor.userAgent);
    if (kept?.solve) toSink(Object.assign({}, kept.solve, { time: now(), responseStatus: 303 }));
    // Passing a rate limit's challenge resets its counter (docs/proxy.md, Rate limiting): where it is counted, this thread or a worker.
    if (kept?.rateLimitCounter !== undefined) {
      limiter.reset(kept.rateLimitCounter);
      pool?.resetRateLimit(kept.rateLimitCounter);
    }
    const https = forwardedProto(req.headers, peerTrusted({ remoteAddress: req.socket.remoteAddress ?? '', trust }), ownProto(req)) === 'https';
    res.writeHead(303, { location: returnTo, 'set-cookie': clearance.cookie(route.zoneId, visitor, https), 'cache-control': 'no-store', 'content-length': 0, 'cf-ray': rayId });
    res.end();
  }

  async function upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    if (!isWebSocket(req)) return reparse(req, socket, head);
    const rayId = newRayId();
    const badTarget = checkHead(req, rayId);
    if (badTarget) {
      writeRawPage(socket, badTarget, rayId);
      return;
    }
    const route = zoneOf(req, rayId);
    if (storeFailed()) {
      unavailable(req, route, rayId, STORE_FAILED);
      writeRawPage(socket, storeFailedPage(rayId), rayId);
      return;
    }
    if (!('zoneId' in route)) {
      unknownHost(req, rayId, route.status);
      writeRawPage(socket, route, rayId);
      return;
    }
    if (climbsOutOfPrefix(route.upstream, req.url)) {
      writeRawPage(socket, climbingPage(req, route, rayId), rayId);
      return;
    }
    let verdict: Verdict;
    try {
      verdict = await evaluateRequest(req, route, rayId, '', 0, inspectLimit(route.zoneId));
    } catch (e) {
      writeRawPage(socket, notEvaluated(req, route, rayId, e), rayId);
      return;
    }
    if (storeFailed()) {
      unavailable(req, route, rayId, STORE_FAILED);
      writeRawPage(socket, storeFailedPage(rayId), rayId);
      return;
    }
    if (verdict.page) {
      writeRawPage(socket, verdict.page, rayId);
      record(verdict, req, verdict.page.status);
      return;
    }
    // The client left while its request was evaluated.
    if (socket.destroyed) return record(verdict, req, CLIENT_CLOSED, false);
    tunnel(req, socket, head, verdict);
  }

  /**
   * Sockets handed back to the HTTP server by `reparse`, until their next request arrives as an
   * ordinary one: one that came back as an upgrade again would loop.
   */
  const reparsed = new WeakSet<Duplex>();

  /**
   * An upgrade the proxy does not tunnel (h2c, or a WebSocket handshake with a body): node's HTTP
   * server gets the request again without the `upgrade` token in Connection, as an ordinary request,
   * so its body is evaluated and forwarded, and the app's answer framed as any other; the app never
   * sees the Upgrade (hop-by-hop) and answers over HTTP/1.1, as an app without h2c would.
   */
  function reparse(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    if (reparsed.has(socket)) {
      socket.destroy();
      return;
    }
    reparsed.add(socket);
    socket.unshift(Buffer.concat([Buffer.from(headWithoutUpgrade(req), 'latin1'), head]));
    server.emit('connection', socket);
  }

  /** A WebSocket handshake to the app, and once it switches protocols, bytes piped both ways. */
  function tunnel(req: IncomingMessage, socket: Duplex, head: Buffer, v: Verdict): void {
    const up = v.route.upstream;
    const headers = forwardedHeaders(req.headers, forwarding(req, v), req.headersDistinct);
    headers.connection = 'Upgrade';
    headers.upgrade = req.headers.upgrade ?? 'websocket';
    const upReq = (up.protocol === 'https:' ? httpsRequest : httpRequest)(upstreamOptions(up, req.method, upstreamPath(up, req.url), headers));
    let answered = false;
    const timer = setTimeout(() => upReq.destroy(new Error('timeout')), upstreamTimeout);
    // A client that leaves (or half-closes) before the app switches protocols takes its upstream
    // request with it. The socket is read meanwhile, or its end would go unnoticed; what comes
    // early (at most 64 KiB, then it waits) goes to the app after the switch.
    const early: Buffer[] = [head];
    let earlyBytes = head.length;
    const onEarly = (d: Buffer) => {
      early.push(d);
      earlyBytes += d.length;
      if (earlyBytes > 65_536) socket.pause();
    };
    const left = () => {
      clearTimeout(timer);
      upReq.destroy();
      socket.destroy();
      if (answered) return;
      answered = true;
      record(v, req, CLIENT_CLOSED);
    };
    const waited = () => {
      socket.off('data', onEarly);
      socket.off('end', left);
      socket.off('close', left);
      socket.pause();
    };
    socket.on('data', onEarly);
    socket.once('end', left);
    socket.once('close', left);
    /** A throw while relaying the app's answer is logged and closes the connection, never the process. */
    const guard =
      <A extends unknown[]>(fn: (...a: A) => void) =>
      (...a: A): void => {
        try {
          fn(...a);
        } catch (e) {
          log(`proxy: ${v.rayId} ${v.route.zoneName} upgrade ${req.url}: ${(e as Error).message}`);
          upReq.destroy();
          socket.destroy();
        }
      };
    upReq.on(
      'error',
      guard((e: NodeJS.ErrnoException) => {
        clearTimeout(timer);
        waited();
        if (answered) return;
        answered = true;
        const page = e.message === 'timeout' ? gatewayTimeoutPage(v.rayId, up.href, upstreamTimeout / 1000) : badGatewayPage(v.rayId, up.href, e.code ?? e.message);
        writeRawPage(socket, page, v.rayId);
        record(v, req, page.status);
      }),
    );
    upReq.on(
      'response',
      guard((upRes: IncomingMessage) => {
        clearTimeout(timer);
        waited();
        if (answered) return void upRes.destroy();
        answered = true;
        countOnward(v, upRes);
        const status = refuse(upRes, socket, v.rayId, up.href);
        record(v, req, status);
      }),
    );
    upReq.on(
      'upgrade',
      guard((upRes: IncomingMessage, upSocket: Duplex, upHead: Buffer) => {
        clearTimeout(timer);
        waited();
        if (answered || socket.destroyed) return void upSocket.destroy();
        answered = true;
        countOnward(v, upRes);
        record(v, req, upRes.statusCode ?? 101);
        // Latin-1: node read the app's head byte for byte into these strings, and this gives the client the same bytes.
        socket.write(`HTTP/1.1 101 ${upRes.statusMessage || 'Switching Protocols'}\r\n${headerLines(pairs(withRayId([...upRes.rawHeaders], v.rayId)))}\r\n`, 'latin1');
        if (upHead.length > 0) socket.write(upHead);
        if (earlyBytes > 0) upSocket.write(Buffer.concat(early));
        pipeTunnel(socket, upSocket);
      }),
    );
    upReq.on('finish', () => countOnward(v));
    upReq.end();
  }

  /** Both sockets piped into each other; either closing closes the other; close() ends them. */
  function pipeTunnel(socket: Duplex, upSocket: Duplex): void {
    upSocket.on('error', () => socket.destroy());
    socket.on('error', () => upSocket.destroy());
    socket.on('close', () => upSocket.destroy());
    upSocket.on('close', () => socket.destroy());
    tunnels.add(socket);
    tunnels.add(upSocket);
    socket.on('close', () => tunnels.delete(socket));
    upSocket.on('close', () => tunnels.delete(upSocket));
    upSocket.pipe(socket);
    socket.pipe(upSocket);
  }

  /**
   * The app answered a WebSocket handshake without switching protocols: its answer, framed for
   * this connection (its Content-Length kept, else delimited by the close), which then closes. A
   * status line that cannot be written is a 502. The status the client got.
   */
  function refuse(upRes: IncomingMessage, socket: Duplex, rayId: string, upstream: string): number {
    const bad = badStatusLine(upRes);
    if (bad) {
      upRes.destroy();
      writeRawPage(socket, badGatewayPage(rayId, upstream, `an invalid status line (${bad})`), rayId);
      return 502;
    }
    const headers = withRayId(responseHeaders(upRes, false), rayId);
    socket.write(`HTTP/1.1 ${upRes.statusCode} ${upRes.statusMessage ?? ''}\r\n${headerLines(pairs(headers))}connection: close\r\n\r\n`, 'latin1');
    upRes.on('error', () => socket.destroy());
    // A client that leaves takes the app's answer with it (the pipe alone would only pause it, and the idle watch with it).
    socket.once('close', () => upRes.destroy());
    upRes.pipe(socket);
    watchAnswerIdle(upRes, upstreamTimeout, () => {
      upRes.destroy();
      socket.destroy();
    });
    // Read (and drop) what the client still sends, so that its end is seen; once the answer is sent, the socket is freed within the linger's bound.
    socket.resume();
    socket.once('finish', () => lingerThenClose(socket));
    return upRes.statusCode!;
  }

  // Compile the proxied zones now, so the first request does not wait for it.
  setImmediate(() => {
    for (const r of routes) {
      try {
        if (pool) pool.warm(r.zoneId);
        else zones.get(r.zoneId);
      } catch (e) {
        log(`proxy: zone ${r.zoneName} cannot be compiled yet: ${(e as Error).message}`);
      }
    }
  });

  return {
    server,
    rateLimiter: limiter,
    url() {
      const a = server.address();
      if (a === null || typeof a === 'string') throw new Error('the proxy is not listening');
      return `http://${a.family === 'IPv6' ? `[${a.address}]` : a.address}:${a.port}`;
    },
    zoneUrl(zone: string) {
      const a = server.address();
      if (a === null || typeof a === 'string') throw new Error('the proxy is not listening');
      return `http://${zone}.localhost:${a.port}/`;
    },
    counters: () => [...stats.values()].map((s) => ({ ...s.counters })),
    startZone,
    stopZone,
    close() {
      loopDelay.disable();
      // The counts of lines left out so far, now rather than at their window's end.
      dropLog.close();
      refusedLog.close();
      unknownHostLog.close();
      internalErrorLog.close();
      void pool?.close();
      httpAgent.destroy();
      httpsAgent.destroy();
      for (const t of tunnels) t.destroy();
      return new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}

/** The protocol of the client's connection to the proxy itself. */
function ownProto(req: IncomingMessage): 'http' | 'https' {
  return req.socket && 'encrypted' in req.socket ? 'https' : 'http';
}

/** How often the proxy's event-loop delay is sampled (ms). */
const LOOP_SAMPLE_MS = 1;

/** The evaluation workers asked for, or undefined to evaluate on this thread. */
function evaluationPool(options: ProxyOptions, log: (line: string) => void, onThisThread: OnThisThread): EvaluationPool | undefined {
  const n = options.workers ?? 0;
  if (n <= 0) return undefined;
  if (options.now) throw new ProxyConfigError('evaluation workers count rate limits on the real clock: a proxy with a fake clock (now) evaluates on its own thread (workers: 0)');
  const file = options.workerFile ?? proxyWorkerFile();
  if (!file) {
    log('proxy: the evaluation worker is not built (server/out/proxyWorker.js: run `npm run build`); evaluating on the proxy thread');
    return undefined;
  }
  const limits = { queue: options.evaluationQueue, deadlineMs: options.evaluationDeadlineMs, compileDeadlineMs: options.compileDeadlineMs };
  return new EvaluationPool(file, n, options.store, options.maxRateLimitCounters ?? DEFAULT_MAX_COUNTERS, log, onThisThread, limits);
}

/**
 * A request to the upstream `up` (no `agent`: node's default). For an https upstream,
 * `servername` is its host name (none for an address): the TLS name sent (SNI) and the one its
 * certificate is checked against. Without it node takes them from the Host header, which is the client's.
 */
function upstreamOptions(up: URL, method: string | undefined, path: string, headers: OutgoingHttpHeaders, agent?: HttpAgent): RequestOptions {
  const hostname = up.hostname.replace(/^\[|\]$/g, '');
  const https = up.protocol === 'https:';
  const servername = !https ? undefined : isIP(hostname) ? '' : hostname;
  return { protocol: up.protocol, hostname, port: up.port || (https ? 443 : 80), servername, method, path, headers, agent };
}

/**
 * Connections whose last answer is decided while the client still sends a body: node's
 * parser goes on reading them, and a request pipelined behind that body is not served
 * (RFC 9112 §9.6: nothing after a `close`); the app never sees it.
 */
const lingering = new WeakSet<object>();

/**
 * Before the proxy answers a request itself: the body it has not read is drained, and while
 * the client is still sending it the answer is the connection's last and the connection
 * lingers (lingerOnClose), so the answer is not lost to a reset.
 */
function drainBeforeAnswer(req: IncomingMessage, res: ServerResponse): void {
  if (!req.complete) {
    res.setHeader('connection', 'close');
    lingerOnClose(req);
  }
  req.resume();
}

/**
 * Closes `socket`, when node's server closes it after the answer, as nginx's lingering close
 * does: the answer's end is sent (FIN), and what the client still sends is read and dropped
 * until it ends its side, LINGER_IDLE_MS pass without a byte, or LINGER_MS in all. Closed at
 * once, the unread upload would make the kernel reset the connection, and a client that
 * writes its whole body before it reads would lose the answer.
 */
function lingerOnClose(req: IncomingMessage, upReq?: ClientRequest): void {
  lingering.add(req.socket);
  req.socket.destroySoon = function lingering(this: Socket) {
    if (this.writable) this.end();
    // The rest of the upload goes nowhere now (the app or the proxy has answered): read, and
    // dropped. A request to the app goes, its body unfinished: that connection must not carry another.
    req.removeAllListeners('data');
    req.resume();
    if (upReq && !upReq.writableFinished) upReq.destroy();
    lingerThenClose(this);
  };
}

/** A plain-text answer the proxy writes itself on the socket, and then the connection closes. */
function plainAnswer(status: number, text: string, why: string, rayId?: string): string {
  const body = `${status} ${text}: ${why}\n`;
  const ray = rayId ? `cf-ray: ${rayId}\r\n` : '';
  return `HTTP/1.1 ${status} ${text}\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\n${ray}connection: close\r\n\r\n${body}`;
}

/** An answer's headers with the request's ray id as `CF-Ray` (the edge sets it on every answer, in place of any the app sent). */
function withRayId(headers: string[], rayId: string): string[] {
  return [...withoutHeader(headers, 'cf-ray'), 'cf-ray', rayId];
}

/** A head the proxy refuses (requestHead.ts), or a body it cannot decode (bodyCoding.ts), with its reason. */
function refusedPage(r: { readonly status: number; readonly reason: string }): Page {
  return { status: r.status, headers: { 'content-type': 'text/plain; charset=utf-8' }, body: `${r.status} ${STATUS_CODES[r.status]}: ${r.reason}\n` };
}

/** A request target the proxy does not forward (forwarding.ts `requestTarget`). */
function badTargetPage(): Page {
  return { status: 400, headers: { 'content-type': 'text/plain; charset=utf-8' }, body: '400 Bad Request: the request target names a host other than the Host header\'s, or is not a path (absolute-form targets must name the Host)\n' };
}

/**
 * What a challenge served with the interstitial keeps for its solve: its event's request
 * (evaluatedRequest), its evaluation cut to the challenging rule's entry, `logged`, and
 * marked as solved interactively (events/fromEvaluation.ts names it `managed_challenge_interactive_solved`
 * and the like). Nothing else of the evaluation is kept: no other rule's event, no scores (an
 * event of the previous WAF keeps that WAF's own, which its entry carries).
 */
function solveOf(served: EvaluatedRequest): EvaluatedRequest | undefined {
  const entry = served.evaluation.trace.find((e) => e.outcome === 'terminated');
  if (!entry) return undefined;
  const solved: TraceEntry = Object.assign({}, entry, { outcome: 'logged' as const });
  return Object.assign({}, served, { evaluation: { decision: { action: 'allow-through' as const }, trace: [solved], scores: {}, logs: [], skippedProducts: {} }, challengeSolved: 'interactive' as const });
}

/** A kept solve's estimated size: its strings (a path, query or User-Agent may be 16 KB) and the rest at a round 512 bytes. */
function solveBytes(s: EvaluatedRequest): number {
  const e = s.evaluation.trace[0];
  return 512 + s.zoneName.length + s.host.length + s.path.length + s.query.length + s.userAgent.length + (e?.description?.length ?? 0) + (e?.ref?.length ?? 0) + 16 * s.defaultedFields.length;
}

function newRayId(): string {
  return `${randomHex(8)}-LCL`;
}

function sendPage(res: ServerResponse, page: Page, rayId: string): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  // The reason phrase given, so that an invalid one left by a failed relay is not reused.
  res.writeHead(page.status, STATUS_CODES[page.status] ?? 'unknown', Object.assign({}, page.headers, { 'cf-ray': rayId, 'content-length': Buffer.byteLength(page.body) }));
  res.end(page.body);
}

/** The answer to CONNECT: this is a reverse proxy, it tunnels nothing. */
function connectPage(): Page {
  return { status: 405, headers: { 'content-type': 'text/plain; charset=utf-8', allow: 'GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS' }, body: '405 Method Not Allowed: this is a reverse proxy (the WAF proxy in front of an app); it does not tunnel CONNECT\n' };
}

type Guard = <A extends unknown[]>(what: string, fn: (...a: A) => void) => (...a: A) => void;
