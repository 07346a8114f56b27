// The paranoia preview page (client/src/preview/html.ts) says where the attacks come from
// and links the setting that changes it; an unusable setting is an error that says how to
// fix it, in place of the matrix.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { PreviewSet } from '../../../client/src/preview/compute';
import { renderHtml } from '../../../client/src/preview/html';

const LINK = '<a href="command:workbench.action.openSettings?%22rulesmith.preview.attackCorpus%22">rulesmith.preview.attackCorpus</a>';
const own: PreviewSet = { name: 'Your requests', source: '0 .http files in the workspace', total: 0, available: 0 };
const corpusLine = (attacks: PreviewSet): string | undefined => renderHtml('t', [attacks, own], 1).split('\n').find((l) => l.includes('Attack corpus') || l.startsWith('<p class="error">'));

test('built-in corpus: named with its size, and the link to set your own', () => {
  const attacks: PreviewSet = { name: 'Attacks', source: 'built-in: OWASP CRS 3.3.4 regression tests', builtIn: true, total: 1000, available: 2169 };
  assert.equal(corpusLine(attacks), `<p class="corpus">Attack corpus: built-in: OWASP CRS 3.3.4 regression tests, 2169 requests. To use your own CRS regression tests (ftw YAML), set ${LINK}.</p><p class="muted">More acted on is better: these are attacks.</p>`);
});

test("the setting's folder: named, with the link to the setting", () => {
  const attacks: PreviewSet = { name: 'Attacks', source: '3 ftw files in tests/crs', builtIn: false, total: 12, available: 12 };
  assert.equal(corpusLine(attacks), `<p class="corpus">Attack corpus: 3 ftw files in tests/crs (setting ${LINK}), 12 requests. Clear the setting for the built-in corpus.</p><p class="muted">More acted on is better: these are attacks.</p>`);
});

test('an unusable folder: the error and how to fix it, and no matrix', () => {
  const attacks: PreviewSet = { name: 'Attacks', source: 'tests/crs', builtIn: false, total: 0, available: 0, error: 'the attack corpus folder tests/crs does not exist' };
  const html = renderHtml('t', [attacks, own], 1);
  assert.equal(corpusLine(attacks), `<p class="error">The attack corpus folder tests/crs does not exist. Fix the setting ${LINK}, or clear it to use the built-in corpus.</p><p class="muted">More acted on is better: these are attacks.</p>`);
  const section = html.slice(html.indexOf('<section>'), html.indexOf('</section>'));
  // The whole section: its heading and the two lines above (no "No requests." matrix stand-in).
  assert.equal(section.split('\n').length, 3, section);
  assert.ok(!section.includes('No requests.'), section);
});

test('the page says how its scores compare with ModSecurity\'s (once per rule, not per matched variable)', () => {
  const attacks: PreviewSet = { name: 'Attacks', source: 'built-in', builtIn: true, total: 0, available: 0 };
  const notes = renderHtml('t', [attacks, own], 1).split('\n').filter((l) => l.startsWith('<p class="muted">Note:'));
  assert.deepEqual(notes, ['<p class="muted">Note: Scores add each matching rule once, as the hosted OWASP ruleset does; ModSecurity adds a rule once per matched variable, so its score for the same request can be higher.</p>']);
});

test('the page says which target it previews, links the other one, and a cell links to applying its level and threshold', () => {
  const preview = {
    currentLevel: 1,
    currentThreshold: 40,
    thresholds: [25, 40],
    levels: [1, 2].map((level) => ({ level, enabledRules: 10 * level, cells: [25, 40].map((threshold) => ({ threshold, actedOn: level, deciders: [] })) })),
    requests: [],
    total: 2,
    problems: [],
  } as unknown as NonNullable<PreviewSet['preview']>;
  const set: PreviewSet = { name: 'Your requests', source: '1 .http file in the workspace', total: 2, available: 2, preview };
  const html = renderHtml({ kind: 'file', label: 'managed.ruleset.json (rule 1)', applicable: true, others: [{ label: 'the chosen zone', arg: { target: 'zone' } }] }, [set], 1);
  const zoneLink = `command:rulesmith.previewParanoia?${encodeURIComponent('[{"target":"zone"}]')}`;
  assert.ok(html.includes(`<p class="target">Previewing the file <b>managed.ruleset.json (rule 1)</b>. Preview instead: <a href="${zoneLink}">the chosen zone</a>. Click a cell to apply its level and threshold to the file (then deploy it).</p>`), html);
  const cell = `command:rulesmith.applyPreviewCell?${encodeURIComponent('[{"level":2,"threshold":25}]')}`;
  assert.ok(html.includes(`<td title="Apply PL2 with threshold 25 to managed.ruleset.json (rule 1) (edits the file; deploy it to apply)"><a class="cell" href="${cell}"><b>2</b> <span class="muted">(100%)</span></a></td>`), html);
  // The current cell is marked, not a link; nothing links when the target cannot be changed.
  assert.ok(html.includes('<td class="current" title=""><b>1</b> <span class="muted">(50%)</span></td>'));
  assert.ok(!renderHtml({ kind: 'default', label: 'the OWASP-based ruleset with no overrides' }, [set], 1).includes('applyPreviewCell'));
});
