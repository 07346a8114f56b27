// Bundles the CLI, the language server and the extension client with esbuild.
// The grammar bundle (rules.ohm-bundle.js) is generated first by `npm run generate`.
import { build } from 'esbuild';
import { copyFileSync, existsSync, mkdirSync } from 'node:fs';

const common = {
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  sourcemap: true,
  logLevel: 'warning',
  // jsonc-parser's UMD entry uses dynamic requires esbuild cannot follow; its ESM entry bundles.
  mainFields: ['module', 'main'],
};

const entries = [
  { entryPoints: ['server/src/cli/main.ts'], outfile: 'server/out/cli.js', banner: { js: '#!/usr/bin/env node' } },
  { entryPoints: ['server/src/lsp/server.ts'], outfile: 'server/out/server.js' },
  { entryPoints: ['client/src/extension.ts'], outfile: 'client/out/extension.js', external: ['vscode'] },
];

await Promise.all(
  entries.filter((e) => existsSync(e.entryPoints[0])).map((e) => build({ ...common, ...e })),
);

// The service's SQLite is WebAssembly: the bundled CLI loads the .wasm from beside itself.
mkdirSync('server/out', { recursive: true });
copyFileSync('node_modules/node-sqlite3-wasm/dist/node-sqlite3-wasm.wasm', 'server/out/node-sqlite3-wasm.wasm');
