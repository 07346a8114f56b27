/**
 * How the WAF proxy carries a request to the app and its answer back over HTTP/1 (proxy.ts
 * decides what to carry): which headers pass, the app's path, the body as it comes, the
 * upstream timeout's clock, and the heads the proxy writes itself on a raw socket.
 */
import { STATUS_CODES, type ClientRequest, type IncomingHttpHeaders, type IncomingMessage, type InformationEvent, type OutgoingHttpHeaders, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { forwardedProto, peerAddress } from './edgeFields';
import { normalizeUrlPath } from '../requests/normalize';
import type { Page } from './pages';

/** Headers for one hop only: never forwarded either way (the Proxy-* ones are for this proxy, not the app). */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'proxy-authorization', 'proxy-authenticate', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'http2-settings']);

/**
 * Headers a client's `Connection` list cannot remove from what the app gets: the body's framing
 * (without it the app would read the body as the next request, one the rules never saw) and Host
 * (which chose the zone and which the rules saw).
 */
const NEVER_LISTED = new Set(['content-length', 'transfer-encoding', 'host']);

/**
 * Headers only an edge in front of the proxy may set (who the client is, its scheme, the edge's
 * own name, the path it rewrote): without --trust-proxy (or from a peer outside
 * --trust-proxy-from's ranges), what a client sent in them is not passed to the app (the app,
 * or a library such as request-ip or Rack, could take it for the edge's word; an app that
 * routes by X-Original-URL, X-Rewrite-URL or X-Forwarded-Prefix, as old Symfony and IIS ones
 * do, would serve a path the rules never saw). Those the proxy can vouch for itself are set
 * instead (`forwardedHeaders`).
 */
const EDGE_ONLY = [
  'true-client-ip',
  'cf-visitor',
  'cf-connecting-ipv6',
  'cf-pseudo-ipv4',
  'x-original-url',
  'x-rewrite-url',
  'x-forwarded-prefix',
  'x-client-ip',
  'x-cluster-client-ip',
  'client-ip',
  'fastly-client-ip',
  'x-forwarded',
  'forwarded-for',
  'x-forwarded-server',
  'x-forwarded-scheme',
  'x-forwarded-ssl',
  'front-end-https',
];

/**
 * Behind an answer still being written on this connection (a pipelined request's), a request
 * the proxy cannot carry here (an upgrade, CONNECT, a malformed one) is not answered: that
 * answer goes out, then the connection ends, and the client sends the request again on a new
 * one. Returns whether there was such an answer (else nothing is done).
 */
export function endAfterPending(socket: Duplex): boolean {
  const pending = pendingResponse(socket);
  if (!pending) return false;
  const end = () => socket.end();
  pending.once('finish', end);
  pending.once('close', end);
  return true;
}

/** The answer being written on this connection, if any (node's own slot for it). */
function pendingResponse(socket: Duplex): ServerResponse | undefined {
  return (socket as { _httpMessage?: ServerResponse | null })._httpMessage ?? undefined;
}

/**
 * The answer to a request whose body is still coming on this connection: a parse error now
 * (a bad chunk size, the client's end mid-body) is that request's own, not one pipelined behind it.
 */
export function unfinishedRequest(socket: Duplex): ServerResponse | undefined {
  const pending = pendingResponse(socket);
  return pending && !pending.req.complete ? pending : undefined;
}

/** A WebSocket handshake (RFC 6455: a GET without a body): the only upgrade the proxy tunnels. */
export function isWebSocket(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  const bodiless = (length === undefined || length === '0') && req.headers['transfer-encoding'] === undefined;
  return req.method === 'GET' && bodiless && connectionTokens(req.headers.upgrade).has('websocket');
}

/**
 * The request's head as it came, but without the `upgrade` token in Connection (and
 * Proxy-Connection, which node's parser reads alike), so that it parses as an ordinary request;
 * the Upgrade header stays for the rules to see. Values from the parser hold no CR or LF.
 */
export function headWithoutUpgrade(req: IncomingMessage): string {
  let out = `${req.method} ${req.url} HTTP/${req.httpVersion}\r\n`;
  for (const [name, value] of pairs(req.rawHeaders)) {
    const lower = name.toLowerCase();
    if (lower !== 'connection' && lower !== 'proxy-connection') out += `${name}: ${value}\r\n`;
    else {
      const rest = value.split(',').filter((t) => t.trim().toLowerCase() !== 'upgrade');
      if (rest.some((t) => t.trim() !== '')) out += `${name}: ${rest.join(',').trim()}\r\n`;
    }
  }
  return `${out}\r\n`;
}

/** Why an answer's status line cannot be relayed (node refuses to write it), or undefined. */
export function badStatusLine(res: IncomingMessage): string | undefined {
  const status = res.statusCode ?? 0;
  if (status < 100 || status > 999) return `status ${status}`;
  if (/[^\t\x20-\x7e\x80-\xff]/.test(res.statusMessage ?? '')) return 'a control character in the reason phrase';
  return undefined;
}

/** The app's response headers for the client (raw, in order): hop-by-hop ones dropped, and Trailer unless `keepTrailer`. */
export function responseHeaders(upRes: IncomingMessage, keepTrailer: boolean): string[] {
  const headers = endToEnd(upRes.rawHeaders, upRes.headers.connection, keepTrailer);
  // A 204 has no body, and must not say it has one (RFC 9110 §8.6): a client in front that believed an app's Content-Length would read the next answer as this one's body.
  return upRes.statusCode === 204 ? withoutHeader(headers, 'content-length') : headers;
}

/** Raw headers (name, value, …) without those named `name` (lower case). */
export function withoutHeader(headers: readonly string[], name: string): string[] {
  const out: string[] = [];
  for (let i = 0; i + 1 < headers.length; i += 2) if (headers[i]!.toLowerCase() !== name) out.push(headers[i]!, headers[i + 1]!);
  return out;
}

/** Raw headers of an answer (final or interim), in order, minus the hop-by-hop ones and those its `Connection` lists; Trailer kept when `keepTrailer`. */
function endToEnd(rawHeaders: readonly string[], connection: string | undefined, keepTrailer = false): string[] {
  const out: string[] = [];
  const listed = connectionTokens(connection);
  for (const [name, value] of pairs(rawHeaders)) {
    const lower = name.toLowerCase();
    if ((HOP_BY_HOP.has(lower) && !(lower === 'trailer' && keepTrailer)) || listed.has(lower)) continue;
    out.push(name, value);
  }
  return out;
}

/**
 * An interim answer of the app passed on to the client before the final one: 103 Early Hints
 * (its Link headers, with the others it carries minus the hop-by-hop and framing ones) and 102
 * Processing. Not a 100 Continue: the proxy answered the client's expectation itself and sent
 * the app none (`forwardedHeaders`). Nothing goes to an HTTP/1.0 client (RFC 9110 §15.2), after
 * the final answer has begun, or for other 1xx codes (nor a 103 without a Link header). Returns
 * the app's fault when a 103 could not be passed on (a Link header node refuses), for the log.
 */
export function relayInterim(req: IncomingMessage, res: ServerResponse, info: InformationEvent): string | undefined {
  if (res.headersSent || res.destroyed || req.httpVersionMajor !== 1 || req.httpVersionMinor < 1) return undefined;
  if (info.statusCode === 102) {
    res.writeProcessing();
    return undefined;
  }
  if (info.statusCode !== 103) return undefined;
  const links: string[] = [];
  const hints: Record<string, string | string[]> = {};
  for (const [name, value] of pairs(endToEnd(info.rawHeaders, typeof info.headers.connection === 'string' ? info.headers.connection : undefined))) {
    const lower = name.toLowerCase();
    if (lower === 'link') links.push(value);
    // No framing: a 1xx has no body.
    else if (lower !== 'content-length') hints[lower] = hints[lower] === undefined ? value : `${String(hints[lower])}, ${value}`;
  }
  if (links.length === 0) return undefined;
  hints.link = links;
  try {
    // Node checks each Link value's form (`<uri>; param=value`) and throws on a malformed one: the 103 is dropped.
    res.writeEarlyHints(hints);
  } catch {
    return `a Link header not of the form "<uri>; rel=preload" (${JSON.stringify(links.join(', ').slice(0, 200))})`;
  }
  return undefined;
}

/**
 * Whether node sends this answer chunked to this client, the only framing that carries trailers
 * (and so a Trailer header; node throws on one otherwise): a body (not HEAD, 204, 304), no
 * Content-Length, and a client that reads chunked (HTTP/1.1, or HTTP/1.0 with `TE: chunked`).
 */
export function carriesTrailers(req: IncomingMessage, res: ServerResponse, status: number, headers: IncomingHttpHeaders): boolean {
  if (req.method === 'HEAD' || status === 204 || status === 304 || status < 200) return false;
  return res.useChunkedEncodingByDefault && headers['content-length'] === undefined;
}

/** `[name, value, name, value, …]` as pairs. */
export function pairs(raw: readonly string[]): [string, string][] {
  const out: [string, string][] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) out.push([raw[i]!, raw[i + 1]!]);
  return out;
}

/**
 * Header lines for a head the proxy writes itself. A name or value that could end its line
 * (CR, LF, NUL: a custom block response's content type comes from the ruleset) is dropped, so
 * nothing can add headers or a body of its own.
 */
export function headerLines(headers: Iterable<readonly [string, string]>): string {
  let out = '';
  for (const [name, value] of headers) if (!/[\r\n\0]/.test(name + value)) out += `${name}: ${value}\r\n`;
  return out;
}

export function writeRawPage(socket: Duplex, page: Page, rayId: string): void {
  const headers = Object.assign({}, page.headers, { 'cf-ray': rayId, 'content-length': String(Buffer.byteLength(page.body)), connection: 'close' });
  socket.end(`HTTP/1.1 ${page.status} ${STATUS_CODES[page.status] ?? 'Error'}\r\n${headerLines(Object.entries(headers))}\r\n${page.body}`);
  lingerThenClose(socket);
}

/**
 * Lingering close: after an answer to a request whose upload is unfinished, the rest of it is
 * read and dropped for up to LINGER_MS (LINGER_IDLE_MS without a byte) before the connection
 * closes, so that a client that writes its whole body before it reads gets the answer.
 */
export const LINGER_MS = 30_000;
export const LINGER_IDLE_MS = 5_000;

/**
 * The answer's end is sent (or is being sent): what the client still sends is read and
 * dropped until it ends its side, LINGER_IDLE_MS pass without a byte, or LINGER_MS in all,
 * and the socket is closed then. Without the bound, a client that never ends its side (the
 * server allows half-open connections) would hold the socket, and a connection slot, for ever.
 */
export function lingerThenClose(socket: Duplex): void {
  if (socket.destroyed) return;
  const close = () => socket.destroy();
  const total = setTimeout(close, LINGER_MS);
  const idle = idleTimer(LINGER_IDLE_MS, close);
  idle.start();
  socket.on('data', () => idle.start());
  socket.once('end', close);
  socket.once('close', () => {
    clearTimeout(total);
    idle.stop();
  });
  socket.resume();
}

export function connectionTokens(h: string | undefined): Set<string> {
  return new Set((h ?? '').split(',').map((t) => t.trim().toLowerCase()).filter(Boolean));
}

/**
 * The path the app gets: the upstream URL's path, then the target in origin form; `*` (OPTIONS *)
 * as it is. A target that begins with two or more slashes (or backslashes) goes with one: an
 * app that reads its target as a URL (`new URL(req.url, base)`) takes `//x/admin` for the host
 * `x` and the path `/admin`, which the rules, merging the slashes, saw as `/x/admin`. Under a
 * path prefix its dot segments are resolved first (`underPrefix`).
 */
export function upstreamPath(up: URL, target: string | undefined): string {
  if (target === '*') return '*';
  const basePath = prefixOf(up);
  if (!target?.startsWith('/')) return basePath + originForm(target);
  const path = target.replace(/^[/\\]{2,}/, '/');
  return basePath + (basePath ? underPrefix(path) : path);
}

/** The app's path prefix: the upstream URL's path without its last `/` (`''` for none). */
function prefixOf(up: URL): string {
  return up.pathname === '/' ? '' : up.pathname.replace(/\/$/, '');
}

/** A `.` or `..` segment of a path (a `%2e` taken for the dot it stands for, a `\` for a slash). */
const DOT_SEGMENT = /(?:^|\/)\.\.?(?:\/|$)/;

/**
 * An origin-form target as it goes after the app's path prefix. A path with a `.` or `..`
 * segment (also written `%2e`, or after a `\`) goes exactly as the rules saw it: normalized
 * as `http.request.uri.path` is (requests/normalize.ts, Cloudflare's URL normalization: `\`
 * to `/`, runs of `/` merged, unreserved characters decoded, then dot segments removed).
 * So `/a/../x`, `/../x` and `/a//../x` all reach the app as `/app/x`, never out of the
 * prefix, and a `..` never removes another segment for the app than it did for the rules.
 * The query is kept as written, and any other path as it is. A `..` written another way
 * (`%252e`, `%u002e`, `..;`, after an encoded slash) is left for `climbsOutOfPrefix` to refuse.
 */
function underPrefix(target: string): string {
  const q = target.indexOf('?');
  const path = q < 0 ? target : target.slice(0, q);
  if (!path.includes('.') && !/%2e/i.test(path)) return target;
  if (!DOT_SEGMENT.test(path.replace(/%2e/gi, '.').replace(/\\/g, '/'))) return target;
  return normalizeUrlPath(path) + (q < 0 ? '' : target.slice(q));
}

/** The ways a decoder may read a dot: `%2e`, IIS's `%u002e`, and the overlong UTF-8 forms that old decoders took. */
const DOT = /%2e|%u002e|%c0%ae|%e0%80%ae/gi;
/** And a slash or backslash, which some servers take as a separator (`%u2215` is the division slash IIS folds to `/`). */
const SEPARATOR = /%2f|%5c|%u002f|%u005c|%u2215|%c0%af|%e0%80%af|%c1%9c|\\/gi;

/**
 * Whether the path the app would get (`upstreamPath`, its dot segments resolved) still has a
 * `..` segment after the prefix (written `%252e%252e`, `%25%32%65`, `%u002e` or overlong
 * UTF-8 such as `%c0%ae`, with `;` parameters, or after an encoded or back slash): an app that
 * decodes it would resolve `/base/<that>/x` out of the prefix, to a path the URL given for it
 * did not name, and which one depends on the app, so the proxy refuses it. Without a prefix
 * the app gets the path as written (it resolves `..` against its own root).
 */
export function climbsOutOfPrefix(up: URL, target: string | undefined): boolean {
  const basePath = prefixOf(up);
  if (basePath === '' || target === undefined || !target.startsWith('/')) return false;
  let path = upstreamPath(up, target).slice(basePath.length).split('?')[0]!;
  // Decoded as an app that decodes more than once would (`%252e`, `%25%32%65` and IIS's `%%32%65` are all `.` to one): each round every form above, then every `%XX`.
  for (let i = 0; i < 4; i++) {
    const next = path.replace(DOT, '.').replace(SEPARATOR, '/').replace(/%([0-9a-f]{2})/gi, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
    if (next === path) break;
    path = next;
  }
  path = path.replace(SEPARATOR, '/');
  // `..;x` is `..` to an app that drops a segment's parameters (Tomcat, Jetty, Spring).
  return path.split('/').some((segment) => segment.split(';')[0] === '..');
}

const ABSOLUTE_FORM = /^(https?):\/\/([^/?#]*)([^#]*)/i;

/**
 * An absolute-form target (`GET http://host/path?q`) as origin-form (`/path?q`): its path and
 * query as written (no URL normalization, so the rules and the app get the same bytes); `/`
 * for anything else.
 */
export function originForm(target: string | undefined): string {
  const m = ABSOLUTE_FORM.exec(target ?? '');
  if (!m) return '/';
  const rest = m[3]!;
  return rest.startsWith('/') ? rest : `/${rest}`;
}

/**
 * The target the proxy evaluates and forwards: origin-form (`/path?q`, without a `#fragment`) and `*` as they are; an
 * absolute-form one (`GET http://host/p`) as origin-form when its authority names the Host
 * header's host and port. RFC 7230 §5.4 has a server take the authority over Host; the proxy
 * routes, evaluates and forwards by Host, so a request that names two hosts is refused rather
 * than evaluated for one and served for the other. Undefined (a 400) for that, for any other
 * scheme, userinfo, or any other form.
 */
export function requestTarget(target: string | undefined, host: string | undefined): string | undefined {
  const t = target ?? '';
  if (t === '*') return t;
  // A fragment is never part of a request target (RFC 9112 §3.2) and the rules' fields end
  // before it: an app that read `?a=1#&q=<payload>` as one query would get arguments the rules never saw.
  if (t.startsWith('/')) return t.split('#', 1)[0];
  const m = ABSOLUTE_FORM.exec(t);
  if (!m || host === undefined || m[2]!.includes('@')) return undefined;
  // Both as URL hosts for the target's scheme: case, a default port and the like compare equal.
  const scheme = m[1]!.toLowerCase();
  try {
    const named = new URL(`${scheme}://${host}/`);
    // A Host that is not just host[:port] (`a@b`, `b/c`) would parse to a host it does not say.
    if (named.href !== `${scheme}://${named.host}/`) return undefined;
    if (new URL(`${scheme}://${m[2]}/`).host !== named.host) return undefined;
  } catch {
    return undefined;
  }
  return originForm(t);
}

export interface AppClock {
  /** The proxy waits on the app for `what` (connecting, taking the body, answering). */
  wait(what: string): void;
  done(what: string): void;
  stop(): void;
}

/**
 * The upstream timeout: runs while the proxy waits on the app, from the first wait until none is
 * left; waiting on the client (a slow upload) is not the app's time, so it does not count.
 */
export function appClock(ms: number, onTimeout: () => void): AppClock {
  const waits = new Set<string>();
  let timer: NodeJS.Timeout | undefined;
  const update = () => {
    if (waits.size > 0) timer ??= setTimeout(onTimeout, ms);
    else {
      clearTimeout(timer);
      timer = undefined;
    }
  };
  return {
    wait(what) {
      waits.add(what);
      update();
    },
    done(what) {
      waits.delete(what);
      update();
    },
    stop() {
      waits.clear();
      update();
    },
  };
}

/**
 * A timeout that can be stopped and started again (a stopped Node timer's `refresh` does
 * not re-arm it): `start` (re)starts the full `ms`, `stop` holds it.
 */
export function idleTimer(ms: number, onIdle: () => void): { start(): void; stop(): void } {
  let timer: NodeJS.Timeout | undefined;
  return {
    start() {
      if (timer) timer.refresh();
      else timer = setTimeout(onIdle, ms);
    },
    stop() {
      clearTimeout(timer);
      timer = undefined;
    },
  };
}

/**
 * The app's answer stops coming: nothing for `ms` while the proxy waits on the app for it (the
 * answer's body, once its head came), `onIdle`. Time the client holds the answer back (it
 * reads slowly, the stream is paused) does not count.
 */
export function watchAnswerIdle(upRes: IncomingMessage, ms: number, onIdle: () => void): void {
  const idle = idleTimer(ms, onIdle);
  idle.start();
  // A chunk read as the client's side pauses the stream (backpressure) does not restart it.
  upRes.on('data', () => {
    if (upRes.readableFlowing) idle.start();
  });
  upRes.on('resume', idle.start);
  upRes.on('pause', idle.stop);
  upRes.on('end', idle.stop);
  upRes.on('close', idle.stop);
}

/**
 * A body the proxy holds whole, to the app: the clock runs until the app has taken it (else an
 * app that never reads a body larger than the socket buffers would hold the request with no
 * timeout at all), and then for its answer.
 */
export function sendHeldBody(upReq: ClientRequest, buffered: Buffer, clock: AppClock): void {
  clock.wait('body');
  // Before the proxy's own 'finish' listener starts the wait for the answer.
  upReq.prependOnceListener('finish', () => clock.done('body'));
  upReq.end(buffered);
}

/**
 * The client's body to the app: the bytes read for the rules, then the rest as it comes. While
 * the app does not take it (backpressure) the clock runs. When the app stops taking it (it
 * answered early and closed), the rest is read and dropped so the client can read the answer.
 * When the client sends nothing for `idleMs` while the proxy waits for it, `stalled`.
 */
export function sendBody(req: IncomingMessage, upReq: ClientRequest, buffered: Buffer, ended: boolean, clock: AppClock, idleMs: number, stalled: () => void): void {
  // A chunked request's trailers are not passed on (nor does nginx pass them): the rules never
  // see them, so a trailer would carry to the app a header the WAF did not judge.
  if (ended) return sendHeldBody(upReq, buffered, clock);
  let held = false;
  // The client's pauses count while the proxy waits on it: not while the app holds the body back.
  const idle = idleTimer(idleMs, stalled);
  idle.start();
  const send = (c: Buffer) => {
    idle.start();
    if (upReq.destroyed || upReq.write(c)) return;
    held = true;
    idle.stop();
    req.pause();
    clock.wait('body');
    upReq.once('drain', () => {
      held = false;
      idle.start();
      clock.done('body');
      req.resume();
    });
  };
  const end = () => {
    idle.stop();
    upReq.end();
  };
  upReq.on('close', () => {
    idle.stop();
    req.off('data', send);
    req.off('end', end);
    if (!req.complete) req.resume();
  });
  send(buffered);
  req.on('data', send);
  req.on('end', end);
  if (!held) req.resume();
}

export interface Forwarding {
  /** `ip.src` as the rules saw it (the socket's peer, or with --trust-proxy the one the edge names). */
  readonly clientIp: string;
  /** The socket's peer address. */
  readonly peer: string;
  /** `ip.src.country` as the rules saw it, if known. */
  readonly country?: string | undefined;
  readonly rayId: string;
  /** The protocol of the client's connection to this proxy (`http`). */
  readonly proto: string;
  /** The proxy's own port the client connected to. */
  readonly port: number;
  /**
   * Whether this request's peer is trusted (edgeFields.ts `EdgeTrust`). The request's one
   * decision (`EdgeFields.trusted`), so the app is told what the rules saw.
   */
  readonly trusted: boolean;
}

/**
 * Headers sent once whatever the client repeated: Host and Content-Length (node checked that
 * the repeats agree, or refused the request), and Content-Type, the first, which the rules
 * parsed the body by (requests/fields.ts): an app that took the last would read a body the
 * rules read as text as a form, with arguments they never saw.
 */
const ONCE = new Set(['host', 'content-length', 'content-type']);

/**
 * The request's headers for the upstream: hop-by-hop ones dropped, those whose name holds an
 * underscore dropped (as nginx's `underscores_in_headers off` does: CGI and WSGI servers map
 * `X_Real_IP` to the same variable as `X-Real-IP`, so a client's look-alike would pass for the
 * proxy's own header; the rules still see it), the forwarding ones added.
 * The body's framing is explicit whatever the method: node adds none to a GET, HEAD, DELETE,
 * OPTIONS or TRACE of its own, and a body sent unframed would reach the app as a request of its
 * own. A chunked body goes chunked (node re-frames what it decoded), else Content-Length stays.
 */
export function forwardedHeaders(h: IncomingHttpHeaders, f: Forwarding, distinct: Readonly<Record<string, readonly string[] | undefined>>): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {};
  const listed = connectionTokens(h.connection);
  for (const [k, v] of Object.entries(h)) {
    if (v === undefined || HOP_BY_HOP.has(k) || k.includes('_') || (listed.has(k) && !NEVER_LISTED.has(k))) continue;
    // Every line the client sent (`distinct`: node's headersDistinct), as nginx passes them: node's
    // joined view keeps only the first User-Agent, Referer or Authorization, and the rules see them all.
    const all = distinct[k];
    out[k] = all && all.length > 1 && !ONCE.has(k) ? [...all] : v;
  }
  // The proxy met the expectation itself (node's server sent the 100 Continue) and sends the body
  // as it comes; the app's own 100 would only be dropped (as nginx clears Expect).
  delete out.expect;
  if (h['transfer-encoding'] !== undefined) {
    // Node's parser refuses a request with both, and ends a chunked one only with `chunked`.
    delete out['content-length'];
    out['transfer-encoding'] = 'chunked';
  }
  const prior = h['x-forwarded-for'];
  // The hop this proxy saw: its peer, whoever that peer says the client is. The client's own
  // list stays in front of it, trusted or not (as Cloudflare does): its leftmost entries are
  // the client's claim; the client is CF-Connecting-IP, X-Real-IP, or the rightmost entry.
  const peer = peerAddress(f.peer);
  out['x-forwarded-for'] = prior ? `${Array.isArray(prior) ? prior.join(', ') : prior}, ${peer}` : peer;
  out['x-forwarded-proto'] = forwardedProto(h, f.trusted, f.proto);
  out['cf-connecting-ip'] = f.clientIp;
  out['cf-ray'] = f.rayId;
  // The country the rules saw, never one only the client claims.
  if (f.country !== undefined) out['cf-ipcountry'] = f.country;
  else delete out['cf-ipcountry'];
  // What nginx's `proxy_set_header X-Real-IP $remote_addr` / `X-Forwarded-Host $host` /
  // `X-Forwarded-Port $server_port` give: this hop's word, or with --trust-proxy the edge's when it sent one.
  const edge = (k: string) => (f.trusted && h[k] !== undefined ? h[k] : undefined);
  // Always `ip.src`: a trusted edge that does not set X-Real-IP itself (Cloudflare, most load
  // balancers) would otherwise pass on the one the client chose, while the rules saw another.
  out['x-real-ip'] = f.clientIp;
  const host = edge('x-forwarded-host') ?? h.host;
  if (host !== undefined) out['x-forwarded-host'] = host;
  else delete out['x-forwarded-host'];
  out['x-forwarded-port'] = edge('x-forwarded-port') ?? String(f.port);
  // RFC 7239: this hop's element, after the edge's list only when the edge is trusted (as X-Forwarded-For's entries are appended to).
  const hop = forwardedElement(peer, h.host, f.proto);
  const prior7239 = edge('forwarded');
  out.forwarded = prior7239 ? `${Array.isArray(prior7239) ? prior7239.join(', ') : prior7239}, ${hop}` : hop;
  if (!f.trusted) for (const k of EDGE_ONLY) delete out[k];
  return out;
}

/** This hop's RFC 7239 `Forwarded` element: `for` the peer, `host` the Host it sent, `proto` this connection's. */
export function forwardedElement(peer: string, host: string | undefined, proto: string): string {
  const forNode = peer === '' ? 'unknown' : peer.includes(':') ? `"[${peer}]"` : forwardedValue(peer);
  return `for=${forNode}${host !== undefined ? `;host=${forwardedValue(host)}` : ''};proto=${proto}`;
}

/** A token as it is, anything else (a port's colon, an IPv6 address) as a quoted-string (RFC 7230 §3.2.6). */
function forwardedValue(v: string): string {
  return /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/.test(v) ? v : `"${v.replace(/["\\]/g, '\\$&')}"`;
}


/**
 * The body's first bytes: chunks until more than `limit` bytes have come (the stream is
 * then paused, the rest stays in the socket) or the body ended. A request without a body
 * reads nothing. `stalled` when no byte came for `idleMs` (the server's request timeout is
 * off, for long uploads, so a client that promised more than it sends would hold the
 * connection for ever).
 */
export function readHead(req: IncomingMessage, limit: number, idleMs: number): Promise<{ chunks: Buffer[]; ended: boolean } | 'aborted' | 'stalled'> {
  const length = req.headers['content-length'];
  if ((length === undefined || length === '0') && req.headers['transfer-encoding'] === undefined) return Promise.resolve({ chunks: [], ended: true });
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let seen = 0;
    const idle = setTimeout(() => done('stalled'), idleMs);
    const done = (r: { chunks: Buffer[]; ended: boolean } | 'aborted' | 'stalled') => {
      clearTimeout(idle);
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('close', onClose);
      resolve(r);
    };
    const onData = (c: Buffer) => {
      idle.refresh();
      chunks.push(c);
      seen += c.length;
      if (seen > limit) {
        req.pause();
        done({ chunks, ended: false });
      }
    };
    const onEnd = () => done({ chunks, ended: true });
    const onError = () => done('aborted');
    const onClose = () => {
      if (!req.complete) done('aborted');
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('close', onClose);
  });
}
