/**
 * Names the workspace already uses, offered by completion: list names (`$office`) and
 * map keys per map field (`http.request.headers["x-api-key"]`), gathered from every
 * open document's expressions. (Sample requests add keys once they exist.) These feed
 * completion only; the checker's unknown-list warning needs the account's real lists.
 */
import * as A from '../language/ast';
import { decodeMapKey } from '../language/literals';
import { binaryToUtf8 } from '../language/bytes';
import { parseExpression } from '../language/parse';

export interface Names {
  readonly lists: readonly string[];
  /** map field -> keys seen */
  readonly keys: Readonly<Record<string, readonly string[]>>;
}

const EMPTY: Names = { lists: [], keys: {} };

/** Names used by one expression's syntax tree. */
export function namesIn(ast: A.Expr): Names {
  const lists = new Set<string>();
  const keys = new Map<string, Set<string>>();
  for (const n of A.nodesOf(ast)) {
    if (n.kind === 'list') lists.add(n.name);
    if (n.kind !== 'index' || n.target.kind !== 'field' || n.key.kind !== 'key' || n.key.literal.form !== 'quoted') continue;
    const k = decodeMapKey(n.key.literal.text);
    const text = k.ok ? binaryToUtf8(k.value) : undefined;
    if (text === undefined) continue;
    const set = keys.get(n.target.name) ?? new Set<string>();
    keys.set(n.target.name, set.add(text));
  }
  return { lists: [...lists], keys: Object.fromEntries([...keys].map(([f, s]) => [f, [...s]])) };
}

/** Per-expression names, cached by text so that a keystroke re-reads only what changed. */
export class WorkspaceNames {
  private readonly cache = new Map<string, Names>();

  constructor(private readonly limit = 5000) {}

  private of(text: string): Names {
    let names = this.cache.get(text);
    if (!names) {
      const ast = parseExpression(text).ast;
      names = ast ? namesIn(ast) : EMPTY;
      this.cache.set(text, names);
      if (this.cache.size > this.limit) this.cache.delete(this.cache.keys().next().value as string);
    }
    return names;
  }

  /** The union over the given expression texts. */
  collect(texts: Iterable<string>): Names {
    const lists = new Set<string>();
    const keys = new Map<string, Set<string>>();
    for (const t of texts) {
      const n = this.of(t);
      for (const l of n.lists) lists.add(l);
      for (const [field, ks] of Object.entries(n.keys)) {
        const set = keys.get(field) ?? new Set<string>();
        for (const k of ks) set.add(k);
        keys.set(field, set);
      }
    }
    return { lists: [...lists].sort(), keys: Object.fromEntries([...keys].map(([f, s]) => [f, [...s].sort()])) };
  }
}
