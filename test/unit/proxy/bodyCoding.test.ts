// A compressed request body is read by the rules decoded (gzip, deflate, br, and codings
// chained), at most the inspection limit of it however far it expands; a coding the proxy
// cannot decode, or bytes that are not what their coding says, are refused.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { brotliCompressSync, deflateRawSync, deflateSync, gzipSync } from 'node:zlib';
import { contentCodings, decodeBody } from '../../../server/src/proxy/bodyCoding';

const FORM = Buffer.from('q=evil&x=1');
const text = (d: Awaited<ReturnType<typeof decodeBody>>) => (d && 'body' in d ? [d.body.toString('latin1'), d.size] : d);

describe('decodeBody', () => {
  it('decodes gzip, deflate (zlib-wrapped or raw) and br, and codings applied one after another', async () => {
    const cases: [string, Buffer][] = [
      ['gzip', gzipSync(FORM)],
      ['X-Gzip', gzipSync(FORM)],
      ['deflate', deflateSync(FORM)],
      ['deflate', deflateRawSync(FORM)],
      ['br', brotliCompressSync(FORM)],
      // Applied gzip first, then br: undone br first.
      ['gzip, br', brotliCompressSync(gzipSync(FORM))],
      ['identity, gzip', gzipSync(FORM)],
    ];
    for (const [coding, bytes] of cases) assert.deepEqual(text(await decodeBody(coding, bytes, true, 1024)), ['q=evil&x=1', 10], coding);
  });

  it('names no coding, or has no body: nothing to decode', async () => {
    assert.equal(await decodeBody(undefined, FORM, true, 1024), undefined);
    assert.equal(await decodeBody('deflate', Buffer.alloc(0), true, 1024), undefined);
    assert.equal(await decodeBody('zstd', Buffer.alloc(0), true, 1024), undefined);
    assert.equal(await decodeBody(' identity ', FORM, true, 1024), undefined);
    assert.deepEqual(contentCodings('GZIP , identity,br'), ['gzip', 'br']);
  });

  it('keeps at most the limit of a body that expands past it (a gzip bomb), its size "more than the limit"', async () => {
    const bomb = gzipSync(Buffer.alloc(64 * 1024 * 1024));
    assert.ok(bomb.length < 100_000);
    const d = await decodeBody('gzip', bomb, true, 4096);
    assert.ok(d && 'body' in d);
    assert.deepEqual([d.body.length, d.size, d.body.every((b) => b === 0)], [4096, 4097, true]);
  });

  it('decodes the first bytes of a body the proxy holds only in part, its size "more than the limit"', async () => {
    const long = Buffer.from(`q=${'a'.repeat(20_000)}evil`);
    const gz = gzipSync(long);
    const d = await decodeBody('gzip', gz.subarray(0, 40), false, 1024);
    assert.ok(d && 'body' in d && d.size === 1025 && d.body.toString('latin1').startsWith('q=aaa'), JSON.stringify(d && 'body' in d ? [d.body.length, d.size] : d));
  });

  it('refuses a coding it cannot decode (415) and bytes that are not their coding (400)', async () => {
    assert.deepEqual(await decodeBody('zstd', FORM, true, 1024), { refused: { status: 415, reason: 'Content-Encoding "zstd": the rules could not read the body (the proxy decodes gzip, deflate and br)' } });
    assert.deepEqual(await decodeBody('gzip, compress', gzipSync(FORM), true, 1024), { refused: { status: 415, reason: 'Content-Encoding "compress": the rules could not read the body (the proxy decodes gzip, deflate and br)' } });
    assert.deepEqual(await decodeBody('gzip', FORM, true, 1024), { refused: { status: 400, reason: 'the body is not valid gzip (no gzip header)' } });
  });
});

describe('bytes a decoder would skip, which an app that does not inflate reads', () => {
  const payload = Buffer.from('&q=evil&');
  const refusal = async (coding: string, bytes: Buffer) => {
    const d = await decodeBody(coding, bytes, true, 1024);
    return d && 'refused' in d ? d.refused.reason : d;
  };

  it('refuses a gzip header with a name, comment or extra field, a second member, and bytes after the data', async () => {
    const withFlag = (flag: number, field: Buffer) => {
      const gz = gzipSync('a=1');
      return Buffer.concat([gz.subarray(0, 3), Buffer.from([flag]), gz.subarray(4, 10), field, gz.subarray(10)]);
    };
    const skipped = 'the body is not valid gzip (a gzip header with a comment or extra field, which the rules would not read; compress without them)';
    assert.equal(await refusal('gzip', withFlag(16, Buffer.concat([payload, Buffer.from([0])]))), skipped);
    assert.equal(await refusal('gzip', withFlag(4, Buffer.concat([Buffer.from([payload.length, 0]), payload]))), skipped);
    assert.equal(await refusal('gzip', withFlag(8, Buffer.concat([payload, Buffer.from([0])]))), 'the body is not valid gzip (a gzip header whose file name is not a plain one (letters, digits, ., _, -), which the rules would not read; compress with gzip -n)');
    // The name `gzip payload.json` stores: decoded as any gzip.
    assert.deepEqual(text(await decodeBody('gzip', withFlag(8, Buffer.from('payload.json\0')), true, 1024)), ['a=1', 3]);
    assert.equal(await refusal('gzip', Buffer.concat([gzipSync('a=1'), gzipSync('&q=evil')])), 'the body is not valid gzip (27 bytes after the end of the compressed data)');
    assert.equal(await refusal('gzip', Buffer.concat([gzipSync('a=1'), payload])), 'the body is not valid gzip (8 bytes after the end of the compressed data)');
    assert.equal(await refusal('gzip', gzipSync('a=1').subarray(0, -4)), 'the body is not valid gzip (the compressed data is cut short)');
    // The trailer's 8 bytes are the data's CRC-32 and size, not free bytes (`&q=' OR` there).
    const forged = Buffer.concat([gzipSync('a=1').subarray(0, -8), Buffer.from("&q=' OR1")]);
    assert.equal(await refusal('gzip', forged), 'the body is not valid gzip (its trailer is not the CRC-32 and size of its data)');
  });

  it('refuses more than three codings in turn (each is a pass over the limit)', async () => {
    let body = Buffer.from('a=1');
    for (let i = 0; i < 4; i++) body = gzipSync(body);
    assert.equal(await refusal('gzip, gzip, gzip, gzip', body), 'Content-Encoding names 4 codings: the proxy decodes at most 3 in turn');
    const three = gzipSync(gzipSync(gzipSync('a=1')));
    assert.deepEqual(text(await decodeBody('gzip,gzip,gzip', three, true, 1024)), ['a=1', 3]);
  });

  it('refuses bytes after the end of a deflate (wrapped or raw) or br stream', async () => {
    for (const [coding, bytes] of [['deflate', deflateSync('a=1')], ['deflate', deflateRawSync('a=1')], ['br', brotliCompressSync('a=1')]] as const) {
      assert.equal(await refusal(coding, Buffer.concat([bytes, payload])), `the body is not valid ${coding} (8 bytes after the end of the compressed data)`, coding);
    }
  });
});
