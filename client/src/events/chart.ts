// The Security Events chart: events over time, one line per action, as an inline SVG in a
// webview (no script, no external resource). No vscode import: unit-tested.
import type { TimelineGroup } from './queries';

const COLORS: Readonly<Record<string, string>> = {
  block: '#e5534b', managed_challenge: '#d29922', challenge: '#d29922', jschallenge: '#c69026', log: '#539bf5', simulate: '#539bf5', skip: '#57ab5a', score: '#986ee2',
  // Challenges passed (clearance cookie), taken as solved (--challenge pass) or solved with the interstitial's button.
  challenge_bypassed: '#6bc46d', jschallenge_bypassed: '#6bc46d', managed_challenge_bypassed: '#6bc46d',
  challenge_solved: '#8ddb8c', jschallenge_solved: '#8ddb8c', managed_challenge_non_interactive_solved: '#8ddb8c', managed_challenge_interactive_solved: '#8ddb8c',
};

export interface Series {
  readonly action: string;
  /** Count per bucket, in `buckets` order (0 where none). */
  readonly counts: readonly number[];
}

/** The groups as one series per action over the sorted buckets. */
export function seriesOf(groups: readonly TimelineGroup[], bucket: 'datetimeMinute' | 'datetimeHour'): { buckets: string[]; series: Series[] } {
  const buckets = [...new Set(groups.map((g) => g.dimensions[bucket] ?? ''))].sort();
  const index = new Map(buckets.map((b, i) => [b, i]));
  const byAction = new Map<string, number[]>();
  for (const g of groups) {
    const counts = byAction.get(g.dimensions.action) ?? new Array<number>(buckets.length).fill(0);
    counts[index.get(g.dimensions[bucket] ?? '')!]! += g.count;
    byAction.set(g.dimensions.action, counts);
  }
  return { buckets, series: [...byAction].sort(([a], [b]) => a.localeCompare(b)).map(([action, counts]) => ({ action, counts })) };
}

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** The webview's whole HTML: a title, the SVG lines with a legend, or a line saying there are no events. */
export function chartHtml(title: string, buckets: readonly string[], series: readonly Series[]): string {
  const W = 720;
  const H = 240;
  const pad = 36;
  let body: string;
  if (buckets.length === 0) body = '<p>No events in this window.</p>';
  else {
    const max = Math.max(1, ...series.flatMap((s) => s.counts));
    const x = (i: number) => pad + (buckets.length === 1 ? (W - 2 * pad) / 2 : (i * (W - 2 * pad)) / (buckets.length - 1));
    const y = (v: number) => H - pad - (v * (H - 2 * pad)) / max;
    const lines = series.map((s) => {
      const color = COLORS[s.action] ?? '#adbac7';
      const points = s.counts.map((c, i) => `${x(i).toFixed(1)},${y(c).toFixed(1)}`).join(' ');
      return `<polyline fill="none" stroke="${color}" stroke-width="2" points="${points}"><title>${esc(s.action)}</title></polyline>`;
    });
    const legend = series.map((s, i) => `<text x="${pad + i * 130}" y="16" fill="${COLORS[s.action] ?? '#adbac7'}">■ ${esc(s.action)} (${s.counts.reduce((a, b) => a + b, 0)})</text>`);
    const axis = `<line x1="${pad}" y1="${H - pad}" x2="${W - pad}" y2="${H - pad}" stroke="currentColor" stroke-opacity="0.4"/>
<text x="${pad}" y="${H - 10}" font-size="11">${esc(buckets[0]!)}</text><text x="${W - pad}" y="${H - 10}" font-size="11" text-anchor="end">${esc(buckets[buckets.length - 1]!)}</text>
<text x="4" y="${pad}" font-size="11">${max}</text>`;
    body = `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" font-family="sans-serif" font-size="12" role="img" aria-label="${esc(title)}">${legend.join('')}${axis}${lines.join('')}</svg>`;
  }
  return `<!DOCTYPE html><html><head><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'"><title>${esc(title)}</title></head>
<body style="color: var(--vscode-foreground)"><h3>${esc(title)}</h3>${body}</body></html>`;
}
