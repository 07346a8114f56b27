// "Evaluate" for `.http` files: a CodeLens above each request ("▶ Evaluate", then the
// verdict), the commands rulesmith.evaluateRequest / evaluateAllRequests /
// showEvaluationTrace, and the trace in a read-only Markdown view. The language server
// does the work (rulesmith/httpRequests, rulesmith/evaluateRequests,
// rulesmith/evaluationTrace, typed in server/src/protocol.ts); this file only shows it.
//
// `.http` files are matched by name, whatever their language (REST Client users have
// `http`, others plaintext); the server does not sync them, so each request carries the
// editor's text. Verdicts are kept per document version: editing the file, a ruleset
// (any JSON document) or the evaluation settings forgets them, and the lens goes back to
// "▶ Evaluate" rather than show a verdict that may no longer hold.
//
// While the server evaluates, the lenses of the requests concerned read "Evaluating…",
// and after a second a progress notification shows. When evaluation cannot run, the lens
// and the notification offer the way out: open the ruleset's first error, or pick which
// of several entry points to evaluate against (written to rulesmith.evaluation.ruleset
// for the workspace folder), or open the setting.
import * as vscode from 'vscode';
import {
  EvaluateRequestsRequest,
  EvaluationTraceRequest,
  HttpRequestRequest,
  HttpRequestsRequest,
  type EvaluationError,
  type HttpRequestInfo,
  type RequestEvaluation,
} from '../../server/src/protocol';
import type { RulesmithClient } from './client';
import type { ServerStatus } from './status';
import type { TraceViewState } from './traceViewState';

export const TRACE_SCHEME = 'rulesmith-trace';
export const HTTP_SELECTOR: vscode.DocumentSelector = [{ pattern: '**/*.http' }];
const SETTING = 'rulesmith.evaluation.ruleset';
/** How long an evaluation runs before a progress notification shows. */
const PROGRESS_AFTER_MS = 1000;

interface FileState {
  readonly version: number;
  /** The settings the verdicts were computed with (see settingsKey). */
  readonly settings: string;
  readonly results: Map<number, RequestEvaluation>;
  error?: EvaluationError;
}

const clip = (s: string, n: number) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

/** A URI argument from a lens (string) or a menu (Uri); the active editor's document otherwise. */
function targetDocument(arg: unknown): Thenable<vscode.TextDocument> | vscode.TextDocument | undefined {
  if (typeof arg === 'string') return vscode.workspace.openTextDocument(vscode.Uri.parse(arg));
  if (arg instanceof vscode.Uri) return vscode.workspace.openTextDocument(arg);
  return vscode.window.activeTextEditor?.document;
}

export class Evaluation implements vscode.CodeLensProvider, vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly states = new Map<string, FileState>();
  private readonly traces = new Map<string, string>();
  /** The request of each open trace, to render it again when the view's switches change. */
  private readonly traced = new Map<string, { readonly httpUri: string; readonly index: number }>();
  /** The requests being evaluated, per `.http` URI (`all` for the whole file). */
  /** Evaluations in flight per .http file: how many for each request (or 'all'), so a second click's lens stays until it ends too. */
  private readonly evaluating = new Map<string, Map<number | 'all', number>>();
  /** Bumped when a ruleset may have changed (forgetAll): an evaluation sent before then stores no verdict. */
  private rulesetGeneration = 0;
  private readonly lensesChanged = new vscode.EventEmitter<void>();
  private readonly traceChanged = new vscode.EventEmitter<vscode.Uri>();
  private readonly disposables: vscode.Disposable[] = [];
  readonly onDidChangeCodeLenses = this.lensesChanged.event;
  readonly onDidChange = this.traceChanged.event;

  constructor(
    private readonly client: RulesmithClient,
    private readonly output: vscode.LogOutputChannel,
    status: ServerStatus,
    private readonly traceView?: TraceViewState,
  ) {
    traceView?.onDidChange(() => this.renderTracesAgain());
    this.disposables.push(
      this.lensesChanged,
      this.traceChanged,
      vscode.languages.registerCodeLensProvider(HTTP_SELECTOR, this),
      vscode.workspace.registerTextDocumentContentProvider(TRACE_SCHEME, this),
      vscode.commands.registerCommand('rulesmith.evaluateRequest', (uri?: unknown, index?: unknown) => this.evaluateCommand(uri, typeof index === 'number' ? index : undefined, false)),
      vscode.commands.registerCommand('rulesmith.evaluateAllRequests', (uri?: unknown) => this.evaluateCommand(uri, undefined, true)),
      vscode.commands.registerCommand('rulesmith.showEvaluationTrace', (uri?: unknown, index?: unknown) => this.showTrace(uri, typeof index === 'number' ? index : undefined)),
      // The lens's way out of an error (not in the palette: they need the error).
      vscode.commands.registerCommand('rulesmith.openFirstEvaluationError', (uri?: unknown) => this.openFirstError(typeof uri === 'string' ? this.states.get(uri)?.error : undefined)),
      vscode.commands.registerCommand('rulesmith.chooseEvaluationRuleset', (uri?: unknown) => (typeof uri === 'string' ? this.chooseRuleset(uri, this.states.get(uri)?.error) : undefined)),
      vscode.workspace.onDidChangeTextDocument((e) => {
        if (e.contentChanges.length === 0) return;
        if (this.states.delete(e.document.uri.toString())) this.lensesChanged.fire();
        else if (this.mayBeRuleset(e.document)) this.forgetAll();
      }),
      vscode.workspace.onDidSaveTextDocument((d) => {
        if (this.mayBeRuleset(d)) this.forgetAll();
      }),
      // Only a real change of the settings in effect counts: VS Code also fires this when
      // it rewrites settings.json for something else.
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (!e.affectsConfiguration('rulesmith')) return;
        let changed = false;
        for (const [uri, state] of this.states) {
          if (state.settings !== settingsKey(vscode.Uri.parse(uri))) changed = this.states.delete(uri) || changed;
        }
        if (changed) this.lensesChanged.fire();
      }),
      vscode.workspace.onDidCloseTextDocument((d) => this.states.delete(d.uri.toString())),
      // Lenses asked for before the server ran came back empty: ask again.
      status.onDidChange((s) => {
        if (s === 'running') this.lensesChanged.fire();
      }),
    );
  }

  private forgetAll(): void {
    this.rulesetGeneration++;
    if (this.states.size === 0) return;
    this.states.clear();
    this.lensesChanged.fire();
  }

  /**
   * A document whose edits may change verdicts: a `*.ruleset.json`, or the file the setting
   * names (a zone file may have any name). Not settings.json and other JSON.
   */
  private mayBeRuleset(doc: vscode.TextDocument): boolean {
    if (this.states.size === 0 || (doc.uri.scheme !== 'file' && doc.uri.scheme !== 'untitled' && doc.uri.scheme !== 'vscode-remote')) return false;
    const path = doc.uri.path;
    if (path.endsWith('.ruleset.json')) return true;
    if (!path.endsWith('.json')) return false;
    const named = vscode.workspace.getConfiguration('rulesmith', doc.uri).get<string>('evaluation.ruleset', '').trim().replace(/\\/g, '/').replace(/^\.\//, '');
    return named !== '' && path.endsWith(named.replace(/^\$\{workspaceFolder\}/, ''));
  }

  private running() {
    const lc = this.client.languageClient;
    return lc && lc.isRunning() ? lc : undefined;
  }

  // --- CodeLens --------------------------------------------------------------------------

  async provideCodeLenses(doc: vscode.TextDocument, token: vscode.CancellationToken): Promise<vscode.CodeLens[]> {
    const lc = this.running();
    if (!lc) return [];
    let requests: readonly HttpRequestInfo[];
    try {
      ({ requests } = await lc.sendRequest(HttpRequestsRequest, { httpUri: doc.uri.toString(), httpText: doc.getText() }, token));
    } catch (e) {
      if (!token.isCancellationRequested) this.output.warn(`Listing the requests of ${doc.uri.fsPath}: ${messageOf(e)}`);
      return [];
    }
    const uri = doc.uri.toString();
    const state = this.states.get(uri);
    const current = state && state.version === doc.version ? state : undefined;
    const running = this.evaluating.get(uri);
    const error = current?.error;
    const lenses: vscode.CodeLens[] = [];
    for (const r of requests) {
      const range = new vscode.Range(r.line, 0, r.line, 0);
      const lens = (title: string, command: string, args: unknown[], tooltip?: string) =>
        lenses.push(new vscode.CodeLens(range, { title, command, arguments: args, ...(tooltip ? { tooltip } : {}) }));
      if (r.problems.length > 0) {
        lens(`⚠ Malformed: ${clip(r.problems[0], 90)}`, 'rulesmith.showEvaluationTrace', [uri, r.index], r.problems.join('\n'));
        continue;
      }
      if (running && (running.has('all') || running.has(r.index))) {
        lens('$(sync~spin) Evaluating…', 'rulesmith.showEvaluationTrace', [uri, r.index], 'The language server is evaluating this request');
        continue;
      }
      const result = current?.results.get(r.index);
      if (result?.verdict) {
        const v = result.verdict;
        const tip = [v.description, v.rulesetName, 'Click for the trace.'].filter(Boolean).join('\n');
        lens(v.title, 'rulesmith.showEvaluationTrace', [uri, r.index], tip);
      } else if (error && error.code === 'timeout') {
        if (error.index === r.index) lens('⚠ Stopped: took longer than the time limit', 'rulesmith.showOutput', [], error.message);
      } else if (error) {
        const fix = fixOf(error);
        lens(`⚠ ${clip(error.message, 100)}`, fix.command, fix.command === 'workbench.action.openSettings' ? [SETTING] : [uri], [error.message, ...error.details].join('\n'));
        lens(fix.title, fix.command, fix.command === 'workbench.action.openSettings' ? [SETTING] : [uri]);
      }
      lens('▶ Evaluate', 'rulesmith.evaluateRequest', [uri, r.index], `Evaluate ${r.summary} against the ruleset`);
      if (r.index === 0 && requests.length > 1) lens('▶ Evaluate all', 'rulesmith.evaluateAllRequests', [uri], 'Evaluate every request of this file');
    }
    return lenses;
  }

  // --- Commands -------------------------------------------------------------------------

  /** Evaluates one request (the one at the cursor when none is given) or all; returns what the server said. */
  private async evaluateCommand(arg: unknown, index: number | undefined, all: boolean): Promise<RequestEvaluation[] | undefined> {
    const doc = await targetDocument(arg);
    if (!doc) {
      void vscode.window.showInformationMessage('Rulesmith: open a .http file to evaluate its requests.');
      return undefined;
    }
    const lc = this.running();
    if (!lc) return this.notRunning();
    const httpUri = doc.uri.toString();
    const httpText = doc.getText();
    if (!all && index === undefined) {
      index = await this.requestAtCursor(doc);
      if (index === undefined) {
        void vscode.window.showInformationMessage('Rulesmith: no request in this file to evaluate.');
        return undefined;
      }
    }
    const version = doc.version;
    // What the verdicts will be computed with, read before they are asked for: a ruleset edited
    // or a setting changed meanwhile leaves them to no lens.
    const settings = settingsKey(doc.uri);
    const generation = this.rulesetGeneration;
    const name = doc.uri.path.slice(doc.uri.path.lastIndexOf('/') + 1);
    let result;
    try {
      result = await this.withProgress(httpUri, all ? 'all' : index!, `Rulesmith: evaluating ${all ? 'the requests' : `request ${index! + 1}`} of ${name}…`, () =>
        lc.sendRequest(EvaluateRequestsRequest, { httpUri, httpText, ...(all ? {} : { index }) }),
      );
    } catch (e) {
      this.output.error(`Evaluating ${doc.uri.fsPath}: ${messageOf(e)}`);
      void vscode.window.showErrorMessage(`Rulesmith: the evaluation failed: ${messageOf(e)}`);
      return undefined;
    }
    if (generation !== this.rulesetGeneration || settings !== settingsKey(doc.uri)) {
      this.output.info(`Evaluating ${doc.uri.fsPath}: a ruleset or a setting changed while it ran; its verdicts are not shown (evaluate again)`);
      return [...result.requests];
    }
    let state = this.states.get(httpUri);
    if (!state || state.version !== version || state.settings !== settings) this.states.set(httpUri, (state = { version, settings, results: new Map() }));
    state.error = result.error;
    // A request stopped by the time limit leaves the verdicts of those before it.
    for (const r of result.requests) if (r.verdict) state.results.set(r.index, r);
    if (result.error) this.showError(result.error, httpUri);
    else {
      const malformed = result.requests.filter((r) => r.problems.length > 0 && (all || r.index === index));
      if (malformed.length > 0) {
        const r = malformed[0];
        void vscode.window.showWarningMessage(`Rulesmith: request ${r.index + 1}${r.name ? ` "${r.name}"` : ''} is malformed and was not evaluated: ${r.problems[0]}`);
      }
    }
    this.lensesChanged.fire();
    return [...result.requests];
  }

  /** The request whose block holds the cursor (the server's rule, as for Trace on zone). */
  private async requestAtCursor(doc: vscode.TextDocument): Promise<number | undefined> {
    const lc = this.running();
    if (!lc) return undefined;
    const editor = vscode.window.activeTextEditor;
    const line = editor && editor.document === doc ? editor.selection.active.line : 0;
    return (await lc.sendRequest(HttpRequestRequest, { httpUri: doc.uri.toString(), httpText: doc.getText(), line })).request?.index;
  }

  /** Opens the trace of a request beside the editor; returns the trace document's URI. */
  private async showTrace(arg: unknown, index: number | undefined): Promise<vscode.Uri | undefined> {
    const doc = await targetDocument(arg);
    if (!doc) {
      void vscode.window.showInformationMessage('Rulesmith: open a .http file to see the trace of a request.');
      return undefined;
    }
    const lc = this.running();
    if (!lc) return this.notRunning();
    index ??= await this.requestAtCursor(doc);
    if (index === undefined) return undefined;
    const httpUri = doc.uri.toString();
    let result;
    try {
      const httpText = doc.getText();
      const view = this.traceView?.view;
      result = await this.withProgress(httpUri, index, `Rulesmith: tracing request ${index + 1}…`, () => lc.sendRequest(EvaluationTraceRequest, { httpUri, httpText, index, ...(view ? { view } : {}) }));
    } catch (e) {
      this.output.error(`Tracing request ${index + 1} of ${doc.uri.fsPath}: ${messageOf(e)}`);
      void vscode.window.showErrorMessage(`Rulesmith: the trace failed: ${messageOf(e)}`);
      return undefined;
    }
    if (result.error) this.showError(result.error, httpUri);
    const name = doc.uri.path.slice(doc.uri.path.lastIndexOf('/') + 1) || 'requests';
    const uri = vscode.Uri.from({ scheme: TRACE_SCHEME, path: `/${name} — request ${index + 1}.md`, query: httpUri });
    this.traces.set(uri.toString(), result.markdown);
    this.traced.set(uri.toString(), { httpUri, index });
    this.traceChanged.fire(uri);
    this.traceView?.opened();
    const trace = await vscode.workspace.openTextDocument(uri);
    try {
      await vscode.commands.executeCommand('markdown.showPreviewToSide', uri);
    } catch {
      // No Markdown preview (the built-in extension disabled): the text, read-only, beside.
      await vscode.window.showTextDocument(trace, { viewColumn: vscode.ViewColumn.Beside, preview: true, preserveFocus: true });
    }
    return uri;
  }

  /** The traces open in an editor, rendered again with the trace view's switches as they are now. */
  private async renderTracesAgain(): Promise<void> {
    const lc = this.running();
    if (!lc) return;
    const open = new Set(vscode.workspace.textDocuments.map((d) => d.uri.toString()));
    for (const [key, t] of this.traced) {
      if (!open.has(key)) {
        this.traced.delete(key);
        continue;
      }
      const doc = await vscode.workspace.openTextDocument(vscode.Uri.parse(t.httpUri));
      const view = this.traceView?.view;
      const result = await lc.sendRequest(EvaluationTraceRequest, { httpUri: t.httpUri, httpText: doc.getText(), index: t.index, ...(view ? { view } : {}) });
      this.traces.set(key, result.markdown);
      this.traceChanged.fire(vscode.Uri.parse(key));
    }
  }

  /** The current text of a trace view (tests read it). */
  traceText(uri: string): string | undefined {
    return this.traces.get(uri);
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.traces.get(uri.toString()) ?? '# Evaluation trace\n\nThis trace is gone: evaluate the request again (Rulesmith: Show Evaluation Trace).\n';
  }

  /**
   * Runs `work` with the lenses of `which` reading "Evaluating…", and a progress
   * notification once it has taken longer than a second.
   */
  private async withProgress<T>(httpUri: string, which: number | 'all', title: string, work: () => Thenable<T>): Promise<T> {
    let counts = this.evaluating.get(httpUri);
    if (!counts) this.evaluating.set(httpUri, (counts = new Map()));
    counts.set(which, (counts.get(which) ?? 0) + 1);
    this.lensesChanged.fire();
    const pending = Promise.resolve(work());
    const timer = setTimeout(() => {
      void vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title }, () => pending.catch(() => undefined));
    }, PROGRESS_AFTER_MS);
    try {
      return await pending;
    } finally {
      clearTimeout(timer);
      const left = (counts.get(which) ?? 1) - 1;
      if (left > 0) counts.set(which, left);
      else counts.delete(which);
      if (counts.size === 0) this.evaluating.delete(httpUri);
      this.lensesChanged.fire();
    }
  }

  private showError(error: EvaluationError, httpUri: string): void {
    this.output.warn(`Evaluation: ${error.message}${error.details.map((d) => `\n  ${d}`).join('')}`);
    const detail = error.details.length > 0 ? ` ${error.details[0]}${error.details.length > 1 ? ` (and ${error.details.length - 1} more in the output)` : ''}` : '';
    const fix = fixOf(error);
    const actions = [fix.title, ...(fix.title !== 'Open Setting' && error.code !== 'timeout' ? ['Open Setting'] : [])];
    const show = error.code === 'timeout' ? vscode.window.showWarningMessage : vscode.window.showErrorMessage;
    void show(`Rulesmith: ${error.message}${detail}`, ...actions).then(async (choice) => {
      if (choice === 'Open Setting') await vscode.commands.executeCommand('workbench.action.openSettings', SETTING);
      else if (choice === fix.title) {
        if (fix.command === 'rulesmith.openFirstEvaluationError') await this.openFirstError(error);
        else if (fix.command === 'rulesmith.chooseEvaluationRuleset') await this.chooseRuleset(httpUri, error);
        else if (fix.command === 'rulesmith.showOutput') this.output.show(true);
      }
    });
  }

  /** Opens the ruleset at its first error (or the ruleset, when the error has no position). */
  private async openFirstError(error: EvaluationError | undefined): Promise<void> {
    const at = error?.location;
    const uri = at?.uri ?? error?.rulesetUri;
    if (!uri) return;
    const position = new vscode.Position(at?.line ?? 0, at?.character ?? 0);
    await vscode.window.showTextDocument(vscode.Uri.parse(uri), { selection: new vscode.Range(position, position) });
  }

  /**
   * Several entry points of one phase: a quick pick of them; the one chosen is written to
   * rulesmith.evaluation.ruleset of the `.http` file's workspace folder (relative to it),
   * and the file is evaluated again. Returns the value written.
   */
  private async chooseRuleset(httpUri: string, error: EvaluationError | undefined): Promise<string | undefined> {
    const http = vscode.Uri.parse(httpUri);
    const folder = vscode.workspace.getWorkspaceFolder(http);
    const candidates = (error?.candidates ?? []).map((c) => vscode.Uri.parse(c));
    if (!folder || candidates.length === 0) {
      await vscode.commands.executeCommand('workbench.action.openSettings', SETTING);
      return undefined;
    }
    const items = candidates.map((uri) => ({ label: uri.path.slice(uri.path.lastIndexOf('/') + 1), description: vscode.workspace.asRelativePath(uri, false), uri }));
    const picked = await vscode.window.showQuickPick(items, {
      title: 'Evaluate the requests against which ruleset?',
      placeHolder: `Written to ${SETTING} for the folder ${folder.name}`,
    });
    if (!picked) return undefined;
    const base = folder.uri.path.endsWith('/') ? folder.uri.path : `${folder.uri.path}/`;
    const value = picked.uri.path.startsWith(base) ? picked.uri.path.slice(base.length) : picked.uri.fsPath;
    await vscode.workspace.getConfiguration('rulesmith', folder.uri).update('evaluation.ruleset', value, vscode.ConfigurationTarget.WorkspaceFolder);
    void this.evaluateCommand(httpUri, undefined, true);
    return value;
  }

  private notRunning(): undefined {
    void vscode.window.showErrorMessage('Rulesmith: the language server is not running, so requests cannot be evaluated.', 'Restart', 'Show Output').then((choice) => {
      if (choice === 'Restart') void vscode.commands.executeCommand('rulesmith.restartServer');
      else if (choice === 'Show Output') this.output.show(true);
    });
    return undefined;
  }

  dispose(): void {
    for (const d of this.disposables.splice(0)) d.dispose();
  }
}

/** What helps with an error: its command and the button's title. */
function fixOf(error: EvaluationError): { title: string; command: string } {
  if (error.code === 'ruleset-invalid' && (error.location || error.rulesetUri)) return { title: 'Open first error', command: 'rulesmith.openFirstEvaluationError' };
  if (error.code === 'unreadable' && error.rulesetUri) return { title: 'Open Ruleset', command: 'rulesmith.openFirstEvaluationError' };
  if (error.code === 'ambiguous-ruleset' && error.candidates?.length) return { title: 'Choose ruleset…', command: 'rulesmith.chooseEvaluationRuleset' };
  if (error.code === 'timeout' || error.code === 'internal') return { title: 'Show Output', command: 'rulesmith.showOutput' };
  return { title: 'Open Setting', command: 'workbench.action.openSettings' };
}

/** The settings that decide a file's verdicts, as one string to compare. */
function settingsKey(uri: vscode.Uri): string {
  const c = vscode.workspace.getConfiguration('rulesmith', uri);
  return JSON.stringify([c.get('evaluation.ruleset'), c.get('plan')]);
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
