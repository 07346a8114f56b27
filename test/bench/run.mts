// `npm run bench`: runs every *.bench.ts in this folder in turn; each prints its figures.
import { readdirSync } from 'node:fs';

const dir = new URL('.', import.meta.url);
for (const name of readdirSync(dir).filter((n) => n.endsWith('.bench.ts')).sort()) {
  console.log(`\n== ${name}`);
  await import(new URL(name, dir).href);
}
