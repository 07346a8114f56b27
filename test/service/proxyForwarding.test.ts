// The WAF proxy's forwarding at its edges, over real sockets: answers from the app that node
// refuses to write as they are (a Trailer header where nothing is chunked, an invalid status
// line), a 204 and a 304 relayed without a body on a kept-alive connection, the upstream
// timeout against a slow upload, an app that answers before the upload ends, clients that
// leave mid-evaluation, pipelined garbage, and the requests the proxy answers itself
// (CONNECT, a stalled body) or forwards as they are (OPTIONS *).
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { proxyTestFile, raw, rawSocket, send, startRawUpstream, ZONE } from './proxyHarness';

const file = proxyTestFile({
  custom: [{ action: 'block', expression: 'http.request.uri.path eq "/blocked"', description: 'b' }],
  proxy: { upstreamTimeoutMs: 2_000, headerTimeoutMs: 5_000 },
});
const { withProxy } = file;

/**
 * A POST of 8 MB written whole before anything is read, as Python's http.client does: what
 * came back once the proxy closed the connection, and the socket's error, if any.
 */
async function uploadThenRead(proxyUrl: string, path: string): Promise<{ got: string; failed: string }> {
  const size = 8_000_000;
  const s = rawSocket(proxyUrl);
  let got = '';
  let failed = '';
  s.on('error', (e: NodeJS.ErrnoException) => (failed = e.code ?? e.message));
  s.pause();
  s.write(`POST ${path} HTTP/1.1\r\nHost: ${ZONE}\r\nContent-Length: ${size}\r\n\r\n`);
  await new Promise<void>((r) => s.write(Buffer.alloc(size, 0x61), () => r()));
  s.on('data', (d: Buffer) => (got += d.toString('latin1')));
  const closed = new Promise<void>((r) => s.once('close', () => r()));
  s.resume();
  await closed;
  return { got, failed };
}

const get = (method: string, path: string, version = '1.1') => `${method} ${path} HTTP/${version}\r\nHost: ${ZONE}\r\nConnection: close\r\n\r\n`;

describe("the app's answers node would refuse to write as they are", () => {
  it('drop the Trailer header for an HTTP/1.0 client, which gets the body delimited by the close', async () => {
    await withProxy({}, async (p) => {
      const r = await raw(p.url(), `GET /trailers HTTP/1.0\r\nHost: ${ZONE}\r\n\r\n`);
      assert.match(r.data, /^HTTP\/1\.1 200 OK\r\n/);
      assert.doesNotMatch(r.data, /^trailer:/im);
      assert.ok(r.data.endsWith('\r\n\r\npart one;part two'), r.data);
      assert.equal(r.closed, true);
      // The process is still there.
      assert.equal((await send(p.url(), ZONE, '/')).status, 200);
    });
  });

  it('drop the Trailer header on an answer with Content-Length, to HEAD, and on a 304', async () => {
    const app = await startRawUpstream((head, s) => {
      const path = head.split(' ')[1];
      if (path === '/length') s.end('HTTP/1.1 200 OK\r\nContent-Length: 2\r\nTrailer: x-a\r\n\r\nok');
      else if (path === '/head') s.end('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTrailer: x-a\r\n\r\n');
      else s.end('HTTP/1.1 304 Not Modified\r\nTrailer: x-a\r\n\r\n');
    });
    try {
      await withProxy({ upstream: app.url }, async (p) => {
        const length = await raw(p.url(), get('GET', '/length'));
        assert.match(length.data, /^HTTP\/1\.1 200 OK\r\n/);
        assert.match(length.data, /\r\nContent-Length: 2\r\n/);
        assert.ok(length.data.endsWith('\r\n\r\nok'), length.data);
        const head = await raw(p.url(), get('HEAD', '/head'));
        assert.match(head.data, /^HTTP\/1\.1 200 OK\r\n/);
        const notModified = await raw(p.url(), get('GET', '/304'));
        assert.match(notModified.data, /^HTTP\/1\.1 304 Not Modified\r\n/);
        for (const r of [length, head, notModified]) assert.doesNotMatch(r.data, /^trailer:/im);
      });
    } finally {
      app.close();
    }
  });

  it('answer 502 naming the upstream for a status below 100, a control character in the reason, or a 101 not asked for', async () => {
    const app = await startRawUpstream((head, s) => {
      const path = head.split(' ')[1];
      if (path === '/099') s.end('HTTP/1.1 099 Odd\r\nContent-Length: 2\r\n\r\nok');
      else if (path === '/ctl') s.end('HTTP/1.1 200 O\x01K\r\nContent-Length: 2\r\n\r\nok');
      else s.write('HTTP/1.1 101 Switching Protocols\r\nUpgrade: foo\r\nConnection: Upgrade\r\n\r\n');
    });
    try {
      await withProxy({ upstream: app.url }, async (p, logs) => {
        const status = await send(p.url(), ZONE, '/099');
        assert.equal(status.status, 502);
        assert.match(status.body, new RegExp(`The upstream <code>${app.url}/</code> did not give an answer the proxy could relay: its answer could not be relayed \\(an invalid status line \\(status 99\\)\\)`));
        const reason = await send(p.url(), ZONE, '/ctl');
        assert.equal(reason.status, 502);
        assert.match(reason.body, /a control character in the reason phrase/);
        const switched = await send(p.url(), ZONE, '/switch');
        assert.equal(switched.status, 502);
        assert.match(switched.body, /it switched protocols unasked \(101\)/);
        assert.equal(logs.filter((l) => / 502 upstream /.test(l)).length, 3, logs.join('\n'));
      });
    } finally {
      app.close();
    }
  });
});

describe("the app's answers without a body", () => {
  // docs/proxy.md (Forwarding): status and headers are kept; a 204 and a 304 carry no body, so
  // the connection stays in step for the next request on it.
  it("relays the app's 204 and 304 without a body on a kept-alive connection", async () => {
    // One answer per upstream connection, then it closes (the agent does not reuse it).
    const up = await startRawUpstream((head, s) => {
      const path = head.split(' ')[1];
      if (path === '/204') s.end('HTTP/1.1 204 No Content\r\nx-a: 1\r\n\r\n');
      // An app that wrongly says a 204 has a body: node drops the body, and the proxy its Content-Length.
      else if (path === '/204-length') s.end('HTTP/1.1 204 No Content\r\nContent-Length: 5\r\n\r\nhello');
      else if (path === '/304') s.end('HTTP/1.1 304 Not Modified\r\netag: "v1"\r\n\r\n');
      else s.end('HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nhello');
    });
    try {
      await withProxy({ upstream: up.url }, async (p) => {
        const r = await raw(p.url(), `GET /204 HTTP/1.1\r\nHost: ${ZONE}\r\n\r\nGET /204-length HTTP/1.1\r\nHost: ${ZONE}\r\n\r\nGET /304 HTTP/1.1\r\nHost: ${ZONE}\r\nIf-None-Match: "v1"\r\n\r\nGET /ok HTTP/1.1\r\nHost: ${ZONE}\r\nConnection: close\r\n\r\n`);
        const answers = r.data.split(/(?=HTTP\/1\.1 )/).map((a) => [a.split('\r\n')[0], a.slice(a.indexOf('\r\n\r\n') + 4), /\r\n(transfer-encoding|content-length):/i.test(a) && !a.startsWith('HTTP/1.1 200')]);
        assert.deepEqual(answers, [
          ['HTTP/1.1 204 No Content', '', false],
          ['HTTP/1.1 204 No Content', '', false],
          ['HTTP/1.1 304 Not Modified', '', false],
          ['HTTP/1.1 200 OK', 'hello', false],
        ]);
      });
    } finally {
      up.close();
    }
  });
});

describe('the upstream timeout', () => {
  it("counts the app's time, not a slow upload's", async () => {
    await withProxy({ upstreamTimeoutMs: 500, inspectBodyLimit: 1024 }, async (p) => {
      file.upstream!.seen.length = 0;
      const chunks = Array.from({ length: 8 }, () => 'a'.repeat(512));
      const r = await raw(p.url(), [`POST /upload HTTP/1.1\r\nHost: ${ZONE}\r\nContent-Length: 4096\r\nConnection: close\r\n\r\n`, ...chunks], { gapMs: 150 });
      assert.match(r.data, /^HTTP\/1\.1 200 OK\r\n/);
      assert.match(r.data, /\r\nok POST \/upload\r\n/);
      assert.equal(file.upstream.seen[0]!.bodyBytes, 4096);
    });
  });
});

describe('an app that answers before the upload ends', () => {
  it('has its answer reach the client, and the connection closes after it', async () => {
    const body = 'upload too large, sorry';
    const app = await startRawUpstream((_head, s) => s.end(`HTTP/1.1 413 Payload Too Large\r\nContent-Type: text/plain\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`));
    try {
      await withProxy({ upstream: app.url, inspectBodyLimit: 1024 }, async (p) => {
        const chunks = Array.from({ length: 40 }, () => 'a'.repeat(64 * 1024));
        const r = await raw(p.url(), [`POST /up HTTP/1.1\r\nHost: ${ZONE}\r\nContent-Length: 50000000\r\n\r\n`, ...chunks], { gapMs: 20 });
        assert.match(r.data, /^HTTP\/1\.1 413 Payload Too Large\r\n/);
        assert.match(r.data, /\r\nconnection: close\r\n/i);
        assert.ok(r.data.endsWith(`\r\n\r\n${body}`), r.data);
        assert.equal(r.closed, true);
      });
    } finally {
      app.close();
    }
  });
});

describe('an app that answers before the upload ends, to a client that reads only after writing its whole body', () => {
  it('gets the answer (the rest of the upload is read and dropped, not reset), and the app\'s next request goes on a sound connection', async () => {
    const app = createServer((req, res) => {
      if (req.method === 'POST') return void res.writeHead(413, { 'content-type': 'text/plain', 'content-length': 3 }).end('big');
      res.end(`ok ${req.url}`);
    });
    await new Promise<void>((r) => app.listen(0, '127.0.0.1', r));
    try {
      await withProxy({ upstream: `http://127.0.0.1:${(app.address() as AddressInfo).port}`, inspectBodyLimit: 1024 }, async (p) => {
        const { got, failed } = await uploadThenRead(p.url(), '/up');
        assert.equal(failed, '');
        assert.match(got, /^HTTP\/1\.1 413 Payload Too Large\r\n/);
        assert.ok(got.endsWith('\r\n\r\nbig'), got);
        assert.deepEqual([(await send(p.url(), ZONE, '/after')).body], ['ok /after']);
      });
    } finally {
      app.close();
    }
  });
});

describe('a kept-alive connection the app closed as the next request went out on it', () => {
  it('is sent again on another connection: the client gets the answer, not a 502', async () => {
    let connections = 0;
    const app = await startRawUpstream((_head, s) => {
      connections++;
      s.write('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok');
      // The next request on this connection finds it closed (as an app's idle close just as it went out).
      s.once('data', () => s.destroy());
    });
    try {
      await withProxy({ upstream: app.url }, async (p) => {
        const statuses: number[] = [];
        for (let i = 0; i < 3; i++) statuses.push((await send(p.url(), ZONE, `/n${i}`)).status);
        assert.deepEqual(statuses, [200, 200, 200]);
        assert.equal(connections, 3);
        // Not a POST: the app may have acted on it before the reset (nginx's default too).
        assert.equal((await send(p.url(), ZONE, '/post', { method: 'POST', body: 'x' })).status, 502);
      });
    } finally {
      app.close();
    }
  });
});

describe('a kept-alive connection the app closes after an interim answer', () => {
  it('is not sent again: the app had the request, and the client its 103 once', async () => {
    let requests = 0;
    const app = await startRawUpstream((head, s) => {
      requests++;
      if (head.startsWith('GET /first ')) {
        s.write('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok');
        // The next request on this connection gets a 103, then the connection is reset.
        s.once('data', () => {
          requests++;
          s.write('HTTP/1.1 103 Early Hints\r\nLink: </app.css>; rel=preload\r\n\r\n', () => s.destroy());
        });
      } else s.end('HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok');
    });
    try {
      await withProxy({ upstream: app.url }, async (p) => {
        assert.equal((await send(p.url(), ZONE, '/first')).status, 200);
        const r = await raw(p.url(), `GET /hinted HTTP/1.1\r\nHost: ${ZONE}\r\nConnection: close\r\n\r\n`);
        assert.deepEqual([r.data.match(/HTTP\/1\.1 103 /g)?.length, /HTTP\/1\.1 502 /.test(r.data), requests], [1, true, 2]);
      });
    } finally {
      app.close();
    }
  });
});

describe('a WebSocket handshake the app declines with a streamed answer', () => {
  it('ends the request to the app when the client leaves', async () => {
    const app = await startRawUpstream((_head, s) => {
      s.write('HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n');
      const tick = setInterval(() => s.write('5\r\nhello\r\n'), 50);
      s.on('close', () => clearInterval(tick));
    });
    try {
      await withProxy({ upstream: app.url }, async (p) => {
        const s = rawSocket(p.url());
        s.write(`GET /ws HTTP/1.1\r\nHost: ${ZONE}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n`);
        await new Promise((r) => setTimeout(r, 300));
        assert.equal(app.sockets.size, 1);
        s.destroy();
        for (let i = 0; i < 40 && app.sockets.size > 0; i++) await new Promise((r) => setTimeout(r, 50));
        assert.equal(app.sockets.size, 0);
      });
    } finally {
      app.close();
    }
  });
});

describe('a client that leaves', () => {
  it('while its request is evaluated in a worker leaves no upstream request behind', async () => {
    await withProxy({ workers: 1 }, async (p) => {
      // The worker is up (a blocked request: no connection to the app yet).
      assert.equal((await send(p.url(), ZONE, '/blocked')).status, 403);
      for (let i = 0; i < 3; i++) {
        const s = rawSocket(p.url());
        s.write(`GET /big?mb=64 HTTP/1.1\r\nHost: ${ZONE}\r\n\r\n`, () => s.destroy());
        await new Promise((r) => setTimeout(r, 100));
      }
      await new Promise((r) => setTimeout(r, 1_000));
      // Forwarded or not (a race with the evaluation), no connection to the app stays open streaming into nothing.
      const open = await file.upstream.connections();
      assert.equal(open, 0);
      assert.ok(file.upstream.big.sent < 64 * 1024 * 1024);
    });
  });
});

describe('requests the proxy answers itself or passes as they are', () => {
  it('closes the connection on a malformed request pipelined behind one still being answered', async () => {
    await withProxy({}, async (p) => {
      const r = await raw(p.url(), `GET /one HTTP/1.1\r\nHost: ${ZONE}\r\n\r\nGARBAGE\r\n\r\n`, { waitMs: 2_000 });
      assert.equal(r.closed, true);
      // Never the proxy's 400 where the first request's answer is read.
      assert.doesNotMatch(r.data, /400 Bad Request/);
    });
  });

  it('forwards OPTIONS * as it is', async () => {
    await withProxy({}, async (p) => {
      file.upstream!.seen.length = 0;
      const r = await raw(p.url(), get('OPTIONS', '*'));
      assert.match(r.data, /^HTTP\/1\.1 200 OK\r\n/);
      assert.deepEqual(
        file.upstream.seen.map((s) => `${s.method} ${s.url}`),
        ['OPTIONS *'],
      );
    });
  });

  it('answers CONNECT with 405, and logs it', async () => {
    await withProxy({}, async (p, logs) => {
      const r = await raw(p.url(), `CONNECT ${ZONE}:443 HTTP/1.1\r\nHost: ${ZONE}:443\r\n\r\n`);
      assert.match(r.data, /^HTTP\/1\.1 405 Method Not Allowed\r\n/);
      assert.match(r.data, /it does not tunnel CONNECT\n$/);
      assert.equal(r.closed, true);
      assert.ok(logs.some((l) => /CONNECT app\.test:443 405/.test(l)), logs.join('\n'));
    });
  });

  it('keeps Proxy-Authorization and Proxy-Connection from the app', async () => {
    await withProxy({}, async (p) => {
      file.upstream!.seen.length = 0;
      await send(p.url(), ZONE, '/', { headers: { 'proxy-authorization': 'Basic cHJveHk6c2VjcmV0', 'proxy-connection': 'keep-alive', authorization: 'Bearer app' } });
      const h = file.upstream.seen[0]!.headers;
      assert.equal(h['proxy-authorization'], undefined);
      assert.equal(h['proxy-connection'], undefined);
      assert.equal(h.authorization, 'Bearer app');
    });
  });

  it('answers 408 and closes when the body stops coming after the part the rules read, the app waiting for the rest', async () => {
    await withProxy({ headerTimeoutMs: 300, inspectBodyLimit: 1024 }, async (p, logs) => {
      const r = await raw(p.url(), `POST /y HTTP/1.1\r\nHost: ${ZONE}\r\nContent-Length: 10000\r\n\r\n${'a'.repeat(2000)}`, { waitMs: 3_000 });
      assert.match(r.data, /^HTTP\/1\.1 408 Request Timeout\r\n/);
      assert.equal(r.closed, true);
      assert.ok(r.ms < 2_000, `${r.ms} ms`);
      assert.ok(logs.some((l) => /408 Request Timeout \(the body of POST \/y stalled/.test(l)), logs.join('\n'));
    });
  });

  it('answers 408 and closes when the body stops coming for the header timeout', async () => {
    await withProxy({ headerTimeoutMs: 300 }, async (p, logs) => {
      file.upstream!.seen.length = 0;
      const r = await raw(p.url(), `POST /x HTTP/1.1\r\nHost: ${ZONE}\r\nContent-Length: 10\r\n\r\nabc`, { waitMs: 3_000 });
      assert.match(r.data, /^HTTP\/1\.1 408 Request Timeout\r\n/);
      assert.match(r.data, /the request body stalled for 0\.3 s\n$/);
      assert.equal(r.closed, true);
      assert.ok(r.ms < 2_000, `${r.ms} ms`);
      assert.equal(file.upstream.seen.length, 0);
      assert.ok(logs.some((l) => /408 Request Timeout \(the body of POST \/x stalled/.test(l)), logs.join('\n'));
    });
  });
});

describe('a request the proxy answers itself while its client is still sending the body', () => {
  it('has its block page reach a client that reads only after writing its whole body (the rest is read and dropped, not reset)', async () => {
    await withProxy({ inspectBodyLimit: 1024 }, async (p) => {
      const { got, failed } = await uploadThenRead(p.url(), '/blocked');
      assert.equal(failed, '');
      assert.match(got, /^HTTP\/1\.1 403 Forbidden\r\n/);
      assert.match(got, /\r\nconnection: close\r\n/i);
    });
  });

  it('serves nothing pipelined behind that body: the app never sees it', async () => {
    await withProxy({ inspectBodyLimit: 1024 }, async (p) => {
      file.upstream!.seen.length = 0;
      const body = 'a'.repeat(100_000);
      const r = await raw(p.url(), `POST /blocked HTTP/1.1\r\nHost: ${ZONE}\r\nContent-Length: ${body.length}\r\n\r\n${body}GET /pipelined HTTP/1.1\r\nHost: ${ZONE}\r\n\r\n`, { waitMs: 1_500 });
      assert.match(r.data, /^HTTP\/1\.1 403 Forbidden\r\n/);
      assert.equal(r.data.match(/HTTP\/1\.1 /g)?.length, 1, r.data.slice(0, 400));
      assert.deepEqual(file.upstream!.seen.map((x) => x.url), []);
    });
  });
});
