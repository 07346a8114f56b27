// The trace views' two switches, shared by the local trace (evaluation.ts) and the zone
// trace (zoneTrace.ts): "matched only" (default) or "all rules", and the `crs.*` fields
// hidden (default) or shown. Markdown previews cannot run command links, so the switches
// are commands in the view's title bar (shown while a trace is open: context keys) and in
// the palette; a change re-renders the open traces.
import * as vscode from 'vscode';
import type { TraceViewOptions } from '../../server/src/rulesets/traceView';

export class TraceViewState implements vscode.Disposable {
  private options: TraceViewOptions = {};
  /** Re-render the open traces; awaited, so that the command returns once they show the new view. */
  private readonly listeners: ((view: TraceViewOptions) => Promise<unknown>)[] = [];

  onDidChange(listener: (view: TraceViewOptions) => Promise<unknown>): void {
    this.listeners.push(listener);
  }

  get view(): TraceViewOptions {
    return this.options;
  }

  register(): vscode.Disposable[] {
    void this.publish();
    return [
      vscode.commands.registerCommand('rulesmith.traceShowAllRules', () => this.set({ allRules: true })),
      vscode.commands.registerCommand('rulesmith.traceShowMatchedOnly', () => this.set({ allRules: false })),
      vscode.commands.registerCommand('rulesmith.traceShowInternals', () => this.set({ internals: true })),
      vscode.commands.registerCommand('rulesmith.traceHideInternals', () => this.set({ internals: false })),
    ];
  }

  /** Says that a trace view is open (the title-bar switches show). */
  opened(): void {
    void vscode.commands.executeCommand('setContext', 'rulesmith.traceOpen', true);
  }

  async set(change: TraceViewOptions): Promise<TraceViewOptions> {
    this.options = { ...this.options, ...change };
    await this.publish();
    await Promise.all(this.listeners.map((l) => l(this.options).catch(() => undefined)));
    return this.options;
  }

  private async publish(): Promise<void> {
    await vscode.commands.executeCommand('setContext', 'rulesmith.traceAllRules', this.options.allRules === true);
    await vscode.commands.executeCommand('setContext', 'rulesmith.traceInternals', this.options.internals === true);
  }

  dispose(): void {
    this.listeners.length = 0;
  }
}
