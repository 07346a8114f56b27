// The paranoia preview's page: static HTML and SVG (no script; a strict
// Content-Security-Policy). Per set of requests, where they come from, the PL × threshold
// matrix (hover a cell for the deciding rules) and a chart of requests acted on against the
// threshold, one line per level. For the attacks, a link opens the corpus setting (the
// panel allows only that command). No vscode import, so plain Node tests render it.
import { PREVIEW_THRESHOLDS, SCORE_COUNTING_NOTE } from '../../../server/src/managed/preview';
import type { PreviewSet } from './compute';

/** The thresholds the chart plots (the computation must include them). */
export const CHART_THRESHOLDS = [5, 10, 15, 20, 25, 30, 35, 40, 45, 50, 60, 70, 80, 90, 100];
const COLORS = ['#3b82f6', '#10b981', '#f59e0b', '#ef4444'];

const esc = (s: string) => s.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);

/** A command link (the panel allows only the commands it lists; the argument is JSON). */
export const commandLink = (command: string, arg: unknown): string => `command:${command}?${encodeURIComponent(JSON.stringify([arg]))}`;

/** What the page previews, and what it can preview instead. */
export interface PreviewTarget {
  /** `file`: a ruleset file's execute rule; `zone`: the chosen zone's; `default`: the ruleset with no overrides. */
  readonly kind: 'file' | 'zone' | 'default';
  readonly label: string;
  /** The other targets the user can switch to (a link each). */
  readonly others?: readonly { readonly label: string; readonly arg: unknown }[];
  /** Cells link to applying their level and threshold to the target (not for `default`). */
  readonly applicable?: boolean;
}

/** Applies a cell's level and threshold to the target previewed. */
export const APPLY_CELL_COMMAND = 'rulesmith.applyPreviewCell';
/** Previews another target. */
export const PREVIEW_COMMAND = 'rulesmith.previewParanoia';

function matrix(set: PreviewSet, target?: PreviewTarget): string {
  const p = set.preview;
  if (!p) return `<p class="muted">${set.total === 0 ? 'No requests.' : esc(set.source)}</p>`;
  if (p.error) return `<p class="error">${esc(p.error)}</p>`;
  const ths = PREVIEW_THRESHOLDS.filter((t) => p.thresholds.includes(t));
  if (!ths.includes(p.currentThreshold)) ths.push(p.currentThreshold);
  ths.sort((a, b) => a - b);
  const head = ths.map((t) => `<th>threshold ${t}${t === p.currentThreshold ? ' (current)' : ''}</th>`).join('');
  const rows = p.levels
    .map((l) => {
      const cells = ths
        .map((t) => {
          const c = l.cells.find((x) => x.threshold === t)!;
          const pct = set.total ? Math.round((100 * c.actedOn) / set.total) : 0;
          const current = l.level === p.currentLevel && t === p.currentThreshold;
          const tip = c.deciders.map((d) => `${d.description ?? d.ref ?? d.ruleId} (${d.count})`).join('\n');
          const text = `<b>${c.actedOn}</b> <span class="muted">(${pct}%)</span>`;
          if (!target?.applicable || current) return `<td class="${current ? 'current' : ''}" title="${esc(tip)}">${text}</td>`;
          const apply = `Apply PL${l.level} with threshold ${t} to ${target.label}${target.kind === 'zone' ? ' (asks first)' : ' (edits the file; deploy it to apply)'}`;
          return `<td title="${esc(tip ? `${tip}\n\n${apply}` : apply)}"><a class="cell" href="${commandLink(APPLY_CELL_COMMAND, { level: l.level, threshold: t })}">${text}</a></td>`;
        })
        .join('');
      return `<tr><th>PL${l.level}${l.level === p.currentLevel ? ' (current)' : ''}<div class="muted">${l.enabledRules} rules on</div></th>${cells}</tr>`;
    })
    .join('');
  return `<table class="matrix"><thead><tr><th>${esc(set.name)}: acted on</th>${head}</tr></thead><tbody>${rows}</tbody></table>`;
}

function chart(set: PreviewSet): string {
  const p = set.preview;
  if (!p || p.error || set.total === 0) return '';
  const W = 560;
  const H = 260;
  const L = 48;
  const B = 36;
  const xs = CHART_THRESHOLDS;
  const x = (t: number) => L + ((t - xs[0]) / (xs[xs.length - 1] - xs[0])) * (W - L - 16);
  const y = (n: number) => H - B - (n / set.total) * (H - B - 16);
  const lines = p.levels
    .map((l, i) => {
      const pts = xs.map((t) => `${x(t).toFixed(1)},${y(l.cells.find((c) => c.threshold === t)?.actedOn ?? 0).toFixed(1)}`).join(' ');
      return `<polyline points="${pts}" fill="none" stroke="${COLORS[i]}" stroke-width="2"><title>PL${l.level}</title></polyline>`;
    })
    .join('');
  const xTicks = xs.filter((t) => t % 10 === 0 || t === 25).map((t) => `<text x="${x(t)}" y="${H - B + 16}" text-anchor="middle">${t}</text>`).join('');
  const yTicks = [0, 0.25, 0.5, 0.75, 1].map((f) => `<text x="${L - 6}" y="${y(f * set.total) + 4}" text-anchor="end">${Math.round(f * set.total)}</text><line x1="${L}" x2="${W - 16}" y1="${y(f * set.total)}" y2="${y(f * set.total)}" class="grid"/>`).join('');
  const current = `<line x1="${x(p.currentThreshold)}" x2="${x(p.currentThreshold)}" y1="16" y2="${H - B}" class="cur"><title>current threshold ${p.currentThreshold}</title></line>`;
  const legend = p.levels.map((l, i) => `<span class="key" style="border-color:${COLORS[i]}">PL${l.level}</span>`).join(' ');
  return `<figure><svg viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" role="img" aria-label="${esc(set.name)}: requests acted on against threshold">${yTicks}${current}${lines}${xTicks}<text x="${(W + L) / 2}" y="${H - 4}" text-anchor="middle">anomaly score threshold</text></svg><figcaption>${esc(set.name)}: requests acted on by threshold, per paranoia level. ${legend}</figcaption></figure>`;
}

/** Opens the Settings editor at the attack corpus setting (a command URI: its argument is JSON). */
const CORPUS_SETTING_LINK = `command:workbench.action.openSettings?${encodeURIComponent(JSON.stringify('rulesmith.preview.attackCorpus'))}`;

/** Where the attacks come from, and the link to the setting that changes it. */
function corpusLine(s: PreviewSet): string {
  const link = `<a href="${CORPUS_SETTING_LINK}">rulesmith.preview.attackCorpus</a>`;
  if (s.error) return `<p class="error">${esc(s.error.charAt(0).toUpperCase() + s.error.slice(1))}. Fix the setting ${link}, or clear it to use the built-in corpus.</p>`;
  if (s.builtIn) return `<p class="corpus">Attack corpus: ${esc(s.source)}, ${s.available} requests. To use your own CRS regression tests (ftw YAML), set ${link}.</p>`;
  return `<p class="corpus">Attack corpus: ${esc(s.source)} (setting ${link}), ${s.available} requests. Clear the setting for the built-in corpus.</p>`;
}

/** The line that says what is previewed, with links to preview the other targets. */
function targetLine(target: PreviewTarget): string {
  const what = target.kind === 'file' ? 'the file' : target.kind === 'zone' ? 'the zone' : 'no deployment:';
  const others = (target.others ?? []).map((o) => `<a href="${commandLink(PREVIEW_COMMAND, o.arg)}">${esc(o.label)}</a>`);
  const sw = others.length > 0 ? ` Preview instead: ${others.join(' · ')}.` : '';
  const click = target.applicable ? ` Click a cell to apply its level and threshold to ${target.kind === 'file' ? 'the file (then deploy it)' : 'the zone (asks first)'}.` : '';
  return `<p class="target">Previewing ${what} <b>${esc(target.label)}</b>.${sw}${click}</p>`;
}

export function renderHtml(targetIn: string | PreviewTarget, sets: readonly PreviewSet[], ms: number): string {
  const t: PreviewTarget | undefined = typeof targetIn === 'string' ? undefined : targetIn;
  const target = typeof targetIn === 'string' ? targetIn : targetIn.label;
  const sections = sets
    .map(
      (s) => `<section><h2>${esc(s.name)} <span class="muted">— ${s.total}${s.available > s.total ? ` of ${s.available} (sampled; raise rulesmith.preview.maxCorpusRequests)` : ''} requests from ${esc(s.source)}</span></h2>
${s.name === 'Attacks' ? corpusLine(s) : ''}<p class="muted">${s.name === 'Attacks' ? 'More acted on is better: these are attacks.' : 'Anything acted on here is a likely false positive: these are your own requests.'}</p>
${s.error ? '' : matrix(s, t)}${chart(s)}</section>`,
    )
    .join('\n');
  return `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:;">
<title>Paranoia Preview</title>
<style>
body{font-family:var(--vscode-font-family);color:var(--vscode-foreground);background:var(--vscode-editor-background);padding:0 16px}
h1{font-size:1.3em}h2{font-size:1.1em;margin-top:1.5em}
.muted{opacity:.7;font-weight:normal}.error{color:var(--vscode-errorForeground)}
table.matrix{border-collapse:collapse;margin:8px 0}
.matrix th,.matrix td{border:1px solid var(--vscode-panel-border,#8884);padding:4px 10px;text-align:right}
.matrix thead th{text-align:center}.matrix td.current{outline:2px solid var(--vscode-focusBorder);}
svg text{fill:var(--vscode-foreground);font-size:11px}.grid{stroke:var(--vscode-panel-border,#8884)}.cur{stroke:var(--vscode-focusBorder);stroke-dasharray:4 3}
.key{border-left:12px solid;padding-left:4px;margin-right:8px}
a.cell{color:inherit;text-decoration:none;display:block}a.cell:hover{text-decoration:underline}
</style></head><body>
<h1>Paranoia preview</h1>
${t ? targetLine(t) : ''}
<p>Deployment: <b>${esc(target)}</b>. Each cell counts the requests the OWASP-based ruleset would act on at that paranoia level and anomaly score threshold (hover for the rules that decide). Computed in ${ms} ms.</p>
${sections}
<p class="muted">Note: ${esc(SCORE_COUNTING_NOTE)}</p>
</body></html>`;
}
