// Bundles the CLI, the language server and the extension client with esbuild.
// The grammar bundle (rules.ohm-bundle.js) is generated first by `npm run generate`.
//
// The OWASP-based ruleset is converted from CRS 3.3.4 first (scripts/crs/convert.ts, about
// half a second): it rewrites server/src/managed/generated/ (owasp-rules.json,
// owasp-unconverted.json) and server/src/language/runtime/crs/crs-data.ts (committed, and
// the output only depends on the CRS files, so a rebuild gives no diff) and writes the coverage report
// server/out/crs-coverage.md. Without Debian's modsecurity-crs (CRS_RULES_DIR or
// /usr/share/modsecurity-crs/rules) the committed conversion is used and the report is not
// written; `node scripts/crs/ensure-crs.mjs` installs the package.
//
// The paranoia preview's built-in attack corpus, server/out/crs-attack-corpus.json, is
// generated from the vendored CRS 3.3.4 regression tests (scripts/attack-corpus.ts); the
// CLI reads it from beside itself and the extension ships it (package.json "files").
import { build } from 'esbuild';
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { checkEntryPoints, ENTRY_POINTS } from './entry-points.mjs';

const crsDir = process.env.CRS_RULES_DIR || '/usr/share/modsecurity-crs/rules';
if (existsSync(crsDir)) {
  const r = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/crs/convert.ts', '--crs', crsDir], { encoding: 'utf8' });
  if (r.status !== 0) {
    process.stderr.write(r.stdout + r.stderr);
    throw new Error('CRS conversion failed (scripts/crs/convert.ts)');
  }
  process.stdout.write(r.stdout.split('\n').filter((l) => l.startsWith('converted ')).join('\n') + '\n');
} else {
  process.stdout.write(`CRS 3.3.4 rules not found in ${crsDir}: using the committed conversion (server/src/managed/generated/); no coverage report\n`);
}

{
  const r = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/attack-corpus.ts'], { encoding: 'utf8' });
  if (r.status !== 0) {
    process.stderr.write(r.stdout + r.stderr);
    throw new Error('generating the attack corpus failed (scripts/attack-corpus.ts)');
  }
  process.stdout.write(r.stdout);
}

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

// HashiCorp's HCL parser (@cdktf/hcl2json, Terraform files) reads its WebAssembly from
// `<its lib>/../main.wasm.gz`; bundled, it reads it from beside the bundle instead.
const HCL2JSON_WASM = '(0, path_1.join)(__dirname, "..", "main.wasm.gz")';
const hcl2jsonWasm = {
  name: 'hcl2json-wasm',
  setup(b) {
    b.onLoad({ filter: /@cdktf[\\/]hcl2json[\\/]lib[\\/]bridge\.js$/ }, (args) => {
      const text = readFileSync(args.path, 'utf8');
      if (!text.includes(HCL2JSON_WASM)) throw new Error(`build: ${args.path} no longer loads ${HCL2JSON_WASM}: update scripts/build.mjs`);
      return { contents: text.replace(HCL2JSON_WASM, '(0, path_1.join)(__dirname, "hcl2json.wasm.gz")'), loader: 'js' };
    });
  },
};

// Its Go runtime falls back to require('performance') where node has no global one (node 20 has).
const entries = ENTRY_POINTS.map((e) => (e.outfile.startsWith('server/') ? { ...e, plugins: [hcl2jsonWasm], external: [...(e.external ?? []), 'performance'] } : e));

try {
  checkEntryPoints(entries);
} catch (e) {
  console.error(`build: ${e.message}`);
  process.exit(1);
}
await Promise.all(entries.map((e) => build({ ...common, ...e })));

// The service's SQLite is WebAssembly: the bundled CLI loads the .wasm from beside itself.
mkdirSync('server/out', { recursive: true });
copyFileSync('node_modules/node-sqlite3-wasm/dist/node-sqlite3-wasm.wasm', 'server/out/node-sqlite3-wasm.wasm');
copyFileSync('node_modules/@cdktf/hcl2json/main.wasm.gz', 'server/out/hcl2json.wasm.gz');
