// Failures that are not findings never exit 1 (which CI reads as "errors found"): an
// internal error (a bug) exits 2 with one line naming the file, and stdin that is not UTF-8
// is unusable input (exit 2), said in words, as for a file.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { Io } from '../../../server/src/cli/io';
import { run } from '../../../server/src/cli/main';

const cli = new URL('../../../server/out/cli.js', import.meta.url).pathname;

test('the built binary: a crash (stack overflow on deeply nested JSON) exits 2 with one line naming the file, no stack', () => {
  const file = join(mkdtempSync(join(tmpdir(), 'rulesmith-deep-')), 'deep.json');
  writeFileSync(file, `${'['.repeat(5000)}${']'.repeat(5000)}\n`);
  const r = spawnSync(process.execPath, [cli, 'check', '--format', 'sarif', file], { encoding: 'utf8' });
  assert.equal(r.status, 2, r.stderr);
  assert.equal(r.stdout, '');
  assert.equal(
    r.stderr,
    `rulesmith: internal error while running check on ${file}: RangeError: Maximum call stack size exceeded (a bug in rulesmith: please report it with the command and the input)\n`,
  );
  assert.doesNotMatch(r.stderr, /\n\s+at /);
});

test('an unexpected error exits 2 on one line, from a synchronous command as from an asynchronous one', async () => {
  const sink = (files: Record<string, string>, message: string) => {
    let err = '';
    const io: Io = {
      // Printing the findings fails: an error that is no finding, no usage and no input problem.
      out: () => {
        throw new TypeError(message);
      },
      err: (s) => void (err += s),
      readFile: (p) => files[p]!,
      writeFile: () => undefined,
      readStdin: () => '',
    };
    return { io, err: () => err };
  };
  const sync = sink({}, 'out broke\n    at somewhere');
  assert.equal(run(['check', '--expr', 'ssl'], sync.io), 2);
  assert.equal(sync.err(), 'rulesmith: internal error while running check: TypeError: out broke at somewhere (a bug in rulesmith: please report it with the command and the input)\n');
  // A .tf file makes check asynchronous (HashiCorp's parser).
  const async = sink({ 'main.tf': 'resource "cloudflare_filter" "f" {\n  expression = "ssl"\n}\n' }, 'late');
  const code = run(['check', 'main.tf'], async.io);
  assert.ok(code instanceof Promise);
  assert.equal(await code, 2);
  assert.equal(async.err(), 'rulesmith: internal error while running check: TypeError: late (a bug in rulesmith: please report it with the command and the input)\n');
});

test('format: stdin that is not UTF-8 exits 2 with the reason, no stack', () => {
  const r = spawnSync(process.execPath, [cli, 'format'], { input: Buffer.from([0x73, 0x73, 0xff]), encoding: 'utf8' });
  assert.equal(r.status, 2);
  assert.equal(r.stdout, '');
  assert.equal(r.stderr, 'rulesmith: cannot read <stdin>: not UTF-8 (byte 0xff at offset 2); save it as UTF-8\n');
});
