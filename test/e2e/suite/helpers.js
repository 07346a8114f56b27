// Helpers for the in-host tests: waiting on events (never fixed sleeps), editing.
const vscode = require('vscode');

const EXTENSION_ID = 'rulesmith.rulesmith';

/** The workspace file `name` (the demo workspace is the only folder). */
function workspaceUri(name) {
  const folder = vscode.workspace.workspaceFolders && vscode.workspace.workspaceFolders[0];
  if (!folder) throw new Error('no workspace folder is open');
  return vscode.Uri.joinPath(folder.uri, name);
}

/** Activates the extension under test (installed from the .vsix) and returns its API. */
async function activateExtension() {
  const ext = vscode.extensions.getExtension(EXTENSION_ID);
  if (!ext) {
    const ids = vscode.extensions.all.map((e) => e.id).filter((id) => !id.startsWith('vscode.'));
    throw new Error(`extension ${EXTENSION_ID} is not installed (non-builtin: ${ids.join(', ')})`);
  }
  const api = await ext.activate();
  return { ext, api };
}

function codeOf(diagnostic) {
  const c = diagnostic.code;
  return c !== null && typeof c === 'object' ? c.value : c;
}

/**
 * Resolves with the diagnostics of `uri` once `predicate(diagnostics)` holds: checked
 * now and on every onDidChangeDiagnostics for that URI, until `timeoutMs`.
 */
function waitForDiagnostics(uri, predicate, timeoutMs = 30_000) {
  return new Promise((resolve, reject) => {
    let sub;
    let timer;
    const finish = (fn, value) => {
      if (sub) sub.dispose();
      clearTimeout(timer);
      fn(value);
    };
    const check = () => {
      const diagnostics = vscode.languages.getDiagnostics(uri);
      if (predicate(diagnostics)) {
        finish(resolve, diagnostics);
        return true;
      }
      return false;
    };
    sub = vscode.languages.onDidChangeDiagnostics((e) => {
      if (e.uris.some((u) => u.toString() === uri.toString())) check();
    });
    timer = setTimeout(() => {
      const got = vscode.languages.getDiagnostics(uri).map((d) => ({ code: codeOf(d), message: d.message, range: rangeJson(d.range) }));
      finish(reject, new Error(`timed out after ${timeoutMs} ms waiting for diagnostics of ${uri.path}; they are ${JSON.stringify(got)}`));
    }, timeoutMs);
    check();
  });
}

/** Resolves when `event` fires with a value for which `predicate` holds (or it already holds). */
function waitForEvent(event, predicate, already, timeoutMs = 30_000, what = 'event') {
  return new Promise((resolve, reject) => {
    if (already()) return resolve();
    const timer = setTimeout(() => {
      sub.dispose();
      reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`));
    }, timeoutMs);
    const sub = event((v) => {
      if (predicate(v)) {
        clearTimeout(timer);
        sub.dispose();
        resolve();
      }
    });
  });
}

function rangeJson(r) {
  return [r.start.line, r.start.character, r.end.line, r.end.character];
}

/** A new untitled document of the expression language. */
async function untitled(content) {
  const doc = await vscode.workspace.openTextDocument({ language: 'rulesmith-expression', content });
  await vscode.window.showTextDocument(doc);
  return doc;
}

/** Applies text edits to `doc` through a WorkspaceEdit, as the editor would. */
async function applyTextEdits(doc, edits) {
  const edit = new vscode.WorkspaceEdit();
  edit.set(doc.uri, edits);
  const ok = await vscode.workspace.applyEdit(edit);
  if (!ok) throw new Error('workspace.applyEdit refused the edit');
}

/** Throws away the unsaved changes of the active editor. */
async function revertActive() {
  const doc = vscode.window.activeTextEditor?.document;
  await vscode.commands.executeCommand('workbench.action.files.revert');
  // The command can return before the document is clean on a busy machine: wait for it.
  if (doc) await waitForEvent(vscode.workspace.onDidChangeTextDocument, () => !doc.isDirty, () => !doc.isDirty, 30_000, `${doc.uri.path} to be reverted`);
}

/** Closes every editor without saving (no "Save changes?" dialog for untitled ones). */
async function closeAllWithoutSaving() {
  for (let i = 0; i < 20 && vscode.window.visibleTextEditors.length > 0; i++) {
    await vscode.commands.executeCommand('workbench.action.revertAndCloseActiveEditor');
  }
  await vscode.commands.executeCommand('workbench.action.closeAllEditors');
}

module.exports = { EXTENSION_ID, workspaceUri, activateExtension, codeOf, waitForDiagnostics, waitForEvent, rangeJson, untitled, applyTextEdits, revertActive, closeAllWithoutSaving };
