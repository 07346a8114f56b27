/**
 * The expressions inside a document, as slices: each knows its decoded text and maps
 * offsets both ways between the expression and the document, so every feature works on
 * the expression text and positions land on the right character of the document.
 *
 * - A `.cfrule` file is one expression: the whole text.
 * - A ruleset JSON file holds one expression per rule, in each rule's `"expression"`
 *   string; offsets map through JSON escapes (`\"`, `\\`, `\n`, `\u00e9`, surrogate pairs).
 * - A Terraform file holds the rule expressions of its `cloudflare_ruleset`,
 *   `cloudflare_filter` and `cloudflare_firewall_rule` resources; offsets map through HCL
 *   escapes and heredoc indentation.
 *
 * Apart from documents.ts (the open documents) so that the Terraform support, which needs
 * the document store, and the store, which needs Terraform slices, do not import each other.
 */
import { findExpressions, lastAtOrBefore } from '../rulesets/expressions';
import { locate } from '../terraform/locate';

/** One expression inside a document. */
export interface ExpressionSlice {
  /** The decoded expression text. */
  readonly text: string;
  /** Index of the rule in the ruleset (JSON only). */
  readonly rule?: number;
  readonly ruleName?: string;
  /** The ruleset's own `phase` (JSON only), when it has one. */
  readonly phase?: string;
  /** A rate limiting rule's counting expression (JSON and Terraform): the origin's answer may be read. */
  readonly counting?: boolean;
  /** An account's ruleset (JSON `kind` `root` or `custom`). */
  readonly account?: boolean;
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

export function wholeTextSlice(text: string): ExpressionSlice {
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

/** Meta data of a ruleset slice that patches carry along unchanged. */
interface RuleMeta {
  readonly rule: number;
  readonly ruleName?: string;
  readonly phase?: string;
  readonly counting?: boolean;
  readonly account?: boolean;
}

/**
 * An expression inside a JSON string: `offsets[k]` is the document offset of decoded
 * unit k (then of the closing quote), shifted by `shift` (edits before the string move
 * it without copying the table).
 */
class JsonSlice implements ExpressionSlice {
  readonly inJson = true;
  readonly rule: number;
  readonly ruleName?: string;
  readonly phase?: string;
  readonly counting?: boolean;
  readonly account?: boolean;

  constructor(
    readonly text: string,
    readonly offsets: readonly number[],
    readonly shift: number,
    readonly meta: RuleMeta,
  ) {
    this.rule = meta.rule;
    this.ruleName = meta.ruleName;
    this.phase = meta.phase;
    this.counting = meta.counting;
    this.account = meta.account;
  }

  get contentStart(): number {
    return this.offsets[0] + this.shift;
  }

  get contentEnd(): number {
    return this.offsets[this.offsets.length - 1] + this.shift;
  }

  toDocument(offset: number): number {
    return this.offsets[Math.max(0, Math.min(offset, this.offsets.length - 1))] + this.shift;
  }

  fromDocument(docOffset: number): number {
    return lastAtOrBefore(this.offsets, docOffset - this.shift);
  }

  encode(text: string): string {
    return jsonEscape(text);
  }

  moved(delta: number): JsonSlice {
    return delta === 0 ? this : new JsonSlice(this.text, this.offsets, this.shift + delta, this.meta);
  }
}

/** The expression slices of a ruleset JSON text. */
export function rulesetSlices(json: string): ExpressionSlice[] {
  let found: ReturnType<typeof findExpressions>;
  try {
    found = findExpressions(json);
  } catch (e) {
    // JSON nested thousands deep exhausts the parser's stack: a document with no expressions to check, not every feature failing.
    if (e instanceof RangeError) return [];
    throw e;
  }
  return found.regions.map((r) => new JsonSlice(r.text, r.offsets, 0, { rule: r.rule, ruleName: r.ruleName, phase: r.phase, ...(r.counting ? { counting: true } : {}), ...(r.account ? { account: true } : {}) }));
}

/** Characters that change a JSON string's structure when typed (quotes, escapes, controls). */
const STRUCTURAL = /["\\\u0000-\u001f]/;

/**
 * The slices after replacing document offsets [start, end) by `insert`, or undefined
 * when the edit is not confined to whole characters of one expression string (the
 * caller then re-parses the JSON).
 */
export function patchSlices(slices: readonly ExpressionSlice[], start: number, end: number, insert: string): ExpressionSlice[] | undefined {
  if (STRUCTURAL.test(insert)) return undefined;
  const target = sliceAt(slices, start);
  if (!(target instanceof JsonSlice) || end > target.contentEnd) return undefined;
  const i = target.fromDocument(start);
  const j = target.fromDocument(end);
  // Both ends on character boundaries (never inside an escape such as \u00e9).
  if (target.toDocument(i) !== start || target.toDocument(j) !== end) return undefined;
  const delta = insert.length - (end - start);
  const base = target.shift;
  const offsets: number[] = target.offsets.slice(0, i) as number[];
  for (let k = 0; k < insert.length; k++) offsets.push(start - base + k);
  for (let k = j; k < target.offsets.length; k++) offsets.push(target.offsets[k] + delta);
  const patched = new JsonSlice(target.text.slice(0, i) + insert + target.text.slice(j), offsets, base, target.meta);
  return slices.map((s) => (s === target ? patched : s.contentStart > target.contentEnd ? (s as JsonSlice).moved(delta) : s));
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

/** Text inside an HCL quoted string: `\`, `"`, controls escaped, `${`/`%{` doubled. */
export function hclEscape(text: string): string {
  return JSON.stringify(text)
    .slice(1, -1)
    .replace(/([$%])\{/g, '$1$1{');
}

class TerraformSlice implements ExpressionSlice {
  readonly inJson: boolean;
  constructor(
    readonly text: string,
    private readonly offsets: readonly number[],
    private readonly heredoc: boolean,
    readonly rule: number | undefined,
    readonly ruleName: string | undefined,
    readonly phase: string | undefined,
    readonly counting: boolean | undefined,
    readonly account: boolean | undefined,
  ) {
    // A quoted string escapes what is inserted (as a JSON string does); a heredoc takes it as is.
    this.inJson = !heredoc;
  }
  get contentStart(): number {
    return this.offsets[0];
  }
  get contentEnd(): number {
    return this.offsets[this.offsets.length - 1];
  }
  toDocument(offset: number): number {
    return this.offsets[Math.max(0, Math.min(offset, this.offsets.length - 1))];
  }
  fromDocument(docOffset: number): number {
    return lastAtOrBefore(this.offsets, docOffset);
  }
  encode(text: string): string {
    return this.heredoc ? text.replace(/([$%])\{/g, '$1$1{') : hclEscape(text);
  }
}

/** The checkable expressions of a `.tf` text, in document order. */
export function terraformSlices(text: string): ExpressionSlice[] {
  return locate(text)
    .expressions.flatMap((s) =>
      s.literal && s.checkText !== undefined ? [new TerraformSlice(s.checkText, s.literal.offsets, s.literal.heredoc, s.rule ?? undefined, s.ruleName, s.phase, s.counting, s.account)] : [],
    )
    .sort((a, b) => a.contentStart - b.contentStart);
}
