/**
 * The WAF proxy's tests over real sockets: an upstream app (node:http) with a few routes,
 * the proxy in front of it, and a raw HTTP client that sets the Host header (the zone).
 */
import { createServer, request, type IncomingHttpHeaders, type Server } from 'node:http';
import { connect, createServer as createNetServer, type Socket } from 'node:net';
import { Readable } from 'node:stream';
import { DEMO_ACCOUNT } from '../../server/src/service/seed';
import type { Store } from '../../server/src/service/store';

/** A zone of the demo account, Enterprise, already migrated (its managed rules are the rulesets'): what the proxy tests put their app behind. */
export function addProxiedZone(store: Store, id: string, name: string): void {
  store.run('INSERT INTO zones (id, account_id, name, plan, status, created_on) VALUES (?, ?, ?, ?, ?, ?)', [id, DEMO_ACCOUNT.id, name, 'enterprise', 'active', new Date().toISOString()]);
  store.run('INSERT INTO waf_migration (zone_id, state) VALUES (?, ?)', [id, JSON.stringify({ migration_state: 'complete' })]);
}

export interface Seen {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  bodyBytes: number;
  body: string;
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
  close(): Promise<void>;
}

/**
 * Routes: `/big?mb=N` streams N MiB generated on demand; `/slow` never answers; `/trailers`
 * answers chunked with a trailer; WebSocket-style upgrades on any path switch protocols and
 * echo (`/ws-slow` switches after 300 ms, then writes twice, and never closes first); everything else answers 200 with `ok <method> <url>`.
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
      seen.push({ method: req.method!, url: req.url!, headers: req.headers, bodyBytes: bytes, body: Buffer.concat(chunks).toString('latin1').slice(0, 200) });
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
    seen.push({ method: req.method!, url: req.url!, headers: req.headers, bodyBytes: 0, body: '' });
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

/** Writes `text` on a raw TCP connection and collects what comes back until the server closes it (or `waitMs`). */
export function raw(proxyUrl: string, text: string | readonly string[], o: { gapMs?: number; waitMs?: number } = {}): Promise<{ data: string; closed: boolean; ms: number }> {
  return new Promise((resolve) => {
    const u = new URL(proxyUrl);
    const started = Date.now();
    const socket = connect(Number(u.port), u.hostname);
    let data = '';
    let closed = false;
    const parts = typeof text === 'string' ? [text] : [...text];
    socket.on('connect', () => {
      const next = () => {
        const p = parts.shift();
        if (p === undefined || socket.destroyed) return;
        socket.write(p);
        if (parts.length > 0) setTimeout(next, o.gapMs ?? 0);
      };
      next();
    });
    socket.on('data', (d: Buffer) => (data += d.toString('latin1')));
    socket.on('error', () => undefined);
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
