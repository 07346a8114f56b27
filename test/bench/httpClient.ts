// A lean HTTP/1.1 keep-alive client for the load benchmarks: one socket, one request at a
// time, the response framed by Content-Length or chunked encoding. Node's http client spent
// 0.15–0.28 ms of CPU per request of the service bench (its parser, streams and events per
// response), so 32 of them on the bench's 2 cores took CPU from the server being measured
// and added their own event-loop queueing to every latency. This one took 0.04–0.10 ms a
// request (the bench's `client CPU` column, docs/service.md).
import { connect, type Socket } from 'node:net';

export interface Answer {
  readonly status: number;
  readonly body: string;
}

const HEAD_END = Buffer.from('\r\n\r\n');

export class Connection {
  private readonly socket: Socket;
  private readonly ready: Promise<void>;
  private buffered: Buffer = Buffer.alloc(0);
  private waiting: { resolve(a: Answer): void; reject(e: Error): void } | undefined;
  private failed: Error | undefined;

  constructor(private readonly url: URL) {
    this.socket = connect({ host: url.hostname, port: Number(url.port), noDelay: true });
    this.ready = new Promise((resolve, reject) => {
      this.socket.once('connect', resolve);
      this.socket.once('error', reject);
    });
    this.socket.on('data', (d: Buffer) => this.receive(d));
    this.socket.on('error', (e) => this.fail(e));
    this.socket.on('close', () => this.fail(new Error('the server closed the connection')));
  }

  /** Sends one request and resolves with its answer; `path` is relative to the URL's path. */
  async request(method: string, path: string, headers: Readonly<Record<string, string>>, body?: string): Promise<Answer> {
    await this.ready;
    if (this.failed) throw this.failed;
    if (this.waiting) throw new Error('one request at a time on a connection');
    const target = new URL(path.replace(/^\//, ''), this.url);
    let head = `${method} ${target.pathname}${target.search} HTTP/1.1\r\nhost: ${target.host}\r\n`;
    for (const [k, v] of Object.entries(headers)) head += `${k}: ${v}\r\n`;
    if (body !== undefined) head += `content-length: ${Buffer.byteLength(body)}\r\n`;
    const answer = new Promise<Answer>((resolve, reject) => (this.waiting = { resolve, reject }));
    this.socket.write(body === undefined ? `${head}\r\n` : `${head}\r\n${body}`);
    return answer;
  }

  close(): void {
    this.socket.destroy();
  }

  private fail(e: Error): void {
    this.failed ??= e;
    const w = this.waiting;
    this.waiting = undefined;
    w?.reject(e);
  }

  private receive(d: Buffer): void {
    this.buffered = this.buffered.length === 0 ? d : Buffer.concat([this.buffered, d]);
    const end = this.buffered.indexOf(HEAD_END);
    if (end < 0 || !this.waiting) return;
    const head = this.buffered.toString('latin1', 0, end);
    const status = Number(head.slice(9, 12));
    const length = /\r\ncontent-length:\s*(\d+)/i.exec(head);
    let body: Buffer | undefined;
    let rest: Buffer;
    if (length) {
      const stop = end + 4 + Number(length[1]);
      if (this.buffered.length < stop) return;
      body = this.buffered.subarray(end + 4, stop);
      rest = this.buffered.subarray(stop);
    } else if (/\r\ntransfer-encoding:\s*chunked/i.test(head)) {
      const parsed = dechunk(this.buffered, end + 4);
      if (!parsed) return;
      [body, rest] = parsed;
    } else if (status === 204 || status === 304) {
      body = Buffer.alloc(0);
      rest = this.buffered.subarray(end + 4);
    } else {
      return this.fail(new Error(`a response without Content-Length or chunked encoding: ${head.split('\r\n')[0]}`));
    }
    this.buffered = rest.length === 0 ? Buffer.alloc(0) : Buffer.from(rest);
    const w = this.waiting;
    this.waiting = undefined;
    w.resolve({ status, body: body.toString() });
  }
}

/** A chunked body starting at `from`: the body and what follows it, or undefined while incomplete. */
function dechunk(buf: Buffer, from: number): [Buffer, Buffer] | undefined {
  const parts: Buffer[] = [];
  let at = from;
  for (;;) {
    const eol = buf.indexOf('\r\n', at);
    if (eol < 0) return undefined;
    const size = parseInt(buf.toString('latin1', at, eol), 16);
    if (size === 0) {
      // No trailers from the servers measured: the last chunk's CRLF ends the message.
      if (buf.length < eol + 4) return undefined;
      return [Buffer.concat(parts), buf.subarray(eol + 4)];
    }
    if (buf.length < eol + 2 + size + 2) return undefined;
    parts.push(buf.subarray(eol + 2, eol + 2 + size));
    at = eol + 2 + size + 2;
  }
}
