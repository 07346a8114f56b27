// `rulesmith check --format sarif` validates against the official SARIF 2.1.0 schema
// (vendored unchanged in test/fixtures/sarif, checked with ajv), with the exact regions the
// editor underlines through JSON and HCL escapes; `--format github` prints workflow
// commands; the exit codes stay 0/1/2.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';
import Ajv from 'ajv';
import type { Finding } from '../../../server/src/cli/finding';
import type { Io } from '../../../server/src/cli/io';
import { run } from '../../../server/src/cli/main';
import { artifactLocation, codeDescription, sarifLog } from '../../../server/src/cli/sarif';
import { CODE_HELP } from '../../../server/src/language/hints';
import { NO_EXPRESSIONS } from '../../../server/src/rulesets/problemDescriptions';

const fixtures = new URL('../../fixtures/', import.meta.url).pathname;
const schema = JSON.parse(readFileSync(`${fixtures}sarif/sarif-schema-2.1.0.json`, 'utf8'));

// ajv knows no formats by itself: the three the schema uses, after RFC 3986 and RFC 3339.
const ajv = new Ajv({ strict: false, allErrors: true });
ajv.addFormat('uri', (s: string) => /^[a-z][a-z0-9+.-]*:[^\s]*$/i.test(s) && URL.canParse(s));
ajv.addFormat('uri-reference', (s: string) => !/\s/.test(s) && URL.canParse(s, 'file:///base/'));
ajv.addFormat('date-time', (s: string) => /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/i.test(s));
const validate = ajv.compile(schema);

async function check(args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const io: Io = {
    out: (s) => void (out += s),
    err: (s) => void (err += s),
    readFile: (p) => readFileSync(p.startsWith('/') ? p : fixtures + p, 'utf8'),
    writeFile: () => undefined,
    readStdin: () => '',
  };
  const code = await run(['check', ...args], io);
  return { code, out, err };
}

interface SarifResult {
  ruleId: string;
  level: string;
  locations?: { physicalLocation: { artifactLocation: { uri: string; uriBaseId?: string }; region: Record<string, number> } }[];
}

test('the schema itself catches a broken log (so the validation below can fail)', () => {
  assert.equal(validate({ version: '2.1.0', runs: [{ tool: { driver: {} } }] }), false);
  assert.equal(validate({ version: '2.1.0', runs: [{ tool: { driver: { name: 'x', rules: [{ id: 'a', helpUri: 'not a uri' }] } }, results: [] }] }), false);
});

test('sarif: JSON, .cfrule and .tf findings validate, with exact regions through escapes', async () => {
  const r = await check(['--format', 'sarif', 'cli/escaped.ruleset.json', 'cli/unknown-field.cfrule', 'terraform/v5-escapes.tf']);
  assert.equal(r.code, 1);
  const log = JSON.parse(r.out);
  const valid = validate(log as unknown);
  assert.ok(valid, JSON.stringify(validate.errors, null, 2));
  const run0 = log.runs[0];
  assert.equal(run0.columnKind, 'utf16CodeUnits');
  const where = (res: SarifResult) => {
    const p = res.locations![0].physicalLocation;
    return `${p.artifactLocation.uri}:${p.region.startLine}:${p.region.startColumn}-${p.region.endLine}:${p.region.endColumn} ${res.level} ${res.ruleId}`;
  };
  assert.deepEqual(
    (run0.results as SarifResult[]).map(where),
    [
      // "caf\u00e9" counts six characters in the file: http.hots starts at column 79.
      'cli/escaped.ruleset.json:4:79-4:88 error unknown-identifier',
      'cli/unknown-field.cfrule:1:1-1:10 error unknown-identifier',
      'terraform/v5-escapes.tf:11:60-11:69 error unknown-identifier',
      'terraform/v5-escapes.tf:18:15-18:28 error unknown-identifier',
      'terraform/v5-escapes.tf:18:33-18:47 note interpolated-expression',
      'terraform/v5-escapes.tf:24:31-24:45 note interpolated-expression',
      'terraform/v5-escapes.tf:32:40-32:47 warning method-not-uppercase',
      'terraform/v5-escapes.tf:39:29-39:40 error invalid-ip',
    ],
  );
  const rules = run0.tool.driver.rules as { id: string; helpUri: string; help: { text: string } }[];
  assert.deepEqual(
    rules.map((x) => [x.id, x.helpUri]),
    [
      ['unknown-identifier', 'https://developers.cloudflare.com/ruleset-engine/rules-language/fields/'],
      ['interpolated-expression', 'https://developers.cloudflare.com/terraform/'],
      ['method-not-uppercase', 'https://developers.cloudflare.com/ruleset-engine/rules-language/fields/'],
      ['invalid-ip', 'https://developers.cloudflare.com/ruleset-engine/rules-language/values/'],
    ],
  );
  // The code's general hint, not the first finding's (`http.hots`…), which stays in its result.
  assert.equal(rules[0].help.text, 'The name is not a field or function of the Rules language; names are lower case and dot-separated (`http.request.uri.path`).\nSee https://developers.cloudflare.com/ruleset-engine/rules-language/fields/');
  assert.equal(run0.results[0].message.text, 'unknown identifier\n`http.hots` is not a field: did you mean `http.host`?');
  // Each result points at its rule.
  assert.deepEqual(
    run0.results.map((x: { ruleId: string; ruleIndex: number }) => rules[x.ruleIndex].id === x.ruleId),
    run0.results.map(() => true),
  );
});

test('sarif: a clean run is a valid log with no results, exit 0', async () => {
  const r = await check(['--format', 'sarif', 'cli/valid.cfrule']);
  assert.equal(r.code, 0);
  const log = JSON.parse(r.out);
  const valid = validate(log as unknown);
  assert.ok(valid, JSON.stringify(validate.errors));
  assert.deepEqual(log.runs[0].results, []);
  assert.deepEqual(log.runs[0].tool.driver.rules, []);
});

// GitHub code scanning refuses a whole upload if one result has no physical location, and an
// expression on the command line is in no file of the repository.
test('sarif with --expr is bad usage (exit 2): code scanning needs a file for every result', async () => {
  const r = await check(['--format', 'sarif', '--expr', 'http.hots eq "a"']);
  assert.equal(r.code, 2);
  assert.equal(r.out, '');
  assert.equal(
    r.err.split('\n')[0],
    'rulesmith: --format sarif needs files: code scanning places every result in a file, and an --expr expression is in none (put it in a .cfrule file, or use --format text or json)',
  );
});

const at = (line: number, character: number) => ({ line, character });
function sample(file: string | null, code: string, origin: Finding['origin'], message: string, hint?: string): Finding {
  return { file, rule: null, range: { start: at(0, 0), end: at(0, 4) }, severity: 'error', code, origin, message, ...(hint ? { hint } : {}) };
}
interface SarifRule {
  id: string;
  helpUri: string;
  shortDescription: { text: string };
  fullDescription: { text: string };
  help: { text: string; markdown: string };
}

test("sarif: a rule's texts are its code's general description; each result keeps its own message", () => {
  const log = sarifLog(
    [
      sample('a.cfrule', 'unknown-identifier', 'expression', 'unknown identifier', '`http.hots` is not a field: did you mean `http.host`?'),
      sample('b.cfrule', 'unknown-identifier', 'expression', 'unknown identifier', '`lenn` is not a field or function: did you mean `len`?'),
      sample('c.tf', 'interpolated-expression', 'terraform', 'cannot check: depends on var.host'),
    ],
    '1.2.3',
    '/repo',
  ) as { runs: { tool: { driver: { rules: SarifRule[] } }; results: { message: { text: string } }[] }[] };
  assert.ok(validate(log as unknown), JSON.stringify(validate.errors));
  const [identifier, interpolated] = log.runs[0].tool.driver.rules;
  // server/src/language/hints.ts, the table the editor's hover and docs/vscode.md use.
  const general = 'The name is not a field or function of the Rules language; names are lower case and dot-separated (`http.request.uri.path`).';
  const docs = 'https://developers.cloudflare.com/ruleset-engine/rules-language/fields/';
  assert.deepEqual(identifier, {
    id: 'unknown-identifier',
    name: 'UnknownIdentifier',
    shortDescription: { text: 'Unknown identifier' },
    fullDescription: { text: general },
    help: { text: `${general}\nSee ${docs}`, markdown: `${general}\n\n[Documentation](${docs})` },
    helpUri: docs,
    defaultConfiguration: { level: 'error' },
  });
  // A Terraform or ruleset code: its description in rulesets/problemDescriptions.ts, never one finding's text.
  const interpolatedText =
    'An expression depends on a Terraform value (`${var.host}`, a variable, a function call) that is known only at `terraform plan`, so that part is not checked. A note, not a problem: an interpolation inside a string of the expression lets the rest be checked, while anywhere else the whole expression is skipped.';
  assert.equal(interpolated.fullDescription.text, interpolatedText);
  assert.equal(interpolated.help.text, `${interpolatedText}\nSee https://developers.cloudflare.com/terraform/`);
  assert.deepEqual(
    log.runs[0].results.map((r) => r.message.text),
    [
      'unknown identifier\n`http.hots` is not a field: did you mean `http.host`?',
      'unknown identifier\n`lenn` is not a field or function: did you mean `len`?',
      'cannot check: depends on var.host',
    ],
  );
});

type Log = { runs: { tool: { driver: { rules: SarifRule[] } }; results: { ruleId: string; ruleIndex: number }[] }[] };
const descriptions = (findings: Finding[]) => Object.fromEntries((sarifLog(findings, '1.2.3', '/repo') as Log).runs[0].tool.driver.rules.map((r) => [r.id, r.fullDescription.text]));

const helpUris = (findings: Finding[]) => Object.fromEntries((sarifLog(findings, '1.2.3', '/repo') as { runs: { tool: { driver: { rules: { id: string; helpUri: string }[] } } }[] }).runs[0].tool.driver.rules.map((r) => [r.id, r.helpUri]));

test('sarif: a code the ruleset validator also reports (an unknown JSON key) gets its ruleset meaning and page, not the language hint', () => {
  const finding = sample('r.ruleset.json', 'unknown-field', 'ruleset', 'invalid JSON: unknown field "expresion"', 'Did you mean "expression"? A rule accepts …');
  assert.deepEqual(descriptions([finding]), {
    'ruleset/unknown-field':
      'The object has a key (in Terraform, an attribute or block) that the Rulesets API does not accept in that place. The API decodes strictly and refuses the whole request with `invalid JSON: unknown field`: correct the spelling (the hint suggests the nearest key) or remove it.',
  });
  assert.deepEqual(helpUris([finding]), { 'ruleset/unknown-field': 'https://developers.cloudflare.com/ruleset-engine/rulesets-api/json-object/' });
});

test('sarif: plan-required is the language hint for an expression and the ruleset meaning for the ruleset checks (rule ruleset/plan-required), by origin, not by the file (also when both are in one run)', () => {
  const language = 'The zone’s plan lacks this feature (setting `rulesmith.plan`): the API refuses the rule; use another field or a zone on that plan.';
  const ruleset =
    'The rule uses something above the zone’s plan (`--plan`, in the editor `rulesmith.plan`): the `log` action in custom rules or payload logging (`matched_data`), both Enterprise only, a managed ruleset the plan is not entitled to, a rate limiting setting above the plan (a longer period or timeout, a characteristic, a counting expression, complexity-based counting, a challenge that does not throttle), or inside an expression a field or function. The hosted API refuses it (a managed ruleset above the plan fails the whole write of the ruleset): remove it, or deploy to a zone on that plan.';
  const fields = 'https://developers.cloudflare.com/ruleset-engine/rules-language/fields/';
  const jsonObject = 'https://developers.cloudflare.com/ruleset-engine/rulesets-api/json-object/';
  const cfrule = sample('a.cfrule', 'plan-required', 'expression', '`cf.bot_management.score` requires the Business plan or above');
  // An expression's, in a ruleset JSON file: the language's meaning still.
  const inJsonExpression = sample('waf.ruleset.json', 'plan-required', 'expression', '`cf.bot_management.score` requires the Business plan or above');
  const json = sample('waf.ruleset.json', 'plan-required', 'ruleset', 'the log action in custom rules needs an Enterprise plan');
  const tf = sample('waf.TF', 'plan-required', 'ruleset', 'payload logging (matched_data) needs an Enterprise plan');
  assert.deepEqual(descriptions([cfrule]), { 'plan-required': language });
  assert.deepEqual(helpUris([cfrule]), { 'plan-required': fields });
  assert.deepEqual(descriptions([inJsonExpression]), { 'plan-required': language });
  assert.deepEqual(helpUris([inJsonExpression]), { 'plan-required': fields });
  assert.deepEqual(descriptions([json]), { 'ruleset/plan-required': ruleset });
  assert.deepEqual(helpUris([json]), { 'ruleset/plan-required': jsonObject });
  assert.deepEqual(descriptions([tf]), { 'ruleset/plan-required': ruleset });
  // Both in one run: a rule for each meaning, each result pointing at its own, whichever comes first.
  assert.deepEqual(descriptions([json, cfrule]), { 'ruleset/plan-required': ruleset, 'plan-required': language });
  assert.deepEqual(helpUris([json, cfrule]), { 'ruleset/plan-required': jsonObject, 'plan-required': fields });
  const both = sarifLog([cfrule, json, inJsonExpression], '1.2.3', '/repo') as Log;
  assert.ok(validate(both as unknown), JSON.stringify(validate.errors));
  assert.deepEqual(
    both.runs[0].results.map((r) => [r.ruleId, r.ruleIndex]),
    [
      ['plan-required', 0],
      ['ruleset/plan-required', 1],
      ['plan-required', 0],
    ],
  );
  assert.deepEqual(
    both.runs[0].tool.driver.rules.map((r) => [r.id, r.shortDescription.text]),
    [
      ['plan-required', 'Plan required'],
      ['ruleset/plan-required', 'Plan required (ruleset)'],
    ],
  );
  // A language code in ruleset JSON (an expression's) keeps its hint.
  assert.deepEqual(descriptions([sample('waf.ruleset.json', 'invalid-ip', 'expression', 'invalid IP')]), { 'invalid-ip': CODE_HELP['invalid-ip'].hint });
});

test('sarif: a code in neither table gets a general title line', () => {
  assert.equal(codeDescription('made-up-code'), "Made up code: each result's message says what was found.");
  assert.equal(codeDescription('constructor', true), "Constructor: each result's message says what was found.");
});

test('sarif: ruleset and Terraform findings of `check` are described by their codes, in the output', async () => {
  const r = await check(['--format', 'sarif', '--plan', 'free', 'terraform/v4-blocks.tf']);
  assert.equal(r.code, 1);
  const log = JSON.parse(r.out);
  assert.ok(validate(log as unknown), JSON.stringify(validate.errors));
  const rules = Object.fromEntries((log.runs[0].tool.driver.rules as SarifRule[]).map((x) => [x.id, x]));
  assert.deepEqual(Object.keys(rules), ['ruleset/plan-required', 'misplaced-score-threshold', 'unknown-action']);
  assert.equal(
    rules['misplaced-score-threshold'].fullDescription.text,
    '`score_threshold` only has an effect in a rule override of the anomaly-score rule of a scored managed ruleset (the OWASP Core Ruleset). Where the API does not take it (in `action_parameters`, ruleset-wide or on a category) the write is refused, and where it does (on the rule itself, on another rule’s override) it is ignored and the threshold stays where it was. Move it into a rule override of the anomaly-score rule (25 High, 40 Medium, 60 Low).',
  );
  const unknownAction =
    'The rule’s `action` is not an action of the Rulesets API, which answers `unknown variant for action`. Use one of the actions the hint lists: `allow` and `bypass` belong to the old firewall rules, and `skip` replaces them.';
  assert.equal(rules['unknown-action'].fullDescription.text, unknownAction);
  assert.equal(rules['unknown-action'].help.markdown, `${unknownAction}\n\n[Documentation](https://developers.cloudflare.com/ruleset-engine/rules-language/actions/)`);
  assert.match(rules['ruleset/plan-required'].fullDescription.text, /^The rule uses something above the zone’s plan/);
  // Each code's page, as the editor links it (rulesets/problemDescriptions.ts).
  assert.deepEqual(
    Object.values(rules).map((x) => [x.id, x.helpUri]),
    [
      ['ruleset/plan-required', 'https://developers.cloudflare.com/ruleset-engine/rulesets-api/json-object/'],
      ['misplaced-score-threshold', 'https://developers.cloudflare.com/waf/managed-rules/reference/owasp-core-ruleset/'],
      ['unknown-action', 'https://developers.cloudflare.com/ruleset-engine/rules-language/actions/'],
    ],
  );
  // The finding's own case stays in its result.
  assert.match(log.runs[0].results[2].message.text, /^unknown variant for action: blok\nDid you mean/);
});

test('sarif: a JSON file with no rule expression is described as such (the code `check` itself reports)', async () => {
  let out = '';
  const io: Io = { out: (s) => void (out += s), err: () => undefined, readFile: () => '{"name": "not a ruleset"}', writeFile: () => undefined, readStdin: () => '' };
  assert.equal(await run(['check', '--format', 'sarif', 'settings.json'], io), 0);
  const log = JSON.parse(out);
  assert.ok(validate(log as unknown), JSON.stringify(validate.errors));
  assert.deepEqual(
    (log.runs[0].tool.driver.rules as SarifRule[]).map((x) => [x.id, x.fullDescription.text]),
    [
      [
        NO_EXPRESSIONS,
        'The JSON file has no rule with an `expression`: it is not a ruleset, an API response with `result.rules` or an array of rules, so nothing in it was checked (a warning). Leave the file out of the check, or give the ruleset it was meant to be. A file of several rulesets (a zone file with `entryPoints` or phases as keys, a list of rulesets, an API answer listing them) is an error, never a pass: give each ruleset its own file, or read it with `eval --config` or `preview`.',
      ],
    ],
  );
});

test('sarif: paths become URIs under %SRCROOT% (the working directory), or file: URIs outside it', () => {
  assert.deepEqual(artifactLocation('rules/waf.json', '/repo'), { uri: 'rules/waf.json', uriBaseId: '%SRCROOT%' });
  assert.deepEqual(artifactLocation('./rules/waf.json', '/repo'), { uri: 'rules/waf.json', uriBaseId: '%SRCROOT%' });
  assert.deepEqual(artifactLocation('rules/old/../waf.json', '/repo'), { uri: 'rules/waf.json', uriBaseId: '%SRCROOT%' });
  assert.deepEqual(artifactLocation('/repo/rules/waf.tf', '/repo'), { uri: 'rules/waf.tf', uriBaseId: '%SRCROOT%' });
  assert.deepEqual(artifactLocation('rules/a b#1.cfrule', '/repo/'), { uri: 'rules/a%20b%231.cfrule', uriBaseId: '%SRCROOT%' });
  assert.deepEqual(artifactLocation('/elsewhere/waf.tf', '/repo'), { uri: 'file:///elsewhere/waf.tf' });
  assert.deepEqual(artifactLocation('../sibling/waf.tf', '/repo'), { uri: 'file:///sibling/waf.tf' });
  // A folder whose name starts with two dots is still inside.
  assert.deepEqual(artifactLocation('..rules/waf.tf', '/repo'), { uri: '..rules/waf.tf', uriBaseId: '%SRCROOT%' });
});

test('sarif: `check ./x` names the file as `x` under %SRCROOT%, which the run maps to the working directory', async () => {
  const r = await check(['--format', 'sarif', './cli/escaped.ruleset.json', 'cli/../cli/unknown-field.cfrule']);
  assert.equal(r.code, 1);
  const log = JSON.parse(r.out);
  assert.ok(validate(log as unknown), JSON.stringify(validate.errors));
  assert.deepEqual(log.runs[0].originalUriBaseIds, { '%SRCROOT%': { uri: `${pathToFileURL(process.cwd()).href}/` } });
  assert.deepEqual(
    (log.runs[0].results as SarifResult[]).map((x) => x.locations![0].physicalLocation.artifactLocation),
    [
      { uri: 'cli/escaped.ruleset.json', uriBaseId: '%SRCROOT%' },
      { uri: 'cli/unknown-field.cfrule', uriBaseId: '%SRCROOT%' },
    ],
  );
});

test('github: one workflow command per finding, message escaped', async () => {
  const r = await check(['--format', 'github', 'cli/escaped.ruleset.json', 'terraform/v4-blocks.tf']);
  assert.equal(r.code, 1);
  const lines = r.out.trimEnd().split('\n');
  assert.equal(lines[0], '::error file=cli/escaped.ruleset.json,line=4,col=79,endLine=4,endColumn=88,title=unknown-identifier::unknown identifier%0A`http.hots` is not a field: did you mean `http.host`?');
  assert.match(lines[1], /^::error file=terraform\/v4-blocks\.tf,line=17,col=11,endLine=17,endColumn=26,title=misplaced-score-threshold::score_threshold has no effect on a category/);
  assert.match(lines[2], /^::error file=terraform\/v4-blocks\.tf,line=26,col=18,endLine=26,endColumn=24,title=unknown-action::unknown variant for action: blok%0ADid you mean/);
  assert.equal(lines.length, 3);
});

test('an unknown --format is bad usage (exit 2)', async () => {
  const r = await check(['--format', 'xml', 'cli/valid.cfrule']);
  assert.equal(r.code, 2);
  assert.match(r.err, /--format must be text, json, sarif or github \(got "xml"\)/);
});
