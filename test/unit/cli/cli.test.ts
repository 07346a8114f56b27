import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import type { Io } from '../../../server/src/cli/io';
import { main } from '../../../server/src/cli/main';

const fixtures = new URL('../../fixtures/cli/', import.meta.url).pathname;
const root = new URL('../../../', import.meta.url).pathname;

function run(args: string[], stdin = ''): { code: number; out: string; err: string; written: Record<string, string> } {
  let out = '';
  let err = '';
  const written: Record<string, string> = {};
  const io: Io = {
    out: (s) => void (out += s),
    err: (s) => void (err += s),
    readFile: (p) => readFileSync(p.startsWith('/') ? p : fixtures + p, 'utf8'),
    writeFile: (p, t) => void (written[p] = t),
    readStdin: () => stdin,
  };
  return { code: main(args, io), out, err, written };
}

test('check --expr prints the engine layout and exits 1 on errors', () => {
  const r = run(['check', '--expr', 'http.host eq 80']);
  assert.equal(r.code, 1);
  assert.equal(
    r.out,
    [
      '--expr: error[invalid-hex-bytes]',
      'Filter parsing error (1:16):',
      'http.host eq 80',
      '               ^ expected 1 characters, but found 0',
      'hint: Strings need double quotes: `"value"`. Unquoted values are read as hex bytes (`41:42`).',
      '',
      '1 error, 0 warnings in 1 expression',
      '',
    ].join('\n'),
  );
});

test('check of a valid file exits 0', () => {
  const r = run(['check', 'valid.cfrule']);
  assert.equal(r.code, 0);
  assert.equal(r.out, 'ok: 1 expression checked, no problems\n');
});

test('check --format json: positions in ruleset JSON are mapped through escapes', () => {
  const r = run(['check', '--format', 'json', 'escaped.ruleset.json']);
  assert.equal(r.code, 1);
  const findings = JSON.parse(r.out);
  assert.equal(findings.length, 1);
  // Line 3 of the file: the expression string starts after `"expression": "`; \" and \u00e9 are 2 and 6 source characters.
  const line = readFileSync(fixtures + 'escaped.ruleset.json', 'utf8').split('\n')[3];
  const col = line.indexOf('http.hots');
  assert.deepEqual(findings[0], {
    file: 'escaped.ruleset.json',
    rule: 1,
    range: { start: { line: 3, character: col }, end: { line: 3, character: col + 'http.hots'.length } },
    severity: 'error',
    code: 'unknown-identifier',
    origin: 'expression',
    message: 'unknown identifier',
    hint: '`http.hots` is not a field: did you mean `http.host`?',
  });
});

test('check --expr in JSON has file and rule null', () => {
  const r = run(['check', '--format', 'json', '--expr', 'ssl and']);
  assert.deepEqual(JSON.parse(r.out), [
    {
      file: null,
      rule: null,
      range: { start: { line: 0, character: 7 }, end: { line: 0, character: 7 } },
      severity: 'error',
      code: 'syntax-error',
      origin: 'expression',
      message: 'expected identifier character',
      hint: 'A field, a function call, `not`, `any(…)` or `(` is expected here.',
    },
  ]);
});

test('plan and phase options turn on entitlement warnings; warnings alone exit 0', () => {
  const r = run(['check', '--plan', 'pro', '--expr', 'http.host matches "a" and cf.bot_management.score lt 30']);
  assert.equal(r.code, 0);
  assert.match(r.out, /warning\[plan-required\]/);
});

test('bad usage exits 2 with a message', () => {
  for (const args of [[], ['check'], ['check', '--plan', 'gold', '--expr', 'ssl'], ['check', '--format', 'xml', '--expr', 'ssl'], ['frobnicate'], ['check', 'missing.cfrule'], ['eval', '--expr', 'ssl']]) {
    const r = run(args);
    assert.equal(r.code, 2, args.join(' '));
  }
  assert.match(run(['check', '--plan', 'gold', '--expr', 'ssl']).err, /--plan must be one of free, pro, business, enterprise \(got "gold"\)/);
  assert.match(run(['check', 'missing.cfrule']).err, /^rulesmith: cannot read missing\.cfrule: no such file or folder \(ENOENT\)\n$/);
});

test('eval prints true/false and JSON', () => {
  assert.deepEqual(run(['eval', '--expr', 'http.host eq "a.example" and ip.src in {192.0.2.0/24} and ssl', '--fields', 'fields.json']), { code: 0, out: 'true\n', err: '', written: {} });
  assert.equal(run(['eval', '--expr', 'cf.threat_score gt 10', '--fields', 'fields.json', '--format', 'json']).out, '{"matched":false}\n');
  assert.equal(run(['eval', '--expr', 'http.request.headers["x-a"][0] eq "1"', '--fields', '-'], '{"http.request.headers": {"x-a": ["1"]}}').out, 'true\n');
});

test('eval rejects invalid expressions and field values with exit 2', () => {
  const bad = run(['eval', '--expr', 'http.hots eq "a"', '--fields', 'fields.json']);
  assert.equal(bad.code, 2);
  assert.match(bad.err, /unknown identifier/);
  const badFields = run(['eval', '--expr', 'ssl', '--fields', '-'], '{"ip.src": "300.1.1.1"}');
  assert.equal(badFields.code, 2);
  assert.match(badFields.err, /^<stdin>: ip\.src: [^\n]*300\.1\.1\.1/);
  assert.doesNotMatch(badFields.err, /ip\.src: ip\.src/);
  // An input problem, said in words without the usage text.
  const notObject = run(['eval', '--expr', 'ssl', '--fields', '-'], '[]');
  assert.deepEqual([notObject.code, notObject.err], [2, 'rulesmith: <stdin> must hold a JSON object of field values, e.g. {"http.host": "example.com"}\n']);
  const notJson = run(['eval', '--expr', 'ssl', '--fields', '-'], '{nope');
  assert.equal(notJson.code, 2);
  assert.match(notJson.err, /^rulesmith: cannot read field values from <stdin>: invalid JSON: [^\n]+\n$/);
  assert.deepEqual(run(['eval', '--expr', 'ssl', '--fields', 'missing.json']), { code: 2, out: '', err: 'rulesmith: cannot read field values from missing.json: no such file or folder (ENOENT)\n', written: {} });
});

test('format: stdin to stdout, files in place, --check', () => {
  assert.deepEqual(run(['format'], 'http.host  eq   "a"   and(ssl)'), { code: 0, out: 'http.host eq "a" and (ssl)\n', err: '', written: {} });
  assert.equal(run(['format', '--notation', 'c-like'], 'http.host eq "a" and ssl').out, 'http.host == "a" && ssl\n');
  const inPlace = run(['format', 'unformatted.cfrule']);
  assert.deepEqual(inPlace.written, { 'unformatted.cfrule': 'http.host eq "a" and (ssl)\n' });
  assert.equal(run(['format', '--check', 'unformatted.cfrule']).code, 1);
  assert.equal(run(['format', '--check', 'valid.cfrule']).code, 0);
  assert.equal(run(['format'], 'http.host eq').code, 1);
  // A Windows checkout's CRLF is kept, and --check judges stdin as it judges a file's text (one line ending at the end).
  assert.deepEqual([run(['format', '--check'], 'http.host eq "a"\r\n').code, run(['format'], 'http.host  eq "a"\r\n').out], [0, 'http.host eq "a"\r\n']);
  assert.deepEqual([run(['format', '--check'], 'http.host eq "a"\n').code, run(['format', '--check'], 'http.host eq "a"').code, run(['format', '--check'], 'http.host eq "a"\n\n\n').code], [0, 1, 1]);
  for (const w of ['1e2', '0x40', ' 50', '19']) assert.match(run(['format', '--width', w], 'ssl').err, /--width must be a whole number of at least 20/, w);
});

test('the built binary runs with the documented exit codes', () => {
  const cli = root + 'server/out/cli.js';
  assert.equal(spawnSync(process.execPath, [cli, 'check', '--expr', 'ssl']).status, 0);
  assert.equal(spawnSync(process.execPath, [cli, 'check', '--expr', 'ssl and']).status, 1);
  assert.equal(spawnSync(process.execPath, [cli, 'check']).status, 2);
});

test('an option given twice is refused, not silently replaced by the last', () => {
  const r = run(['check', '--expr', 'http.hots eq 1', '--expr', 'true']);
  assert.equal(r.code, 2);
  assert.match(r.err, /^rulesmith: --expr is given more than once; give it once \(to check several expressions, put each in a \.cfrule file\)\n/);
  const e = run(['eval', '--config', 'a.json', '--requests', 'x.http', '--requests', 'y.http']);
  assert.equal(e.code, 2);
  assert.match(e.err, /^rulesmith: --requests is given more than once; give it once\n/);
  // --custom may repeat.
  assert.doesNotMatch(run(['eval', '--config', 'a.json', '--custom', 'b.json', '--custom', 'c.json', '--requests', 'x.http']).err, /more than once/);
});

test('format: a file that cannot be written is reported and left as it was (exit 2); the other files are formatted', () => {
  let out = '';
  let err = '';
  const written: string[] = [];
  const io: Io = {
    out: (s) => void (out += s),
    err: (s) => void (err += s),
    readFile: (p) => readFileSync(fixtures + p, 'utf8'),
    writeFile: (p) => {
      if (written.length === 0 && !err) throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
      written.push(p);
    },
    readStdin: () => '',
  };
  assert.equal(main(['format', 'unformatted.cfrule', 'unformatted.cfrule'], io), 2);
  assert.equal(err, 'rulesmith: cannot write unformatted.cfrule: no space left on the device (ENOSPC); it is unchanged\n');
  assert.deepEqual(written, ['unformatted.cfrule']);
  assert.equal(out, 'formatted unformatted.cfrule\n');
});

test('the built binary: output into a closed pipe ends quietly (no EPIPE stack trace)', async () => {
  const { spawn } = await import('node:child_process');
  const child = spawn(process.execPath, [root + 'server/out/cli.js', 'check', '--format', 'json', root + 'examples/zone.ruleset.json'], { stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout.destroy();
  let err = '';
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const code = await new Promise((r) => child.on('close', r));
  assert.equal(err, '');
  assert.notEqual(code, null);
});

test('--help after a command prints the usage and exits 0; after `--` it is a file name', () => {
  for (const args of [['--help'], ['eval', '--help'], ['check', '-h'], ['serve', '--port', '1', '--help']]) {
    const r = run(args);
    assert.equal(r.code, 0, args.join(' '));
    assert.match(r.out, /^Usage:\n {2}rulesmith check /, args.join(' '));
    assert.equal(r.err, '');
  }
  const r = run(['check', '--', '--help']);
  assert.equal(r.code, 2);
  assert.equal(r.out, '');
  assert.match(r.err, /--help/);
});
