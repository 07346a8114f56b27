/**
 * Quick fixes for ruleset problems (rulesetDiagnostics.ts), computed from the current
 * text's problems (the client's copy of `data` is not trusted):
 *
 * - a misplaced `score_threshold` (ruleset-wide overrides, a category, another rule, the
 *   execute rule itself) or an `action` that replaces the score action of a scored
 *   ruleset -> move them to the rule override of the anomaly-score rule (edited when it
 *   exists, appended otherwise); a category or rule override left with nothing but its
 *   key is removed, and an emptied list with it;
 * - OWASP deployed with no paranoia override -> "Set paranoia level 1" (preferred) or 2,
 *   through preview.ts's setParanoiaLevel;
 * - a rule without `ref` -> add one (the rule's id, else a slug of its description);
 * - a problem with suggestions (unknown category, action, field, version, product
 *   spelling) -> "Change to `x`".
 *
 * Edits keep the user's layout: removals touch only the removed text; new JSON is
 * indented like the document (its indentation unit and line ends are detected). The
 * whole change is one text edit over the span that differs.
 */
import { applyEdits, findNodeAtLocation, getNodeValue, modify, type FormattingOptions, type JSONPath, type Node } from 'jsonc-parser';
import { CodeActionKind, type CodeAction, type CodeActionContext, type Range as LspRange, type TextEdit } from 'vscode-languageserver/node';
import type { TextDocument } from 'vscode-languageserver-textdocument';
import { setParanoiaLevel, type ParanoiaLevel } from '../managed/preview';
import type { CategoryOverride, Rule } from '../rulesets/model';
import { OVERRIDE_ACTIONS } from '../rulesets/actions';
import { parseRulesetTree, propsOf } from '../rulesets/jsonTree';
import type { MisplacedData, RulesetProblem } from '../rulesets/validate';
import type { Analysed, DocumentStore } from './documents';
import { rulesetProblems, toRulesetDiagnostic } from './rulesetDiagnostics';

/** The document's indentation and line ends, for new JSON. */
export function formattingOf(text: string): FormattingOptions {
  const eol = text.includes('\r\n') ? '\r\n' : '\n';
  if (/\n\t+\S/.test(text)) return { insertSpaces: false, tabSize: 4, eol };
  let unit = Infinity;
  for (const m of text.matchAll(/\n( +)\S/g)) unit = Math.min(unit, m[1].length);
  return { insertSpaces: true, tabSize: unit === Infinity ? 2 : unit, eol };
}

/** One edit replacing the span where `before` and `after` differ. */
function diffEdit(doc: TextDocument, before: string, after: string): TextEdit {
  let p = 0;
  const max = Math.min(before.length, after.length);
  while (p < max && before.charCodeAt(p) === after.charCodeAt(p)) p++;
  let q = 0;
  while (q < max - p && before.charCodeAt(before.length - 1 - q) === after.charCodeAt(after.length - 1 - q)) q++;
  return { range: { start: doc.positionAt(p), end: doc.positionAt(before.length - q) }, newText: after.slice(p, after.length - q) };
}

const tree = (t: string) => parseRulesetTree(t).root;
const at = (t: string, path: JSONPath): Node | undefined => {
  const root = tree(t);
  return root && findNodeAtLocation(root, path);
};

/** The node holding a path's value in its parent: the property for an object member, else the value. */
function memberAt(t: string, path: JSONPath): Node | undefined {
  const node = at(t, path);
  return node?.parent?.type === 'property' ? node.parent : node;
}

/**
 * Removes the member at `path` with one separator: the comma and space up to the next
 * member (so that one takes its place and indentation), else the ones after the previous
 * member; an only member leaves `{}` / `[]`.
 */
export function removeMember(t: string, path: JSONPath): string {
  const member = memberAt(t, path);
  const container = member?.parent;
  if (!member || !container?.children) return t;
  const i = container.children.indexOf(member);
  const next = container.children[i + 1];
  const prev = container.children[i - 1];
  if (next) return t.slice(0, member.offset) + t.slice(next.offset);
  if (prev) return t.slice(0, prev.offset + prev.length) + t.slice(member.offset + member.length);
  return t.slice(0, container.offset + 1) + t.slice(container.offset + container.length - 1);
}

/** JSON on one line, spaced as people write it: `{ "id": "x", "enabled": false }`, `[1, 2]`. */
export function oneLine(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(oneLine).join(', ')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value).filter(([, v]) => v !== undefined);
    return entries.length ? `{ ${entries.map(([k, v]) => `${JSON.stringify(k)}: ${oneLine(v)}`).join(', ')} }` : '{}';
  }
  return JSON.stringify(value);
}

const oneLineNode = (t: string, n: Node) => !t.slice(n.offset, n.offset + n.length).includes('\n');

/**
 * Sets the value at `path` (whose last segment is a key, or -1 to append to an array),
 * creating missing containers. Where the new member goes:
 *   - an existing key: its value is replaced;
 *   - a one-line container: on the same line (`, "key": { "a": 1 }`);
 *   - a multi-line object with members: after the last, on a new line indented like it
 *     (a new object or list laid out over lines by jsonc-parser's formatter);
 *   - otherwise (an empty multi-line container): jsonc-parser's formatted insertion.
 */
export function setPath(t: string, path: JSONPath, value: unknown, format: FormattingOptions): string {
  let k = path.length - 1;
  let container = at(t, path.slice(0, k));
  while (!container && k > 0) container = at(t, path.slice(0, --k));
  if (!container) return t;
  for (let j = path.length - 1; j > k; j--) {
    const seg = path[j];
    value = typeof seg === 'number' ? [value] : { [seg]: value };
  }
  const seg = path[k];
  const members = container.children ?? [];
  if (container.type === 'object' && typeof seg === 'string') {
    const existing = propsOf(container).get(seg)?.value;
    if (existing) return t.slice(0, existing.offset) + oneLine(value) + t.slice(existing.offset + existing.length);
    const member = `${JSON.stringify(seg)}: ${oneLine(value)}`;
    const last = members[members.length - 1];
    if (!last) {
      if (!oneLineNode(t, container)) return applyEdits(t, modify(t, path.slice(0, k + 1), value, { formattingOptions: format }));
      return `${t.slice(0, container.offset + 1)}${member}${t.slice(container.offset + 1)}`;
    }
    const end = last.offset + last.length;
    if (oneLineNode(t, container)) return `${t.slice(0, end)}, ${member}${t.slice(end)}`;
    // A new object or list in a multi-line object: laid out over lines, as the document is.
    if (typeof value === 'object' && value !== null) return applyEdits(t, modify(t, path.slice(0, k + 1), value, { formattingOptions: format }));
    const lineStart = t.lastIndexOf('\n', last.offset - 1) + 1;
    const indent = /^[ \t]*/.exec(t.slice(lineStart))![0];
    return `${t.slice(0, end)},${format.eol ?? '\n'}${indent}${member}${t.slice(end)}`;
  }
  if (container.type === 'array' && seg === -1) {
    const last = members[members.length - 1];
    if (oneLineNode(t, container)) {
      const end = last ? last.offset + last.length : container.offset + 1;
      return `${t.slice(0, end)}${last ? ', ' : ''}${oneLine(value)}${t.slice(end)}`;
    }
    return applyEdits(t, modify(t, path.slice(0, k + 1), value, { formattingOptions: format, isArrayInsertion: true }));
  }
  return t;
}

/** Sets `key` of the object at `path` (see setPath). */
export function setMember(t: string, path: JSONPath, key: string, value: unknown, format: FormattingOptions): string {
  return setPath(t, [...path, key], value, format);
}

/** Appends `value` to the array at `path`, created when missing (see setPath). */
export function appendItem(t: string, path: JSONPath, value: unknown, format: FormattingOptions): string {
  return setPath(t, [...path, -1], value, format);
}

/** The text with the misplaced properties moved to the anomaly rule's override, or undefined. */
export function moveToAnomalyRule(text: string, data: MisplacedData): string | undefined {
  const format = formattingOf(text);
  const values: Record<string, unknown> = {};
  for (const prop of data.properties) {
    const node = at(text, [...data.from, prop]);
    if (!node) return undefined;
    const value = getNodeValue(node);
    if (prop === 'score_threshold' && !Number.isInteger(value)) return undefined;
    // An action the anomaly rule cannot take stays where it is.
    if (prop === 'action' && !(OVERRIDE_ACTIONS as readonly unknown[]).includes(value)) continue;
    values[prop] = value;
  }
  if (Object.keys(values).length === 0) return undefined;
  let t = text;
  for (const prop of Object.keys(values)) t = removeMember(t, [...data.from, prop]);
  if (data.fromKind === 'category' || data.fromKind === 'rule-override') {
    const obj = at(t, data.from);
    if (obj?.type === 'object' && (obj.children ?? []).length <= 1) {
      t = removeMember(t, data.from);
      const list = data.from.slice(0, -1);
      const arr = at(t, list);
      if (arr?.type === 'array' && (arr.children ?? []).length === 0) t = removeMember(t, list);
    }
  }
  const overrides = [...data.paramsPath, 'overrides'];
  const rules = at(t, [...overrides, 'rules']);
  if (rules && rules.type !== 'array') return undefined;
  const index = (rules?.children ?? []).map((r) => propsOf(r).get('id')?.value?.value).lastIndexOf(data.anomalyRuleId);
  if (index >= 0) {
    for (const [prop, value] of Object.entries(values)) t = setMember(t, [...overrides, 'rules', index], prop, value, format);
  } else {
    t = appendItem(t, [...overrides, 'rules'], { id: data.anomalyRuleId, ...values }, format);
  }
  return t;
}

/** The text with the execute rule at `paramsPath` set to paranoia level `level`, or undefined. */
export function withParanoiaLevel(text: string, paramsPath: JSONPath, level: ParanoiaLevel): string | undefined {
  const ruleNode = at(text, paramsPath.slice(0, -1));
  const rule = ruleNode && (getNodeValue(ruleNode) as Rule);
  const overrides = (rule?.action_parameters as { overrides?: { categories?: unknown } } | undefined)?.overrides;
  const old = overrides?.categories;
  if (!rule || (old !== undefined && !(Array.isArray(old) && old.every((c) => typeof c === 'object' && c !== null)))) return undefined;
  const next = (setParanoiaLevel(rule, level).action_parameters as { overrides?: { categories?: CategoryOverride[] } }).overrides?.categories ?? [];
  const before = (old ?? []) as CategoryOverride[];
  const format = { formattingOptions: formattingOf(text) };
  const path = [...paramsPath, 'overrides', 'categories'];
  const appended = next.length >= before.length && before.every((c, i) => JSON.stringify(c) === JSON.stringify(next[i]));
  if (!appended) return applyEdits(text, modify(text, path, next, format));
  let t = text;
  for (const c of next.slice(before.length)) t = appendItem(t, path, c, format.formattingOptions);
  return t;
}

/** The text with `"ref": ref` as the first property of the rule at `path`, in the rule's layout. */
export function withRef(text: string, path: JSONPath, ref: string): string | undefined {
  const rule = at(text, path);
  if (rule?.type !== 'object') return undefined;
  const prop = `"ref": ${JSON.stringify(ref)}`;
  const first = rule.children?.[0];
  if (!first) return `${text.slice(0, rule.offset + 1)}${prop}${text.slice(rule.offset + 1)}`;
  const lineStart = text.lastIndexOf('\n', first.offset - 1) + 1;
  const sameLine = lineStart <= rule.offset;
  const indent = text.slice(lineStart, first.offset);
  const insert = sameLine ? `${prop}, ` : `${prop},${text.includes('\r\n') ? '\r\n' : '\n'}${indent}`;
  return text.slice(0, first.offset) + insert + text.slice(first.offset);
}

const SUGGESTING = new Set(['unknown-category', 'unknown-action', 'invalid-override-action', 'unknown-field', 'invalid-action-parameters', 'unknown-ruleset-version']);

function kindAllowed(kind: string, only: readonly string[] | undefined): boolean {
  return !only || only.some((o) => kind === o || kind.startsWith(`${o}.`));
}

export function rulesetCodeActions(store: DocumentStore, a: Analysed, range: LspRange, context: CodeActionContext): CodeAction[] {
  if (a.kind !== 'ruleset' || !kindAllowed(CodeActionKind.QuickFix, context.only)) return [];
  const from = a.doc.offsetAt(range.start);
  const to = a.doc.offsetAt(range.end);
  const text = a.doc.getText();
  const out: CodeAction[] = [];
  const seen = new Set<string>();
  const action = (title: string, p: RulesetProblem, after: string | undefined, preferred = false) => {
    if (after === undefined || after === text) return;
    const edit = diffEdit(a.doc, text, after);
    const key = `${title}\u0000${JSON.stringify(edit)}`;
    if (seen.has(key)) return;
    seen.add(key);
    const ca: CodeAction = { title, kind: CodeActionKind.QuickFix, diagnostics: [toRulesetDiagnostic(a.doc, p)], edit: { changes: { [a.doc.uri]: [edit] } } };
    if (preferred) ca.isPreferred = true;
    out.push(ca);
  };
  for (const p of rulesetProblems(store, a)) {
    if (!(p.start <= to && from <= p.end)) continue;
    const data = p.data ?? {};
    switch (p.code) {
      case 'misplaced-score-threshold':
      case 'misplaced-override-action': {
        if (typeof data.anomalyRuleId !== 'string') break;
        const d = data as unknown as MisplacedData;
        const what = d.properties.map((x) => (x === 'action' ? 'the action' : 'score_threshold')).join(' and ');
        action(`Move ${what} to the anomaly-score rule's override`, p, moveToAnomalyRule(text, d), true);
        break;
      }
      case 'owasp-all-paranoia-levels': {
        const path = data.paramsPath as JSONPath | undefined;
        if (!Array.isArray(path)) break;
        action('Set paranoia level 1 (disable PL2–PL4)', p, withParanoiaLevel(text, path, 1), true);
        action('Set paranoia level 2 (disable PL3–PL4)', p, withParanoiaLevel(text, path, 2));
        break;
      }
      case 'missing-ref':
        if (Array.isArray(data.path) && typeof data.ref === 'string') action(`Add "ref": "${data.ref}"`, p, withRef(text, data.path as JSONPath, data.ref));
        break;
      default:
        if (SUGGESTING.has(p.code) && Array.isArray(data.suggestions)) {
          const list = data.suggestions.filter((s): s is string => typeof s === 'string');
          for (const s of list) action(`Change to \`${s}\``, p, text.slice(0, p.start) + JSON.stringify(s) + text.slice(p.end), list.length === 1);
        }
    }
  }
  return out;
}
