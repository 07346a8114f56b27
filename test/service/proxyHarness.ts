/**
 * The WAF proxy's tests over real sockets: an upstream app (node:http) with a few routes,
 * the proxy in front of it, and a raw HTTP client that sets the Host header (the zone).
 */
import assert from 'node:assert/strict';
import { createServer, request, type IncomingHttpHeaders, type Server } from 'node:http';
import { connect, createServer as createNetServer, type Socket } from 'node:net';
import { Readable } from 'node:stream';
import { after, before, beforeEach } from 'node:test';
import type { EvaluatedRequest, EvaluatedRequestSink } from '../../server/src/evaluatedRequest';
import { proxyWorkerFile, type OnThisThread } from '../../server/src/proxy/evaluationPool';
import { createProxy, type ProxyOptions, type RunningProxy } from '../../server/src/proxy/proxy';
import { DEMO_ACCOUNT } from '../../server/src/service/seed';
import type { Store } from '../../server/src/service/store';
import { startService, type TestService } from './harness';

/** The zone most proxy test files put their app behind (a file may name another). */
export const ZONE_ID = '0123456789abcdef0123456789abcdef';
export const ZONE = 'app.test';

/** A zone of the demo account, Enterprise, already migrated (its managed rules are the rulesets'): what the proxy tests put their app behind. */
export function addProxiedZone(store: Store, id: string, name: string): void {
  store.run('INSERT INTO zones (id, account_id, name, plan, status, created_on) VALUES (?, ?, ?, ?, ?, ?)', [id, DEMO_ACCOUNT.id, name, 'enterprise', 'active', new Date().toISOString()]);
  store.run('INSERT INTO waf_migration (zone_id, state) VALUES (?, ?)', [id, JSON.stringify({ migration_state: 'complete' })]);
}

/** Options for a proxy of the file's zone: `upstream` is the app's URL (the file's upstream by default). */
export type ProxyExtra = Partial<ProxyOptions> & { upstream?: string };

export interface ProxyTestFileOptions {
  /** The zone the file proxies: ZONE_ID and ZONE by default. */
  zoneId?: string;
  zone?: string;
  /** Start the upstream app (`file.upstream`; default true); what it saw is emptied before each test. */
  upstream?: boolean;
  /** Fail at once unless the evaluation worker is built (server/out/proxyWorker.js). */
  needsWorker?: boolean;
  /** Rules deployed to the zone's custom firewall and rate-limit entry points before the tests. */
  custom?: unknown[];
  ratelimit?: unknown[];
  /** What the file's proxies take (besides the store and the zone's route) unless a call says otherwise. */
  proxy?: Partial<ProxyOptions>;
  /** The file's proxies record what they evaluated into `file.events` (their `sink`). */
  events?: boolean;
  /** Start one proxy with those options for the whole file (`file.proxy`), after the rules are deployed; closed first. */
  fileProxy?: boolean;
  /**
   * Runs last in the file's `before` hook. (A file's own top-level `before` is no substitute
   * where it needs what this one set: Node 20 runs the root's `before` hooks side by side.)
   */
  setup?: (file: ProxyTestFile) => void | Promise<void>;
}

/** A proxy (createProxy) listening on a free port of 127.0.0.1. */
export async function listenProxy(options: ProxyOptions): Promise<RunningProxy> {
  const p = createProxy(options);
  await new Promise<void>((r) => p.server.listen(0, '127.0.0.1', r));
  return p;
}

/**
 * What a proxy test file shares: the service (with the zone added), the upstream app and the
 * file's proxy are set once the file's `before` hook has run (see proxyTestFile).
 */
export class ProxyTestFile {
  svc!: TestService;
  upstream!: Upstream;
  proxy!: RunningProxy;

  constructor(
    readonly zoneId: string,
    readonly zone: string,
    /** What the file's proxies recorded (with `events`); emptied before each test. */
    readonly events: EvaluatedRequest[],
    private readonly defaults: Partial<ProxyOptions>,
  ) {}

  /** PUTs `rules` as the ruleset at `path` (an entry point's); it must be accepted. */
  readonly deploy = async (path: string, rules: unknown[]): Promise<void> => {
    const r = await this.svc.call('PUT', path, { body: { rules } });
    assert.equal(r.status, 200, JSON.stringify(r.body));
  };

  /** A proxy for the zone, in front of the file's upstream unless `upstream` names another, with the file's options and `extra`. */
  readonly startProxy = (extra: ProxyExtra = {}): Promise<RunningProxy> => {
    const { upstream = this.upstream.url, ...options } = extra;
    return listenProxy({ store: this.svc.store, routes: [{ zone: this.zone, upstream }], ...this.defaults, ...options });
  };

  /** A proxy as startProxy's for the length of `fn`; `logs` gets its log lines. */
  readonly withProxy = async (extra: ProxyExtra, fn: (p: RunningProxy, logs: string[]) => Promise<void>): Promise<void> => {
    const logs: string[] = [];
    const p = await this.startProxy({ log: (l) => logs.push(l), ...extra });
    try {
      await fn(p, logs);
    } finally {
      await p.close();
    }
  };
}

/** A pool's work on the proxy's thread for a test in which every worker stays up: fails the test if it is asked for. */
export function onlyWorkers(why: string): OnThisThread {
  return { evaluate: () => assert.fail(why), count: () => assert.fail(why) };
}

/** The path of the zone's entry point ruleset of `phase`. */
export const entrypoint = (zoneId: string, phase: string) => `/zones/${zoneId}/rulesets/phases/${phase}/entrypoint`;

/**
 * Registers a proxy test file's node:test hooks: before the tests, the service with the zone
 * (addProxiedZone), the upstream app, the rules and the file's proxy; after them, each closed;
 * before each test, the upstream's `seen` and the file's `events` emptied.
 */
export function proxyTestFile(o: ProxyTestFileOptions = {}): ProxyTestFile {
  const events: EvaluatedRequest[] = [];
  const sink: EvaluatedRequestSink = { record: (e) => events.push(e) };
  const file = new ProxyTestFile(o.zoneId ?? ZONE_ID, o.zone ?? ZONE, events, { ...(o.events ? { sink } : {}), ...o.proxy });
  before(async () => {
    if (o.needsWorker) assert.ok(proxyWorkerFile(), 'server/out/proxyWorker.js is built (npm run build)');
    file.svc = await startService();
    addProxiedZone(file.svc.store, file.zoneId, file.zone);
    if (o.upstream !== false) file.upstream = await startUpstream();
    if (o.custom) await file.deploy(entrypoint(file.zoneId, 'http_request_firewall_custom'), o.custom);
    if (o.ratelimit) await file.deploy(entrypoint(file.zoneId, 'http_ratelimit'), o.ratelimit);
    if (o.fileProxy) file.proxy = await file.startProxy();
    await o.setup?.(file);
  });
  after(async () => {
    await file.proxy?.close();
    await file.upstream?.close();
    await file.svc?.close();
  });
  beforeEach(() => {
    if (file.upstream) file.upstream.seen.length = 0;
    file.events.length = 0;
  });
  return file;
}

export interface Seen {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  bodyBytes: number;
  body: string;
  /** The request's trailers (a chunked body's). */
  trailers: Record<string, string | undefined>;
}

export interface Upstream {
  readonly server: Server;
  readonly url: string;
  /** Requests the upstream received, in order. */
  readonly seen: Seen[];
  /** Bytes of `/big` handed to the socket so far (it writes only as fast as the socket drains). */
  readonly big: { sent: number };
  /** Upgraded (or upgrading) connections still open on the upstream's side. */
  openUpgrades(): number;
  /** HTTP connections open on the upstream's side. */
  connections(): Promise<number>;
  close(): Promise<void>;
}

/**
 * Routes: `/big?mb=N` streams N MiB generated on demand; `/slow` never answers; `/trailers`
 * answers chunked with a trailer; `/cut` sends half its body and drops the connection; WebSocket-style upgrades on any path switch protocols and
 * echo (`/ws-slow` switches after 300 ms, then writes twice, and never closes first); `/status?code=N&score=S&delay=MS` answers
 * status N (default 200) with `x-score: S` when given, after MS ms (default 0); everything else answers 200 with `ok <method> <url>`.
 */
export async function startUpstream(): Promise<Upstream> {
  const seen: Seen[] = [];
  const big = { sent: 0 };
  const sockets = new Set<import('node:stream').Duplex>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    let bytes = 0;
    req.on('data', (c: Buffer) => {
      bytes += c.length;
      if (chunks.length < 64) chunks.push(c);
    });
    req.on('end', () => {
      seen.push({ method: req.method!, url: req.url!, headers: req.headers, bodyBytes: bytes, body: Buffer.concat(chunks).toString('latin1').slice(0, 200), trailers: req.trailers });
      const url = new URL(req.url!, 'http://x');
      if (url.pathname === '/slow') return;
      if (url.pathname === '/big') {
        const total = Number(url.searchParams.get('mb') ?? 1) * 1024 * 1024;
        const chunk = Buffer.alloc(64 * 1024, 0x61);
        let sent = 0;
        big.sent = 0;
        res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': total });
        Readable.from(
          (function* () {
            while (sent < total) {
              sent += chunk.length;
              big.sent = sent;
              yield chunk;
            }
          })(),
        ).pipe(res);
        return;
      }
      if (url.pathname === '/cut') {
        // Headers and half the promised body, then the connection drops.
        res.writeHead(200, { 'content-type': 'text/plain', 'content-length': 100 });
        res.write('x'.repeat(50), () => res.socket?.destroy());
        return;
      }
      if (url.pathname === '/status') {
        const score = url.searchParams.get('score');
        setTimeout(() => {
          res.writeHead(Number(url.searchParams.get('code') ?? 200), { 'content-type': 'text/plain', ...(score !== null ? { 'x-score': score } : {}) });
          res.end('status');
        }, Number(url.searchParams.get('delay') ?? 0));
        return;
      }
      if (url.pathname === '/trailers') {
        res.writeHead(200, { 'content-type': 'text/plain', trailer: 'x-checksum' });
        res.write('part one;');
        res.addTrailers({ 'x-checksum': 'abc123' });
        res.end('part two');
        return;
      }
      res.writeHead(url.pathname === '/created' ? 201 : 200, { 'content-type': 'text/plain', 'x-upstream': 'yes' });
      res.end(`ok ${req.method} ${req.url}`);
    });
  });
  server.on('upgrade', (req, socket) => {
    seen.push({ method: req.method!, url: req.url!, headers: req.headers, bodyBytes: 0, body: '', trailers: {} });
    const switched = () => socket.write('HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n');
    socket.on('data', (d: Buffer) => socket.write(`echo:${d.toString()}`));
    socket.on('error', () => socket.destroy());
    if (req.url === '/ws-slow') {
      // As an app that notices a peer gone only when it writes: its side stays open after the proxy's ends.
      setTimeout(switched, 300);
      setTimeout(() => socket.write('tick'), 400);
      setTimeout(() => socket.write('tock'), 500);
    } else {
      switched();
      socket.on('end', () => socket.end());
    }
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const a = server.address() as { port: number };
  return {
    server,
    url: `http://127.0.0.1:${a.port}`,
    seen,
    big,
    openUpgrades: () => sockets.size,
    connections: () => new Promise<number>((r) => server.getConnections((_e, n) => r(n))),
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
        for (const s of sockets) s.destroy();
      }),
  };
}

export interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
  trailers: Record<string, string | undefined>;
}

/** One request to the proxy with `host` as the Host header. */
export function send(proxyUrl: string, host: string, path: string, o: { method?: string; headers?: Record<string, string>; body?: string | Buffer } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const u = new URL(proxyUrl);
    const req = request({ host: u.hostname, port: u.port, method: o.method ?? 'GET', path, headers: { host, ...(o.headers ?? {}) }, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks).toString('utf8'), trailers: res.trailers }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(o.body);
  });
}

/** The interstitial's form (its hidden inputs: ray, pass, return) as the browser posts it. */
export function challengeForm(page: { body: string }): string {
  const fields = [...page.body.matchAll(/<input type="hidden" name="(\w+)" value="([^"]*)">/g)].map((m) => [m[1]!, m[2]!]);
  return new URLSearchParams(fields).toString();
}

/** The headers of a WebSocket handshake (a line each, CRLF-ended). */
const WEBSOCKET_HEADERS = 'Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n';

/** A WebSocket handshake's head for `target` with `host` as the Host header. */
export const handshake = (target: string, host: string) => `GET ${target} HTTP/1.1\r\nHost: ${host}\r\n${WEBSOCKET_HEADERS}\r\n`;

/**
 * A TCP server that takes connections and never answers, for a hung app: with `reads` it
 * reads and drops what comes (a TLS peer that never answers the ClientHello), else it reads
 * nothing (an app that never takes a request's body).
 */
export async function silentPeer(reads: boolean): Promise<{ port: number; close(): Promise<void> }> {
  const held = new Set<Socket>();
  const server = createNetServer((s) => {
    held.add(s);
    s.on('error', () => undefined);
    if (reads) s.resume();
    else s.pause();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as { port: number }).port,
    close: async () => {
      for (const s of held) s.destroy();
      await new Promise((r) => server.close(r));
    },
  };
}

/** A raw TCP connection to the proxy at `proxyUrl` (`onConnect` once it is up); its errors are ignored (the tests hang up on purpose). */
export function rawSocket(proxyUrl: string, onConnect?: () => void): Socket {
  const u = new URL(proxyUrl);
  const socket = connect(Number(u.port), u.hostname, onConnect);
  socket.on('error', () => undefined);
  return socket;
}

/**
 * Writes `text` on a raw TCP connection and collects what comes back until the server closes it
 * (or `waitMs`); with `halfClose`, the last part is written with a FIN (the client sends no more).
 */
export function raw(proxyUrl: string, text: string | readonly string[], o: { gapMs?: number; waitMs?: number; halfClose?: boolean } = {}): Promise<{ data: string; closed: boolean; ms: number }> {
  return new Promise((resolve) => {
    const started = Date.now();
    let data = '';
    let closed = false;
    const parts = typeof text === 'string' ? [text] : [...text];
    const socket = rawSocket(proxyUrl, () => {
      const next = () => {
        const p = parts.shift();
        if (p === undefined || socket.destroyed) return;
        if (o.halfClose && parts.length === 0) socket.end(p);
        else socket.write(p);
        if (parts.length > 0) setTimeout(next, o.gapMs ?? 0);
      };
      next();
    });
    socket.on('data', (d: Buffer) => (data += d.toString('latin1')));
    const timer = setTimeout(() => {
      socket.destroy();
      resolve({ data, closed, ms: Date.now() - started });
    }, o.waitMs ?? 5_000);
    socket.on('close', () => {
      closed = true;
      clearTimeout(timer);
      resolve({ data, closed, ms: Date.now() - started });
    });
  });
}

export interface RawUpstream {
  readonly url: string;
  /** Connections the upstream has open. */
  readonly sockets: Set<Socket>;
  close(): void;
}

/** An upstream that answers by hand: `onRequest` gets each connection's first request head (and what came with it) and its socket. */
export async function startRawUpstream(onRequest: (head: string, socket: Socket) => void): Promise<RawUpstream> {
  const sockets = new Set<Socket>();
  const server = createNetServer((s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.on('error', () => s.destroy());
    let text = '';
    const onData = (d: Buffer) => {
      text += d.toString('latin1');
      if (!text.includes('\r\n\r\n')) return;
      s.off('data', onData);
      onRequest(text, s);
    };
    s.on('data', onData);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const a = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${a.port}`,
    sockets,
    close() {
      for (const s of sockets) s.destroy();
      server.close();
    },
  };
}
