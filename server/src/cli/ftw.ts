/**
 * `rulesmith ftw DIR [--pl N] [--threshold T] [--format text|json]`: runs OWASP CRS
 * regression tests (ftw YAML: the 3.3.x format, and go-ftw's of CRS v4, requests/goFtw.ts) against the engine with the OWASP-based
 * managed ruleset deployed.
 *
 * How a test is judged (the CRS harness conventions, `crs-3.3.4-regression-tests/README.md`):
 * - Each stage's request (`requests/ftw.ts`: structured input with ftw's "magic" headers,
 *   `raw_request`, `encoded_request`) becomes field values and is evaluated by the engine,
 *   with the ruleset deployed by one `execute` rule whose overrides set the paranoia level
 *   (category overrides `paranoia-level-N`, as a user would) and 949110's `score_threshold`.
 * - `log_contains: id "N"` (go-ftw: `log.expect_ids: [N]`, `log.match_regex: id "N"`): CRS
 *   rule N must match (its converted rule scored); `no_log_contains: id "N"` (go-ftw:
 *   `log.no_expect_ids`, `log.no_match_regex`): it must not. ftw greps the ModSecurity log;
 *   the log lists the rules that matched, which is what the engine's trace gives. A pattern
 *   that names no rule id, a key Rulesmith does not run (`response_contains`, go-ftw's
 *   `isolated`, `uris`, …) or a stage that expects nothing checkable is skipped, saying so.
 * - A request an HTTP server rejects with 400 before the WAF runs (`serverRejection` in
 *   requests/ftw.ts: a malformed version, a line break inside a header) logs nothing: it
 *   meets `no_log_contains`, `status` lists holding 400 and `expect_error`, and fails
 *   `log_contains`.
 * - `status` (judged when the test names no rule: the suite runs in detection-only mode,
 *   where a test with `log_contains` / `no_log_contains` is judged by those): the request's
 *   status must be one of those listed, 403 when the engine blocks, 200 when it lets the
 *   request through. A list holding only web-server statuses (400, 405, …) for a request a
 *   server accepts tests the web server: skipped, saying so.
 * - `expect_error`: ftw expected the web server to fail the request (close the connection,
 *   time out); met when a server rejects it or waits for a body shorter than its
 *   Content-Length (`incompleteBody`), else skipped (there is no web server here).
 * - Tests with `enabled: false` (or a file with `meta.enabled: false`) are skipped, as ftw does.
 *
 * Paranoia level: `--pl N` for every test, else the level of the rule under test (its
 * `paranoia-level-N` tag; the rules of a level are independent of the others, so a test
 * checks the same thing at any level from the rule's up), and 4 — the suite's own level —
 * for tests that name no rule. Threshold: `--threshold T`, else 5, CRS's default, which the
 * status expectations of the suite assume (the hosted ruleset's default is 40).
 *
 * Output: each failing test with its reason, each skipped test with its reason, and a last
 * line `N passed, N failed` (`, N skipped` when some are). `--format json` prints
 * `{ totals, tests: [...] }`. Exit status 0 when none fails, 1 when any does, 2 bad usage.
 */
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import type { FieldValues } from '../language/evaluate';
import { defaultCatalog } from '../managed/catalog';
import { OWASP_RULESET_ID } from '../rulesets/managedIds';
import { OWASP_UNCONVERTED_RULES } from '../managed/owaspCrs';
import { setParanoiaLevel, setScoreThreshold, type ParanoiaLevel } from '../managed/preview';
import { paranoiaLevelOf, rulesetVersion, type ManagedCatalog } from '../rulesets/catalog';
import { requestValues } from '../requests/fields';
import { ftwRuleId, parseFtwFile, type FtwStage } from '../requests/ftw';
import { compileZone, type CompiledZone } from '../rulesets/engine';
import type { Rule } from '../rulesets/model';
import { fsReason } from './files';
import { InputError, parseOptions, readInput, UsageError, wholeNumber } from './input';
import type { Io } from './io';

/** CRS's default inbound anomaly threshold (901100), which the regression tests assume. */
export const FTW_DEFAULT_THRESHOLD = 5;

export type FtwResultKind = 'passed' | 'failed' | 'skipped';

export interface FtwTestResult {
  readonly file: string;
  /** 1-based line of the test's first stage input, when known. */
  readonly line?: number;
  readonly title: string;
  /** The CRS rule under test (from log_contains / no_log_contains). */
  readonly rule?: string;
  readonly paranoiaLevel: ParanoiaLevel;
  readonly result: FtwResultKind;
  /** Why it failed or was skipped. */
  readonly reason?: string;
  /** CRS ids of the rules that matched (of the last stage run). */
  readonly matched?: readonly string[];
}

export interface FtwTotals {
  readonly passed: number;
  readonly failed: number;
  readonly skipped: number;
  readonly total: number;
}

export interface FtwRunOptions {
  /** Paranoia level for every test; default: the level of the rule under test. */
  readonly pl?: ParanoiaLevel;
  readonly threshold?: number;
  readonly catalog?: ManagedCatalog;
  /** Called after each file. */
  readonly onProgress?: (doneFiles: number, totalFiles: number, done: number) => void;
}

/** One YAML file's text, named by its path (relative to the folder run). */
export interface FtwFile {
  readonly path: string;
  readonly text: string;
}

/** The totals line: `N passed, N failed` and `, N skipped` when some were. */
export function ftwTotalsLine(t: FtwTotals): string {
  return `${t.passed} passed, ${t.failed} failed${t.skipped > 0 ? `, ${t.skipped} skipped` : ''}`;
}

/** Runs ftw test files against the OWASP-based ruleset. Pure apart from `onProgress`. */
export function runFtwFiles(files: readonly FtwFile[], options: FtwRunOptions = {}): { results: FtwTestResult[]; totals: FtwTotals } {
  const catalog = options.catalog ?? defaultCatalog;
  const threshold = options.threshold ?? FTW_DEFAULT_THRESHOLD;
  const owasp = catalog.rulesets.find((r) => r.id === OWASP_RULESET_ID);
  const rules = (owasp && rulesetVersion(owasp)?.rules) ?? [];
  const levelOfRef = new Map<string, ParanoiaLevel>();
  for (const r of rules) {
    const level = paranoiaLevelOf(r);
    if (r.ref && level) levelOfRef.set(r.ref, level);
  }
  const refOfId = new Map(rules.map((r) => [r.id, r.ref]));
  const unconverted = new Map(OWASP_UNCONVERTED_RULES.map((u) => [u.ref, u]));
  const zones = new Map<ParanoiaLevel, CompiledZone>();
  const zoneAt = (pl: ParanoiaLevel): CompiledZone => {
    let z = zones.get(pl);
    if (!z) {
      const execute: Rule = { action: 'execute', expression: 'true', enabled: true, action_parameters: { id: OWASP_RULESET_ID } };
      const deployed = setScoreThreshold(setParanoiaLevel(execute, pl), threshold, undefined, { catalog });
      z = compileZone({ entryPoints: { http_request_firewall_managed: { phase: 'http_request_firewall_managed', kind: 'zone', rules: [deployed] } }, catalog });
      zones.set(pl, z);
    }
    return z;
  };

  const results: FtwTestResult[] = [];
  files.forEach((file, fi) => {
    const parsed = parseFtwFile(file.text);
    for (const p of parsed.problems) {
      results.push({ file: file.path, line: p.line + 1, title: `(line ${p.line + 1})`, paranoiaLevel: options.pl ?? 4, result: 'failed', reason: `cannot read the test: ${p.message}` });
    }
    for (const test of parsed.tests) {
      const line = test.stages[0]?.request.source ? test.stages[0].request.source.line + 1 : undefined;
      const ruleIds = test.stages.map((s) => stageRule(s)).filter((x): x is string => x !== undefined);
      const rule = test.rule ?? ruleIds[0];
      const ruleLevel = rule ? (levelOfRef.get(rule) ?? clampLevel(unconverted.get(rule)?.paranoiaLevel)) : undefined;
      const pl = options.pl ?? ruleLevel ?? 4;
      const base = { file: file.path, ...(line !== undefined ? { line } : {}), title: test.title, ...(rule ? { rule } : {}), paranoiaLevel: pl };
      if (test.enabled === false) {
        results.push({ ...base, result: 'skipped', reason: 'disabled in the test file (enabled: false)' });
        continue;
      }
      let verdict: { result: FtwResultKind; reason?: string; matched?: readonly string[] } = { result: 'passed' };
      for (const [si, stage] of test.stages.entries()) {
        const v = judgeStage(stage, zoneAt(pl), refOfId, unconverted, levelOfRef, pl, threshold);
        const where = test.stages.length > 1 ? `stage ${si + 1}: ` : '';
        if (v.result !== 'passed') {
          verdict = { ...v, reason: `${where}${v.reason}` };
          break;
        }
        verdict = v;
      }
      results.push({ ...base, ...verdict });
    }
    options.onProgress?.(fi + 1, files.length, results.length);
  });
  const count = (k: FtwResultKind) => results.filter((r) => r.result === k).length;
  return { results, totals: { passed: count('passed'), failed: count('failed'), skipped: count('skipped'), total: results.length } };
}

function clampLevel(n: number | undefined): ParanoiaLevel | undefined {
  return n === 1 || n === 2 || n === 3 || n === 4 ? n : undefined;
}

function stageRule(s: FtwStage): string | undefined {
  const o = s.output;
  return o.expectIds?.[0] ?? o.noExpectIds?.[0] ?? ([o.logContains, o.noLogContains, o.matchRegex, o.noMatchRegex].map((p) => p && ftwRuleId(p)).find((id) => id) || undefined);
}

/** The rule ids a stage expects in the log and not in it, or the pattern that names none. */
function logExpectations(o: FtwStage['output']): { expect: string[]; forbid: string[]; unreadable?: string } {
  const expect = [...(o.expectIds ?? [])];
  const forbid = [...(o.noExpectIds ?? [])];
  for (const [key, pattern, list] of [['log_contains', o.logContains, expect], ['no_log_contains', o.noLogContains, forbid], ['log.match_regex', o.matchRegex, expect], ['log.no_match_regex', o.noMatchRegex, forbid]] as const) {
    if (pattern === undefined) continue;
    const id = ftwRuleId(pattern);
    if (id === undefined) return { expect, forbid, unreadable: `${key} ${JSON.stringify(pattern)} names no rule id (only id "N" patterns are supported)` };
    if (!list.includes(id)) list.push(id);
  }
  return { expect, forbid };
}

/** Statuses the WAF itself gives: 403 when it blocks, 200 when it lets the request through. */
const WAF_STATUSES = new Set([200, 403]);

function judgeStage(
  stage: FtwStage,
  zone: CompiledZone,
  refOfId: ReadonlyMap<string, string>,
  unconverted: ReadonlyMap<string, (typeof OWASP_UNCONVERTED_RULES)[number]>,
  levelOfRef: ReadonlyMap<string, ParanoiaLevel>,
  pl: ParanoiaLevel,
  threshold: number,
): { result: FtwResultKind; reason?: string; matched?: readonly string[] } {
  const o = stage.output;
  if (stage.unsupported !== undefined) return { result: 'skipped', reason: `uses ${stage.unsupported.join(', ')}, which Rulesmith does not run` };
  const log = logExpectations(o);
  const judgesLog = log.expect.length > 0 || log.forbid.length > 0 || log.unreadable !== undefined;
  if (!judgesLog && o.status === undefined && o.expectError === undefined) return { result: 'skipped', reason: 'the stage expects nothing Rulesmith can check (no log expectation, status or expect_error)' };
  if (log.unreadable !== undefined) return { result: 'skipped', reason: log.unreadable };
  if (stage.rejected !== undefined) {
    // The web server answers 400 and the WAF never sees the request.
    if (log.expect.length > 0) return { result: 'failed', reason: `expected rule ${log.expect.join(', ')} in the log, but ${stage.rejected} before the WAF runs`, matched: [] };
    if (o.status !== undefined && o.status.length > 0 && !o.status.includes(400) && o.expectError !== true) {
      return { result: 'failed', reason: `expected status ${o.status.join(' or ')}, but ${stage.rejected}`, matched: [] };
    }
    return { result: 'passed', matched: [] };
  }
  if (o.expectError === true) {
    if (stage.incomplete !== undefined) return { result: 'passed', matched: [] };
    return { result: 'skipped', reason: 'expects the web server to fail the request (expect_error); there is no web server in front of the engine, and a server accepts this request' };
  }
  const ev = zone.evaluate(requestValues(stage.request).values as FieldValues);
  const matched = ev.trace.filter((t) => t.matched === true && t.outcome === 'scored' && t.ruleId !== undefined).map((t) => refOfId.get(t.ruleId!) ?? t.ref ?? t.ruleId!);
  const blocked = ev.decision.action === 'block';
  const score = Object.values(ev.scores)[0] ?? 0;
  const matchedText = matched.length > 0 ? matched.join(', ') : 'none';
  const notInRuleset = (id: string): string | undefined => {
    if (levelOfRef.has(id)) return undefined;
    const u = unconverted.get(id);
    return u ? `it is not in the ruleset (not converted: ${u.reason})` : 'it is not in the ruleset';
  };
  const checks: string[] = [];
  for (const id of log.expect) {
    if (!matched.includes(id)) {
      const level = levelOfRef.get(id);
      const why = notInRuleset(id) ?? (level !== undefined && level > pl ? `it is paranoia level ${level}, above the level run (${pl})` : 'it did not');
      checks.push(`expected rule ${id} to match, but ${why} (matched: ${matchedText})`);
    }
  }
  for (const id of log.forbid) if (matched.includes(id)) checks.push(`expected rule ${id} not to match, but it did (matched: ${matchedText})`);
  if (o.status !== undefined && o.status.length > 0 && !judgesLog) {
    const status = blocked ? 403 : 200;
    if (!o.status.includes(status)) {
      if (!o.status.some((s) => WAF_STATUSES.has(s))) {
        return { result: 'skipped', reason: `expects status ${o.status.join(' or ')} from the web server in front of the WAF; the engine gives only 200 or 403`, matched };
      }
      checks.push(`expected status ${o.status.join(' or ')}, got ${status} (${blocked ? 'blocked' : 'not blocked'}: anomaly score ${score}, threshold ${threshold}; matched: ${matchedText})`);
    }
  }
  if (checks.length > 0) return { result: 'failed', reason: checks.join('; '), matched };
  return { result: 'passed', matched };
}

// --- Command line ----------------------------------------------------------------------

/** The `*.yaml` / `*.yml` files under `dir` (or `dir` itself when it is a file), sorted. */
export function findFtwFiles(dir: string): string[] {
  const st = statSync(dir);
  if (!st.isDirectory()) return [dir];
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (/\.ya?ml$/i.test(e.name)) out.push(p);
    }
  };
  walk(dir);
  return out;
}

export function runFtwCommand(args: readonly string[], io: Io): number {
  const p = parseOptions(args, { pl: { type: 'string' }, threshold: { type: 'string' }, format: { type: 'string' } });
  if (p.files.length !== 1) throw new UsageError(p.files.length === 0 ? 'ftw needs a folder (or a file) of ftw YAML tests' : `unexpected argument "${p.files[1]}"`);
  const format = (p.values.format as string | undefined) ?? 'text';
  if (format !== 'text' && format !== 'json') throw new UsageError(`--format must be text or json, not "${format}"`);
  let pl: ParanoiaLevel | undefined;
  if (p.values.pl !== undefined) {
    pl = clampLevel(/^\d$/.test(p.values.pl as string) ? Number(p.values.pl) : undefined);
    if (pl === undefined) throw new UsageError(`--pl must be 1, 2, 3 or 4, not "${p.values.pl}"`);
  }
  let threshold: number | undefined;
  if (p.values.threshold !== undefined) {
    const t = p.values.threshold as string;
    threshold = wholeNumber(t);
    if (threshold === undefined || threshold < 1) throw new UsageError(`--threshold must be a positive whole number, not "${t}"`);
  }
  const dir = p.files[0];
  let paths: string[];
  try {
    paths = findFtwFiles(dir);
  } catch (e) {
    throw new InputError([`rulesmith: cannot read ${dir}: ${fsReason(e)}`]);
  }
  if (paths.length === 0) throw new InputError([`rulesmith: ${dir}: no ftw tests (*.yaml) found`]);
  const files: FtwFile[] = [];
  for (const path of paths) {
    files.push({ path: relative(process.cwd(), path) || path, text: readInput(io, path) });
  }
  const progress = io.errIsTTY === true && files.length > 20;
  const { results, totals } = runFtwFiles(files, {
    pl,
    threshold,
    ...(progress ? { onProgress: (d: number, n: number, tests: number) => io.err(`\rftw: ${d}/${n} files, ${tests} tests`) } : {}),
  });
  if (progress) io.err('\r\x1b[K');
  if (format === 'json') {
    io.out(`${JSON.stringify({ totals, threshold: threshold ?? FTW_DEFAULT_THRESHOLD, ...(pl ? { paranoiaLevel: pl } : {}), tests: results }, null, 2)}\n`);
  } else {
    const at = (r: FtwTestResult) => `${r.file}${r.line !== undefined ? `:${r.line}` : ''}`;
    for (const r of results) if (r.result === 'failed') io.out(`FAIL ${r.title} (${at(r)}, PL${r.paranoiaLevel}): ${r.reason}\n`);
    for (const r of results) if (r.result === 'skipped') io.out(`SKIP ${r.title} (${at(r)}): ${r.reason}\n`);
    io.out(`${ftwTotalsLine(totals)}\n`);
  }
  return totals.failed > 0 ? 1 : 0;
}
