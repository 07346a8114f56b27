// The demo workspace works on first use: every request of every .http file shows a
// verdict after one click of its "▶ Evaluate" lens (no ruleset error, no ambiguity), and
// the verdicts are the ones the README describes. The folder is exactly what `npm start`
// opens (scripts/demo-workspace.mjs copies examples/).
const assert = require('node:assert/strict');
const vscode = require('vscode');
const h = require('../helpers');

/** What the demo's requests.http gets: the zone's custom rules, then the managed deployments (vendor, OWASP at PL2, threshold 25). */
const EXPECTED = {
  'requests.http': [
    'Passed — anomaly score 2 < 25 from owasp:920300',
    'Blocked by vendor:log4shell-header (http_request_firewall_managed)',
    // A rule that logged is named (issue 17: never "no rule acted" when a rule logged).
    'Passed — logged by vendor:wp-author-enum · anomaly score 2 < 25 from owasp:920320',
    'Blocked by vendor:sqli-tautology-body (http_request_firewall_managed)',
    'Blocked by block_admin (http_request_firewall_custom)',
  ],
};

async function lenses(uri) {
  return (await vscode.commands.executeCommand('vscode.executeCodeLensProvider', uri)) || [];
}

/** The lenses once `predicate(lenses)` holds (the server may still be starting). */
async function lensesWhen(uri, predicate, what, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const ls = await lenses(uri);
    if (predicate(ls)) return ls;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; the lenses are ${JSON.stringify(ls.map((l) => [l.range.start.line, l.command && l.command.title]))}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const titles = (ls, line) => ls.filter((l) => l.range.start.line === line).map((l) => l.command && l.command.title);

describe('the demo workspace (as npm start builds it)', function () {
  before(async function () {
    const { api } = await h.activateExtension();
    await h.waitForEvent(api.onDidChangeServerState, (s) => s === 'running', () => api.serverState() === 'running', 60_000, 'the server to run');
  });

  it('every request of every .http file shows a verdict on the first click of ▶ Evaluate', async function () {
    this.timeout(240_000);
    const files = await vscode.workspace.findFiles('**/*.http');
    const names = files.map((f) => vscode.workspace.asRelativePath(f, false)).sort();
    assert.deepEqual(names, Object.keys(EXPECTED).sort());
    for (const uri of files) {
      const name = vscode.workspace.asRelativePath(uri, false);
      await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(uri));
      let ls = await lensesWhen(uri, (x) => x.some((l) => l.command && l.command.title === '▶ Evaluate'), `the Evaluate lenses of ${name}`);
      const evaluates = ls.filter((l) => l.command.title === '▶ Evaluate');
      assert.equal(evaluates.length, EXPECTED[name].length, `${name}: one ▶ Evaluate per request`);
      const got = [];
      for (const lens of evaluates) {
        // The lens's own command, as a click runs it, once.
        const results = await vscode.commands.executeCommand(lens.command.command, ...lens.command.arguments);
        const index = lens.command.arguments[1];
        assert.ok(results && results[index].verdict, `${name} request ${index + 1}: no verdict (${JSON.stringify(results && results[index])})`);
        const line = lens.range.start.line;
        ls = await lensesWhen(uri, (x) => titles(x, line)[0] !== '▶ Evaluate' && !String(titles(x, line)[0]).includes('Evaluating…'), `the verdict lens of ${name} request ${index + 1}`);
        got.push(titles(ls, line)[0]);
      }
      assert.deepEqual(got, EXPECTED[name], name);
      assert.ok(!ls.some((l) => l.command && l.command.title.startsWith('⚠')), `${name}: no warning lens`);
    }
  });
});
