/**
 * Finds every rule's `expression` string in a ruleset JSON document and maps offsets
 * inside the decoded expression back to the document, through JSON escapes (`\"`,
 * `\\`, `\n`, `\u00e9`, …), so a diagnostic lands on the right character.
 */
import { parseTree, type Node, type ParseError, printParseErrorCode } from 'jsonc-parser';

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
  /** Maps an offset in `text` (0..text.length) to an offset in the document. */
  readonly toDocument: (offset: number) => number;
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

export function findExpressions(json: string): { regions: ExpressionRegion[]; problems: JsonProblem[] } {
  const errors: ParseError[] = [];
  const root = parseTree(json, errors, { allowTrailingComma: false, disallowComments: true });
  const problems = errors.map((e) => ({ offset: e.offset, length: e.length, message: `invalid JSON: ${printParseErrorCode(e.error)}` }));
  const regions: ExpressionRegion[] = [];
  const rules = root && rulesNode(root);
  rules?.children?.forEach((rule, i) => {
    if (rule.type !== 'object') return;
    let ruleName: string | undefined;
    let expr: Node | undefined;
    for (const p of rule.children ?? []) {
      const key = p.children?.[0]?.value;
      const value = p.children?.[1];
      if (!value) continue;
      if (key === 'expression' && value.type === 'string') expr = value;
      if ((key === 'ref' || key === 'id') && value.type === 'string' && ruleName === undefined) ruleName = value.value;
    }
    if (expr) regions.push(region(json, i, ruleName, expr.offset, expr.length));
  });
  return { regions, problems };
}

/** Decodes a JSON string literal at [offset, offset+length) keeping, per decoded UTF-16 unit, its source offset. */
function region(json: string, rule: number, ruleName: string | undefined, offset: number, length: number): ExpressionRegion {
  const map: number[] = [];
  let text = '';
  const end = offset + length - 1; // closing quote
  for (let i = offset + 1; i < end; ) {
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
    toDocument: (o) => map[Math.max(0, Math.min(o, map.length - 1))],
  };
}
