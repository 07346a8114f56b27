// Starts the Rulesmith language server (server/out/server.js, forked over IPC) and
// keeps it running: state shown in the status bar, clear messages when it cannot
// start or keeps crashing, a restart when the set of ruleset files changes.
import { existsSync } from 'node:fs';
import * as vscode from 'vscode';
import {
  CloseAction,
  ErrorAction,
  LanguageClient,
  State,
  TransportKind,
  type CloseHandlerResult,
  type DocumentSelector,
  type ErrorHandlerResult,
  type LanguageClientOptions,
  type ServerOptions,
} from 'vscode-languageclient/node';
import type { ServerStatus } from './status';

export const CLIENT_ID = 'rulesmith';
const CLIENT_NAME = 'Rulesmith Language Server';
/** Crashes tolerated within RESTART_WINDOW_MS before the client gives up. */
const MAX_RESTARTS = 4;
const RESTART_WINDOW_MS = 3 * 60_000;

/** `.cfrule` files, JSON files that are rulesets, and Terraform files (HashiCorp's `terraform` language, or plain text without its extension). */
export function documentSelector(extraRulesetGlobs: readonly string[]): { language: string; pattern?: string }[] {
  // A bare pattern such as `*.rules.json` means "a file named so, anywhere", as the
  // server reads it; VS Code matches patterns against the whole path, hence `**/`.
  const extra = extraRulesetGlobs
    .filter((g) => typeof g === 'string' && g.trim() !== '')
    .map((g) => (g.includes('/') ? g : `**/${g}`));
  const globs = ['**/*.ruleset.json', ...extra];
  return [
    { language: 'rulesmith-expression' },
    ...globs.flatMap((pattern) => [
      { language: 'json', pattern },
      { language: 'jsonc', pattern },
    ]),
    { language: 'terraform' },
    { language: 'plaintext', pattern: '**/*.tf' },
  ];
}

export class RulesmithClient implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private readonly crashes: number[] = [];
  private readonly disposables: vscode.Disposable[] = [];
  /** Serializes start/stop/restart so that commands pressed twice do not interleave. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly output: vscode.LogOutputChannel,
    private readonly status: ServerStatus,
  ) {
    this.disposables.push(
      vscode.workspace.onDidChangeConfiguration((e) => {
        // The document selector is fixed when the client starts.
        if (e.affectsConfiguration('rulesmith.rulesetFiles')) {
          this.output.info('rulesmith.rulesetFiles changed: restarting the language server');
          void this.restart();
        }
      }),
    );
  }

  /** The running LanguageClient, if any (for tests and later features). */
  get languageClient(): LanguageClient | undefined {
    return this.client;
  }

  start(): Promise<void> {
    return this.enqueue(() => this.doStart());
  }

  stop(): Promise<void> {
    return this.enqueue(() => this.doStop());
  }

  restart(): Promise<void> {
    return this.enqueue(async () => {
      this.output.info('Restarting the language server');
      this.crashes.length = 0;
      await this.doStop();
      await this.doStart();
    });
  }

  private enqueue(work: () => Promise<void>): Promise<void> {
    const next = this.queue.then(work, work);
    this.queue = next.catch(() => undefined);
    return next;
  }

  private async doStart(): Promise<void> {
    const module = this.context.asAbsolutePath('server/out/server.js');
    if (!existsSync(module)) {
      this.fail(`The language server is missing (${module}). Build the extension with \`npm run build\`.`);
      return;
    }
    const serverOptions: ServerOptions = {
      run: { module, transport: TransportKind.ipc },
      debug: { module, transport: TransportKind.ipc, options: { execArgv: ['--nolazy', '--inspect=6011'] } },
    };
    const globs = vscode.workspace.getConfiguration('rulesmith').get<string[]>('rulesetFiles', []);
    const selector = documentSelector(Array.isArray(globs) ? globs : []);
    this.status.setDocumentSelector(selector);
    const clientOptions: LanguageClientOptions = {
      documentSelector: selector satisfies DocumentSelector,
      outputChannel: this.output,
      synchronize: { configurationSection: 'rulesmith' },
      initializationFailedHandler: (error: unknown) => {
        this.fail(`The language server failed to initialize: ${messageOf(error)}`);
        return false;
      },
      errorHandler: {
        error: (error, _message, count): ErrorHandlerResult => {
          this.output.error(`Connection to the language server: ${messageOf(error)}`);
          // A few transient read/write errors are survivable; a stream of them is not.
          return { action: (count ?? 1) <= 3 ? ErrorAction.Continue : ErrorAction.Shutdown, handled: true };
        },
        closed: (): CloseHandlerResult => this.onClosed(),
      },
    };
    const client = new LanguageClient(CLIENT_ID, CLIENT_NAME, serverOptions, clientOptions);
    this.client = client;
    client.onDidChangeState((e) => {
      if (this.client !== client) return;
      if (e.newState === State.Starting) this.status.set('starting');
      else if (e.newState === State.Running) this.status.set('running', `${module}`);
      else if (e.newState === State.Stopped && this.status.state !== 'failed') this.status.set('stopped');
    });
    this.status.set('starting');
    try {
      await client.start();
      this.output.info(`Language server running (${module})`);
    } catch (error) {
      // initializationFailedHandler has usually said it already; say it once more only if not.
      if (this.status.state !== 'failed') this.fail(`The language server could not start: ${messageOf(error)}`);
    }
  }

  private async doStop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (!client) return;
    try {
      // dispose, not stop: a client that is restarting itself after a crash (not yet
      // "running") is otherwise left to finish starting beside the new one — two servers,
      // every quick fix twice.
      await client.dispose(5000);
    } catch (error) {
      this.output.warn(`Stopping the language server: ${messageOf(error)}`);
    }
    this.status.set('stopped');
  }

  private onClosed(): CloseHandlerResult {
    const now = Date.now();
    this.crashes.push(now);
    while (this.crashes.length > 0 && now - this.crashes[0] > RESTART_WINDOW_MS) this.crashes.shift();
    if (this.crashes.length <= MAX_RESTARTS) {
      this.output.warn(`The language server stopped unexpectedly; restarting (${this.crashes.length}/${MAX_RESTARTS}).`);
      return { action: CloseAction.Restart, handled: true };
    }
    this.fail(`The language server stopped ${this.crashes.length} times in ${RESTART_WINDOW_MS / 60_000} minutes and will not be restarted.`);
    return { action: CloseAction.DoNotRestart, handled: true };
  }

  /** Shows the failure: in the log, the status bar and a message with actions. */
  private fail(message: string): void {
    this.output.error(message);
    this.status.set('failed', message);
    void vscode.window.showErrorMessage(`Rulesmith: ${message}`, 'Show Output', 'Restart').then((choice) => {
      if (choice === 'Show Output') this.output.show(true);
      else if (choice === 'Restart') void this.restart();
    });
  }

  async dispose(): Promise<void> {
    for (const d of this.disposables.splice(0)) d.dispose();
    await this.stop();
  }
}

function messageOf(error: unknown): string {
  if (error instanceof Error) return error.message;
  if (typeof error === 'object' && error !== null && 'message' in error) return String((error as { message: unknown }).message);
  return String(error);
}
