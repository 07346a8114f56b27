// `npm run bench`: runs every *.bench.ts in this folder, each in its own process and one
// after another (no JIT or GC cross-talk between them); each prints its own figures.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const dir = fileURLToPath(new URL('.', import.meta.url));
let failed = 0;
for (const name of readdirSync(dir).filter((n) => n.endsWith('.bench.ts')).sort()) {
  console.log(`\n== ${name}`);
  const r = spawnSync(process.execPath, ['--import', 'tsx', dir + name], { stdio: 'inherit' });
  if (r.status !== 0) failed++;
}
process.exitCode = failed ? 1 : 0;
