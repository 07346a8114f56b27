/**
 * What the proxy refuses in a request's head before it picks a zone, as nginx and the edge
 * do: a head that two readers could read differently (two Host headers, a Host that is not
 * `host[:port]`: the WAF and the app, or a proxy in front, would each pick one; no Host in
 * HTTP/1.1), a body it could not forward as it was sent (a transfer coding other than
 * `chunked`, which node's parser decodes as plain chunked, so the app would get coded bytes
 * labelled as plain), a version it does not speak (an `HTTP/2.0` request line), or an
 * expectation it cannot meet (`Expect` other than `100-continue`).
 */
import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';

export interface HeadRefusal {
  readonly status: 400 | 417 | 501 | 505;
  /** What is wrong, for the page and the log line. */
  readonly reason: string;
}

/**
 * `host[:port]`: a name of dot-separated labels (letters, digits, `-`, `_`; one trailing dot
 * allowed) or a bracketed IPv6 address, and an optional port of up to 5 digits (RFC 7230
 * §5.4 with RFC 3986's authority, less its user info and percent-encoding, which no zone
 * name has).
 */
const HOST = /^(?:\[([0-9A-Fa-f:.]+)\]|[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*\.?)(?::(\d{0,5}))?$/;

/** The longest Host text a refusal quotes. */
const QUOTE = 100;

function quoted(s: string): string {
  return JSON.stringify(s.length > QUOTE ? `${s.slice(0, QUOTE)}…` : s);
}

/** Why the proxy answers this head itself (400, 417, 501, 505), or undefined when it may go on. */
export function refusedHead(req: Pick<IncomingMessage, 'httpVersion' | 'httpVersionMajor' | 'httpVersionMinor' | 'rawHeaders' | 'headers'>): HeadRefusal | undefined {
  if (req.httpVersionMajor !== 1) return { status: 505, reason: `HTTP/${req.httpVersion} on an HTTP/1.x listener` };
  let hosts = 0;
  for (let i = 0; i < req.rawHeaders.length; i += 2) if (req.rawHeaders[i]!.toLowerCase() === 'host') hosts++;
  if (hosts > 1) return { status: 400, reason: `${hosts} Host headers; a request has one (RFC 7230 §5.4)` };
  const host = req.headers.host;
  if (host === undefined) {
    if (req.httpVersionMinor >= 1) return { status: 400, reason: 'no Host header; HTTP/1.1 requires one (RFC 7230 §5.4)' };
  } else if (host !== '') {
    const m = HOST.exec(host);
    if (!m || (m[1] !== undefined && isIP(m[1]) !== 6) || (m[2] !== undefined && m[2] !== '' && Number(m[2]) > 65535)) {
      return { status: 400, reason: `Host ${quoted(host)} is not a host name or [IPv6] address with an optional port (host[:port])` };
    }
  }
  const expect = req.headers.expect;
  if (expect !== undefined && expect.trim().toLowerCase() !== '100-continue') return { status: 417, reason: `Expect ${quoted(expect)}: only 100-continue is met` };
  const coding = req.headers['transfer-encoding'];
  if (coding !== undefined && coding.trim().toLowerCase() !== 'chunked') return { status: 501, reason: `Transfer-Encoding ${quoted(coding)}: only chunked is forwarded` };
  return undefined;
}
