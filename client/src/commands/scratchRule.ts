// Create Firewall Rule starts in an editor, not a one-line input box: a scratch `.cfrule`
// file (in the extension's storage, one per zone, kept as a draft between uses) opens with
// the language's completion, hovers and diagnostics, and a CodeLens above any `.cfrule`
// expression — "Create firewall rule from this expression" — runs the rest of the flow
// (action, description, how) with the editor's text. The command
// rulesmith.createFirewallRuleFromExpression does the same from the palette.
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import type { Zone } from '../api/rulesApi';
import * as ui from '../ui';
import { runCommand, UserError, type Ctx } from './context';

const LANGUAGE = 'rulesmith-expression';

export class ScratchRule implements vscode.CodeLensProvider {
  private readonly lensesChanged = new vscode.EventEmitter<void>();
  /** The zone each scratch file was opened for: its rule goes there, whichever zone is chosen since. */
  private readonly zoneOf = new Map<string, Zone>();
  readonly onDidChangeCodeLenses = this.lensesChanged.event;

  constructor(private readonly ctx: Ctx) {}

  register(): vscode.Disposable[] {
    return [
      this.lensesChanged,
      vscode.languages.registerCodeLensProvider({ language: LANGUAGE }, this),
      this.ctx.connection.onDidChange(() => this.lensesChanged.fire()),
      vscode.commands.registerCommand('rulesmith.createFirewallRuleFromExpression', (uri?: unknown, extra?: unknown) =>
        runCommand(this.ctx, 'Create firewall rule', () => this.createFrom(uri, extra)),
      ),
    ];
  }

  /** The scratch file of a zone (one per zone: a draft left there comes back). */
  scratchUri(zone: Zone): vscode.Uri {
    return vscode.Uri.file(join(this.ctx.context.globalStorageUri.fsPath, 'scratch', `firewall-rule.${zone.name.replace(/[^\w.-]+/g, '_')}.cfrule`));
  }

  /** Opens the zone's scratch editor, with `initial` when given (else the draft kept, else empty). */
  async open(zone: Zone, initial: string | undefined): Promise<vscode.Uri> {
    const uri = this.scratchUri(zone);
    this.zoneOf.set(uri.toString(), zone);
    mkdirSync(join(this.ctx.context.globalStorageUri.fsPath, 'scratch'), { recursive: true });
    if (!existsSync(uri.fsPath) || initial !== undefined) writeFileSync(uri.fsPath, initial ?? '');
    const doc = await vscode.workspace.openTextDocument(uri);
    if (initial !== undefined && doc.getText() !== initial) {
      // Open already with other text: the new start replaces it.
      const edit = new vscode.WorkspaceEdit();
      edit.replace(uri, new vscode.Range(doc.positionAt(0), doc.positionAt(doc.getText().length)), initial);
      await vscode.workspace.applyEdit(edit);
    }
    const editor = await vscode.window.showTextDocument(doc, { preview: false });
    const end = doc.positionAt(doc.getText().length);
    editor.selection = new vscode.Selection(end, end);
    void ui.info(`Write the expression of the firewall rule for ${zone.name} (completion: Ctrl+Space), then click "Create firewall rule from this expression" above it.`);
    return uri;
  }

  provideCodeLenses(doc: vscode.TextDocument): vscode.CodeLens[] {
    const c = this.ctx.connection;
    if (!c.state().signedIn || !c.zoneId || doc.getText().trim() === '') return [];
    return [
      new vscode.CodeLens(new vscode.Range(0, 0, 0, 0), {
        title: '$(add) Create firewall rule from this expression',
        command: 'rulesmith.createFirewallRuleFromExpression',
        arguments: [doc.uri],
        tooltip: `A firewall rule on ${this.zoneOf.get(doc.uri.toString())?.name ?? 'the chosen zone'} with this expression as its filter (asks the action and a description next)`,
      }),
    ];
  }

  /** The rest of Create Firewall Rule with the editor's expression; the scratch editor closes once it is created. */
  private async createFrom(arg: unknown, extra: unknown): Promise<unknown> {
    const uri = arg instanceof vscode.Uri ? arg : typeof arg === 'string' ? vscode.Uri.parse(arg) : vscode.window.activeTextEditor?.document.uri;
    const doc = uri ? await vscode.workspace.openTextDocument(uri) : undefined;
    if (!doc || doc.languageId !== LANGUAGE) throw new UserError('Open a .cfrule expression (or run "Rulesmith: Create Firewall Rule" for a scratch editor) to create a firewall rule from it.');
    const expression = doc.getText().trim();
    if (expression === '') throw new UserError(`${doc.uri.path.split('/').pop()} is empty: write the expression first.`);
    const more = extra && typeof extra === 'object' ? (extra as Record<string, unknown>) : {};
    // A zone's scratch file creates on that zone, even if another was chosen meanwhile.
    const zone = this.zoneOf.get(doc.uri.toString());
    const result = await vscode.commands.executeCommand<unknown>('rulesmith.createFirewallRule', { ...(zone ? { zone } : {}), ...more, expression, askDescription: true, source: doc.uri.toString() });
    if (result && doc.uri.fsPath.startsWith(join(this.ctx.context.globalStorageUri.fsPath, 'scratch'))) {
      // Created: the draft is done.
      const edit = new vscode.WorkspaceEdit();
      edit.replace(doc.uri, new vscode.Range(doc.positionAt(0), doc.positionAt(doc.getText().length)), '');
      await vscode.workspace.applyEdit(edit);
      await doc.save();
      const tabs = vscode.window.tabGroups.all.flatMap((g) => g.tabs).filter((t) => t.input instanceof vscode.TabInputText && t.input.uri.toString() === doc.uri.toString());
      if (tabs.length > 0) await vscode.window.tabGroups.close(tabs, true);
    }
    return result;
  }
}
