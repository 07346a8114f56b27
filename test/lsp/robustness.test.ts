// The server stays up: requests for unknown documents answer empty, a handler that
// throws logs and answers empty, a cancelled request answers RequestCancelled, and the
// process exits on shutdown/exit.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CancellationTokenSource, LSPErrorCodes, ResponseError, type Hover } from 'vscode-languageserver-protocol';
import { holdSettings, LspClient } from './client';

test('robustness', async (t) => {
  const client = await LspClient.start();
  try {
    await t.test('requests on an unknown document answer empty', async () => {
      const textDocument = { uri: 'file:///nowhere/missing.cfrule' };
      const position = { line: 0, character: 0 };
      const range = { start: position, end: position };
      assert.equal(await client.request('textDocument/hover', { textDocument, position }), null);
      assert.equal(await client.request('textDocument/completion', { textDocument, position }), null);
      assert.equal(await client.request('textDocument/signatureHelp', { textDocument, position }), null);
      assert.deepEqual(await client.request('textDocument/formatting', { textDocument, options: { tabSize: 2, insertSpaces: true } }), []);
      assert.deepEqual(await client.request('textDocument/foldingRange', { textDocument }), []);
      assert.deepEqual(await client.request('textDocument/semanticTokens/full', { textDocument }), { data: [] });
      assert.deepEqual(await client.request('textDocument/codeAction', { textDocument, range, context: { diagnostics: [] } }), []);
    });

    await t.test('a handler that throws logs the error and answers empty; the server keeps serving', async () => {
      const uri = 'file:///robust/a.cfrule';
      await client.open(uri, 'rulesmith-expression', 'http.host eq "a"');
      // A malformed position makes the handler throw inside the server.
      assert.equal(await client.request('textDocument/hover', { textDocument: { uri }, position: null }), null);
      assert.ok(client.logs.some((l) => l.type === 1 && /^hover failed: /.test(l.message)), JSON.stringify(client.logs));
      const h = await client.request<Hover | null>('textDocument/hover', { textDocument: { uri }, position: { line: 0, character: 2 } });
      assert.ok(h, 'hover works after the failure');
      assert.equal((await client.diagnostics(uri, { version: 1 })).diagnostics.length, 0);
    });

    await t.test('a request cancelled while it waits answers RequestCancelled, and the server goes on', async () => {
      const uri = 'file:///robust/cancel.cfrule';
      const hold = holdSettings(client, uri);
      try {
        await client.open(uri, 'rulesmith-expression', 'http.host eq "a"');
        const source = new CancellationTokenSource();
        // Observe the outcome at once: the answer may come before the code below awaits it.
        const outcome = client.connection.sendRequest('textDocument/foldingRange', { textDocument: { uri } }, source.token).then(
          () => undefined,
          (e: unknown) => e,
        );
        await hold.asked;
        source.cancel();
        // Let the cancellation reach the server before the settings answer does.
        await client.request('textDocument/foldingRange', { textDocument: { uri: 'file:///robust/other.cfrule' } });
        hold.release();
        const e = await outcome;
        assert.ok(e instanceof ResponseError && e.code === LSPErrorCodes.RequestCancelled, String(e));
      } finally {
        hold.restore();
      }
      assert.deepEqual(await client.request('textDocument/foldingRange', { textDocument: { uri } }), []);
    });
  } finally {
    await client.close();
  }
  assert.ok(client.process.exitCode !== null || client.process.signalCode !== null, 'the server process has exited');
  assert.equal(client.process.signalCode, null, 'it exited by itself, not killed');
});
