/**
 * The documents the server knows and the expressions inside them (expressionSlices.ts).
 *
 * - A `.cfrule` file (language `rulesmith-expression`) is one expression: the whole text.
 * - A ruleset JSON file (`*.ruleset.json`, or a JSON file matching `rulesmith.rulesetFiles`)
 *   holds one expression per rule, in each rule's `"expression"` string.
 * - A Terraform file (`.tf`) holds the rule expressions of its Cloudflare resources.
 *
 * Incremental sync: each change is applied with TextDocument.update. An edit inside
 * one expression string of a ruleset (the usual case) patches that slice and shifts the
 * offsets of the ones after it, without re-parsing the JSON; any other edit re-parses it.
 * Check results are cached per (expression text, check options), so an edit in a
 * 500-rule ruleset re-checks only the expression that changed.
 *
 * Ohm's incremental matcher (grammar.matcher() + replaceInputRange) for the `.cfrule`
 * being edited was measured on a 4 KB expression, one edit at a time: check p50 15.0 ms
 * -> 1.2 ms, p95 30.1 -> 10.3 ms (in process; ohm re-uses its memo table outside the
 * edited range). Each `.cfrule` document therefore keeps an `IncrementalMatcher`, passed
 * to the core as `match` when its expression is checked. The core's `parseExpression`
 * owns matching, so this takes effect once it accepts that hook (ParseOptions.match,
 * passed through by checkExpression: a three-line core change); until then the core
 * ignores the extra option and checks from scratch, and `IncrementalMatcher.used` stays 0.
 */
import type { TextDocumentContentChangeEvent } from 'vscode-languageserver/node';
import { TextDocument } from 'vscode-languageserver-textdocument';
import type { MatchResult } from 'ohm-js';
import grammar from '../language/rules.ohm-bundle';
import { checkExpression, type CheckOptions, type CheckResult } from '../language/index';
import { httpScheme } from '../language/scheme/index';
import { asPhase, matchesGlob, type Settings } from './settings';
import { patchSlices, rulesetSlices, terraformSlices, wholeTextSlice, type ExpressionSlice } from './expressionSlices';

export type DocumentKind = 'expression' | 'ruleset' | 'terraform';

export const EXPRESSION_LANGUAGE_ID = 'rulesmith-expression';

/** The kind of a document, or undefined when the server has nothing to say about it. */
export function documentKind(uri: string, languageId: string, settings: Pick<Settings, 'rulesetFiles'>): DocumentKind | undefined {
  const path = uriPath(uri);
  if (languageId === EXPRESSION_LANGUAGE_ID || path.endsWith('.cfrule')) return 'expression';
  if (languageId === 'terraform' || path.endsWith('.tf')) return 'terraform';
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
  const phase = slice.phase !== undefined ? asPhase(slice.phase) : settings.phase;
  return { scheme: httpScheme, plan: settings.plan, phase, dynamicComparisons: settings.dynamicComparisons, ...(slice.counting ? { countingExpression: true } : {}), ...(slice.account ? { account: true } : {}) };
}

function optionsKey(o: CheckOptions): string {
  return `${o.plan ?? ''}|${o.phase ?? ''}|${o.dynamicComparisons === false ? 0 : 1}|${o.countingExpression ? 1 : 0}|${o.account ? 1 : 0}|${o.listNames?.join(',') ?? ''}`;
}

/** The incremental-matching hook offered to the core (see the header comment). */
export type MatchHook = (input: string) => MatchResult;

/**
 * One ohm matcher per edited expression document: each input is diffed against the
 * previous one (common prefix and suffix) and only the changed range is replaced, so
 * ohm re-matches little more than the edit.
 */
export class IncrementalMatcher {
  private readonly matcher = grammar.matcher();
  private input = '';
  /** How many matches went through this matcher (0 while the core ignores the hook). */
  used = 0;

  readonly match: MatchHook = (input) => {
    this.used++;
    const a = this.input;
    const max = Math.min(a.length, input.length);
    let p = 0;
    while (p < max && a.charCodeAt(p) === input.charCodeAt(p)) p++;
    let q = 0;
    while (q < max - p && a.charCodeAt(a.length - 1 - q) === input.charCodeAt(input.length - 1 - q)) q++;
    this.matcher.replaceInputRange(p, a.length - q, input.slice(p, input.length - q));
    this.input = input;
    return this.matcher.match();
  };
}

/**
 * A bounded cache of check results keyed by (options, text), least recently used out.
 * Results are immutable data, so one entry may serve several documents.
 */
export class CheckCache {
  private readonly entries = new Map<string, CheckResult>();
  hits = 0;
  misses = 0;

  /** Entries kept at least: `room` raises it to the slices of the open documents, so that a ruleset of more expressions than the limit does not evict its own checks on every pass. */
  private room = 0;

  constructor(private readonly limit = 5000) {}

  /** The open documents hold `slices` expressions: keep at least that many checks (and the base limit more). */
  reserve(slices: number): void {
    this.room = slices;
  }

  /** `match` (not part of the key) is offered to the core on a miss. */
  check(text: string, options: CheckOptions, match?: MatchHook): CheckResult {
    const key = `${optionsKey(options)}\u0000${text}`;
    const hit = this.entries.get(key);
    if (hit) {
      this.hits++;
      this.entries.delete(key);
      this.entries.set(key, hit);
      return hit;
    }
    this.misses++;
    const withHook: CheckOptions & { match?: MatchHook } = match ? { ...options, match } : options;
    const result = checkExpression(text, withHook);
    this.entries.set(key, result);
    if (this.entries.size > this.limit + this.room) this.entries.delete(this.entries.keys().next().value as string);
    return result;
  }
}

type Listener = (doc: TextDocument) => void;

/**
 * The open documents (full or incremental sync, each change applied with
 * TextDocument.update), their slices (cached per version, patched on edits inside an
 * expression string), and the shared check cache.
 */
export class DocumentStore {
  readonly checks = new CheckCache();
  private readonly docs = new Map<string, TextDocument>();
  private readonly slices = new Map<string, { version: number; kind: DocumentKind; slices: ExpressionSlice[] }>();
  private readonly matchers = new Map<string, IncrementalMatcher>();
  private readonly changeListeners: Listener[] = [];
  private readonly closeListeners: Listener[] = [];

  onDidChangeContent(l: Listener): void {
    this.changeListeners.push(l);
  }

  onDidClose(l: Listener): void {
    this.closeListeners.push(l);
  }

  open(uri: string, languageId: string, version: number, text: string): void {
    const doc = TextDocument.create(uri, languageId, version, text);
    this.docs.set(uri, doc);
    this.slices.delete(uri);
    for (const l of this.changeListeners) l(doc);
  }

  change(uri: string, version: number, changes: readonly TextDocumentContentChangeEvent[]): void {
    const doc = this.docs.get(uri);
    if (!doc) return;
    let cached = this.slices.get(uri);
    if (cached && (cached.version !== doc.version || cached.kind !== 'ruleset')) cached = undefined;
    let slices = cached?.slices;
    // Apply one change at a time: each change's range refers to the text after the previous one.
    for (const c of changes) {
      if (slices && 'range' in c) {
        const start = doc.offsetAt(c.range.start);
        const end = doc.offsetAt(c.range.end);
        slices = patchSlices(slices, start, end, c.text);
      } else slices = undefined;
      TextDocument.update(doc, [c], version);
    }
    if (slices && cached) this.slices.set(uri, { version, kind: cached.kind, slices });
    else this.slices.delete(uri);
    for (const l of this.changeListeners) l(doc);
  }

  close(uri: string): void {
    const doc = this.docs.get(uri);
    this.docs.delete(uri);
    this.slices.delete(uri);
    this.matchers.delete(uri);
    if (doc) for (const l of this.closeListeners) l(doc);
  }

  get(uri: string): TextDocument | undefined {
    return this.docs.get(uri);
  }

  all(): TextDocument[] {
    return [...this.docs.values()];
  }

  /** The expressions of a document (empty when it is not one of ours). */
  /** The check cache keeps room for every expression of the open documents (their slices). */
  private reserveChecks(): void {
    let n = 0;
    for (const s of this.slices.values()) n += s.slices.length;
    this.checks.reserve(n);
  }

  slicesOf(doc: TextDocument, kind: DocumentKind): ExpressionSlice[] {
    const cached = this.slices.get(doc.uri);
    if (cached && cached.version === doc.version && cached.kind === kind) return cached.slices;
    const text = doc.getText();
    const slices = kind === 'expression' ? [wholeTextSlice(text)] : kind === 'terraform' ? terraformSlices(text) : rulesetSlices(text);
    this.slices.set(doc.uri, { version: doc.version, kind, slices });
    this.reserveChecks();
    return slices;
  }

  /**
   * Checks one expression with the document's settings, from the cache when possible.
   * A `.cfrule` document (the expression is the whole text) matches incrementally.
   */
  check(slice: ExpressionSlice, settings: Settings, uri?: string): CheckResult {
    let matcher: IncrementalMatcher | undefined;
    if (uri !== undefined && !slice.inJson && this.docs.has(uri)) {
      matcher = this.matchers.get(uri);
      if (!matcher) this.matchers.set(uri, (matcher = new IncrementalMatcher()));
    }
    return this.checks.check(slice.text, checkOptionsFor(slice, settings), matcher?.match);
  }
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
