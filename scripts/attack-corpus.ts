// The built-in attack corpus of the paranoia preview, generated at build time from the
// vendored CRS 3.3.4 regression tests with the project's own ftw parser
// (server/src/requests/attackCorpus.ts says what an entry is and which stages count).
//
// Usage (from the repository root; scripts/build.mjs runs it):
//   node --import tsx scripts/attack-corpus.ts [--tests DIR] [--out FILE] [--source TEXT]
//     --tests DIR    ftw YAML, searched recursively (default test/fixtures/crs-3.3.4-regression-tests)
//     --out FILE     default server/out/crs-attack-corpus.json
//     --source TEXT  where the corpus comes from, as the preview shows it
//                    (default "OWASP CRS 3.3.4 regression tests")
// Prints `attack corpus: N requests from M files -> FILE`. The output depends only on the
// YAML files (read in path order), so a rebuild writes the same bytes. A YAML problem
// fails the build: the vendored tests all parse.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, relative, sep } from 'node:path';
import { parseArgs } from 'node:util';
import { attackEntries, encodeAttackCorpus } from '../server/src/requests/attackCorpus';
import { yamlFiles } from '../server/src/corpusFiles';

const { values } = parseArgs({
  options: {
    tests: { type: 'string', default: 'test/fixtures/crs-3.3.4-regression-tests' },
    out: { type: 'string', default: 'server/out/crs-attack-corpus.json' },
    source: { type: 'string', default: 'OWASP CRS 3.3.4 regression tests' },
  },
});

const files = yamlFiles(values.tests).map((p) => ({ path: relative(values.tests, p).split(sep).join('/'), text: readFileSync(p, 'utf8') }));
const { entries, problems } = attackEntries(files);
if (problems.length > 0) {
  process.stderr.write(`${problems.join('\n')}\n`);
  process.exit(1);
}
mkdirSync(dirname(values.out), { recursive: true });
writeFileSync(values.out, encodeAttackCorpus({ source: values.source, entries }));
process.stdout.write(`attack corpus: ${entries.length} requests from ${files.length} files -> ${values.out}\n`);
