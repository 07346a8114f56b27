/**
 * The core as it ships: modsec/rulesmith-core.ts bundled by esbuild with scripts/build.mjs's
 * options (without tsx's keepNames, see that file), or through tsx with RULESMITH_BENCH_TSX=1.
 * Shared by the benches that time or weigh the engine's own code.
 */
import { mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export type Core = typeof import('./rulesmith-core');

/** Where the benches keep what they build or install between runs. */
export const BENCH_CACHE = join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'rulesmith-bench');

export async function loadCore(): Promise<{ core: Core; how: string }> {
  const here = dirname(fileURLToPath(import.meta.url));
  if (process.env.RULESMITH_BENCH_TSX === '1') return { core: (await import('./rulesmith-core')) as Core, how: 'core loaded through tsx' };
  const { buildSync } = await import('esbuild');
  const outfile = join(BENCH_CACHE, 'rulesmith-core.cjs');
  mkdirSync(BENCH_CACHE, { recursive: true });
  buildSync({ entryPoints: [join(here, 'rulesmith-core.ts')], outfile, bundle: true, platform: 'node', target: 'node20', format: 'cjs', sourcemap: true, logLevel: 'warning', mainFields: ['module', 'main'] });
  return { core: createRequire(import.meta.url)(outfile) as Core, how: 'core bundled by esbuild as the CLI ships' };
}
