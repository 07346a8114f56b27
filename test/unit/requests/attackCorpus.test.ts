// The paranoia preview's attack corpus: which ftw stages are attacks, the compact file the
// build writes (scripts/attack-corpus.ts) and reads back, even sampling, and the built-in
// corpus generated from the vendored CRS 3.3.4 regression tests (`npm run build`).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, test } from 'node:test';
import { BUILT_IN_CORPUS_FILE, loadBuiltInCorpus, loadCorpusFolder } from '../../../server/src/corpusFiles';
import { attackEntries, decodeAttackCorpus, encodeAttackCorpus, sampleEvenly } from '../../../server/src/requests/attackCorpus';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const FIXTURE = join(ROOT, 'test/fixtures/attack-corpus');
const BUILT = join(ROOT, 'server/out', BUILT_IN_CORPUS_FILE);

/** What the generator writes for test/fixtures/attack-corpus/ with `--source fixture`. */
const FIXTURE_CORPUS = `{"format":"rulesmith-attack-corpus/1","source":"fixture","entries":[
["942100-1",["942100"],"POST","/","HTTP/1.1",[["Host","localhost"],["User-Agent","ModSecurity CRS 3 Tests"],["Content-Type","application/x-www-form-urlencoded"],["Content-Length","17"]],"var=1234+OR+1%3D1",{"cf.edge.server_port":"80"}],
["932160-1 (stage 2)",["932160"],"GET","/?cmd=/bin/cat+/etc/passwd","HTTP/1.1",[["Host","localhost"]],null,{"cf.edge.server_port":"443","ssl":"true"}],
["941100-1",["941100"],"GET","/?x=%3Cscript%3Ealert(1)%3C%2Fscript%3E","HTTP/1.1",[["Host","localhost"],["User-Agent","ModSecurity CRS 3 Tests"],["Accept","*/*"]],null,{"cf.edge.server_port":"80"}]
]}
`;

describe('attack entries from ftw files', () => {
  test('only enabled stages expecting a rule, that a server lets through; test id with the stage of a multi-stage test', () => {
    const path = 'attacks-and-non-attacks.yaml';
    const { entries, problems } = attackEntries([{ path, text: readFileSync(join(FIXTURE, path), 'utf8') }]);
    assert.deepEqual(problems, []);
    // Left out: stage 1 of 932160-1 (no_log_contains), 920100-disabled, 920430-rejected
    // (version 1.1), 920280-status-only, 941100-no-rule-id (log_contains "XSS").
    assert.deepEqual(entries.map((e) => [e.test, e.rules]), [
      ['942100-1', ['942100']],
      ['932160-1 (stage 2)', ['932160']],
    ]);
  });

  test('a YAML problem is reported with the file and line', () => {
    const { entries, problems } = attackEntries([{ path: 'bad.yaml', text: 'tests:\n  - test_title: x\n    stages: []\n' }]);
    assert.deepEqual(entries, []);
    assert.deepEqual(problems, ['bad.yaml:2: test x: no stages']);
  });
});

describe('the compact corpus file', () => {
  test('the generator script writes the fixture folder (recursively, in path order) as this exact text', () => {
    const dir = mkdtempSync(join(tmpdir(), 'corpus-'));
    try {
      const out = join(dir, 'corpus.json');
      const r = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/attack-corpus.ts', '--tests', FIXTURE, '--out', out, '--source', 'fixture'], { cwd: ROOT, encoding: 'utf8' });
      assert.equal(r.status, 0, r.stderr);
      assert.equal(r.stdout, `attack corpus: 3 requests from 2 files -> ${out}\n`);
      assert.equal(readFileSync(out, 'utf8'), FIXTURE_CORPUS);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('read back: the requests as the ftw parser gives them (on the wire, named by the test id)', () => {
    const corpus = decodeAttackCorpus(FIXTURE_CORPUS);
    assert.equal(corpus.source, 'fixture');
    assert.deepEqual(corpus.entries[1], {
      test: '932160-1 (stage 2)',
      rules: ['932160'],
      request: { name: '932160-1 (stage 2)', method: 'GET', url: '/?cmd=/bin/cat+/etc/passwd', httpVersion: 'HTTP/1.1', headers: [['Host', 'localhost']], meta: { 'cf.edge.server_port': '443', ssl: 'true' }, wire: true },
    });
    assert.equal(corpus.entries[0].request.body, 'var=1234+OR+1%3D1');
    // Writing what was read gives the same text.
    assert.equal(encodeAttackCorpus(corpus), FIXTURE_CORPUS);
  });

  test('a file that is not a corpus is refused, saying why', () => {
    assert.throws(() => decodeAttackCorpus('{"format":"other/2","entries":[]}'), { message: 'not a rulesmith-attack-corpus/1 file (format "other/2")' });
    assert.throws(() => decodeAttackCorpus('{"format":"rulesmith-attack-corpus/1","source":"x","entries":[["t",["1"],"GET"]]}'), {
      message: 'entry 1 is not [test, rules, method, url, version, headers, body, meta]',
    });
    assert.throws(() => decodeAttackCorpus('{"format"'), /^Error: not JSON \(/);
  });
});

test('sampleEvenly: every (length / max)-th item, all of them when there are few', () => {
  assert.deepEqual(sampleEvenly([0, 1, 2, 3, 4, 5, 6, 7, 8, 9], 4), [0, 2, 5, 7]);
  assert.deepEqual(sampleEvenly([0, 1, 2], 4), [0, 1, 2]);
});

describe('loading a corpus', () => {
  test('a folder: its attacks, labelled with the number of files', () => {
    const c = loadCorpusFolder(FIXTURE, 'attack-corpus');
    assert.equal(c.label, '2 ftw files in attack-corpus');
    assert.deepEqual(c.entries.map((e) => e.test), ['942100-1', '932160-1 (stage 2)', '941100-1']);
  });

  test('the built-in corpus: every attack stage of the vendored CRS 3.3.4 regression tests', () => {
    assert.ok(existsSync(BUILT), `${BUILT} is missing: run \`npm run build\` first (\`npm test\` does)`);
    const c = loadBuiltInCorpus(BUILT);
    assert.equal(c.label, 'built-in: OWASP CRS 3.3.4 regression tests');
    // 2,403 tests in 178 files; 7 disabled; 2,169 stages expect a rule (none rejected by a server).
    assert.equal(c.entries.length, 2169);
    assert.equal(new Set(c.entries.flatMap((e) => e.rules)).size, 167);
    assert.deepEqual([c.entries[0].test, c.entries.at(-1)!.test], ['911100-5', '944300-329']);
    assert.equal(c.entries.filter((e) => e.rules.includes('942100')).length, 14);
  });
});
