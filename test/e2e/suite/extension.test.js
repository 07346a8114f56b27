// The extension inside a real VS Code: activation, the server's diagnostics in the
// editor, completion, hover, formatting, quick fixes and commands (the grammars are
// checked from the UI: the token inspector has no API). Each test
// goes through VS Code's own command API, as a user's keystrokes would.
const assert = require('node:assert/strict');
const vscode = require('vscode');
const h = require('./helpers');

describe('Rulesmith in VS Code', function () {
  let api;

  before(async function () {
    ({ api } = await h.activateExtension());
  });

  afterEach(async function () {
    await h.closeAllWithoutSaving();
  });

  it('activates and starts the language server', async function () {
    assert.ok(api && typeof api.serverState === 'function', 'the extension returns its API');
    await h.waitForEvent(api.onDidChangeServerState, (s) => s === 'running', () => api.serverState() === 'running', 30_000, 'the server to run');
    const commands = await vscode.commands.getCommands(true);
    assert.ok(commands.includes('rulesmith.restartServer'));
    assert.ok(commands.includes('rulesmith.showOutput'));
  });

  it('reports an unknown field in a .cfrule with its range, code and hint', async function () {
    const uri = h.workspaceUri('unknown-field.cfrule');
    const doc = await vscode.workspace.openTextDocument(uri);
    await vscode.window.showTextDocument(doc);
    assert.equal(doc.languageId, 'rulesmith-expression');
    const [d] = await h.waitForDiagnostics(uri, (ds) => ds.some((x) => h.codeOf(x) === 'unknown-identifier'));
    assert.equal(h.codeOf(d), 'unknown-identifier');
    assert.deepEqual(h.rangeJson(d.range), [0, 0, 0, 20]);
    assert.equal(doc.getText(d.range), 'http.request.uri.pth');
    assert.equal(d.severity, vscode.DiagnosticSeverity.Error);
    assert.equal(d.source, 'rulesmith');
    assert.match(d.message, /^unknown identifier\n`http\.request\.uri\.pth` is not a field: did you mean `http\.request\.uri\.path`\?/);
  });

  it('reports an error inside an escaped "expression" string of a ruleset JSON at the right character', async function () {
    const uri = h.workspaceUri('zone.ruleset.json');
    const doc = await vscode.workspace.openTextDocument(uri);
    await vscode.window.showTextDocument(doc);
    assert.equal(doc.languageId, 'json');
    const ds = await h.waitForDiagnostics(uri, (all) => all.some((x) => h.codeOf(x) === 'unknown-identifier'));
    const d = ds.find((x) => h.codeOf(x) === 'unknown-identifier');
    const text = doc.getText();
    const at = doc.positionAt(text.indexOf('http.hots'));
    assert.deepEqual(h.rangeJson(d.range), [at.line, at.character, at.line, at.character + 'http.hots'.length]);
    assert.equal(doc.getText(d.range), 'http.hots');
  });

  it('completes field names', async function () {
    const doc = await h.untitled('http.request.me');
    const list = await vscode.commands.executeCommand('vscode.executeCompletionItemProvider', doc.uri, new vscode.Position(0, 15));
    const labels = list.items.map((i) => (typeof i.label === 'string' ? i.label : i.label.label));
    assert.ok(labels.includes('http.request.method'), `http.request.method among ${JSON.stringify(labels.slice(0, 30))}`);
    const item = list.items.find((i) => (typeof i.label === 'string' ? i.label : i.label.label) === 'http.request.method');
    assert.equal(item.kind, vscode.CompletionItemKind.Field);
  });

  it('shows the field documentation on hover', async function () {
    const doc = await h.untitled('http.host eq "example.com"');
    // Asked again for a few seconds: once (1 run in many) the first ask of a just-opened
    // untitled document came back empty, as a user's first hover can.
    let hovers = [];
    for (const end = Date.now() + 10_000; hovers.length === 0 && Date.now() < end; ) {
      hovers = await vscode.commands.executeCommand('vscode.executeHoverProvider', doc.uri, new vscode.Position(0, 3));
      if (hovers.length === 0) await new Promise((r) => setTimeout(r, 250));
    }
    assert.ok(hovers.length > 0, 'a hover');
    const text = hovers.flatMap((hv) => hv.contents.map((c) => (typeof c === 'string' ? c : c.value))).join('\n');
    assert.match(text, /`http\.host`/);
    assert.match(text, /Bytes/);
    assert.equal(doc.getText(hovers[0].range), 'http.host');
  });

  it('formats a document', async function () {
    const uri = h.workspaceUri('unformatted.cfrule');
    const doc = await vscode.workspace.openTextDocument(uri);
    await vscode.window.showTextDocument(doc);
    const edits = await vscode.commands.executeCommand('vscode.executeFormatDocumentProvider', uri, { tabSize: 2, insertSpaces: true });
    assert.ok(Array.isArray(edits) && edits.length > 0, 'formatting edits');
    await h.applyTextEdits(doc, edits);
    assert.equal(doc.getText(), 'http.host eq "example.com" && !ip.src in {192.0.2.0/24 198.51.100.0/24}\n');
    await h.revertActive();
  });

  it('applies the quick fix for a CIDR outside a set, and the error goes away', async function () {
    const uri = h.workspaceUri('cidr.cfrule');
    const doc = await vscode.workspace.openTextDocument(uri);
    await vscode.window.showTextDocument(doc);
    const ds = await h.waitForDiagnostics(uri, (all) => all.some((x) => h.codeOf(x) === 'cidr-outside-set'));
    const d = ds.find((x) => h.codeOf(x) === 'cidr-outside-set');
    assert.equal(doc.getText(d.range), '192.0.2.0/24');
    const actions = await vscode.commands.executeCommand('vscode.executeCodeActionProvider', uri, d.range, vscode.CodeActionKind.QuickFix.value);
    const titles = actions.map((a) => a.title);
    const fix = actions.find((a) => a.title === 'Change to `ip.src in {192.0.2.0/24}`');
    assert.ok(fix, `the fix among ${JSON.stringify(titles)}`);
    assert.ok(fix.edit, 'the fix carries its edit');
    assert.ok(await vscode.workspace.applyEdit(fix.edit));
    assert.equal(doc.getText(), 'ip.src in {192.0.2.0/24} and ssl\n');
    await h.waitForDiagnostics(uri, (all) => all.length === 0);
    await h.revertActive();
  });

  it('restarts the language server on command, and diagnostics come back', async function () {
    await vscode.commands.executeCommand('rulesmith.restartServer');
    assert.equal(api.serverState(), 'running');
    const uri = h.workspaceUri('unknown-field.cfrule');
    await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(uri));
    await h.waitForDiagnostics(uri, (ds) => ds.some((x) => h.codeOf(x) === 'unknown-identifier'));
  });
});

describe('Rulesmith when the language server cannot run', function () {
  // Breaks the installed copy of the server (in this run's extensions folder, never the
  // repository's), checks the client reports it, then repairs it and restarts.
  const fs = require('node:fs');
  const path = require('node:path');
  let ext;
  let api;
  let server;
  let saved;

  before(async function () {
    ({ ext, api } = await h.activateExtension());
    server = path.join(ext.extensionPath, 'server', 'out', 'server.js');
    saved = fs.readFileSync(server);
  });

  after(async function () {
    if (saved) fs.writeFileSync(server, saved);
    await vscode.commands.executeCommand('rulesmith.restartServer');
  });

  it('a missing server: the state is "failed", and a restart after repair recovers', async function () {
    fs.rmSync(server);
    await vscode.commands.executeCommand('rulesmith.restartServer');
    assert.equal(api.serverState(), 'failed');
    fs.writeFileSync(server, saved);
    await vscode.commands.executeCommand('rulesmith.restartServer');
    assert.equal(api.serverState(), 'running');
  });

  it('a server that exits at once: the state is "failed" and it is not restarted forever', async function () {
    fs.writeFileSync(server, 'process.exit(3);\n');
    await vscode.commands.executeCommand('rulesmith.restartServer');
    await h.waitForEvent(api.onDidChangeServerState, (s) => s === 'failed', () => api.serverState() === 'failed', 30_000, 'the failed state');
    fs.writeFileSync(server, saved);
    await vscode.commands.executeCommand('rulesmith.restartServer');
    assert.equal(api.serverState(), 'running');
    const uri = h.workspaceUri('unknown-field.cfrule');
    await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(uri));
    await h.waitForDiagnostics(uri, (ds) => ds.some((x) => h.codeOf(x) === 'unknown-identifier'));
  });
});
