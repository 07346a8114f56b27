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
const FOLDERS = ['client', 'server', 'scripts', 'syntaxes', 'test', '.ci', 'docs', 'examples'];
/** Top-level files read the same way. */
const TOP_FILES = ['README.md', 'ARCHITECTURE.md', 'NOTICE', 'package.json'];
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

/**
 * The folders beside this checkout (on a developer's machine there may be some; a clone from
 * a code host has none): a path that names one of them, relative (`../x`) or absolute, is a
 * dependency on something a clone does not have. Read at run time, so no name is hard-coded.
 */
const PARENT = dirname(ROOT);
const SIBLINGS = readdirSync(PARENT, { withFileTypes: true })
  .filter((e) => e.isDirectory() && join(PARENT, e.name) !== ROOT)
  .map((e) => e.name);

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

/** Each offending mention in one file's text, as `file:line: text`. */
function outsidePaths(file: string, text: string, siblings: readonly string[] = SIBLINGS, parent = PARENT): string[] {
  const found: string[] = [];
  const beside = siblings.length === 0 ? undefined : new RegExp(`(?:\\.\\./|${escape(parent)}/)(${siblings.map(escape).join('|')})\\b`);
  text.split('\n').forEach((line, i) => {
    const where = `${relative(ROOT, file)}:${i + 1}`;
    // A folder beside the checkout, in prose or code, relative or absolute.
    const m = beside?.exec(line);
    if (m) found.push(`${where}: names the folder ${m[1]} beside the checkout`);
    // A quoted relative path that climbs out of the repository from this file's folder.
    for (const q of line.matchAll(/['"`]((?:\.\.\/)+[^'"`\s$]*)['"`]/g)) {
      const target = resolve(dirname(file), q[1]);
      if (relative(ROOT, target).startsWith('..')) found.push(`${where}: ${q[1]} leaves the repository`);
    }
  });
  return found;
}

test('the detector finds both kinds of outside path, and nothing in a path that stays inside', () => {
  const file = join(ROOT, 'test/unit/example.test.ts');
  // Built from parts, so that this file itself does not climb out of the repository.
  const up = '../'.repeat(4);
  const text = `const A = '${up}elsewhere/crs';\nconst B = '../fixtures/x.json';\n// see /parent/elsewhere/reference, (../elsewhere/notes)`;
  assert.deepEqual(outsidePaths(file, text, ['elsewhere'], '/parent'), [
    'test/unit/example.test.ts:1: names the folder elsewhere beside the checkout',
    'test/unit/example.test.ts:1: ../../../../elsewhere/crs leaves the repository',
    'test/unit/example.test.ts:3: names the folder elsewhere beside the checkout',
  ]);
  assert.deepEqual(outsidePaths(file, "import x from '../../server/src/language/parse';", ['elsewhere'], '/parent'), []);
});

test('no source, script, test, doc or example names a path outside the repository', () => {
  const files = [...FOLDERS.flatMap((f) => sources(join(ROOT, f))), ...TOP_FILES.map((f) => join(ROOT, f))];
  assert.ok(files.length > 300, `only ${files.length} files scanned`);
  const found = files.flatMap((f) => outsidePaths(f, readFileSync(f, 'utf8')));
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
