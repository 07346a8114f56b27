// `rulesmith terraform export`'s API token (an empty RULESMITH_API_TOKEN falls back to
// CLOUDFLARE_API_TOKEN; a token that cannot be a header value is refused without being shown;
// error text never shows it) and `terraform import --out DIR` (the folder is made; a folder
// that cannot be written is said in words, exit 2).
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { writeTextAtomic } from '../../../server/src/cli/files';
import type { Io } from '../../../server/src/cli/io';
import { run } from '../../../server/src/cli/main';
import { runTerraformCommand } from '../../../server/src/cli/terraform';

const fixtures = new URL('../../fixtures/terraform/', import.meta.url).pathname;

function io(): Io & { text: () => { out: string; err: string } } {
  let out = '';
  let err = '';
  return {
    out: (s) => void (out += s),
    err: (s) => void (err += s),
    readFile: (p) => readFileSync(p.startsWith('/') ? p : fixtures + p, 'utf8'),
    writeFile: (p, t) => writeTextAtomic(p, t),
    readStdin: () => '',
    text: () => ({ out, err }),
  };
}

// An API that accepts one token and, for any other, echoes the Authorization header in its error.
const GOOD = 'good-token-123';
let server: Server;
let api = '';
before(async () => {
  server = createServer((req, res) => {
    res.setHeader('content-type', 'application/json');
    if (req.headers.authorization !== `Bearer ${GOOD}`) {
      res.statusCode = 403;
      res.end(JSON.stringify({ success: false, errors: [{ code: 9109, message: `Invalid access token: ${req.headers.authorization}` }] }));
      return;
    }
    res.end(JSON.stringify({ success: true, result: [] }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  api = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => new Promise<void>((resolve) => server.close(() => resolve())));

test('terraform export: an empty RULESMITH_API_TOKEN falls back to CLOUDFLARE_API_TOKEN', async () => {
  const o = io();
  assert.equal(await runTerraformCommand(['export', '--zone', 'z', '--api', api], o, { RULESMITH_API_TOKEN: '', CLOUDFLARE_API_TOKEN: GOOD }), 0, o.text().err);
  assert.equal(o.text().err, '');
  // Both empty: the usage error, as with neither set.
  assert.throws(() => runTerraformCommand(['export', '--zone', 'z', '--api', api], io(), { RULESMITH_API_TOKEN: '', CLOUDFLARE_API_TOKEN: '' }), /set RULESMITH_API_TOKEN \(or CLOUDFLARE_API_TOKEN\)/);
});

test('terraform export: a token that cannot be a header value is refused up front, without showing it', () => {
  for (const [env, variable, value] of [
    [{ RULESMITH_API_TOKEN: 'bad\ntoken' }, 'RULESMITH_API_TOKEN', 'bad\ntoken'],
    [{ CLOUDFLARE_API_TOKEN: 'bad token' }, 'CLOUDFLARE_API_TOKEN', 'bad token'],
    [{ RULESMITH_API_TOKEN: 'bad\u00e9token', CLOUDFLARE_API_TOKEN: GOOD }, 'RULESMITH_API_TOKEN', 'bad\u00e9token'],
  ] as const) {
    assert.throws(
      () => runTerraformCommand(['export', '--zone', 'z', '--api', api], io(), env),
      (e: Error & { lines?: string[] }) => {
        assert.deepEqual(e.lines, [`rulesmith: ${variable} is not an API token: it must be printable ASCII without spaces or line breaks (the value is not shown)`]);
        assert.ok(!e.message.includes(value));
        return true;
      },
    );
  }
});

test('terraform export: an API error that echoes the Authorization header is printed without the token', async () => {
  const token = 'secret-token-XYZ';
  const o = io();
  assert.equal(await runTerraformCommand(['export', '--zone', 'z', '--api', api], o, { RULESMITH_API_TOKEN: token }), 2);
  assert.equal(o.text().err, 'rulesmith terraform export: GET /zones/z/rulesets: 403 Invalid access token: Bearer *** (9109)\n');
  assert.doesNotMatch(o.text().err, /secret/);
});

test('terraform import --out: a missing folder is made; a file in its place is an error in words (exit 2)', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'rulesmith-out-'));
  const missing = join(dir, 'a', 'b');
  const o = io();
  assert.equal(await run(['terraform', 'import', '--out', missing, 'export-v4.tf'], o), 0, o.text().err);
  assert.deepEqual(readdirSync(missing).sort(), ['custom_shop_rules.ruleset.json', 'http_request_firewall_custom.ruleset.json', 'http_request_firewall_managed.ruleset.json']);

  const file = join(dir, 'file');
  writeFileSync(file, 'x');
  const f = io();
  assert.equal(await run(['terraform', 'import', '--out', file, 'export-v4.tf'], f), 2);
  assert.equal(f.text().err, `rulesmith: cannot write ${file}: it is a file, not a folder (EEXIST)\n`);

  // A write that fails (here: a folder where the file goes).
  const blocked = join(dir, 'blocked');
  const w = io();
  assert.equal(await run(['terraform', 'import', '--out', blocked, 'export-v4.tf'], { ...w, writeFile: () => { throw Object.assign(new Error('EACCES: permission denied'), { code: 'EACCES' }); } }), 2);
  assert.equal(w.text().err, `rulesmith: cannot write ${join(blocked, 'http_request_firewall_custom.ruleset.json')}: permission denied (EACCES)\n`);
});

test('an --api URL with a user name or password is refused before anything is sent, without printing it', () => {
  assert.throws(
    () => runTerraformCommand(['export', '--zone', 'z', '--api', 'http://u:s3cret@127.0.0.1:9/client/v4'], io(), { RULESMITH_API_TOKEN: 'tok' }),
    (e: Error & { lines?: string[] }) => {
      assert.deepEqual(e.lines, ["rulesmith: --api holds a user name or password; give the API's base URL alone (the token goes in RULESMITH_API_TOKEN)"]);
      assert.ok(!e.message.includes('s3cret'));
      return true;
    },
  );
  assert.throws(() => runTerraformCommand(['export', '--zone', 'z', '--api', 'ftp://127.0.0.1/'], io(), { RULESMITH_API_TOKEN: 'tok' }), /--api takes the API's base URL, e\.g\. https:\/\/api\.cloudflare\.com\/client\/v4/);
});
