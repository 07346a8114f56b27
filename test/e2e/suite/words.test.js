// Issue 17's wording items inside a real VS Code: the engine's words then a hint, with
// quick fixes (`"\x"`, a literal compared with lower(…)); hovers that link to the
// documentation; "Check Workspace" filling Problems for files never opened; `.http` files
// coloured by Rulesmith's grammar when nothing else knows them; the threshold in the
// dashboard's words in the CodeLens and the pickers (the current value marked, the kept
// action named); and a rules service that is down: the URL, under 2 s, Start / Retry.
const assert = require('node:assert/strict');
const http = require('node:http');
const vscode = require('vscode');
const h = require('./helpers');

const DOCS = 'https://developers.cloudflare.com/ruleset-engine/rules-language/';

async function open(name) {
  const uri = h.workspaceUri(name);
  const doc = await vscode.workspace.openTextDocument(uri);
  await vscode.window.showTextDocument(doc);
  return { uri, doc };
}

async function quickFixes(uri, range) {
  const actions = await vscode.commands.executeCommand('vscode.executeCodeActionProvider', uri, range, vscode.CodeActionKind.QuickFix.value);
  return actions.filter((a) => a.kind && a.kind.value === 'quickfix');
}

describe('Rulesmith: words, hints and quick fixes (issue 17)', function () {
  this.timeout(90_000);
  let api;

  before(async function () {
    ({ api } = await h.activateExtension());
    await h.waitForEvent(api.onDidChangeServerState, (s) => s === 'running', () => api.serverState() === 'running', 30_000, 'the server to run');
    api.testing.clear();
  });

  afterEach(async function () {
    api.testing.clear();
    await h.closeAllWithoutSaving();
  });

  it('"\\x": the engine\'s message, then a hint; quick fixes escape the backslash or use a raw string', async function () {
    const { uri, doc } = await open('words/escape.cfrule');
    const [d] = await h.waitForDiagnostics(uri, (ds) => ds.length > 0);
    assert.equal(
      d.message,
      'expected 2 characters, but found 1\n`\\x` starts a byte written as two hex digits (`\\x41` is "A"). For a backslash followed by x write `\\\\x`, or use a raw string `r"…"` in which backslashes are literal.',
    );
    assert.equal(h.codeOf(d), 'invalid-escape');
    const fixes = await quickFixes(uri, d.range);
    assert.deepEqual(fixes.map((a) => a.title), ['Escape the backslash: `\\\\x`', 'Use a raw string: `r"\\x"`']);
    await vscode.workspace.applyEdit(fixes[0].edit);
    assert.equal(doc.getText(), 'http.host eq "\\\\x"');
    await h.waitForDiagnostics(uri, (ds) => ds.length === 0);
  });

  it('lower(http.host) eq "Example.COM" is flagged as never matching, with the literal that can', async function () {
    const { uri, doc } = await open('words/lowered.cfrule');
    const [d] = await h.waitForDiagnostics(uri, (ds) => ds.length > 0);
    assert.deepEqual([h.codeOf(d), d.severity, d.message, h.rangeJson(d.range)], ['never-matches', vscode.DiagnosticSeverity.Warning, '"Example.COM" can never match: `lower(…)` is lower case\nWrite "example.com".', [0, 20, 0, 33]]);
    const fixes = await quickFixes(uri, d.range);
    assert.deepEqual(fixes.map((a) => a.title), ['Change to `"example.com"`']);
    await vscode.workspace.applyEdit(fixes[0].edit);
    assert.equal(doc.getText(), 'lower(http.host) eq "example.com"\n');
  });

  it('a hover links to the documentation of the field and of the function', async function () {
    const { uri } = await open('words/lowered.cfrule');
    const text = async (character) => {
      const hovers = await vscode.commands.executeCommand('vscode.executeHoverProvider', uri, new vscode.Position(0, character));
      return hovers.flatMap((x) => x.contents.map((c) => (typeof c === 'string' ? c : c.value))).join('\n');
    };
    assert.ok((await text(8)).includes(`[Documentation of \`http.host\`](${DOCS}fields/reference/http.host/)`));
    assert.ok((await text(2)).includes(`[Documentation of \`lower\`](${DOCS}functions/#lower)`));
  });

  it('Check Workspace puts a file that was never opened into Problems, and says how many', async function () {
    const uri = h.workspaceUri('words/never-opened.cfrule');
    assert.ok(!vscode.workspace.textDocuments.some((d) => d.uri.toString() === uri.toString()), 'not open');
    const result = await vscode.commands.executeCommand('rulesmith.checkWorkspace');
    assert.ok(result.checked >= 6, JSON.stringify(result));
    assert.ok(result.errors >= 2 && result.warnings >= 1, JSON.stringify(result));
    const ds = await h.waitForDiagnostics(uri, (list) => list.length === 2);
    assert.deepEqual(
      ds.map((d) => [h.codeOf(d), d.message.split('\n')[0]]),
      [
        ['method-not-uppercase', '"get" can never match: methods are upper case'],
        ['cidr-outside-set', "couldn't parse address in network: invalid IP address syntax"],
      ],
    );
  });

  it('.http files get Rulesmith\'s grammar when no other extension knows them', async function () {
    assert.equal(vscode.extensions.getExtension('humao.rest-client'), undefined, 'REST Client is not installed here');
    const uri = h.workspaceUri('evaluate/requests.http');
    await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(uri));
    const http = () => vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString() && d.languageId === 'rulesmith-http');
    await h.waitForEvent(vscode.workspace.onDidOpenTextDocument, () => Boolean(http()), () => Boolean(http()), 20_000, 'the .http file in language rulesmith-http');
    // The Evaluate lens still works in that language (it matches .http by name).
    const lenses = await vscode.commands.executeCommand('vscode.executeCodeLensProvider', uri);
    assert.ok(lenses.length > 0, 'the Evaluate CodeLens');
  });

  it('the threshold in the dashboard\'s words: CodeLens and pickers, the current value marked and the kept action named', async function () {
    const { uri, doc } = await open('words/owasp.ruleset.json');
    const lenses = await vscode.commands.executeCommand('vscode.executeCodeLensProvider', uri);
    const title = lenses.map((l) => l.command && l.command.title).find((t) => t && t.startsWith('Cloudflare OWASP Core Ruleset'));
    assert.match(title, /^Cloudflare OWASP Core Ruleset · PL2 · threshold High – 25 and higher · log · \d+ of \d+ rules on$/);

    api.testing.answer(undefined);
    assert.equal(await vscode.commands.executeCommand('rulesmith.setParanoiaLevel'), undefined, 'cancelled at the picker');
    const level = api.testing.take().find((a) => a.kind === 'pick');
    assert.deepEqual(level.descriptions, ['', 'current', '', '']);

    api.testing.answer('Low – 60 and higher', undefined);
    assert.equal(await vscode.commands.executeCommand('rulesmith.setScoreThreshold'), undefined, 'cancelled at the action');
    const [threshold, action] = api.testing.take().filter((a) => a.kind === 'pick');
    assert.deepEqual(threshold.items, ['High – 25 and higher', 'Medium – 40 and higher', 'Low – 60 and higher', 'Other…']);
    assert.deepEqual(threshold.descriptions, ['current', '', '', 'any whole number']);
    assert.equal(action.items[0], 'Keep the current action (log)');
    assert.equal(doc.isDirty, false, 'nothing changed');
  });

  describe('a rules service that is down', function () {
    let saved;
    let server;
    let url;

    before(async function () {
      const cfg = vscode.workspace.getConfiguration('rulesmith.api');
      saved = cfg.inspect('baseUrl');
      // A service that answers the sign-in, then goes away.
      server = http.createServer((req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ success: true, errors: [], messages: [], result: { id: 'words', status: 'active' } }));
      });
      await new Promise((r) => server.listen(0, '127.0.0.1', r));
      url = `http://127.0.0.1:${server.address().port}/client/v4`;
      await cfg.update('baseUrl', url, vscode.ConfigurationTarget.Global);
      await cfg.update('baseUrl', undefined, vscode.ConfigurationTarget.Workspace);
      await api.connection.signIn({ kind: 'token', token: 'words-e2e-token' });
      await new Promise((r) => server.close(r));
    });

    after(async function () {
      await api.connection.signOut();
      const cfg = vscode.workspace.getConfiguration('rulesmith.api');
      await cfg.update('baseUrl', saved && saved.globalValue, vscode.ConfigurationTarget.Global);
      if (saved && saved.workspaceValue !== undefined) await cfg.update('baseUrl', saved.workspaceValue, vscode.ConfigurationTarget.Workspace);
    });

    it('the view names the URL within 2 s and offers Start Local Service; a command offers Start / Retry', async function () {
      const t0 = Date.now();
      const nodes = await api.views.zones.getChildren();
      const ms = Date.now() - t0;
      const items = await Promise.all(nodes.map((n) => api.views.zones.getTreeItem(n)));
      assert.deepEqual(items.map((i) => i.label), [`Cannot reach the rules service at ${url}`, 'Start Local Service']);
      assert.ok(ms < 2000, `the view failed after ${ms} ms`);
      assert.match(items[0].tooltip, /ECONNREFUSED: connection refused: nothing listens there/);
      assert.equal(items[1].command.command, 'rulesmith.startLocalService');

      api.testing.clear();
      await vscode.commands.executeCommand('rulesmith.chooseZone');
      const shown = api.testing.take().find((a) => a.kind === 'error');
      assert.ok(shown, 'an error notification');
      assert.match(shown.message, new RegExp(`could not connect to ${url.replace(/[./]/g, '\\$&')} \\(ECONNREFUSED`));
      assert.deepEqual(shown.items, ['Start Local Service', 'Retry', 'Show Output']);
    });

    it('Start Local Service starts the rules service at that URL with the signed-in token', async function () {
      this.timeout(60_000);
      const started = await vscode.commands.executeCommand('rulesmith.startLocalService');
      assert.equal(started, url);
      const zones = await (await api.connection.api()).listZones();
      assert.ok(zones.length > 0, 'the demo seed answers with the same token');
    });
  });
});
