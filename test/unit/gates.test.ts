// What `npm test` checks before the tests run: the build's entry points exist, the
// type-check covers every TypeScript file, the linter sees the code, and a failing gate
// fails the run.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';
import ts from 'typescript';
import { checkEntryPoints } from '../../scripts/entry-points.mjs';
import { runGates } from '../../scripts/gates.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const TSC = join(ROOT, 'node_modules/typescript/bin/tsc');

test('the build accepts entry points that exist and names each one that does not', () => {
  const real = { entryPoints: ['server/src/cli/main.ts'] };
  checkEntryPoints([real], ROOT);
  assert.throws(() => checkEntryPoints([real, { entryPoints: ['server/src/cli/gone.ts'] }], ROOT), {
    message: 'entry point not found: server/src/cli/gone.ts (listed in scripts/entry-points.mjs: fix the path there, or remove the entry)',
  });
  assert.throws(() => checkEntryPoints([{ entryPoints: ['a.ts'] }, real, { entryPoints: ['b/c.ts'] }], ROOT), {
    message: 'entry points not found: a.ts, b/c.ts (listed in scripts/entry-points.mjs: fix the path there, or remove the entry)',
  });
});

function typeScriptFiles(dir: string, out: string[] = []): string[] {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (!['node_modules', 'out', 'fixtures', '.git', '.vscode-test'].includes(entry.name)) typeScriptFiles(p, out);
    } else if (/\.[cm]?ts$/.test(entry.name)) {
      out.push(relative(ROOT, p).split(sep).join('/'));
    }
  }
  return out;
}

test('the type-check covers every TypeScript file of the repository', () => {
  const config = ts.getParsedCommandLineOfConfigFile(join(ROOT, 'tsconfig.json'), {}, {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (d) => assert.fail(ts.flattenDiagnosticMessageText(d.messageText, '\n')),
  });
  assert.ok(config);
  const checked = new Set(config.fileNames.map((f) => relative(ROOT, f).split(sep).join('/')));
  const all = typeScriptFiles(ROOT);
  assert.ok(all.length > 200, `only ${all.length} TypeScript files found`);
  assert.deepEqual(all.filter((f) => !checked.has(f)), []);
});

test('the linter applies its rules to server, client, tests and scripts, and skips generated files', async () => {
  const eslint = new ESLint({ cwd: ROOT });
  const source = 'const unused = 1;\nexport const n = 2;\n';
  for (const file of ['server/src/language/x.ts', 'client/src/x.ts', 'test/unit/x.test.ts', 'scripts/x.mjs']) {
    const [result] = await eslint.lintText(source, { filePath: join(ROOT, file) });
    assert.deepEqual(
      result.messages.map((m) => [m.ruleId, m.line]),
      [['@typescript-eslint/no-unused-vars', 1]],
      file,
    );
  }
  for (const file of ['server/src/language/rules.ohm-bundle.js', 'server/out/cli.js', 'server/src/managed/generated/crs-data.ts']) {
    assert.equal(await eslint.isPathIgnored(join(ROOT, file)), true, file);
  }
});

test('a gate that fails is reported by name and fails the run; one that passes does not', () => {
  const dir = mkdtempSync(join(tmpdir(), 'rulesmith-gates-'));
  try {
    writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { strict: true, noEmit: true, types: [], lib: ['es2022'], skipLibCheck: true }, files: ['a.ts'] }));
    const gate = { name: 'type-check', args: [TSC, '-p', dir], alone: 'npm run check-types' };
    const lines: string[] = [];
    const log = (line: string) => lines.push(line.replace(/[\d.]+ s/, 'N s'));

    writeFileSync(join(dir, 'a.ts'), "export const n: number = 'one';\n");
    assert.deepEqual(runGates([gate], { stdio: 'ignore', log }), ['type-check']);
    assert.equal(lines[1], 'type-check: FAILED in N s (exit 2): fix the findings above; rerun it alone with `npm run check-types`');

    lines.length = 0;
    writeFileSync(join(dir, 'a.ts'), 'export const n: number = 1;\n');
    assert.deepEqual(runGates([gate], { stdio: 'ignore', log }), []);
    assert.equal(lines[1], 'type-check: passed in N s');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
