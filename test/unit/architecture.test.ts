// The layers, as a table: which folder may import which (internal edges included), and
// which packages each may use. Every import of every source file (static, `export … from`,
// dynamic `import()`, `require`, type-only ones too) is checked against it; ARCHITECTURE.md
// says the same in words. The core (language, rulesets, managed, migration, requests) is
// pure: no VS Code, no LSP package, no node: module, so no I/O.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { test } from 'node:test';
import ts from 'typescript';

const ROOT = resolve(dirname(new URL(import.meta.url).pathname), '../..');

/**
 * The language's value modules: types and the values of the language (IR, IP, bytes,
 * literals, regex, wildcard, the AST's and diagnostics' shapes). The runtime and the
 * scheme build on them, and they on nothing else of the language, so the language's parts
 * form no cycle.
 */
const LANGUAGE_BASE = ['types', 'ir', 'ip', 'bytes', 'regex', 'regexSize', 'wildcard', 'literals', 'ast', 'diagnostics', 'ahoCorasick', 'sizedLru'];

type Part =
  | 'client'
  | 'protocol'
  | 'rulesApi'
  | 'cursorPages'
  | 'regexBudget'
  | 'orderedWorker'
  | 'timedWorker'
  | 'logThrottle'
  | 'loopback'
  | 'corpusFiles'
  | 'serveNodeFlags'
  | 'serveReady'
  | 'evaluatedRequest'
  | 'proxy'
  | 'terraform'
  | 'lsp'
  | 'cli'
  | 'service'
  | 'migration'
  | 'managed'
  | 'rulesets'
  | 'requests'
  | 'language'
  | 'language/scheme'
  | 'language/runtime'
  | 'language/base';

const LANGUAGE: readonly Part[] = ['language', 'language/scheme', 'language/runtime', 'language/base'];
const CORE: readonly Part[] = ['migration', 'managed', 'rulesets', 'requests', ...LANGUAGE];

/** The allowed imports between parts (a part may always import itself). */
const ALLOWED: Readonly<Record<Part, readonly Part[]>> = {
  client: ['protocol', 'rulesApi', 'cursorPages', 'regexBudget', 'corpusFiles', 'serveNodeFlags', 'serveReady', 'terraform', 'loopback', ...CORE],
  lsp: ['protocol', 'regexBudget', 'timedWorker', 'terraform', ...CORE],
  cli: ['proxy', 'service', 'cursorPages', 'regexBudget', 'corpusFiles', 'serveReady', 'terraform', 'loopback', ...CORE],
  terraform: [...CORE],
  proxy: ['service', 'evaluatedRequest', 'regexBudget', 'orderedWorker', 'logThrottle', ...CORE],
  service: ['rulesApi', 'evaluatedRequest', 'regexBudget', 'orderedWorker', 'timedWorker', 'logThrottle', ...CORE],
  evaluatedRequest: ['rulesets'],
  protocol: [],
  rulesApi: ['rulesets', 'language/scheme'],
  cursorPages: [],
  regexBudget: [],
  orderedWorker: [],
  timedWorker: ['orderedWorker'],
  logThrottle: [],
  loopback: [],
  corpusFiles: ['requests'],
  serveNodeFlags: [],
  serveReady: [],
  migration: ['rulesets', 'managed', ...LANGUAGE],
  managed: ['rulesets', ...LANGUAGE],
  rulesets: [...LANGUAGE],
  requests: [...LANGUAGE],
  language: ['language/scheme', 'language/runtime', 'language/base'],
  'language/scheme': ['language/runtime', 'language/base'],
  'language/runtime': ['language/base'],
  'language/base': [],
};

/** The packages each part may import (by name; `node:*` for node's own modules). */
const PACKAGES: Readonly<Record<Part, readonly string[]>> = {
  client: ['vscode', 'vscode-languageclient', 'cloudflare', 'jsonc-parser', 'node:*'],
  lsp: ['vscode-languageserver', 'vscode-languageserver-protocol', 'vscode-languageserver-textdocument', 'jsonc-parser', 'ohm-js', 'node:*'],
  cli: ['node:*'],
  proxy: ['node:*'],
  terraform: ['@cdktf/hcl2json'],
  service: ['node-sqlite3-wasm', 'better-sqlite3', 'jsonc-parser', 'graphql', 'node:*'],
  evaluatedRequest: [],
  protocol: ['vscode-languageserver-protocol'],
  rulesApi: [],
  cursorPages: [],
  regexBudget: ['node:v8'],
  orderedWorker: ['node:worker_threads'],
  timedWorker: ['node:worker_threads'],
  logThrottle: ['node:perf_hooks'],
  loopback: [],
  corpusFiles: ['node:fs', 'node:path'],
  serveNodeFlags: [],
  serveReady: [],
  migration: [],
  managed: ['jsonc-parser'],
  rulesets: ['jsonc-parser'],
  requests: ['yaml'],
  language: ['ohm-js'],
  'language/scheme': [],
  'language/runtime': [],
  'language/base': ['re2js'],
};

/** The part a repository path belongs to, or undefined for a path outside every part. */
/** The modules directly in server/src, each a part of its own. */
const TOP_MODULES = ['protocol', 'rulesApi', 'cursorPages', 'regexBudget', 'orderedWorker', 'timedWorker', 'logThrottle', 'loopback', 'corpusFiles', 'evaluatedRequest', 'serveNodeFlags', 'serveReady'] as const;

export function partOf(path: string): Part | undefined {
  if (path.startsWith('client/src/')) return 'client';
  const m = /^server\/src\/(.+)$/.exec(path);
  if (!m) return undefined;
  const rest = m[1].replace(/\.(ts|js|json)$/, '');
  const top = TOP_MODULES.find((t) => t === rest);
  if (top) return top;
  const [folder, ...inner] = rest.split('/');
  if (folder === 'language') {
    if (inner[0] === 'scheme' || inner[0] === 'runtime') return `language/${inner[0]}`;
    return inner.length === 1 && LANGUAGE_BASE.includes(inner[0]) ? 'language/base' : 'language';
  }
  return (['lsp', 'cli', 'proxy', 'terraform', 'service', 'migration', 'managed', 'rulesets', 'requests'] as const).find((p) => p === folder);
}

/** `vscode-languageclient/node` -> `vscode-languageclient`; `@scope/name/x` -> `@scope/name`. */
function packageName(spec: string): string {
  if (spec.startsWith('node:')) return spec;
  const parts = spec.split('/');
  return spec.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

export interface Import {
  /** The importing file, from the repository root. */
  readonly file: string;
  /** What it imports, as written. */
  readonly spec: string;
}

/** Every import that the table does not allow, one line each. */
export function violations(imports: readonly Import[]): string[] {
  const out: string[] = [];
  for (const { file, spec } of imports) {
    const from = partOf(file);
    if (!from) {
      out.push(`${file}: is in no folder of the table (add it to partOf and ALLOWED)`);
      continue;
    }
    if (spec.startsWith('.')) {
      const target = relative(ROOT, resolve(ROOT, dirname(file), spec));
      const to = partOf(target);
      if (!to) out.push(`${file}: imports ${spec} (${from} → ${target}, outside the sources, not allowed)`);
      else if (to !== from && !ALLOWED[from].includes(to)) out.push(`${file}: imports ${spec} (folder ${from} → ${to} not allowed)`);
      continue;
    }
    const name = packageName(spec);
    const allowed = PACKAGES[from].some((p) => p === name || (p === 'node:*' && name.startsWith('node:')));
    if (!allowed) out.push(`${file}: imports ${spec} (package ${name} not allowed in ${from})`);
  }
  return out;
}

function sources(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) sources(p, out);
    else if (/\.ts$/.test(name) && !name.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

/** The imports of every source file, as the TypeScript compiler reads them (comments ignored). */
function repoImports(): Import[] {
  const files = ['server/src', 'client/src'].flatMap((d) => sources(join(ROOT, d)));
  return files.flatMap((abs) => {
    const file = relative(ROOT, abs);
    const info = ts.preProcessFile(readFileSync(abs, 'utf8'), true, true);
    return info.importedFiles.map((f) => ({ file, spec: f.fileName }));
  });
}

test('every import of server/src and client/src is allowed by the table', () => {
  const imports = repoImports();
  assert.ok(imports.length > 500, `the sources' imports are read (${imports.length})`);
  assert.deepEqual(violations(imports), []);
});

test('the core parts use no VS Code, LSP or node: package (they do no I/O)', () => {
  for (const part of CORE) {
    const io = PACKAGES[part].filter((p) => p.startsWith('node:') || p.startsWith('vscode') || p === 'http' || p === 'fs');
    assert.deepEqual(io, [], part);
    // Nor through a layer that may: the core imports no adapter.
    assert.deepEqual(ALLOWED[part].filter((p) => !CORE.includes(p)), [], part);
  }
});

test('ARCHITECTURE.md states the table: every folder and every allowed package is in its Layers section', () => {
  const doc = readFileSync(join(ROOT, 'ARCHITECTURE.md'), 'utf8');
  const layers = doc.slice(doc.indexOf('## Layers'), doc.indexOf('## Code map'));
  const folder = (p: Part) => (p === 'client' ? 'client/' : TOP_MODULES.some((t) => t === p) ? `${p}.ts` : p === 'language/base' ? 'value modules' : `${p.replace('language/', '')}/`);
  const missing = [
    ...(Object.keys(ALLOWED) as Part[]).filter((p) => !layers.includes(folder(p))),
    ...[...new Set(Object.values(PACKAGES).flat())].filter((name) => !layers.includes(`\`${name.replace(/^vscode-languageserver.*/, 'vscode-languageserver')}`)),
    ...LANGUAGE_BASE.filter((m) => !layers.includes(`\`${m}\``)),
  ];
  assert.deepEqual(missing, []);
});

test('the table has no cycle between folders', () => {
  const seen = new Set<Part>();
  const visiting = new Set<Part>();
  const cycles: string[] = [];
  const visit = (p: Part, path: Part[]) => {
    if (visiting.has(p)) return void cycles.push([...path, p].join(' → '));
    if (seen.has(p)) return;
    visiting.add(p);
    for (const q of ALLOWED[p]) visit(q, [...path, p]);
    visiting.delete(p);
    seen.add(p);
  };
  for (const p of Object.keys(ALLOWED) as Part[]) visit(p, []);
  assert.deepEqual(cycles, []);
});

test('the checker reports a forbidden edge, a forbidden package and a file outside the table', () => {
  assert.deepEqual(
    violations([
      { file: 'server/src/language/runtime/crs.ts', spec: '../../managed/libinjection/sqli' },
      { file: 'server/src/rulesets/validate.ts', spec: '../managed/catalog' },
      { file: 'server/src/language/runtime/crs.ts', spec: '../check' },
      { file: 'server/src/language/ip.ts', spec: './runtime/functions' },
      { file: 'server/src/requests/http.ts', spec: 'node:fs' },
      { file: 'server/src/managed/vendor.ts', spec: 'vscode-languageserver/node' },
      { file: 'server/src/extra/thing.ts', spec: '../language/index' },
    ]),
    [
      'server/src/language/runtime/crs.ts: imports ../../managed/libinjection/sqli (folder language/runtime → managed not allowed)',
      'server/src/rulesets/validate.ts: imports ../managed/catalog (folder rulesets → managed not allowed)',
      'server/src/language/runtime/crs.ts: imports ../check (folder language/runtime → language not allowed)',
      'server/src/language/ip.ts: imports ./runtime/functions (folder language/base → language/runtime not allowed)',
      'server/src/requests/http.ts: imports node:fs (package node:fs not allowed in requests)',
      'server/src/managed/vendor.ts: imports vscode-languageserver/node (package vscode-languageserver not allowed in managed)',
      'server/src/extra/thing.ts: is in no folder of the table (add it to partOf and ALLOWED)',
    ],
  );
  // Allowed ones pass: down the layers, within a folder, a package the folder may use.
  assert.deepEqual(
    violations([
      { file: 'server/src/managed/preview.ts', spec: '../rulesets/engine' },
      { file: 'server/src/language/runtime/crs.ts', spec: './crs/libinjection/sqli' },
      { file: 'server/src/language/runtime/crs.ts', spec: '../ip' },
      { file: 'client/src/extension.ts', spec: 'vscode' },
      { file: 'server/src/lsp/server.ts', spec: 'vscode-languageserver/node' },
    ]),
    [],
  );
});

/** The source file a relative import names (`./a` -> `a.ts` or `a/index.ts`), or undefined for JSON and the like. */
function importedFile(file: string, spec: string): string | undefined {
  const base = relative(ROOT, resolve(ROOT, dirname(file), spec));
  return [`${base}.ts`, join(base, 'index.ts')].find((f) => existsSync(join(ROOT, f)));
}

/**
 * The import circles among source files, each as its files in order (Tarjan's strongly
 * connected components): a file that imports, through others, one that imports it back.
 * Type-only imports count: a circle of types still ties the files' meaning together.
 */
export function importCircles(imports: readonly Import[], resolveImport = importedFile): string[][] {
  const edges = new Map<string, string[]>();
  for (const { file, spec } of imports) {
    const to = spec.startsWith('.') ? resolveImport(file, spec) : undefined;
    if (!edges.has(file)) edges.set(file, []);
    if (to !== undefined) edges.get(file)!.push(to);
  }
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const circles: string[][] = [];
  const visit = (v: string) => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1 || (edges.get(v) ?? []).includes(v)) circles.push(component.sort());
  };
  for (const v of edges.keys()) if (!index.has(v)) visit(v);
  return circles;
}

test('no source file imports, through others, one that imports it back', () => {
  const imports = repoImports();
  // Every relative import is followed, but data files (JSON, the grammar bundle): none is dropped unseen.
  const unresolved = imports.filter(({ file, spec }) => spec.startsWith('.') && importedFile(file, spec) === undefined && !/\.(json|ohm-bundle)$/.test(spec));
  assert.deepEqual(unresolved, []);
  assert.deepEqual(importCircles(imports), []);
});

test('the circle finder reports a circle through three files and a file importing itself, and nothing for a chain', () => {
  const at = (file: string, spec: string) => ({ file, spec });
  const byName = (file: string, spec: string) => join(dirname(file), `${spec.slice(2)}.ts`);
  assert.deepEqual(
    importCircles([at('x/a.ts', './b'), at('x/b.ts', './c'), at('x/c.ts', './a'), at('x/d.ts', './a'), at('x/e.ts', './e'), at('x/f.ts', 'node:fs')], byName),
    [['x/a.ts', 'x/b.ts', 'x/c.ts'], ['x/e.ts']],
  );
  assert.deepEqual(importCircles([at('x/a.ts', './b'), at('x/b.ts', './c')], byName), []);
});
