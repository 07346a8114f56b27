// Every code the ruleset validator, the Terraform checks and `check` itself can report has
// a general description (rulesets/problemDescriptions.ts): the codes come from the lists
// their types are made of (RULESET_PROBLEM_CODES, TERRAFORM_PROBLEM_CODES), and a scan of
// the sources finds any code written as a literal that bypasses those types. docs/cli.md
// holds the table as problemDescriptionsMarkdown() renders it.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { test } from 'node:test';
import { CODE_HELP } from '../../../server/src/language/hints';
import { NO_EXPRESSIONS, PROBLEM_CODES, PROBLEM_DESCRIPTIONS, problemDescriptionsMarkdown, TERRAFORM_PROBLEM_CODES } from '../../../server/src/rulesets/problemDescriptions';
import { EXECUTE_TARGET_CODES, RULESET_PROBLEM_CODES } from '../../../server/src/rulesets/rulesetChecker';
import { INTERPOLATED } from '../../../server/src/terraform/check';

const SRC = new URL('../../../server/src/', import.meta.url);

test('every code the validator and the Terraform checks can report has a description of one to three sentences', () => {
  const codes: readonly string[] = [...RULESET_PROBLEM_CODES, ...TERRAFORM_PROBLEM_CODES, NO_EXPRESSIONS];
  // Read as a plain map: what the test asks is what the compiler already enforces, at run time.
  const table: Readonly<Record<string, string>> = PROBLEM_DESCRIPTIONS;
  const missing = codes.filter((c) => !Object.hasOwn(table, c) || table[c].trim() === '');
  assert.deepEqual(missing, []);
  // Nothing else is in the table, each code once.
  assert.deepEqual(Object.keys(PROBLEM_DESCRIPTIONS).sort(), [...codes].sort());
  assert.deepEqual([...PROBLEM_CODES].sort(), [...codes].sort());
  assert.equal(new Set(PROBLEM_CODES).size, PROBLEM_CODES.length);
  for (const code of codes) {
    const d = table[code];
    // A sentence ends with `.`, `.)` or `:`-joined clauses; code spans (`"latest"`) are not ends.
    const sentences = d.replace(/`[^`]*`/g, 'x').split(/(?<=\.\)?)\s+(?=[A-Z(])/);
    assert.ok(sentences.length >= 1 && sentences.length <= 3, `${code}: ${sentences.length} sentences`);
    assert.match(d, /[.)]$/, code);
    assert.doesNotMatch(d, /\n/, code);
    // GitHub's limit for a rule's fullDescription.text.
    assert.ok(d.length <= 1024, `${code}: ${d.length} characters`);
    // The general meaning, never one case's: the message has the case.
    assert.doesNotMatch(d, /\beach result's message\b/, code);
  }
  // The lists the types are made of hold the codes emitted under named constants too.
  assert.ok((RULESET_PROBLEM_CODES as readonly string[]).includes('missing-expression'));
  for (const c of EXECUTE_TARGET_CODES) assert.ok((RULESET_PROBLEM_CODES as readonly string[]).includes(c), c);
  assert.ok((TERRAFORM_PROBLEM_CODES as readonly string[]).includes(INTERPOLATED));
});

/** The source files of a folder of server/src (not recursive: rulesets/ and terraform/ are flat). */
function sources(folder: string): string[] {
  const dir = new URL(`${folder}/`, SRC);
  return readdirSync(dir)
    .filter((f) => f.endsWith('.ts'))
    .map((f) => readFileSync(new URL(f, dir), 'utf8'));
}

/** Code literals as the checks write them: after a severity (`'error', 'unknown-action'`) or as `code: '…'`. */
function literalCodes(text: string): string[] {
  const found = [...text.matchAll(/'(?:error|warning|information|hint)',\s*'([a-z][a-z0-9-]*)'/g), ...text.matchAll(/\bcode:\s*'([a-z][a-z0-9-]*)'/g)];
  return found.map((m) => m[1]);
}

test('a scan of the checks finds no code written as a literal that the table lacks', () => {
  const texts = [...sources('rulesets'), ...sources('terraform'), readFileSync(new URL('cli/check.ts', SRC), 'utf8')];
  const codes = new Set(texts.flatMap(literalCodes));
  // The scan sees the checks' codes (so it would see a new one).
  for (const c of ['unknown-action', 'missing-ref', 'invalid-hcl', 'invalid-json', NO_EXPRESSIONS]) assert.ok(codes.has(c), `the scan finds ${c}`);
  const known = (c: string) => Object.hasOwn(PROBLEM_DESCRIPTIONS, c) || Object.hasOwn(CODE_HELP, c);
  assert.deepEqual([...codes].filter((c) => !known(c)), []);
});

test('docs/cli.md lists the ruleset and Terraform codes as the table says', () => {
  const docs = readFileSync(new URL('../../../docs/cli.md', import.meta.url), 'utf8');
  const section = docs.slice(docs.indexOf('## Ruleset and Terraform codes'));
  assert.ok(section.includes(problemDescriptionsMarkdown()), 'docs/cli.md is out of date: paste problemDescriptionsMarkdown() into its "Ruleset and Terraform codes" section');
  const lines = problemDescriptionsMarkdown().split('\n');
  assert.equal(lines.length, 2 + PROBLEM_CODES.length);
  assert.match(lines[2], /^\| `invalid-json` \| The file is not valid JSON/);
});
