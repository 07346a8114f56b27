/**
 * The local rules service: an HTTP server speaking the v4 rules API over a Store.
 * `createService` wires the routes; `listen` starts it. The HTTP layer is thin: routes
 * decode bodies and call the core (language, rulesets, managed, migration, engine).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { ApiError, CODES, envelopeChunks, errorEnvelope, randomHex, type Reply } from './api';
import { authenticate, type Principal } from './auth';
import { decodeUtf8, parseJson } from './body';
import { Router, type Ctx } from './router';
import { StoreUnavailable, type Store } from './store';
import { registerRoutes } from './routes/index';
import { TraceRunner } from './traceRunner';
import { RuleChecker, ruleCheckWorkerFile } from './ruleChecker';
import { RulesetWriteLimiter } from './rateLimit';
import { WorkerCancelled } from '../timedWorker';
import type { TracedRequestSink } from '../evaluatedRequest';
import type { EventReader } from './events/query';
import { nextTurn, type RouteServices } from './routeServices';

export type LegacyMode = 'on' | 'sunset';

export interface ServiceOptions {
  readonly store: Store;
  /** `sunset`: the firewall rules, filters and previous-WAF families answer 410 Gone. */
  readonly legacy?: LegacyMode;
  /** One line per request (method, path, status, time); never headers or bodies. */
  readonly log?: (line: string) => void;
  /** Largest request body accepted, in bytes (default 8 MiB). */
  readonly maxBodyBytes?: number;
  /** false: the rules a write brings are checked on the service's thread, not in a worker (tests of that path). */
  readonly ruleCheckWorker?: boolean;
  /** Time limit of one trace, in ms (default TRACE_TIMEOUT_MS). */
  readonly traceTimeoutMs?: number;
  /** Bytes of a traced request's body that become field values (requests/body.ts; default 128 KiB). */
  readonly bodyLimit?: number;
  /** Writes per second (and at once) to one ruleset before 429 (rateLimit.ts); absent: no limit. */
  readonly rulesetWriteRate?: number;
  /** The limiter itself (tests give one with their own clock); wins over rulesetWriteRate. */
  readonly writeLimiter?: RulesetWriteLimiter;
  /** The security events (events/writer.ts): traces' evaluations go there, GraphQL reads them; absent: traces leave none, GraphQL finds none. */
  readonly events?: TracedRequestSink & EventReader;
}

/** The running service: what the routes reach (routeServices.ts), and what only the HTTP layer reads. */
export interface Service extends RouteServices {
  readonly legacy: LegacyMode;
  /** Throttles updates to one ruleset (`--ruleset-write-rate`), when on. */
  readonly writeLimiter?: RulesetWriteLimiter;
}

export const API_PREFIX = '/client/v4';

export interface RunningService {
  readonly server: Server;
  readonly service: Service;
  /** `http://127.0.0.1:<port>/client/v4` once listening. */
  url(): string;
  close(): Promise<void>;
}

export function createService(options: ServiceOptions): RunningService {
  const router = new Router();
  registerRoutes(router);
  const service: Service = {
    store: options.store,
    legacy: options.legacy ?? 'on',
    traces: new TraceRunner(options.traceTimeoutMs),
    ruleChecks: new RuleChecker(options.ruleCheckWorker === false ? undefined : ruleCheckWorkerFile()),
    nextTurn,
    ...(options.bodyLimit !== undefined ? { bodyLimit: options.bodyLimit } : {}),
    ...(options.events ? { events: options.events } : {}),
    ...(options.writeLimiter ? { writeLimiter: options.writeLimiter } : options.rulesetWriteRate !== undefined ? { writeLimiter: new RulesetWriteLimiter(options.rulesetWriteRate) } : {}),
  };
  // Requests handled together commit together (store.ts): one fsync for a burst of writes.
  options.store.groupCommit();
  const maxBody = options.maxBodyBytes ?? 8 * 1024 * 1024;
  const log = options.log ?? (() => {});
  // The rate limit's policy goes on every answer of the API while it is on, errors included.
  const policy = service.writeLimiter?.policyHeader() ?? {};
  const server = createServer((req, res) => {
    const started = process.hrtime.bigint();
    let gone = false;
    // Headers every answer to this request carries (the rate limit's, when it is on).
    const extra: Record<string, string> = { ...policy };
    handle(req, res, router, service, maxBody, extra)
      .catch((e) => {
        if (e instanceof StoreUnavailable) {
          log(e.message);
          send(res, 503, errorEnvelope([{ code: CODES.storeUnavailable, message: e.message }]), extra);
          return;
        }
        if (e instanceof ClientGone || e instanceof WorkerCancelled) {
          // The client closed the connection before its body was complete, or before a
          // trace finished (which was then stopped): nothing to answer.
          gone = true;
          res.destroy();
          return;
        }
        // A bug, not bad input: answer 500 and keep serving.
        log(`internal error: ${(e as Error).stack ?? e}`);
        send(res, 500, errorEnvelope([{ code: 10001, message: 'Internal server error; see the rules service log' }]), extra);
      })
      .finally(() => {
        const ms = Number(process.hrtime.bigint() - started) / 1e6;
        log(`${req.method} ${req.url} ${gone ? 'aborted by the client' : res.statusCode} ${ms.toFixed(1)}ms`);
      });
  });
  // A client that sends its request and closes its side (`socket.end(request)`, `nc -N`)
  // still gets its answer. Node's default aborts a request when the client's FIN arrives
  // before the answer, and an answer may wait a few milliseconds for the commit's fsync
  // (store.ts durable()), so such clients got nothing when a sync was in flight.
  (server as Server & { httpAllowHalfOpen: boolean }).httpAllowHalfOpen = true;
  // Keep-alive sockets must not hold shutdown up.
  server.keepAliveTimeout = 5_000;
  // What Node's HTTP parser refuses before a handler runs (headers or URL over its 16 KB
  // limit, a malformed request line) still gets the API's JSON envelope.
  server.on('clientError', (err: NodeJS.ErrnoException, socket) => {
    // As Node's own handler: answer only if nothing was sent on this socket yet.
    const pending = (socket as { _httpMessage?: { _headerSent?: boolean } })._httpMessage;
    if (err.code === 'ECONNRESET' || !socket.writable || pending?._headerSent) {
      socket.destroy();
      return;
    }
    const tooLarge = err.code === 'HPE_HEADER_OVERFLOW';
    const status = tooLarge ? 431 : 400;
    const text = JSON.stringify(
      errorEnvelope([
        {
          code: CODES.badRequest,
          message: tooLarge ? 'The request line and headers are larger than 16 KB; shorten the URL (long query parameters) or the headers' : 'Malformed HTTP request',
        },
      ]),
    );
    log(`${tooLarge ? 'request headers too large' : 'malformed request'} ${status}`);
    const policyLines = Object.entries(policy).map(([k, v]) => `${k}: ${v}\r\n`).join('');
    socket.end(
      `HTTP/1.1 ${status} ${tooLarge ? 'Request Header Fields Too Large' : 'Bad Request'}\r\n${policyLines}content-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(text)}\r\nconnection: close\r\n\r\n${text}`,
    );
  });
  return {
    server,
    service,
    url() {
      const a = server.address();
      if (a === null || typeof a === 'string') throw new Error('the rules service is not listening');
      const host = a.family === 'IPv6' ? `[${a.address}]` : a.address;
      return `http://${host}:${a.port}${API_PREFIX}`;
    },
    close() {
      const closed = new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return Promise.all([closed, service.traces.close(), service.ruleChecks.close()]).then(() => undefined);
    },
  };
}

/** Answers one request; `extra` holds the headers its answer carries (the route may add the Ratelimit ones). */
async function handle(req: IncomingMessage, res: ServerResponse, router: Router, service: Service, maxBody: number, extra: Record<string, string>): Promise<void> {
  /** The allowance this request's write was charged to (see the catch below). */
  let charged: string | undefined;
  try {
    const url = requestUrl(req.url);
    if (!url.pathname.startsWith(`${API_PREFIX}/`)) throw ApiError.of(404, CODES.noRoute, `No route for that URI; the API is under ${API_PREFIX}`);
    const path = url.pathname.slice(API_PREFIX.length);
    const method = req.method ?? 'GET';
    const { route, params } = router.match(method, path);
    // Credentials first, from the headers alone: a client without valid ones must not make
    // the service read (and hold up to maxBody of) its body. Its answer closes the connection
    // when a body may follow: the body is never read, so the socket cannot serve another
    // request after it (and Node would otherwise read it all, to discard it).
    // Undefined only on a public route, which checks credentials itself (router.ts).
    let principal = undefined as unknown as Principal;
    let refused = false;
    try {
      const who = authenticate(service.store, req.headers);
      if (!route.options.public) principal = who;
    } catch (e) {
      if (!(e instanceof ApiError)) throw e;
      if (bodyMayFollow(req)) extra['connection'] = 'close';
      if (!route.options.public) throw e;
      // A public route answers bad credentials itself (GraphQL in its own shape; the token
      // verification reads no body): it runs, but gets no body either.
      refused = true;
    }
    const bytes = refused ? Buffer.alloc(0) : await readBody(req, maxBody);
    if (route.options.legacy && service.legacy === 'sunset') {
      throw ApiError.of(
        410,
        CODES.gone,
        `The ${route.options.legacy} API is no longer available (sunset on 2025-06-15). Use the Rulesets API: custom rules in the http_request_firewall_custom phase, managed rules in http_request_firewall_managed.`,
      );
    }
    if (bytes.length > 0) checkContentType(req.headers['content-type']);
    checkRepeatedParameters(url.searchParams);
    const body = parseJson(decodeUtf8(bytes));
    // A client that disconnects before its answer cancels what is still running for it (a
    // trace). Made when a route asks for it: a listener per request was a cost on every write.
    let gone: AbortController | undefined;
    const ctx: Ctx = {
      method,
      path,
      params,
      query: url.searchParams,
      body,
      principal,
      service,
      headers: req.headers,
      // A method, not a getter: see Ctx.signal.
      signal: () => (gone ??= disconnection(req, res)).signal,
      chargeRulesetWrite: (key) => {
        chargeRulesetWrite(service.writeLimiter, key, extra);
        charged = key;
      },
    };
    const reply: Reply = await route.handler(ctx);
    // Answer only once what this request wrote (or read from others' writes) is durable.
    await service.store.durable(ctx.readScope);
    const status = reply.status ?? 200;
    if (status === 204) {
      res.writeHead(204, { ...commonHeaders(), ...extra });
      res.end();
    } else sendText(res, status, reply.raw !== undefined ? JSON.stringify(reply.raw) : envelopeChunks(reply), extra);
  } catch (e) {
    if (!(e instanceof ApiError)) throw e;
    Object.assign(extra, e.headers);
    // Refused for the service's own reasons, having written nothing (the rule checker hung on
    // it; its ruleset was staging another write, a 429 once charged): the retry it asks for
    // must not meet the limiter's 429.
    if (charged !== undefined && service.writeLimiter && e.errors.some((x) => x.code === CODES.ruleCheckTimeout || x.code === CODES.rateLimited)) Object.assign(extra, service.writeLimiter.giveBack(charged));
    await service.store.durable();
    send(res, e.status, errorEnvelope(e.errors, e.messages), extra);
  }
}

/** Ctx.chargeRulesetWrite: takes a write from `key`'s allowance, or throws the 429. */
function chargeRulesetWrite(limiter: RulesetWriteLimiter | undefined, key: string, extra: Record<string, string>): void {
  if (!limiter) return;
  const taken = limiter.take(key);
  Object.assign(extra, taken.headers);
  if (!taken.throttled) return;
  const retryAfter = taken.throttled.retryAfter;
  throw ApiError.rateLimited(`Too many updates to this ruleset: at most ${limiter.describe()}.`, retryAfter);
}

/** Aborted when the client of `req` disconnects before `res` is finished. */
function disconnection(req: IncomingMessage, res: ServerResponse): AbortController {
  const g = new AbortController();
  const socket = req.socket;
  if (socket.destroyed || socket.readableEnded) g.abort();
  else {
    res.on('close', () => {
      if (!res.writableFinished) g.abort();
    });
    // Sockets are half-open (see createServer): a client that closed its side is gone
    // as far as long work goes, so its trace stops as when the socket closed at once.
    const abort = () => g.abort();
    socket.once('end', abort);
    res.once('finish', () => socket.off('end', abort));
  }
  return g;
}

/** The request target as a URL; one that cannot be parsed (`GET http://[`) is a routing error, not a crash. */
function requestUrl(target: string | undefined): URL {
  try {
    return new URL(target ?? '/', 'http://localhost');
  } catch {
    throw ApiError.of(400, CODES.noRoute, 'No route for that URI');
  }
}

/**
 * A body must be sent as JSON: the hosted API answers any other media type with 6003 and
 * this error chain (multipart/form-data is for uploads, which these routes do not take:
 * such a body then fails as invalid JSON). No Content-Type at all is taken as JSON.
 */
function checkContentType(header: string | undefined): void {
  if (header === undefined) return;
  const type = header.split(';')[0]!.trim().toLowerCase();
  if (type === 'application/json' || type.endsWith('+json') || type === 'multipart/form-data') return;
  throw new ApiError(400, [
    {
      code: CODES.invalidRequestHeaders,
      message: 'Invalid request headers',
      error_chain: [{ code: CODES.invalidContentType, message: 'Invalid Content-Type header, valid values are application/json,multipart/form-data' }],
    },
  ]);
}

/** Query parameters that may repeat: the ids of a bulk delete (`?id=a&id=b`). */
const REPEATABLE = new Set(['id']);

/**
 * A single-valued parameter given twice with different values (`dry_run=true&dry_run=false`)
 * is refused: which one counts would be a guess, and a wrong guess writes or does not.
 */
function checkRepeatedParameters(query: URLSearchParams): void {
  for (const name of new Set(query.keys())) {
    if (REPEATABLE.has(name)) continue;
    const values = new Set(query.getAll(name));
    if (values.size > 1) {
      throw ApiError.of(400, CODES.repeatedParameter, `the query parameter ${name} is given ${query.getAll(name).length} times with different values (${[...values].map((v) => `'${v}'`).join(', ')}); give it once`);
    }
  }
}

function commonHeaders(): Record<string, string> {
  return { 'cf-ray': `${randomHex(8)}-LCL` };
}

function send(res: ServerResponse, status: number, body: unknown, extra: Record<string, string> = {}): void {
  sendText(res, status, JSON.stringify(body), extra);
}

/** Answers `body` (its chunks are written in one go: node:http corks the socket until the end). */
function sendText(res: ServerResponse, status: number, body: string | readonly (string | Buffer)[], extra: Record<string, string> = {}): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  const chunks = typeof body === 'string' ? [body] : body;
  let length = 0;
  for (const c of chunks) length += Buffer.byteLength(c);
  res.writeHead(status, { ...commonHeaders(), ...extra, 'content-type': 'application/json; charset=utf-8', 'content-length': length });
  for (const c of chunks) res.write(c);
  res.end();
}

/** Whether the request declares a body (a Content-Length above 0, or a Transfer-Encoding). */
function bodyMayFollow(req: IncomingMessage): boolean {
  return req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;
}

function readBody(req: IncomingMessage, max: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length'] ?? 0);
    if (declared > max) {
      req.resume();
      reject(tooLarge(max));
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let failed = false;
    req.on('data', (c: Buffer) => {
      if (failed) return;
      size += c.length;
      if (size > max) {
        failed = true;
        reject(tooLarge(max));
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => {
      if (!failed) resolve(Buffer.concat(chunks));
    });
    req.on('error', () => reject(new ClientGone()));
  });
}

/** The request's connection closed before its body was read. */
class ClientGone extends Error {}

function tooLarge(max: number): ApiError {
  return ApiError.of(413, CODES.bodyTooLarge, `The request body is larger than ${max} bytes; split the change into smaller requests`);
}
