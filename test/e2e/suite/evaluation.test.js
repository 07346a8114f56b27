// "Evaluate" for .http files inside a real VS Code: the CodeLens above each request, the
// verdict it shows after rulesmith.evaluateRequest, and the trace view. The workspace's
// evaluate/ folder holds managed.ruleset.json (the vendor managed ruleset) and
// requests.http (a Log4Shell request, a benign one): the nearest-ruleset lookup finds it.
const assert = require('node:assert/strict');
const vscode = require('vscode');
const h = require('./helpers');

/**
 * The document's lenses once `predicate(lenses)` holds (the server may still be starting).
 * Polled with a deadline: VS Code gives no event when another extension's lenses change
 * (onDidChangeCodeLenses belongs to the provider).
 */
async function lensesWhen(uri, predicate, what, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  let lenses = [];
  for (;;) {
    lenses = (await vscode.commands.executeCommand('vscode.executeCodeLensProvider', uri)) || [];
    if (predicate(lenses)) return lenses;
    if (Date.now() > deadline) {
      const got = lenses.map((l) => [l.range.start.line, l.command && l.command.title]);
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; the lenses are ${JSON.stringify(got)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const titlesOn = (lenses, line) => lenses.filter((l) => l.range.start.line === line).map((l) => l.command && l.command.title);

describe('Rulesmith: evaluate .http requests', function () {
  let api;

  before(async function () {
    ({ api } = await h.activateExtension());
    await h.waitForEvent(api.onDidChangeServerState, (s) => s === 'running', () => api.serverState() === 'running', 30_000, 'the server to run');
  });

  afterEach(async function () {
    await h.closeAllWithoutSaving();
  });

  it('shows "▶ Evaluate" above each request, the verdict after evaluating the first, and a trace that names the rule', async function () {
    const commands = await vscode.commands.getCommands(true);
    for (const c of ['rulesmith.evaluateRequest', 'rulesmith.evaluateAllRequests', 'rulesmith.showEvaluationTrace']) assert.ok(commands.includes(c), c);

    const uri = h.workspaceUri('evaluate/requests.http');
    const doc = await vscode.workspace.openTextDocument(uri);
    await vscode.window.showTextDocument(doc);
    let lenses = await lensesWhen(uri, (ls) => ls.some((l) => l.command && l.command.title === '▶ Evaluate'), 'the Evaluate lenses');
    assert.deepEqual(titlesOn(lenses, 1), ['▶ Evaluate', '▶ Evaluate all']);
    assert.deepEqual(titlesOn(lenses, 5), ['▶ Evaluate']);
    const evaluate = lenses.find((l) => l.range.start.line === 1 && l.command.title === '▶ Evaluate');
    assert.equal(evaluate.command.command, 'rulesmith.evaluateRequest');
    assert.deepEqual(evaluate.command.arguments, [uri.toString(), 0]);

    // The lens's own command, as a click runs it.
    const results = await vscode.commands.executeCommand(evaluate.command.command, ...evaluate.command.arguments);
    assert.equal(results[0].verdict.title, 'Blocked by vendor:log4shell-uri (http_request_firewall_managed)');

    lenses = await lensesWhen(uri, (ls) => titlesOn(ls, 1)[0] !== '▶ Evaluate', 'the verdict lens');
    assert.deepEqual(titlesOn(lenses, 1), ['Blocked by vendor:log4shell-uri (http_request_firewall_managed)', '▶ Evaluate', '▶ Evaluate all']);
    // Only the first request was evaluated.
    assert.deepEqual(titlesOn(lenses, 5), ['▶ Evaluate']);

    const verdict = lenses.find((l) => l.range.start.line === 1 && l.command.command === 'rulesmith.showEvaluationTrace');
    assert.ok(verdict, 'the verdict lens opens the trace');
    const traceUri = await vscode.commands.executeCommand(verdict.command.command, ...verdict.command.arguments);
    assert.equal(traceUri.scheme, 'rulesmith-trace');
    const trace = await vscode.workspace.openTextDocument(traceUri);
    const text = trace.getText();
    assert.match(text, /^# Log4Shell in the query — requests\.http/);
    assert.ok(text.includes('`vendor:log4shell-uri` Apache Log4j - Remote Code Execution - URI - CVE:CVE-2021-44228 | yes | block | **acted**'), text.slice(0, 2000));
    assert.ok(text.includes('## Decision'));

    // Editing the file forgets the verdicts: the lens goes back to "▶ Evaluate".
    const edit = new vscode.WorkspaceEdit();
    edit.insert(uri, new vscode.Position(doc.lineCount, 0), '\n');
    assert.ok(await vscode.workspace.applyEdit(edit));
    await lensesWhen(uri, (ls) => titlesOn(ls, 1)[0] === '▶ Evaluate', 'the lens to forget the verdict');
    await vscode.window.showTextDocument(doc);
    await h.revertActive();
  });
});
