// `rulesmith check` on ruleset JSON also reports the ruleset's own problems
// (rulesets/validate.ts), in document order with the expression ones, against the
// shipped managed catalog; custom rulesets given on the command line are known.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import type { Io } from '../../../server/src/cli/io';
import { main } from '../../../server/src/cli/main';

const rulesets = new URL('../../fixtures/rulesets/', import.meta.url).pathname;

function run(args: string[], files: Record<string, string> = {}, stdin = ''): { code: number; out: string; err: string } {
  let out = '';
  let err = '';
  const io: Io = {
    out: (s) => void (out += s),
    err: (s) => void (err += s),
    readFile: (p) => files[p] ?? readFileSync(p.startsWith('/') ? p : rulesets + p, 'utf8'),
    writeFile: () => undefined,
    readStdin: () => stdin,
  };
  return { code: main(args, io), out, err };
}

test('check: a misplaced score_threshold and the action beside it, text output', () => {
  const r = run(['check', 'misplaced-threshold-overrides.ruleset.json']);
  assert.equal(r.code, 1);
  assert.equal(
    r.out,
    [
      'misplaced-threshold-overrides.ruleset.json:13:11: warning[misplaced-override-action] (rule 1 "owasp")',
      'this action replaces the score action of every rule of Cloudflare OWASP Core Ruleset: matching rules act on their own instead of adding to the anomaly score',
      'hint: To choose what happens when the anomaly score reaches the threshold, set the action on the anomaly-score rule: `"rules": [{ "id": "6179ae15870a4bb7b2d480d4843b323c", "action": "log" }]`.',
      '',
      'misplaced-threshold-overrides.ruleset.json:14:11: error[misplaced-score-threshold] (rule 1 "owasp")',
      'score_threshold has no effect on the ruleset-wide overrides: only the anomaly-score rule "949110: Inbound Anomaly Score Exceeded" has a threshold',
      'hint: Set it in a rule override: `"rules": [{ "id": "6179ae15870a4bb7b2d480d4843b323c", "score_threshold": 40, "action": "block" }]` (thresholds: 25 High, 40 Medium, 60 Low).',
      '',
      '1 error, 1 warning in 1 expression',
      '',
    ].join('\n'),
  );
});

test('check --format json: ruleset and expression findings in document order, each with its origin, notes counted apart', () => {
  const text = '{"phase": "http_request_firewall_managed", "rules": [\n  {"expression": "http.hots eq \\"a\\"", "action": "block"}\n]}\n';
  const r = run(['check', '--format', 'json', 'x.ruleset.json'], { 'x.ruleset.json': text });
  assert.equal(r.code, 1);
  assert.deepEqual(
    JSON.parse(r.out).map((f: { range: { start: { line: number; character: number } }; code: string; origin: string; severity: string; rule: number }) => [f.range.start.line, f.range.start.character, f.severity, f.code, f.origin, f.rule]),
    [
      [1, 2, 'information', 'missing-ref', 'ruleset', 0],
      [1, 18, 'error', 'unknown-identifier', 'expression', 0],
      [1, 49, 'error', 'action-not-in-phase', 'ruleset', 0],
    ],
  );
  const t = run(['check', 'x.ruleset.json'], { 'x.ruleset.json': text });
  assert.match(t.out, /\n2 errors, 0 warnings, 1 note in 1 expression\n$/);
});

test('check --format json: a JSON file that does not parse, or has no rule expression, is the ruleset checks\' finding', () => {
  const r = run(['check', '--format', 'json', 'bad.json', 'settings.json'], { 'bad.json': '{"rules": [', 'settings.json': '{"name": "x"}' });
  assert.equal(r.code, 1);
  assert.deepEqual(
    JSON.parse(r.out).map((f: { file: string; code: string; origin: string; severity: string }) => [f.file, f.severity, f.code, f.origin]),
    [
      ['bad.json', 'error', 'invalid-json', 'ruleset'],
      ['bad.json', 'error', 'invalid-json', 'ruleset'],
      ['settings.json', 'warning', 'no-expressions', 'ruleset'],
    ],
  );
});

test('check: a file of several rulesets (a zone file, a list, an API answer listing them) is an error that says what to do, never a pass', () => {
  const rule = '{"action": "block", "expression": "http.hots eq \\"a\\""}';
  const files = {
    'zone.json': `{"entryPoints": {"http_request_firewall_custom": {"rules": [${rule}]}}, "plan": "pro"}`,
    'list.json': `[{"kind": "custom", "phase": "http_request_firewall_custom", "rules": [${rule}]}]`,
    'answer.json': `{"result": [{"phase": "http_request_firewall_custom", "rules": [${rule}]}]}`,
  };
  const r = run(['check', '--format', 'json', ...Object.keys(files)], files);
  assert.equal(r.code, 1);
  assert.deepEqual(
    JSON.parse(r.out).map((f: { file: string; code: string; severity: string; message: string }) => [f.file, f.severity, f.code, f.message.split(',')[0]]),
    [
      ['zone.json', 'error', 'no-expressions', 'this is a zone file (entry points by phase)'],
      ['list.json', 'error', 'no-expressions', 'this is a list of rulesets'],
      ['answer.json', 'error', 'no-expressions', 'this is an API answer listing rulesets ("result": […])'],
    ],
  );
});

test('check --files-from: the files listed (NUL-separated as git ls-files -z writes them, or one per line); an empty list checks nothing and passes', () => {
  const files = { 'a b.ruleset.json': '{"rules": [{"expression": "http.hots eq \\"a\\"", "action": "block"}]}', 'ok.ruleset.json': '{"rules": [{"ref": "r", "expression": "ssl", "action": "block"}]}' };
  const nul = run(['check', '--format', 'json', '--files-from', '-'], files, 'a b.ruleset.json\0ok.ruleset.json\0');
  assert.deepEqual([nul.code, JSON.parse(nul.out).map((f: { file: string; code: string }) => `${f.file} ${f.code}`)], [1, ['a b.ruleset.json missing-ref', 'a b.ruleset.json unknown-identifier']]);
  assert.equal(run(['check', '--files-from', 'list.txt'], { ...files, 'list.txt': 'ok.ruleset.json\n' }).out, 'ok: 1 expression checked, no problems\n');
  const none = run(['check', '--format', 'sarif', '--files-from', '-'], files, '');
  assert.deepEqual([none.code, JSON.parse(none.out).runs[0].results], [0, []]);
  assert.equal(run(['check']).code, 2);
  // A list that cannot be read: exit 2, naming it.
  const missing = run(['check', '--files-from', '/nonexistent/list.txt']);
  assert.deepEqual([missing.code, missing.err], [2, 'rulesmith: cannot read the list of files /nonexistent/list.txt: no such file or folder (ENOENT)\n']);
});

test('check: the OWASP-based ruleset deployed bare warns about paranoia levels; warnings alone exit 0', () => {
  const r = run(['check', 'owasp-all-paranoia-levels.ruleset.json']);
  assert.equal(r.code, 0);
  assert.match(r.out, /^owasp-all-paranoia-levels\.ruleset\.json:6:95: warning\[owasp-all-paranoia-levels\] \(rule 1 "owasp"\)\nCloudflare OWASP Core Ruleset is deployed with no paranoia-level override: all four paranoia levels \(PL1–PL4\) run\n/);
});

test('check: --phase is the phase of a file without one; a custom ruleset on the command line is known', () => {
  const entry = '{"rules": [{"ref": "a", "expression": "true", "action": "execute", "action_parameters": {"id": "cccccccccccccccccccccccccccccccc"}}]}';
  const custom = '{"id": "cccccccccccccccccccccccccccccccc", "name": "mine", "kind": "custom", "phase": "http_request_firewall_custom", "rules": [{"ref": "b", "expression": "ssl", "action": "block"}]}';
  const alone = run(['check', '--phase', 'http_request_firewall_custom', 'entry.json'], { 'entry.json': entry });
  assert.match(alone.out, /warning\[unknown-managed-ruleset\]/);
  const both = run(['check', '--phase', 'http_request_firewall_custom', 'entry.json', 'custom.json'], { 'entry.json': entry, 'custom.json': custom });
  assert.equal(both.out, 'ok: 2 expressions checked, no problems\n');
  const managed = run(['check', '--phase', 'http_request_firewall_managed', 'entry.json'], { 'entry.json': entry });
  assert.match(managed.out, /error\[unknown-managed-ruleset\]/);
  assert.equal(managed.code, 1);
});

test('check: a valid deployment of the shipped rulesets is clean', () => {
  const text = readFileSync(`${rulesets}misplaced-threshold-overrides.ruleset.json`, 'utf8')
    .replace('          "action": "managed_challenge",\n          "score_threshold": 25,\n', '')
    .replace('          ]\n        }', '          ],\n          "rules": [{ "id": "6179ae15870a4bb7b2d480d4843b323c", "score_threshold": 25, "action": "managed_challenge" }]\n        }');
  assert.equal(run(['check', 'ok.ruleset.json'], { 'ok.ruleset.json': text }).out, 'ok: 1 expression checked, no problems\n');
});

test("check: an account's rate limiting ruleset (kind custom) uses no list; a zone's may, but not with the answer in a counting expression", () => {
  const ruleset = (kind: string, ratelimit: Record<string, unknown> = {}) =>
    JSON.stringify({ kind, phase: 'http_ratelimit', rules: [{ ref: 'r', action: 'block', expression: 'ip.src in $office', ratelimit: { characteristics: ['cf.colo.id', 'ip.src'], period: 60, requests_per_period: 5, mitigation_timeout: 60, ...ratelimit } }] });
  const codes = (text: string) =>
    (JSON.parse(run(['check', '--format', 'json', 'x.ruleset.json'], { 'x.ruleset.json': text }).out) as { code: string; range: { start: { character: number } } }[]).map((f) => [f.code, f.range.start.character]);
  // At the list's name, in the one-line document.
  const account = ruleset('custom');
  assert.deepEqual(codes(account), [['ratelimit-restriction', account.indexOf('$office')]]);
  assert.deepEqual(codes(ruleset('zone')), []);
  const both = ruleset('zone', { counting_expression: 'ip.src in $office and http.response.code eq 401' });
  assert.deepEqual(codes(both), [['ratelimit-restriction', both.lastIndexOf('$office')]]);
});
