/**
 * The documents the server knows and the expressions inside them.
 *
 * - A `.cfrule` file (language `rulesmith-expression`) is one expression: the whole text.
 * - A ruleset JSON file (`*.ruleset.json`, or a JSON file matching `rulesmith.rulesetFiles`)
 *   holds one expression per rule, in each rule's `"expression"` string. Each is a
 *   slice whose offsets map both ways through JSON escapes (`\"`, `\\`, `\n`, `\u00e9`,
 *   surrogate pairs), so every feature works on the decoded expression text and
 *   positions land on the right character of the document.
 *
 * Check results are cached per (expression text, check options): an edit in a
 * 500-rule ruleset re-checks only the expression that changed (the JSON is re-parsed,
 * a few milliseconds, but the other 499 expressions come from the cache).
 *
 * Ohm's incremental matcher (grammar.matcher() + replaceInputRange) was measured for
 * the `.cfrule` being edited: on a 4 KB expression one edit re-matches in 0.6 ms instead
 * of 12.7 ms (grammar match alone). It is not used here because the core's
 * `parseExpression` owns the matching (it blanks outer white space, words failures like
 * the engine and builds the tree from its own semantics), so using it would mean
 * duplicating the parser in this adapter or a core API taking a matcher. End to end, a
 * 4 KB check is ~15 ms and the didChange-to-diagnostics p95 is within its 50 ms target
 * (see test/bench/lsp.bench.ts), so that core change is left for when it is needed.
 */
import { TextDocuments } from 'vscode-languageserver/node';
import { TextDocument } from 'vscode-languageserver-textdocument';
import { checkExpression, type CheckOptions, type CheckResult } from '../language/index';
import { httpScheme } from '../language/scheme/index';
import { findExpressions } from '../rulesets/expressions';
import { asPhase, matchesGlob, type Settings } from './settings';

export type DocumentKind = 'expression' | 'ruleset';

export const EXPRESSION_LANGUAGE_ID = 'rulesmith-expression';

/** One expression inside a document. */
export interface ExpressionSlice {
  /** The decoded expression text. */
  readonly text: string;
  /** Index of the rule in the ruleset (JSON only). */
  readonly rule?: number;
  readonly ruleName?: string;
  /** The ruleset's own `phase` (JSON only), when it has one. */
  readonly phase?: string;
  /** True inside a JSON string: inserted text must be JSON-escaped. */
  readonly inJson: boolean;
  /** Document offsets of the first character of the expression and just past its last. */
  readonly contentStart: number;
  readonly contentEnd: number;
  /** Expression offset (0..text.length) -> document offset. */
  toDocument(offset: number): number;
  /** Document offset -> expression offset (clamped to the slice). */
  fromDocument(docOffset: number): number;
  /** Encodes expression text for insertion into the document at this slice. */
  encode(text: string): string;
}

/** JSON string content for `text`, without the quotes. */
export function jsonEscape(text: string): string {
  return JSON.stringify(text).slice(1, -1);
}

function wholeTextSlice(text: string): ExpressionSlice {
  return {
    text,
    inJson: false,
    contentStart: 0,
    contentEnd: text.length,
    toDocument: (o) => Math.max(0, Math.min(o, text.length)),
    fromDocument: (o) => Math.max(0, Math.min(o, text.length)),
    encode: (t) => t,
  };
}

/** The expression slices of a ruleset JSON text. */
export function rulesetSlices(json: string): ExpressionSlice[] {
  return findExpressions(json).regions.map((r) => ({
    text: r.text,
    rule: r.rule,
    ruleName: r.ruleName,
    phase: r.phase,
    inJson: true,
    contentStart: r.start + 1,
    contentEnd: r.end - 1,
    toDocument: r.toDocument,
    fromDocument: r.fromDocument,
    encode: jsonEscape,
  }));
}

/** The kind of a document, or undefined when the server has nothing to say about it. */
export function documentKind(uri: string, languageId: string, settings: Pick<Settings, 'rulesetFiles'>): DocumentKind | undefined {
  const path = uriPath(uri);
  if (languageId === EXPRESSION_LANGUAGE_ID || path.endsWith('.cfrule')) return 'expression';
  if (languageId !== 'json' && languageId !== 'jsonc' && !path.endsWith('.json')) return undefined;
  if (path.endsWith('.ruleset.json')) return 'ruleset';
  return settings.rulesetFiles.some((g) => matchesGlob(path, g)) ? 'ruleset' : undefined;
}

function uriPath(uri: string): string {
  const i = uri.indexOf('://');
  let path = i >= 0 ? uri.slice(uri.indexOf('/', i + 3) >>> 0) : uri;
  const q = path.search(/[?#]/);
  if (q >= 0) path = path.slice(0, q);
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
}

/** The check options for one expression: the document's phase wins over the setting. */
export function checkOptionsFor(slice: ExpressionSlice, settings: Settings): CheckOptions {
  const phase = slice.inJson && slice.phase !== undefined ? asPhase(slice.phase) : settings.phase;
  return { scheme: httpScheme, plan: settings.plan, phase, dynamicComparisons: settings.dynamicComparisons };
}

function optionsKey(o: CheckOptions): string {
  return `${o.plan ?? ''}|${o.phase ?? ''}|${o.dynamicComparisons === false ? 0 : 1}|${o.listNames?.join(',') ?? ''}`;
}

/**
 * A bounded cache of check results keyed by (options, text), least recently used out.
 * Results are immutable data, so one entry may serve several documents.
 */
export class CheckCache {
  private readonly entries = new Map<string, CheckResult>();
  hits = 0;
  misses = 0;

  constructor(private readonly limit = 5000) {}

  check(text: string, options: CheckOptions): CheckResult {
    const key = `${optionsKey(options)}\u0000${text}`;
    const hit = this.entries.get(key);
    if (hit) {
      this.hits++;
      this.entries.delete(key);
      this.entries.set(key, hit);
      return hit;
    }
    this.misses++;
    const result = checkExpression(text, options);
    this.entries.set(key, result);
    if (this.entries.size > this.limit) this.entries.delete(this.entries.keys().next().value as string);
    return result;
  }
}

/** The open documents, their slices (cached per version), and the shared check cache. */
export class DocumentStore {
  /** Incremental sync: TextDocuments applies each change with TextDocument.update. */
  readonly documents = new TextDocuments(TextDocument);
  readonly checks = new CheckCache();
  private readonly slices = new Map<string, { version: number; kind: DocumentKind; slices: ExpressionSlice[] }>();

  constructor() {
    this.documents.onDidClose((e) => this.slices.delete(e.document.uri));
  }

  get(uri: string): TextDocument | undefined {
    return this.documents.get(uri);
  }

  all(): TextDocument[] {
    return this.documents.all();
  }

  /** The expressions of a document (empty when it is not one of ours). */
  slicesOf(doc: TextDocument, kind: DocumentKind): ExpressionSlice[] {
    const cached = this.slices.get(doc.uri);
    if (cached && cached.version === doc.version && cached.kind === kind) return cached.slices;
    const text = doc.getText();
    const slices = kind === 'expression' ? [wholeTextSlice(text)] : rulesetSlices(text);
    this.slices.set(doc.uri, { version: doc.version, kind, slices });
    return slices;
  }

  /** Checks one expression with the document's settings, from the cache when possible. */
  check(slice: ExpressionSlice, settings: Settings): CheckResult {
    return this.checks.check(slice.text, checkOptionsFor(slice, settings));
  }
}

/**
 * The slice whose content contains the document offset (its end included, so that a
 * cursor just before the closing quote is inside), or undefined.
 */
export function sliceAt(slices: readonly ExpressionSlice[], docOffset: number): ExpressionSlice | undefined {
  // Slices are in document order; binary search keeps big rulesets cheap.
  let lo = 0;
  let hi = slices.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const s = slices[mid];
    if (docOffset < s.contentStart) hi = mid - 1;
    else if (docOffset > s.contentEnd) lo = mid + 1;
    else return s;
  }
  return undefined;
}

/** A document with what every feature needs: its kind, expressions and settings. */
export interface Analysed {
  readonly doc: TextDocument;
  readonly kind: DocumentKind;
  readonly slices: readonly ExpressionSlice[];
  readonly settings: Settings;
}

/**
 * Resolves a URI to an analysed document, or undefined when the document is not open
 * or not ours (a JSON file that is no ruleset). Settings are asked for first, because
 * the user's `rulesmith.rulesetFiles` decide whether a JSON file is a ruleset.
 */
export async function analyse(store: DocumentStore, getSettings: (uri: string) => Promise<Settings>, uri: string): Promise<Analysed | undefined> {
  const first = store.get(uri);
  if (!first) return undefined;
  const settings = await getSettings(uri);
  // The document may have changed (or closed) while the client answered.
  const doc = store.get(uri);
  if (!doc) return undefined;
  const kind = documentKind(doc.uri, doc.languageId, settings);
  if (!kind) return undefined;
  return { doc, kind, slices: store.slicesOf(doc, kind), settings };
}
