/**
 * Wildcard patterns (reference §1.4, `wildcard` / `strict wildcard`, `wildcard_replace`):
 * after string decoding, `*` matches any byte sequence (possibly empty), `\*` is a literal
 * star and `\\` a literal backslash; nothing else is special (`?` is not a metacharacter).
 * Matching is on the whole value; case folding, when asked for, is ASCII-only.
 */
import { asciiLower } from './bytes';
import type { LitError, LitResult } from './literals';

export interface WildcardPattern {
  /** The decoded pattern bytes (binary string), as given. */
  readonly source: string;
  /** The literal pieces between the stars, unescaped; there are parts.length - 1 stars. */
  readonly parts: readonly string[];
  /** parts with ASCII letters lowercased, for case-insensitive matching. */
  readonly folded: readonly string[];
}

const ESCAPE_HINT =
  'In a wildcard only \\* (a literal star) and \\\\ (a literal backslash) are escapes. ' +
  'The string is unescaped first: in a quoted string write "\\\\*" for \\*, or use a raw string r"\\*".';


/**
 * Validates and splits a pattern, with the engine's messages in its order: escape errors
 * first, then the star limit, then a double star.
 *
 * Position N in `… syntax error at position N: …` is the index, in the decoded pattern
 * bytes, of the offending backslash (so `"é\d"` reports position 2: é is two bytes).
 * The engine underlines the whole literal, so the span is [0, literalLength) where
 * literalLength is the length of the literal's source text (default: pattern length).
 */
export function parseWildcard(
  pattern: string,
  opts: { readonly literalLength?: number; readonly starLimit?: number } = {},
): LitResult<WildcardPattern> {
  const end = opts.literalLength ?? pattern.length;
  const err = (message: string, hint?: string): LitError =>
    hint === undefined ? { ok: false, message, start: 0, end, code: 'invalid-wildcard' } : { ok: false, message, start: 0, end, code: 'invalid-wildcard', hint };

  const parts: string[] = [];
  let current = '';
  let previousWasStar = false;
  let doubleStar = false;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '\\') {
      if (i + 1 >= pattern.length) {
        return err(`invalid wildcard: wildcard syntax error at position ${i}: incomplete escape sequence at the end of the wildcard`, ESCAPE_HINT);
      }
      const e = pattern[i + 1];
      if (e !== '*' && e !== '\\') {
        return err(`invalid wildcard: wildcard syntax error at position ${i}: invalid escape sequence \\${e}`, ESCAPE_HINT);
      }
      current += e;
      i++;
      previousWasStar = false;
    } else if (c === '*') {
      if (previousWasStar) doubleStar = true;
      parts.push(current);
      current = '';
      previousWasStar = true;
    } else {
      current += c;
      previousWasStar = false;
    }
  }
  parts.push(current);

  const stars = parts.length - 1;
  const limit = opts.starLimit ?? Infinity;
  if (stars > limit) return err(`wildcard has ${stars} star metacharacters, but the limit is ${limit}`);
  if (doubleStar) return err('wildcard contains a double star', 'A single * already matches any sequence: write one star.');
  return { ok: true, value: { source: pattern, parts, folded: parts.map(asciiLower) } };
}

/**
 * Where each star's match ends up, or undefined when there is no match. A star takes as
 * little as possible (lazy, as the engine captures): each middle piece is placed at its
 * leftmost occurrence, which is the greedy-star algorithm with backtracking to the last
 * star, without the backtracking. Linear-time `indexOf` searches, no exponential case.
 */
function starSpans(p: WildcardPattern, value: string, caseSensitive: boolean): number[] | undefined {
  const parts = caseSensitive ? p.parts : p.folded;
  const v = caseSensitive ? value : asciiLower(value);
  const first = parts[0];
  if (parts.length === 1) return v === first ? [] : undefined;
  const lastPart = parts[parts.length - 1];
  const tailStart = v.length - lastPart.length;
  if (tailStart < first.length || !v.startsWith(first) || !v.endsWith(lastPart)) return undefined;
  // spans holds [start, end) of each star's capture.
  const spans: number[] = [];
  let pos = first.length;
  for (let k = 1; k < parts.length - 1; k++) {
    const at = v.indexOf(parts[k], pos);
    if (at < 0 || at + parts[k].length > tailStart) return undefined;
    spans.push(pos, at);
    pos = at + parts[k].length;
  }
  spans.push(pos, tailStart);
  return spans;
}

/** Whole-value match; `*` matches any byte sequence including the empty one. */
export function matchWildcard(p: WildcardPattern, value: string, caseSensitive: boolean): boolean {
  return starSpans(p, value, caseSensitive) !== undefined;
}

/** What each `*` matched, left to right (lazy), or undefined when the pattern does not match. */
export function wildcardCaptures(p: WildcardPattern, value: string, caseSensitive: boolean): string[] | undefined {
  const spans = starSpans(p, value, caseSensitive);
  if (!spans) return undefined;
  const out: string[] = [];
  for (let k = 0; k < spans.length; k += 2) out.push(value.slice(spans[k], spans[k + 1]));
  return out;
}
