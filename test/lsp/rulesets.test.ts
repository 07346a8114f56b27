// Ruleset features over the wire: validation problems on the exact JSON node (with the
// expression diagnostics), CodeLens and hover on execute rules, completion of categories,
// rule ids, rulesets and actions, and the quick fixes applied with the resulting JSON
// asserted exactly. Expectations about the shipped catalog (rule counts) are computed from
// it, so they hold when the OWASP-based rules are replaced by the CRS conversion.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { CodeAction, CodeLens, CompletionList, Diagnostic, Hover, MarkupContent } from 'vscode-languageserver-protocol';
import { defaultCatalog } from '../../server/src/managed/catalog';
import { OWASP_ANOMALY_RULE_ID, OWASP_RULESET_ID, VENDOR_RULESET_ID } from '../../server/src/rulesets/managedIds';
import { paranoiaLevelOf, rulesetVersion } from '../../server/src/rulesets/catalog';
import { applyWorkspaceEdit, caret, LspClient, positionAt, rangeText } from './client';

const O = OWASP_RULESET_ID;
const V = VENDOR_RULESET_ID;
const A = OWASP_ANOMALY_RULE_ID;
const owasp = rulesetVersion(defaultCatalog.rulesets.find((r) => r.id === O)!)!;
const vendor = rulesetVersion(defaultCatalog.rulesets.find((r) => r.id === V)!)!;

let client: LspClient;
before(async () => {
  client = await LspClient.start({ settings: { rulesetFiles: ['*.rules.json'] } });
});
after(async () => {
  await client?.close();
});

let n = 0;
async function open(text: string, extension = 'ruleset.json'): Promise<string> {
  const uri = `file:///rs/${++n}.${extension}`;
  await client.open(uri, 'json', text);
  return uri;
}

async function diagnostics(text: string, extension?: string): Promise<{ uri: string; list: Diagnostic[] }> {
  const uri = await open(text, extension);
  return { uri, list: (await client.diagnostics(uri, { version: 1 })).diagnostics };
}

const THRESHOLD_ON_OVERRIDES = `{
  "name": "default",
  "kind": "zone",
  "phase": "http_request_firewall_managed",
  "rules": [
    {
      "ref": "owasp",
      "expression": "true",
      "action": "execute",
      "action_parameters": {
        "id": "${O}",
        "overrides": {
          "action": "managed_challenge",
          "score_threshold": 25,
          "categories": [
            { "category": "paranoia-level-2", "enabled": false },
            { "category": "paranoia-level-3", "enabled": false },
            { "category": "paranoia-level-4", "enabled": false }
          ]
        }
      }
    }
  ]
}
`;

test('the server offers CodeLens', () => {
  assert.deepEqual(client.initializeResult?.capabilities.codeLensProvider, { resolveProvider: false });
});

test('diagnostics: ruleset problems on the exact node, with the expression ones, in document order', async () => {
  const text = `{
  "phase": "http_request_firewall_managed",
  "rules": [
    { "ref": "a", "expression": "http.hots eq \\"x\\"", "action": "block" },
    { "ref": "b", "expression": "true", "action": "execute", "action_parameters": { "id": "${V}", "overrides": { "categories": [{ "category": "wordpres", "enabled": true }] } } },
    { "expression": "ssl", "action": "skip", "action_parameters": { "ruleset": "current" }, "enabled": "no" }
  ]
}
`;
  const { list } = await diagnostics(text);
  assert.deepEqual(
    list.map((d) => [d.code, d.severity, rangeText(text, d.range)]),
    [
      ['unknown-identifier', 1, 'http.hots'],
      ['action-not-in-phase', 1, '"block"'],
      ['unknown-category', 1, '"wordpres"'],
      ['missing-ref', 3, '{'],
    ],
  );
  const cat = list[2];
  assert.equal(cat.message, "'wordpres' is not a category of Cloudflare Managed Ruleset (version 2)\nDid you mean `wordpress`? The category must be a tag of some rule of the ruleset; completion lists them.");
  assert.equal(cat.source, 'rulesmith');
  assert.equal(cat.codeDescription?.href, 'https://developers.cloudflare.com/ruleset-engine/managed-rulesets/override-managed-ruleset/');
  assert.deepEqual(cat.data, { suggestions: ['wordpress'] });
  assert.equal(
    (list[1].message as string).split('\n')[0],
    "'block' is not a valid value for Action because it is not possible to use the block action in a ruleset with phase http_request_firewall_managed",
  );
});

test('diagnostics: what the contributed schema reports is left to it in *.ruleset.json, reported elsewhere', async () => {
  const text = '{"phase": "http_request_firewall_custom", "rules": [{"ref": "a", "expression": "true", "action": "block", "enabled": "no", "priority": 1}]}';
  const covered = await diagnostics(text);
  assert.deepEqual(covered.list, []);
  const other = await diagnostics(text, 'rules.json');
  assert.deepEqual(
    other.list.map((d) => [d.code, rangeText(text, d.range), d.message]),
    [
      ['wrong-type', '"no"', '"enabled" must be a boolean, not a string'],
      ['unknown-field', '"priority"', 'invalid JSON: unknown field "priority"\nA rule accepts `id`, `version`, `action`, `action_parameters`, `expression`, `description`, `enabled`, `ref`, `logging`, `categories`, `exposed_credential_check`, `ratelimit`, `last_updated`, `score_threshold`.'],
    ],
  );
});

test('diagnostics: a misplaced score_threshold and the action beside it', async () => {
  const { list } = await diagnostics(THRESHOLD_ON_OVERRIDES);
  assert.deepEqual(
    list.map((d) => [d.code, d.severity, rangeText(THRESHOLD_ON_OVERRIDES, d.range)]),
    [
      ['misplaced-override-action', 2, '"action": "managed_challenge"'],
      ['misplaced-score-threshold', 1, '"score_threshold": 25'],
    ],
  );
  assert.match(list[1].message as string, /^score_threshold has no effect on the ruleset-wide overrides: only the anomaly-score rule "949110: Inbound Anomaly Score Exceeded" has a threshold\nSet it in a rule override/);
});

test('diagnostics: an execute of a custom ruleset open in the workspace is not unknown', async () => {
  const custom = 'cccccccccccccccccccccccccccccccc';
  const entry = `{"phase": "http_request_firewall_custom", "kind": "root", "rules": [{"ref": "a", "expression": "true", "action": "execute", "action_parameters": {"id": "${custom}"}}]}`;
  const before = await diagnostics(entry);
  assert.deepEqual(before.list.map((d) => [d.code, d.severity]), [['unknown-managed-ruleset', 2]]);
  await open(`{"id": "${custom}", "name": "mine", "kind": "custom", "phase": "http_request_firewall_custom", "rules": []}`);
  const after = await diagnostics(entry);
  assert.deepEqual(after.list, []);
});

// ---------------------------------------------------------------------------------------

const DEPLOY = `{
  "phase": "http_request_firewall_managed",
  "rules": [
    {
      "ref": "vendor",
      "expression": "true",
      "action": "execute",
      "action_parameters": { "id": "${V}", "overrides": { "categories": [{ "category": "wordpress", "enabled": true }] } }
    },
    {
      "ref": "owasp",
      "expression": "true",
      "action": "execute",
      "action_parameters": {
        "id": "${O}",
        "overrides": {
          "categories": [
            { "category": "paranoia-level-3", "enabled": false },
            { "category": "paranoia-level-4", "enabled": false }
          ],
          "rules": [{ "id": "${A}", "score_threshold": 60, "action": "log" }]
        }
      }
    }
  ]
}
`;

test('CodeLens: the effective configuration above each execute rule', async () => {
  const uri = await open(DEPLOY);
  const lenses = await client.request<CodeLens[]>('textDocument/codeLens', { textDocument: { uri } });
  const vendorOn = vendor.rules.filter((r) => r.enabled || r.categories.includes('wordpress')).length;
  const owaspOn = owasp.rules.filter((r) => r.enabled && (paranoiaLevelOf(r) ?? 1) <= 2).length;
  assert.deepEqual(
    lenses.map((l) => [l.range.start.line, l.command?.title]),
    [
      [3, `Cloudflare Managed Ruleset · default actions · ${vendorOn} of ${vendor.rules.length} rules on`],
      [9, `Cloudflare OWASP Core Ruleset · PL2 · threshold Low – 60 and higher · log · ${owaspOn} of ${owasp.rules.length} rules on`],
    ],
  );
  // Bare: every level, the default threshold and action; a disabled rule and a pinned version say so.
  const bare = await open(`{"rules": [{"ref": "o", "expression": "true", "action": "execute", "action_parameters": {"id": "${O}"}}, {"ref": "v", "enabled": false, "expression": "true", "action": "execute", "action_parameters": {"id": "${V}", "version": "1"}}]}`);
  const titles = (await client.request<CodeLens[]>('textDocument/codeLens', { textDocument: { uri: bare } })).map((l) => l.command?.title);
  assert.deepEqual(titles, [
    `Cloudflare OWASP Core Ruleset · PL4 · threshold Medium – 40 and higher · block · ${owasp.rules.filter((r) => r.enabled).length} of ${owasp.rules.length} rules on`,
    'Cloudflare Managed Ruleset · version 1 · rule disabled: nothing runs',
  ]);
});

async function hover(text: string, at: number): Promise<{ value: string; range: string } | null> {
  const uri = await open(text);
  const h = await client.request<Hover | null>('textDocument/hover', { textDocument: { uri }, position: positionAt(text, at) });
  return h && { value: (h.contents as MarkupContent).value, range: rangeText(text, h.range!) };
}

test('hover: the execute rule\'s ruleset id, an override\'s rule id and category', async () => {
  const onId = await hover(DEPLOY, DEPLOY.indexOf(O) + 3);
  assert.ok(onId);
  assert.equal(onId.range, `"${O}"`);
  const lines = onId.value.split('\n');
  assert.equal(lines[0], `**Cloudflare OWASP Core Ruleset** · managed ruleset \`${O}\` · http_request_firewall_managed`);
  assert.match(lines[2], /^Cloudflare OWASP Core Ruleset · PL2 · threshold Low – 60 and higher · log · \d+ of \d+ rules on$/);
  assert.match(onId.value, /anomaly-score rule 949110/);

  const onRule = await hover(DEPLOY, DEPLOY.indexOf(A) + 1);
  assert.ok(onRule);
  assert.equal(onRule.range, `"${A}"`);
  assert.equal(
    onRule.value,
    [
      '**949110: Inbound Anomaly Score Exceeded**',
      '',
      `\`${A}\` · rule of Cloudflare OWASP Core Ruleset · ref \`ad0beb2fce9f149e565ee78d6e659d47\``,
      '',
      'Tags: `application-multi`, `language-multi`, `platform-multi`, `attack-generic`',
      '',
      'Default: block at threshold Medium – 40 and higher · on',
      '',
      'Here: log at threshold Low – 60 and higher · on (overridden by rule)',
    ].join('\n'),
  );

  const onCat = await hover(DEPLOY, DEPLOY.indexOf('paranoia-level-3') + 2);
  assert.ok(onCat);
  // CRS 3.3.4 has 19 PL3 request rules: the first ten are listed.
  const pl3 = owasp.rules.filter((r) => r.categories.includes('paranoia-level-3'));
  assert.equal(pl3.length, 19);
  assert.equal(onCat.value.split('\n')[0], '**paranoia-level-3** · 19 rules of Cloudflare OWASP Core Ruleset (19 on by default)');
  assert.deepEqual(onCat.value.split('\n').slice(2), [
    '- 920272: Invalid character in request (outside of printable chars below ascii 127)',
    "- 920490: Request header x-up-devcap-post-charset detected in combination with prefix 'UP' to User-Agent",
    '- 920510: Invalid Cache-Control request header',
    '- 921180: HTTP Parameter Pollution (%{TX.1})',
    '- 921230: HTTP Range Header detected',
    '- 932106: Remote Command Execution: Unix Command Injection',
    '- 932190: Remote Command Execution: Wildcard bypass technique attempt',
    '- 933111: PHP Injection Attack: PHP Script File Upload Found',
    '- 933131: PHP Injection Attack: Variables Found',
    '- 933161: PHP Injection Attack: Low-Value PHP Function Call Found',
    '- … and 9 more',
  ]);

  // A key, or a string the ruleset features know nothing about: no answer.
  assert.equal(await hover(DEPLOY, DEPLOY.indexOf('"ref"') + 2), null);
  assert.equal(await hover(DEPLOY, DEPLOY.indexOf('"vendor"') + 2), null);
});

// ---------------------------------------------------------------------------------------

async function complete(marked: string): Promise<{ text: string; list: CompletionList | null }> {
  const { text, offset } = caret(marked);
  const uri = await open(text);
  const list = await client.request<CompletionList | null>('textDocument/completion', { textDocument: { uri }, position: positionAt(text, offset) });
  return { text, list };
}

test('completion: category tags of the deployed ruleset inside "category": "|"', async () => {
  const { text, list } = await complete(`{"rules": [{"ref": "a", "expression": "true", "action": "execute", "action_parameters": {"id": "${O}", "overrides": {"categories": [{"category": "para|"}]}}}]}`);
  assert.ok(list);
  const labels = list.items.map((i) => i.label);
  assert.ok(labels.includes('paranoia-level-1') && labels.includes('paranoia-level-2'), JSON.stringify(labels));
  const pl2 = list.items.find((i) => i.label === 'paranoia-level-2')!;
  const count = owasp.rules.filter((r) => r.categories.includes('paranoia-level-2')).length;
  assert.equal(pl2.detail, `${count} rule${count === 1 ? '' : 's'} of Cloudflare OWASP Core Ruleset (${count} on by default)`);
  const edit = pl2.textEdit as { range: import('vscode-languageserver-protocol').Range; newText: string };
  assert.equal(rangeText(text, edit.range), 'para');
  assert.equal(edit.newText, 'paranoia-level-2');
});

test('completion: rule ids of the deployed ruleset inside an override\'s "id", by description', async () => {
  const { text, list } = await complete(`{"rules": [{"ref": "a", "expression": "true", "action": "execute", "action_parameters": {"id": "${O}", "overrides": {"rules": [{"id": "|", "enabled": false}]}}}]}`);
  assert.ok(list);
  assert.equal(list.items.length, owasp.rules.length);
  const anomaly = list.items.find((i) => i.label === '949110: Inbound Anomaly Score Exceeded')!;
  assert.equal(anomaly.detail, A);
  assert.equal(anomaly.filterText, `949110: Inbound Anomaly Score Exceeded ${A}`);
  const edit = anomaly.textEdit as { range: import('vscode-languageserver-protocol').Range; newText: string };
  assert.equal(rangeText(text, edit.range), '');
  assert.equal(edit.newText, A);
  assert.match((anomaly.documentation as MarkupContent).value, /^\*\*949110: Inbound Anomaly Score Exceeded\*\*/);
});

test('completion: with no value yet the item brings its quotes', async () => {
  const { list } = await complete(`{"rules": [{"ref": "a", "expression": "true", "action": "execute", "action_parameters": {"id": "${V}", "overrides": {"categories": [{"category": |}]}}}]}`);
  const wp = list?.items.find((i) => i.label === 'wordpress');
  assert.equal((wp?.textEdit as { newText: string }).newText, '"wordpress"');
});

test('completion: managed rulesets in an execute id, actions per phase, override actions, skip products', async () => {
  const ids = await complete('{"phase": "http_request_firewall_managed", "rules": [{"ref": "a", "expression": "true", "action": "execute", "action_parameters": {"id": "|"}}]}');
  assert.deepEqual(ids.list?.items.map((i) => [i.label, (i.textEdit as { newText: string }).newText]), defaultCatalog.rulesets.map((r) => [r.name, r.id]));
  const actions = await complete('{"phase": "http_request_firewall_managed", "rules": [{"ref": "a", "expression": "true", "action": "|"}]}');
  assert.deepEqual(actions.list?.items.map((i) => i.label), ['execute', 'skip']);
  const custom = await complete('{"phase": "http_request_firewall_custom", "rules": [{"ref": "a", "expression": "true", "action": "|"}]}');
  assert.deepEqual(custom.list?.items.map((i) => i.label), ['block', 'challenge', 'js_challenge', 'managed_challenge', 'log', 'skip', 'execute']);
  const override = await complete(`{"rules": [{"ref": "a", "expression": "true", "action": "execute", "action_parameters": {"id": "${O}", "overrides": {"rules": [{"id": "${A}", "action": "|"}]}}}]}`);
  assert.deepEqual(override.list?.items.map((i) => i.label), ['block', 'challenge', 'js_challenge', 'managed_challenge', 'log']);
  const products = await complete('{"rules": [{"ref": "a", "expression": "true", "action": "skip", "action_parameters": {"products": ["|"]}}]}');
  assert.deepEqual(products.list?.items.map((i) => i.label), ['zoneLockdown', 'uaBlock', 'bic', 'hot', 'securityLevel', 'rateLimit', 'waf']);
  // Inside an expression the expression completion answers, as before.
  const expr = await complete('{"rules": [{"ref": "a", "expression": "http.ho|", "action": "block"}]}');
  assert.ok(expr.list?.items.some((i) => i.label === 'http.host'));
});

// ---------------------------------------------------------------------------------------

async function fix(text: string, title: string, at: number, end = at): Promise<string> {
  const uri = await open(text);
  const range = { start: positionAt(text, at), end: positionAt(text, end) };
  const list = await client.request<CodeAction[]>('textDocument/codeAction', { textDocument: { uri }, range, context: { diagnostics: [], only: ['quickfix'] } });
  const action = list.find((a) => a.title === title);
  assert.ok(action, `no action "${title}" among ${JSON.stringify(list.map((a) => a.title))}`);
  return applyWorkspaceEdit(text, action.edit, uri);
}

test('quick fix: a threshold and action on the ruleset-wide overrides move to the anomaly rule', async () => {
  const fixed = await fix(THRESHOLD_ON_OVERRIDES, "Move score_threshold and the action to the anomaly-score rule's override", THRESHOLD_ON_OVERRIDES.indexOf('"score_threshold"'));
  assert.equal(
    fixed,
    `{
  "name": "default",
  "kind": "zone",
  "phase": "http_request_firewall_managed",
  "rules": [
    {
      "ref": "owasp",
      "expression": "true",
      "action": "execute",
      "action_parameters": {
        "id": "${O}",
        "overrides": {
          "categories": [
            { "category": "paranoia-level-2", "enabled": false },
            { "category": "paranoia-level-3", "enabled": false },
            { "category": "paranoia-level-4", "enabled": false }
          ],
          "rules": [
            {
              "id": "${A}",
              "score_threshold": 25,
              "action": "managed_challenge"
            }
          ]
        }
      }
    }
  ]
}
`,
  );
  // The fixed document has no problem left.
  const uri = await open(fixed);
  assert.deepEqual((await client.diagnostics(uri, { version: 1 })).diagnostics, []);
});

test('quick fix: a threshold on a category moves into the existing anomaly override; the emptied category goes', async () => {
  const text = `{
  "phase": "http_request_firewall_managed",
  "rules": [
    {
      "ref": "owasp",
      "expression": "true",
      "action": "execute",
      "action_parameters": {
        "id": "${O}",
        "overrides": {
          "categories": [
            { "category": "paranoia-level-1", "score_threshold": 60 },
            { "category": "paranoia-level-2", "enabled": false }
          ],
          "rules": [{ "id": "${A}", "action": "log" }]
        }
      }
    }
  ]
}
`;
  const fixed = await fix(text, "Move score_threshold to the anomaly-score rule's override", text.indexOf('"score_threshold"') + 3);
  assert.equal(
    fixed,
    `{
  "phase": "http_request_firewall_managed",
  "rules": [
    {
      "ref": "owasp",
      "expression": "true",
      "action": "execute",
      "action_parameters": {
        "id": "${O}",
        "overrides": {
          "categories": [
            { "category": "paranoia-level-2", "enabled": false }
          ],
          "rules": [{ "id": "${A}", "action": "log", "score_threshold": 60 }]
        }
      }
    }
  ]
}
`,
  );
});

test('quick fix: set paranoia level 1 on a bare OWASP deployment', async () => {
  const text = `{
  "phase": "http_request_firewall_managed",
  "rules": [
    {
      "ref": "owasp",
      "expression": "true",
      "action": "execute",
      "action_parameters": {
        "id": "${O}"
      }
    }
  ]
}
`;
  const fixed = await fix(text, 'Set paranoia level 1 (disable PL2–PL4)', text.indexOf(O));
  assert.equal(
    fixed,
    `{
  "phase": "http_request_firewall_managed",
  "rules": [
    {
      "ref": "owasp",
      "expression": "true",
      "action": "execute",
      "action_parameters": {
        "id": "${O}",
        "overrides": {
          "categories": [
            {
              "category": "paranoia-level-2",
              "enabled": false
            },
            {
              "category": "paranoia-level-3",
              "enabled": false
            },
            {
              "category": "paranoia-level-4",
              "enabled": false
            }
          ]
        }
      }
    }
  ]
}
`,
  );
});

test('quick fix: add a missing ref in the rule\'s layout; change a misspelt category', async () => {
  const text = '{\n  "rules": [\n    { "description": "Block bad bots", "expression": "cf.client.bot", "action": "block" },\n    {\n      "expression": "ssl",\n      "action": "block"\n    }\n  ]\n}\n';
  const first = await fix(text, 'Add "ref": "block_bad_bots"', text.indexOf('{ "description"'));
  assert.equal(first, '{\n  "rules": [\n    { "ref": "block_bad_bots", "description": "Block bad bots", "expression": "cf.client.bot", "action": "block" },\n    {\n      "expression": "ssl",\n      "action": "block"\n    }\n  ]\n}\n');
  const second = await fix(text, 'Add "ref": "rule_2"', text.indexOf('{\n      "expression"'));
  assert.equal(second, '{\n  "rules": [\n    { "description": "Block bad bots", "expression": "cf.client.bot", "action": "block" },\n    {\n      "ref": "rule_2",\n      "expression": "ssl",\n      "action": "block"\n    }\n  ]\n}\n');

  const typo = `{"rules": [{"ref": "a", "expression": "true", "action": "execute", "action_parameters": {"id": "${V}", "overrides": {"categories": [{"category": "wordpres", "enabled": true}]}}}]}`;
  assert.equal(await fix(typo, 'Change to `wordpress`', typo.indexOf('wordpres')), typo.replace('"wordpres"', '"wordpress"'));
});

test('hover and completion in a skip rule\'s rules; completion of an execute version', async () => {
  const first = vendor.rules[0];
  const text = `{"phase": "http_request_firewall_managed", "rules": [{"ref": "s", "expression": "true", "action": "skip", "action_parameters": {"rules": {"${V}": ["${first.id}"]}}}]}`;
  const h = await hover(text, text.indexOf(first.id) + 1);
  assert.ok(h);
  assert.equal(h.range, `"${first.id}"`);
  assert.equal(h.value.split('\n')[0], `**${first.description}**`);
  assert.ok(!h.value.includes('Here:'), 'no execute rule, so no effective state');
  const ids = await complete(`{"rules": [{"ref": "s", "expression": "true", "action": "skip", "action_parameters": {"rules": {"${V}": ["|"]}}}]}`);
  assert.equal(ids.list?.items.length, vendor.rules.length);
  const versions = await complete(`{"rules": [{"ref": "v", "expression": "true", "action": "execute", "action_parameters": {"id": "${V}", "version": "|"}}]}`);
  assert.deepEqual(versions.list?.items.map((i) => i.label), ['latest', '2', '1']);
});
