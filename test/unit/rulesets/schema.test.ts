// The JSON schema contributed for *.ruleset.json (client/schemas/ruleset.schema.json):
// its enums are the model's, and it agrees with the validator on which documents have
// schema-level problems (`schema: true`: types, required and unknown properties,
// patterns, bounds), the ones the language server leaves to VS Code's JSON service for
// files the schema covers. Checked with ajv (draft-07), a dev dependency.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { test } from 'node:test';
import Ajv from 'ajv';
import { PHASES } from '../../../server/src/language/scheme/types';
import type { ManagedCatalog } from '../../../server/src/rulesets/catalog';
import { ACTIONS, SKIP_PRODUCTS } from '../../../server/src/rulesets/model';
import { OVERRIDE_ACTIONS } from '../../../server/src/rulesets/actions';
import { BLOCK_CONTENT_TYPES, validateRulesetJson } from '../../../server/src/rulesets/validate';

const root = new URL('../../../', import.meta.url).pathname;
const schema = JSON.parse(readFileSync(`${root}client/schemas/ruleset.schema.json`, 'utf8'));
const dir = `${root}test/fixtures/rulesets/`;
const catalog = JSON.parse(readFileSync(`${dir}catalog.json`, 'utf8')) as ManagedCatalog;

const compiled = new Ajv({ strict: false, allErrors: true }).compile(schema);

const softEnum = (s: { anyOf?: { enum?: string[] }[] }) => s.anyOf?.find((b) => b.enum)?.enum;

test('the schema is draft-07 with the model\'s enums (as suggestions)', () => {
  assert.equal(schema.$schema, 'http://json-schema.org/draft-07/schema#');
  const d = schema.definitions;
  assert.deepEqual(softEnum(d.rule.properties.action), [...ACTIONS]);
  assert.deepEqual(softEnum(d.ruleset.properties.phase), [...PHASES]);
  assert.deepEqual(softEnum(d.ruleset.properties.kind), ['managed', 'custom', 'root', 'zone']);
  assert.deepEqual(softEnum(d.skipParameters.properties.products.items), [...SKIP_PRODUCTS]);
  assert.deepEqual(softEnum(d.overrides.properties.action), [...OVERRIDE_ACTIONS]);
  assert.deepEqual(d.blockParameters.properties.response.properties.content_type.enum, [...BLOCK_CONTENT_TYPES]);
  // Every action with parameters of its own has an if/then branch.
  const branches = d.rule.allOf.map((b: { if: { properties: { action: { const?: string; enum?: string[] } } } }) => b.if.properties.action.const ?? b.if.properties.action.enum);
  for (const a of ['block', 'execute', 'skip', 'score', 'set_config', 'rewrite', 'redirect', 'route', 'serve_error', 'compress_response', 'log_custom_field']) {
    assert.ok(branches.some((b: string | string[]) => b === a), `a branch for ${a}`);
  }
});

const INLINE = [
  '{"rules": [{"ref": "a", "expression": "true", "action": "block", "action_parameters": {"response": {"status_code": 403, "content": "x", "content_type": "text/plain"}}}]}',
  '{"rules": [{"ref": "a", "expression": "true", "action": "block", "action_parameters": {"response": {"status_code": 403, "content": "x", "content_type": "text/css"}}}]}',
  '{"rules": [{"ref": "a", "expression": "true", "action": "execute", "action_parameters": {"id": "4814384a9e5d4991b9815dcfc25d2f1f", "overrides": {}}}]}',
  '{"rules": [{"ref": "a", "expression": "true", "action": "execute"}]}',
  '{"rules": [{"ref": "a", "expression": "true", "action": "skip", "action_parameters": {}}]}',
  '{"rules": [{"ref": "a", "expression": "true", "action": "skip", "action_parameters": {"rules": {"XYZ": ["efb7b8c949ac4650a09736fc376e9aee"]}}}]}',
  '{"rules": [{"ref": "a", "expression": "true", "action": "score", "action_parameters": {"increment": 3}}]}',
  '{"rules": [{"ref": "a", "expression": "true", "action": "set_config"}]}',
  '{"rules": [{"ref": "a", "expression": "true", "action": "execute", "action_parameters": {"id": "4814384a9e5d4991b9815dcfc25d2f1f", "version": "v2"}}]}',
  '{"rules": [{"ref": "a", "expression": "true", "action": "execute", "action_parameters": {"id": "4814384a9e5d4991b9815dcfc25d2f1f", "overrides": {"rules": [{"id": "6179ae15870a4bb7b2d480d4843b323c", "score_threshold": 0}]}}}]}',
  '{"rules": [{"ref": "a", "expression": "true", "action": "execute", "action_parameters": {"id": "4814384a9e5d4991b9815dcfc25d2f1f", "overrides": {"categories": [{"category": "x"}]}}}]}',
  '{"rules": [{"ref": "a", "expression": "true", "action": "rewrite", "action_parameters": {"url": {}}}]}',
  '{"rules": [{"ref": "a", "expression": "true", "action": "block", "ratelimit": {"characteristics": [], "period": 10}}]}',
  '[{"ref": "a", "expression": "true", "action": "log", "logging": {}}]',
  '{"success": true, "result": {"rules": [{"ref": "a", "expression": "true", "action": "block", "enabled": 1}]}}',
  '"not a ruleset"',
];

test('the schema and the validator agree on which documents have schema-level problems', () => {
  const texts = [...readdirSync(dir).filter((f) => f.endsWith('.ruleset.json')).map((f) => [f, readFileSync(dir + f, 'utf8')]), ...INLINE.map((t, i) => [`inline ${i}`, t])];
  let invalid = 0;
  for (const [name, text] of texts) {
    const ours = validateRulesetJson(text, { catalog, expressions: false }).filter((p) => p.schema);
    const valid = compiled(JSON.parse(text));
    if (!valid) invalid++;
    assert.equal(
      valid,
      ours.length === 0,
      `${name}: schema ${valid ? 'valid' : `invalid (${JSON.stringify(compiled.errors?.map((e) => `${e.instancePath} ${e.message}`))})`}, validator ${JSON.stringify(ours.map((p) => [p.code, text.slice(p.start, p.end)]))}`,
    );
  }
  assert.ok(invalid >= 15, `enough invalid documents exercised (${invalid})`);
});
