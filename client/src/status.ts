// The status bar item that shows the language server's state; a click opens the log.
import * as vscode from 'vscode';

export type ServerState = 'starting' | 'running' | 'stopped' | 'failed';

const LOOK: Record<ServerState, { icon: string; text: string; error?: boolean }> = {
  starting: { icon: '$(sync~spin)', text: 'starting' },
  running: { icon: '$(check)', text: 'running' },
  stopped: { icon: '$(circle-slash)', text: 'stopped' },
  failed: { icon: '$(error)', text: 'failed', error: true },
};

export class ServerStatus implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem('rulesmith.serverStatus', vscode.StatusBarAlignment.Right, 100);
  private readonly changed = new vscode.EventEmitter<ServerState>();
  private current: ServerState = 'stopped';
  private selector: vscode.DocumentSelector | undefined;
  private readonly editorWatch: vscode.Disposable;
  /** Fires on every change of state (the extension's API exposes it to tests). */
  readonly onDidChange = this.changed.event;

  constructor() {
    this.item.name = 'Rulesmith language server';
    this.item.command = 'rulesmith.showOutput';
    this.set('stopped');
    // Shown while a document of ours is in the active editor, and always after a failure.
    this.editorWatch = vscode.window.onDidChangeActiveTextEditor(() => this.updateVisibility());
  }

  /** The documents the server handles (the client's document selector). */
  setDocumentSelector(selector: vscode.DocumentSelector): void {
    this.selector = selector;
    this.updateVisibility();
  }

  private updateVisibility(): void {
    const doc = vscode.window.activeTextEditor?.document;
    const ours = doc !== undefined && this.selector !== undefined && vscode.languages.match(this.selector, doc) > 0;
    if (ours || this.current === 'failed') this.item.show();
    else this.item.hide();
  }

  get state(): ServerState {
    return this.current;
  }

  set(state: ServerState, detail?: string): void {
    const look = LOOK[state];
    this.item.text = `${look.icon} Rulesmith`;
    const tooltip = new vscode.MarkdownString(`**Rulesmith language server**: ${look.text}`);
    if (detail) tooltip.appendText(`\n\n${detail}`);
    tooltip.appendMarkdown('\n\nClick to show the output.');
    this.item.tooltip = tooltip;
    this.item.backgroundColor = look.error ? new vscode.ThemeColor('statusBarItem.errorBackground') : undefined;
    this.item.accessibilityInformation = { label: `Rulesmith language server ${look.text}` };
    if (state !== this.current) {
      this.current = state;
      this.updateVisibility();
      this.changed.fire(state);
    }
  }

  dispose(): void {
    this.editorWatch.dispose();
    this.item.dispose();
    this.changed.dispose();
  }
}
