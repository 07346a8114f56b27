// `rulesmith eval --requests FILE.http` with body files (`< ./file`) and `--body-limit`:
// a 1 GiB upload (a sparse file, nothing written) is read only up to the limit.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import type { Io } from '../../../server/src/cli/io';
import { main } from '../../../server/src/cli/main';
import { readHead } from '../../../server/src/cli/files';

const dir = mkdtempSync(join(tmpdir(), 'rulesmith-body-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const managed = new URL('../../fixtures/engine/managed.entry.ruleset.json', import.meta.url).pathname;

writeFileSync(
  join(dir, 'custom.json'),
  JSON.stringify({
    phase: 'http_request_firewall_custom',
    rules: [{ ref: 'cut-body', expression: 'http.request.body.truncated and http.request.body.size == 1073741896', action: 'log' }],
  }),
);
const HEAD = '--b\r\nContent-Disposition: form-data; name="f"; filename="big.bin"\r\n\r\n';
writeFileSync(join(dir, 'upload.http'), `POST https://example.com/upload\nContent-Type: multipart/form-data; boundary=b\n\n${HEAD.replace(/\r\n/g, '\n')}< ./big.bin\n--b--\n`);
writeFileSync(join(dir, 'big.bin'), '');
truncateSync(join(dir, 'big.bin'), 1 << 30);

function run(args: string[]): { code: number; out: string; err: string } {
  let out = '';
  let err = '';
  const heads: number[] = [];
  const io: Io = {
    out: (s) => void (out += s),
    err: (s) => void (err += s),
    readFile: (p) => readFileSync(p, 'utf8'),
    writeFile: () => assert.fail('eval writes no files'),
    readStdin: () => '',
    readHead: (p, n) => {
      heads.push(n);
      return readHead(p, n);
    },
  };
  const code = main(args, io);
  if (heads.length) assert.ok(Math.max(...heads) <= 131072, `read ${heads.join(', ')} bytes`);
  return { code, out, err };
}

const ARGS = ['eval', '--config', join(dir, 'custom.json'), '--config', managed, '--requests', join(dir, 'upload.http'), '--plan', 'enterprise', '--format', 'json'];

describe('eval: request bodies', () => {
  test('a 1 GiB body file is read up to the limit: size the whole, truncated true, the rules run', () => {
    const r = run(ARGS);
    assert.equal(r.err, '');
    assert.equal(r.code, 0);
    const [res] = JSON.parse(r.out) as { matched: { ref?: string; outcome: string }[] }[];
    assert.deepEqual(res.matched.filter((m) => m.ref === 'cut-body').map((m) => m.outcome), ['logged']);
  });

  test('--body-limit larger than the body: nothing is cut, the rule does not match', () => {
    writeFileSync(join(dir, 'small.http'), 'POST https://example.com/\nContent-Type: text/plain\n\nhello\n');
    const r = run(['eval', '--config', join(dir, 'custom.json'), '--requests', join(dir, 'small.http'), '--plan', 'enterprise', '--format', 'json', '--body-limit', '5']);
    assert.equal(r.code, 0);
    assert.deepEqual((JSON.parse(r.out) as { matched: unknown[] }[])[0].matched, []);
  });

  test('--body-limit must be a whole number of bytes up to 64 MiB', () => {
    for (const [bad, message] of [
      ['128k', '--body-limit: expected a whole number of bytes (e.g. 131072 for 128 KiB), got "128k"'],
      ['67108865', '--body-limit: 67108865 bytes is more than the largest limit, 67108864 (64 MiB)'],
    ]) {
      const r = run([...ARGS, '--body-limit', bad]);
      assert.equal(r.code, 2);
      assert.ok(r.err.includes(message), r.err);
    }
  });

  test('a body file that does not exist: exit 2 with the file, the line and where it was looked for', () => {
    writeFileSync(join(dir, 'missing.http'), 'POST https://example.com/\n\n< ./nope.bin\n');
    const r = run(['eval', '--config', join(dir, 'custom.json'), '--requests', join(dir, 'missing.http')]);
    assert.equal(r.code, 2);
    assert.ok(r.err.includes(`missing.http:3: cannot read the body file "./nope.bin": `) && r.err.includes(`(looked for ${join(dir, 'nope.bin')}: a relative path is from the requests file's folder)`), r.err);
  });
});
