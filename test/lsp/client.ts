/**
 * A real LSP client for the tests and the benchmark: spawns the built server
 * (`node server/out/server.js --stdio`), speaks vscode-languageserver-protocol over its
 * stdin/stdout, answers `workspace/configuration` from settings the test gives (per
 * document URI), and lets a test wait for `textDocument/publishDiagnostics` by event.
 * `close()` shuts the server down cleanly (shutdown + exit) and kills it if it does not
 * exit in time, so no process is left behind.
 *
 * Build first (`npm run build`; `npm test` does it).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import {
  ConfigurationRequest,
  createProtocolConnection,
  DidChangeConfigurationNotification,
  DidChangeTextDocumentNotification,
  DidCloseTextDocumentNotification,
  DidOpenTextDocumentNotification,
  ExitNotification,
  InitializedNotification,
  InitializeRequest,
  LogMessageNotification,
  PublishDiagnosticsNotification,
  RegistrationRequest,
  ShutdownRequest,
  StreamMessageReader,
  StreamMessageWriter,
  WorkDoneProgressCreateRequest,
  type InitializeResult,
  type ProtocolConnection,
  type PublishDiagnosticsParams,
  type Range,
  type TextEdit,
  type WorkspaceEdit,
} from 'vscode-languageserver-protocol/node';
import { TextDocument } from 'vscode-languageserver-textdocument';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const SERVER = `${ROOT}server/out/server.js`;
export const FIXTURES = `${ROOT}test/fixtures/lsp/`;

export type SettingsFor = (uri: string | undefined) => unknown | Promise<unknown>;

export interface StartOptions {
  /** The `rulesmith` section per document (a value for every document, or a function of the URI). */
  settings?: Record<string, unknown> | SettingsFor;
  /** Sent as `initializationOptions`; `diagnosticsDelay` defaults to 0 here. */
  initializationOptions?: Record<string, unknown>;
  /** Client capabilities to change (merged at the top level). */
  capabilities?: Record<string, unknown>;
}

interface Waiter {
  uri: string;
  after: number;
  version?: number;
  resolve: (p: PublishDiagnosticsParams) => void;
}

export function fixtureUri(name: string): string {
  return pathToFileURL(FIXTURES + name).href;
}

export class LspClient {
  /** Every `window/logMessage`, for asserting that an error was logged. */
  readonly logs: { type: number; message: string }[] = [];
  /** How many `workspace/configuration` requests the server made. */
  configurationRequests = 0;
  stderr = '';
  initializeResult?: InitializeResult;
  private readonly published = new Map<string, PublishDiagnosticsParams[]>();
  private readonly waiters = new Set<Waiter>();
  private readonly versions = new Map<string, number>();
  private readonly texts = new Map<string, TextDocument>();
  private exited: Promise<void>;

  private constructor(
    readonly process: ChildProcess,
    readonly connection: ProtocolConnection,
    public settings: SettingsFor,
  ) {
    this.exited = new Promise((resolve) => process.once('exit', () => resolve()));
  }

  static async start(options: StartOptions = {}): Promise<LspClient> {
    if (!existsSync(SERVER)) throw new Error(`${SERVER} is missing: run \`npm run build\` first`);
    const child = spawn(process.execPath, [SERVER, '--stdio'], { stdio: ['pipe', 'pipe', 'pipe'] });
    const connection = createProtocolConnection(new StreamMessageReader(child.stdout!), new StreamMessageWriter(child.stdin!));
    const s = options.settings;
    const client = new LspClient(child, connection, typeof s === 'function' ? s : () => s ?? {});
    child.stderr!.on('data', (d: Buffer) => (client.stderr += d.toString()));
    connection.onNotification(PublishDiagnosticsNotification.type, (p) => client.onPublish(p));
    connection.onNotification(LogMessageNotification.type, (p) => {
      client.logs.push(p);
    });
    connection.onRequest(ConfigurationRequest.type, async (p) => {
      client.configurationRequests++;
      return Promise.all(p.items.map((item) => (item.section === 'rulesmith' ? client.settings(item.scopeUri) : null)));
    });
    connection.onRequest(RegistrationRequest.type, () => undefined);
    connection.onRequest(WorkDoneProgressCreateRequest.type, () => undefined);
    connection.listen();
    client.initializeResult = await withTimeout(
      connection.sendRequest(InitializeRequest.type, {
        processId: process.pid,
        rootUri: pathToFileURL(ROOT).href,
        workspaceFolders: null,
        initializationOptions: { diagnosticsDelay: 0, ...options.initializationOptions },
        capabilities: {
          workspace: { configuration: true, didChangeConfiguration: { dynamicRegistration: true }, applyEdit: true },
          textDocument: {
            synchronization: { didSave: false, dynamicRegistration: false },
            publishDiagnostics: { versionSupport: true, codeDescriptionSupport: true, dataSupport: true, relatedInformation: false, tagSupport: { valueSet: [1, 2] } },
            completion: { completionItem: { snippetSupport: true, documentationFormat: ['markdown', 'plaintext'], labelDetailsSupport: true } },
            hover: { contentFormat: ['markdown', 'plaintext'] },
            signatureHelp: { signatureInformation: { documentationFormat: ['markdown', 'plaintext'], parameterInformation: { labelOffsetSupport: true } } },
            codeAction: { codeActionLiteralSupport: { codeActionKind: { valueSet: ['quickfix', 'refactor', 'refactor.rewrite'] } }, isPreferredSupport: true, dataSupport: true },
            formatting: {},
            rangeFormatting: {},
            foldingRange: { lineFoldingOnly: true },
            semanticTokens: {
              requests: { full: true, range: true },
              tokenTypes: [],
              tokenModifiers: [],
              formats: ['relative'],
            },
          },
          ...options.capabilities,
        },
      }),
      10_000,
      'initialize',
    ).catch(async (e) => {
      await client.close();
      throw e;
    });
    await connection.sendNotification(InitializedNotification.type, {});
    return client;
  }

  private onPublish(p: PublishDiagnosticsParams): void {
    let list = this.published.get(p.uri);
    if (!list) this.published.set(p.uri, (list = []));
    list.push(p);
    for (const w of this.waiters) {
      if (w.uri === p.uri && list.length - 1 >= w.after && (w.version === undefined || p.version === w.version)) {
        this.waiters.delete(w);
        w.resolve(p);
      }
    }
  }

  /** How many publishes for the URI arrived so far (pass as `after` to wait for a newer one). */
  mark(uri: string): number {
    return this.published.get(uri)?.length ?? 0;
  }

  /** Every publish received for the URI, in order. */
  publishes(uri: string): readonly PublishDiagnosticsParams[] {
    return this.published.get(uri) ?? [];
  }

  /**
   * The first publish for the URI with index >= `after` (default 0) and, when given, the
   * document version `version`: already received, or the next to arrive.
   */
  diagnostics(uri: string, { version, after = 0, timeoutMs = 10_000 }: { version?: number; after?: number; timeoutMs?: number } = {}): Promise<PublishDiagnosticsParams> {
    const list = this.published.get(uri) ?? [];
    const found = list.slice(after).find((p) => version === undefined || p.version === version);
    if (found) return Promise.resolve(found);
    const waiter = { uri, after, version } as Waiter;
    const p = new Promise<PublishDiagnosticsParams>((resolve) => (waiter.resolve = resolve));
    this.waiters.add(waiter);
    return withTimeout(p, timeoutMs, `diagnostics for ${uri}${version !== undefined ? ` v${version}` : ''}`).finally(() => this.waiters.delete(waiter));
  }

  async open(uri: string, languageId: string, text: string, version = 1): Promise<void> {
    this.versions.set(uri, version);
    this.texts.set(uri, TextDocument.create(uri, languageId, version, text));
    await this.connection.sendNotification(DidOpenTextDocumentNotification.type, { textDocument: { uri, languageId, version, text } });
  }

  /** Replaces the whole text; returns the new version. */
  async replace(uri: string, text: string): Promise<number> {
    const version = (this.versions.get(uri) ?? 0) + 1;
    this.versions.set(uri, version);
    const doc = this.texts.get(uri);
    if (doc) TextDocument.update(doc, [{ text }], version);
    await this.connection.sendNotification(DidChangeTextDocumentNotification.type, { textDocument: { uri, version }, contentChanges: [{ text }] });
    return version;
  }

  /** An incremental change; returns the new version. */
  async edit(uri: string, range: Range, text: string): Promise<number> {
    const version = (this.versions.get(uri) ?? 0) + 1;
    this.versions.set(uri, version);
    const doc = this.texts.get(uri);
    if (doc) TextDocument.update(doc, [{ range, text }], version);
    await this.connection.sendNotification(DidChangeTextDocumentNotification.type, { textDocument: { uri, version }, contentChanges: [{ range, text }] });
    return version;
  }

  /** The client's copy of an open document. */
  document(uri: string): TextDocument {
    const doc = this.texts.get(uri);
    if (!doc) throw new Error(`${uri} is not open`);
    return doc;
  }

  async closeDocument(uri: string): Promise<void> {
    this.versions.delete(uri);
    this.texts.delete(uri);
    await this.connection.sendNotification(DidCloseTextDocumentNotification.type, { textDocument: { uri } });
  }

  /** Tells the server that settings changed (it re-asks with workspace/configuration). */
  async settingsChanged(settings?: Record<string, unknown> | SettingsFor): Promise<void> {
    if (settings !== undefined) this.settings = typeof settings === 'function' ? settings : () => settings;
    await this.connection.sendNotification(DidChangeConfigurationNotification.type, { settings: null });
  }

  request<R>(method: string, params: unknown, timeoutMs = 10_000): Promise<R> {
    return withTimeout(this.connection.sendRequest(method, params) as Promise<R>, timeoutMs, method);
  }

  /** Shuts the server down; kills it if it has not exited within the timeout. */
  async close(timeoutMs = 3000): Promise<void> {
    if (this.process.exitCode === null && this.process.signalCode === null) {
      try {
        await withTimeout(this.connection.sendRequest(ShutdownRequest.type), timeoutMs, 'shutdown');
        await this.connection.sendNotification(ExitNotification.type);
      } catch {
        // fall through to the kill below
      }
      const timer = setTimeout(() => this.process.kill('SIGKILL'), timeoutMs);
      await this.exited;
      clearTimeout(timer);
    }
    this.connection.dispose();
  }
}

function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

/** Applies LSP text edits to a text. */
/**
 * Holds the server's `workspace/configuration` answer for one document, so a test can act
 * while the server waits for it: `asked` resolves when the server asks, `release()` lets
 * the answer go, and `restore()` puts the client's settings back.
 */
export function holdSettings(client: LspClient, uri: string): { asked: Promise<void>; release: () => void; restore: () => void } {
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  let onAsked!: () => void;
  const asked = new Promise<void>((r) => (onAsked = r));
  const previous = client.settings;
  client.settings = async (u) => {
    if (u === uri) {
      onAsked();
      await held;
    }
    return previous(u);
  };
  return {
    asked,
    release,
    restore: () => {
      client.settings = previous;
      release();
    },
  };
}

export function applyEdits(text: string, edits: readonly TextEdit[]): string {
  return TextDocument.applyEdits(TextDocument.create('file:///x', 'x', 1, text), [...edits]);
}

/** Applies the edits of a WorkspaceEdit (`changes` form) for one URI. */
export function applyWorkspaceEdit(text: string, edit: WorkspaceEdit | undefined, uri: string): string {
  return applyEdits(text, edit?.changes?.[uri] ?? []);
}

/** Splits `te|xt` into the text and the offset of `|`. */
export function caret(marked: string): { text: string; offset: number } {
  const offset = marked.indexOf('|');
  if (offset < 0) throw new Error('no caret in test input');
  return { text: marked.slice(0, offset) + marked.slice(offset + 1), offset };
}

/** The text a range covers. */
export function rangeText(text: string, range: Range): string {
  const doc = TextDocument.create('file:///x', 'x', 1, text);
  return text.slice(doc.offsetAt(range.start), doc.offsetAt(range.end));
}

/** A position in a text (for requests). */
export function positionAt(text: string, offset: number) {
  return TextDocument.create('file:///x', 'x', 1, text).positionAt(offset);
}
