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
  /** Fires on every change of state (the extension's API exposes it to tests). */
  readonly onDidChange = this.changed.event;

  constructor() {
    this.item.name = 'Rulesmith language server';
    this.item.command = 'rulesmith.showOutput';
    this.set('stopped');
    this.item.show();
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
      this.changed.fire(state);
    }
  }

  dispose(): void {
    this.item.dispose();
    this.changed.dispose();
  }
}
