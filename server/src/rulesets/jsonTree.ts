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

/**
 * The tree of an already decoded JSON value, shaped as parseTree's (object → property →
 * key and value, with parents), for a caller that holds the value and not its text: the
 * rules service validates each rule a write brings, and printing it only to parse it
 * again was a sixth of that work. Offsets are positions in document order, not
 * characters: a node's children lie inside its range, so findNodeAtOffset and
 * getNodePath work, and problems sort as they would in the text. For values decoded from
 * JSON: `undefined` members are left out and array holes read as null, as JSON.stringify
 * has them; functions, BigInts or dates are not JSON and are not mapped.
 */
export function valueTree(value: unknown): Node {
  type Built = { -readonly [K in keyof Node]: Node[K] } & { children?: Node[] };
  let next = 0;
  const build = (v: unknown, parent: Node | undefined): Node => {
    const node: Built = { type: 'null', value: null, offset: next++, length: 1, parent };
    if (Array.isArray(v)) {
      node.type = 'array';
      node.value = undefined;
      // Array.from visits holes too (map would leave them), as JSON.stringify prints them: null.
      node.children = Array.from(v, (item) => build(item ?? null, node));
    } else if (v !== null && typeof v === 'object') {
      node.type = 'object';
      node.value = undefined;
      const children: Node[] = (node.children = []);
      for (const [k, item] of Object.entries(v)) {
        if (item === undefined) continue;
        // A property starts where its key does, as in text: its offset finds the key.
        const prop: Built = { type: 'property', offset: next, length: 1, parent: node, children: [] };
        prop.children!.push({ type: 'string', value: k, offset: next++, length: 1, parent: prop }, build(item, prop));
        prop.length = next - prop.offset;
        children.push(prop);
      }
    } else if (v !== null) {
      node.type = typeof v === 'string' ? 'string' : typeof v === 'number' ? 'number' : 'boolean';
      node.value = v;
    }
    node.length = next - node.offset;
    return node;
  };
  return build(value, undefined);
}
