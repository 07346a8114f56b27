/**
 * Override edits on the text of a `*.ruleset.json`: set the paranoia level or the anomaly
 * score threshold (and action) of the `execute` rule that deploys a scored managed ruleset,
 * through the core's setParanoiaLevel / setScoreThreshold, as minimal text edits
 * (jsonc-parser's modify) that keep the rest of the file — its formatting, key order and
 * other rules — as written. Pure: text in, edits and text out.
 */
import { applyEdits, findNodeAtLocation, getNodeValue, modify, type Edit, type JSONPath } from 'jsonc-parser';
import type { ManagedCatalog } from '../rulesets/catalog';
import { executedManagedRuleset } from '../rulesets/engine';
import type { ExecuteParameters, Rule } from '../rulesets/model';
import { parseRulesetTree, rulesPathOf } from '../rulesets/jsonTree';
import { currentParanoiaLevel, currentThreshold, setParanoiaLevel, setScoreThreshold, type ParanoiaLevel } from './preview';

export interface ExecuteRuleAt {
  /** Index in the rules array. */
  readonly index: number;
  readonly rule: Rule;
  /** JSON path of the rule from the document root. */
  readonly path: JSONPath;
  readonly rulesetId: string;
  readonly rulesetName: string;
  /** The deployed ruleset has an anomaly-score rule (paranoia levels and a threshold apply). */
  readonly scored: boolean;
  readonly level: 0 | ParanoiaLevel;
  readonly threshold?: number;
  readonly action?: string;
}

/** The execute rules of the document that deploy a managed ruleset of the catalog, in order. */
export function managedExecuteRules(text: string, catalog: ManagedCatalog): { rules: ExecuteRuleAt[]; error?: string } {
  const { root, errors } = parseRulesetTree(text);
  if (!root || errors.length > 0) return { rules: [], error: 'the file is not valid JSON; fix it first' };
  const rulesPath = rulesPathOf(root);
  const rulesNode = rulesPath && findNodeAtLocation(root, rulesPath);
  if (!rulesPath || !rulesNode || rulesNode.type !== 'array') return { rules: [], error: 'the file has no "rules" array' };
  const out: ExecuteRuleAt[] = [];
  (rulesNode.children ?? []).forEach((node, index) => {
    if (node.type !== 'object') return;
    const rule = getNodeValue(node) as Rule;
    const m = executedManagedRuleset(rule, catalog);
    if (!m) return;
    const scored = m.ruleset.anomalyRuleId !== undefined;
    const t = scored ? currentThreshold(rule, catalog) : undefined;
    out.push({
      index,
      rule,
      path: [...rulesPath, index],
      rulesetId: m.ruleset.id,
      rulesetName: m.ruleset.name,
      scored,
      level: scored ? currentParanoiaLevel(rule, catalog) : 0,
      ...(t ? { threshold: t.threshold, ...(t.action !== undefined ? { action: t.action } : {}) } : {}),
    });
  });
  return { rules: out };
}

export interface OverrideEditResult {
  /** Edits on the original text (offset/length/content), to apply as one change. */
  readonly edits: readonly Edit[];
  /** The text after the edits. */
  readonly text: string;
  /** The rule that was edited. */
  readonly ruleIndex?: number;
  readonly rule?: Rule;
  /** Why nothing could be edited. */
  readonly error?: string;
}

export interface OverrideEditOptions {
  readonly catalog: ManagedCatalog;
  /** Which execute rule (index in `rules`); default: the first that deploys a scored ruleset. */
  readonly ruleIndex?: number;
  /** Indentation of inserted JSON; default: guessed from the text. */
  readonly tabSize?: number;
  readonly insertSpaces?: boolean;
}

function indentOf(text: string): { tabSize: number; insertSpaces: boolean; eol: string } {
  const eol = text.includes('\r\n') ? '\r\n' : '\n';
  const m = /\n([ \t]+)\S/.exec(text);
  if (m && m[1].startsWith('\t')) return { tabSize: 1, insertSpaces: false, eol };
  return { tabSize: m ? m[1].length : 2, insertSpaces: true, eol };
}

function editExecute(text: string, options: OverrideEditOptions, change: (rule: Rule, at: ExecuteRuleAt) => Rule): OverrideEditResult {
  const found = managedExecuteRules(text, options.catalog);
  if (found.error) return { edits: [], text, error: found.error };
  const target = options.ruleIndex !== undefined ? found.rules.find((r) => r.index === options.ruleIndex) : found.rules.find((r) => r.scored);
  if (!target) {
    return {
      edits: [],
      text,
      error:
        options.ruleIndex !== undefined
          ? `rule ${options.ruleIndex + 1} is not an execute rule deploying a managed ruleset`
          : 'no execute rule in this file deploys a scored managed ruleset (the OWASP-based one); add one, e.g. {"action": "execute", "action_parameters": {"id": "4814384a9e5d4991b9815dcfc25d2f1f"}, "expression": "true"}',
    };
  }
  if (!target.scored) return { edits: [], text, error: `${target.rulesetName} has no anomaly score: paranoia levels and thresholds do not apply to it` };
  const next = change(target.rule, target);
  const overrides = (next.action_parameters as ExecuteParameters | undefined)?.overrides;
  const ind = indentOf(text);
  const formattingOptions = { tabSize: ind.tabSize, insertSpaces: ind.insertSpaces, eol: ind.eol };
  const path = [...target.path, 'action_parameters', 'overrides'];
  const edits = modify(text, path, overrides, { formattingOptions });
  return { edits, text: applyEdits(text, edits), ruleIndex: target.index, rule: next };
}

/** Sets the paranoia level of the scored execute rule's overrides (setParanoiaLevel), as text edits. */
export function setParanoiaLevelInText(text: string, level: ParanoiaLevel, options: OverrideEditOptions): OverrideEditResult {
  return editExecute(text, options, (rule) => setParanoiaLevel(rule, level));
}

/** Sets the anomaly rule's threshold (and action) in the scored execute rule's overrides (setScoreThreshold). */
export function setScoreThresholdInText(text: string, threshold: number, action: string | undefined, options: OverrideEditOptions): OverrideEditResult {
  return editExecute(text, options, (rule) => setScoreThreshold(rule, threshold, action, { catalog: options.catalog }));
}
