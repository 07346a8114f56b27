/**
 * The Rulesmith language server: creates the connection (IPC when VS Code starts it,
 * `--stdio` for tests and other editors; vscode-languageserver picks the transport from
 * the command line), declares the capabilities, and routes every request to the file
 * of its feature. It holds no settings: those are asked of the client per document
 * (settings.ts). Every handler runs through `runSafe`, so a failure logs and answers
 * with an empty result instead of killing the server.
 *
 * Initialization options (all optional):
 *   - `diagnosticsDelay`: debounce of diagnostics in ms (default 150; tests use 0).
 *   - `evaluationTimeout`: the time limit of one request's evaluation in ms (default 10,000).
 */
import { WorkspaceNames, type Names } from './workspaceNames';
import {
  CodeActionKind,
  createConnection,
  DidChangeConfigurationNotification,
  ProposedFeatures,
  TextDocumentSyncKind,
  type CancellationToken,
  type InitializeResult,
  type ResponseError,
} from 'vscode-languageserver/node';
import { codeActions } from './codeActions';
import { DEFAULT_DIAGNOSTICS_DELAY_MS, DiagnosticsScheduler } from './diagnostics';
import { analyse, documentKind, DocumentStore, type Analysed } from './documents';
import { boundRegexBacktracking } from '../regexBudget';
import { EVALUATION_TIMEOUT_MS, registerEvaluation } from './evaluate';
import { codeLenses } from './executeLens';
import { rulesetHoverAt } from './rulesetHover';
import { foldingRanges } from './folding';
import { completion, COMPLETION_TRIGGERS, hoverAt, SIGNATURE_RETRIGGERS, SIGNATURE_TRIGGERS, signatureHelpAt } from './embedded';
import { formatDocument, formatRange } from './formatting';
import { rulesetCodeActions } from './rulesetCodeActions';
import { rulesetCompletion } from './rulesetCompletion';
import { forgetRulesetDocument } from './rulesetDiagnostics';
import { runSafe, runSafeNotification } from './runSafe';
import { LEGEND, semanticTokens } from './semanticTokens';
import { SettingsCache } from './settings';
import { CheckFilesRequest, type CheckFilesParams } from '../protocol';
import { ClosedFileDiagnostics } from './workspaceCheck';

boundRegexBacktracking();
const connection = createConnection(ProposedFeatures.all);
const log = connection.console;
const store = new DocumentStore();
const names = new WorkspaceNames();

/** List names and map keys used by the expressions of every open document. */
function workspaceNames(a: Analysed): Names {
  const texts: string[] = [];
  for (const doc of store.all()) {
    const kind = documentKind(doc.uri, doc.languageId, a.settings);
    if (kind) for (const slice of store.slicesOf(doc, kind)) texts.push(slice.text);
  }
  return names.collect(texts);
}

let configurationSupported = false;
let evaluationTimeout = EVALUATION_TIMEOUT_MS;
let dynamicConfigurationChange = false;
const settings = new SettingsCache(async (uri) => {
  if (!configurationSupported) return undefined;
  return connection.workspace.getConfiguration({ scopeUri: uri, section: 'rulesmith' });
});
const getSettings = (uri: string) => settings.get(uri);
let diagnostics = new DiagnosticsScheduler(connection, store, getSettings, log);
const closedFiles = new ClosedFileDiagnostics(connection, store, getSettings);

connection.onInitialize((params): InitializeResult => {
  const caps = params.capabilities;
  configurationSupported = caps.workspace?.configuration === true;
  dynamicConfigurationChange = caps.workspace?.didChangeConfiguration?.dynamicRegistration === true;
  const options = (params.initializationOptions ?? {}) as { diagnosticsDelay?: unknown; evaluationTimeout?: unknown };
  if (typeof options.evaluationTimeout === 'number' && options.evaluationTimeout > 0) evaluationTimeout = options.evaluationTimeout;
  const delay = typeof options.diagnosticsDelay === 'number' && options.diagnosticsDelay >= 0 ? options.diagnosticsDelay : DEFAULT_DIAGNOSTICS_DELAY_MS;
  diagnostics = new DiagnosticsScheduler(connection, store, getSettings, log, delay);
  return {
    capabilities: {
      textDocumentSync: { openClose: true, change: TextDocumentSyncKind.Incremental },
      completionProvider: { triggerCharacters: COMPLETION_TRIGGERS },
      hoverProvider: true,
      signatureHelpProvider: { triggerCharacters: SIGNATURE_TRIGGERS, retriggerCharacters: SIGNATURE_RETRIGGERS },
      documentFormattingProvider: true,
      documentRangeFormattingProvider: true,
      foldingRangeProvider: true,
      semanticTokensProvider: { legend: LEGEND, full: true, range: true },
      codeActionProvider: { codeActionKinds: [CodeActionKind.QuickFix, CodeActionKind.RefactorRewrite] },
      codeLensProvider: { resolveProvider: false },
    },
    serverInfo: { name: 'rulesmith', version: '0.1.0' },
  };
});

connection.onInitialized(() => {
  if (dynamicConfigurationChange) void connection.client.register(DidChangeConfigurationNotification.type, { section: 'rulesmith' });
});

connection.onDidChangeConfiguration(() =>
  runSafeNotification(log, 'didChangeConfiguration', () => {
    settings.clear();
    diagnostics.scheduleAll();
  }),
);

// Text sync (incremental): the store applies each change and patches expression slices.
connection.onDidOpenTextDocument((p) =>
  runSafeNotification(log, 'didOpen', () => store.open(p.textDocument.uri, p.textDocument.languageId, p.textDocument.version, p.textDocument.text)),
);
connection.onDidChangeTextDocument((p) => runSafeNotification(log, 'didChange', () => store.change(p.textDocument.uri, p.textDocument.version, p.contentChanges)));
connection.onDidCloseTextDocument((p) => runSafeNotification(log, 'didClose', () => store.close(p.textDocument.uri)));
store.onDidChangeContent((doc) => {
  closedFiles.opened(doc.uri);
  diagnostics.schedule(doc.uri);
});
store.onDidClose((doc) => {
  // Problems stay after the editor closes: the file is checked again from disk.
  diagnostics.closed(doc.uri, true);
  forgetRulesetDocument(doc.uri);
  void closedFiles.closed(doc.uri).finally(() => settings.delete(doc.uri));
});
connection.onRequest(CheckFilesRequest.method, (p: CheckFilesParams, token: CancellationToken) => runSafe(log, 'checkFiles', token, { checked: 0, errors: 0, warnings: 0, withProblems: 0 }, () => closedFiles.checkFiles(p)));

/** Runs a request for a document of ours; anything else gets `empty`. */
function forDocument<T>(what: string, uri: string, token: CancellationToken, empty: T, work: (a: Analysed) => T): Promise<T | ResponseError<void>> {
  return runSafe(log, what, token, empty, async () => {
    const a = await analyse(store, getSettings, uri);
    if (!a || token.isCancellationRequested) return empty;
    return work(a);
  });
}

// Inside an expression the expression features answer; elsewhere in a ruleset, the ruleset's.
connection.onCompletion((p, token) =>
  forDocument('completion', p.textDocument.uri, token, null, (a) => completion(a, p.position, workspaceNames(a)) ?? rulesetCompletion(a, p.position)),
);
connection.onHover((p, token) => forDocument('hover', p.textDocument.uri, token, null, (a) => hoverAt(a, p.position) ?? rulesetHoverAt(a, p.position)));
connection.onSignatureHelp((p, token) => forDocument('signatureHelp', p.textDocument.uri, token, null, (a) => signatureHelpAt(a, p.position)));
// Terraform files: formatting, folding and semantic tokens stay HashiCorp's extension's.
const tf = (a: Analysed) => a.kind === 'terraform';
connection.onDocumentFormatting((p, token) => forDocument('formatting', p.textDocument.uri, token, [], (a) => (tf(a) ? [] : formatDocument(a, p.options))));
connection.onDocumentRangeFormatting((p, token) => forDocument('rangeFormatting', p.textDocument.uri, token, [], (a) => (tf(a) ? [] : formatRange(a, p.range, p.options))));
connection.onFoldingRanges((p, token) => forDocument('foldingRanges', p.textDocument.uri, token, [], (a) => (tf(a) ? [] : foldingRanges(store, a))));
connection.languages.semanticTokens.on((p, token) => forDocument('semanticTokens', p.textDocument.uri, token, { data: [] }, (a) => (tf(a) ? { data: [] } : semanticTokens(store, a))));
connection.languages.semanticTokens.onRange((p, token) => forDocument('semanticTokens/range', p.textDocument.uri, token, { data: [] }, (a) => (tf(a) ? { data: [] } : semanticTokens(store, a, p.range))));
connection.onCodeAction((p, token) =>
  forDocument('codeAction', p.textDocument.uri, token, [], (a) => [...codeActions(store, a, p.range, p.context), ...rulesetCodeActions(store, a, p.range, p.context)]),
);
connection.onCodeLens((p, token) => forDocument('codeLens', p.textDocument.uri, token, [], (a) => codeLenses(a)));

// Evaluate .http requests: rulesmith/httpRequests, httpRequest, evaluateRequests, evaluationTrace (protocol.ts).
registerEvaluation(connection, store, getSettings, log, () => evaluationTimeout);

connection.onShutdown(() => diagnostics.dispose());

connection.listen();
