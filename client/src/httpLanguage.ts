// Colouring for `.http` files when nothing else knows them: VS Code opens a `.http` file as
// plain text unless an extension (REST Client, httpYac, …) or files.associations claims
// it. Such a document is switched to the language `rulesmith-http`, whose grammar
// (syntaxes/rulesmith-http.tmLanguage.json) colours the request line, headers,
// `# @field value` metadata and `###` separators. The language claims no file extension
// in package.json, so an installed REST Client keeps its own language and colours.
import * as vscode from 'vscode';

export const HTTP_LANGUAGE_ID = 'rulesmith-http';

/** Whether the document is a `.http` / `.rest` file that no other extension or setting gave a language. */
export function wantsHttpLanguage(doc: Pick<vscode.TextDocument, 'languageId' | 'uri'>): boolean {
  return doc.languageId === 'plaintext' && /\.(http|rest)$/i.test(doc.uri.path);
}

export function registerHttpLanguage(): vscode.Disposable {
  const adopt = (doc: vscode.TextDocument) => {
    if (wantsHttpLanguage(doc)) void vscode.languages.setTextDocumentLanguage(doc, HTTP_LANGUAGE_ID).then(undefined, () => undefined);
  };
  vscode.workspace.textDocuments.forEach(adopt);
  return vscode.workspace.onDidOpenTextDocument(adopt);
}
