// Credentials are checked from the headers before the body is read (service.ts handle()):
// a client without valid ones gets its auth error at once, without the service reading
// (or holding) its body, and its connection is closed after the answer, so the unread body
// cannot be taken for a next request. Authenticated clients are answered as before: 413
// for a body over the limit, and their connection stays open.
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { demoZoneId } from '../../server/src/service/seed';
import { startService, type TestService } from './harness';

const ZONE = demoZoneId('pro.example.com');
const MIB = 1024 * 1024;

interface Answer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: any;
}

/** A raw HTTP/1.1 client on one socket: answers are parsed as they come (Content-Length framed); `closed` resolves when the server ends the connection. */
function rawClient(url: string): { socket: Socket; next(): Promise<Answer>; closed: Promise<void>; send(data: string | Buffer): void } {
  const { hostname, port } = new URL(url);
  const socket = connect(Number(port), hostname);
  socket.on('error', () => {}); // a reset once the server closed is no failure here
  let buffered = Buffer.alloc(0);
  const waiting: ((a: Answer) => void)[] = [];
  const parse = () => {
    for (;;) {
      const end = buffered.indexOf('\r\n\r\n');
      if (end < 0 || waiting.length === 0) return;
      const head = buffered.subarray(0, end).toString('latin1').split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of head.slice(1)) {
        const i = line.indexOf(':');
        headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
      }
      const length = Number(headers['content-length'] ?? 0);
      if (buffered.length < end + 4 + length) return;
      const text = buffered.subarray(end + 4, end + 4 + length).toString('utf8');
      buffered = buffered.subarray(end + 4 + length);
      waiting.shift()!({ status: Number(head[0]!.split(' ')[1]), headers, body: text === '' ? undefined : JSON.parse(text) });
    }
  };
  socket.on('data', (c: Buffer) => {
    buffered = Buffer.concat([buffered, c]);
    parse();
  });
  const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
  return {
    socket,
    closed,
    send: (data) => void socket.write(data),
    next: () =>
      new Promise<Answer>((resolve, reject) => {
        waiting.push(resolve);
        socket.once('close', () => reject(new Error('the connection closed before an answer')));
        parse();
      }),
  };
}

/** Resolves with `p`, or rejects after `ms` (the service did not answer "at once"). */
function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([p, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: nothing within ${ms} ms`)), ms)))]).finally(() => clearTimeout(timer));
}

const head = (lines: readonly string[]) => `${lines.join('\r\n')}\r\n\r\n`;

describe('credentials before the body', () => {
  let svc: TestService;
  before(async () => {
    svc = await startService();
  });
  after(async () => {
    await svc.close();
  });

  it('an unauthenticated POST declaring 4 MiB and sending 1 KiB gets 400 9106 at once, and its connection is closed', async () => {
    const c = rawClient(svc.url);
    const answer = c.next();
    c.send(head([`POST /client/v4/zones/${ZONE}/filters HTTP/1.1`, 'Host: localhost', 'Content-Type: application/json', `Content-Length: ${4 * MIB}`]));
    c.send(Buffer.alloc(1024, 0x20));
    // Before, the service waited for the other 4 MiB (until Node's request timeout).
    const a = await within(answer, 3_000, 'the auth error');
    assert.equal(a.status, 400);
    assert.deepEqual(a.body, { result: null, success: false, errors: [{ code: 9106, message: 'Missing X-Auth-Key, X-Auth-Email or Authorization headers' }], messages: [] });
    assert.equal(a.headers.connection, 'close');
    await within(c.closed, 3_000, 'the close of the connection');
  });

  it('an unknown token sending a chunked body slowly gets 403 9109 at once, without the body being read to its end', async () => {
    const c = rawClient(svc.url);
    const answer = c.next();
    c.send(head([`PUT /client/v4/zones/${ZONE}/rulesets/phases/http_request_firewall_custom/entrypoint HTTP/1.1`, 'Host: localhost', `Authorization: Bearer ${'x'.repeat(40)}`, 'Content-Type: application/json', 'Transfer-Encoding: chunked']));
    const chunk = `400\r\n${' '.repeat(1024)}\r\n`;
    const drip = setInterval(() => c.socket.writable && c.send(chunk), 20);
    try {
      const a = await within(answer, 3_000, 'the auth error');
      assert.equal(a.status, 403);
      assert.deepEqual(a.body, { result: null, success: false, errors: [{ code: 9109, message: 'Invalid access token' }], messages: [] });
      assert.equal(a.headers.connection, 'close');
      // The body never ends (no last chunk): the server closes the connection all the same.
      await within(c.closed, 3_000, 'the close of the connection');
    } finally {
      clearInterval(drip);
    }
  });

  it('so does GraphQL (a public route, which answers bad credentials in its own shape) without reading the body', async () => {
    const c = rawClient(svc.url);
    const answer = c.next();
    c.send(head(['POST /client/v4/graphql HTTP/1.1', 'Host: localhost', 'Content-Type: application/json', `Content-Length: ${4 * MIB}`]));
    c.send('{"query": "');
    const a = await within(answer, 3_000, 'the auth error');
    assert.equal(a.status, 400);
    assert.deepEqual(a.body, { data: null, errors: [{ message: 'Missing X-Auth-Key, X-Auth-Email or Authorization headers', extensions: { code: 9106 } }] });
    assert.equal(a.headers.connection, 'close');
    await within(c.closed, 3_000, 'the close of the connection');
  });

  it('an unauthenticated request without a body keeps its connection: the next request on it is answered', async () => {
    const c = rawClient(svc.url);
    const first = c.next();
    c.send(head([`GET /client/v4/zones/${ZONE}/filters HTTP/1.1`, 'Host: localhost']));
    const a = await within(first, 3_000, 'the first answer');
    assert.equal(a.status, 400);
    assert.notEqual(a.headers.connection, 'close');
    const second = c.next();
    c.send(head([`GET /client/v4/zones/${ZONE}/filters HTTP/1.1`, 'Host: localhost', `Authorization: Bearer ${svc.adminToken}`]));
    assert.equal((await within(second, 3_000, 'the second answer')).status, 200);
    c.socket.destroy();
  });

  it('an authenticated client is answered as before: 413 for a body over 8 MiB, and a keep-alive connection serves the next request', async () => {
    const c = rawClient(svc.url);
    const tooBig = c.next();
    c.send(head([`POST /client/v4/zones/${ZONE}/filters HTTP/1.1`, 'Host: localhost', `Authorization: Bearer ${svc.adminToken}`, 'Content-Type: application/json', `Content-Length: ${9 * MIB}`]));
    c.send(Buffer.alloc(9 * MIB, 0x20));
    const a = await within(tooBig, 10_000, 'the 413');
    assert.equal(a.status, 413);
    assert.deepEqual(a.body.errors, [{ code: 10027, message: 'The request body is larger than 8388608 bytes; split the change into smaller requests' }]);
    const body = JSON.stringify([{ expression: 'http.host eq "auth-before-body.example"', ref: 'auth-before-body' }]);
    const created = c.next();
    c.send(head([`POST /client/v4/zones/${ZONE}/filters HTTP/1.1`, 'Host: localhost', `Authorization: Bearer ${svc.adminToken}`, 'Content-Type: application/json', `Content-Length: ${Buffer.byteLength(body)}`]) + body);
    const b = await within(created, 10_000, 'the create');
    assert.equal(b.status, 200, JSON.stringify(b.body));
    assert.equal(b.body.result[0].ref, 'auth-before-body');
    c.socket.destroy();
  });
});
