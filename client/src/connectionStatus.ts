// A status bar item for the rules-service side: the chosen zone (click: choose another),
// or "Sign in" when signed out. Hidden until the Rulesmith views have been used (signed in
// or a zone chosen), so that people who only edit rules files do not see it.
import * as vscode from 'vscode';
import type { Connection } from './api/connection';

export class ConnectionStatus implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem('rulesmith.connection', vscode.StatusBarAlignment.Left, 10);
  private readonly sub: vscode.Disposable;

  constructor(private readonly connection: Connection) {
    this.item.name = 'Rulesmith zone';
    this.sub = connection.onDidChange(() => void this.update());
    void this.update();
  }

  private async update(): Promise<void> {
    const s = this.connection.state();
    if (!s.signedIn) {
      if (s.zoneId) {
        this.item.text = '$(shield) Rulesmith: sign in';
        this.item.tooltip = 'Not signed in to the rules service. Click to sign in.';
        this.item.command = 'rulesmith.signIn';
        this.item.show();
      } else this.item.hide();
      return;
    }
    if (!s.zoneId) {
      this.item.hide();
      return;
    }
    let name = s.zoneId;
    try {
      name = (await this.connection.zone(s.zoneId)).name;
    } catch {}
    this.item.text = `$(globe) ${name}`;
    this.item.tooltip = `Rulesmith commands act on ${name}${s.local ? ' (local rules service)' : ` at ${s.baseUrl}`}. Click to choose another zone.`;
    this.item.command = 'rulesmith.chooseZone';
    this.item.accessibilityInformation = { label: `Rulesmith zone ${name}` };
    this.item.show();
  }

  dispose(): void {
    this.sub.dispose();
    this.item.dispose();
  }
}
