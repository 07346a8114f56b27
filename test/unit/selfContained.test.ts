// A clone from a code host has nothing beside it: no source, script or test may name a path
// outside the repository. Everything the project reads (test data, corpora) is vendored
// under test/fixtures/ with its licence in NOTICE.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, extname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const FOLDERS = ['client', 'server', 'scripts', 'syntaxes', 'test', '.ci'];
const SKIP_DIRS = new Set(['node_modules', 'out', '.vscode-test', 'screenshots']);
// Vendored upstream data: byte-identical copies, never edited, so not scanned.
const VENDORED = ['test/fixtures/crs-3.3.4-regression-tests', 'test/fixtures/libinjection'];
const SOURCE = new Set(['.ts', '.mts', '.cts', '.js', '.mjs', '.cjs', '.json', '.sh', '.c', '.md', '']);

function sources(dir: string, out: string[] = []): string[] {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, entry.name);
    const rel = relative(ROOT, p).split(sep).join('/');
    if (entry.isDirectory()) {
      if (!SKIP_DIRS.has(entry.name) && !VENDORED.includes(rel)) sources(p, out);
    } else if (SOURCE.has(extname(entry.name)) && !entry.name.endsWith('.ohm-bundle.js')) {
      out.push(p);
    }
  }
  return out;
}

/** Each offending mention in one file's text, as `file:line: text`. */
function outsidePaths(file: string, text: string): string[] {
  const found: string[] = [];
  const lines = text.split('\n');
  lines.forEach((line, i) => {
    const where = `${relative(ROOT, file)}:${i + 1}`;
    // The reference folder beside the checkout, by any spelling.
    if (/(?:\.\.\/|\/work\/)shared\b/.test(line)) found.push(`${where}: names ../shared`);
    // A quoted relative path that climbs out of the repository from this file's folder.
    for (const m of line.matchAll(/['"`]((?:\.\.\/)+[^'"`\s$]*)['"`]/g)) {
      const target = resolve(dirname(file), m[1]);
      if (relative(ROOT, target).startsWith('..')) found.push(`${where}: ${m[1]} leaves the repository`);
    }
  });
  return found;
}

test('the detector finds both kinds of outside path, and nothing in a path that stays inside', () => {
  const file = join(ROOT, 'test/unit/example.test.ts');
  assert.deepEqual(outsidePaths(file, "const A = '../../../../shared/crs';\nconst B = '../fixtures/x.json';\n// see /work/shared/reference"), [
    'test/unit/example.test.ts:1: names ../shared',
    'test/unit/example.test.ts:1: ../../../../shared/crs leaves the repository',
    'test/unit/example.test.ts:3: names ../shared',
  ]);
  assert.deepEqual(outsidePaths(file, "import x from '../../server/src/language/parse';"), []);
});

test('no file under client/, server/, scripts/, syntaxes/, test/ or .ci/ names a path outside the repository', () => {
  const files = FOLDERS.flatMap((f) => sources(join(ROOT, f)));
  assert.ok(files.length > 300, `only ${files.length} files scanned`);
  const found = files.flatMap((f) => (f === fileURLToPath(import.meta.url) ? [] : outsidePaths(f, readFileSync(f, 'utf8'))));
  assert.deepEqual(found, []);
});

test('the vendored data is in the repository', () => {
  const crs = readdirSync(join(ROOT, 'test/fixtures/crs-3.3.4-regression-tests')).filter((n) => n.startsWith('REQUEST-'));
  assert.equal(crs.length, 14);
  assert.ok(readFileSync(join(ROOT, 'test/fixtures/libinjection/COPYING'), 'utf8').includes('Redistribution and use in source and binary forms'));
});

test('the libinjection tables in the source are what the vendored data generates', () => {
  const r = spawnSync(process.execPath, [join(ROOT, 'scripts/libinjection-data.mjs'), '--check'], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stdout + r.stderr);
});
