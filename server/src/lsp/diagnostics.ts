/**
 * Diagnostics, pushed per document: debounced (~150 ms, `diagnosticsDelay` in the
 * initialization options), computed from the cached check results of the document's
 * expressions, mapped to document ranges, and dropped when the document changed
 * while the settings were fetched (the newer version has its own run scheduled).
 *
 * JSON syntax errors in a ruleset file are VS Code's JSON service's to report; ours are
 * what is inside `"expression"` strings and the ruleset's own problems
 * (rulesetDiagnostics.ts: shape, actions, managed rulesets and overrides, lints).
 */
import {
  DiagnosticSeverity,
  DiagnosticTag,
  type Connection,
  type Diagnostic as LspDiagnostic,
  type Range as LspRange,
} from 'vscode-languageserver/node';
import type { TextDocument } from 'vscode-languageserver-textdocument';
import { error, type Diagnostic, type Severity } from '../language/diagnostics';
import { NESTING_HINT } from '../language/parse';
import { languageDocsFor } from '../language/diagnosticDocs';
import { analyse, type Analysed, type DocumentStore } from './documents';
import { wholeTextSlice, type ExpressionSlice } from './expressionSlices';
import { rulesetDiagnostics } from './rulesetDiagnostics';
import { terraformDiagnostics } from './terraform';
import { describe, type Logger } from './runSafe';
import type { Settings } from './settings';

export const SOURCE = 'rulesmith';
export const DEFAULT_DIAGNOSTICS_DELAY_MS = 150;

const SEVERITY: Record<Severity, DiagnosticSeverity> = {
  error: DiagnosticSeverity.Error,
  warning: DiagnosticSeverity.Warning,
  information: DiagnosticSeverity.Information,
  hint: DiagnosticSeverity.Hint,
};

/** An expression range as a document range. */
export function toDocumentRange(doc: TextDocument, slice: ExpressionSlice, start: number, end: number): LspRange {
  return { start: doc.positionAt(slice.toDocument(start)), end: doc.positionAt(slice.toDocument(end)) };
}

/** One core diagnostic (an expression's) as an LSP diagnostic in the document, its code linked to the language's page. */
export function toLspDiagnostic(doc: TextDocument, slice: ExpressionSlice, d: Diagnostic): LspDiagnostic {
  let range = toDocumentRange(doc, slice, d.range.start, d.range.end);
  if (slice.inJson && slice.text === '') {
    // `"expression": ""`: underline the quotes rather than nothing.
    range = { start: doc.positionAt(slice.contentStart - 1), end: doc.positionAt(slice.contentEnd + 1) };
  }
  const out: LspDiagnostic = {
    range,
    severity: SEVERITY[d.severity],
    code: d.code,
    codeDescription: { href: languageDocsFor(d.code) },
    source: SOURCE,
    message: d.hint ? `${d.message}\n${d.hint}` : d.message,
  };
  if (d.code === 'deprecated-field') out.tags = [DiagnosticTag.Deprecated];
  if (d.data) out.data = d.data;
  return out;
}

/** Every diagnostic of an analysed document, in document order: its expressions', then (ruleset JSON) the ruleset's own. */
export function documentDiagnostics(store: DocumentStore, a: Analysed): LspDiagnostic[] {
  const out: LspDiagnostic[] = [];
  for (const slice of a.slices) {
    for (const d of store.check(slice, a.settings, a.doc.uri).diagnostics) out.push(toLspDiagnostic(a.doc, slice, d));
  }
  if (a.kind !== 'ruleset') return out;
  const byStart = (d: LspDiagnostic) => a.doc.offsetAt(d.range.start);
  return [...out, ...rulesetDiagnostics(store, a)].sort((x, y) => byStart(x) - byStart(y));
}

/** Schedules and publishes diagnostics, one debounced run per document. */
export class DiagnosticsScheduler {
  private readonly timers = new Map<string, ReturnType<typeof setTimeout>>();
  /** Documents whose last publish was not empty (so that clearing them is needed). */
  private readonly withProblems = new Set<string>();
  /** Publishes that were dropped because the document moved on (for tests and logs). */
  dropped = 0;

  constructor(
    private readonly connection: Pick<Connection, 'sendDiagnostics'>,
    private readonly store: DocumentStore,
    private readonly getSettings: (uri: string) => Promise<Settings>,
    private readonly log: Logger,
    private readonly delayMs = DEFAULT_DIAGNOSTICS_DELAY_MS,
  ) {}

  /** (Re)starts the document's debounce timer. */
  schedule(uri: string): void {
    const pending = this.timers.get(uri);
    if (pending) clearTimeout(pending);
    this.timers.set(
      uri,
      setTimeout(() => {
        this.timers.delete(uri);
        void this.validate(uri);
      }, this.delayMs),
    );
  }

  /** Revalidates every open document (settings changed). */
  scheduleAll(): void {
    for (const doc of this.store.all()) this.schedule(doc.uri);
  }

  /** The document closed: stop its run; its problems are cleared unless `keep` (workspaceCheck.ts re-publishes them from disk). */
  closed(uri: string, keep = false): void {
    const pending = this.timers.get(uri);
    if (pending) clearTimeout(pending);
    this.timers.delete(uri);
    if (keep) this.withProblems.delete(uri);
    else this.clear(uri);
  }

  private clear(uri: string): void {
    if (!this.withProblems.delete(uri)) return;
    void this.connection.sendDiagnostics({ uri, diagnostics: [] });
  }

  dispose(): void {
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
  }

  private async validate(uri: string): Promise<void> {
    const before = this.store.get(uri);
    if (!before) return;
    const version = before.version;
    try {
      const a = await analyse(this.store, this.getSettings, uri);
      if (!a) {
        // Closed, or not a ruleset (any more, after a settings change): nothing of ours.
        this.clear(uri);
        return;
      }
      if (a.doc.version !== version) {
        this.dropped++;
        return;
      }
      const diagnostics = a.kind === 'terraform' ? await terraformDiagnostics(this.store, a) : documentDiagnostics(this.store, a);
      // HashiCorp's parser answers asynchronously: the document may have moved on meanwhile.
      if (this.store.get(uri)?.version !== version) {
        this.dropped++;
        return;
      }
      if (diagnostics.length) this.withProblems.add(uri);
      else this.withProblems.delete(uri);
      void this.connection.sendDiagnostics({ uri, version, diagnostics });
    } catch (e) {
      this.log.error(`diagnostics for ${uri} failed: ${describe(e)}`);
      // A document nested too deep for the JSON parser's stack (thousands of levels): said on the document, not left with what it showed before.
      const doc = this.store.get(uri);
      if (e instanceof RangeError && doc?.version === version) {
        this.withProblems.add(uri);
        const deep = error('nesting-too-deep', 0, 0, 'the document is nested too deeply to check (thousands of levels)', NESTING_HINT);
        void this.connection.sendDiagnostics({ uri, version, diagnostics: [toLspDiagnostic(doc, wholeTextSlice(doc.getText()), deep)] });
      }
    }
  }
}
