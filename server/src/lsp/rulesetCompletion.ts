/**
 * Completion in the ruleset JSON itself (expressions have their own, in embedded.ts):
 *
 * - `"category": "|"` in an execute rule's overrides: the tags of the deployed ruleset
 *   version, with how many rules carry each;
 * - `"id": "|"` in a rule override: the deployed version's rule ids, shown (and filtered)
 *   by description, with tags and default action;
 * - `"id": "|"` in an execute rule's action_parameters: the managed rulesets, and
 *   `"version"`: `latest` and the versions;
 * - `"action": "|"` of a rule: the actions valid for the ruleset's phase and kind; in
 *   overrides: the override actions;
 * - in a skip rule: rule ids under `"rules": { "<ruleset id>": [|] }`, ruleset ids in
 *   `"rulesets"`, and `"products"`.
 *
 * Inside a string the item replaces the string's content; after `"key": ` it inserts a
 * quoted string.
 */
import { findNodeAtLocation, getLocation, type JSONPath, type Node } from 'jsonc-parser';
import { CompletionItemKind, MarkupKind, type CompletionItem, type CompletionList, type Position } from 'vscode-languageserver/node';
import { findManagedRuleset, paranoiaLevelOf, rulesetVersion, tagsOf, type ManagedRule, type ManagedRuleset } from '../rulesets/catalog';
import { ACTIONS, SKIP_PRODUCTS } from '../rulesets/model';
import { ACTION_DOCS, actionsFor, OVERRIDE_ACTIONS } from '../rulesets/actions';
import { parseRulesetTree, rulesPathOf } from '../rulesets/jsonTree';
import { rulesetContext } from '../rulesets/validate';
import type { Analysed } from './documents';
import { executeRulesOf } from './executeLens';
import { managedRuleHover } from './rulesetHover';
import { CATALOG } from './rulesetDiagnostics';

interface Candidate {
  readonly label: string;
  /** The string value inserted. */
  readonly value: string;
  readonly kind: CompletionItemKind;
  readonly detail?: string;
  readonly description?: string;
  readonly documentation?: string;
  readonly filterText?: string;
}

const escape = (s: string) => JSON.stringify(s).slice(1, -1);

function ruleCandidates(ruleset: ManagedRuleset, rules: readonly ManagedRule[]): Candidate[] {
  return rules.map((r) => {
    const pl = paranoiaLevelOf(r);
    return {
      label: r.description,
      value: r.id,
      kind: CompletionItemKind.Reference,
      detail: r.id,
      description: [pl !== undefined ? `PL${pl}` : undefined, r.action === 'score' ? undefined : r.action, r.enabled ? undefined : 'off'].filter(Boolean).join(' · ') || undefined,
      documentation: managedRuleHover(r, ruleset),
      filterText: `${r.description} ${r.id}`,
    };
  });
}

function candidatesAt(a: Analysed, rest: readonly (string | number)[], root: Node | undefined, rulesPath: JSONPath): Candidate[] {
  const index = rest[0];
  if (typeof index !== 'number') return [];
  const tail = rest.slice(1).map((s) => (typeof s === 'number' ? '#' : s)).join('/');
  const execute = () => executeRulesOf(root, CATALOG).find((e) => e.index === index);
  switch (tail) {
    case 'action': {
      const ctx = rulesetContext(a.doc.getText(), { catalog: CATALOG, phase: a.settings.phase });
      const allowed = actionsFor(ctx.phase, ctx.kind) ?? ACTIONS;
      return allowed.map((x) => ({ label: x, value: x, kind: CompletionItemKind.EnumMember, documentation: ACTION_DOCS[x] }));
    }
    case 'action_parameters/overrides/action':
    case 'action_parameters/overrides/categories/#/action':
    case 'action_parameters/overrides/rules/#/action':
      return OVERRIDE_ACTIONS.map((x) => ({ label: x, value: x, kind: CompletionItemKind.EnumMember, documentation: ACTION_DOCS[x] }));
    case 'action_parameters/id':
      return CATALOG.rulesets.map((r) => ({ label: r.name, value: r.id, kind: CompletionItemKind.Module, detail: r.id, documentation: r.description, filterText: `${r.name} ${r.id}` }));
    case 'action_parameters/version': {
      // The version being typed is not one yet: find the ruleset by its id alone.
      const id = root && findNodeAtLocation(root, [...rulesPath, index, 'action_parameters', 'id'])?.value;
      const ruleset = typeof id === 'string' ? findManagedRuleset(CATALOG, id) : undefined;
      if (!ruleset) return [];
      return [{ label: 'latest', value: 'latest', kind: CompletionItemKind.Constant, detail: `version ${ruleset.versions[ruleset.versions.length - 1].version}` }].concat(
        [...ruleset.versions].reverse().map((v) => ({ label: v.version, value: v.version, kind: CompletionItemKind.Constant, detail: v.last_updated.slice(0, 10) })),
      );
    }
    case 'action_parameters/overrides/categories/#/category': {
      const e = execute();
      if (!e) return [];
      return tagsOf(e.ruleset, e.version.version).map((t) => ({
        label: t.tag,
        value: t.tag,
        kind: CompletionItemKind.EnumMember,
        description: `${t.count} rule${t.count === 1 ? '' : 's'}`,
        detail: `${t.count} rule${t.count === 1 ? '' : 's'} of ${e.ruleset.name} (${t.enabled} on by default)`,
      }));
    }
    case 'action_parameters/overrides/rules/#/id': {
      const e = execute();
      return e ? ruleCandidates(e.ruleset, e.version.rules) : [];
    }
    case 'action_parameters/rulesets/#':
      return CATALOG.rulesets.map((r) => ({ label: r.name, value: r.id, kind: CompletionItemKind.Module, detail: r.id, filterText: `${r.name} ${r.id}` }));
    case 'action_parameters/products/#':
      return SKIP_PRODUCTS.map((x) => ({ label: x, value: x, kind: CompletionItemKind.EnumMember }));
    default:
      break;
  }
  // `"rules": { "<ruleset id>": ["|"] }` of a skip rule.
  if (rest.length === 5 && rest[1] === 'action_parameters' && rest[2] === 'rules' && typeof rest[3] === 'string' && typeof rest[4] === 'number') {
    const ruleset = findManagedRuleset(CATALOG, rest[3]);
    const version = ruleset && rulesetVersion(ruleset);
    return ruleset && version ? ruleCandidates(ruleset, version.rules) : [];
  }
  return [];
}

export function rulesetCompletion(a: Analysed, position: Position): CompletionList | null {
  if (a.kind !== 'ruleset') return null;
  const text = a.doc.getText();
  const { root } = parseRulesetTree(text);
  const rulesPath = rulesPathOf(root);
  if (!rulesPath) return null;
  const offset = a.doc.offsetAt(position);
  const loc = getLocation(text, offset);
  if (loc.isAtPropertyKey) return null;
  const path = loc.path;
  if (path.length <= rulesPath.length || !rulesPath.every((s, i) => path[i] === s)) return null;
  const prev = loc.previousNode;
  // Inside a string value, or right after `"key": ` / `[` with no value yet.
  let start = offset;
  let end = offset;
  let quote = true;
  if (prev) {
    if (prev.type !== 'string' || offset <= prev.offset || offset > prev.offset + prev.length) return null;
    const closed = prev.length >= 2 && text[prev.offset + prev.length - 1] === '"';
    if (closed && offset === prev.offset + prev.length) return null;
    start = prev.offset + 1;
    end = closed ? prev.offset + prev.length - 1 : prev.offset + prev.length;
    quote = false;
  }
  const candidates = candidatesAt(a, path.slice(rulesPath.length), root, rulesPath);
  if (candidates.length === 0) return null;
  const range = { start: a.doc.positionAt(start), end: a.doc.positionAt(end) };
  const items: CompletionItem[] = candidates.map((c, i) => {
    const item: CompletionItem = {
      label: c.label,
      kind: c.kind,
      textEdit: { range, newText: quote ? JSON.stringify(c.value) : escape(c.value) },
      sortText: String(i).padStart(5, '0'),
    };
    if (c.detail) item.detail = c.detail;
    if (c.description) item.labelDetails = { description: c.description };
    if (c.documentation) item.documentation = { kind: MarkupKind.Markdown, value: c.documentation };
    const filter = c.filterText ?? (c.label === c.value ? undefined : `${c.label} ${c.value}`);
    if (filter) item.filterText = quote ? `"${filter}` : filter;
    else if (quote) item.filterText = `"${c.label}`;
    return item;
  });
  return { isIncomplete: false, items };
}
