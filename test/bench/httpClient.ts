// A lean HTTP/1.1 keep-alive client for the load benchmarks: raw sockets, one request at a
// time per connection, the response framed as RFC 9112 says (no body for HEAD, 1xx, 204
// and 304; Content-Length; chunked, trailers skipped; else until the server closes).
// Node's http client spent 0.15–0.28 ms of CPU per request of the service bench (its
// parser, streams and events per response), so 32 of them on the bench's 2 cores took CPU
// from the server being measured and added their own event-loop delays to every latency.
// This one costs 0.04–0.10 ms a request (the service bench prints it as `client CPU`).
import { connect, type Socket } from 'node:net';

export interface Answer {
  readonly status: number;
  readonly body: string;
}

const HEAD_END = Buffer.from('\r\n\r\n');
const EMPTY = Buffer.alloc(0);

interface Waiting {
  readonly head: boolean;
  resolve(a: Answer): void;
  reject(e: Error): void;
  timer?: NodeJS.Timeout;
  /** Set once the head is read and the body runs until the server closes. */
  status?: number;
}

export class Connection {
  private readonly socket: Socket;
  private readonly ready: Promise<void>;
  private buffered: Buffer = EMPTY;
  private waiting: Waiting | undefined;
  private failed: Error | undefined;
  /** The server said it closes after this answer (`connection: close`, HTTP/1.0). */
  private closing = false;

  constructor(
    private readonly host: string,
    private readonly port: number,
  ) {
    this.socket = connect({ host, port, noDelay: true });
    this.ready = new Promise((resolve, reject) => {
      this.socket.once('connect', resolve);
      this.socket.once('error', reject);
    });
    this.ready.catch(() => undefined);
    this.socket.on('data', (d: Buffer) => this.receive(d));
    this.socket.on('error', (e) => this.fail(e));
    this.socket.on('close', () => this.closed());
  }

  /** Whether another request may go on this connection. */
  get usable(): boolean {
    return !this.failed && !this.closing;
  }

  /**
   * Sends one request with `target` as the request line has it (sent as given, not
   * normalised) and resolves with the answer. A Host header is added unless `headers` has
   * one; `timeoutMs` ends the connection when no answer came in time.
   */
  async request(method: string, target: string, headers: Readonly<Record<string, string>>, body?: string | Buffer, timeoutMs?: number): Promise<Answer> {
    await this.ready;
    if (this.failed) throw this.failed;
    if (this.waiting) throw new Error('one request at a time on a connection');
    let head = `${method} ${target} HTTP/1.1\r\n`;
    let host = false;
    for (const [k, v] of Object.entries(headers)) {
      head += `${k}: ${v}\r\n`;
      host ||= k.toLowerCase() === 'host';
    }
    if (!host) head += `host: ${this.host}:${this.port}\r\n`;
    if (body !== undefined) head += `content-length: ${Buffer.byteLength(body)}\r\n`;
    // Header values as latin1, as Node's client writes them.
    const bytes = Buffer.from(`${head}connection: keep-alive\r\n\r\n`, 'latin1');
    const answer = new Promise<Answer>((resolve, reject) => (this.waiting = { head: method === 'HEAD', resolve, reject }));
    if (timeoutMs !== undefined) this.waiting!.timer = setTimeout(() => this.fail(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    this.socket.write(body === undefined ? bytes : Buffer.concat([bytes, typeof body === 'string' ? Buffer.from(body) : body]));
    return answer;
  }

  close(): void {
    this.socket.destroy();
  }

  private fail(e: Error): void {
    this.failed ??= e;
    this.socket.destroy();
    this.settle()?.reject(e);
  }

  private closed(): void {
    const w = this.waiting;
    // A body that runs until the server closes has ended.
    if (w?.status !== undefined) {
      this.settle();
      w.resolve({ status: w.status, body: this.buffered.toString() });
    }
    this.fail(new Error('the server closed the connection'));
  }

  private settle(): Waiting | undefined {
    const w = this.waiting;
    this.waiting = undefined;
    if (w?.timer) clearTimeout(w.timer);
    return w;
  }

  private receive(d: Buffer): void {
    this.buffered = this.buffered.length === 0 ? d : Buffer.concat([this.buffered, d]);
    for (;;) {
      const w = this.waiting;
      if (!w || w.status !== undefined) return;
      const end = this.buffered.indexOf(HEAD_END);
      if (end < 0) return;
      const head = this.buffered.toString('latin1', 0, end);
      const status = Number(head.slice(9, 12));
      const from = end + 4;
      if (status >= 100 && status < 200) {
        // An interim answer (100 Continue): the real one follows.
        this.buffered = this.buffered.subarray(from);
        continue;
      }
      if (/^HTTP\/1\.0 /.test(head) || /\r\nconnection:\s*close/i.test(head)) this.closing = true;
      const length = /\r\ncontent-length:\s*(\d+)/i.exec(head);
      let stop: number;
      let body: Buffer;
      if (w.head || status === 204 || status === 304) {
        stop = from;
        body = EMPTY;
      } else if (/\r\ntransfer-encoding:[^\r]*chunked/i.test(head)) {
        const parsed = dechunk(this.buffered, from);
        if (!parsed) return;
        [body, stop] = parsed;
      } else if (length) {
        stop = from + Number(length[1]);
        if (this.buffered.length < stop) return;
        body = this.buffered.subarray(from, stop);
      } else {
        // No framing: the body is what comes until the server closes (closed()).
        w.status = status;
        this.closing = true;
        this.buffered = this.buffered.subarray(from);
        return;
      }
      const rest = this.buffered.subarray(stop);
      this.buffered = rest.length === 0 ? EMPTY : Buffer.from(rest);
      this.settle();
      w.resolve({ status, body: body.toString() });
      return;
    }
  }
}

/** A chunked body starting at `from`: the body and where the message ends, or undefined while incomplete. */
function dechunk(buf: Buffer, from: number): [Buffer, number] | undefined {
  const parts: Buffer[] = [];
  let at = from;
  for (;;) {
    const eol = buf.indexOf('\r\n', at);
    if (eol < 0) return undefined;
    const size = parseInt(buf.toString('latin1', at, eol), 16);
    if (size === 0) {
      // The last chunk, then trailer fields (skipped) up to an empty line.
      const end = buf.indexOf(HEAD_END, eol);
      return end < 0 ? undefined : [Buffer.concat(parts), end + 4];
    }
    if (buf.length < eol + 2 + size + 2) return undefined;
    parts.push(buf.subarray(eol + 2, eol + 2 + size));
    at = eol + 2 + size + 2;
  }
}

/** Connections to one server, at most `max` at once, each carrying one request at a time; closed ones are replaced. */
export class Pool {
  private readonly idle: Connection[] = [];
  private open = 0;
  private readonly queue: ((c: Connection) => void)[] = [];

  constructor(
    private readonly host: string,
    private readonly port: number,
    private readonly max: number,
  ) {}

  async request(method: string, target: string, headers: Readonly<Record<string, string>>, body?: string | Buffer, timeoutMs?: number): Promise<Answer> {
    const c = await this.take();
    try {
      return await c.request(method, target, headers, body, timeoutMs);
    } finally {
      this.give(c);
    }
  }

  close(): void {
    for (const c of this.idle.splice(0)) c.close();
  }

  private take(): Promise<Connection> {
    const c = this.idle.pop();
    if (c) return Promise.resolve(c);
    if (this.open < this.max) {
      this.open++;
      return Promise.resolve(new Connection(this.host, this.port));
    }
    return new Promise((resolve) => this.queue.push(resolve));
  }

  private give(c: Connection): void {
    let next = c;
    if (!c.usable) {
      c.close();
      next = new Connection(this.host, this.port);
    }
    const waiter = this.queue.shift();
    if (waiter) waiter(next);
    else this.idle.push(next);
  }
}
