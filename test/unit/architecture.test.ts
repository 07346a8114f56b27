// The core (language, rulesets, managed, migration, requests) is pure: it never imports
// VS Code, the LSP packages, HTTP or any other node: module. Adapters do the I/O.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

const root = new URL('../../server/src/', import.meta.url).pathname;
const CORE = ['language', 'rulesets', 'managed', 'migration', 'requests'];
const FORBIDDEN = /^(vscode|vscode-languageserver.*|vscode-languageclient.*|node:.*|http|https|fs|net|child_process|path|os)$/;

function sources(dir: string, out: string[] = []): string[] {
  if (!existsSync(dir)) return out;
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) sources(p, out);
    else if (/\.ts$/.test(name)) out.push(p);
  }
  return out;
}

test('core modules import no adapter or I/O package', () => {
  const offenders: string[] = [];
  const files = CORE.flatMap((d) => sources(join(root, d)));
  assert.ok(files.length > 5, 'the core has source files');
  for (const file of files) {
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(/(?:from\s+|import\s*\(\s*|require\s*\(\s*)['"]([^'"]+)['"]/g)) {
      if (FORBIDDEN.test(m[1])) offenders.push(`${file.slice(root.length)} imports ${m[1]}`);
    }
  }
  assert.deepEqual(offenders, []);
});

test('the purity rule catches a forbidden import', () => {
  assert.ok(FORBIDDEN.test('vscode-languageserver/node'));
  assert.ok(FORBIDDEN.test('node:fs'));
  assert.ok(!FORBIDDEN.test('ohm-js'));
});
