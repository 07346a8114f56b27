/**
 * How an evaluation reads in the editor: the verdict's one-line title for the CodeLens
 * (`Blocked by vendor:log4shell-uri (http_request_firewall_managed)`) and the Markdown
 * trace of the read-only view. Pure formatting of the engine's Evaluation.
 */
import type { Decision, Evaluation, RuleRef, TraceEntry } from '../rulesets/engine';
import { describeRule } from '../rulesets/ruleNames';
import { visibleEntries, visibleFields, type TraceViewOptions } from '../rulesets/traceView';
import { actedTitle, passedTitle, type VerdictFacts } from '../rulesets/verdictWords';
import type { Verdict, VerdictAction } from '../protocol';

const clip = (s: string, n: number) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

const ACTION_WORDS: Readonly<Record<Exclude<VerdictAction, 'allow-through'>, string>> = {
  block: 'Blocked',
  managed_challenge: 'Managed challenge',
  js_challenge: 'JS challenge',
  challenge: 'Interactive challenge',
};

/** The anomaly score a request reached when no anomaly rule acted: the highest total, with the threshold it stayed under. */
function passedScore(ev: Evaluation): { score: number; threshold?: number } | undefined {
  let best: { score: number; threshold?: number } | undefined;
  for (const t of ev.trace) {
    if (t.outcome === 'below-threshold' && t.score !== undefined && (best === undefined || t.score >= best.score)) best = { score: t.score, threshold: t.threshold };
  }
  if (best) return best;
  const totals = Object.values(ev.scores);
  if (totals.length === 0) return undefined;
  const max = Math.max(...totals);
  return max > 0 ? { score: max } : undefined;
}

const nameOf = (r: Omit<RuleRef, 'phase'>): string => describeRule(r, 'short') ?? 'an unnamed rule';

/** What happened besides the decision: the rules that logged, skipped or scored (the deciding rule aside). */
export function verdictFacts(ev: Evaluation): VerdictFacts {
  const d = ev.decision;
  const isDecider = (t: Omit<RuleRef, 'phase'>) => d.action !== 'allow-through' && t.ruleId === d.ruleId && t.rulesetId === d.rulesetId && t.ref === d.ref;
  const logged = ev.logs.filter((l) => l.outcome !== 'skip' && !isDecider(l)).map(nameOf);
  const skipped = ev.trace.filter((t) => t.outcome === 'skip' || t.outcome === 'bypassed').map((t) => ({ by: nameOf(t), what: t.note ?? 'skips' }));
  const by = ev.trace.filter((t) => t.outcome === 'scored' && (t.scoreAdded ?? 0) > 0).map(nameOf);
  let score: VerdictFacts['score'];
  if (d.score !== undefined) score = { total: d.score, ...(d.threshold !== undefined ? { threshold: d.threshold } : {}), reached: true, by };
  else {
    const s = passedScore(ev);
    // A total of 0 with no rule scoring is nothing that happened.
    if (s && (s.score > 0 || by.length > 0)) score = { total: s.score, ...(s.threshold !== undefined ? { threshold: s.threshold } : {}), reached: false, by };
  }
  return { logged, skipped, ...(score ? { score } : {}) };
}

export function verdictOf(ev: Evaluation, names: ReadonlyMap<string, string>): Verdict {
  const d: Decision = ev.decision;
  const facts = verdictFacts(ev);
  if (d.action === 'allow-through') {
    const s = passedScore(ev);
    return { action: d.action, title: passedTitle(facts), ...(s ? { score: s.score, ...(s.threshold !== undefined ? { threshold: s.threshold } : {}) } : {}) };
  }
  const rule = describeRule(d, 'short') ?? 'an unnamed rule';
  const where = d.phase ? ` (${d.phase})` : '';
  const rulesetName = d.rulesetId ? names.get(d.rulesetId) : undefined;
  return {
    action: d.action,
    title: actedTitle(`${ACTION_WORDS[d.action]} by ${rule}${where}`, facts),
    rule,
    ...(d.ruleId ? { ruleId: d.ruleId } : {}),
    ...(d.ref ? { ref: d.ref } : {}),
    ...(d.description ? { description: d.description } : {}),
    ...(d.phase ? { phase: d.phase } : {}),
    ...(d.rulesetId ? { rulesetId: d.rulesetId } : {}),
    ...(rulesetName ? { rulesetName } : {}),
    ...(d.score !== undefined ? { score: d.score } : {}),
    ...(d.threshold !== undefined ? { threshold: d.threshold } : {}),
  };
}

// --- Markdown ------------------------------------------------------------------------------

/** Text for a table cell: no line breaks, pipes escaped. */
function cell(s: string): string {
  return s.replace(/\r?\n|\r/g, ' ').replace(/\|/g, '\\|');
}

/** An inline code span that survives backticks and table pipes in `s`. */
function code(s: string): string {
  const fence = s.includes('`') ? '``' : '`';
  const pad = fence.length > 1 || s.startsWith('`') || s.endsWith('`') ? ' ' : '';
  return `${fence}${pad}${cell(s)}${pad}${fence}`;
}

/** Field values worth showing: set, not empty, and not a derived copy (`raw.*`, `*.names`, `*.values`). */
function shownFields(fields: Record<string, unknown>): [string, string][] {
  const out: [string, string][] = [];
  for (const [name, v] of Object.entries(fields)) {
    if (name.startsWith('raw.') || /\.(names|values|content_types|content_dispositions|content_transfer_encodings|filenames)$/.test(name)) continue;
    if (v === undefined || v === null || v === '' || v === false) continue;
    if (Array.isArray(v) && v.length === 0) continue;
    if (typeof v === 'object' && !Array.isArray(v) && Object.keys(v as object).length === 0) continue;
    if (name === 'http.request.body.size' && v === 0) continue;
    const text = typeof v === 'string' ? v : JSON.stringify(v);
    out.push([name, clip(text ?? String(v), 120)]);
  }
  return out;
}

const OUTCOME_WORDS: Partial<Record<TraceEntry['outcome'], string>> = {
  'not-matched': 'not matched',
  terminated: '**acted**',
  'below-threshold': 'below threshold',
  'validation-only': 'validation only',
};

/** A trace table's rule cell: the short name as code, then the description when the name does not already show it. */
function ruleCell(t: Omit<RuleRef, 'phase'>): string {
  const name = describeRule(t, 'short');
  const desc = t.description && !(name ?? '').includes(t.description) ? t.description : '';
  if (!name) return desc ? cell(desc) : '(whole phase)';
  return `${code(name)}${desc ? ` ${cell(desc)}` : ''}`;
}

function scoreCell(t: TraceEntry): string {
  if (t.scoreAdded !== undefined) return `+${t.scoreAdded}${t.score !== undefined ? ` (= ${t.score})` : ''}`;
  if (t.threshold !== undefined) return `${t.score ?? 0} / ${t.threshold}`;
  return '';
}

function notesCell(t: TraceEntry): string {
  const notes: string[] = [];
  if (!t.enabled && t.outcome !== 'disabled') notes.push('disabled');
  if (t.skippedBy) notes.push(`skipped by ${describeRule(t.skippedBy, 'short') ?? 'a skip rule'}`);
  if (t.overriddenBy && t.overriddenBy.length > 0) notes.push(`overridden by ${t.overriddenBy.join(', ')}`);
  if (t.note) notes.push(t.note);
  return cell(notes.join('; '));
}

export interface TraceInput {
  readonly title: string;
  readonly summary: string;
  /** `requests.http, line 12`. */
  readonly where: string;
  /** The ruleset file as shown (`zone.ruleset.json`). */
  readonly ruleset: string;
  readonly fields: Record<string, unknown>;
  readonly evaluation: Evaluation;
  readonly verdict: Verdict;
  readonly names: ReadonlyMap<string, string>;
  /** Matched rules only and no `crs.*` fields unless asked (the trace view's switches). */
  readonly view?: TraceViewOptions;
}

/** The line that says what the page shows and how to see the rest. */
function viewLine(view: TraceViewOptions, hiddenRules: number, hiddenFields: number): string {
  const rules = view.allRules ? 'all rules' : `matched rules only${hiddenRules > 0 ? ` (${hiddenRules} not matched hidden)` : ''}`;
  const fields = view.internals ? '`crs.*` fields shown' : `\`crs.*\` fields hidden${hiddenFields > 0 ? ` (${hiddenFields})` : ''}`;
  return `_Showing ${rules}; ${fields}. Switch with the buttons in the title bar of this view, or "Rulesmith: Trace — Show All Rules" / "Show crs.* Fields"._`;
}

/** The whole trace page. */
export function traceMarkdown(input: TraceInput): string {
  const { evaluation: ev, verdict, names } = input;
  const view = input.view ?? {};
  const rows = visibleEntries(ev.trace, view);
  const fields = visibleFields(shownFields(input.fields), view);
  const out: string[] = [];
  out.push(`# ${cell(input.title)}`, '');
  out.push(`**${cell(verdict.title)}**`, '');
  out.push(`- Request: ${code(input.summary)} (${cell(input.where)})`);
  out.push(`- Ruleset: ${code(input.ruleset)}`);
  if (verdict.action !== 'allow-through') {
    const d = ev.decision;
    const bits = [ruleCell(d)];
    if (d.ruleId) bits.push(`id ${code(d.ruleId)}`);
    if (d.rulesetId) bits.push(`in ${cell(names.get(d.rulesetId) ?? d.rulesetId)}`);
    if (d.via) bits.push(`run by ${ruleCell(d.via)}`);
    out.push(`- Deciding rule: ${bits.join(', ')}`);
    if (d.response) out.push(`- Response: ${d.response.status_code ?? ''} ${cell(d.response.content_type ?? '')}`.trimEnd());
  }
  out.push('', viewLine(view, rows.hidden, fields.hidden), '');

  out.push('## Field values', '', '| Field | Value |', '|---|---|');
  for (const [name, value] of fields.shown) out.push(`| ${code(name)} | ${code(value)} |`);
  out.push('');

  // The trace, one section per stage, one table per run of a ruleset (entry point or executed).
  let stage: string | undefined;
  let group: string | undefined;
  if (ev.trace.length === 0) out.push('## Rules', '', 'No rule was looked at: the zone has no entry point in a WAF phase.', '');
  else if (rows.shown.length === 0) out.push('## Rules', '', `No rule matched (${rows.hidden} looked at).`, '');
  const gap = () => {
    if (out[out.length - 1] !== '') out.push('');
  };
  for (const t of rows.shown) {
    if (t.phase !== stage) {
      gap();
      stage = t.phase;
      group = undefined;
      out.push(`## ${code(t.phase)}`, '');
    }
    const key = `${t.depth}\u0000${t.rulesetId ?? ''}`;
    if (key !== group) {
      gap();
      group = key;
      const rsName = t.rulesetId ? (names.get(t.rulesetId) ?? t.rulesetName ?? t.rulesetId) : t.rulesetName;
      const heading = t.depth === 0 ? (t.phase === 'legacy_firewall_rules' ? 'Firewall rules' : t.phase === 'previous_waf' ? 'Previous WAF' : 'Entry point') : `${'↳ '.repeat(t.depth)}${rsName ?? 'executed ruleset'}`;
      out.push(`**${cell(heading)}**`, '', '| # | Rule | Matched | Action | Outcome | Score | Notes |', '|---|---|---|---|---|---|---|');
    }
    const matched = t.matched === true ? 'yes' : t.matched === false ? 'no' : '—';
    const outcome = OUTCOME_WORDS[t.outcome] ?? t.outcome;
    const n = t.ruleIndex !== undefined ? String(t.ruleIndex + 1) : '';
    out.push(`| ${n} | ${ruleCell(t)} | ${matched} | ${cell(t.action ?? '')} | ${outcome} | ${scoreCell(t)} | ${notesCell(t)} |`);
  }
  gap();
  out.push('## Decision', '');
  if (verdict.action === 'allow-through') out.push(`**Passed**: no rule blocked or challenged the request${verdict.title === 'Passed — no rule acted' ? '' : `, but ${verdict.title.slice('Passed — '.length)}`}.`);
  else out.push(`**${verdict.action}** by ${ruleCell(ev.decision)}${ev.decision.phase ? ` in ${code(ev.decision.phase)}` : ''}.`);
  const scores = Object.entries(ev.scores);
  if (scores.length > 0) out.push('', ...scores.map(([id, total]) => `- Anomaly score: ${total} (${cell(names.get(id) ?? id)})`));
  if (ev.logs.length > 0) out.push('', ...ev.logs.map((l) => `- Logged: ${ruleCell(l)} (${cell(l.action)})`));
  const skipped = Object.entries(ev.skippedProducts);
  if (skipped.length > 0) out.push('', ...skipped.map(([p, by]) => `- Product ${code(p)} skipped by ${ruleCell(by)}`));
  if (ev.validation) {
    const nd = ev.validation.newDecision;
    out.push('', `- Validation mode: the new managed rules would ${nd.action === 'allow-through' ? 'let it through' : `${nd.action} (${ruleCell(nd)})`}`);
  }
  out.push('');
  return out.join('\n');
}

/** A page for when there is no trace to show. */
export function errorMarkdown(title: string, message: string, details: readonly string[]): string {
  const out = [`# ${cell(title)}`, '', cell(message), ''];
  if (details.length > 0) out.push(...details.map((d) => `- ${code(d)}`), '');
  return out.join('\n');
}
