/**
 * The JSON tree of a ruleset document (jsonc-parser's) and where its parts are: the rules
 * array, the ruleset object, an object's properties. Shared by the validator, the CLI's
 * check and the editor's diagnostics, lenses, completion and code actions.
 */
import { parseTree, type JSONPath, type Node, type ParseError } from 'jsonc-parser';

export interface Prop {
  readonly key: Node;
  readonly value?: Node;
  /** The property node (key and value). */
  readonly node: Node;
}

/** The properties of an object node (the first of duplicated keys). */
export function propsOf(obj: Node | undefined): Map<string, Prop> {
  const out = new Map<string, Prop>();
  if (obj?.type !== 'object') return out;
  for (const p of obj.children ?? []) {
    const key = p.children?.[0];
    if (!key || typeof key.value !== 'string' || out.has(key.value)) continue;
    out.set(key.value, { key, value: p.children?.[1], node: p });
  }
  return out;
}

/** The path to the rules array: `rules`, `result.rules`, or the root when it is an array. */
export function rulesPathOf(root: Node | undefined): JSONPath | undefined {
  if (!root) return undefined;
  if (root.type === 'array') return [];
  const p = propsOf(root);
  if (p.has('rules') || !p.has('result')) return ['rules'];
  return p.get('result')?.value?.type === 'object' ? ['result', 'rules'] : undefined;
}

/** The node of the ruleset object (the root, or `result`), if the document has one. */
export function rulesetNodeOf(root: Node | undefined): Node | undefined {
  if (root?.type !== 'object') return undefined;
  const p = propsOf(root);
  if (!p.has('rules') && p.has('result')) {
    const r = p.get('result')?.value;
    return r?.type === 'object' ? r : undefined;
  }
  return root;
}

export function parseRulesetTree(json: string): { root?: Node; errors: ParseError[] } {
  const errors: ParseError[] = [];
  const root = parseTree(json, errors, { disallowComments: true, allowTrailingComma: false });
  return { root, errors };
}
