import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { compileExpression } from '../../../server/src/language/index';
import { DEFAULT_BODY_LIMIT, MAX_BODY_LIMIT, parseBodyLimit, streamedRequest, takeBodyHead, withBodyFiles } from '../../../server/src/requests/body';
import { requestFields, requestValues } from '../../../server/src/requests/fields';
import { parseHttpFile } from '../../../server/src/requests/http';
import type { SampleRequest } from '../../../server/src/requests/types';
import { collectGarbage, minCpuTime } from '../../cpuTime';

const MiB = 1024 * 1024;

/** `n` pseudo-random bytes (a binary string), not UTF-8, built from one 64 KiB block. */
function binary(n: number): string {
  let x = 0x9e3779b9;
  let block = '';
  for (let i = 0; i < 65536; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    block += String.fromCharCode(x & 0xff);
  }
  return block.repeat(Math.ceil(n / 65536)).slice(0, n);
}

const HEAD = '--XyZ\r\nContent-Disposition: form-data; name="note"\r\n\r\nhello\r\n--XyZ\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\nContent-Type: application/octet-stream\r\n\r\n';
const TAIL = '\r\n--XyZ--\r\n';

/** A multipart upload of exactly `size` bytes: a text part, then one file. */
function upload(size: number): SampleRequest {
  return {
    method: 'POST',
    url: 'https://example.com/upload',
    httpVersion: 'HTTP/1.1',
    headers: [['Content-Type', 'multipart/form-data; boundary=XyZ']],
    body: HEAD + binary(size - HEAD.length - TAIL.length) + TAIL,
    meta: {},
  };
}

function textPost(body: string): SampleRequest {
  return { method: 'POST', url: 'https://example.com/', httpVersion: 'HTTP/1.1', headers: [['Content-Type', 'text/plain']], body, meta: {} };
}

/** The length in bytes of a Bytes field value as requestFields gives it (text or `{hex}`). */
const byteLength = (v: unknown): number => (typeof v === 'string' ? Buffer.byteLength(v) : (v as { hex: string }).hex.length / 2);

const matches = (expr: string, req: SampleRequest) => {
  const { filter, diagnostics } = compileExpression(expr);
  assert.ok(filter, JSON.stringify(diagnostics));
  return filter.matches(requestValues(req).values);
};

describe('request bodies: the inspection limit', () => {
  test('a 32 MiB multipart upload: size is the whole, truncated is true, only the first 128 KiB become values', () => {
    const req = upload(32 * MiB);
    const f = requestFields(req).fields;
    assert.equal(f['http.request.body.size'], 33554432);
    assert.equal(f['http.request.body.truncated'], true);
    assert.equal(byteLength(f['http.request.body.raw']), 131072);
    assert.deepEqual(f['http.request.body.multipart.names'], [['note'], ['file']]);
    assert.deepEqual(f['http.request.body.multipart.filenames'], [[], ['big.bin']]);
    const values = f['http.request.body.multipart.values'] as unknown[];
    assert.equal(values[0], 'hello');
    assert.equal(byteLength(values[1]), 131072 - HEAD.length);
    // ModSecurity with ProcessPartial: the length read, the cut flagged; the file part is
    // cut before its closing boundary (a strict-multipart error, not a body error).
    assert.equal(f['crs.request_body_length'], 131072);
    assert.equal(f['crs.files_combined_size'], 131072 - HEAD.length);
    assert.equal(f['crs.inbound_data_error'], true);
    assert.equal(f['crs.reqbody_error'], false);
    assert.equal(f['crs.multipart_strict_error'], true);
    assert.equal(matches('http.request.body.truncated and http.request.body.size == 33554432 and len(http.request.body.raw) == 131072', req), true);
  });

  test('a 32 MiB text upload: the same', () => {
    const req = textPost('a'.repeat(32 * MiB));
    const f = requestFields(req).fields;
    assert.equal(f['http.request.body.size'], 33554432);
    assert.equal(f['http.request.body.truncated'], true);
    assert.equal(f['http.request.body.raw'], 'a'.repeat(131072));
    assert.equal(f['http.request.body.mime'], 'text/plain');
    assert.equal(f['crs.request_body'], 'a'.repeat(131072));
  });

  test('a body of exactly the limit is not truncated; one byte more is', () => {
    const at = requestFields(textPost('b'.repeat(DEFAULT_BODY_LIMIT))).fields;
    assert.deepEqual([at['http.request.body.size'], at['http.request.body.truncated'], at['crs.inbound_data_error']], [131072, false, false]);
    assert.equal(at['http.request.body.raw'], 'b'.repeat(131072));
    const over = requestFields(textPost('b'.repeat(DEFAULT_BODY_LIMIT) + 'c')).fields;
    assert.deepEqual([over['http.request.body.size'], over['http.request.body.truncated'], over['crs.inbound_data_error']], [131073, true, true]);
    assert.equal(over['http.request.body.raw'], 'b'.repeat(131072));
  });

  test('bodyLimit: a form is split within the limit (the value across it is cut)', () => {
    const req: SampleRequest = { ...textPost('a=1&b=2&c=3'), headers: [['Content-Type', 'application/x-www-form-urlencoded']] };
    const f = requestFields(req, { bodyLimit: 10 }).fields;
    assert.deepEqual(JSON.parse(JSON.stringify(f['http.request.body.form.values'])), ['1', '2', '']);
    assert.deepEqual([f['http.request.body.raw'], f['http.request.body.size'], f['http.request.body.truncated']], ['a=1&b=2&c=', 11, true]);
    const none = requestFields(req, { bodyLimit: 0 }).fields;
    assert.deepEqual([none['http.request.body.raw'], none['http.request.body.size'], none['http.request.body.truncated'], none['http.request.body.mime']], ['', 11, true, '']);
  });

  test('a body given by its start and its size (bodySize) is truncated when the size is bigger', () => {
    const f = requestFields({ ...textPost('abc'), bodySize: 1 << 30 }).fields;
    assert.deepEqual([f['http.request.body.raw'], f['http.request.body.size'], f['http.request.body.truncated']], ['abc', 1073741824, true]);
  });

  test('time: the field values of a 32 MiB binary upload cost what those of a 1 MiB one cost', () => {
    const big = upload(32 * MiB);
    const small = upload(1 * MiB);
    const t1 = minCpuTime(() => void requestValues(small), 3, 1);
    const t32 = minCpuTime(() => void requestValues(big), 3, 1);
    // 32x the body; reading it all would cost ~32x, the 128 KiB inspected ~1x.
    assert.ok(t32 / t1 < 3, `1 MiB: ${t1} us, 32 MiB: ${t32} us`);
  });

  test('memory: the field values of a 32 MiB upload hold no more than those of a 4 MiB one', () => {
    const retained = (size: number): number => {
      collectGarbage();
      const before = process.memoryUsage().heapUsed;
      let req: SampleRequest | undefined = upload(size);
      const kept = requestValues(req);
      req = undefined; // the body may go: only what the field values hold stays
      collectGarbage();
      const after = process.memoryUsage().heapUsed;
      assert.equal(kept.fields['http.request.body.size'], size);
      return after - before;
    };
    retained(1 * MiB); // warm up
    const small = retained(4 * MiB);
    const big = retained(32 * MiB);
    // 28 MiB more body; holding it (or a view of it) would add at least that.
    assert.ok(big - small < 2 * MiB, `4 MiB: ${small} bytes kept, 32 MiB: ${big} bytes kept`);
  });
});

describe('streamed bodies (a proxy, a file read in chunks)', () => {
  /** A stream of `total` bytes in chunks of `chunk` (all 0xff), counting the chunks pulled. */
  function counted(total: number, chunk: number): { stream: AsyncIterable<Uint8Array>; pulled: () => number } {
    let pulled = 0;
    const block = new Uint8Array(chunk).fill(0xff);
    async function* gen(): AsyncGenerator<Uint8Array> {
      for (let sent = 0; sent < total; sent += chunk) {
        pulled++;
        yield sent + chunk <= total ? block : block.subarray(0, total - sent);
      }
    }
    return { stream: gen(), pulled: () => pulled };
  }

  test('takeBodyHead stops once the limit is in hand: the head, the chunks read whole, the rest left in the stream', async () => {
    const src = counted(100, 16);
    const r = await takeBodyHead(src.stream, 40);
    assert.equal(r.head, '\xff'.repeat(40));
    assert.deepEqual([r.read, r.ended, r.consumed.length, src.pulled()], [48, false, 3, 3]);
    // The rest is still there for whoever forwards the body.
    let rest = 0;
    for (let s = await r.rest.next(); !s.done; s = await r.rest.next()) rest += s.value.length;
    assert.equal(r.read + rest, 100);
  });

  test('a stream shorter than the limit is read to its end', async () => {
    const r = await takeBodyHead(counted(20, 16).stream, 40);
    assert.deepEqual([r.head.length, r.read, r.ended], [20, 20, true]);
  });

  test('a 1 GiB streamed upload: only the chunks up to the limit are read, and the fields say it was cut', async () => {
    const GiB = 1024 * MiB;
    const src = counted(GiB, 64 * 1024);
    const head = `--b\r\nContent-Disposition: form-data; name="f"; filename="x.bin"\r\n\r\n`;
    const parts = async function* (): AsyncGenerator<Uint8Array> {
      yield new TextEncoder().encode(head);
      yield* src.stream;
    };
    const req = { method: 'POST', url: 'https://example.com/upload', httpVersion: 'HTTP/1.1', headers: [['Content-Type', 'multipart/form-data; boundary=b']] as [string, string][], meta: {} };
    const { request } = await streamedRequest(req, parts(), DEFAULT_BODY_LIMIT, head.length + GiB + 8);
    const f = requestFields(request).fields;
    assert.equal(src.pulled(), 2, 'the 128 KiB limit is in the first two 64 KiB chunks after the part header');
    assert.deepEqual([f['http.request.body.size'], f['http.request.body.truncated'], f['crs.inbound_data_error']], [head.length + GiB + 8, true, true]);
    assert.deepEqual(f['http.request.body.multipart.filenames'], [['x.bin']]);
  });

  test('without a declared size, a body cut at the limit reads as truncated, its size limit + 1 however its pieces came', async () => {
    const req = { method: 'POST', url: 'https://example.com/', httpVersion: 'HTTP/1.1', headers: [] as [string, string][], meta: {} };
    const sizes = [];
    for (const piece of [100, 7, 1000]) {
      const { request } = await streamedRequest(req, counted(1000, piece).stream, 250);
      const f = requestFields(request, { bodyLimit: 250 }).fields;
      sizes.push([f['http.request.body.size'], f['http.request.body.truncated']]);
    }
    assert.deepEqual(sizes, [
      [251, true],
      [251, true],
      [251, true],
    ]);
    // Ended within the limit: its whole size.
    const { request } = await streamedRequest(req, counted(200, 7).stream, 250);
    assert.deepEqual([request.bodySize, request.body?.length], [200, 200]);
  });
});

describe('body files (< ./file in .http)', () => {
  test('the .http parser turns `< path` lines into body segments, line breaks kept', () => {
    const text = 'POST https://example.com/upload\nContent-Type: multipart/form-data; boundary=b\n\n--b\nContent-Disposition: form-data; name="f"; filename="x.bin"\n\n< ./x.bin\n--b--\n';
    const r = parseHttpFile(text);
    assert.deepEqual(r.problems, []);
    assert.deepEqual(r.requests[0]!.bodySegments, ['--b\nContent-Disposition: form-data; name="f"; filename="x.bin"\n\n', { file: './x.bin', line: 6 }, '\n--b--']);
    assert.equal(r.requests[0]!.body, undefined);
    // Not read: the text only, and a problem naming the file.
    assert.deepEqual(requestFields(r.requests[0]!).problems, ['the body file "./x.bin" (line 7) was not read here; its content counts as empty']);
  });

  test('withBodyFiles reads a 1 GiB file only up to the limit and counts the rest', () => {
    const asked: [string, number][] = [];
    const req: SampleRequest = { method: 'POST', url: 'https://example.com/', httpVersion: 'HTTP/1.1', headers: [], meta: {}, bodySegments: ['head:', { file: 'big.bin', line: 3 }, ':tail'] };
    const r = withBodyFiles(req, 8, (path, maxBytes) => {
      asked.push([path, maxBytes]);
      return { head: 'x'.repeat(maxBytes), size: 1 << 30 };
    });
    assert.deepEqual(asked, [['big.bin', 3]]);
    assert.deepEqual(r.problems, []);
    assert.deepEqual([r.request.body, r.request.bodySize, r.request.bodySegments], ['head:xxx', 5 + 1073741824 + 5, undefined]);
    const f = requestFields(r.request, { bodyLimit: 8 }).fields;
    assert.deepEqual([f['http.request.body.raw'], f['http.request.body.size'], f['http.request.body.truncated']], ['head:xxx', 1073741834, true]);
  });

  test('a file that cannot be read is a problem on its line and counts as empty', () => {
    const req: SampleRequest = { method: 'POST', url: 'https://example.com/', httpVersion: 'HTTP/1.1', headers: [], meta: {}, bodySegments: ['a', { file: 'gone.bin', line: 4 }] };
    const r = withBodyFiles(req, 100, () => {
      throw new Error('no such file (ENOENT)');
    });
    assert.deepEqual(r.problems, [{ line: 4, message: 'cannot read the body file "gone.bin": no such file (ENOENT)' }]);
    assert.deepEqual([r.request.body, r.request.bodySize], ['a', 1]);
  });
});

describe('parseBodyLimit', () => {
  test('whole numbers of bytes up to 64 MiB; anything else is a clear error', () => {
    assert.deepEqual(parseBodyLimit('131072', '--body-limit'), { limit: 131072 });
    assert.deepEqual(parseBodyLimit('0', '--body-limit'), { limit: 0 });
    assert.deepEqual(parseBodyLimit(String(MAX_BODY_LIMIT), '--body-limit'), { limit: 67108864 });
    assert.deepEqual(parseBodyLimit('67108865', '--body-limit'), { error: '--body-limit: 67108865 bytes is more than the largest limit, 67108864 (64 MiB)' });
    for (const bad of ['128k', '1e5', '-1', '1.5', '', '0x10']) {
      assert.deepEqual(parseBodyLimit(bad, '--body-limit'), { error: `--body-limit: expected a whole number of bytes (e.g. 131072 for 128 KiB), got ${JSON.stringify(bad)}` });
    }
  });
});
