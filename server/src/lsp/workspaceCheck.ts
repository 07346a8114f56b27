/**
 * Diagnostics for files that are not open: "Rulesmith: Check Workspace" sends every
 * `.cfrule` and ruleset JSON of the workspace (rulesmith/checkFiles), and a file that
 * closes is checked again from disk (its saved text: unsaved edits were discarded), so
 * its problems stay in the Problems panel instead of vanishing with the editor.
 * Open files are the editor's: their own diagnostics run (diagnostics.ts), and they are
 * only counted here.
 */
import { readFile, stat } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { DiagnosticSeverity, type Connection, type Diagnostic as LspDiagnostic } from 'vscode-languageserver/node';
import { TextDocument } from 'vscode-languageserver-textdocument';
import type { CheckFilesParams, CheckFilesResult } from '../protocol';
import { documentDiagnostics } from './diagnostics';
import { documentKind, type DocumentStore } from './documents';
import { rulesetSlices, wholeTextSlice } from './expressionSlices';
import { forgetRulesetDocument } from './rulesetDiagnostics';
import type { Settings } from './settings';

/** Bigger files are not read on close (a ruleset is far smaller). */
const MAX_FILE_BYTES = 8 * 1024 * 1024;

/** The diagnostics of a text that is not open in the editor; undefined when it is not one of ours. */
export function diagnosticsOfText(store: DocumentStore, uri: string, languageId: string, text: string, settings: Settings): LspDiagnostic[] | undefined {
  const kind = documentKind(uri, languageId, settings);
  if (!kind) return undefined;
  const doc = TextDocument.create(uri, languageId, 0, text);
  const slices = kind === 'expression' ? [wholeTextSlice(text)] : rulesetSlices(text);
  try {
    return documentDiagnostics(store, { doc, kind, slices, settings });
  } finally {
    // Its cache entry belongs to open documents only.
    forgetRulesetDocument(uri);
  }
}

function languageOf(uri: string): string {
  return uri.endsWith('.cfrule') ? 'rulesmith-expression' : 'json';
}

export class ClosedFileDiagnostics {
  /** Closed files whose last publish was not empty. */
  private readonly published = new Set<string>();

  constructor(
    private readonly connection: Pick<Connection, 'sendDiagnostics'>,
    private readonly store: DocumentStore,
    private readonly getSettings: (uri: string) => Promise<Settings>,
  ) {}

  /** `always`: publish even an empty list (the editor's last publish may have had problems). */
  private publish(uri: string, diagnostics: LspDiagnostic[], always = false): void {
    if (diagnostics.length === 0 && !this.published.delete(uri) && !always) return;
    if (diagnostics.length > 0) this.published.add(uri);
    void this.connection.sendDiagnostics({ uri, diagnostics });
  }

  /** A file closed: its saved text's problems (nothing when it is not on disk or not ours). */
  async closed(uri: string): Promise<void> {
    let text: string | undefined;
    if (uri.startsWith('file:')) {
      try {
        const path = fileURLToPath(uri);
        if ((await stat(path)).size <= MAX_FILE_BYTES) text = await readFile(path, 'utf8');
      } catch {
        text = undefined;
      }
    }
    // Reopened while the file was read: the editor's diagnostics win.
    if (this.store.get(uri)) return;
    const diagnostics = text === undefined ? undefined : diagnosticsOfText(this.store, uri, languageOf(uri), text, await this.getSettings(uri));
    if (this.store.get(uri)) return;
    this.publish(uri, diagnostics ?? [], true);
  }

  /** The editor opened it: its own diagnostics take over. */
  opened(uri: string): void {
    this.published.delete(uri);
  }

  async checkFiles(params: CheckFilesParams): Promise<CheckFilesResult> {
    let checked = 0;
    let errors = 0;
    let warnings = 0;
    let withProblems = 0;
    for (const f of params.files) {
      const open = this.store.get(f.uri);
      const languageId = open?.languageId ?? f.languageId ?? languageOf(f.uri);
      const diagnostics = diagnosticsOfText(this.store, f.uri, languageId, open ? open.getText() : f.text, await this.getSettings(f.uri));
      if (!diagnostics) continue;
      checked++;
      const e = diagnostics.filter((d) => d.severity === DiagnosticSeverity.Error).length;
      const w = diagnostics.filter((d) => d.severity === DiagnosticSeverity.Warning).length;
      errors += e;
      warnings += w;
      if (e + w > 0) withProblems++;
      if (!open && !this.store.get(f.uri)) this.publish(f.uri, diagnostics);
    }
    return { checked, errors, warnings, withProblems };
  }
}
