// Issue 17's flows inside a real VS Code, against the harness's rules service: the deploy
// diff first with a non-modal question that names rules (ids in a hover), the trace views'
// "matched only" / "all rules" and crs.* switches and the verdict that names a logging
// rule, Create Firewall Rule from a scratch .cfrule editor, the paranoia preview's target
// and clickable cells, and "Pull and re-apply my edits" (a clean merge, then a conflict in
// the merge editor). Questions are answered through the testing hook (api.testing).
const assert = require('node:assert/strict');
const fs = require('node:fs');
const vscode = require('vscode');
const h = require('./helpers');

const OWASP = '4814384a9e5d4991b9815dcfc25d2f1f';
const CUSTOM = 'http_request_firewall_custom';

function serviceInfo() {
  return JSON.parse(fs.readFileSync(h.workspaceUri('.rulesmith-e2e/service.json').fsPath, 'utf8'));
}

async function setApi(name, value) {
  await vscode.workspace.getConfiguration('rulesmith.api').update(name, value, vscode.ConfigurationTarget.Global);
}

/** The lenses of `uri` once `predicate` holds (providers answer once the server runs). */
async function lensesWhen(uri, predicate, what, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const ls = (await vscode.commands.executeCommand('vscode.executeCodeLensProvider', uri)) || [];
    if (predicate(ls)) return ls;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(ls.map((l) => l.command && l.command.title))}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The value of `get()` once it is truthy (polled: tab changes have events, but not for every input kind). */
async function waitFor(get, what, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = get();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const rule = (ref, extra = {}) => ({ ref, description: `ux ${ref}`, action: 'block', expression: `http.request.uri.path eq "/${ref}"`, ...extra });

describe('Rulesmith: issue 17 flows (deploy, trace views, scratch rule, preview target, pull and re-apply)', function () {
  this.timeout(180_000);
  let api;
  let zones;
  let rest;
  let maxCorpusBefore;

  before(async function () {
    ({ api } = await h.activateExtension());
    await h.waitForEvent(api.onDidChangeServerState, (s) => s === 'running', () => api.serverState() === 'running', 60_000, 'the server to run');
    api.testing.clear();
    const svc = serviceInfo();
    await setApi('baseUrl', svc.baseUrl);
    const signed = await vscode.commands.executeCommand('rulesmith.signIn', { token: svc.token });
    assert.ok(signed, JSON.stringify(api.testing.peek()));
    rest = await api.connection.api();
    zones = Object.fromEntries((await rest.listZones()).map((z) => [z.name, z]));
    // The harness's user settings set this too (for the UI tests after this suite): put it back after.
    maxCorpusBefore = vscode.workspace.getConfiguration('rulesmith.preview').inspect('maxCorpusRequests')?.globalValue;
    await vscode.workspace.getConfiguration('rulesmith.preview').update('maxCorpusRequests', 20, vscode.ConfigurationTarget.Global);
  });

  afterEach(async function () {
    const left = api.testing.pending();
    api.testing.clear();
    // A merge editor with unresolved conflicts asks before it closes (a dialog no in-host
    // test can answer): the test that opens one is the last, and it stays open.
    if (!vscode.window.tabGroups.all.some((g) => g.tabs.some((t) => t.input instanceof vscode.TabInputTextMerge))) await h.closeAllWithoutSaving();
    assert.equal(left, 0, 'every queued answer was used');
  });

  after(async function () {
    // The conflicted file back to valid JSON (the merge editor left open reloads it).
    const conflicted = h.workspaceUri(`rulesets/enterprise.example.com/${CUSTOM}.ruleset.json`);
    if (fs.existsSync(conflicted.fsPath) && fs.readFileSync(conflicted.fsPath, 'utf8').includes('<<<<<<<')) fs.writeFileSync(conflicted.fsPath, `${JSON.stringify({ name: 'default', rules: [] }, null, 2)}\n`);
    await vscode.workspace.getConfiguration('rulesmith.preview').update('maxCorpusRequests', maxCorpusBefore, vscode.ConfigurationTarget.Global);
    for (const k of ['baseUrl', 'zoneId', 'accountId']) await vscode.workspace.getConfiguration('rulesmith.api').update(k, undefined, vscode.ConfigurationTarget.Global);
    await vscode.commands.executeCommand('rulesmith.signOut');
  });

  it('deploy: the diff first, its title leading with the summary; the question is a notification naming rules by description, the id in a hover', async function () {
    const zone = zones['enterprise.example.com'];
    await rest.putEntryPoint(zone.id, CUSTOM, { rules: [rule('a'), { action: 'js_challenge', expression: 'http.request.uri.path eq "/b"' }] });
    await vscode.commands.executeCommand('rulesmith.chooseZone', zone);
    const pulled = await vscode.commands.executeCommand('rulesmith.pullEntryPoint', zone, CUSTOM);
    assert.ok(pulled, JSON.stringify(api.testing.peek()));
    const doc = await vscode.workspace.openTextDocument(pulled.uri);
    const body = JSON.parse(doc.getText());
    const ids = body.rules.map((r) => r.id);
    body.rules[0].action = 'challenge';
    body.rules[1].action = 'block';
    const edit = new vscode.WorkspaceEdit();
    edit.replace(doc.uri, new vscode.Range(0, 0, doc.lineCount, 0), JSON.stringify(body, null, 2));
    await vscode.workspace.applyEdit(edit);
    await h.saveDocument(doc);
    api.testing.take();

    api.testing.answer('Cancel');
    const r = await vscode.commands.executeCommand('rulesmith.deploy', doc.uri);
    assert.equal(r.deployed, false);
    assert.equal(r.diffTitle, `2 rules changed (action) — enterprise.example.com ${CUSTOM}: zone version ${pulled.version} ↔ ${CUSTOM}.ruleset.json`);
    const asked = api.testing.take().find((a) => a.kind === 'confirm');
    assert.equal(asked.message, `Deploy ${CUSTOM}.ruleset.json to enterprise.example.com (${CUSTOM})? 2 rules changed (action): ~ ux a: action; ~ rule 2 (block when http.request.uri.path eq "/b"): action. The zone runs version ${pulled.version} now; the diff is open (hover a rule for its id).`);
    assert.deepEqual(asked.items, ['Deploy', 'Cancel']);
    assert.equal(asked.detail, undefined, 'not a modal: no detail pane over the diff');

    const tab = vscode.window.tabGroups.all.flatMap((g) => g.tabs).find((t) => t.input instanceof vscode.TabInputTextDiff && t.input.modified.scheme === 'rulesmith-zone');
    assert.ok(tab, 'the diff is open');
    assert.equal(tab.label, r.diffTitle);
    const right = await vscode.workspace.openTextDocument(tab.input.modified);
    // The expression's quotes are escaped in the JSON text.
    const line = right.getText().split('\n').findIndex((l) => l.includes('"expression"') && l.includes('/b'));
    assert.ok(line >= 0, right.getText());
    const hovers = await vscode.commands.executeCommand('vscode.executeHoverProvider', right.uri, new vscode.Position(line, 10));
    const text = hovers.flatMap((x) => x.contents.map((c) => (typeof c === 'string' ? c : c.value))).join('\n');
    assert.ok(text.includes(`- id: \`${ids[1]}\``), text);
  });

  it('Create Firewall Rule opens a scratch .cfrule editor (completion, diagnostics) and creates from its CodeLens', async function () {
    const zone = zones['business.example.com'];
    await vscode.commands.executeCommand('rulesmith.chooseZone', zone);
    api.testing.take();
    const opened = await vscode.commands.executeCommand('rulesmith.createFirewallRule', zone);
    assert.ok(opened && opened.scratch, JSON.stringify(api.testing.peek()));
    assert.match(opened.scratch.path, /\/scratch\/firewall-rule\.business\.example\.com\.cfrule$/);
    const ed = vscode.window.activeTextEditor;
    assert.equal(ed.document.uri.toString(), opened.scratch.toString());
    assert.equal(ed.document.languageId, 'rulesmith-expression');
    assert.match(api.testing.take().find((a) => a.kind === 'info').message, /^Write the expression of the firewall rule for business\.example\.com \(completion: Ctrl\+Space\), then click "Create firewall rule from this expression" above it\.$/);

    // Full language support: a typo is a diagnostic, completion offers fields.
    await ed.edit((b) => b.replace(new vscode.Range(0, 0, ed.document.lineCount, 0), 'http.request.uri.pth eq "/ux-scratch"'));
    await h.waitForDiagnostics(ed.document.uri, (ds) => ds.some((d) => /unknown identifier/.test(d.message)));
    const completion = await vscode.commands.executeCommand('vscode.executeCompletionItemProvider', ed.document.uri, new vscode.Position(0, 'http.request.uri.p'.length));
    assert.ok(completion.items.some((i) => (typeof i.label === 'string' ? i.label : i.label.label) === 'http.request.uri.path'), 'completion offers http.request.uri.path');
    await ed.edit((b) => b.replace(new vscode.Range(0, 0, ed.document.lineCount, 0), 'http.request.uri.path eq "/ux-scratch"'));

    const lenses = await lensesWhen(ed.document.uri, (ls) => ls.some((l) => l.command && l.command.command === 'rulesmith.createFirewallRuleFromExpression'), 'the create lens');
    const lens = lenses.find((l) => l.command.command === 'rulesmith.createFirewallRuleFromExpression');
    assert.equal(lens.command.title, '$(add) Create firewall rule from this expression');
    assert.equal(lens.command.tooltip, 'A firewall rule on business.example.com with this expression as its filter (asks the action and a description next)');
    // Another zone chosen meanwhile: the scratch file still creates on the zone it was opened for.
    const other = zones['enterprise.example.com'];
    const otherFilters = (await rest.filters(other.id)).length;
    await vscode.commands.executeCommand('rulesmith.chooseZone', other);
    api.testing.take();
    api.testing.answer('block', 'ux scratch rule', 'Recommended: filter first, then the rule');
    const created = await vscode.commands.executeCommand(lens.command.command, ...lens.command.arguments);
    assert.ok(created && created.rule, JSON.stringify(api.testing.peek()));
    assert.equal(created.rule.description, 'ux scratch rule');
    assert.equal(created.rule.action, 'block');
    const filter = (await rest.filters(zone.id)).find((f) => f.id === created.filter.id);
    assert.equal(filter.expression, 'http.request.uri.path eq "/ux-scratch"');
    assert.equal((await rest.filters(other.id)).length, otherFilters, 'nothing created on the zone chosen since');
    assert.ok(!vscode.window.tabGroups.all.flatMap((g) => g.tabs).some((t) => t.input instanceof vscode.TabInputText && t.input.uri.toString() === opened.scratch.toString()), 'the scratch editor closed');
  });

  it('the trace views: matched only by default, all rules and crs.* fields on request; the verdict names a rule that logged', async function () {
    const uri = h.workspaceUri('evaluate/requests.http');
    const doc = await vscode.workspace.openTextDocument(uri);
    await vscode.window.showTextDocument(doc);
    await lensesWhen(uri, (ls) => ls.some((l) => l.command && l.command.title === '▶ Evaluate'), 'the Evaluate lenses');
    // The benign request: it passes every vendor rule, none matched.
    const traceUri = await vscode.commands.executeCommand('rulesmith.showEvaluationTrace', uri.toString(), 1);
    const matched = api.evaluation.traceText(traceUri.toString());
    assert.match(matched, /_Showing matched rules only \(\d+ not matched hidden\); `crs\.\*` fields hidden/);
    assert.ok(!/\| no \| /.test(matched), 'no unmatched rule row');
    await vscode.commands.executeCommand('rulesmith.traceShowAllRules');
    const all = api.evaluation.traceText(traceUri.toString());
    assert.match(all, /_Showing all rules; `crs\.\*` fields hidden/);
    assert.ok(/\| no \| /.test(all), 'unmatched rules listed');
    await vscode.commands.executeCommand('rulesmith.traceShowInternals');
    assert.match(api.evaluation.traceText(traceUri.toString()), /_Showing all rules; `crs\.\*` fields shown/);
    assert.match(api.evaluation.traceText(traceUri.toString()), /\| `crs\.request_headers` \|/);
    await vscode.commands.executeCommand('rulesmith.traceShowMatchedOnly');
    await vscode.commands.executeCommand('rulesmith.traceHideInternals');
    assert.equal(api.evaluation.traceText(traceUri.toString()), matched);

    // A rule that logs: the pass names it.
    const text = '### logged\nGET https://example.com/ux-logged HTTP/1.1\n';
    const file = h.workspaceUri('ux-log/requests.http');
    fs.mkdirSync(vscode.Uri.joinPath(file, '..').fsPath, { recursive: true });
    fs.writeFileSync(vscode.Uri.joinPath(file, '../zone.ruleset.json').fsPath, JSON.stringify({ name: 'z', kind: 'zone', phase: CUSTOM, rules: [{ ref: 'log-ux', description: 'Log the ux path', action: 'log', expression: 'http.request.uri.path eq "/ux-logged"' }] }));
    fs.writeFileSync(file.fsPath, text);
    try {
      const r = await vscode.commands.executeCommand('rulesmith.evaluateRequest', file.toString(), 0);
      assert.equal(r[0].verdict.title, 'Passed — logged by log-ux');
    } finally {
      fs.rmSync(vscode.Uri.joinPath(file, '..').fsPath, { recursive: true, force: true });
    }

    // The zone trace has the same switch.
    await vscode.commands.executeCommand('rulesmith.chooseZone', zones['migrated.example.com']);
    const zt = await vscode.commands.executeCommand('rulesmith.traceOnZone', uri.toString(), 1);
    assert.ok(zt, JSON.stringify(api.testing.peek()));
    assert.match(zt.markdown, /_Showing matched rules only( \(\d+ not matched hidden\))?: switch with the buttons in this view's title bar/);
    await vscode.commands.executeCommand('rulesmith.traceShowAllRules');
    assert.match(api.zoneTrace.traceText(zt.uri.toString()), /_Showing all rules: switch/);
    await vscode.commands.executeCommand('rulesmith.traceShowMatchedOnly');
  });

  it('the paranoia preview says which target it previews, switches between the file and the zone, and a cell applies its level and threshold to the file', async function () {
    await vscode.commands.executeCommand('rulesmith.chooseZone', zones['migrated.example.com']);
    const uri = h.workspaceUri('ux-preview.ruleset.json');
    fs.writeFileSync(uri.fsPath, `${JSON.stringify({ name: 'default', kind: 'zone', phase: 'http_request_firewall_managed', rules: [{ ref: 'owasp', description: 'OWASP', action: 'execute', expression: 'true', action_parameters: { id: OWASP } }] }, null, 2)}\n`);
    try {
      const doc = await vscode.workspace.openTextDocument(uri);
      await vscode.window.showTextDocument(doc);
      const file = await vscode.commands.executeCommand('rulesmith.previewParanoia');
      assert.ok(file, JSON.stringify(api.testing.peek()));
      assert.equal(file.kind, 'file');
      assert.equal(file.target, 'ux-preview.ruleset.json (rule 1)');
      assert.ok(file.html.includes('<p class="target">Previewing the file <b>ux-preview.ruleset.json (rule 1)</b>. Preview instead: <a href="command:rulesmith.previewParanoia?%5B%7B%22target%22%3A%22zone%22%7D%5D">the chosen zone</a>. Click a cell to apply'), file.html.slice(0, 3000));

      const zone = await vscode.commands.executeCommand('rulesmith.previewParanoia', { target: 'zone' });
      assert.equal(zone.kind, 'zone');
      assert.match(zone.target, /^migrated\.example\.com \(managed entry point version \d+\)$/);
      assert.ok(zone.html.includes(`Preview instead: <a href="command:rulesmith.previewParanoia?${encodeURIComponent(JSON.stringify([{ target: 'file', uri: uri.toString() }]))}">the file ux-preview.ruleset.json</a>`));

      const back = await vscode.commands.executeCommand('rulesmith.previewParanoia', { target: 'file', uri: uri.toString() });
      assert.equal(back.kind, 'file');
      assert.ok(back.html.includes(`href="command:rulesmith.applyPreviewCell?${encodeURIComponent(JSON.stringify([{ level: 2, threshold: 25 }]))}"`));
      const applied = await vscode.commands.executeCommand('rulesmith.applyPreviewCell', { level: 2, threshold: 25 });
      assert.deepEqual(applied.map((r) => [r.target, r.level, r.threshold]), [['file', 2, undefined], ['file', undefined, 25]]);
      const exec = JSON.parse(doc.getText()).rules[0];
      assert.deepEqual(exec.action_parameters.overrides.categories.filter((c) => c.enabled === false).map((c) => c.category).sort(), ['paranoia-level-3', 'paranoia-level-4']);
      assert.ok(exec.action_parameters.overrides.rules.some((r) => r.score_threshold === 25));
    } finally {
      fs.rmSync(uri.fsPath, { force: true });
    }
  });
  it('pull and re-apply my edits: a clean merge with the zone\'s change, then a conflict opens the merge editor', async function () {
    const zone = zones['enterprise.example.com'];
    await rest.putEntryPoint(zone.id, CUSTOM, { rules: [rule('a'), rule('b'), rule('c')] });
    // The file still holds the first test's edits, not deployed: pulling asks before replacing them.
    api.testing.answer('Replace');
    const pulled = await vscode.commands.executeCommand('rulesmith.pullEntryPoint', zone, CUSTOM);
    assert.ok(pulled, JSON.stringify(api.testing.peek()));
    const doc = await vscode.workspace.openTextDocument(pulled.uri);
    const setFile = async (change) => {
      const b = JSON.parse(doc.getText());
      change(b);
      const e = new vscode.WorkspaceEdit();
      e.replace(doc.uri, new vscode.Range(0, 0, doc.lineCount, 0), JSON.stringify(b, null, 2));
      await vscode.workspace.applyEdit(e);
      await h.saveDocument(doc);
    };
    // Here: rule a challenges. On the zone (as the tree's commands would): rule c is disabled.
    await setFile((b) => (b.rules[0].action = 'managed_challenge'));
    const onZone = await rest.getEntryPoint(zone.id, CUSTOM);
    const zoneV = await rest.putEntryPoint(zone.id, CUSTOM, { rules: onZone.rules.map((r) => (r.ref === 'c' ? { ...r, enabled: false } : r)) });
    api.testing.take();

    // The deploy refuses, and offers the merge.
    assert.equal(await vscode.commands.executeCommand('rulesmith.deploy', doc.uri), undefined);
    const err = api.testing.take().find((a) => a.kind === 'error');
    assert.match(err.message, /^Conflict: enterprise\.example\.com's http_request_firewall_custom entry point changed since .* "Pull and Re-apply My Edits" merges your edits onto version \d+/);
    assert.deepEqual(err.items, ['Pull and Re-apply My Edits', 'Compare with Zone']);

    const merged = await vscode.commands.executeCommand('rulesmith.pullAndReapply', doc.uri);
    assert.deepEqual(merged, { version: zoneV.version, conflicts: [], reapplied: 1, fromZone: 1 });
    const now = JSON.parse(doc.getText());
    assert.equal(now.version, zoneV.version);
    assert.deepEqual(now.rules.map((r) => [r.ref, r.action, r.enabled !== false]), [['a', 'managed_challenge', true], ['b', 'block', true], ['c', 'block', false]]);
    assert.match(api.testing.take().find((a) => a.kind === 'info').message, new RegExp(`^Re-applied 1 edit of ${CUSTOM}\\.ruleset\\.json on enterprise\\.example\\.com version ${zoneV.version} \\(1 change made on the zone kept\\)\\. Deploy it when ready\\.$`));
    api.testing.answer('Deploy');
    const d = await vscode.commands.executeCommand('rulesmith.deploy', doc.uri);
    assert.ok(d && d.deployed, JSON.stringify([d, api.testing.peek()]));
    assert.equal(d.summary, '1 rule changed (action)');

    // Both sides change rule b, differently: a conflict, in the merge editor.
    await setFile((b) => (b.rules[1].action = 'managed_challenge'));
    const z2 = await rest.getEntryPoint(zone.id, CUSTOM);
    const zoneV2 = await rest.putEntryPoint(zone.id, CUSTOM, { rules: z2.rules.map((r) => (r.ref === 'b' ? { ...r, action: 'js_challenge' } : r)) });
    api.testing.take();
    const conflicted = await vscode.commands.executeCommand('rulesmith.pullAndReapply', doc.uri);
    assert.deepEqual(conflicted, { version: zoneV2.version, conflicts: ['“ux b” (changed on both sides)'], reapplied: 0, fromZone: 0, mergeEditor: true });
    assert.match(api.testing.take().find((a) => a.kind === 'warning').message, /^1 rule of http_request_firewall_custom\.ruleset\.json changed both here and on enterprise\.example\.com: “ux b” \(changed on both sides\)\. Resolve it in the merge editor, then deploy\.$/);
    const text = fs.readFileSync(doc.uri.fsPath, 'utf8');
    assert.match(text, /^<<<<<<< Your edits \(http_request_firewall_custom\.ruleset\.json\)$/m);
    assert.match(text, new RegExp(`^>>>>>>> enterprise\\.example\\.com version ${zoneV2.version}$`, 'm'));
    const merge = await waitFor(() => vscode.window.tabGroups.all.flatMap((g) => g.tabs).find((t) => t.input instanceof vscode.TabInputTextMerge), 'the merge editor tab');
    assert.equal(merge.input.result.toString(), doc.uri.toString());
    assert.equal(merge.input.input1.scheme, 'rulesmith-merge');
  });
});
