/**
 * Finds every rule's `expression` string in a ruleset JSON document and maps offsets
 * inside the decoded expression back to the document, through JSON escapes (`\"`,
 * `\\`, `\n`, `\u00e9`, …), so a diagnostic lands on the right character.
 */
import { parseTree, type Node, type ParseError } from 'jsonc-parser';
import { jsonErrorText } from './jsonErrors';
import { isAccountKind } from './model';

export interface ExpressionRegion {
  /** Index of the rule in `rules`. */
  readonly rule: number;
  /** The rule's `ref` or `id`, when present (for messages). */
  readonly ruleName?: string;
  /** The decoded expression text. */
  readonly text: string;
  /** Document offset of the string's opening quote and just past its closing quote. */
  readonly start: number;
  readonly end: number;
  /** The ruleset's `phase` (the body's, or `result.phase` of an API response), when given. */
  readonly phase?: string;
  /** The rule's `ratelimit.counting_expression` (not blank), not its `expression`: it may read the origin's answer. */
  readonly counting?: boolean;
  /** The ruleset is an account's (its `kind` is `root` or `custom`): its rate limiting rules read neither the answer nor lists. */
  readonly account?: boolean;
  /**
   * The document offset of each decoded UTF-16 unit of `text`, then of the closing
   * quote (`text.length + 1` entries, strictly increasing): the table behind
   * `toDocument`/`fromDocument`, for callers that patch a region after an edit.
   */
  readonly offsets: readonly number[];
  /** Maps an offset in `text` (0..text.length) to an offset in the document. */
  readonly toDocument: (offset: number) => number;
  /**
   * Maps a document offset back to an offset in `text`. An offset inside an escape
   * sequence (`\u00e9`) maps to the character it encodes; offsets outside the string's
   * content are clamped to 0 or `text.length`.
   */
  readonly fromDocument: (docOffset: number) => number;
}

export interface JsonProblem {
  readonly offset: number;
  readonly length: number;
  readonly message: string;
}

/** The rules array of a ruleset body, an API response (`result.rules`), or a bare array of rules. */
function rulesNode(root: Node): Node | undefined {
  if (root.type === 'array') return root;
  if (root.type !== 'object') return undefined;
  const prop = (n: Node, key: string) => n.children?.find((p) => p.children?.[0]?.value === key)?.children?.[1];
  const direct = prop(root, 'rules');
  if (direct?.type === 'array') return direct;
  const result = prop(root, 'result');
  const nested = result && result.type === 'object' ? prop(result, 'rules') : undefined;
  return nested?.type === 'array' ? nested : undefined;
}

/** The ruleset's phase: `phase` of the body, or `result.phase` of an API response (likewise its `kind`). */
function phaseOf(root: Node, key = 'phase'): string | undefined {
  if (root.type !== 'object') return undefined;
  const prop = (n: Node, key: string) => n.children?.find((p) => p.children?.[0]?.value === key)?.children?.[1];
  const direct = prop(root, key);
  if (direct?.type === 'string') return direct.value;
  const result = prop(root, 'result');
  const nested = result && result.type === 'object' ? prop(result, key) : undefined;
  return nested?.type === 'string' ? nested.value : undefined;
}

export function findExpressions(json: string): { regions: ExpressionRegion[]; problems: JsonProblem[]; phase?: string } {
  const errors: ParseError[] = [];
  const root = parseTree(json, errors, { allowTrailingComma: false, disallowComments: true });
  const problems = errors.map((e) => ({ offset: e.offset, length: e.length, message: `invalid JSON: ${jsonErrorText(e.error)}` }));
  const regions: ExpressionRegion[] = [];
  const rules = root && rulesNode(root);
  const phase = root && phaseOf(root);
  const kind = root && phaseOf(root, 'kind');
  const account = isAccountKind(kind) ? { account: true } : {};
  rules?.children?.forEach((rule, i) => {
    if (rule.type !== 'object') return;
    let ruleName: string | undefined;
    let expr: Node | undefined;
    let counting: Node | undefined;
    for (const p of rule.children ?? []) {
      const key = p.children?.[0]?.value;
      const value = p.children?.[1];
      if (!value) continue;
      if (key === 'expression' && value.type === 'string') expr = value;
      if (key === 'ratelimit' && value.type === 'object') counting = countingExpression(value);
      if ((key === 'ref' || key === 'id') && value.type === 'string' && ruleName === undefined) ruleName = value.value;
    }
    if (expr) regions.push({ ...region(json, i, ruleName, expr.offset, expr.length, phase), ...account });
    if (counting) regions.push({ ...region(json, i, ruleName, counting.offset, counting.length, phase), counting: true, ...account });
  });
  // In document order (the editor finds the one under the cursor by a binary search): a rule may put its ratelimit before its expression.
  regions.sort((a, b) => a.start - b.start);
  return { regions, problems, phase };
}

/** A `ratelimit` object's `counting_expression` string, unless blank (blank is the rule's own expression). */
function countingExpression(ratelimit: Node): Node | undefined {
  // The last one, as the API reads a key given twice.
  const p = ratelimit.children?.filter((c) => c.children?.[0]?.value === 'counting_expression').at(-1);
  const value = p?.children?.[1];
  return value?.type === 'string' && typeof value.value === 'string' && value.value.trim() !== '' ? value : undefined;
}

/** Decodes a JSON string literal at [offset, offset+length) keeping, per decoded UTF-16 unit, its source offset. */
function region(json: string, rule: number, ruleName: string | undefined, offset: number, length: number, phase?: string): ExpressionRegion {
  const map: number[] = [];
  let text = '';
  const end = offset + length - 1; // closing quote
  // Fast path: most expressions have no escape at all.
  const raw = json.slice(offset + 1, end);
  const plain = !raw.includes('\\');
  if (plain) {
    text = raw;
    for (let i = offset + 1; i < end; i++) map.push(i);
  }
  for (let i = plain ? end : offset + 1; i < end; ) {
    const c = json[i];
    if (c !== '\\') {
      map.push(i);
      text += c;
      i++;
      continue;
    }
    const e = json[i + 1];
    if (e === 'u') {
      map.push(i);
      text += String.fromCharCode(parseInt(json.slice(i + 2, i + 6), 16));
      i += 6;
      continue;
    }
    map.push(i);
    text += ({ n: '\n', r: '\r', t: '\t', b: '\b', f: '\f' } as Record<string, string>)[e] ?? e;
    i += 2;
  }
  map.push(end);
  return {
    rule,
    ruleName,
    text,
    start: offset,
    end: offset + length,
    phase,
    offsets: map,
    toDocument: (o) => map[Math.max(0, Math.min(o, map.length - 1))],
    fromDocument: (d) => lastAtOrBefore(map, d),
  };
}

/**
 * Maps a document offset back into an expression: the index of the last unit whose
 * source starts at or before `d` (`map` is strictly increasing), clamped to the ends.
 */
export function lastAtOrBefore(map: readonly number[], d: number): number {
  if (d <= map[0]) return 0;
  if (d >= map[map.length - 1]) return map.length - 1;
  let lo = 0;
  let hi = map.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (map[mid] <= d) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}
